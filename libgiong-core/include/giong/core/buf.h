/* SPDX-License-Identifier: MIT */
/*
 * giong/core/buf.h - the receive buffer pool.
 *
 * Each worker registers a ring of provided buffers with the kernel
 * (IORING_REGISTER_PBUF_RING). Multishot receives pick a buffer only when
 * data arrives, so an idle connection holds none. A received buffer is lent
 * to the application as a struct giong_recvbuf and must be released promptly
 * with giong_recvbuf_release(): until then the kernel cannot reuse it, and a
 * pool that runs dry pauses every multishot receive of the worker.
 *
 * Ownership: a giong_recvbuf is owned by whoever received it until released;
 * it belongs to the worker that received it and must be released there.
 */
#ifndef GIONG_CORE_BUF_H
#define GIONG_CORE_BUF_H

#include <stddef.h>
#include <stdint.h>

#include <giong/core/api.h>

GIONG_BEGIN_DECLS

struct giong_recvbuf;

/* giong_recvbuf_data() - the received bytes (not yet consumed). NULL for a
 * NULL @b. Valid until the buffer is released. */
GIONG_API const void *giong_recvbuf_data(const struct giong_recvbuf *b);

/* giong_recvbuf_len() - number of bytes at giong_recvbuf_data(); 0 means the
 * peer closed (end of stream) or @b is NULL. */
GIONG_API size_t giong_recvbuf_len(const struct giong_recvbuf *b);

/* giong_recvbuf_consume() - drop the first @n bytes (n <= len).
 * Returns the bytes left, or -EINVAL. */
GIONG_API long giong_recvbuf_consume(struct giong_recvbuf *b, size_t n);

/* giong_recvbuf_release() - give @b back (takes ownership): a pool buffer
 * returns to the kernel, a copied one is freed. NULL is a no-op.
 * Owner worker only. */
GIONG_API void giong_recvbuf_release(struct giong_recvbuf *b);

/* --- For streams that are not sockets (TLS): buffers filled by the caller. --- */

/*
 * giong_recvbuf_alloc() - a heap buffer with room for @cap bytes and none
 * in it yet (len 0), for a stream that hands out bytes it produced itself
 * (decrypted ones, say). Fill it with giong_recvbuf_tail() and
 * giong_recvbuf_commit(), hand it out like a received buffer; the receiver
 * releases it with giong_recvbuf_release() (it is freed). It holds no pool
 * buffer, so it does not count against the pool. Works on any thread.
 * Returns 0 and an owned buffer in *@ret; -EINVAL (NULL @ret, @cap 0 or over
 * UINT32_MAX); -ENOMEM.
 */
GIONG_API int giong_recvbuf_alloc(size_t cap, struct giong_recvbuf **ret);

/*
 * giong_recvbuf_tail() - where to write more bytes into heap buffer @b (from
 * giong_recvbuf_alloc(), or a copy, which is made full: room 0), and in
 * *@room how many fit. NULL (and *@room 0) for a pool buffer, which is the
 * kernel's to fill, or a NULL @b.
 */
GIONG_API void *giong_recvbuf_tail(struct giong_recvbuf *b, size_t *room);

/*
 * giong_recvbuf_commit() - @n bytes written at giong_recvbuf_tail() become
 * part of @b's data. Returns the new length, or -EINVAL (a pool buffer, a
 * NULL @b, or @n over the room left).
 */
GIONG_API long giong_recvbuf_commit(struct giong_recvbuf *b, size_t n);

/* --- For libraries built on core (net): the pool behind the buffers. --- */

/*
 * giong_bufpool_group() - the buffer group id (for IOSQE_BUFFER_SELECT and
 * sqe->buf_group) of the calling worker's pool, or GIONG_ENOTWORKER.
 */
GIONG_API int giong_bufpool_group(void);

/*
 * giong_bufpool_take() - wrap buffer @bid, which the kernel just filled with
 * @len bytes (from a CQE with IORING_CQE_F_BUFFER), as a recvbuf.
 * Returns 0 and an owned buffer in *@ret, or -EINVAL for a bad id or
 * length, GIONG_ENOTWORKER. Owner worker only.
 */
GIONG_API int giong_bufpool_take(unsigned bid, size_t len, struct giong_recvbuf **ret);

/*
 * giong_recvbuf_copy() - move the unconsumed bytes of pool buffer *@b into
 * heap memory and give the pool buffer back; *@b is replaced by the copy.
 * Used to take a slow reader's backlog off the pool. A buffer that is
 * already a copy is left as it is. Returns 0, -EINVAL, -ENOMEM.
 */
GIONG_API int giong_recvbuf_copy(struct giong_recvbuf **b);

/* giong_bufpool_is_pooled() - 1 if @b holds a pool buffer, 0 if a copy. */
GIONG_API int giong_bufpool_is_pooled(const struct giong_recvbuf *b);

/* giong_bufpool_size() - bytes per pool buffer of the calling worker, or
 * GIONG_ENOTWORKER. */
GIONG_API long giong_bufpool_size(void);

/* A request to be told when the pool has buffers again. Caller storage. */
struct giong_bufpool_waiter {
	/* Called on the worker by whatever freed the buffers - a completion, or
	 * a task's giong_recvbuf_release(), inside that task: it must not
	 * suspend (queue work or an SQE; wake a task). */
	void (*fn)(struct giong_bufpool_waiter *w);
	struct giong__list_node _link; /* private */
	int _queued;
};

/*
 * giong_bufpool_notify() - call @w->fn once, when at least half of the pool is
 * free again (after a multishot receive ended with -ENOBUFS, re-arming before
 * that would only spin). Returns 0 when queued; 1 when half of the pool is
 * free already (nothing is queued: go ahead now); -EALREADY if @w is queued
 * already; -EINVAL; GIONG_ENOTWORKER.
 */
GIONG_API int giong_bufpool_notify(struct giong_bufpool_waiter *w);

/*
 * A holder of pool buffers that can give some back when the pool runs dry
 * (net's receive queues, a TLS stream's ciphertext): caller storage, linked
 * on the worker's list by giong_bufpool_dry_add().
 */
struct giong_bufpool_dry {
	/* Called on the worker, from the completion that took the last free
	 * buffer, outside any task: copy unread buffers off the pool
	 * (giong_recvbuf_copy()) and release them. Must not suspend. May
	 * remove itself or any other holder from the list. */
	void (*fn)(struct giong_bufpool_dry *d);
	struct giong__list_node _link; /* private */
	int _added;
};

/*
 * giong_bufpool_dry_add() - call @d->fn each time the calling worker's pool
 * runs dry, until removed. Holders are called in the order they were added.
 * Returns 0, -EINVAL (NULL @d or @d->fn), -EALREADY (added already),
 * GIONG_ENOTWORKER. Owner worker only.
 */
GIONG_API int giong_bufpool_dry_add(struct giong_bufpool_dry *d);

/* giong_bufpool_dry_remove() - take @d off the worker's list. A @d that is
 * NULL or not added is a no-op. Owner worker only. */
GIONG_API void giong_bufpool_dry_remove(struct giong_bufpool_dry *d);

/* giong_bufpool_notify_cancel() - remove @w if queued. */
GIONG_API void giong_bufpool_notify_cancel(struct giong_bufpool_waiter *w);

GIONG_END_DECLS

#endif /* GIONG_CORE_BUF_H */
