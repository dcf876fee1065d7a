/* SPDX-License-Identifier: MIT */
/*
 * fast_head.h - the request head in one straight pass, for the shape nearly every
 * request has: the whole head already in the buffer, a token method http-parser knows,
 * an origin-form target, HTTP/1.0 or 1.1, ASCII field lines, every limit kept. It
 * accepts a subset of what the byte scanner (parse.c) accepts and leaves exactly what
 * the scanner and split() would leave; on anything else it declines, without a
 * verdict, and the byte scanner reads the head from its first byte. So it decides
 * nothing: a refusal, "need more" and every unusual byte are the scanner's.
 * Why: the scanner's dispatch per state change was about a fifth of the server's
 * user-space instructions per request (issue 28; callgrind figures in
 * bench/results/http.md). fuzz_http_request compares the two on every input.
 * Internal to libgiong-http; only parse.c includes it.
 */
#ifndef GIONG_HTTP_FAST_HEAD_H
#define GIONG_HTTP_FAST_HEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <giong/http/limits.h>

#include "common/request.h"

/* The classes of a byte, as bits of giong__http_byte_class[c]. */
enum {
	GIONG__HTTP_B_TCHAR = 1,  /* RFC 9110 5.6.2 tchar (token.h's set) */
	GIONG__HTTP_B_VCHAR = 2,  /* 0x21-0x7E */
	GIONG__HTTP_B_TARGET = 4, /* a plain target's byte (giong__http_head_plain()) */
	GIONG__HTTP_B_VALUE = 8,  /* an ASCII field value's byte: HTAB, 0x20-0x7E */
};

extern const uint8_t giong__http_byte_class[256];

/*
 * giong__http_fast_head() - read the head at buf[0..len) in one pass, if it has the
 * common shape above.
 * @lim: the limits (request_line, head, fields), not NULL.
 * @h: on success, what split() fills: method (its id), target, version, @fields and
 *     their count; the rest of *@h untouched.
 * @method_len: on success, the method's length (the scan state's).
 * @target_plain: on success, whether every byte of the target is a plain target byte.
 * Returns the head's length (through its empty line), or 0: not this shape, not all of
 * it here, or a limit reached; the byte scanner is then to read it.
 */
uint32_t giong__http_fast_head(const unsigned char *buf, size_t len,
			       const struct giong_http_limits *lim, struct giong__http_head *h,
			       struct giong_http_field *fields, uint32_t *method_len,
			       bool *target_plain);

#endif /* GIONG_HTTP_FAST_HEAD_H */
