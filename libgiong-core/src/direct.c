/* SPDX-License-Identifier: MIT */
/*
 * direct.c - the worker's table of direct descriptors (giong/core/direct.h):
 * registered sparse at start, its slots counted, closes through the ring.
 */
#include <errno.h>
#include <liburing.h>
#include <sys/resource.h>

#include "internal.h"
#include "op.h"

/* The size a worker asks for: @want (giong_config.direct_files, the
 * environment applied), 0 picking the soft RLIMIT_NOFILE; never more than
 * that limit, which the kernel enforces for a registered table (-EMFILE). */
static unsigned table_size(int want)
{
	struct rlimit rl;
	rlim_t lim = GIONG_DIRECT_FILES_MAX;

	if (want < 0)
		return 0;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		lim = rl.rlim_cur;
	if (want == 0)
		return lim < GIONG_DIRECT_FILES_MAX ? (unsigned)lim : GIONG_DIRECT_FILES_MAX;
	return (rlim_t)want < lim ? (unsigned)want : (unsigned)lim;
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
	 * worker without a table, and its sockets regular. Every kernel the
	 * io_uring tiers run on (6.0+) has what the table's users need besides:
	 * accept into IORING_FILE_INDEX_ALLOC (5.19), IORING_ASYNC_CANCEL_FD_FIXED
	 * (6.0), close of a slot (5.15). */
	if (io_uring_register_files_sparse(&w->ring.ring, n) == 0)
		w->direct_size = n;
	else
		return;
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
