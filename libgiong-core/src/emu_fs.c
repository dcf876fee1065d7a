/* SPDX-License-Identifier: MIT */
/*
 * emu_fs.c - the epoll tier's operations that may block: files and paths
 * (the fs library's), a read or write of a regular file, a splice from one,
 * a blocking Unix socket's connect to a full backlog (emu_net.c), and NOP
 * and CLOSE, which never wait.
 *
 * Each runs through run_blocking(), which hands a copy of the SQE to the
 * runtime's helper-thread pool (blocking_pool.c): a helper makes the call,
 * the worker's giong__blocking_reap() calls job_done() on the worker's own
 * thread, which posts the completion to the CQ. All the memory the SQE
 * names (paths, an open_how, iovecs, buffers, a struct statx) stays lent
 * until the completion is posted, as giong_io() and giong_op_start() say
 * (the kernel copies paths at submission; nothing in giong relies on it),
 * and a cancel never ends that loan early: a running call keeps it until
 * the helper returns.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "internal.h"

static int ret_errno(long r)
{
	return r < 0 ? -errno : (int)r;
}

static const char *path_of(uint64_t addr)
{
	return (const char *)(uintptr_t)addr;
}

/*
 * The emulator's reads and writes, and its look at a descriptor's type, are
 * system calls made directly, not through libc's wrappers: they stand for
 * the kernel's own work on io_uring, and a program (or a test) interposing
 * preadv2 or fstat to count its own calls must not see them.
 */
/* preadv2 and pwritev2 answered ENOSYS once (a kernel before 4.6, or an
 * emulator without them: qemu-user 7.2 for AArch64): from then on the
 * process uses the calls without flags. */
static atomic_bool no_rwv2;

ssize_t giong__emu_rw(bool write, int fd, const struct iovec *iov, int n, uint64_t off, int flags)
{
	/* The offset in two longs (preadv2(2)'s pos_l, pos_h); -1: the file
	 * position. On 64-bit pos_h is 0. */
	unsigned long lo = (unsigned long)off;
	unsigned long hi = (unsigned long)(off >> (sizeof(long) * 4) >> (sizeof(long) * 4));
	ssize_t r;

	if (!atomic_load_explicit(&no_rwv2, memory_order_relaxed)) {
		r = syscall(write ? SYS_pwritev2 : SYS_preadv2, fd, iov, n, lo, hi, flags);
		if (r >= 0 || errno != ENOSYS)
			return r;
		atomic_store_explicit(&no_rwv2, true, memory_order_relaxed);
	}
	if (flags) {
		/* No flag can be passed: say so as a kernel that has the call
		 * but not the flag does (the caller then asks readiness, or
		 * sends a file to the helper threads). */
		errno = EOPNOTSUPP;
		return -1;
	}
	if (off == (uint64_t)-1)
		return syscall(write ? SYS_writev : SYS_readv, fd, iov, n);
	return syscall(write ? SYS_pwritev : SYS_preadv, fd, iov, n, lo, hi);
}

bool giong__emu_is_file(int fd)
{
	struct statx stx;

	if (syscall(SYS_statx, fd, "", AT_EMPTY_PATH, STATX_TYPE, &stx))
		return false;
	return S_ISREG(stx.stx_mode) || S_ISBLK(stx.stx_mode);
}

/* Run the system call @sqe stands for, blocking if it must. Returns the
 * CQE's res. */
