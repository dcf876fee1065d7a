/* SPDX-License-Identifier: MIT */
/*
 * reply.h - the response head, for the client: bytes in, a response, "need
 * more", or a refusal. The twin of parse.h, with the same two passes: our
 * resumable scanner (the status line here, then the very field-section code
 * of the request parser, head.h), the framing rules of head.c, then
 * http-parser (HTTP_RESPONSE) over exactly the head's bytes, whose callbacks
 * must report the same status, reason, fields and framing. A body is never
 * given to http-parser. Internal to libgiong-http.
 *
 * Strict (RFC 9112 section 4, 6.3): "HTTP/1.0" or "HTTP/1.1", SP, three
 * digits 100-599, SP, a reason of field-value bytes (maybe empty), CRLF; no
 * leading empty lines; fields as in a request. Framing:
 *  - a response to HEAD, a 1xx, 204 and 304 have no body; a 1xx or 204 with
 *    Transfer-Encoding or a non-zero Content-Length is refused;
 *  - Transfer-Encoding: chunked alone (no other coding: the client sends no
 *    TE field, so a server may use none, RFC 9112 7.4), never with
 *    Content-Length, never in HTTP/1.0;
 *  - one valid Content-Length; two, even equal, are refused;
 *  - neither: the body runs to the end of the connection (no keep-alive).
 */
#ifndef GIONG_HTTP_REPLY_H
#define GIONG_HTTP_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <giong/http/limits.h>

#include "h1/parse.h"

enum giong__http_reply_body {
	GIONG__HTTP_REPLY_NONE,    /* no body: to HEAD, 1xx, 204, 304 */
	GIONG__HTTP_REPLY_LENGTH,  /* Content-Length: content_length bytes (maybe 0) */
	GIONG__HTTP_REPLY_CHUNKED, /* Transfer-Encoding: chunked (chunked.h decodes it) */
	GIONG__HTTP_REPLY_CLOSE,   /* delimited by the end of the connection */
};

struct giong__http_reply {
	int status;            /* 100..599 */
	uint8_t version_minor; /* HTTP/1.0 or HTTP/1.1 */
	const char *reason;    /* into the caller's buffer; maybe empty */
	uint32_t reason_len;
	struct giong_http_field *fields; /* the caller's array, in the order sent */
	uint32_t nfields;
	enum giong__http_reply_body body;
	uint64_t content_length; /* GIONG__HTTP_REPLY_LENGTH: the length; else 0 */
	/* RFC 9112 9.3: HTTP/1.1 persists unless a Connection "close" token; HTTP/1.0
	 * only with "keep-alive" and no "close"; a close-delimited body never. */
	bool keep_alive;
};

/*
 * giong__http_parse_reply() - parse the response head at the start of
 * buf[0..len), @head_request saying whether it answers a HEAD.
 * @lim: request_line bounds the status line, head the whole head, fields the
 * field count (NULL: the defaults). @scan: resumable state, as for
 * giong__http_parse_head() (zero it before each head; NULL rescans).
 * @r: filled on success only; @fields: at least lim->fields entries.
 *
 * Returns the head's length (> 0), 0 for need more (never past lim->head),
 * or -EBADMSG malformed (framing included, and a version other than 1.0 and
 * 1.1), -EMSGSIZE a head, status line or field count over the limits;
 * -EINVAL for a NULL @r or @fields (or @buf with a non-zero @len).
 */
int giong__http_parse_reply(const char *buf, size_t len, const struct giong_http_limits *lim,
			    bool head_request, struct giong__http_scan *scan,
			    struct giong__http_reply *r, struct giong_http_field *fields);

#endif /* GIONG_HTTP_REPLY_H */
