/* SPDX-License-Identifier: MIT */
/*
 * giong/fs.h - libgiong-fs: files and path operations through the worker's
 * io_uring. Include this one header; link giong::fs (pkg-config giong-fs).
 *
 * Every call that waits for the kernel parks only the calling fiber: the
 * operation is an SQE in the worker's ring, awaited with giong_io(), so it
 * honours the task's deadline (-ETIMEDOUT) and cancellation (-ECANCELED) and
 * never returns before the kernel is done with the caller's memory. There is
 * no thread pool. Positional reads first try the page cache with a direct
 * preadv2(RWF_NOWAIT), which never waits for the disk, and use the ring only
 * on a miss (per-file switch: giong_open_options.ring_only); see
 * <giong/fs/file.h>. What else does not go through the ring (fstat for
 * giong_file_len() and giong_fs_read(), getdents64 for directories, ftruncate
 * on kernels older than 6.9) is listed in docs/fs.md and at each function.
 *
 * Errors: 0 or a count on success, a negative errno on failure (see
 * giong_strerror()). Called outside a giong task, every function that would
 * suspend returns GIONG_ENOTWORKER, except giong_file_close() and
 * giong_dir_close(), which always release the descriptor.
 */
#ifndef GIONG_FS_H
#define GIONG_FS_H

#include <giong/core.h>
#include <giong/fs/dir.h>
#include <giong/fs/file.h>
#include <giong/fs/path.h>

#endif /* GIONG_FS_H */
