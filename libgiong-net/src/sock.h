/* SPDX-License-Identifier: MIT */
/* sock.h - the socket stream behind TCP and Unix streams (net internal). */
#ifndef GIONG_NET_SOCK_H
#define GIONG_NET_SOCK_H

#include <liburing.h>

#include <giong/net.h>

#include "owner.h"
#include "rxq.h"

/* Kept small: an idle keep-alive connection is one of these and nothing
 * else (its receive armed in the kernel, no task, no buffer). */
struct giong__sock {
	struct giong_stream base; /* first: a giong__sock is a giong_stream */
	pthread_t owner;          /* the worker's thread (owner.h) */
	unsigned busy;            /* operations of tasks in flight on the stream */
	unsigned closing : 1;     /* closed by its owner; freed when busy == 0 and rx is done */
	unsigned rx_done : 1;     /* the receive queue has been freed by the kernel's word */
	unsigned writing : 1;     /* a write is in flight: task writes queue on write_wait */
	unsigned deferred : 1;    /* a readable notice is queued for the next turn (sock.c) */
	unsigned ktls_tx : 1;     /* the kernel makes the TLS records of what is sent (ktls.c) */
	unsigned ktls_rx : 1;     /* the kernel reads the peer's TLS records (ktls.c, rxq.ktls) */
	unsigned ktls_ulp : 1;    /* the `tls` ULP is attached (once per socket) */
	struct giong_waitq write_wait;
	giong_stream_readable_fn readable_fn;
	void *readable_ctx;
	struct giong__rxq rxq; /* rxq.fd is the stream's descriptor, or its slot (rxq.fixed) */
};

extern const struct giong_stream_ops giong__net_tcp_ops;
extern const struct giong_stream_ops giong__net_unix_ops;

/* Wrap connected socket @fd (owned from now on: a descriptor, or if @fixed a
 * slot of the worker's direct table) as a stream. */
int giong__net_sock_new(int fd, bool fixed, const struct giong_stream_ops *ops,
			struct giong_stream **ret);
/* Close @fd, a slot of the worker's table if @fixed, without waiting. */
void giong__net_close_nowait(int fd, bool fixed);
/* A giong__sock, or NULL if @s is not a socket stream. */
struct giong__sock *giong__net_sock_of(const struct giong_stream *s);
/* The first socket stream down the stack from @st: 0 and *@ret, or -ENOTSUP
 * (none), -ELOOP, -EINVAL (a stream with no table). */
int giong__net_bottom_sock(struct giong_stream *st, struct giong__sock **ret);
/* Enter and leave a call of the stream's owner that may park (the stream is not
 * freed in between): 0, or GIONG_ENOTWORKER / -EPERM / -EBADF. */
int giong__net_sock_enter(struct giong__sock *s);
void giong__net_sock_leave(struct giong__sock *s);
/* Enter a write, after the stream's write in flight if any (0, or -errno having
 * left the stream); leave it with its result @n, which it returns. */
int giong__net_write_begin(struct giong__sock *s);
ssize_t giong__net_write_end(struct giong__sock *s, ssize_t n);
/* @sqe, prepared with the stream's rxq.fd, names a slot of the worker's
 * table if the stream has one: the slot is the stream's until the
 * close_direct that sock_close() submits last has completed, and the stream
 * submits nothing on it after that close (closing refuses every call). */
static inline struct io_uring_sqe *giong__net_on_sock(const struct giong__sock *s,
						      struct io_uring_sqe *sqe)
{
	if (s->rxq.fixed)
		sqe->flags |= IOSQE_FIXED_FILE;
	return sqe;
}
/* Connect a new socket of @family to @sa through the ring. */
int giong__net_sock_connect(int family, const struct sockaddr *sa, socklen_t len,
			    const struct giong_stream_ops *ops, struct giong_stream **ret);

#endif /* GIONG_NET_SOCK_H */
