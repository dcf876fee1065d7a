/* SPDX-License-Identifier: MIT */
/*
 * path.c - whole-file helpers and operations on paths.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fs_internal.h"

/* ------------------------------------------------------- whole-file helpers */

/* Grow *@buf to hold at least @need bytes (doubling). */
static int grow(char **buf, size_t *cap, size_t need)
{
	size_t ncap = *cap;
	char *nbuf;

	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -EFBIG;
		ncap *= 2;
	}
	nbuf = realloc(*buf, ncap);
	if (!nbuf)
		return -ENOMEM;
	*buf = nbuf;
	*cap = ncap;
	return 0;
}

/*
 * Read @fd to its end into a malloc'd buffer. @hint is the size fstat gave
 * (0 when unknown: /proc, /sys, pipes). Each read asks for one byte more than
 * the bytes still expected, so that for an unchanged regular file a single
 * short read both fills the buffer and proves the end (a short read that
 * reached the expected size is the end of a regular file; anything else reads
 * on until the kernel returns 0). A file that grew since the fstat fills the
 * request completely, and the loop grows the buffer and reads on.
 */
static int read_to_end(int fd, bool seekable, bool regular, size_t hint, char **ret_buf,
		       size_t *ret_len)
{
	/* A regular file tries the page cache directly first (see
	 * giong__fs_pread); this call's own memory of a refusal. */
	unsigned char direct = regular ? 0 : GIONG__FS_NO_NOWAIT;
	size_t cap = (hint ? hint : 4094) + 2; /* + the probe byte + the NUL */
	size_t total = 0;
	char *buf;
	int err = 0;

	if (hint > SIZE_MAX - 2)
		return -EFBIG;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		size_t want;
		ssize_t n;

		if (cap - total < 2 && (err = grow(&buf, &cap, total + 2)))
			break;
		want = cap - total - 1; /* keep room for the NUL */
		/* buf + total: our heap buffer, lent to the kernel until the
		 * read returns; freed only after that. A short direct read is
		 * not completed there: this loop reads on. */
		if (seekable) {
			struct iovec iov = {buf + total, want};

			n = giong__fs_pread(fd, &direct, &iov, 1, (uint64_t)total, false);
		} else {
			n = giong__fs_rw(fd, false, buf + total, want, GIONG__FS_CUR_POS);
		}
		if (n < 0) {
			err = (int)n;
			break;
		}
		if (n == 0)
			break;
		total += (size_t)n;
		if ((size_t)n < want && hint && total >= hint)
			break;
	}
	if (err) {
		free(buf);
		return err;
	}
	buf[total] = '\0';
	*ret_buf = buf;
	*ret_len = total;
	return 0;
}

int giong_fs_read(const char *path, char **buf, size_t *len)
{
	struct stat st;
	size_t hint = 0;
	int fd, err;

	if (buf)
		*buf = NULL;
	if (len)
		*len = 0;
	if (!path || !buf || !len)
		return -EINVAL;
	fd = giong__fs_openat(path, O_RDONLY | O_CLOEXEC, 0, false);
	if (fd < 0)
		return fd;
	/* fstat(2) directly, not IORING_OP_STATX: the kernel runs STATX in a
	 * worker thread, which made a small-file read about 2x slower (see
	 * bench/results/fs.md); fstat on an open local file never blocks. */
	if (fstat(fd, &st)) {
		err = -errno;
	} else if (S_ISDIR(st.st_mode)) {
		err = -EISDIR;
	} else {
		if (S_ISREG(st.st_mode) && st.st_size > 0)
			hint = (uint64_t)st.st_size > SIZE_MAX ? SIZE_MAX : (size_t)st.st_size;
		err = read_to_end(fd, S_ISREG(st.st_mode) || S_ISBLK(st.st_mode),
				  S_ISREG(st.st_mode), hint, buf, len);
	}
	/* A read-only descriptor: a close error says nothing about the data, so
	 * the close is queued, not awaited (one ring round trip less per file:
	 * see bench/results/fs.md). */
	giong_close_nowait(fd);
	return err;
}

void giong_fs_free(void *buf)
{
	free(buf);
}

int giong_fs_write(const char *path, const void *data, size_t len)
{
	struct giong_file f = {.fd = -1, .direct = 0};
	int err, cerr;

	if (!path || (!data && len))
		return -EINVAL;
	f.fd = giong__fs_openat(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666, false);
	if (f.fd < 0)
		return f.fd;
	err = giong_file_write_all_at(&f, data, len, 0);
	cerr = giong__fs_close_fd(f.fd);
	return err ? err : cerr;
}

/* ---------------------------------------------------------- path operations */

/*
 * Every path below is the caller's (borrowed) and is lent to the kernel until
 * giong_io() returns after the operation's final CQE; the kernel copies it
 * when it issues the SQE.
 */

int giong_fs_rename(const char *from, const char *to)
{
	struct io_uring_sqe *sqe;
	int err;

	if (!from || !to)
		return -EINVAL;
	err = giong__fs_sqe(&sqe);
	if (err)
		return err;
	io_uring_prep_renameat(sqe, AT_FDCWD, from, AT_FDCWD, to, 0); /* lent: from, to */
	return giong_io(sqe);
}

static int unlink_at(const char *path, int flags)
{
	struct io_uring_sqe *sqe;
	int err;

	if (!path)
		return -EINVAL;
	err = giong__fs_sqe(&sqe);
	if (err)
		return err;
	io_uring_prep_unlinkat(sqe, AT_FDCWD, path, flags); /* lent: path */
	return giong_io(sqe);
}

int giong_fs_unlink(const char *path)
{
	return unlink_at(path, 0);
}

int giong_fs_rmdir(const char *path)
{
	return unlink_at(path, AT_REMOVEDIR);
}

int giong_fs_mkdir(const char *path, unsigned mode)
{
	struct io_uring_sqe *sqe;
	int err;

	if (!path || mode > 07777)
		return -EINVAL;
	err = giong__fs_sqe(&sqe);
	if (err)
		return err;
	io_uring_prep_mkdirat(sqe, AT_FDCWD, path, mode ? (mode_t)mode : 0777); /* lent: path */
	return giong_io(sqe);
}

int giong_fs_stat(const char *path, struct giong_stat *st)
{
	if (!path || !st)
		return -EINVAL;
	return giong__fs_statx(AT_FDCWD, path, 0, st);
}

int giong_fs_lstat(const char *path, struct giong_stat *st)
{
	if (!path || !st)
		return -EINVAL;
	return giong__fs_statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, st);
}

int giong_fs_link(const char *old_path, const char *new_path)
{
	struct io_uring_sqe *sqe;
	int err;

	if (!old_path || !new_path)
		return -EINVAL;
	err = giong__fs_sqe(&sqe);
	if (err)
		return err;
	/* lent: old_path, new_path */
	io_uring_prep_linkat(sqe, AT_FDCWD, old_path, AT_FDCWD, new_path, 0);
	return giong_io(sqe);
}

int giong_fs_symlink(const char *target, const char *link_path)
{
	struct io_uring_sqe *sqe;
	int err;

	if (!target || !link_path)
		return -EINVAL;
	err = giong__fs_sqe(&sqe);
	if (err)
		return err;
	io_uring_prep_symlinkat(sqe, target, AT_FDCWD, link_path); /* lent: target, link_path */
	return giong_io(sqe);
}
