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

/* Whether two parses of one buffer left the same head (the field arrays aside). */
static inline bool ht_same_head(const struct giong__http_head *a, const struct giong__http_head *b)
{
	if (a->nfields != b->nfields)
		return false;
	for (uint32_t i = 0; i < a->nfields; i++)
		if (a->fields[i].name != b->fields[i].name ||
		    a->fields[i].value != b->fields[i].value ||
		    a->fields[i].name_len != b->fields[i].name_len ||
		    a->fields[i].value_len != b->fields[i].value_len)
			return false;
	return a->method == b->method && a->method_len == b->method_len &&
	       a->method_id == b->method_id && a->target == b->target &&
	       a->target_len == b->target_len && a->form == b->form && a->path == b->path &&
	       a->path_len == b->path_len && a->query == b->query && a->query_len == b->query_len &&
	       a->version_major == b->version_major && a->version_minor == b->version_minor &&
	       a->host == b->host && a->host_len == b->host_len && a->body == b->body &&
	       a->content_length == b->content_length && a->keep_alive == b->keep_alive &&
	       a->expect_continue == b->expect_continue && a->upgrade == b->upgrade;
}

/*
 * ht_parse_all() - parse in[0..len) whole, then again with the byte scanner alone (the
 * same answer and the same head: the fast pass, h1/fast_head.h, only spares work); then every shorter prefix (each must give 0
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
	{
		int st = 0;

		r = giong__http_parse_head_full(last, len, lim, NULL, &h2, f2, &st,
						GIONG__HTTP_PARSE_BYTE_SCANNER);
		if (r == -EBADMSG)
			r = -st;
		if (r != whole || (whole > 0 && !ht_same_head(h, &h2)))
			return INT32_MIN;
	}
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
