/* SPDX-License-Identifier: MIT */
/*
 * giong/core/op.h - operations: the completion layer and fiber I/O.
 *
 * Underneath the fibers sits a plain completion layer: an operation is an
 * SQE of the worker's ring plus a callback that receives each of its CQEs.
 * Fibers are one user of it (giong_io()); it is public for code that wants a
 * callback-driven state machine with no stack at all, and for the libraries
 * built on core (net uses it for multishot accept and receive).
 *
 * Preparing an SQE: take one with giong_sqe(), fill it with liburing's
 * io_uring_prep_*() helpers (include <liburing.h>; link liburing), then hand
 * it to giong_op_start() or giong_io() before the task parks or yields.
 * Never set sqe->user_data yourself: giong owns it.
 *
 * Ownership: every pointer an SQE carries (buffers, iovecs, msghdr,
 * sockaddr, timespecs) is lent to the kernel until the operation's final
 * completion (the callback call without IORING_CQE_F_MORE, or the return of
 * giong_io()). Freeing or reusing that memory earlier lets the kernel write
 * into freed memory. giong_io() guarantees it by parking; a giong_op_start()
 * user must keep the memory alive until its callback sees the final CQE.
 */
#ifndef GIONG_CORE_OP_H
#define GIONG_CORE_OP_H

#include <stdint.h>

#include <giong/core/api.h>

GIONG_BEGIN_DECLS

struct io_uring_sqe;

/*
 * Completion callback. @res is the CQE's result, @flags its flags
 * (IORING_CQE_F_MORE: more CQEs follow for this operation;
 * IORING_CQE_F_BUFFER: a provided buffer was used). Runs on the worker's
 * scheduler stack, outside any task: it must not park. It may start or
 * cancel operations, wake tasks and spawn tasks.
 */
typedef void (*giong_op_fn)(void *ctx, int res, unsigned flags);

/*
 * giong_sqe() - a free SQE of the calling worker's ring. If the submission
 * queue is full, what it holds is submitted first (one io_uring_enter).
 * Returns NULL outside a worker or if the kernel refuses every submission.
 * The SQE must be passed to giong_op_start() or giong_io() (or discarded
 * with giong_sqe_discard()) before the caller parks or yields.
 * Owner worker only.
 */
GIONG_API struct io_uring_sqe *giong_sqe(void);

/* giong_sqe_discard() - turn an unused SQE from giong_sqe() into a no-op
 * whose completion is ignored. */
GIONG_API void giong_sqe_discard(struct io_uring_sqe *sqe);

/*
 * giong_op_start() - bind the prepared @sqe to @fn(@ctx) and queue it; it
 * enters the kernel with everything else at the end of the tick.
 * Stores an id for giong_op_cancel() in *@id if @id is non-NULL.
 * Returns 0; or -EINVAL (NULL @sqe or @fn), -ENOMEM (the SQE is discarded),
 * GIONG_ESHUTDOWN (the worker is draining: nothing new enters the kernel;
 * the SQE is discarded), GIONG_ENOTWORKER. Owner worker only.
 */
GIONG_API int giong_op_start(struct io_uring_sqe *sqe, giong_op_fn fn, void *ctx, uint64_t *id);

/*
 * giong_op_cancel() - ask the kernel to cancel operation @id
 * (IORING_OP_ASYNC_CANCEL). The operation's callback is still called with
 * its final CQE (often -ECANCELED, but it may have completed first); its
 * memory stays lent until then. Asking twice sends one cancel. If the
 * kernel takes no submission at the moment, the cancel is sent at the
 * worker's next tick. Returns 0, -ENOENT if @id is not a live operation,
 * GIONG_ENOTWORKER. Owner worker only.
 */
GIONG_API int giong_op_cancel(uint64_t id);

/*
 * giong_close_nowait() - close descriptor @fd through the ring without
 * waiting for it: the caller is done with @fd the moment this returns (the
 * number may be reused once the close has run). For close paths that must
 * not suspend (a stream closed from a callback, an error path). If the
 * worker cancels the close before the kernel ran it (while draining), the
 * completion closes @fd with close(2), so it is never left open; with no SQE
 * to be had, or off a worker, @fd is closed with close(2) at once. The
 * close's own error, if any, is not reported: use a close that waits
 * (giong_io() with io_uring_prep_close()) where it matters.
 * Returns 0, or -EBADF for a negative @fd. Does not suspend.
 */
GIONG_API int giong_close_nowait(int fd);

/*
 * giong_io() - submit the prepared @sqe and park the calling task until its
 * completion arrives; returns the CQE's result (for a multishot operation,
 * use giong_op_start()).
 * If the task is cancelled or its deadline passes while parked, the
 * operation is cancelled in the kernel and its completion awaited before this
 * returns: if it completed anyway its result is returned, otherwise
 * -ECANCELED or -ETIMEDOUT (also when a kernel worker that the cancel
 * interrupted in a blocking call ends it with -EINTR, as Linux 6.1 does, or
 * with the kernel's internal restart codes, as later kernels do, or when the
 * epoll tier's helper thread is so interrupted; but a close
 * so interrupted returns -EINTR: its descriptor is released, as close(2)
 * says). If the task was already cancelled or past its
 * deadline, the SQE is discarded and that code returned at once.
 * The memory @sqe points to is lent to the kernel until this returns.
 * Returns -EINVAL for a NULL @sqe, GIONG_ENOTWORKER outside a task (the SQE
 * is discarded), GIONG_ESHUTDOWN while the worker drains (discarded too).
 * May suspend. Owner worker only.
 */
GIONG_API int giong_io(struct io_uring_sqe *sqe);

/*
 * giong_io_cqe_flags() - the CQE flags of the last giong_io() of the calling
 * task (for IORING_CQE_F_BUFFER and the buffer id in the upper 16 bits).
 */
GIONG_API unsigned giong_io_cqe_flags(void);

/*
 * giong_poll() - park until @fd is ready for @events (POLLIN, POLLOUT, ...)
 * or @timeout_ms passes (-1: no timeout besides the task's deadline).
 * Works on any descriptor: a pipe, an eventfd, a socket made elsewhere; this
 * is the adapter for fd-based libraries (c-ares, libpq, hiredis).
 * Returns the ready events (> 0), 0 when @timeout_ms passed, -EINVAL for a
 * negative @fd, -ECANCELED, -ETIMEDOUT (deadline), or -errno.
 * May suspend. Owner worker only.
 */
GIONG_API int giong_poll(int fd, short events, int timeout_ms);

GIONG_END_DECLS

#endif /* GIONG_CORE_OP_H */
