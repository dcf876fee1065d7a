/* SPDX-License-Identifier: MIT */
/*
 * emu_submit.c - the epoll tier's "enter": run every queued SQE in order, as
 * the kernel does at submission, then at most one epoll_wait, then retry the
 * operations whose descriptors it reported.
 *
 * An operation that must wait is copied into a struct giong__emu_op (malloc,
 * freed at its final completion) and linked on its descriptor's waiter list.
 * Completions are only ever queued (giong__emu_post), never dispatched from
 * here: giong__reap() runs the callbacks, outside any submission, as it
 * does for the ring's CQEs.
 *
 * ASYNC_CANCEL finds the waiting operation and completes it with -ECANCELED
 * (final, no IORING_CQE_F_MORE; a MSG_WAITALL send that sent a part: that
 * count, as io_uring does), and answers 0, the count (CANCEL_ALL),
 * or -ENOENT when the operation had already completed: io_uring's results.
 * A call in the helper-thread pool (emu_fs.c), found by user_data or, if it
 * works on a file, by descriptor, answers as io_uring does for one its
 * kernel workers hold: 0 if it had not started (it completes with
 * -ECANCELED), -EALREADY if a helper runs it (interrupted if it waits
 * interruptibly; it keeps its memory and completes when the helper
 * returns), -ENOENT if it finished and its completion is on its way.
 *
 * The pool's completions come back through the emulator's own eventfd
 * (wake_efd, always in the epoll set, the drain included; not the
 * mailbox's, whose read would complete and be re-armed per call):
 * giong__blocking_reap() runs before deciding to wait and after each
 * epoll_wait.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "internal.h"

#define EMU_EVENTS 128 /* readiness reports taken per epoll_wait */
#define EMU_SKIP_MAX 8 /* turns with completions queued that may skip epoll_wait */
#define EMU_KICK_MS 10 /* how often a cancelled call still running is signalled again */

static void waiter_unlink(struct giong__worker *w, struct giong__emu_op *op)
{
	struct giong__emu_fd *d = &w->emu.fds[op->wait_fd];

	giong__list_remove(&d->waiters, &op->link);
	w->emu.waiting--;
	giong__emu_slot_set(w, op->sqe.user_data, NULL);
	/* With no waiter left the descriptor may be closed and its number
	 * reused, unseen: the next wait re-arms (MOD, or ADD on ENOENT) rather
	 * than trust a registration that may belong to a closed file. */
	if (giong__list_empty(&d->waiters))
		d->armed = 0;
}

/* Park @op on op->wait_fd and make sure the descriptor is armed for it. */
static void waiter_park(struct giong__worker *w, struct giong__emu_op *op)
{
	struct giong__emu_fd *d = giong__emu_fd(w, op->wait_fd);
	int err;

	if (!d || !giong__emu_slot_set(w, op->sqe.user_data, op)) {
		giong__emu_net_abort(op);
		giong__emu_post(w, op->sqe.user_data,
				giong__emu_net_partial(op, op->wait_fd < 0 ? -EBADF : -ENOMEM), 0);
		free(op);
		return;
	}
	giong__list_push_back(&d->waiters, &op->link);
	w->emu.waiting++;
	err = giong__emu_arm(w, op->wait_fd);
	if (err) {
		/* Not pollable (EPERM: a regular file), or gone (EBADF). */
		waiter_unlink(w, op);
		giong__emu_net_abort(op);
		giong__emu_post(w, op->sqe.user_data, giong__emu_net_partial(op, err), 0);
		free(op);
	}
}

/* Try @op again; done: freed. Still waiting: parked (maybe elsewhere). */
static void retry(struct giong__worker *w, struct giong__emu_op *op)
{
	waiter_unlink(w, op);
	if (giong__emu_net_try(w, op) == GIONG__EMU_DONE)
		free(op);
	else
		waiter_park(w, op);
}

/* A send that had sent part of its bytes (MSG_WAITALL) completes with that
 * count, as io_uring's io_sendrecv_fail() reports it, not -ECANCELED. */
static void cancel_one(struct giong__worker *w, struct giong__emu_op *op)
{
	waiter_unlink(w, op);
	giong__emu_net_abort(op);
	giong__emu_post(w, op->sqe.user_data, giong__emu_net_partial(op, -ECANCELED), 0);
	free(op);
}

/* @fd still has waiters: arm it for what they want. If that fails, the
 * descriptor is gone under them: fail them (-ECANCELED, or a partial
 * send's count). */
