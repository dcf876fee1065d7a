/* SPDX-License-Identifier: MIT */
/*
 * file.c - struct giong_file: open options, positional and stream I/O, sync,
 * metadata and size.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs_internal.h"

/* ----------------------------------------------------------- open options */

int giong_open_options_init(struct giong_open_options *o)
{
	if (!o)
		return -EINVAL;
	memset(o, 0, sizeof(*o));
	return 0;
}

/* The access mode and creation rules of Rust's std::fs::OpenOptions
 * (library/std/src/sys/pal/unix/fs.rs: get_access_mode, get_creation_mode). */
int giong_open_options_flags(const struct giong_open_options *o)
{
	const int managed = O_ACCMODE | O_CREAT | O_EXCL | O_TRUNC | O_APPEND;
	int flags = O_CLOEXEC;

	/* A negative custom_flags would make the result look like an error. */
	if (!o || o->custom_flags < 0 || (o->custom_flags & managed) || o->mode > 07777)
		return -EINVAL;
	if (o->append)
		flags |= (o->read ? O_RDWR : O_WRONLY) | O_APPEND;
	else if (o->read && o->write)
		flags |= O_RDWR;
	else if (o->write)
		flags |= O_WRONLY;
	else if (o->read)
		flags |= O_RDONLY;
	else
		return -EINVAL; /* no access at all */

	if (!o->write && !o->append) {
		if (o->create || o->create_new || o->truncate)
			return -EINVAL; /* creating or truncating needs write access */
	} else if (o->append && o->truncate && !o->create_new) {
		return -EINVAL; /* truncate and append contradict each other */
	}
	if (o->create_new)
		flags |= O_CREAT | O_EXCL;
	else
		flags |= (o->create ? O_CREAT : 0) | (o->truncate ? O_TRUNC : 0);
	return flags | o->custom_flags;
}

/* ------------------------------------------------------- open and close */

