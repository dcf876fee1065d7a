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

bool giong__http_is_field_value(const char *s, size_t n)
{
	if (!n)
		return true;
	if (!s || s[0] == ' ' || s[0] == '\t' || s[n - 1] == ' ' || s[n - 1] == '\t')
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return false; /* CR, LF, NUL and the other controls */
	}
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
