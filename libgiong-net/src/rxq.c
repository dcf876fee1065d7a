/* SPDX-License-Identifier: MIT */
/*
 * rxq.c - one multishot receive per socket and the queue behind it.
 * See rxq.h for the states. Everything here runs on the socket's worker.
 */
#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>

#include "giong_faults.h"
#include "giong_private.h"
#include "rxq.h"

/* The place of the @i-th queued buffer of @q (i < count). */
static struct giong_recvbuf **slot(struct giong__rxq *q, unsigned i)
{
	return q->cap == 1 ? &q->items.one : &q->items.ring[(q->head + i) % q->cap];
}

/* Back to the buffer in place, once nothing is queued. */
static void drop_ring(struct giong__rxq *q)
{
	if (q->cap > 1)
		free(q->items.ring);
	q->items.one = NULL;
	q->head = 0;
	q->cap = 1;
}

/* Move every queued pool buffer of @q into heap memory, so the pool can
 * serve connections whose owners do read. */
static void copy_off_pool(struct giong__rxq *q)
{
	for (unsigned i = 0; i < q->count; i++) {
		struct giong_recvbuf **b = slot(q, i);

		if (giong_bufpool_is_pooled(*b) && giong_recvbuf_copy(b))
			return; /* out of memory: keep the pool buffer */
	}
}

/* The worker's pool ran dry: core calls every listed queue. */
static void on_pool_dry(struct giong_bufpool_dry *d)
{
	copy_off_pool(giong__container_of(d, struct giong__rxq, dry));
}

/* A datagram socket's queue (recvmsg, each buffer one datagram). */
static bool is_dgram(const struct giong__rxq *q)
{
	return q->ops->msghdr != NULL;
}

void giong__net_rxq_init(struct giong__rxq *q, int fd, const struct giong__rxq_ops *ops)
{
	memset(q, 0, sizeof(*q));
	q->fd = fd;
	q->ops = ops;
	q->cap = 1;
	giong_waitq_init(&q->waiters);
	/* On the worker's list of holders a dry pool asks for buffers back. */
	q->dry.fn = on_pool_dry;
	giong_bufpool_dry_add(&q->dry);
}

