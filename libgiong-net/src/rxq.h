/* SPDX-License-Identifier: MIT */
/*
 * rxq.h - the receive queue shared by streams and UDP sockets: one
 * multishot receive kept armed in the kernel, filling the worker's pool
 * buffers, and the queue of what arrived until the owner takes it.
 *
 * States: armed (in the kernel) or not; paused by backpressure (the owner
 * is not reading: the multishot is cancelled so the kernel's socket buffer,
 * and TCP's window, hold the rest, and what is queued is copied off the
 * pool); waiting for the pool (the multishot ended with -ENOBUFS: re-armed
 * once half the pool is free); ended (end of stream or an error); closing
 * (freed once the kernel confirms the multishot is over).
 */
#ifndef GIONG_NET_RXQ_H
#define GIONG_NET_RXQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <giong/core.h>

struct giong__rxq;

/* What differs between the owners of queues (streams, datagram sockets):
 * one const table per kind of owner, shared by all its queues. */
struct giong__rxq_ops {
	/* Data or the end arrived and no task waits; NULL: nobody is told.
	 * Not called once the queue is closing. */
	void (*on_ready)(struct giong__rxq *q);
	/* Closing, and the kernel is done with q: free its owner. */
	void (*on_free)(struct giong__rxq *q);
	/* Datagram sockets: the msghdr the recvmsg multishot is given, in the
	 * owner and lent to the kernel while it is armed (only its name and
	 * control lengths are read, for the buffer layout). NULL: a stream,
	 * received with plain recv. */
	struct msghdr *(*msghdr)(struct giong__rxq *q);
	/* The backpressure bounds: pause above this many buffers queued (at
	 * least 1)... */
	unsigned max_items;
	/* ...or this many bytes (0: no byte bound). */
	size_t max_bytes;
};

/*
 * Kept small: an idle connection is mostly one of these, with nothing queued
 * and nothing on the heap. The queue of buffers holds one in place; a ring
 * is allocated only while more are queued, and freed when it empties.
 */
struct giong__rxq {
	int fd; /* a descriptor, or with fixed a slot of the worker's direct table */
	unsigned armed : 1, cancel_sent : 1, paused : 1, wait_pool : 1, closing : 1;
	/* fd is a slot of the worker's table (giong/core/direct.h): every SQE
	 * naming it sets IOSQE_FIXED_FILE. Set by the owner after init. */
	unsigned fixed : 1;
	unsigned eof : 1;  /* stream: the peer closed */
	unsigned held : 1; /* inside rx_cqe: on_ready may close q, which must
			    * then not be freed until rx_cqe is done with it (a
			    * flag, not a count: completions are never reaped
			    * inside a completion callback, so rx_cqe does not
			    * nest) */
	/* GIONG_FAULTS: the plan cancelled the multishot; its end is taken
	 * for -ENOBUFS (rxq.c). Never set in another build. */
	unsigned fault_nobufs : 1;
	/* Kernel TLS (ktls.c): hold keeps the receive unarmed while the receive
	 * direction is handed to the kernel; ktls says it was (the multishot then
	 * gets plaintext, and ends with -EIO at a record of another type than
	 * data); ctrl says such a record is next: no receive is armed until it
	 * has been read with recvmsg (giong_stream_ktls_recv_record()). */
	unsigned hold : 1, ktls : 1, ctrl : 1;
	const struct giong__rxq_ops *ops;

	union {
		struct giong_recvbuf *one;   /* cap 1: the only queued buffer, in place */
		struct giong_recvbuf **ring; /* cap > 1: a ring on the heap */
	} items;
	unsigned head, count, cap; /* cap 1, or the heap ring's length */
	int err;                   /* a terminal error, delivered after what is queued
				    * (-ENOMEM: a buffer could not be queued, the rest of a
				    * stream is refused rather than delivered with a hole) */
	size_t bytes;              /* unconsumed bytes queued */
	uint64_t op_id;
	struct giong_bufpool_waiter pool_wait;
	struct giong_waitq waiters;
	struct giong_bufpool_dry dry; /* on the worker's list, for a dry pool */
};

/* Set up @q on @fd for an owner of kind @ops, which must outlive q. */
void giong__net_rxq_init(struct giong__rxq *q, int fd, const struct giong__rxq_ops *ops);
/* Arm the multishot receive if it should be and is not. 0 or -errno. */
int giong__net_rxq_arm(struct giong__rxq *q);
/* The oldest queued buffer (still queued), or NULL. */
struct giong_recvbuf *giong__net_rxq_front(struct giong__rxq *q);
/* Remove the front buffer (the caller owns it now). */
struct giong_recvbuf *giong__net_rxq_pop(struct giong__rxq *q);
/* Account for @n bytes consumed from the front buffer in place. */
void giong__net_rxq_consumed(struct giong__rxq *q, size_t n);
/*
 * Park until something is queued, the stream ended, or an error. Arms the
 * receive first. @wait_flags go to giong_waitq_wait() (GIONG_WAIT_SHUTDOWN
 * for calls that wait for new work). Returns 1 when a buffer is queued, 0
 * at end of stream, or -errno: the stream's terminal error (a datagram
 * socket's error is reported once), or the wait's -ECANCELED, -ETIMEDOUT,
 * GIONG_ESHUTDOWN, -EBADF after close.
 */
int giong__net_rxq_wait(struct giong__rxq *q, unsigned wait_flags);
/*
 * Stop receiving ahead (kernel TLS's hand-over): hold the receive unarmed,
 * cancel the armed multishot and park until the kernel confirms it is over.
 * What it received meanwhile is queued (the caller looks). Returns 0 with
 * q->hold set (giong__net_rxq_unhold() clears it), or -errno: the wait's
 * (-ECANCELED, -ETIMEDOUT) and -EBUSY (no SQE for the cancel) with it clear
 * and the receive armed again; -EBADF (closed meanwhile: it stays set).
 */
int giong__net_rxq_quiesce(struct giong__rxq *q);
/* Receive again after giong__net_rxq_quiesce() (arming now if it can). */
void giong__net_rxq_unhold(struct giong__rxq *q);
/* Give back what is queued, cancel the receive, and free through on_free
 * once the kernel confirms (maybe now). */
void giong__net_rxq_close(struct giong__rxq *q);

#endif /* GIONG_NET_RXQ_H */
