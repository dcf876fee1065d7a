/* SPDX-License-Identifier: MIT */
/*
 * fs_internal.h - what the sources of libgiong-fs share. Never installed.
 * libgiong-fs uses only core's public API (<giong/core.h>) and liburing.
 */
#ifndef GIONG_FS_INTERNAL_H
#define GIONG_FS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <liburing.h>

#include <giong/core.h>
#include <giong/fs.h>

/* Valgrind does not see the kernel write through the ring. giong_io() marks
 * the buffers of READ/READV itself; this is for what it cannot know (the
 * statx buffer). GIONG_VALGRIND builds only. */
#ifdef GIONG_VALGRIND
#include <valgrind/memcheck.h>
#define GIONG__FS_KERNEL_WROTE(p, n) ((void)VALGRIND_MAKE_MEM_DEFINED((p), (n)))
#else
#define GIONG__FS_KERNEL_WROTE(p, n) ((void)(p), (void)(n))
#endif

/* Linux's MAX_RW_COUNT (INT_MAX rounded down to a page): the most one read or
 * write moves; sqe->len is 32 bits anyway. */
#define GIONG__FS_MAX_RW ((size_t)0x7ffff000)

/* The offset that tells io_uring "use and advance the file position". */
#define GIONG__FS_CUR_POS ((uint64_t)-1)

/* IORING_OP_FTRUNCATE (Linux 6.9). liburing 2.3's enum stops before it; a
 * newer liburing has an enumerator of that name, hence our own name. */
#define GIONG__FS_OP_FTRUNCATE 55

/* giong_file.direct: 0 = reads try the page-cache fast path first; any bit
 * set = reads go through the ring. Read and written with relaxed atomics:
 * tasks of several workers may share a file. */
#define GIONG__FS_RING_ONLY 1u /* the user asked (ring_only, set_ring_only) */
#define GIONG__FS_NO_NOWAIT 2u /* the kernel refused RWF_NOWAIT, or O_DIRECT */

struct giong_file {
	int fd;               /* owned: closed once, by giong_file_close() */
	unsigned char direct; /* GIONG__FS_* bits, see above */
	bool close_direct;    /* an io_uring instance: IORING_OP_CLOSE refuses it */
};

/*
 * giong__fs_sqe() - an SQE of the calling worker's ring for a task that is
 * about to giong_io() it. Returns 0 and the SQE in *@out; GIONG_ENOTWORKER
 * outside a task (no SQE is taken, so nothing stale can be submitted);
 * -EAGAIN if the kernel refuses every submission.
 */
int giong__fs_sqe(struct io_uring_sqe **out);

/* openat(AT_FDCWD, @path, @flags, @mode): a direct openat2(RESOLVE_CACHED)
 * first (the page-cache fast path, for opens: only when every component of
 * @path is in the lookup cache, never with O_CREAT or O_TRUNC), the ring
 * otherwise or when @ring_only. Returns an owned descriptor or -errno.
 * May suspend or yield. */
int giong__fs_openat(const char *path, int flags, unsigned mode, bool ring_only);

/* The same as openat2(@dirfd, @path, {@flags, @mode, @resolve}) (RESOLVE_*
 * bits, already checked): the direct attempt with RESOLVE_CACHED | @resolve,
 * then IORING_OP_OPENAT2 with the same open_how. @mode is passed only with
 * O_CREAT or O_TMPFILE (openat2 refuses it otherwise). Returns an owned
 * descriptor or -errno. May suspend or yield. */
int giong__fs_openat2(int dirfd, const char *path, int flags, unsigned mode, uint64_t resolve,
		      bool ring_only);

/* Read or write on @fd at @off (GIONG__FS_CUR_POS: the file position).
 * @buf is lent to the kernel until this returns. May suspend. */
ssize_t giong__fs_rw(int fd, bool write, void *buf, size_t len, uint64_t off);

/*
 * giong__fs_pread() - positional read of @iov (@iovcnt entries, all lent
 * until this returns) at @off on @fd: the page-cache fast path when *@direct
 * is 0 (a direct preadv2(RWF_NOWAIT), the ring on EAGAIN), else the ring.
 * Sets GIONG__FS_NO_NOWAIT in *@direct when the kernel refuses RWF_NOWAIT on
 * @fd. With @complete, a direct read that stops short reads on to the end of
 * the request or of the file, as io_uring does for regular files; without,
 * the short count is returned (the caller loops). @off must be a real offset
 * (not GIONG__FS_CUR_POS). Returns bytes or -errno. May suspend or yield.
 */
ssize_t giong__fs_pread(int fd, unsigned char *direct, const struct iovec *iov, int iovcnt,
			uint64_t off, bool complete);

/* Close @fd exactly once (see giong_file_close()). May suspend. */
int giong__fs_close_fd(int fd);
/* close(2), for descriptors the ring refuses to close (see giong_file_from_fd()). */
int giong__fs_close_direct(int fd);

/* statx on (@dfd, @path, @flags) through the ring into @st. May suspend. */
int giong__fs_statx(int dfd, const char *path, int flags, struct giong_stat *st);

#endif /* GIONG_FS_INTERNAL_H */
