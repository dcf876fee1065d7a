/* SPDX-License-Identifier: MIT */
/*
 * emu_fs.c - the epoll tier's operations that may block: files and paths
 * (the fs library's), a read or write of a regular file, a splice from one,
 * and NOP and CLOSE, which never wait.
 *
 * Each runs through run_blocking(). Until the bounded helper-thread pool
 * (blocking_pool.c) is merged, run_blocking() runs the call inline, on the
 * worker: correct, but a worker then waits on the disk. The pool replaces
 * its body, and nothing else here: the SQE is copied by then, the memory it
 * names stays lent until the completion is posted, as on io_uring.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "internal.h"

/* IORING_OP_FTRUNCATE (Linux 6.9): liburing 2.3 does not name it. */
#define EMU_OP_FTRUNCATE 55

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
ssize_t giong__emu_rw(bool write, int fd, const struct iovec *iov, int n, uint64_t off, int flags)
{
	/* The offset in two longs (preadv2(2)'s pos_l, pos_h); -1: the file
	 * position. On 64-bit pos_h is 0. */
	unsigned long lo = (unsigned long)off;
	unsigned long hi = (unsigned long)(off >> (sizeof(long) * 4) >> (sizeof(long) * 4));

	return syscall(write ? SYS_pwritev2 : SYS_preadv2, fd, iov, n, lo, hi, flags);
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
	case EMU_OP_FTRUNCATE:
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

/*
 * The one place a blocking call is made. TODO(blocking_pool): hand @sqe (a
 * copy) to the helper-thread pool, which posts the completion through the
 * worker's eventfd; until then, inline.
 */
static void run_blocking(struct giong__worker *w, const struct io_uring_sqe *sqe)
{
	giong__emu_post(w, sqe->user_data, exec_blocking(sqe), 0);
}

void giong__emu_fs_blocking(struct giong__worker *w, const struct io_uring_sqe *sqe)
{
	run_blocking(w, sqe);
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
	case IORING_OP_STATX:
	case IORING_OP_FSYNC:
	case IORING_OP_FALLOCATE:
	case EMU_OP_FTRUNCATE:
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
