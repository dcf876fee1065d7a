/* SPDX-License-Identifier: MIT */
/* sock.h - the socket stream behind TCP and Unix streams (net internal). */
#ifndef GIONG_NET_SOCK_H
#define GIONG_NET_SOCK_H

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
/* Connect a new socket of @family to @sa through the ring. */
int giong__net_sock_connect(int family, const struct sockaddr *sa, socklen_t len,
			    const struct giong_stream_ops *ops, struct giong_stream **ret);

#endif /* GIONG_NET_SOCK_H */
