/* SPDX-License-Identifier: MIT */
/*
 * giong/http/limits.h - what a client may send before the server refuses it,
 * and how long it may take. Each limit, crossed, gets its own status (or a
 * close) and is counted; the defaults are ones a public server can run with.
 */
#ifndef GIONG_HTTP_LIMITS_H
#define GIONG_HTTP_LIMITS_H

#include <stddef.h>
#include <stdint.h>

#include <giong/core/api.h>

GIONG_BEGIN_DECLS

struct giong_http_limits {
	uint32_t request_line; /* bytes of the request line, CRLF excluded: 414 past it (8 KiB) */
	uint32_t head;         /* bytes of the whole head, request line included: 431 (64 KiB) */
	uint32_t fields;       /* header fields: 431 past it (100) */
	uint64_t body;         /* body bytes, after de-chunking: 413 (1 MiB) */
	uint32_t head_timeout_ms;  /* the whole head, from its first byte: 408, close (10 s);
				    * HTTP/2: a header block (GOAWAY, close) */
	uint32_t idle_timeout_ms;  /* a keep-alive connection between requests: close (15 s) */
	uint32_t body_timeout_ms;  /* the whole body, once the head is in: 408, close (30 s) */
	uint32_t write_timeout_ms; /* a response the peer does not read: close (30 s) */
	uint32_t connections; /* open connections per worker: accepting pauses past it (10,000) */
};

/* The defaults (in the comments above). */
#define GIONG_HTTP_LIMIT_REQUEST_LINE (8u * 1024)
#define GIONG_HTTP_LIMIT_HEAD (64u * 1024)
#define GIONG_HTTP_LIMIT_FIELDS 100u
#define GIONG_HTTP_LIMIT_BODY (1024u * 1024)
#define GIONG_HTTP_LIMIT_HEAD_TIMEOUT_MS 10000u
#define GIONG_HTTP_LIMIT_IDLE_TIMEOUT_MS 15000u
#define GIONG_HTTP_LIMIT_BODY_TIMEOUT_MS 30000u
#define GIONG_HTTP_LIMIT_WRITE_TIMEOUT_MS 30000u
#define GIONG_HTTP_LIMIT_CONNECTIONS 10000u

/* giong_http_limits_init() - fill @l with the defaults. Returns 0, or
 * -EINVAL for a NULL @l. */
GIONG_API int giong_http_limits_init(struct giong_http_limits *l);

/*
 * giong_http_limits_check() - whether @l can work: every limit non-zero, the
 * request line no longer than the head, the head at most 16 MiB and the
 * field count at most 65,535. Returns 0, or -EINVAL (naming nothing: the
 * fields are few, the rule above says which).
 */
GIONG_API int giong_http_limits_check(const struct giong_http_limits *l);

GIONG_END_DECLS

#endif /* GIONG_HTTP_LIMITS_H */
