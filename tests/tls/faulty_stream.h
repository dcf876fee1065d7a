/* SPDX-License-Identifier: MIT */
/*
 * faulty_stream.h - a stream beneath a TLS stream that fails when a test
 * says so, over a real stream (base.lower, a Unix stream). Until the test
 * sets a fault it passes everything through; the fields of struct faulty
 * pick the faults, each while it is set: recv_err (what recv returns),
 * write_err (what writev returns), send_err (what send_start returns) and
 * corrupt (the next receive has its last byte, in the record's tag,
 * flipped; then it clears itself).
 *
 * Two tables: faulty_ops has send_start and set_on_readable, passed to the
 * stream beneath; faulty_writev_ops has neither (a plain stream of some
 * other kind), so all writes go through writev.
 *
 *	struct faulty *f;
 *	faulty_pair(srv, cli, &faulty_ops, &s, &f, &k);  // in a task: server s over f
 *	f->write_err = -ECONNRESET;                      // s's writes fail beneath
 */
#ifndef GIONG_TLS_FAULTY_STREAM_H
#define GIONG_TLS_FAULTY_STREAM_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tls_test.h"

struct faulty {
	struct giong_stream base; /* base.lower: the real stream */
	int recv_err;             /* recv returns it (while set) */
	int write_err;            /* writev returns it (while set) */
	int send_err;             /* send_start returns it (while set) */
	bool corrupt;             /* flip the last byte of the next receive */
};

static inline ssize_t faulty_recv(struct giong_stream *st, struct giong_recvbuf **ret)
{
	struct faulty *f = (struct faulty *)st;
	struct giong_recvbuf *b, *c;
	unsigned char *t;
	size_t room;
	ssize_t n;

	*ret = NULL;
	if (f->recv_err)
		return f->recv_err;
	n = giong_stream_recv(st->lower, &b);
	if (n <= 0 || !f->corrupt)
		return *ret = b, n;
	f->corrupt = false;
	if (giong_recvbuf_alloc((size_t)n, &c)) {
		giong_recvbuf_release(b);
		return -ENOMEM;
	}
	t = giong_recvbuf_tail(c, &room);
	memcpy(t, giong_recvbuf_data(b), (size_t)n);
	t[n - 1] ^= 0x40; /* in the record's tag */
	giong_recvbuf_commit(c, (size_t)n);
	giong_recvbuf_release(b);
	*ret = c;
	return n;
}

static inline ssize_t faulty_read(struct giong_stream *st, void *buf, size_t len)
{
	return giong_stream_read(st->lower, buf, len);
}

static inline ssize_t faulty_writev(struct giong_stream *st, const struct iovec *iov, int n,
				    unsigned flags)
{
	struct faulty *f = (struct faulty *)st;

	if (f->write_err)
		return f->write_err;
	return st->lower->ops->writev(st->lower, iov, n, flags);
}

static inline int faulty_shutdown(struct giong_stream *st, int how)
{
	return giong_stream_shutdown(st->lower, how);
}

static inline int faulty_close(struct giong_stream *st)
{
	free(st);
	return 0;
}

static inline int faulty_on_readable(struct giong_stream *st, giong_stream_readable_fn fn,
				     void *ctx)
{
	return giong_stream_on_readable(st->lower, fn ? fn : NULL, fn ? ctx : NULL);
}

static inline int faulty_send_start(struct giong_stream *st, struct giong_stream_send *req,
				    const struct iovec *iov, int n)
{
	struct faulty *f = (struct faulty *)st;

	if (f->send_err)
		return f->send_err;
	return giong_stream_send_start(st->lower, req, iov, n);
}

static const struct giong_stream_ops faulty_ops = {
	.name = "faulty",
	.recv = faulty_recv,
	.read = faulty_read,
	.writev = faulty_writev,
	.shutdown = faulty_shutdown,
	.close = faulty_close,
	.set_on_readable = faulty_on_readable,
	.send_start = faulty_send_start,
};

/* The same without send_start or set_on_readable: every write is a writev. */
static const struct giong_stream_ops faulty_writev_ops = {
	.name = "plain",
	.recv = faulty_recv,
	.read = faulty_read,
	.writev = faulty_writev,
	.shutdown = faulty_shutdown,
	.close = faulty_close,
};

/* A faulty stream over @lower, with table @ops; giong_stream_close() on it
 * closes @lower too. */
static inline struct faulty *faulty_over(struct giong_stream *lower,
					 const struct giong_stream_ops *ops)
{
	struct faulty *f = calloc(1, sizeof(*f));

	f->base.ops = ops;
	f->base.lower = lower;
	return f;
}

/* A server TLS stream over a faulty stream, and its client over the plain
 * other end. */
static inline int faulty_pair(struct giong_tls_config *srv, struct giong_tls_config *cli,
			      const struct giong_stream_ops *ops, struct giong_stream **s,
			      struct faulty **f, struct giong_stream **k)
{
	struct giong_stream *a, *b;
	int r;

	*s = *k = NULL;
	*f = NULL;
	if ((r = giong_unix_pair(&a, &b)))
		return r;
	*f = faulty_over(a, ops);
	return tt_pair_over(&(*f)->base, b, srv, cli, "localhost", s, k, NULL);
}

#endif /* GIONG_TLS_FAULTY_STREAM_H */
