/* SPDX-License-Identifier: MIT */
/*
 * input.c - a connection's input (input.h), the server's and the client's:
 * the pool buffer a head is parsed in, the heap copy for a head that spans
 * receives, the body's own buffer while the head's is still pointed to.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/input.h"

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