static int exec_blocking(const struct io_uring_sqe *sqe)
{
	int fd = sqe->fd;
	void *addr = (void *)(uintptr_t)sqe->addr;
	/* READ and WRITE at offset -1: the file position, as io_uring does;
	 * preadv2 reads it the same way. */
	off_t off = (off_t)sqe->off;
	struct iovec one = {addr, sqe->len};
	bool vec = sqe->opcode == IORING_OP_READV || sqe->opcode == IORING_OP_WRITEV;

	switch (sqe->opcode) {
	case IORING_OP_READ:
	case IORING_OP_READV:
	case IORING_OP_WRITE:
	case IORING_OP_WRITEV:
		return ret_errno(giong__emu_rw(
			sqe->opcode == IORING_OP_WRITE || sqe->opcode == IORING_OP_WRITEV, fd,
			vec ? addr : &one, vec ? (int)sqe->len : 1, sqe->off, (int)sqe->rw_flags));
	case IORING_OP_SPLICE: {
		int64_t in_off = (int64_t)sqe->splice_off_in, out_off = (int64_t)sqe->off;
		loff_t io = in_off, oo = out_off;

		return ret_errno(splice(sqe->splice_fd_in, in_off == -1 ? NULL : &io, fd,
					out_off == -1 ? NULL : &oo, sqe->len,
					sqe->splice_flags & ~SPLICE_F_FD_IN_FIXED));
	}
	case IORING_OP_CONNECT: /* a Unix socket's, its listener's backlog full */
		return ret_errno(connect(fd, (const struct sockaddr *)addr, (socklen_t)sqe->off));
	case IORING_OP_OPENAT:
		return ret_errno(
			openat(fd, path_of(sqe->addr), (int)sqe->open_flags, (mode_t)sqe->len));
	case IORING_OP_OPENAT2:
		return ret_errno(syscall(SYS_openat2, fd, path_of(sqe->addr),
					 (struct open_how *)(uintptr_t)sqe->off, (size_t)sqe->len));
	case IORING_OP_STATX:
		return ret_errno(statx(fd, path_of(sqe->addr), (int)sqe->statx_flags, sqe->len,
				       (struct statx *)(uintptr_t)sqe->off));
	case IORING_OP_FSYNC:
		return ret_errno((sqe->fsync_flags & IORING_FSYNC_DATASYNC) ? fdatasync(fd)
									    : fsync(fd));
	case IORING_OP_FALLOCATE:
		return ret_errno(fallocate(fd, (int)sqe->len, off, (off_t)sqe->addr));
	case GIONG__EMU_OP_FTRUNCATE:
		return ret_errno(ftruncate(fd, off));
	case IORING_OP_RENAMEAT:
		return ret_errno(renameat2(fd, path_of(sqe->addr), (int)sqe->len,
					   path_of(sqe->addr2), sqe->rename_flags));
	case IORING_OP_UNLINKAT:
		return ret_errno(unlinkat(fd, path_of(sqe->addr), (int)sqe->unlink_flags));
	case IORING_OP_MKDIRAT:
		return ret_errno(mkdirat(fd, path_of(sqe->addr), (mode_t)sqe->len));
	case IORING_OP_LINKAT:
		return ret_errno(linkat(fd, path_of(sqe->addr), (int)sqe->len, path_of(sqe->addr2),
					(int)sqe->hardlink_flags));
	case IORING_OP_SYMLINKAT:
		return ret_errno(symlinkat(path_of(sqe->addr), fd, path_of(sqe->addr2)));
	default:
		return -EINVAL;
	}
}

/* On a helper thread. EINTR that no cancel asked for (a signal meant for
 * the process) is retried: for these calls it means nothing happened. A
 * job cancelled before its call, or whose call the cancel's signal
 * interrupted, did not happen: -ECANCELED (giong_io() reports the reason). */
static long job_run(struct giong__blocking_job *job)
{
	struct giong__emu_job *j = giong__container_of(job, struct giong__emu_job, job);
	int r;

	do {
		if (giong__bpool_cancelled(job))
			return -ECANCELED;
		r = exec_blocking(&j->op.sqe);
	} while (r == -EINTR);
	return r;
}

/* On the worker (giong__blocking_reap()), or on the thread freeing the
 * runtime for a job its worker never reaped (then orphaned: no CQ left). */
static void job_done(struct giong__blocking_job *job)
{
	struct giong__emu_job *j = giong__container_of(job, struct giong__emu_job, job);
	struct giong__worker *w = j->w;

	if (w) {
		if (j->kick)
			w->emu.kicks--;
		giong__list_remove(&w->emu.pooled, &j->op.link);
		giong__emu_slot_set(w, j->op.sqe.user_data, NULL);
		giong__emu_post(w, j->op.sqe.user_data, (int)job->res, 0);
	}
	free(j);
}

/*
 * The one place a blocking call is made: on a helper thread. Inline, on the
 * worker, only if the pool refuses the job (no memory for it, no thread
 * could start): slower, never wrong.
 */
static void run_blocking(struct giong__worker *w, const struct io_uring_sqe *sqe)
{
	struct giong__emu_job *j = calloc(1, sizeof(*j));

	if (!j)
		goto inline_call;
	j->op.sqe = *sqe;
	j->op.pooled = true;
	j->op.wait_fd = -1;
	j->w = w;
	j->job.fn = job_run;
	j->job.done = job_done;
	if (!w->emu.pool_bound) {
		/* The pool wakes this worker through the emulator's own
		 * eventfd, not the mailbox's: no mailbox read to complete
		 * and re-arm per call, and it is watched in the drain too. */
		struct giong__bpool *p = giong__blocking_pool(w);

		if (p) {
			giong__bpool_bind(p, w->index, w->emu.wake_efd);
			w->emu.pool_bound = true;
		}
	}
	if (!giong__emu_slot_set(w, sqe->user_data, &j->op))
		goto undo;
	if (giong__blocking_submit(w, &j->job)) {
		giong__emu_slot_set(w, sqe->user_data, NULL);
		goto undo;
	}
	giong__list_push_back(&w->emu.pooled, &j->op.link);
	return;
undo:
	free(j);
inline_call:
	/* But a connect inline would hold the worker until the listener makes
	 * room, maybe never (it may be this worker's): the non-blocking
	 * answer instead. */
	giong__emu_post(w, sqe->user_data,
			sqe->opcode == IORING_OP_CONNECT ? -EAGAIN : exec_blocking(sqe), 0);
}