static void rearm_or_fail(struct giong__worker *w, int fd)
{
	struct giong__list_node *n;

	if (giong__emu_arm(w, fd) < 0) {
		while ((n = w->emu.fds[fd].waiters.first))
			cancel_one(w, giong__container_of(n, struct giong__emu_op, link));
	}
}

/* The opcodes of pooled calls that work on a file of their SQE's fd, the
 * ones io_uring's cancel by descriptor matches (it compares the request's
 * file): not the path calls, whose fd is only where a path starts. */
static bool pooled_on_fd(const struct io_uring_sqe *sqe)
{
	switch (sqe->opcode) {
	case IORING_OP_READ:
	case IORING_OP_READV:
	case IORING_OP_WRITE:
	case IORING_OP_WRITEV:
	case IORING_OP_FSYNC:
	case IORING_OP_FALLOCATE:
	case IORING_OP_SPLICE:
	case IORING_OP_CONNECT:
	case GIONG__EMU_OP_FTRUNCATE:
		return true;
	default:
		return false;
	}
}

/* Cancel by descriptor of the calls on @fd in the helper-thread pool, in
 * submission order, the first only unless @all; *@found counts those that
 * were cancelled or interrupted (not those finished already, -ENOENT).
 * Returns the first one's answer if not @all (0 or -EALREADY), else 0. */
static int cancel_pooled_fd(struct giong__worker *w, int fd, bool all, int *found)
{
	struct giong__list_node *n, *next;

	for (n = w->emu.pooled.first; n; n = next) {
		struct giong__emu_op *op = giong__container_of(n, struct giong__emu_op, link);
		int r;

		next = n->next; /* a cancel never unlinks: done() does, at the reap */
		if (op->sqe.fd != fd || !pooled_on_fd(&op->sqe))
			continue;
		r = giong__emu_fs_cancel(w, op);
		if (r == -ENOENT)
			continue;
		(*found)++;
		if (!all)
			return r;
	}
	return 0;
}

static void cancel(struct giong__worker *w, const struct io_uring_sqe *sqe)
{
	struct giong__emu *e = &w->emu;
	bool by_fd = sqe->cancel_flags & IORING_ASYNC_CANCEL_FD;
	bool all = sqe->cancel_flags & IORING_ASYNC_CANCEL_ALL;
	int found = 0;

	if (by_fd) {
		struct giong__list_node *n;

		if (sqe->fd >= 0 && (unsigned)sqe->fd < e->nfds) {
			while ((all || !found) && (n = e->fds[sqe->fd].waiters.first)) {
				cancel_one(w, giong__container_of(n, struct giong__emu_op, link));
				found++;
			}
			/* Nothing waits on it: no need to hear from it again.
			 * Without CANCEL_ALL others may still wait (only the
			 * first was taken): they keep hearing it, re-armed for
			 * what they want. */
			if (!e->fds[sqe->fd].waiters.first)
				giong__emu_fd_closing(w, sqe->fd);
			else
				rearm_or_fail(w, sqe->fd);
		}
		if (sqe->fd >= 0 && (all || !found)) {
			/* The calls a helper holds or will run, as io_uring's
			 * cancel reaches its kernel workers' (-EALREADY for one
			 * running: interrupted if it can be, it completes when
			 * its helper returns). */
			int r = cancel_pooled_fd(w, sqe->fd, all, &found);

			if (!all && found) {
				giong__emu_post(w, sqe->user_data, r, 0);
				return;
			}
		}
	} else {
		/* By user_data: the slab (op.c) sits above and cannot point
		 * here, so waiting operations are indexed by slot. */
		struct giong__emu_op *op = giong__emu_slot_find(w, sqe->addr);

		if (op && op->pooled) {
			int r = giong__emu_fs_cancel(w, op);

			if (!all || r == -ENOENT) {
				giong__emu_post(w, sqe->user_data, r, 0);
				return;
			}
			found = 1;
		} else if (op) {
			cancel_one(w, op);
			found = 1;
		}
	}
	giong__emu_post(w, sqe->user_data, found ? (all ? found : 0) : -ENOENT, 0);
}

