/* SPDX-License-Identifier: MIT */
/* out.c - the output batch (see out.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <giong/net/stream.h>

#include "common/out.h"

void giong__http_out_init(struct giong__http_out *o, size_t max)
{
	memset(o, 0, sizeof(*o));
	o->max = max;
}

void giong__http_out_free(struct giong__http_out *o)
{
	free(o->data);
	o->data = NULL;
	o->len = o->cap = 0;
}

/* Room for @n more bytes; the buffer at least doubles so appends stay O(1). */
static int reserve(struct giong__http_out *o, size_t n)
{
	size_t want, cap;
	char *d;

	if (n > o->max || o->len > o->max - n)
		return -E2BIG;
	want = o->len + n;
	if (want <= o->cap)
		return 0;
	cap = o->cap ? o->cap : 512;
	while (cap < want)
		cap = cap > SIZE_MAX / 2 ? want : cap * 2;
	if (cap > o->max)
		cap = o->max;
	d = realloc(o->data, cap);
	if (!d)
		return -ENOMEM;
	o->data = d;
	o->cap = cap;
	return 0;
}

int giong__http_out_grow_slow(struct giong__http_out *o, size_t n, char **tail)
{
	int err = reserve(o, n);

	if (err)
		return err;
	*tail = o->data + o->len;
	return 0;
}

int giong__http_out_append(struct giong__http_out *o, const void *p, size_t n)
{
	int err;

	if (!n)
		return 0;
	err = reserve(o, n);
	if (err)
		return err;
	memcpy(o->data + o->len, p, n);
	o->len += n;
	return 0;
}

/* Whether one of the 8 bytes of @w is below 0x20 or is 0x7F (exact: the borrow of a
 * byte's subtraction only reaches a byte above it that is itself caught). */
static inline bool word_has_ctl(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
	uint64_t del = w ^ (ones * 0x7f);

	return (((w - ones * 0x20) & ~w) | ((del - ones) & ~del)) & high;
}

static bool ctl_byte(unsigned char c)
{
	return (c < 0x20 && c != '\t') || c == 0x7f; /* CR, LF, NUL and the other controls */
}

bool giong__http_is_field_value(const char *s, size_t n)
{
	size_t i = 0;

	if (!n)
		return true;
	if (!s || s[0] == ' ' || s[0] == '\t' || s[n - 1] == ' ' || s[n - 1] == '\t')
		return false;
	/* eight bytes at a time; a word with a control in it (HTAB is one) byte by byte:
	 * every response's header values come here */
	for (; i + 8 <= n; i += 8) {
		uint64_t w;

		memcpy(&w, s + i, 8);
		if (word_has_ctl(w))
			for (size_t k = i; k < i + 8; k++)
				if (ctl_byte((unsigned char)s[k]))
					return false;
	}
	for (; i < n; i++)
		if (ctl_byte((unsigned char)s[i]))
			return false;
	return true;
}

int giong__http_writev_all(struct giong_stream *s, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t k;

		if (!iov->iov_len) {
			iov++, n--;
			continue;
		}
		k = giong_stream_writev(s, iov, n);
		if (k <= 0)
			return k ? (int)k : -EPIPE;
		while (n > 0 && (size_t)k >= iov->iov_len) {
			k -= (ssize_t)iov->iov_len;
			iov++, n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + k;
			iov->iov_len -= (size_t)k;
		}
	}
	return 0;
}