void giong__emu_fs_blocking(struct giong__worker *w, const struct io_uring_sqe *sqe)
{
	run_blocking(w, sqe);
}

int giong__emu_fs_cancel(struct giong__worker *w, struct giong__emu_op *op)
{
	struct giong__emu_job *j = giong__container_of(op, struct giong__emu_job, op);
	int r = giong__blocking_cancel(w, &j->job);

	if (r == -EALREADY && !j->kick) {
		j->kick = true;
		w->emu.kicks++;
	}
	return r;
}

void giong__emu_fs_kick(struct giong__worker *w)
{
	for (struct giong__list_node *n = w->emu.pooled.first; n; n = n->next) {
		struct giong__emu_job *j = giong__container_of(n, struct giong__emu_job, op.link);

		if (j->kick)
			(void)giong__blocking_cancel(w, &j->job);
	}
}

/*
 * An open the dentry cache can answer, inline, as io_uring's first attempt
 * does it (io_openat2(): LOOKUP_CACHED and O_NONBLOCK, then O_NONBLOCK
 * taken off the file unless asked for): no thread for the common case, and
 * the same answers, such as -ENXIO for a write-only open of a FIFO with no
 * reader. False: the pool must make the call (not cached, or a flag this
 * attempt cannot take: O_CREAT, O_TRUNC and O_TMPFILE always wait, as on
 * io_uring).
 */
static bool open_cached(struct giong__worker *w, const struct io_uring_sqe *sqe)
{
	struct open_how how;
	bool asked_cached = false, nonblock;
	long fd;

	memset(&how, 0, sizeof(how));
	if (sqe->opcode == IORING_OP_OPENAT) {
		how.flags = (uint32_t)sqe->open_flags;
	} else {
		const struct open_how *u = (const struct open_how *)(uintptr_t)sqe->off;

		if (!u || sqe->len != sizeof(how))
			return false;
		how = *u;
		asked_cached = how.resolve & RESOLVE_CACHED;
	}
	if (how.mode || (how.flags & (O_CREAT | O_TRUNC | (O_TMPFILE & ~O_DIRECTORY))))
		return false;
	nonblock = how.flags & (O_NONBLOCK | O_PATH);
	if (!(how.flags & O_PATH)) /* O_PATH takes no O_NONBLOCK */
		how.flags |= O_NONBLOCK;
	how.resolve |= RESOLVE_CACHED;
	fd = syscall(SYS_openat2, sqe->fd, path_of(sqe->addr), &how, sizeof(how));
	if (fd < 0) {
		/* EAGAIN: not in the cache. EINVAL, E2BIG, ENOSYS: a flag
		 * openat(2) ignores and openat2(2) refuses, or no openat2:
		 * the real call says. */
		if ((errno == EAGAIN && !asked_cached) || errno == EINVAL || errno == E2BIG ||
		    errno == ENOSYS)
			return false;
		giong__emu_post(w, sqe->user_data, -errno, 0);
		return true;
	}
	if (!nonblock) {
		int fl = fcntl((int)fd, F_GETFL);

		if (fl >= 0)
			fcntl((int)fd, F_SETFL, fl & ~O_NONBLOCK);
	}
	giong__emu_post(w, sqe->user_data, (int)fd, 0);
	return true;
}

bool giong__emu_fs_run(struct giong__worker *w, const struct io_uring_sqe *sqe)
{
	switch (sqe->opcode) {
	case IORING_OP_NOP:
		giong__emu_post(w, sqe->user_data, 0, 0);
		return true;
	case IORING_OP_CLOSE:
		/* Never blocks for long on a socket or pipe. The number is
		 * released even when close(2) fails: never retried. */
		giong__emu_fd_closing(w, sqe->fd);
		giong__emu_post(w, sqe->user_data, close(sqe->fd) ? -errno : 0, 0);
		return true;
	case IORING_OP_OPENAT:
	case IORING_OP_OPENAT2:
		if (!open_cached(w, sqe))
			run_blocking(w, sqe);
		return true;
	case IORING_OP_STATX:
	case IORING_OP_FSYNC:
	case IORING_OP_FALLOCATE:
	case GIONG__EMU_OP_FTRUNCATE:
	case IORING_OP_RENAMEAT:
	case IORING_OP_UNLINKAT:
	case IORING_OP_MKDIRAT:
	case IORING_OP_LINKAT:
	case IORING_OP_SYMLINKAT:
		run_blocking(w, sqe);
		return true;
	default:
		return false;
	}
}
