/* SPDX-License-Identifier: MIT */
/*
 * io.c - the few primitives every fs call is made of: take an SQE, open,
 * read/write, statx and close through the ring.
 *
 * Each is one SQE prepared with liburing's io_uring_prep_*() on giong_sqe()
 * and awaited with giong_io(), which parks the calling task until the
 * operation's final completion, also when the task is cancelled or its
 * deadline passes (the kernel is asked to cancel and its answer awaited).
 * So every pointer handed to the kernel here points into the caller's frame
 * or the caller's buffer, which outlive the operation.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fs_internal.h"

int giong__fs_sqe(struct io_uring_sqe **out)
{
	/* Outside a task giong_io() would refuse the SQE without discarding it,
	 * and it would go to the kernel with whatever it held: take none. */
	if (!giong_task_current())
		return GIONG_ENOTWORKER;
	*out = giong_sqe();
	return *out ? 0 : -EAGAIN;
}

int giong__fs_openat(const char *path, int flags, unsigned mode)
{
	struct io_uring_sqe *sqe;
	int err = giong__fs_sqe(&sqe);

	if (err)
		return err;
	/* @path: borrowed from the caller, whose frame lives until giong_io()
	 * returns after the final CQE (the kernel copies it when it issues). */
	io_uring_prep_openat(sqe, AT_FDCWD, path, flags, (mode_t)mode);
	/* If the task is cancelled while the open is in flight and the open
	 * wins the race, giong_io() returns the new descriptor: we own it and
	 * the caller closes it, so nothing leaks. */
	return giong_io(sqe);
}

ssize_t giong__fs_rw(int fd, bool write, void *buf, size_t len, uint64_t off)
{
	struct io_uring_sqe *sqe;
	int err = giong__fs_sqe(&sqe);

	if (err)
		return err;
	if (len > GIONG__FS_MAX_RW)
		len = GIONG__FS_MAX_RW;
	/* @buf: the caller's, lent to the kernel until giong_io() returns; it
	 * is not touched by the kernel after that, even if cancelled. */
	if (write) {
		io_uring_prep_write(sqe, fd, buf, (unsigned)len, off);
		return giong_io(sqe);
	}
	io_uring_prep_read(sqe, fd, buf, (unsigned)len, off);
	err = giong_io(sqe);
	if (err > 0)
		GIONG__FS_KERNEL_WROTE(buf, (size_t)err);
	return err;
}

static void ts_from_statx(struct giong_timestamp *t, const struct statx_timestamp *s)
{
	t->sec = s->tv_sec;
	t->nsec = s->tv_nsec;
}

int giong__fs_statx(int dfd, const char *path, int flags, struct giong_stat *st)
{
	struct io_uring_sqe *sqe;
	struct statx stx;
	int err = giong__fs_sqe(&sqe);

	if (err)
		return err;
	memset(&stx, 0, sizeof(stx));
	/* @path (the caller's, or a string literal) and &stx (this frame) are
	 * lent to the kernel until giong_io() returns after the final CQE. */
	io_uring_prep_statx(sqe, dfd, path, flags | AT_STATX_SYNC_AS_STAT,
			    STATX_BASIC_STATS | STATX_BTIME, &stx);
	err = giong_io(sqe);
	if (err < 0)
		return err;
	GIONG__FS_KERNEL_WROTE(&stx, sizeof(stx));
	memset(st, 0, sizeof(*st));
	st->size = stx.stx_size;
	st->blocks = stx.stx_blocks;
	st->ino = stx.stx_ino;
	st->dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	st->rdev = makedev(stx.stx_rdev_major, stx.stx_rdev_minor);
	st->mode = stx.stx_mode;
	st->nlink = stx.stx_nlink;
	st->uid = stx.stx_uid;
	st->gid = stx.stx_gid;
	st->blksize = stx.stx_blksize;
	ts_from_statx(&st->atime, &stx.stx_atime);
	ts_from_statx(&st->mtime, &stx.stx_mtime);
	ts_from_statx(&st->ctime, &stx.stx_ctime);
	if (stx.stx_mask & STATX_BTIME) {
		ts_from_statx(&st->btime, &stx.stx_btime);
		st->mask |= GIONG_STAT_BTIME;
	}
	return 0;
}

