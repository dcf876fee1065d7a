/* SPDX-License-Identifier: MIT */
/*
 * giong/fs/dir.h - reading a directory's entries.
 *
 * io_uring has no getdents: the directory is opened and closed through the
 * ring, but its entries are read with a direct getdents64(2) system call,
 * 32 KiB at a time. On a directory whose blocks are not in memory (a cold
 * cache, a network filesystem) that call blocks the whole worker until the
 * disk answers; on a warm one it costs about a system call per few hundred
 * entries.
 */
#ifndef GIONG_FS_DIR_H
#define GIONG_FS_DIR_H

#include <stdint.h>

#include <giong/core/api.h>

GIONG_BEGIN_DECLS

struct giong_dir;

/* One entry. name is borrowed: valid until the next giong_dir_next() or
 * giong_dir_close() on the same directory. */
struct giong_dirent {
	const char *name; /* never "." or ".." */
	uint64_t ino;
	unsigned char type; /* d_type: DT_REG, DT_DIR, DT_LNK, ... from <dirent.h>;
			       DT_UNKNOWN (0) if the filesystem does not say */
};

/*
 * giong_dir_open() - open the directory @path (borrowed) for reading, with
 * O_DIRECTORY: a direct cached openat2(2) first, IORING_OP_OPENAT when the
 * lookup needs I/O (the fast path of <giong/fs/file.h>).
 * Returns 0 and an owned directory in *@ret (close with giong_dir_close()),
 * or -errno (-EINVAL for NULL, -ENOTDIR, -ENOENT, -ENOMEM). May suspend.
 */
GIONG_API int giong_dir_open(const char *path, struct giong_dir **ret);

/*
 * giong_dir_from_fd() - read the directory open on @fd (takes ownership: it
 * is closed by giong_dir_close(), or at once when this fails): for one opened
 * with giong_file_open_at() and O_DIRECTORY under RESOLVE_BENEATH, say, and
 * handed over with giong_file_into_fd(). Entries are read from the
 * descriptor's current position (the start, for a fresh one).
 * Returns 0 and an owned directory in *@ret; -EINVAL (a negative @fd, NULL
 * @ret: @fd is then left alone), -ENOTDIR (@fd is not a directory: closed),
 * -EBADF, -ENOMEM (closed). Does not suspend (the close on failure is direct).
 */
GIONG_API int giong_dir_from_fd(int fd, struct giong_dir **ret);

/* giong_dir_fd() - the descriptor of @d (borrowed: valid until @d is closed),
 * for fstatat(2) of its entries; -EINVAL for NULL. Does not suspend. */
GIONG_API int giong_dir_fd(const struct giong_dir *d);

/*
 * giong_dir_next() - the next entry of @d into *@ent (caller storage).
 * Returns 1 and an entry, 0 at the end (and on every later call), or -errno
 * (-EINVAL for NULL). Entries come in the filesystem's order; "." and ".."
 * are skipped. Calls getdents64(2) directly (see above): may block the
 * worker on a cold directory; does not suspend.
 */
GIONG_API int giong_dir_next(struct giong_dir *d, struct giong_dirent *ent);

/* giong_dir_close() - close and free @d (takes ownership); the descriptor is
 * released exactly once, as giong_file_close() does it. Returns 0 or the
 * close error. NULL is a no-op. May suspend. */
GIONG_API int giong_dir_close(struct giong_dir *d);

GIONG_END_DECLS

#endif /* GIONG_FS_DIR_H */
