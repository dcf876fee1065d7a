/* SPDX-License-Identifier: MIT */
/*
 * giong/fs/path.h - whole-file helpers and operations on paths.
 *
 * Every path is borrowed: it must stay valid until the call returns, which it
 * does, since the call parks the caller until the kernel's completion
 * (the kernel copies the string when it starts the operation). Relative
 * paths are relative to the process's working directory. Each operation is
 * one SQE: renameat, unlinkat, mkdirat, statx, linkat and symlinkat run in a
 * kernel worker thread (the kernel's choice: they may sleep on the disk),
 * never on the giong worker.
 */
#ifndef GIONG_FS_PATH_H
#define GIONG_FS_PATH_H

#include <stddef.h>

#include <giong/core/api.h>
#include <giong/fs/file.h>

GIONG_BEGIN_DECLS

/*
 * giong_fs_read() - read the whole file at @path: open (a direct cached
 * openat2(2), the ring when the lookup needs I/O), fstat(2)
 * directly for the size hint, reads until end of file (a regular file: the
 * page-cache fast path of <giong/fs/file.h>, a direct preadv2(RWF_NOWAIT),
 * and the ring only for what is not cached; anything else: the ring),
 * close (ring).
 * The close is queued but not awaited (its result would say nothing about
 * data only read): the descriptor is released, exactly once, when the
 * worker next enters the kernel, that is by the end of the current tick.
 * A file that grows between the fstat and the reads is read to its new end
 * (the buffer grows); a file with no size (/proc, /sys, a FIFO) is read until
 * a read returns 0.
 * Returns 0, an owned buffer in *@buf (free with giong_fs_free() or free())
 * holding *@len bytes followed by a NUL byte that *@len does not count; or
 * -errno with *@buf NULL and *@len 0: -EINVAL (NULL argument), -ENOENT,
 * -EISDIR, -ENOMEM, -EFBIG (larger than memory can hold), -ECANCELED,
 * -ETIMEDOUT (the whole call is under the task's deadline), ...
 * May suspend.
 */
GIONG_API int giong_fs_read(const char *path, char **buf, size_t *len);

/* giong_fs_free() - free a buffer from giong_fs_read() (takes ownership).
 * Same as free(); NULL is a no-op. */
GIONG_API void giong_fs_free(void *buf);

/*
 * giong_fs_write() - make the file at @path hold exactly the @len bytes of
 * @data (borrowed): open with O_WRONLY | O_CREAT | O_TRUNC (mode 0666 before
 * the umask), write all, close. Not atomic: a reader may see a partial file
 * (write a temporary file and giong_fs_rename() it for that).
 * Returns 0 or -errno (-EINVAL for NULL @path or NULL @data with @len > 0).
 * May suspend.
 */
GIONG_API int giong_fs_write(const char *path, const void *data, size_t len);

/* giong_fs_rename() - rename(2) @from to @to (IORING_OP_RENAMEAT); replaces
 * @to atomically if it exists. Returns 0 or -errno. May suspend. */
GIONG_API int giong_fs_rename(const char *from, const char *to);

/* giong_fs_unlink() - remove the file @path (IORING_OP_UNLINKAT).
 * Returns 0 or -errno (-EISDIR for a directory). May suspend. */
GIONG_API int giong_fs_unlink(const char *path);

/* giong_fs_mkdir() - create directory @path with permission bits @mode
 * (before the umask; 0 means 0777) (IORING_OP_MKDIRAT).
 * Returns 0 or -errno (-EEXIST, -ENOENT, -EINVAL for @mode > 07777).
 * May suspend. */
GIONG_API int giong_fs_mkdir(const char *path, unsigned mode);

/* giong_fs_rmdir() - remove the empty directory @path (IORING_OP_UNLINKAT
 * with AT_REMOVEDIR). Returns 0 or -errno (-ENOTEMPTY, -ENOTDIR).
 * May suspend. */
GIONG_API int giong_fs_rmdir(const char *path);

/* giong_fs_stat() - metadata of @path, following symbolic links, into *@st
 * (caller storage; lent to the kernel until this returns) (IORING_OP_STATX).
 * Returns 0 or -errno. May suspend. */
GIONG_API int giong_fs_stat(const char *path, struct giong_stat *st);

/* giong_fs_lstat() - like giong_fs_stat() but describes a symbolic link
 * itself (AT_SYMLINK_NOFOLLOW). May suspend. */
GIONG_API int giong_fs_lstat(const char *path, struct giong_stat *st);

/* giong_fs_link() - make @new_path a hard link to @old_path
 * (IORING_OP_LINKAT; a symbolic link @old_path is not followed).
 * Returns 0 or -errno (-EEXIST). May suspend. */
GIONG_API int giong_fs_link(const char *old_path, const char *new_path);

/* giong_fs_symlink() - make @link_path a symbolic link holding @target
 * (IORING_OP_SYMLINKAT; @target need not exist).
 * Returns 0 or -errno (-EEXIST). May suspend. */
GIONG_API int giong_fs_symlink(const char *target, const char *link_path);

GIONG_END_DECLS

#endif /* GIONG_FS_PATH_H */