static int file_wrap(int fd, unsigned char direct, struct giong_file **ret)
{
	struct giong_file *f = malloc(sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->fd = fd;
	f->direct = direct;
	f->close_direct = false;
	*ret = f;
	return 0;
}

/* The fast-path state of a new file. O_DIRECT: a synchronous direct read
 * waits for the device even with RWF_NOWAIT, so those files use the ring. */
static unsigned char direct_state(bool ring_only, int flags)
{
	return (unsigned char)((ring_only ? GIONG__FS_RING_ONLY : 0) |
			       ((flags & O_DIRECT) ? GIONG__FS_NO_NOWAIT : 0));
}

/* The RESOLVE_* bits giong_open_options.resolve may hold. */
#define RESOLVE_ALLOWED                                                                            \
	(RESOLVE_BENEATH | RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |         \
	 RESOLVE_NO_XDEV)

/* Wrap @fd, the result of an open with @opts and its @flags (or -errno), into
 * *@ret; closes @fd if that fails. */
static int file_opened(int fd, const struct giong_open_options *opts, int flags,
		       struct giong_file **ret)
{
	int err;

	if (fd < 0)
		return fd;
	err = file_wrap(fd, direct_state(opts->ring_only, flags), ret);
	if (err)
		giong__fs_close_fd(fd);
	return err;
}

int giong_file_open_at(int dirfd, const char *path, const struct giong_open_options *opts,
		       struct giong_file **ret)
{
	int flags;

	if (ret)
		*ret = NULL;
	if (!path || !ret)
		return -EINVAL;
	flags = giong_open_options_flags(opts);
	if (flags < 0)
		return flags;
	/* Unknown bits, and BENEATH with IN_ROOT, which the kernel refuses too. */
	if ((opts->resolve & ~(unsigned)RESOLVE_ALLOWED) ||
	    (opts->resolve & (RESOLVE_BENEATH | RESOLVE_IN_ROOT)) ==
		    (RESOLVE_BENEATH | RESOLVE_IN_ROOT))
		return -EINVAL;
	/* A negative @dirfd other than AT_FDCWD: the kernel says -EBADF. */
	return file_opened(giong__fs_openat2(dirfd, path, flags, opts->mode ? opts->mode : 0666,
					     opts->resolve, opts->ring_only),
			   opts, flags, ret);
}

int giong_file_open(const char *path, const struct giong_open_options *opts,
		    struct giong_file **ret)
{
	int flags;

	if (ret)
		*ret = NULL;
	if (!path || !ret)
		return -EINVAL;
	flags = giong_open_options_flags(opts);
	if (flags < 0)
		return flags;
	if (opts->resolve)
		return giong_file_open_at(AT_FDCWD, path, opts, ret);
	return file_opened(
		giong__fs_openat(path, flags, opts->mode ? opts->mode : 0666, opts->ring_only),
		opts, flags, ret);
}

int giong_file_create(const char *path, struct giong_file **ret)
{
	const struct giong_open_options o = {.write = true, .create = true, .truncate = true};

	return giong_file_open(path, &o, ret);
}

/* An io_uring instance's descriptor (the ring refuses to close those). Only
 * descriptors that come from outside can be one; an anonymous inode (no
 * file type) is looked at more closely. */
static bool is_io_uring(int fd)
{
	char path[64], target[32];
	struct stat st;
	ssize_t n;

	if (fstat(fd, &st) || (st.st_mode & S_IFMT))
		return false;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = '\0';
	return strcmp(target, "anon_inode:[io_uring]") == 0;
}

int giong_file_from_fd(int fd, struct giong_file **ret)
{
	int flags, err;

	if (ret)
		*ret = NULL;
	if (fd < 0 || !ret)
		return -EINVAL;
	flags = fcntl(fd, F_GETFL); /* -1 (not a descriptor): its reads fail anyway */
	err = file_wrap(fd, direct_state(false, flags < 0 ? 0 : flags), ret);
	if (!err)
		(*ret)->close_direct = is_io_uring(fd);
	return err;
}

int giong_file_set_ring_only(struct giong_file *f, bool on)
{
	if (!f)
		return -EINVAL;
	if (on)
		__atomic_fetch_or(&f->direct, GIONG__FS_RING_ONLY, __ATOMIC_RELAXED);
	else
		__atomic_fetch_and(&f->direct, (unsigned char)~GIONG__FS_RING_ONLY,
				   __ATOMIC_RELAXED);
	return 0;
}

int giong_file_into_fd(struct giong_file *f)
{
	int fd;

	if (!f)
		return -EINVAL;
	fd = f->fd;
	free(f);
	return fd;
}

int giong_file_fd(const struct giong_file *f)
{
	return f ? f->fd : -EINVAL;
}

int giong_file_close(struct giong_file *f)
{
	int fd;

	if (!f)
		return 0;
	fd = f->fd;
	if (f->close_direct) {
		free(f);
		return giong__fs_close_direct(fd);
	}
	free(f);
	return giong__fs_close_fd(fd);
}

/* -------------------------------------------------------------- read/write */

ssize_t giong_file_read_at(struct giong_file *f, void *buf, size_t len, int64_t off)
{
	struct iovec iov = {buf, len};

	if (!f || (!buf && len) || off < 0)
		return -EINVAL;
	/* &iov: this frame, which outlives the read. */
	return giong__fs_pread(f->fd, &f->direct, &iov, 1, (uint64_t)off, true);
}

ssize_t giong_file_write_at(struct giong_file *f, const void *buf, size_t len, int64_t off)
{
	if (!f || (!buf && len) || off < 0)
		return -EINVAL;
	/* The kernel only reads @buf; the cast is for the shared helper. */
	return giong__fs_rw(f->fd, true, (void *)buf, len, (uint64_t)off);
}

/* Write all of @p at @off, looping over short writes. */
static int write_all_at(int fd, const char *p, size_t len, uint64_t off)
{
	while (len) {
		ssize_t n = giong__fs_rw(fd, true, (void *)p, len, off);

		if (n < 0)
			return (int)n;
		if (n == 0)
			return -EIO; /* the kernel took nothing: would loop forever */
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

int giong_file_write_all_at(struct giong_file *f, const void *buf, size_t len, int64_t off)
{
	if (!f || (!buf && len) || off < 0)
		return -EINVAL;
	if (len > (uint64_t)INT64_MAX - (uint64_t)off)
		return -EFBIG;
	return write_all_at(f->fd, buf, len, (uint64_t)off);
}

static ssize_t rwv(struct giong_file *f, bool write, const struct iovec *iov, int iovcnt,
		   int64_t off)
{
	struct io_uring_sqe *sqe;
	int err;

	if (!f || (!iov && iovcnt) || iovcnt < 0 || iovcnt > IOV_MAX || off < 0)
		return -EINVAL;
	/* @iov and the buffers it points to: the caller's, lent to the kernel
	 * until the read or giong_io() returns after the final CQE. */
	if (!write)
		return giong__fs_pread(f->fd, &f->direct, iov, iovcnt, (uint64_t)off, true);
	err = giong__fs_sqe(&sqe);
	if (err)
		return err;
	io_uring_prep_writev(sqe, f->fd, iov, (unsigned)iovcnt, (uint64_t)off);
	return giong_io(sqe);
}

ssize_t giong_file_readv_at(struct giong_file *f, const struct iovec *iov, int iovcnt, int64_t off)
{
	return rwv(f, false, iov, iovcnt, off);
}

ssize_t giong_file_writev_at(struct giong_file *f, const struct iovec *iov, int iovcnt, int64_t off)
{
	return rwv(f, true, iov, iovcnt, off);
}

/* Stream I/O at the file position. A pipe or terminal someone made
 * O_NONBLOCK (a shared stdin, say) makes the ring answer -EAGAIN instead of
 * waiting: wait for readiness with giong_poll() and try again. A regular file
 * is always "ready" to poll, so there -EAGAIN goes back to the caller. */
static ssize_t stream_rw(int fd, bool write, void *buf, size_t len)
{
	for (;;) {
		ssize_t n = giong__fs_rw(fd, write, buf, len, GIONG__FS_CUR_POS);
		struct stat st;
		int r;

		if (n != -EAGAIN || (!fstat(fd, &st) && S_ISREG(st.st_mode)))
			return n;
		r = giong_poll(fd, write ? POLLOUT : POLLIN, -1);
		if (r < 0)
			return r;
	}
}

ssize_t giong_file_read(struct giong_file *f, void *buf, size_t len)
{
	if (!f || (!buf && len))
		return -EINVAL;
	return stream_rw(f->fd, false, buf, len);
}

ssize_t giong_file_write(struct giong_file *f, const void *buf, size_t len)
{
	if (!f || (!buf && len))
		return -EINVAL;
	return stream_rw(f->fd, true, (void *)buf, len);
}

int giong_file_write_all(struct giong_file *f, const void *buf, size_t len)
{
	const char *p = buf;

	if (!f || (!buf && len))
		return -EINVAL;
	while (len) {
		ssize_t n = stream_rw(f->fd, true, (void *)p, len);

		if (n < 0)
			return (int)n;
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* ------------------------------------------------------- sync and metadata */

static int fsync_ring(struct giong_file *f, unsigned flags)
{
	struct io_uring_sqe *sqe;
	int err;

	if (!f)
		return -EINVAL;
	err = giong__fs_sqe(&sqe);
	if (err)
		return err;
	io_uring_prep_fsync(sqe, f->fd, flags); /* no memory is lent */
	return giong_io(sqe);
}

int giong_file_sync_all(struct giong_file *f)
{
	return fsync_ring(f, 0);
}

int giong_file_sync_data(struct giong_file *f)
{
	return fsync_ring(f, IORING_FSYNC_DATASYNC);
}

int giong_file_stat(struct giong_file *f, struct giong_stat *st)
{
	if (!f || !st)
		return -EINVAL;
	/* "" is a string literal: valid for ever. */
	return giong__fs_statx(f->fd, "", AT_EMPTY_PATH, st);
}

int64_t giong_file_len(struct giong_file *f)
{
	struct stat st;

	if (!f)
		return -EINVAL;
	/* Direct fstat(2): see file.h for why it is not a STATX SQE. */
	if (fstat(f->fd, &st))
		return -errno;
	return st.st_size;
}

/* 0 unknown, 1 the ring has IORING_OP_FTRUNCATE, 2 it does not. Probing is
 * idempotent, so threads racing to fill it in agree. */
static int ftruncate_state;

int giong_file_set_len_uses_ring(void)
{
	int s = __atomic_load_n(&ftruncate_state, __ATOMIC_RELAXED);

	if (!s) {
		const char *env = getenv("GIONG_FS_FTRUNCATE");
		struct io_uring_probe *p = NULL;

		s = 2;
		if (!env || strcmp(env, "direct") != 0) {
			p = io_uring_get_probe(); /* one small ring, once per process */
			if (p && io_uring_opcode_supported(p, GIONG__FS_OP_FTRUNCATE))
				s = 1;
			io_uring_free_probe(p);
		}
		__atomic_store_n(&ftruncate_state, s, __ATOMIC_RELAXED);
	}
	return s == 1;
}

int giong_file_set_len(struct giong_file *f, int64_t len)
{
	struct io_uring_sqe *sqe;
	int err;

	if (!f || len < 0)
		return -EINVAL;
	if (!giong_file_set_len_uses_ring()) {
		if (!giong_task_current())
			return GIONG_ENOTWORKER;
		return ftruncate(f->fd, (off_t)len) ? -errno : 0;
	}
	err = giong__fs_sqe(&sqe);
	if (err)
		return err;
	/* IORING_OP_FTRUNCATE: fd, off = length; every other field 0 (what
	 * liburing >= 2.6's io_uring_prep_ftruncate() does). No memory lent. */
	io_uring_prep_rw(GIONG__FS_OP_FTRUNCATE, sqe, f->fd, NULL, 0, (uint64_t)len);
	return giong_io(sqe);
}

int giong_file_allocate(struct giong_file *f, int mode, int64_t off, int64_t len)
{
	struct io_uring_sqe *sqe;
	int err;

	if (!f || off < 0 || len <= 0)
		return -EINVAL;
	err = giong__fs_sqe(&sqe);
	if (err)
		return err;
	io_uring_prep_fallocate(sqe, f->fd, mode, (off_t)off, (off_t)len); /* no memory lent */
	return giong_io(sqe);
}
