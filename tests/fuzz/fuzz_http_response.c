/* SPDX-License-Identifier: MIT */
/*
 * fuzz_http_response.c - libFuzzer target: bytes through the response parse code the
 * client runs (src/h1/reply.c, with head.h's field section and src/h1/chunked.c, linked from
 * giong-http-internal).
 *
 * Input: two control bytes, then the response. The first picks the limits (bit 7: small
 * ones, so that the head and field limits are reached inside libFuzzer's input sizes) and
 * whether the response answers a HEAD (bit 6); with the second, the split point: the head
 * is fed as a growing prefix through one resumable scan state, each prefix in a heap
 * buffer of its exact size, and the answer must equal a single parse of the whole. A head
 * that parses is checked (spans inside the buffer, framing consistent with the status),
 * and a chunked body is then decoded from the bytes after it, in two pieces split at the
 * same point. The memo of verified heads (src/reply_memo.c) must give the parser's answer
 * too: primed with the input, then asked again with a copy of it in another buffer (a hit
 * when the head parsed and fits), and asked once more after a one-byte change of the head
 * (which must then parse afresh). A disagreement traps; ASan and UBSan catch the rest.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "h1/chunked.h"
#include "h1/reply.h"
#include "client/reply_memo.h"

#define FIELDS_MAX 128

static struct giong_http_field fields[FIELDS_MAX], fields2[FIELDS_MAX], fields3[FIELDS_MAX];
static struct giong__http_reply_memo memo;

static void inside(const char *p, size_t n, const char *buf, size_t len)
{
	if (n && (!p || p < buf || p + n > buf + len))
		__builtin_trap();
}

/* The memo's answer for buf[0..len) must be @want (the parser's, @h: spans into buf). */
static void memo_agrees(const char *buf, size_t len, const struct giong_http_limits *lim, bool head,
			int want, const struct giong__http_reply *h)
{
	struct giong__http_reply m;
	char *again = malloc(len ? len : 1);
	int r;

	memcpy(again, buf, len);
	memset(&memo, 0, sizeof(memo));
	if (giong__http_parse_reply_memo(&memo, buf, len, lim, head, NULL, &m, fields2) != want)
		__builtin_trap();
	r = giong__http_parse_reply_memo(&memo, again, len, lim, head, NULL, &m, fields2);
	if (r != want ||
	    (want > 0 && (m.status != h->status || m.nfields != h->nfields || m.body != h->body ||
			  m.keep_alive != h->keep_alive || m.content_length != h->content_length ||
			  m.reason - again != h->reason - buf)))
		__builtin_trap();
	for (uint32_t i = 0; want > 0 && i < m.nfields; i++)
		if (m.fields[i].name - again != h->fields[i].name - buf ||
		    m.fields[i].value_len != h->fields[i].value_len)
			__builtin_trap();
	if (want > 0 && memo.hits != (memo.len ? 1u : 0u))
		__builtin_trap();
	if (want > 0) {
		/* a byte of the head changed: never the memo's answer */
		struct giong__http_reply p;
		size_t at = (size_t)(h->status * 7) % (size_t)want;
		uint64_t hits = memo.hits;

		again[at] ^= 0x20;
		r = giong__http_parse_reply(again, len, lim, head, NULL, &p, fields3);
		if (giong__http_parse_reply_memo(&memo, again, len, lim, head, NULL, &m, fields2) !=
			    r ||
		    memo.hits != hits)
			__builtin_trap();
	}
	free(again);
}

static void body(const uint8_t *b, size_t len, size_t split, const struct giong_http_limits *lim)
{
	struct giong__http_chunked c;
	size_t pos = 0;
	int r = GIONG__HTTP_CHUNKED_MORE;

	giong__http_chunked_init(&c, lim);
	c.body_max = UINT64_MAX; /* as the client decodes: body_max bounds whole bodies only */
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
		if (r == -EBADMSG && c.error == 413)
			__builtin_trap(); /* no body limit here */
		if (r < 0 && (r != -EBADMSG || (c.error != 400 && c.error != 431)))
			__builtin_trap(); /* a refusal is -EBADMSG with its status, nothing else */
		pos += used;
		if (r < 0 || r == GIONG__HTTP_CHUNKED_DONE)
			break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct giong_http_limits lim;
	struct giong__http_scan sc = {0};
	struct giong__http_reply h, h2;
	size_t split;
	bool head;
	char *whole, *prefix;
	int r, r2;

	if (size < 2)
		return 0;
	giong_http_limits_init(&lim);
	if (data[0] & 0x80) {
		lim.request_line = 64;
		lim.head = 256;
		lim.fields = 8;
	}
	head = data[0] & 0x40;
	lim.fields = lim.fields > FIELDS_MAX ? FIELDS_MAX : lim.fields;
	split = ((size_t)(data[0] & 0x3f) << 8 | data[1]) % (size - 1);
	data += 2;
	size -= 2;

	whole = malloc(size ? size : 1);
	memcpy(whole, data, size);
	r = giong__http_parse_reply(whole, size, &lim, head, NULL, &h, fields);

	prefix = malloc(split ? split : 1);
	memcpy(prefix, data, split);
	r2 = giong__http_parse_reply(prefix, split, &lim, head, &sc, &h2, fields2);
	free(prefix);
	if (r2 == 0)
		r2 = giong__http_parse_reply(whole, size, &lim, head, &sc, &h2, fields2);
	if (r2 != r)
		__builtin_trap(); /* a prefix must give need more, or the whole's answer */

	memo_agrees(whole, size, &lim, head, r, &h);
	if (r > 0) {
		bool bodiless = head || h.status < 200 || h.status == 204 || h.status == 304;

		if ((size_t)r > size || h.nfields > lim.fields || h.status < 100 || h.status > 599)
			__builtin_trap();
		if (bodiless != (h.body == GIONG__HTTP_REPLY_NONE))
			__builtin_trap();
		if (h.body == GIONG__HTTP_REPLY_CLOSE && h.keep_alive)
			__builtin_trap();
		inside(h.reason, h.reason_len, whole, (size_t)r);
		for (uint32_t i = 0; i < h.nfields; i++) {
			inside(h.fields[i].name, h.fields[i].name_len, whole, (size_t)r);
			inside(h.fields[i].value, h.fields[i].value_len, whole, (size_t)r);
		}
		if (h.body == GIONG__HTTP_REPLY_CHUNKED)
			body(data + r, size - (size_t)r, split > (size_t)r ? split - (size_t)r : 0,
			     &lim);
	} else if (r < 0 && r != -EBADMSG && r != -EMSGSIZE) {
		__builtin_trap();
	}
	free(whole);
	return 0;
}
