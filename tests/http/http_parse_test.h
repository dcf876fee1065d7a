/* SPDX-License-Identifier: MIT */
/* http_parse_test.h - helpers shared by the parser's tests: feed a head whole, in every
 * prefix, and byte by byte through the resumable scanner, and require one answer. */
#ifndef HTTP_PARSE_TEST_H
#define HTTP_PARSE_TEST_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "h1/parse.h"

#define HT_FIELDS_MAX 256

/* giong__http_parse_head() with a refusal as minus its status (-400, -431, ...), so that a
 * test states one expected answer; -EINVAL stays, and a refusal's status must be one. */
static inline int ht_parse_head(const char *buf, size_t len, const struct giong_http_limits *lim,
				struct giong__http_scan *sc, struct giong__http_head *h,
				struct giong_http_field *fields)
{
	int status = 0, r = giong__http_parse_head(buf, len, lim, sc, h, fields, &status);

	if (r != -EBADMSG)
		return r;
	return status >= 400 && status <= 599 ? -status : INT32_MIN + 1;
}

/*
 * ht_parse_all() - parse in[0..len) whole; then every shorter prefix (each must give 0
 * when the whole gives a length past it, else 0 or the same refusal); then byte by byte
 * with one scan state (the same answer at the same byte). Returns the whole's answer,
 * or INT32_MIN when the three ways disagree. Each prefix is copied to a buffer of its
 * exact size, so that ASan sees any read past it.
 */
static inline int ht_parse_all(const char *in, size_t len, const struct giong_http_limits *lim,
			       struct giong__http_head *h, struct giong_http_field *fields,
			       bool every_prefix)
{
	struct giong_http_field f2[HT_FIELDS_MAX];
	struct giong__http_head h2;
	struct giong__http_scan sc = {0};
	int whole, r;
	char *copy;

	static char *last; /* the whole's copy: *h points into it until the next call */

	free(last);
	last = malloc(len ? len : 1);
	memcpy(last, in, len);
	whole = ht_parse_head(last, len, lim, NULL, h, fields);
	for (size_t n = 0; every_prefix && n < len; n++) {
		copy = malloc(n ? n : 1);
		memcpy(copy, in, n);
		r = ht_parse_head(copy, n, lim, NULL, &h2, f2);
		free(copy);
		if (whole > 0 && (size_t)whole > n ? r != 0 : (r != 0 && r != whole))
			return INT32_MIN;
	}
	/* Byte by byte, one scan state: the answer comes at the same byte. */
	memset(&h2, 0, sizeof(h2));
	r = 0;
	for (size_t n = 0; n <= len && r == 0; n++) {
		copy = malloc(n ? n : 1);
		memcpy(copy, in, n);
		r = ht_parse_head(copy, n, lim, &sc, &h2, f2);
		free(copy);
	}
	if (r != whole)
		return INT32_MIN;
	return whole;
}

#endif /* HTTP_PARSE_TEST_H */
