/* SPDX-License-Identifier: MIT */
/*
 * chunked.h - an incremental decoder of chunked bodies (RFC 9112 section 7.1), in
 * place: it hands out spans of the caller's bytes and copies nothing. Feed it the
 * bytes after the head, split anywhere (one byte at a time works); it keeps its
 * state between calls. Internal to libgiong-http.
 *
 * Strict where http-parser is not: chunk-size is 1*HEXDIG (no 0x, no sign, no
 * overflow); a size line is size [BWS ; extensions] CRLF, the extensions skipped but
 * made of field-value bytes only and the whole line at most
 * GIONG__HTTP_CHUNK_LINE_MAX bytes; the data is followed by exactly CRLF; no bare LF,
 * no bare CR anywhere; trailer fields are checked like header fields (token name,
 * colon, value without CTLs, no obs-fold), then dropped, the trailer section bounded
 * by the head limit. Only the empty line after the last chunk ends the body: a body
 * cut short is never reported done.
 */
#ifndef GIONG_HTTP_CHUNKED_H
#define GIONG_HTTP_CHUNKED_H

#include <stddef.h>
#include <stdint.h>

#include <giong/http/limits.h>

/* The longest chunk-size line, CRLF excluded (size and extensions): 400 past it. */
#define GIONG__HTTP_CHUNK_LINE_MAX 4096u

struct giong__http_chunked {
	uint64_t remaining;    /* data bytes left in the current chunk */
	uint64_t size;         /* the chunk-size being read */
	uint64_t total;        /* data bytes so far */
	uint64_t body_max;     /* lim->body */
	uint32_t line;         /* bytes of the current size line */
	uint32_t trailers;     /* bytes of the trailer section so far */
	uint32_t trailers_max; /* lim->head */
	uint8_t state;
	int8_t digits; /* hex digits of the size so far, capped */
	int error;     /* the refusal's status (400, 413, 431), once one is found: sticky */
};

enum {
	GIONG__HTTP_CHUNKED_MORE = 0, /* every byte given was used: feed more */
	GIONG__HTTP_CHUNKED_DATA = 1, /* *data is the next span of body bytes */
	GIONG__HTTP_CHUNKED_DONE = 2, /* the body ended; *used is where the next request starts */
};

/* giong__http_chunked_init() - ready @c for a new body under @lim (NULL: the
 * defaults). Returns 0, or -EINVAL for a NULL @c. */
int giong__http_chunked_init(struct giong__http_chunked *c, const struct giong_http_limits *lim);

/*
 * giong__http_chunked_feed() - decode from buf[0..len).
 * *used: set to the bytes consumed from buf (give the rest again, with what follows).
 * *data_off, *data_len: with GIONG__HTTP_CHUNKED_DATA, the body bytes are
 * buf[*data_off .. *data_off + *data_len), inside buf[0 .. *used); 0, 0 otherwise.
 *
 * Returns GIONG__HTTP_CHUNKED_DATA (one span, at most one chunk's worth: call again
 * for the rest), GIONG__HTTP_CHUNKED_MORE (all of buf used, no span in it), or
 * GIONG__HTTP_CHUNKED_DONE (the last chunk and the trailers are in: DONE again on any
 * later call, using nothing); or -EBADMSG, refused, again on every later call, with the
 * status in c->error: 400 (malformed), 413 (a chunk that would take the body past
 * lim->body, refused at its size line before any of its data), 431 (the trailer section
 * over lim->head); or -EINVAL for a NULL argument (buf may be NULL when len is 0). The
 * status never shares the return value with an errno.
 */
int giong__http_chunked_feed(struct giong__http_chunked *c, const char *buf, size_t len,
			     size_t *used, size_t *data_off, size_t *data_len);

#endif /* GIONG_HTTP_CHUNKED_H */
