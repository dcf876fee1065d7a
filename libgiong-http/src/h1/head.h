/* SPDX-License-Identifier: MIT */
/*
 * head.h - what the request head parser (parse.c) and the response head
 * parser (reply.c) share, so that both read field lines, framing fields and
 * http-parser's second opinion with the very same code: the field-line
 * states of the byte scanner, the list and framing rules, and the callbacks
 * that check http-parser saw the fields split() found. Internal to
 * libgiong-http; only the parse modules include it.
 */
#ifndef GIONG_HTTP_HEAD_H
#define GIONG_HTTP_HEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "h1/parse.h"
#include "common/token.h"

/* The scanner states of the field section, after the first line (request
 * line or status line), whose own states stay below 32. */
enum {
	GIONG__HTTP_S_LINE = 32, /* start of a field line, or of the empty line */
	GIONG__HTTP_S_NAME,      /* inside a field name */
	GIONG__HTTP_S_VALUE,     /* after the colon */
	GIONG__HTTP_S_VAL_LF,    /* CR of a field line seen */
	GIONG__HTTP_S_END_LF,    /* CR of the empty line seen */
	GIONG__HTTP_S_DONE,
};

static inline bool giong__http_is_vchar(unsigned char c)
{
	return c >= 0x21 && c <= 0x7e;
}

/* field-vchar or SP/HTAB: VCHAR, obs-text (0x80-0xFF), SP, HTAB. */
static inline bool giong__http_is_value_byte(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

static inline bool giong__http_ows(char c)
{
	return c == ' ' || c == '\t';
}

/* In the field states that take runs of one class of byte, the first byte
 * from @i (below @stop) that does not just continue the state. */
static inline uint32_t giong__http_field_run(const unsigned char *b, uint32_t i, uint32_t stop,
					     uint8_t state)
{
	if (state == GIONG__HTTP_S_NAME)
		while (i < stop && giong__http_is_tchar(b[i]))
			i++;
	else if (state == GIONG__HTTP_S_VALUE)
		while (i < stop && giong__http_is_value_byte(b[i]) && b[i] != '\r')
			i++;
	return i;
}

/*
 * One byte @c, at offset @i, of the field section (s->state one of the
 * states above). Returns 0 to go on, 1 when the empty line ending the head
 * was read (s->state is GIONG__HTTP_S_DONE and s->pos its length), -400 for a
 * malformed line, -431 for a field past @fields_max. Inline: it runs for
 * every byte of every head the server reads.
 */
static inline int giong__http_field_byte(struct giong__http_scan *s, unsigned char c, uint32_t i,
					 uint32_t fields_max)
{
	switch (s->state) {
	case GIONG__HTTP_S_LINE:
		if (c == '\r') {
			s->state = GIONG__HTTP_S_END_LF;
			return 0;
		}
		if (!giong__http_is_tchar(c))
			return -400; /* obs-fold, whitespace, an empty name, a bare LF */
		if (s->nfields >= fields_max)
			return -431;
		s->nfields++;
		s->state = GIONG__HTTP_S_NAME;
		return 0;
	case GIONG__HTTP_S_NAME:
		if (c == ':')
			s->state = GIONG__HTTP_S_VALUE;
		else if (!giong__http_is_tchar(c))
			return -400; /* SP or HTAB before the colon, a line with no colon */
		return 0;
	case GIONG__HTTP_S_VALUE:
		if (c == '\r')
			s->state = GIONG__HTTP_S_VAL_LF;
		else if (!giong__http_is_value_byte(c))
			return -400; /* NUL, a CTL, DEL, a bare LF */
		return 0;
	case GIONG__HTTP_S_VAL_LF:
		if (c != '\n')
			return -400; /* a bare CR */
		s->state = GIONG__HTTP_S_LINE;
		return 0;
	case GIONG__HTTP_S_END_LF:
		if (c != '\n')
			return -400;
		s->state = GIONG__HTTP_S_DONE;
		s->pos = i + 1;
		return 1;
	default:
		return -400;
	}
}

/* Split the validated field section at @p (the first field line; it ends at
 * the empty line, which must be there) into @fields, their count in *@n. */
void giong__http_split_fields(const char *p, const char *end, struct giong_http_field *fields,
			      uint32_t *n);

/* Calls fn(token, len, arg) for each element of a comma-separated list (#rule, RFC 9110
 * 5.6.1: empty elements are allowed and skipped); stops at fn's non-zero return. */
int giong__http_each_element(const char *v, uint32_t len, int (*fn)(const char *, size_t, void *),
			     void *arg);

/* What the framing fields of one head say (giong__http_framing()). */
struct giong__http_framing {
	unsigned lengths, tes;      /* Content-Length and Transfer-Encoding fields */
	bool bad_length;            /* a malformed one, or more than one */
	uint64_t content_length;    /* the one Content-Length's value */
	unsigned codings, chunked;  /* transfer codings listed, of which chunked */
	bool chunked_last;          /* chunked is the final coding */
	bool unknown_coding;        /* gzip, identity, chunked;q=1, ...: none implemented */
	bool malformed_coding;      /* an element that is no transfer-coding at all */
	bool conn_close, conn_keep; /* Connection tokens "close", "keep-alive" */
};

/* Read field @f into @fr if it is Content-Length, Transfer-Encoding or
 * Connection: true if it was one of those. */
bool giong__http_framing_field(const struct giong_http_field *f, struct giong__http_framing *fr);

/* http-parser's second opinion on a head: what it reported. */
struct giong__http_second_result {
	unsigned http_major, http_minor;
	unsigned method;      /* requests: enum http_method */
	unsigned status_code; /* responses */
	bool chunked, has_length;
	uint64_t content_length;
};

/*
 * giong__http_second_opinion() - run http-parser (a request parser, or with
 * @response a response one) over exactly the head's bytes, and check that it
 * reports the same fields (the same spans) as @fields[0..nfields), the same
 * request target (@target, requests) or reason phrase (@reason, responses;
 * NULL, 0 for an empty one), and a complete head. Returns 0 with *@out
 * filled for the caller's own comparisons, -431 (over http-parser's own head
 * limit) or -400.
 */
int giong__http_second_opinion(bool response, const char *head, size_t len,
			       const struct giong_http_field *fields, uint32_t nfields,
			       const char *target, size_t target_len,
			       struct giong__http_second_result *out);

#endif /* GIONG_HTTP_HEAD_H */