/* close(2) for a descriptor the ring did not close. Linux releases the
 * descriptor even when close(2) fails (EINTR included): never retry. */
static int close_direct(int fd)
{
	return close(fd) ? -errno : 0;
}

/*
 * Closing exactly once.
 *
 * giong_io() of an IORING_OP_CLOSE can end in three ways:
 *  - The kernel ran the close: any result but -ECANCELED (0, -EIO, -EBADF,
 *    ...). The descriptor is gone; a second close could hit a descriptor
 *    number another thread has just been given.
 *  - The SQE never reached the kernel: the task was already cancelled or
 *    past its deadline (giong_io() discards the SQE and returns -ECANCELED /
 *    -ETIMEDOUT at once), the worker is draining (GIONG_ESHUTDOWN), or no
 *    operation slot (-ENOMEM). We check the first case ourselves before
 *    submitting, and take the deadline off for the close, so these codes
 *    after a submit can only mean "not submitted".
 *  - The task was cancelled while parked and the kernel cancelled the close
 *    before it ran: -ECANCELED. A close runs inline at submission unless the
 *    file has a ->flush method (NFS, FUSE, some devices), in which case it
 *    is queued to a kernel worker, and only a queued close can be cancelled;
 *    io_close() removes the descriptor from the table only when it runs. So
 *    -ECANCELED from the kernel means the descriptor is still open.
 * In the last two cases we close(2) directly. One ambiguity remains, in
 * core: giong_io() also reports a kernel -EINTR as -ECANCELED when it had
 * asked for a cancel, and a close interrupted inside ->flush (FUSE) has
 * already released the descriptor. We therefore close(2) only if
 * fcntl(F_GETFD) still finds the descriptor; the residual race (another
 * thread reusing the number in that window, on FUSE, while this task is
 * being cancelled) is reported to core.
 */
int giong__fs_close_fd(int fd)
{
	struct io_uring_sqe *sqe;
	uint64_t saved;
	int ret;

	if (fd < 0)
		return -EBADF;
	if (giong_task_cancelled() || giong__fs_sqe(&sqe))
		return close_direct(fd);
	/* A deadline would only turn a slow close into a blocking one. */
	saved = giong_deadline();
	giong_deadline_restore(GIONG_NO_DEADLINE);
	io_uring_prep_close(sqe, fd); /* no memory is lent */
	ret = giong_io(sqe);
	giong_deadline_restore(saved);
	if (ret == -ECANCELED || ret == -ETIMEDOUT || ret == GIONG_ESHUTDOWN || ret == -ENOMEM) {
		if (fcntl(fd, F_GETFD) >= 0)
			return close_direct(fd);
		return 0;
	}
	return ret;
}

/* Completion of a close nobody waits for: the kernel answers -ECANCELED only
 * for a close it never ran (the worker cancelled it while draining, before a
 * kernel worker picked it up), which leaves the descriptor open: close it
 * here. Any other result means the descriptor is gone. Runs on the worker,
 * outside any task. */
static void close_nowait_done(void *ctx, int res, unsigned flags)
{
	(void)flags;
	if (res == -ECANCELED)
		close((int)(intptr_t)ctx);
}

void giong__fs_close_fd_nowait(int fd)
{
	struct io_uring_sqe *sqe;

	if (fd < 0)
		return;
	if (giong__fs_sqe(&sqe)) {
		close(fd);
		return;
	}
	io_uring_prep_close(sqe, fd); /* no memory is lent; the fd rides in ctx */
	/* On failure giong_op_start() has turned the SQE into a no-op. */
	if (giong_op_start(sqe, close_nowait_done, (void *)(intptr_t)fd, NULL))
		close(fd);
}
