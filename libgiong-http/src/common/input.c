/* SPDX-License-Identifier: MIT */
/*
 * input.c - a connection's input (input.h), the server's and the client's:
 * the pool buffer a head is parsed in, the heap copy for a head that spans
 * receives, the body's own buffer while the head's is still pointed to; and
 * the server's PROXY protocol header, read exactly from the socket before
 * the rest.
 */
#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/conn.h"
#include "common/proxy.h"

void giong__http_input_release(struct giong__http_input *in)
{
	giong_recvbuf_release(in->rb);
	in->rb = NULL;
	giong_recvbuf_release(in->body_rb);
	in->body_rb = NULL;
	free(in->heap);
	in->heap = NULL;
	in->heap_cap = 0;
	in->in_heap = false;
	in->data = NULL;
	in->len = in->blen = 0;
}

/* Append @n bytes to the heap copy, keeping in->data[0..len) at its start
 * (moved there from the pool buffer or from further into the copy). */
static int heap_append(struct giong__http_input *in, const char *p, size_t n)
{
	size_t keep = in->len, want = keep + n;

	if (in->in_heap && want <= in->heap_cap) {
		memmove(in->heap, in->data, keep);
	} else {
		size_t cap = want < 8192 ? 8192 : want + want / 2;
		char *heap = malloc(cap);

		if (!heap)
			return -ENOMEM;
		if (keep)
			memcpy(heap, in->data, keep);
		free(in->heap);
		in->heap = heap;
		in->heap_cap = cap;
	}
	memcpy(in->heap + keep, p, n);
	in->data = in->heap;
	in->len = want;
	in->in_heap = true;
	return 0;
}

int giong__http_input_more(struct giong__http_input *in, struct giong_stream *s)
{
	struct giong_recvbuf *b;
	ssize_t n = giong_stream_recv(s, &b);
	bool from_rb = !in->in_heap;
	int r;

	if (n <= 0) {
		if (n == 0)
			in->eof = true;
		return (int)n;
	}
	if (!in->len) {
		giong_recvbuf_release(in->rb);
		in->rb = b;
		in->data = giong_recvbuf_data(b);
		in->len = (size_t)n;
		in->in_heap = false;
		return 1;
	}
	r = heap_append(in, giong_recvbuf_data(b), (size_t)n);
	giong_recvbuf_release(b);
	if (r)
		return r;
	if (from_rb) {
		giong_recvbuf_release(in->rb); /* its bytes were copied */
		in->rb = NULL;
	}
	return 1;
}

ssize_t giong__http_input_peek(struct giong__http_input *in, struct giong_stream *s, const char **p)
{
	ssize_t n;

	if (in->len) {
		*p = in->data;
		return (ssize_t)in->len;
	}
	if (!in->blen) {
		giong_recvbuf_release(in->body_rb);
		in->body_rb = NULL;
		if (in->eof)
			return 0;
		n = giong_stream_recv(s, &in->body_rb);
		if (n <= 0) {
			if (n == 0)
				in->eof = true;
			return n;
		}
		in->bdata = giong_recvbuf_data(in->body_rb);
		in->blen = (size_t)n;
	}
	*p = in->bdata;
	return (ssize_t)in->blen;
}

void giong__http_input_consume(struct giong__http_input *in, size_t n)
{
	if (in->len) {
		in->data += n;
		in->len -= n;
	} else {
		in->bdata += n;
		in->blen -= n;
	}
}

void giong__http_input_message_done(struct giong__http_input *in)
{
	if (in->len || !in->body_rb)
		return;
	giong_recvbuf_release(in->rb);
	in->rb = in->body_rb;
	in->in_heap = false;
	in->data = in->bdata;
	in->len = in->blen;
	in->body_rb = NULL;
	in->blen = 0;
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
