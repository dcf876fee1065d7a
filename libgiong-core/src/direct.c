/* SPDX-License-Identifier: MIT */
/*
 * direct.c - the worker's table of direct descriptors (giong/core/direct.h):
 * registered sparse at start, its slots counted, closes through the ring.
 */
#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "internal.h"
#include "op.h"

/* The size a worker asks for: @want (giong_config.direct_files, the
 * environment applied): 0 none, -1 the soft RLIMIT_NOFILE (at most
 * GIONG_DIRECT_FILES_MAX); never more than that limit, which the kernel
 * enforces for a registered table (-EMFILE). */
static unsigned table_size(int want)
{
	struct rlimit rl;
	rlim_t lim = GIONG_DIRECT_FILES_MAX;

	if (want == 0)
		return 0;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		lim = rl.rlim_cur;
	if (want < 0)
		return lim < GIONG_DIRECT_FILES_MAX ? (unsigned)lim : GIONG_DIRECT_FILES_MAX;
	return (rlim_t)want < lim ? (unsigned)want : (unsigned)lim;
}

/* Wait (1 s at most) for the CQEs of the probe's @want user_data bits, and
 * consume them: the worker's loop must start with the CQ as it was. */
static void probe_reap(struct io_uring *ring, unsigned want)
{
	struct __kernel_timespec ts = {.tv_sec = 1};
	struct io_uring_cqe *cqe;

	while (want && io_uring_wait_cqe_timeout(ring, &cqe, &ts) == 0) {
		want &= ~(unsigned)io_uring_cqe_get_data64(cqe);
		io_uring_cqe_seen(ring, cqe);
	}
}

/* The answer of closes_promptly(), the same for every ring of the process: 0
 * not known yet, 1 yes, -1 no. */
static _Atomic int close_probe;

/*
 * Whether closing a slot releases its file at once, while a request on
 * another slot is in flight. Before Linux 6.13 the files of a table were
 * released by generations: a file removed from its slot (close_direct) is
 * put only once every request that used the table before the removal has
 * completed. An idle connection's multishot receive never completes: no
 * closed connection would then ever be closed (no FIN, the socket held),
 * which is what the 6.1 guest showed (http.idle, http.lifecycle); 6.1 also
 * puts released files from a work item run a second later. The per-file
 * reference counts that end both came with the tables' rework (6.13); the
 * probe, not the version, decides. Probed on @ring (a table of 2 slots at
 * least, nothing in flight) by doing it, once per process: socket pair A in
 * slot 0, B in slot 1, a poll on slot 1 that stays in flight, close slot 0:
 * A's peer sees the end at once, or not. Everything is undone and every CQE
 * consumed before returning.
 */
static bool closes_promptly(struct io_uring *ring)
{
	int a[2] = {-1, -1}, b[2] = {-1, -1}, fds[2], none[2] = {-1, -1};
	int known = atomic_load(&close_probe);
	struct io_uring_sqe *sqe;
	struct pollfd pfd;
	char ch;
	bool ok = false;

	if (known)
		return known > 0;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, a) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, b))
		goto out;
	fds[0] = a[0], fds[1] = b[0];
	if (io_uring_register_files_update(ring, 0, fds, 2) != 2)
		goto out;
	close(a[0]); /* the table holds them now */
	close(b[0]);
	a[0] = b[0] = -1;
	/* No memory is lent: the poll and the close name slots. */
	if (!(sqe = io_uring_get_sqe(ring)))
		goto undo;
	io_uring_prep_poll_add(sqe, 1, POLLIN);
	sqe->flags |= IOSQE_FIXED_FILE;
	io_uring_sqe_set_data64(sqe, 1);
	if (!(sqe = io_uring_get_sqe(ring)))
		goto undo;
	io_uring_prep_close_direct(sqe, 0);
	io_uring_sqe_set_data64(sqe, 2);
	if (io_uring_submit(ring) != 2)
		goto undo;
	probe_reap(ring, 2);
	pfd = (struct pollfd){.fd = a[1], .events = POLLIN};
	ok = poll(&pfd, 1, 20) == 1 && recv(a[1], &ch, 1, MSG_DONTWAIT) == 0;
	atomic_store(&close_probe, ok ? 1 : -1);
undo:
	if ((sqe = io_uring_get_sqe(ring))) {
		io_uring_prep_cancel64(sqe, 1, 0);
		io_uring_sqe_set_data64(sqe, 4);
		if (io_uring_submit(ring) == 1)
			probe_reap(ring, 1 | 4);
	}
	io_uring_register_files_update(ring, 0, none, 2);
