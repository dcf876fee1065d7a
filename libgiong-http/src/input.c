/* SPDX-License-Identifier: MIT */
/*
 * input.c - a connection's input (see conn.h, struct giong__http_frame): the
 * pool buffer a head is parsed in, the heap copy for a head that spans
 * receives, the body's own buffer while the head's is still pointed to, and
 * the PROXY protocol header read exactly from the socket before the rest.
 */
#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "conn.h"
#include "proxy.h"

void giong__http_frame_release_input(struct giong__http_frame *f)
{
	giong_recvbuf_release(f->rb);
	f->rb = NULL;
	giong_recvbuf_release(f->body_rb);
	f->body_rb = NULL;
	free(f->in);
	f->in = NULL;
	f->in_cap = 0;
	f->in_use = false;
	f->data = NULL;
	f->len = f->blen = 0;
}

/* Append @n bytes to the heap copy, keeping f->data[0..len) at its start
 * (moved there from the pool buffer or from further into the copy). */
static int in_append(struct giong__http_frame *f, const char *p, size_t n)
{
	size_t keep = f->len, want = keep + n;

	if (f->in_use && want <= f->in_cap) {
		memmove(f->in, f->data, keep);
	} else {
		size_t cap = want < 8192 ? 8192 : want + want / 2;
		char *in = malloc(cap);

		if (!in)
			return -ENOMEM;
		if (keep)
			memcpy(in, f->data, keep);
		free(f->in);
		f->in = in;
		f->in_cap = cap;
	}
	memcpy(f->in + keep, p, n);
	f->data = f->in;
	f->len = want;
	f->in_use = true;
	return 0;
}

/*
 * Receive more bytes of a head: afterwards f->data[0..len) holds the old
 * unconsumed bytes followed by the new ones, in one piece (copied to the
 * heap only when there were old ones). 1, 0 at end of stream, or -errno.
 * Between requests only: nothing points into the input then.
 */
int giong__http_frame_more(struct giong__http_frame *f)
{
	struct giong_recvbuf *b;
	ssize_t n = giong_stream_recv(f->c->s, &b);
	bool from_rb = !f->in_use;
	int r;

	if (n <= 0) {
		if (n == 0)
			f->eof = true;
		return (int)n;
	}
	if (!f->len) {
		giong_recvbuf_release(f->rb);
		f->rb = b;
		f->data = giong_recvbuf_data(b);
		f->len = (size_t)n;
		f->in_use = false;
		return 1;
	}
	r = in_append(f, giong_recvbuf_data(b), (size_t)n);
	giong_recvbuf_release(b);
	if (r)
		return r;
	if (from_rb) {
		giong_recvbuf_release(f->rb); /* its bytes were copied */
		f->rb = NULL;
	}
	return 1;
}

ssize_t giong__http_frame_peek(struct giong__http_frame *f, const char **p)
{
	ssize_t n;

	if (f->len) {
		*p = f->data;
		return (ssize_t)f->len;
	}
	if (!f->blen) {
		giong_recvbuf_release(f->body_rb);
		f->body_rb = NULL;
		if (f->eof)
			return 0;
		n = giong_stream_recv(f->c->s, &f->body_rb);
		if (n <= 0) {
			if (n == 0)
				f->eof = true;
			return n;
		}
		f->bdata = giong_recvbuf_data(f->body_rb);
		f->blen = (size_t)n;
	}
	*p = f->bdata;
	return (ssize_t)f->blen;
}

void giong__http_frame_consume(struct giong__http_frame *f, size_t n)
{
	if (f->len) {
		f->data += n;
		f->len -= n;
	} else {
		f->bdata += n;
		f->blen -= n;
	}
}

/* After a request: bytes the body reads brought past the body become the
 * input (the head's buffer is no longer pointed to). */
void giong__http_frame_request_done(struct giong__http_frame *f)
{
	if (f->len || !f->body_rb)
		return;
	giong_recvbuf_release(f->rb);
	f->rb = f->body_rb;
	f->in_use = false;
	f->data = f->bdata;
	f->len = f->blen;
	f->body_rb = NULL;
	f->blen = 0;
}

/*
 * The PROXY header a load balancer sends first (proxy.h), read from the
 * socket before anything else, and exactly: the bytes after it are the
 * client's (a TLS handshake, for a wrap), so it is first peeked at and then
 * only its own length is taken. A balancer writes it in one piece; should it
 * come in several, the peek is tried again every millisecond until the head
 * deadline. Returns 0 (c->client set when it named one), -400 for a missing
 * or malformed header, or -errno.
 */
int giong__http_read_proxy_header(struct giong__http_frame *f)
{
	struct giong__http_conn *c = f->c;
	char buf[GIONG__HTTP_PROXY_V2_MAX];
	struct giong_addr addr;
	bool has = false;
	int fd = giong_stream_fd(c->s), r;

	if (fd < 0)
		return fd;
	for (;;) {
		struct io_uring_sqe *sqe = giong_sqe();

		if (!sqe)
			return -EBUSY;
		/* buf is lent to the kernel until giong_io returns. */
		io_uring_prep_recv(sqe, fd, buf, sizeof(buf), MSG_PEEK);
		r = giong_io(sqe);
		if (r <= 0)
			return r ? r : -ECONNRESET;
		r = giong__http_proxy_parse(buf, (size_t)r, &addr, &has);
		if (r < 0)
			return r;
		if (r > 0)
			break;
		if ((r = giong_sleep_ms(1)) < 0)
			return r;
	}
	for (int got = 0; got < r;) {
		ssize_t n = giong_stream_read(c->s, buf + got, (size_t)(r - got));

		if (n <= 0)
			return n ? (int)n : -ECONNRESET;
		got += (int)n;
	}
	if (has) {
		if (!(c->client = malloc(sizeof(*c->client))))
			return -ENOMEM;
		*c->client = addr;
	}
	return 0;
}
