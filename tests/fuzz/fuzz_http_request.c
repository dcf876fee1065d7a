/* SPDX-License-Identifier: MIT */
/*
 * fuzz_http_request.c - libFuzzer target: bytes through the parse code the server runs
 * (src/h1/parse.c, src/h1/chunked.c, linked from giong-http-internal).
 *
 * Input: two control bytes, then the request. The first picks the limits (bit 7: small
 * ones, so that 414 and 431 are reached inside libFuzzer's input sizes) and, with the
 * second, the split point: the head is fed as a growing prefix (the bytes before the
 * split, then all of them) through one resumable scan state, each prefix in a heap
 * buffer of its exact size, and the answer must equal a single parse of the whole.
 * The whole is parsed a second time with http-parser's second opinion forced
 * (giong__http_parse_head_full()), so that http-parser reads every input, and the two
 * answers must be one: on a plain head, where the server skips http-parser, this is
 * the check that http-parser would have agreed. The byte scanner alone (no fast pass,
 * h1/fast_head.h) must give the same answer, the same head and the same fields.
 * A head that parses is checked (spans inside the buffer), and a chunked body is then
 * decoded from the bytes after the head, in two pieces split at the same point.
 * A disagreement traps; ASan and UBSan catch the rest.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "h1/chunked.h"
#include "h1/parse.h"

#define FIELDS_MAX 128

static struct giong_http_field fields[FIELDS_MAX], fields2[FIELDS_MAX], fields3[FIELDS_MAX],
	fields4[FIELDS_MAX];

static void inside(const char *p, size_t n, const char *buf, size_t len)
{
	if (n && (!p || p < buf || p + n > buf + len))
		__builtin_trap();
}

/* The fast pass and the byte scanner left the same head (the field arrays aside). */
static void same_head(const struct giong__http_head *a, const struct giong__http_head *b)
{
	struct giong__http_head x = *a, y = *b;

	if (x.nfields != y.nfields)
		__builtin_trap();
	for (uint32_t i = 0; i < x.nfields; i++)
		if (x.fields[i].name != y.fields[i].name ||
		    x.fields[i].value != y.fields[i].value ||
		    x.fields[i].name_len != y.fields[i].name_len ||
		    x.fields[i].value_len != y.fields[i].value_len)
			__builtin_trap();
	x.fields = y.fields = NULL;
	if (x.method != y.method || x.method_len != y.method_len || x.method_id != y.method_id ||
	    x.target != y.target || x.target_len != y.target_len || x.form != y.form ||
	    x.path != y.path || x.path_len != y.path_len || x.query != y.query ||
	    x.query_len != y.query_len || x.version_major != y.version_major ||
	    x.version_minor != y.version_minor || x.host != y.host || x.host_len != y.host_len ||
	    x.body != y.body || x.content_length != y.content_length ||
	    x.keep_alive != y.keep_alive || x.expect_continue != y.expect_continue ||
	    x.upgrade != y.upgrade)
		__builtin_trap();
}

static void body(const uint8_t *b, size_t len, size_t split, const struct giong_http_limits *lim)
{
	struct giong__http_chunked c;
	size_t pos = 0, total = 0;
	int r = GIONG__HTTP_CHUNKED_MORE;

	giong__http_chunked_init(&c, lim);
	while (pos < len || r == GIONG__HTTP_CHUNKED_DATA) {
		size_t n = pos < split ? split - pos : len - pos, used, off, dl;
		char *piece = malloc(n ? n : 1);

		memcpy(piece, b + pos, n);
		r = giong__http_chunked_feed(&c, piece, n, &used, &off, &dl);
		free(piece);
		if (used > n || (r == GIONG__HTTP_CHUNKED_DATA && (off + dl > used || !dl)))
			__builtin_trap();
		if (r == GIONG__HTTP_CHUNKED_MORE && used != n)
			__builtin_trap();
		total += dl;
		if (total > lim->body)
			__builtin_trap();
		pos += used;
		if (r < 0 || r == GIONG__HTTP_CHUNKED_DONE)
			break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct giong_http_limits lim;
	struct giong__http_scan sc = {0};
	struct giong__http_head h, h2, h3, h4;
	size_t split;
	char *whole, *prefix;
	int r, r2, r3, r4, st = 0, st2 = 0, st3 = 0, st4 = 0;

	if (size < 2)
		return 0;
	giong_http_limits_init(&lim);
	if (data[0] & 0x80) {
		lim.request_line = 64;
		lim.head = 256;
		lim.fields = 8;
		lim.body = 100;
	}
	lim.fields = lim.fields > FIELDS_MAX ? FIELDS_MAX : lim.fields;
	split = ((size_t)(data[0] & 0x7f) << 8 | data[1]) % (size - 1);
	data += 2;
	size -= 2;

	whole = malloc(size ? size : 1);
	memcpy(whole, data, size);
	r = giong__http_parse_head(whole, size, &lim, NULL, &h, fields, &st);
	r3 = giong__http_parse_head_full(whole, size, &lim, NULL, &h3, fields3, &st3,
					 GIONG__HTTP_PARSE_SECOND_ALWAYS);
	if (r3 != r || (r == -EBADMSG && st3 != st))
		__builtin_trap(); /* r > 0: a plain head http-parser refuses; else a bug */
	r4 = giong__http_parse_head_full(whole, size, &lim, NULL, &h4, fields4, &st4,
					 GIONG__HTTP_PARSE_BYTE_SCANNER);
	if (r4 != r || (r == -EBADMSG && st4 != st))
		__builtin_trap(); /* the fast pass took a head the scanner answers otherwise */
	if (r > 0)
		same_head(&h, &h4);

	prefix = malloc(split ? split : 1);
	memcpy(prefix, data, split);
	r2 = giong__http_parse_head(prefix, split, &lim, &sc, &h2, fields2, &st2);
	free(prefix);
	if (r2 == 0)
		r2 = giong__http_parse_head(whole, size, &lim, &sc, &h2, fields2, &st2);
	if (r2 != r || (r == -EBADMSG && st2 != st))
		__builtin_trap(); /* a prefix must give need more, or the whole's answer */
	if (r < 0 && (r != -EBADMSG || st < 400 || st > 599))
		__builtin_trap(); /* a refusal carries a status, and nothing else fails */

	if (r > 0) {
		if ((size_t)r > size || h.nfields > lim.fields)
			__builtin_trap();
		inside(h.method, h.method_len, whole, (size_t)r);
		inside(h.target, h.target_len, whole, (size_t)r);
		if (h.path_len > 1 || (h.path && h.path[0] != '/'))
			inside(h.path, h.path_len, whole, (size_t)r);
		inside(h.query, h.query_len, whole, (size_t)r);
		inside(h.host, h.host_len, whole, (size_t)r);
		for (uint32_t i = 0; i < h.nfields; i++) {
			inside(h.fields[i].name, h.fields[i].name_len, whole, (size_t)r);
			inside(h.fields[i].value, h.fields[i].value_len, whole, (size_t)r);
		}
		if (h.body == GIONG__HTTP_BODY_CHUNKED)
			body(data + r, size - (size_t)r, split > (size_t)r ? split - (size_t)r : 0,
			     &lim);
	}
	free(whole);
	return 0;
}
