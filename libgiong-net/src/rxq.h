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

struct giong__rxq {
	int fd;
	bool msg; /* recvmsg (datagrams, with the source address) */
	/* Lent to the kernel while a recvmsg multishot is armed: only its
	 * name and control lengths are read, for the buffer layout. */
	struct msghdr mh;

	struct giong_recvbuf **items; /* ring of queued buffers */
	unsigned head, count, cap;
	size_t bytes;       /* unconsumed bytes queued */
	unsigned max_items; /* pause above this many queued... */
	size_t max_bytes;   /* ...or this many bytes (0: no byte bound) */

	bool armed, cancel_sent, paused, wait_pool, closing;
	bool eof;      /* stream: the peer closed */
	int err;       /* a terminal error, delivered after what is queued
		    * (-ENOMEM: a buffer could not be queued, the rest of a
		    * stream is refused rather than delivered with a hole) */
	unsigned held; /* inside rx_cqe: on_ready may close q, which must
			* then not be freed until rx_cqe is done with it */
	uint64_t op_id;
	struct giong_bufpool_waiter pool_wait;
	struct giong_waitq waiters;
	void (*on_ready)(void *ctx); /* data or end arrived and nobody waits */
	void *on_ready_ctx;
	void (*on_free)(struct giong__rxq *q); /* closing and the kernel is done */
	struct giong_bufpool_dry dry;          /* on the worker's list, for a dry pool */
};

/* Set up @q on @fd. max_items/max_bytes: the backpressure bounds. */
void giong__net_rxq_init(struct giong__rxq *q, int fd, bool msg, unsigned max_items,
			 size_t max_bytes, void (*on_free)(struct giong__rxq *q));
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
/* Give back what is queued, cancel the receive, and free through on_free
 * once the kernel confirms (maybe now). */
void giong__net_rxq_close(struct giong__rxq *q);

#endif /* GIONG_NET_RXQ_H */
