/* SPDX-License-Identifier: MIT */
/*
 * input.h - the input side of one connection, the server's or the client's:
 * where the unconsumed bytes are and who holds the memory they are in.
 * Internal to libgiong-http.
 *
 * A head is parsed in place in the pool buffer it arrived in; only a head
 * that spans receives is copied, to a heap buffer that grows with it. While
 * a message's head is pointed to (its fields, lent to a handler or to a
 * client's caller), body bytes received past it go to a buffer of their own
 * (body_rb), so that the head's buffer stays put; once the message is done,
 * what is left of those becomes the input for the next head.
 */
#ifndef GIONG_HTTP_INPUT_H
#define GIONG_HTTP_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <giong/core.h>
#include <giong/net/stream.h>

struct giong__http_input {
	/* The unconsumed input is data[0..len): inside rb (a pool buffer) or
	 * inside heap (a copy, for a head that spans receives). */
	struct giong_recvbuf *rb;
	char *heap;
	size_t heap_cap;
	bool in_heap; /* data points into heap */
	const char *data;
	size_t len;
	/* Body bytes received past the input (the head's buffer stays while
	 * its message is in use): bdata[0..blen) inside body_rb. */
	struct giong_recvbuf *body_rb;
	const char *bdata;
	size_t blen;
	bool eof; /* the peer ended its side */
};

/* Give back every buffer @in holds; it is empty (and usable) again. */
void giong__http_input_release(struct giong__http_input *in);

/* Receive more bytes of a head from @s: afterwards in->data[0..len) holds the
 * old unconsumed bytes followed by the new ones, in one piece (copied to the
 * heap only when there were old ones). 1, 0 at end of stream, or -errno.
 * Between messages only: nothing may point into the input then. May suspend. */
int giong__http_input_more(struct giong__http_input *in, struct giong_stream *s);

/* The input bytes buffered, or received from @s now if none (under the
 * task's deadline): *@p and their count (> 0), 0 at end of stream, or -errno.
 * They stay valid until the message is done; take what is used with
 * giong__http_input_consume(). For bodies (and draining) only. May suspend. */
ssize_t giong__http_input_peek(struct giong__http_input *in, struct giong_stream *s,
			       const char **p);

/* Take @n bytes of what giong__http_input_peek() gave. */
void giong__http_input_consume(struct giong__http_input *in, size_t n);

/* After a message: body bytes received past its body become the input (the
 * head's buffer is no longer pointed to). */
void giong__http_input_message_done(struct giong__http_input *in);

#endif /* GIONG_HTTP_INPUT_H */
