/* SPDX-License-Identifier: MIT */
/*
 * dir.c - reading directories. Open and close go through the ring;
 * io_uring has no getdents, so the entries come from a direct getdents64(2)
 * (which may block the worker on a cold directory: see dir.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fs_internal.h"

#define DIR_BUF 32768

/* The kernel's struct linux_dirent64. */
struct dirent64_k {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

struct giong_dir {
	int fd;     /* owned: closed once, by giong_dir_close() */
	size_t pos; /* next record in buf */
	size_t end; /* bytes of buf filled by the last getdents64 */
	bool eof;
	_Alignas(8) char buf[DIR_BUF];
};

/* A directory reading @fd into *@ret; -ENOMEM leaves @fd to the caller. */
static int dir_wrap(int fd, struct giong_dir **ret)
{
	struct giong_dir *d = malloc(sizeof(*d));

	if (!d)
		return -ENOMEM;
	d->fd = fd;
	d->pos = d->end = 0;
	d->eof = false;
	*ret = d;
	return 0;
}

int giong_dir_open(const char *path, struct giong_dir **ret)
{
	int fd;

	if (ret)
		*ret = NULL;
	if (!path || !ret)
		return -EINVAL;
	fd = giong__fs_openat(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0, false);
	if (fd < 0)
		return fd;
	if (dir_wrap(fd, ret) != 0) {
		giong__fs_close_fd(fd);
		return -ENOMEM;
	}
	return 0;
}

int giong_dir_from_fd(int fd, struct giong_dir **ret)
{
	struct stat st;

	if (ret)
		*ret = NULL;
	if (fd < 0 || !ret)
		return -EINVAL;
	/* fstat(2) reads the in-memory inode: it tells a directory at no I/O
	 * cost, where getdents64 would only fail at the first giong_dir_next(). */
	if (fstat(fd, &st) != 0)
		return -errno; /* -EBADF: nothing to close */
	if (!S_ISDIR(st.st_mode)) {
		close(fd);
		return -ENOTDIR;
	}
	if (dir_wrap(fd, ret) != 0) {
		close(fd);
		return -ENOMEM;
	}
	return 0;
}

int giong_dir_fd(const struct giong_dir *d)
{
	return d ? d->fd : -EINVAL;
}

int giong_dir_next(struct giong_dir *d, struct giong_dirent *ent)
{
	if (!d || !ent)
		return -EINVAL;
	for (;;) {
		const struct dirent64_k *e;

		if (d->pos >= d->end) {
			long n;

			if (d->eof)
				return 0;
			/* Direct system call into our own buffer: no ring involved. */
			n = syscall(SYS_getdents64, d->fd, d->buf, sizeof(d->buf));
			if (n < 0)
				return -errno;
			if (n == 0) {
				d->eof = true;
				return 0;
			}
			d->pos = 0;
			d->end = (size_t)n;
		}
		e = (const struct dirent64_k *)(d->buf + d->pos);
		d->pos += e->d_reclen;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		ent->name = e->d_name;
		ent->ino = e->d_ino;
		ent->type = e->d_type;
		return 1;
	}
}

int giong_dir_close(struct giong_dir *d)
{
	int fd;

	if (!d)
		return 0;
	fd = d->fd;
	free(d);
	return giong__fs_close_fd(fd);
}