out:
	for (int i = 0; i < 2; i++) {
		if (a[i] >= 0)
			close(a[i]);
		if (b[i] >= 0)
			close(b[i]);
	}
	return ok;
}

void giong__direct_init(struct giong__worker *w, int want)
{
	unsigned n;

	w->direct_size = w->direct_used = 0;
	w->direct_install = false;
	if (w->ring.tier == GIONG_TIER_EPOLL || !(n = table_size(want)))
		return;
	/* Probed by doing it: a kernel before 5.19 (no sparse registration), a
	 * seccomp profile refusing io_uring_register, or no memory leave the
	 * worker without a table, and its sockets regular; so does a kernel
	 * already known to release closed slots late (close_probe < 0). Every
	 * kernel the io_uring tiers run on (6.0+) has what the table's users
	 * need besides: accept into IORING_FILE_INDEX_ALLOC (5.19),
	 * IORING_ASYNC_CANCEL_FD_FIXED (6.0), close of a slot (5.15). */
	if (n < 2 || atomic_load(&close_probe) < 0 ||
	    io_uring_register_files_sparse(&w->ring.ring, n))
		return;
	/* Before 6.13 a closed slot is released too late (closes_promptly()):
	 * no table, and every socket regular. */
	if (!closes_promptly(&w->ring.ring)) {
		io_uring_unregister_files(&w->ring.ring);
		return;
	}
	w->direct_size = n;
	/* Whether a slot's file can be given a descriptor: one probe per
	 * worker (a seccomp profile may refuse it: then it cannot). */
	struct io_uring_probe *p = io_uring_get_probe_ring(&w->ring.ring);

	w->direct_install = p && io_uring_opcode_supported(p, GIONG_OP_FIXED_FD_INSTALL);
	if (p)
		io_uring_free_probe(p);
}

int giong_direct_can_install(void)
{
	struct giong__worker *w = giong__worker_current();

	return w ? w->direct_install : GIONG_ENOTWORKER;
}

int giong_direct_size(void)
{
	struct giong__worker *w = giong__worker_current();

	return w ? (int)w->direct_size : GIONG_ENOTWORKER;
}

int giong_direct_free(void)
{
	struct giong__worker *w = giong__worker_current();

	return w ? (int)(w->direct_size - w->direct_used) : GIONG_ENOTWORKER;
}

int giong_direct_taken(void)
{
	struct giong__worker *w = giong__worker_current();

	if (!w)
		return GIONG_ENOTWORKER;
	if (!w->direct_size)
		return -ENOTSUP;
	if (w->direct_used == w->direct_size)
		return -ENOSPC;
	w->direct_used++;
	return 0;
}

int giong_direct_note_fallback(void)
{
	struct giong__worker *w = giong__worker_current();

	if (!w)
		return GIONG_ENOTWORKER;
	w->stats.direct_fallbacks++;
	return 0;
}

/* The slot is empty again, or was never filled (-EBADF): free it for the
 * count. -ECANCELED: the worker drained before the close ran; the ring's
 * exit, which follows, closes what the table holds. */
static void close_direct_done(void *ctx, int res, unsigned flags)
{
	struct giong__worker *w = giong__worker_current();

	(void)ctx;
	(void)flags;
	if (res != -ECANCELED && w && w->direct_used)
		w->direct_used--;
}

int giong_close_direct_nowait(unsigned slot)
{
	struct giong__worker *w = giong__worker_current();
	struct io_uring_sqe *sqe;
	int none = -1;

	if (!w)
		return GIONG_ENOTWORKER;
	if (!w->direct_size)
		return -ENOTSUP;
	if (slot >= w->direct_size)
		return -EINVAL;
	sqe = giong__sqe(w);
	if (sqe) {
		/* No memory is lent: the slot rides in the SQE. The slot stays
		 * its stream's until this completes (the caller submits nothing
		 * more on it); then the kernel may fill it again. */
		io_uring_prep_close_direct(sqe, slot);
		if (giong__op_start(w, sqe, close_direct_done, NULL, NULL) == 0)
			return 0;
		/* Made a no-op by giong__op_start(): empty the slot below. */
	}
	/* Rare (no SQE: the worker draining): one system call. */
	if (io_uring_register_files_update(&w->ring.ring, slot, &none, 1) == 1 && w->direct_used)
		w->direct_used--;
	return 0;
}
