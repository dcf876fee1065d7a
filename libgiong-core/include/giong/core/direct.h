/* SPDX-License-Identifier: MIT */
/*
 * giong/core/direct.h - the worker's table of direct descriptors.
 *
 * On the io_uring tiers each worker registers, at start, a sparse table of
 * files with its ring (io_uring_register_files_sparse(3), Linux 5.19+). A
 * file in it is named by its slot, not by a descriptor: an SQE sets
 * IOSQE_FIXED_FILE and puts the slot where the descriptor would go. It saves
 * the kernel a descriptor-table lookup and reference per operation, and the
 * process a descriptor. libgiong-net accepts TCP connections into it
 * (IORING_FILE_INDEX_ALLOC: the kernel picks the slot); see
 * <giong/net/tcp.h>.
 *
 * Size: giong_config.direct_files slots per worker (0, the default: no
 * table; -1: the soft RLIMIT_NOFILE, at most GIONG_DIRECT_FILES_MAX), or the
 * environment's GIONG_DIRECT_FILES (a count, "auto" or "off"), which wins.
 * The kernel refuses a table larger than RLIMIT_NOFILE: the size is cut to
 * it. Off by default: against one worker's regular descriptors it gained
 * nothing that five or nine interleaved rounds could tell from the noise
 * (bench/results/http.md, issue 28), and a connection in it has no
 * descriptor to ask its addresses or options (net's tcp.h).
 * No table on the epoll tier, nor where the kernel refuses one, nor before
 * Linux 6.13: there a file closed out of its slot is released only once
 * every request that used the table before has completed, so one idle
 * connection's receive would keep every closed connection open (probed once
 * per process, by closing a slot while a request waits on another). There
 * every socket is a regular descriptor.
 *
 * The counts here are the worker's own: a slot is counted used from the
 * completion that put a file in it (giong_direct_taken()) until the
 * completion of its close (giong_close_direct_nowait()). The kernel may fill
 * slots faster than completions are reaped: users keep a margin.
 *
 * For libraries built on core (net); programs read the counts in
 * struct giong_stats (direct_files, direct_used, direct_fallbacks).
 * Everything here: owner worker only, does not suspend.
 */
#ifndef GIONG_CORE_DIRECT_H
#define GIONG_CORE_DIRECT_H

#include <giong/core/api.h>

GIONG_BEGIN_DECLS

/* The largest table the default picks (8 bytes of kernel memory a slot). */
#define GIONG_DIRECT_FILES_MAX 65536

/* IORING_OP_FIXED_FD_INSTALL (Linux 6.8): give a slot's file a regular
 * descriptor. liburing 2.3's enum stops before it: its number, defined here.
 * Prepare it with IOSQE_FIXED_FILE, the slot in sqe->fd; the CQE's result
 * is the new descriptor (O_CLOEXEC unless IORING_FIXED_FD_NO_CLOEXEC, 1, is
 * in sqe->install_fd_flags, the union at sqe->rw_flags). */
#define GIONG_OP_FIXED_FD_INSTALL 54

/* giong_direct_can_install() - 1 when the calling worker's kernel has
 * IORING_OP_FIXED_FD_INSTALL (probed once, with the table), else 0; or
 * GIONG_ENOTWORKER. */
GIONG_API int giong_direct_can_install(void);

/* giong_direct_size() - slots in the calling worker's table: 0 when it has
 * none, or GIONG_ENOTWORKER. */
GIONG_API int giong_direct_size(void);

/* giong_direct_free() - slots of the calling worker's table not counted
 * used: 0 when it has none (or is full), or GIONG_ENOTWORKER. */
GIONG_API int giong_direct_free(void);

/* giong_direct_taken() - count one slot used: a completion put a file in
 * it. Returns 0, -ENOSPC (more than the table holds: not counted), -ENOTSUP
 * (no table) or GIONG_ENOTWORKER. */
GIONG_API int giong_direct_taken(void);

/* giong_direct_note_fallback() - count, in giong_stats.direct_fallbacks, one
 * file that was to go into the table and became a regular descriptor (the
 * table full). Returns 0 or GIONG_ENOTWORKER. */
GIONG_API int giong_direct_note_fallback(void);

/*
 * giong_close_direct_nowait() - close the file in slot @slot of the calling
 * worker's table through the ring (IORING_OP_CLOSE with a file index),
 * batched with the tick's other submissions, without waiting; the slot is
 * counted free when the close completes. The caller must submit nothing
 * more naming @slot: once the close has run, the kernel may put another
 * file there. SQEs prepared before this call are submitted before the close.
 * With no SQE to be had (the worker draining), the slot is emptied at once
 * with io_uring_register_files_update(3). Returns 0, -EINVAL (@slot out of
 * the table), -ENOTSUP (no table) or GIONG_ENOTWORKER.
 */
GIONG_API int giong_close_direct_nowait(unsigned slot);

GIONG_END_DECLS

#endif /* GIONG_CORE_DIRECT_H */
