/* SPDX-License-Identifier: MIT */
/*
 * out.h - a connection's output batch: the responses to every request one
 * receive brought, serialised back to back so that they leave in one write.
 * The buffer grows (up to a bound) and is reused across requests; while a
 * write of it is in flight the kernel owns its bytes (the connection says so
 * where it writes).
 *
 * The HTTP/1.1 lines that go into it are h1/serialize.h's.
 */
#ifndef GIONG_HTTP_OUT_H
#define GIONG_HTTP_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct giong_stream;

struct giong__http_out {
	char *data;
	size_t len; /* bytes queued */
	size_t cap; /* bytes allocated */
	size_t max; /* at most this many queued: -E2BIG past it */
};

/* An empty batch of at most @max bytes (no allocation yet). */
void giong__http_out_init(struct giong__http_out *o, size_t max);
/* Free the buffer; @o is empty and usable again. */
void giong__http_out_free(struct giong__http_out *o);
/* Forget what is queued, keep the memory. */
static inline void giong__http_out_clear(struct giong__http_out *o)
{
	o->len = 0;
}

/* Append @n bytes. 0, -E2BIG (past max; nothing appended), -ENOMEM. */
int giong__http_out_append(struct giong__http_out *o, const void *p, size_t n);
int giong__http_out_grow_slow(struct giong__http_out *o, size_t n, char **tail);
/* Room for @n more bytes at *@tail (o->len is not moved: add what was
 * written to it). 0, -E2BIG, -ENOMEM. Inline where the room is there (cap is
 * never above max): every head line of every response comes here. */
static inline int giong__http_out_grow(struct giong__http_out *o, size_t n, char **tail)
{
	if (n && o->cap - o->len >= n) {
		*tail = o->data + o->len;
		return 0;
	}
	return giong__http_out_grow_slow(o, n, tail);
}
/* Write all of @iov[0..n) to @s (@iov is changed), under the task's
 * deadline: 0 or -errno (-EPIPE for a stream that took nothing). The
 * buffers are lent to the kernel for the call only. May suspend. */
int giong__http_writev_all(struct giong_stream *s, struct iovec *iov, int n);

/* Whether @s[0..n) may be a field value as giong sends it: visible ASCII,
 * obs-text, SP and HTAB, no leading or trailing whitespace. */
bool giong__http_is_field_value(const char *s, size_t n);

#endif /* GIONG_HTTP_OUT_H */
