/* SPDX-License-Identifier: MIT */
/*
 * parse.h - the request head: bytes in, a request, "need more", or the status to
 * refuse it with. Internal to libgiong-http; the connection code knows this contract
 * and not http-parser, so the parser can be swapped without touching it (the shape
 * is picohttpparser's).
 *
 * Two passes over the head, and both must agree:
 *  1. our own scanner, byte by byte and resumable, which is the authority on syntax
 *     (RFC 9112 section 2-5): CRLF only, the request line's exact shape, field names
 *     as tokens, field values without CTLs, no obs-fold, the limits. It decides at the
 *     first byte that shows a refusal, so a prefix of an input gives either "need
 *     more" or the same answer as the whole input. A head not begun that has the
 *     common shape (fast_head.h) is read in one straight pass instead, which leaves
 *     exactly what the scanner would and declines everything else to it.
 *  2. once the empty line is in, the semantic checks on the fields (framing, Host,
 *     Expect, Connection; Host's value and a target's authority: authority.h), then
 *     http-parser (http_parser_execute, HTTP_REQUEST) over exactly the head's bytes,
 *     whose callbacks must report the same target, the same fields and the same
 *     framing; on_headers_complete returns 1, and the body is never given to it, so
 *     a body is never parsed as a request.
 *  3. except for a plain head (giong__http_head_plain()): one in forms so narrow
 *     that http-parser reads them the way the scanner does, byte for byte. Its
 *     second opinion could only agree, so the server does not ask for it (issue 28:
 *     with 16 requests pipelined per write it was about 17 % of the server's CPU).
 *     The fuzz target asks on every input and traps where a plain head would have
 *     had another answer; tests/http/test_parse_plain.c crosses every edge.
 *
 * Every refusal closes the connection after its response (the caller's rule): after
 * a refused head the rest of the buffer is not a request boundary anyone can trust.
 * docs/http.md lists every rule and its status.
 */
#ifndef GIONG_HTTP_PARSE_H
#define GIONG_HTTP_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <giong/http/limits.h>
#include <giong/http/method.h>

#include "common/request.h"
#include "common/token.h"

/* Leading empty lines (CRLF) before a request line that are skipped (RFC 9112 2.2
 * says a server SHOULD ignore at least one); one more is 400. They count in the
 * returned length and against the head limit. */
#define GIONG__HTTP_LEADING_EMPTY_MAX 4

/*
 * The scanner's state between calls on one head. Zero it (or pass NULL and pay a
 * rescan from byte 0 on every call) before each new head; keep it, untouched, while
 * giong__http_parse_head() returns 0 for that head. The buffer may move between
 * calls (a per-connection buffer that grows) but must start with the same bytes.
 */
struct giong__http_scan {
	uint32_t pos;        /* bytes already scanned and found acceptable */
	uint32_t rl_start;   /* where the request line starts (after empty lines) */
	uint32_t method_len; /* the method token's length, once its SP is seen */
	uint32_t nfields;    /* field lines begun */
	uint8_t state;
	uint8_t empty_lines; /* leading empty lines skipped */
	uint8_t vmajor, vminor;
};

/*
 * giong__http_parse_head() - parse the request head at the start of buf[0..len).
 * @lim: the limits (NULL: the defaults); request_line, head and fields are used.
 * @scan: resumable state (see above), or NULL to scan from the start each time.
 * @h: filled on success only.
 * @fields: the caller's array of at least lim->fields entries; h->fields points to it.
 *         Its entries are undefined after a return other than > 0.
 * @status: where a refusal's status goes (NULL: not wanted).
 *
 * Returns:
 *  > 0   the head's length in bytes, through its empty line (leading empty lines
 *        included): the body, or the next request, starts there. *h is filled.
 *  0     need more bytes: nothing seen so far is wrong and no limit is crossed yet
 *        (so "need more" never grows past lim->head).
 *  -EBADMSG  refused: *@status is the status to answer, after which the server closes:
 *        400 malformed, 414 request line over lim->request_line (as soon as its
 *        length is known to be over), 431 head over lim->head or more than
 *        lim->fields fields, 501 a well-formed method token the parser does not know
 *        or a transfer coding before a final chunked, 505 a version other than HTTP/1.0
 *        and HTTP/1.1 (HTTP/0.9's two-word request line, with no version at all, is
 *        400 at its CR), 417 an Expect other than 100-continue; 400 too for a Host or
 *        target authority that is not uri-host[:port] (common/authority.h).
 *  -EINVAL   NULL buf (with len > 0), h or fields, or a scan state that does not fit.
 */
int giong__http_parse_head(const char *buf, size_t len, const struct giong_http_limits *lim,
			   struct giong__http_scan *scan, struct giong__http_head *h,
			   struct giong_http_field *fields, int *status);

/* giong__http_parse_head_full()'s @flags. */
enum {
	/* http-parser's second opinion on every head, plain or not */
	GIONG__HTTP_PARSE_SECOND_ALWAYS = 1,
	/* the byte scanner only, never the fast pass (fast_head.h) */
	GIONG__HTTP_PARSE_BYTE_SCANNER = 2,
};

/*
 * giong__http_parse_head_full() - giong__http_parse_head() with @flags (above), for the
 * tests and the fuzz target that check the two shortcuts, the plain heads' and the fast
 * pass; 0 is giong__http_parse_head(). Same arguments and returns.
 */
int giong__http_parse_head_full(const char *buf, size_t len, const struct giong_http_limits *lim,
				struct giong__http_scan *scan, struct giong__http_head *h,
				struct giong_http_field *fields, int *status, unsigned flags);

/* The longest plain head (request line to empty line): far below http-parser's
 * own limit (HTTP_MAX_HEADER_SIZE, 80 KiB), which a process may lower. */
#define GIONG__HTTP_PLAIN_HEAD_MAX 8192

/*
 * giong__http_head_plain() - whether @h, a head giong__http_parse_head() accepted
 * (its request line at h->method, @len bytes to the end of its empty line), is plain:
 *  - method GET, HEAD, POST, PUT, DELETE, OPTIONS, TRACE or PATCH; HTTP/1.1;
 *  - an origin-form target of pchar, "/" and "?" only (RFC 3986: unreserved,
 *    pct-encoded, sub-delims, ":", "@");
 *  - at most GIONG__HTTP_PLAIN_HEAD_MAX bytes, none above 0x7E (no obs-text);
 *  - no Upgrade or Proxy-Connection field; Content-Length of at most 18 digits,
 *    Transfer-Encoding exactly "chunked", Connection exactly "close" or
 *    "keep-alive" (case aside), each with nothing after it before its CR; no
 *    other field name that begins like one of those five or that one of them
 *    begins ("Transfer-Encodingx", "Content-"): http-parser acts on a name's
 *    whole match before the name ends.
 * What the scanner and the semantic checks already ensure (CRLF, tchar names, no
 * CTL, no obs-fold, one Host, no duplicate framing field) is not checked again.
 * False for NULL.
 */
bool giong__http_head_plain(const struct giong__http_head *h, size_t len);

#endif /* GIONG_HTTP_PARSE_H */