static int push(struct giong__rxq *q, struct giong_recvbuf *b)
{
	if (q->count == q->cap) {
		unsigned cap = q->cap == 1 ? 8 : q->cap * 2;
		struct giong_recvbuf **n = malloc(cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		for (unsigned i = 0; i < q->count; i++)
			n[i] = *slot(q, i);
		if (q->cap > 1)
			free(q->items.ring);
		q->items.ring = n;
		q->head = 0;
		q->cap = cap;
	}
	q->count++;
	*slot(q, q->count - 1) = b;
	q->bytes += giong_recvbuf_len(b);
	return 0;
}

static bool over_bounds(const struct giong__rxq *q)
{
	const struct giong__rxq_ops *o = q->ops;

	return q->count > o->max_items || (o->max_bytes && q->bytes > o->max_bytes);
}

static void notify(struct giong__rxq *q)
{
	if (!giong_waitq_wake_one(&q->waiters, 0) && q->ops->on_ready && !q->closing)
		q->ops->on_ready(q);
}

static void maybe_free(struct giong__rxq *q)
{
	if (q->closing && !q->armed && !q->held) {
		giong_bufpool_dry_remove(&q->dry);
		drop_ring(q); /* empty: rxq_close gave every buffer back */
		q->ops->on_free(q);
	}
}

/*
 * Arm again from the worker's loop (a completion callback). There giong_sqe()
 * gives NULL when the SQ is full and the kernel will not take more until the
 * loop reaps: the receive is then left unarmed, and a task parked in
 * giong__net_rxq_wait() would wait for ever. Tell the owner instead, as an
 * arrival would: the waiting task (or the one the readable callback starts)
 * arms it from its own context, where a full SQ is made room in. q may be
 * gone after this (the callback may close it).
 */
static void rearm(struct giong__rxq *q)
{
	if (giong__net_rxq_arm(q) < 0)
		notify(q);
}

static void pool_refilled(struct giong_bufpool_waiter *w)
{
	struct giong__rxq *q = giong__container_of(w, struct giong__rxq, pool_wait);

	q->wait_pool = false;
	rearm(q);
}

static void pause_receive(struct giong__rxq *q)
{
	q->paused = true;
	copy_off_pool(q);
	if (q->armed && !q->cancel_sent) {
		q->cancel_sent = giong_op_cancel(q->op_id) == 0;
	}
}

/* A buffer could not be queued (no memory for the queue): what follows
 * it must not be delivered either, or the reader would see a stream with a
 * hole. End the stream with -ENOMEM after what is queued. A datagram socket
 * loses one datagram, reports -ENOMEM once, and receives on. */
static void queue_failed(struct giong__rxq *q)
{
	q->err = -ENOMEM;
	if (!is_dgram(q) && q->armed && !q->cancel_sent) {
		q->cancel_sent = giong_op_cancel(q->op_id) == 0;
	}
	notify(q);
}

/* Every CQE of the multishot receive. */
static void rx_cqe(void *ctx, int res, unsigned flags)
{
	struct giong__rxq *q = ctx;
	bool more = flags & IORING_CQE_F_MORE;

	if (!more) {
		q->armed = false;
		q->cancel_sent = false;
		/* GIONG_FAULTS: the plan cancelled it (below); its end is taken
		 * for the pool running dry. An end with data or the stream's end
		 * is what it is. */
		if (q->fault_nobufs && res == -ECANCELED)
			res = -ENOBUFS;
		q->fault_nobufs = 0;
	}
	/* notify() may call on_ready, which may close the socket; hold q so
	 * that giong__net_rxq_close() does not free it under us: freed below. */
	q->held = 1;
	if (flags & IORING_CQE_F_BUFFER) {
		struct giong_recvbuf *b;
		unsigned bid = flags >> IORING_CQE_BUFFER_SHIFT;

		if (giong_bufpool_take(bid, res > 0 ? (size_t)res : 0, &b) == 0) {
			/* The kernel is done with this buffer: it is ours. A
			 * stream that ended with an error takes no more bytes. */
			if (q->closing || res <= 0 || (q->err && !is_dgram(q))) {
				giong_recvbuf_release(b);
			} else if (push(q, b)) {
				giong_recvbuf_release(b);
				queue_failed(q);
			} else {
				notify(q);
			}
		}
		if (over_bounds(q) && !q->closing)
			pause_receive(q);
	} else if (res == 0 && !is_dgram(q)) {
		/* After an error the end is not clean: the error stays. */
		if (!q->err) {
			q->eof = true;
			notify(q);
		}
	} else if (res == -ENOBUFS) {
		/* The pool is dry. Re-arming now would only spin: wait until
		 * half of it is back. It may be back already (the dry hook
		 * copied queued buffers off the pool, or tasks released theirs
		 * before this CQE was reaped): then notify says 1 and we re-arm
		 * at once (below). */
		if (!q->closing && !q->wait_pool && giong_bufpool_notify(&q->pool_wait) == 0)
			q->wait_pool = true;
	} else if (res == -EIO && q->ktls && !is_dgram(q)) {
		/* Kernel TLS: a record of another type (an alert, a ticket, a key
		 * update) is next, kept by the kernel for a recvmsg that can take
		 * its type. Not an error: the owner reads it, then we re-arm. */
		q->ctrl = 1;
		notify(q);
	} else if (res < 0 && res != -ECANCELED && res != -EINTR) {
		if (!q->err) /* the first error stays until it is reported */
			q->err = res;
		notify(q);
	}
	q->held = 0;
	/* GIONG_FAULTS: end the multishot as a dry pool would, after this
	 * completion: cancelled now, its final CQE becomes -ENOBUFS (above),
	 * and the stream waits for the pool and re-arms. */
	if (GIONG__UNLIKELY(more && q->armed && !q->cancel_sent && !q->closing) &&
	    giong__fault(GIONG__FAULT_NOBUFS)) {
		q->cancel_sent = giong_op_cancel(q->op_id) == 0;
		q->fault_nobufs = q->cancel_sent;
	}
	if (!q->armed) {
		if (q->hold && !q->closing) /* giong__net_rxq_quiesce() waits for this */
			giong_waitq_wake_one(&q->waiters, 0);
		if (q->closing)
			maybe_free(q); /* q (and its owner) may be gone after this */
		else if (!q->paused && !q->wait_pool)
			rearm(q); /* ended on its own: keep receiving */
	}
}

int giong__net_rxq_arm(struct giong__rxq *q)
{
	struct io_uring_sqe *sqe;
	int ret;

	if (q->armed || q->paused || q->wait_pool || q->closing || q->eof || q->err || q->hold ||
	    q->ctrl)
		return 0;
	sqe = giong_sqe();
	if (!sqe)
		return -EBUSY;
	/* q lives until on_free, which runs only after this operation's final
	 * CQE; the owner's msghdr (recvmsg), freed with it, is read by the
	 * kernel for as long. A fixed slot stays the owner's until its
	 * close_direct completes, which the owner submits after this. */
	if (is_dgram(q))
		io_uring_prep_recvmsg_multishot(sqe, q->fd, q->ops->msghdr(q), 0);
	else
		io_uring_prep_recv_multishot(sqe, q->fd, NULL, 0, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT | (q->fixed ? IOSQE_FIXED_FILE : 0);
	sqe->buf_group = (uint16_t)giong_bufpool_group();
	q->pool_wait.fn = pool_refilled;
	ret = giong_op_start(sqe, rx_cqe, q, &q->op_id);
	if (ret == 0)
		q->armed = true;
	return ret;
}

struct giong_recvbuf *giong__net_rxq_front(struct giong__rxq *q)
{
	return q->count ? *slot(q, 0) : NULL;
}

static void maybe_resume(struct giong__rxq *q)
{
	const struct giong__rxq_ops *o = q->ops;

	if (q->paused && q->count <= o->max_items / 2 &&
	    (!o->max_bytes || q->bytes <= o->max_bytes / 2)) {
		q->paused = false;
		giong__net_rxq_arm(q);
	}
}

struct giong_recvbuf *giong__net_rxq_pop(struct giong__rxq *q)
{
	struct giong_recvbuf *b;

	if (!q->count)
		return NULL;
	b = *slot(q, 0);
	q->head = (q->head + 1) % q->cap;
	if (!--q->count)
		drop_ring(q); /* an idle queue holds nothing on the heap */
	q->bytes -= giong_recvbuf_len(b);
	maybe_resume(q);
	return b;
}

void giong__net_rxq_consumed(struct giong__rxq *q, size_t n)
{
	q->bytes -= n;
	maybe_resume(q);
}

int giong__net_rxq_wait(struct giong__rxq *q, unsigned wait_flags)
{
	for (;;) {
		int ret;

		if (q->count)
			return 1;
		if (q->ctrl)
			return -EIO; /* kernel TLS: a record of another type is next */
		if (q->eof)
			return 0;
		if (q->closing)
			return -EBADF;
		if (q->err) {
			ret = q->err;
			/* A datagram socket's error (ECONNREFUSED from an ICMP
			 * message) ends nothing: report it once, then receive on. */
			if (is_dgram(q))
				q->err = 0;
			return ret;
		}
		ret = giong__net_rxq_arm(q);
		if (ret)
			return ret;
		/* On failure q may be gone (closed and freed meanwhile): leave. */
		ret = giong_waitq_wait(&q->waiters, wait_flags);
		if (ret < 0)
			return ret;
	}
}

int giong__net_rxq_quiesce(struct giong__rxq *q)
{
	q->hold = 1;
	if (q->armed && !q->cancel_sent && giong_op_cancel(q->op_id) != 0) {
		q->hold = 0;
		return -EBUSY;
	}
	q->cancel_sent = q->armed;
	while (q->armed) {
		/* Woken by the arrivals before the end too: look again. */
		int r = giong_waitq_wait(&q->waiters, 0);

		if (q->closing)
			return -EBADF;
		if (r < 0) {
			/* Its end (cancelled) may have been reaped in this turn, with
			 * hold set: arm again here if it is over. */
			giong__net_rxq_unhold(q);
			return r;
		}
	}
	return 0;
}

void giong__net_rxq_unhold(struct giong__rxq *q)
{
	q->hold = 0;
	if (!q->closing)
		(void)giong__net_rxq_arm(q); /* -EBUSY: the next wait arms it */
}

void giong__net_rxq_close(struct giong__rxq *q)
{
	struct giong_recvbuf *b;

	q->closing = true;
	while ((b = giong__net_rxq_pop(q)))
		giong_recvbuf_release(b);
	giong_bufpool_notify_cancel(&q->pool_wait);
	q->wait_pool = false;
	giong_waitq_wake_all(&q->waiters, -EBADF);
	if (q->armed && !q->cancel_sent) {
		q->cancel_sent = giong_op_cancel(q->op_id) == 0;
	}
	maybe_free(q);
}
