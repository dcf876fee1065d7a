/* SPDX-License-Identifier: MIT */
/*
 * epoll.c - the epoll tier's state: the worker-local SQ and CQ that stand
 * in for the ring's, the epoll set, and each descriptor's registration.
 *
 * Registration is one-shot (EPOLLONESHOT), re-armed with EPOLL_CTL_MOD when
 * a descriptor has waiters again, not edge-triggered once for good: a
 * descriptor the libraries close(2) themselves (a UDP socket, a splice pipe)
 * leaves the epoll set without core knowing, and its number comes back with
 * the next socket. MOD answers ENOENT for that new file, and we ADD it; an
 * edge-triggered registration kept for good would be trusted and never
 * report. The cost is one epoll_ctl per wait (never per operation that
 * finishes at once); see docs/core.md.
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "internal.h"

static unsigned pow2_at_least(unsigned v)
{
	unsigned p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

int giong__emu_init(struct giong__worker *w, unsigned entries)
{
	struct giong__emu *e = &w->emu;
	struct epoll_event ev;

	memset(e, 0, sizeof(*e));
	e->sq_entries = pow2_at_least(entries ? entries : 1);
	e->cq_cap = e->sq_entries * 2;
	e->sq = calloc(e->sq_entries, sizeof(*e->sq));
	e->cq = calloc(e->cq_cap, sizeof(*e->cq));
	e->epfd = epoll_create1(EPOLL_CLOEXEC);
	e->wake_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!e->sq || !e->cq || e->epfd < 0 || e->wake_efd < 0) {
		int err = !e->sq || !e->cq ? -ENOMEM : -errno;

		giong__emu_fini(w);
		return err;
	}
	/* Registered once, level-triggered: ready() reads its counter. */
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.fd = e->wake_efd;
	if (epoll_ctl(e->epfd, EPOLL_CTL_ADD, e->wake_efd, &ev) < 0) {
		int err = -errno;

		giong__emu_fini(w);
		return err;
	}
	return 0;
}

void giong__emu_fini(struct giong__worker *w)
{
	struct giong__emu *e = &w->emu;
	struct giong__list_node *n;

	/* Calls a helper still runs (the drain gave up on them) are the
	 * pool's until it is freed with the runtime: left to it, with no CQ
	 * to post to (emu_fs.c's job_done()). */
	while ((n = giong__list_pop_front(&e->pooled)))
		giong__container_of(n, struct giong__emu_job, op.link)->w = NULL;
	/* Their wake goes to the mailbox's eventfd from now on, which lives
	 * until the pool is freed: wake_efd's number may be reused. */
	if (e->pool_bound)
		giong__bpool_bind(giong__blocking_pool(w), w->index, w->mbox.efd);
	/* Operations still waiting were counted as leaked by the drain; their
	 * records are freed with nothing lent to a kernel any more. */
	for (unsigned fd = 0; fd < e->nfds; fd++) {
		while ((n = giong__list_pop_front(&e->fds[fd].waiters)))
			free(giong__container_of(n, struct giong__emu_op, link));
	}
	if (e->epfd > 0)
		close(e->epfd);
	if (e->wake_efd > 0)
		close(e->wake_efd);
	free(e->sq);
	free(e->cq);
	free(e->fds);
	free(e->by_slot);
	memset(e, 0, sizeof(*e));
	e->epfd = -1;
	e->wake_efd = -1;
}

struct io_uring_sqe *giong__emu_get_sqe(struct giong__worker *w)
{
	struct giong__emu *e = &w->emu;

	if (e->sq_tail - e->sq_head == e->sq_entries)
		return NULL;
	return &e->sq[e->sq_tail++ & (e->sq_entries - 1)];
}

/* Double the CQ, unwrapping it: the oldest completion at index 0. */
static bool cq_grow(struct giong__emu *e)
{
	unsigned cap = e->cq_cap * 2;
	struct giong__emu_cqe *v = malloc(cap * sizeof(*v));

	if (!v)
		return false;
	for (unsigned i = 0; i < e->cq_n; i++)
		v[i] = e->cq[(e->cq_head + i) & (e->cq_cap - 1)];
	free(e->cq);
	e->cq = v;
	e->cq_cap = cap;
	e->cq_head = 0;
	return true;
}

