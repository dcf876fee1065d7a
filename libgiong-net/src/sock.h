/* SPDX-License-Identifier: MIT */
/* sock.h - the socket stream behind TCP and Unix streams (net internal). */
#ifndef GIONG_NET_SOCK_H
#define GIONG_NET_SOCK_H

#include <giong/net.h>

#include "owner.h"
#include "rxq.h"

struct giong__sock {
	struct giong_stream base; /* first: a giong__sock is a giong_stream */
	int fd;
	pthread_t owner; /* the worker's thread (owner.h) */
	int busy;        /* operations of tasks in flight on the stream */
	bool closing;    /* closed by its owner; freed when busy == 0 and rx is done */
	bool rx_done;    /* the receive queue has been freed by the kernel's word */
	bool writing;    /* a task is in a write: others queue on write_wait */
	struct giong_waitq write_wait;
	giong_stream_readable_fn readable_fn;
	void *readable_ctx;
	struct giong__rxq rxq;
};

extern const struct giong_stream_ops giong__net_tcp_ops;
extern const struct giong_stream_ops giong__net_unix_ops;

/* Wrap connected socket @fd (owned from now on) as a stream. */
int giong__net_sock_new(int fd, const struct giong_stream_ops *ops, struct giong_stream **ret);
/* A giong__sock, or NULL if @s is not a socket stream. */
struct giong__sock *giong__net_sock_of(const struct giong_stream *s);
/* Connect a new socket of @family to @sa through the ring. */
int giong__net_sock_connect(int family, const struct sockaddr *sa, socklen_t len,
			    const struct giong_stream_ops *ops, struct giong_stream **ret);

#endif /* GIONG_NET_SOCK_H */
