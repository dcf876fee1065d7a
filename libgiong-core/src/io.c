/* SPDX-License-Identifier: MIT */
/*
 * io.c - a task parked on one operation (giong_io) and on a descriptor's
 * readiness (giong_poll): the fiber side of the completion layer. The task
 * stays parked until the operation's final CQE, whatever asked it to stop
 * (invariant 2).
 */
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "fiber.h"

#ifdef GIONG_VALGRIND
#include <sys/uio.h>
#include <valgrind/memcheck.h>

/*
 * valgrind cannot see the kernel write into a buffer through the ring, and
 * would call the bytes a read brought uninitialised. For the reads whose
 * buffer the SQE names (READ, RECV, READV), tell it what the kernel wrote.
 * Only in GIONG_VALGRIND builds.
 */
struct kernel_write {
	uint8_t opcode;
	uint64_t addr;
	uint32_t len;
};

static struct kernel_write kernel_write_of(const struct io_uring_sqe *sqe)
{
	struct kernel_write k = {sqe->opcode, sqe->addr, sqe->len};
	return k;
}

static void kernel_wrote(struct kernel_write k, int res)
{
	if (res <= 0)
		return;
	if (k.opcode == IORING_OP_READ || k.opcode == IORING_OP_RECV) {
		VALGRIND_MAKE_MEM_DEFINED((void *)(uintptr_t)k.addr, (size_t)res);
	} else if (k.opcode == IORING_OP_READV) {
		const struct iovec *iov = (const struct iovec *)(uintptr_t)k.addr;
		size_t left = (size_t)res;

		for (uint32_t i = 0; i < k.len && left; i++) {
			size_t n = iov[i].iov_len < left ? iov[i].iov_len : left;

			VALGRIND_MAKE_MEM_DEFINED(iov[i].iov_base, n);
			left -= n;
		}
	}
}
#endif

/* The completion of a task's giong_io(): record it and resume the task. */
static void fiber_io_done(void *ctx, int res, unsigned flags)
{
	struct giong__wait *wt = ctx;

	if (flags & IORING_CQE_F_MORE)
		return; /* giong_io() is for one-shot operations */
	/* Cancelled on our request: report why we asked. A kernel worker
	 * thread that a cancel interrupts in a blocking call (an open waiting
	 * for a FIFO's other end) ends it with -EINTR on Linux 6.1, and lets
	 * the kernel's own "restart" codes (ERESTARTSYS and kin, 512-516 but
	 * 515) escape on later kernels, which must never reach a user. Either
	 * way the operation did not happen: report the cancel. But a close
	 * interrupted in ->flush has already released the descriptor: -EINTR,
	 * as close(2) says. Any other result means the operation ran; keep it
	 * (invariant 2). An -EINTR nobody asked for stays -EINTR. */
	bool restart = res <= -512 && res >= -516 && res != -515;
	bool interrupted_call = restart || res == -EINTR;

	if (interrupted_call && wt->interrupted && wt->opcode != IORING_OP_CLOSE)
		res = wt->interrupt_code;
	else if (restart)
		res = -EINTR;
	else if (wt->interrupted && res == -ECANCELED)
		res = wt->interrupt_code;
	wt->result = res;
	wt->cqe_flags = flags;
	giong__make_ready(wt->f->w, wt->f);
}

int giong_io(struct io_uring_sqe *sqe)
{
	struct giong__worker *w;
	struct giong__fiber *f;
	struct giong__wait wt;
	int ret;

	if (!sqe)
		return -EINVAL;
	ret = giong__wait_begin(&wt, GIONG__WAIT_IO, &w);
	if (ret) {
		/* On a worker but outside a task (a callback), or a task that
		 * must not park: the SQE must not go to the kernel half-owned.
		 * Off a worker it is not one of ours to touch. */
		if (w)
			giong_sqe_discard(sqe);
		return ret;
	}
	f = wt.f;
	wt.opcode = sqe->opcode;
#ifdef GIONG_VALGRIND
	struct kernel_write kw = kernel_write_of(sqe);
#endif
	/* &wt lives on this task's stack, which stays put while it is parked:
	 * it is the op's context until the final CQE resumes us. */
	ret = giong__op_start(w, sqe, fiber_io_done, &wt, &wt.op_id);
	if (ret)
		return ret;
	ret = giong__park(w, &wt);
	f->io_cqe_flags = wt.cqe_flags;
#ifdef GIONG_VALGRIND
	kernel_wrote(kw, ret);
#endif
	return ret;
}

unsigned giong_io_cqe_flags(void)
{
	struct giong__worker *w = giong__worker_current();

	return w && w->current ? w->current->io_cqe_flags : 0;
}

int giong_poll(int fd, short events, int timeout_ms)
{
	struct giong__worker *w = giong__worker_current();
	struct io_uring_sqe *sqe;
	uint64_t saved = GIONG_NO_DEADLINE, mine = GIONG_NO_DEADLINE;
	int ret;

	if (fd < 0)
		return -EINVAL;
	if (!w || !w->current)
		return GIONG_ENOTWORKER;
	if (timeout_ms >= 0) {
		mine = giong__clock_ms_ceil() + (uint64_t)timeout_ms;
		saved = giong_deadline_set(mine);
	}
	sqe = giong__sqe(w);
	if (!sqe) {
		ret = -EBUSY;
	} else {
		io_uring_prep_poll_add(sqe, fd, (unsigned)(unsigned short)events);
		ret = giong_io(sqe);
	}
	if (timeout_ms >= 0) {
		giong_deadline_restore(saved);
		/* Our own timeout, not the caller's deadline: poll(2) says 0. */
		if (ret == -ETIMEDOUT && mine < saved)
			ret = 0;
	}
	return ret;
}