void giong__emu_post(struct giong__worker *w, uint64_t ud, int res, unsigned flags)
{
	struct giong__emu *e = &w->emu;

	if (!ud)
		return; /* a cancel request's or a discarded SQE's: nobody reads it */
	/* The kernel's CQ never drops a completion (FEAT_NODROP); neither does
	 * this one, short of memory, which is then counted as an overflow. */
	if (e->cq_n == e->cq_cap && !cq_grow(e)) {
		w->stats.cq_overflows++;
		return;
	}
	e->cq[(e->cq_head + e->cq_n) & (e->cq_cap - 1)] = (struct giong__emu_cqe){ud, res, flags};
	e->cq_n++;
}

/* Grow the array *@arr of *@count elements of @size bytes to hold @need
 * (a power of two, at least @least), the new ones zeroed. False: no memory,
 * the array unchanged. */
static bool grow_zeroed(void **arr, unsigned *count, unsigned need, unsigned least, size_t size)
{
	unsigned n = pow2_at_least(need < least ? least : need);
	char *v = realloc(*arr, n * size);

	if (!v)
		return false;
	memset(v + *count * size, 0, (n - *count) * size);
	*arr = v;
	*count = n;
	return true;
}

struct giong__emu_fd *giong__emu_fd(struct giong__worker *w, int fd)
{
	struct giong__emu *e = &w->emu;

	if (fd < 0)
		return NULL;
	if ((unsigned)fd >= e->nfds &&
	    !grow_zeroed((void **)&e->fds, &e->nfds, (unsigned)fd + 1, 64, sizeof(*e->fds)))
		return NULL;
	return &e->fds[fd];
}

bool giong__emu_slot_set(struct giong__worker *w, uint64_t ud, struct giong__emu_op *op)
{
	struct giong__emu *e = &w->emu;
	uint32_t slot = (uint32_t)ud;

	if (!slot)
		return true; /* nobody waits for it, nobody cancels it */
	if (slot > e->nslots) {
		if (!op)
			return true; /* never indexed */
		if (!grow_zeroed((void **)&e->by_slot, &e->nslots, slot, 256, sizeof(*e->by_slot)))
			return false;
	}
	e->by_slot[slot - 1] = op;
	return true;
}

struct giong__emu_op *giong__emu_slot_find(struct giong__worker *w, uint64_t ud)
{
	struct giong__emu *e = &w->emu;
	uint32_t slot = (uint32_t)ud;
	struct giong__emu_op *op;

	if (!slot || slot > e->nslots)
		return NULL;
	op = e->by_slot[slot - 1];
	return op && op->sqe.user_data == ud ? op : NULL;
}

int giong__emu_arm(struct giong__worker *w, int fd)
{
	struct giong__emu *e = &w->emu;
	struct giong__emu_fd *d = &e->fds[fd];
	struct epoll_event ev;
	/* Never 0 once registered: a waiter that wants none of IN, OUT, PRI,
	 * RDHUP (a POLL_ADD of POLLHUP) still hears ERR and HUP, which epoll
	 * reports whatever it is asked. */
	uint32_t want = EPOLLERR | EPOLLHUP;

	if (!d->waiters.first)
		return 0;
	for (struct giong__list_node *n = d->waiters.first; n; n = n->next)
		want |= giong__container_of(n, struct giong__emu_op, link)->want;
	if ((d->armed & want) == want)
		return 0;
	memset(&ev, 0, sizeof(ev));
	ev.events = want | EPOLLONESHOT;
	ev.data.fd = fd;
	if (epoll_ctl(e->epfd, EPOLL_CTL_MOD, fd, &ev) < 0) {
		if (errno != ENOENT || epoll_ctl(e->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
			return -errno;
	}
	d->armed = want;
	return 0;
}

void giong__emu_fd_closing(struct giong__worker *w, int fd)
{
	struct giong__emu *e = &w->emu;

	if (fd < 0 || (unsigned)fd >= e->nfds || !e->fds[fd].armed)
		return;
	/* Armed: some operation still waits on it (the caller will cancel
	 * it). Take the registration out now, in case the file outlives the
	 * number (a dup elsewhere) and would keep reporting for it. */
	epoll_ctl(e->epfd, EPOLL_CTL_DEL, fd, NULL);
	e->fds[fd].armed = 0;
}