static void submit_one(struct giong__worker *w, const struct io_uring_sqe *sqe)
{
	struct giong__emu_op *op;

	if (sqe->opcode == IORING_OP_ASYNC_CANCEL) {
		cancel(w, sqe);
		return;
	}
	if (giong__emu_fs_run(w, sqe))
		return;
	op = malloc(sizeof(*op));
	if (!op) {
		giong__emu_post(w, sqe->user_data, -ENOMEM, 0);
		return;
	}
	memset(op, 0, sizeof(*op));
	op->sqe = *sqe;
	op->wait_fd = sqe->fd;
	if (giong__emu_net_try(w, op) == GIONG__EMU_DONE)
		free(op);
	else
		waiter_park(w, op);
}

/* Retry the waiters of the descriptor epoll reported with @events. The
 * registration is one-shot: it is disarmed now, re-armed if some remain.
 *
 * e->fds is read afresh after every retry, never through a pointer kept
 * across one: a retried operation may park on another descriptor (a SPLICE
 * on its other end), whose record may grow, and so move, the table. The
 * nodes themselves are the operations' own memory and do not move. */
static void ready(struct giong__worker *w, int fd, uint32_t events)
{
	struct giong__emu *e = &w->emu;
	struct giong__list_node *n, *next, *last;

	if (fd == e->wake_efd) {
		/* The pool's wake: taken here (its registration is level-
		 * triggered), the completions reaped after the wait. */
		uint64_t v;
		ssize_t r = read(fd, &v, sizeof(v));

		(void)r; /* EAGAIN: nothing to take, a spurious report */
		return;
	}
	if (fd < 0 || (unsigned)fd >= e->nfds)
		return;
	e->fds[fd].armed = 0;
	/* Only those parked before this turn: a retried one that parks again
	 * goes to the tail and waits for the next report. */
	last = e->fds[fd].waiters.last;
	for (n = e->fds[fd].waiters.first; n; n = next) {
		struct giong__emu_op *op = giong__container_of(n, struct giong__emu_op, link);
		bool stop = n == last;

		next = n->next;
		if ((op->want & events) || (events & (EPOLLERR | EPOLLHUP)))
			retry(w, op);
		if (stop)
			break;
	}
	if (e->fds[fd].waiters.first)
		rearm_or_fail(w, fd);
}

int giong__emu_enter(struct giong__worker *w, unsigned wait_nr, uint64_t timeout_ms)
{
	struct giong__emu *e = &w->emu;
	struct epoll_event evs[EMU_EVENTS];
	unsigned submitted = 0;
	int timeout = 0, n;

	while (e->sq_head != e->sq_tail) {
		/* A copy: the slot is free again before the operation runs. */
		struct io_uring_sqe sqe = e->sq[e->sq_head++ & (e->sq_entries - 1)];

		submit_one(w, &sqe);
		submitted++;
	}
	w->stats.sqes_submitted += submitted;
	/* Completions the helpers handed back: queued before deciding to
	 * sleep, so that the loop does not sleep on them. */
	giong__blocking_reap(w);
	/* "enters" counts what would have been io_uring_enter calls: a
	 * submission, or a look at readiness (an epoll_wait), once a call. */
	if (submitted)
		w->stats.enters++;
	if (wait_nr && !e->cq_n)
		timeout = timeout_ms > INT_MAX ? (timeout_ms == UINT64_MAX ? -1 : INT_MAX)
					       : (int)timeout_ms;
	else if (!e->waiting)
		return (int)submitted; /* nothing to wait for, nothing to hear */
	else if (e->cq_n && e->polls_skipped < EMU_SKIP_MAX) {
		/* Completions are queued: the loop comes straight back, and
		 * a look at readiness can wait for that turn. Bounded, so
		 * that a loop that always has some (a task submitting NOPs
		 * for ever) still hears its sockets. */
		e->polls_skipped++;
		return (int)submitted;
	}
	e->polls_skipped = 0;
	if (e->kicks) {
		/* Rare (a cancel met a running call): a clock read is fine.
		 * Never more often than every EMU_KICK_MS, however busy the
		 * loop: a call in a disk wait does not notice the signal. */
		uint64_t now = giong__clock_ms();

		if (now >= e->kick_next) {
			giong__emu_fs_kick(w);
			e->kick_next = now + EMU_KICK_MS;
		}
		if (timeout < 0 || timeout > EMU_KICK_MS)
			timeout = EMU_KICK_MS;
	}
	if (!submitted)
		w->stats.enters++;
	if (timeout)
		w->stats.parks++;
	n = epoll_wait(e->epfd, evs, EMU_EVENTS, timeout);
	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++)
		ready(w, evs[i].data.fd, evs[i].events);
	giong__blocking_reap(w);
	return (int)submitted;
}
