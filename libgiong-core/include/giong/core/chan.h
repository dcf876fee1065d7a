/* SPDX-License-Identifier: MIT */
/*
 * giong/core/chan.h - a bounded multi-producer channel between workers.
 *
 * A channel carries pointers. Its receiving end belongs to the worker that
 * created it; any worker may send, and any thread may try_send. A sender
 * that finds it full parks until there is room. Messages from one sender
 * arrive in the order sent.
 *
 * Ownership: the channel passes pointers through; what they point to moves
 * from the sender to the receiver. giong_chan_free() does not free
 * messages still queued: drain first.
 */
#ifndef GIONG_CORE_CHAN_H
#define GIONG_CORE_CHAN_H

#include <giong/core/api.h>

GIONG_BEGIN_DECLS

struct giong_chan;

/*
 * giong_chan_new() - a channel holding at most @capacity messages, received
 * on the calling worker. Returns 0 and an owned channel in *@ret (free with
 * giong_chan_free()), -EINVAL (capacity 0 or NULL @ret), -ENOMEM,
 * GIONG_ENOTWORKER.
 */
GIONG_API int giong_chan_new(unsigned capacity, struct giong_chan **ret);

/*
 * giong_chan_send() - queue @msg, parking while the channel is full.
 * Returns 0, -EPIPE if the channel is closed, -ECANCELED, -ETIMEDOUT,
 * -EINVAL, GIONG_ENOTWORKER. May suspend. Any worker.
 */
GIONG_API int giong_chan_send(struct giong_chan *ch, void *msg);

/* giong_chan_try_send() - queue @msg if there is room. Returns 0, -EAGAIN
 * when full, -EPIPE when closed, -EINVAL. Any thread; never suspends. */
GIONG_API int giong_chan_try_send(struct giong_chan *ch, void *msg);

/*
 * giong_chan_recv() - take the oldest message into *@msg, parking while the
 * channel is empty. Returns 0; -EPIPE when closed and empty; GIONG_ESHUTDOWN
 * when empty once shutdown has begun; -ECANCELED, -ETIMEDOUT; -EINVAL;
 * -EPERM off the receiving worker (another worker, or no worker at all);
 * GIONG_ENOTWORKER on the receiving worker but outside a task. May suspend.
 */
GIONG_API int giong_chan_recv(struct giong_chan *ch, void **msg);

/* giong_chan_try_recv() - take a message if one is queued. Returns 0,
 * -EAGAIN when empty, -EPIPE when closed and empty, -EINVAL, -EPERM. */
GIONG_API int giong_chan_try_recv(struct giong_chan *ch, void **msg);

/* giong_chan_close() - refuse further sends and wake every waiter; queued
 * messages can still be received. Idempotent. Returns 0 or -EINVAL. Any thread. */
GIONG_API int giong_chan_close(struct giong_chan *ch);

/* giong_chan_free() - free a channel no task uses any longer. NULL is a no-op. */
GIONG_API void giong_chan_free(struct giong_chan *ch);

GIONG_END_DECLS

#endif /* GIONG_CORE_CHAN_H */
