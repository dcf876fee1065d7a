/* SPDX-License-Identifier: MIT */
/* head.c - what request and response heads share (head.h): splitting the field
 * section, the list and framing rules, http-parser's second opinion. */
#include <errno.h>
#include <string.h>

#include <http_parser.h>

#include "h1/head.h"

void giong__http_split_fields(const char *p, const char *end, struct giong_http_field *fields,
			      uint32_t *n)
{
	*n = 0;
	while (*p != '\r') {
		struct giong_http_field *f = &fields[(*n)++];
		/* the first CR ends the line: the scanner let none into a value */
		const char *eol = memchr(p, '\r', (size_t)(end - p)), *v, *next = eol + 2;

		f->name = p;
		while (*p != ':')
			p++;
		f->name_len = (uint32_t)(p - f->name);
		v = p + 1;
		while (v < eol && giong__http_ows(*v))
			v++;
		while (eol > v && giong__http_ows(eol[-1]))
			eol--;
		f->value = v;
		f->value_len = (uint32_t)(eol - v);
		p = next;
	}
}

int giong__http_each_element(const char *v, uint32_t len, int (*fn)(const char *, size_t, void *),
			     void *arg)
{
	const char *p = v, *end = v + len;

	while (p < end) {
		const char *e = memchr(p, ',', (size_t)(end - p)), *q;
		int r;

		if (!e)
			e = end;
		q = e;
		while (p < q && giong__http_ows(*p))
			p++;
		while (q > p && giong__http_ows(q[-1]))
			q--;
		if (q > p && (r = fn(p, (size_t)(q - p), arg)))
			return r;
		p = e + 1;
	}
	return 0;
}

/* Content-Length's value: 1*DIGIT, no overflow (RFC 9110 8.6). 0 or -400. */
static int content_length(const char *v, uint32_t len, uint64_t *out)
{
	uint64_t n = 0;

	if (!len)
		return -400;
	for (uint32_t i = 0; i < len; i++) {
		unsigned d = (unsigned char)v[i] - '0';

		if (d > 9 || n > (UINT64_MAX - d) / 10)
			return -400;
		n = n * 10 + d;
	}
	*out = n;
	return 0;
}

static int te_element(const char *t, size_t len, void *arg)
{
	struct giong__http_framing *fr = arg;
	size_t n = 0;

	fr->codings++;
	if (giong__http_token_eq(t, len, "chunked")) {
		fr->chunked++;
		fr->chunked_last = true;
		return 0;
	}
	fr->chunked_last = false;
	while (n < len && giong__http_is_tchar((unsigned char)t[n]))
		n++;
	if (n == 0 || (n < len && !giong__http_ows(t[n]) && t[n] != ';'))
		fr->malformed_coding = true; /* not a transfer-coding at all */
	else
		fr->unknown_coding = true; /* gzip, identity, chunked;q=1, ...: none implemented */
	return 0;
}

static int conn_element(const char *t, size_t len, void *arg)
{
	struct giong__http_framing *fr = arg;

	if (giong__http_token_eq(t, len, "close"))
		fr->conn_close = true;
	else if (giong__http_token_eq(t, len, "keep-alive"))
		fr->conn_keep = true;
	return 0;
}

bool giong__http_framing_field(const struct giong_http_field *f, struct giong__http_framing *fr)
{
	const char *n = f->name;
	uint32_t nl = f->name_len;

	/* Every field of every head comes here: most are none of the three,
	 * which their length alone tells. */
	if (nl != 14 && nl != 17 && nl != 10)
		return false;
	if (giong__http_token_eq(n, nl, "content-length")) {
		/* Even two equal values are refused: RFC 9110 8.6 allows it, and it
		 * is the choice no smuggling can exploit. */
		if (++fr->lengths > 1 ||
		    content_length(f->value, f->value_len, &fr->content_length))
			fr->bad_length = true;
		return true;
	}
	if (giong__http_token_eq(n, nl, "transfer-encoding")) {
		fr->tes++;
		giong__http_each_element(f->value, f->value_len, te_element, fr);
		return true;
	}
	if (giong__http_token_eq(n, nl, "connection")) {
		giong__http_each_element(f->value, f->value_len, conn_element, fr);
		return true;
	}
	return false;
}

/* http-parser's second opinion: every callback must match what split() found. */
struct second {
	const struct giong_http_field *fields;
	uint32_t nfields;
	const char *target; /* the request target, or the reason phrase */
	size_t target_len;
	uint32_t field; /* fields begun */
	const char *name, *value;
	size_t name_len, value_len;
	bool in_value, mismatch, target_seen, headers_done, message_done;
};

static void field_end(struct second *s)
{
	const struct giong_http_field *f;
	size_t vl = s->value_len;

	if (!s->field)
		return;
	if (s->field > s->nfields) {
		s->mismatch = true;
		return;
	}
	f = &s->fields[s->field - 1];
	while (vl && giong__http_ows(s->value[vl - 1]))
		vl--; /* http-parser hands trailing OWS over */
	if (s->name != f->name || s->name_len != f->name_len ||
	    (vl && (s->value != f->value || vl != f->value_len)) || (!vl && f->value_len))
		s->mismatch = true;
}

/* on_url (requests) and on_status (responses): the one span of the first line. */
static int on_first_line(http_parser *p, const char *at, size_t len)
{
	struct second *s = p->data;

	if (!len)
		return 0; /* an empty reason phrase, if it reports one */
	if (s->target_seen || at != s->target || len != s->target_len)
		s->mismatch = true;
	s->target_seen = true;
	return 0;
}

/* Appends at[0..len) to the span (*base, *blen), which must stay contiguous. */
static void extend(struct second *s, const char **base, size_t *blen, const char *at, size_t len)
{
	if (!*base) {
		*base = at;
		*blen = len;
	} else if (at == *base + *blen) {
		*blen += len;
	} else {
		s->mismatch = true;
	}
}

static int on_header_field(http_parser *p, const char *at, size_t len)
{
	struct second *s = p->data;

	if (s->in_value || !s->field) {
		field_end(s);
		s->field++;
		s->name = s->value = NULL;
		s->name_len = s->value_len = 0;
		s->in_value = false;
	}
	extend(s, &s->name, &s->name_len, at, len);
	return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t len)
{
	struct second *s = p->data;

	s->in_value = true;
	extend(s, &s->value, &s->value_len, at, len);
	return 0;
}

static int on_headers_complete(http_parser *p)
{
	struct second *s = p->data;

	field_end(s);
	s->headers_done = true;
	return 1; /* no body: the head's bytes are all http-parser ever sees */
}

static int on_message_complete(http_parser *p)
{
	((struct second *)p->data)->message_done = true;
	return 0;
}

static const http_parser_settings settings = {
	.on_url = on_first_line,
	.on_status = on_first_line,
	.on_header_field = on_header_field,
	.on_header_value = on_header_value,
	.on_headers_complete = on_headers_complete,
	.on_message_complete = on_message_complete,
};

int giong__http_second_opinion(bool response, const char *head, size_t len,
			       const struct giong_http_field *fields, uint32_t nfields,
			       const char *target, size_t target_len,
			       struct giong__http_second_result *out)
{
	struct second s = {
		.fields = fields,
		.nfields = nfields,
		.target = target,
		.target_len = target_len,
	};
	http_parser p;
	size_t n;

	http_parser_init(&p, response ? HTTP_RESPONSE : HTTP_REQUEST);
	p.data = &s;
	n = http_parser_execute(&p, &settings, head, len);
	if (HTTP_PARSER_ERRNO(&p) == HPE_HEADER_OVERFLOW)
		return -431; /* a head limit above http-parser's own (80 KiB) */
	if (HTTP_PARSER_ERRNO(&p) != HPE_OK || n != len || !s.headers_done || !s.message_done ||
	    s.mismatch || s.field != nfields || (target_len && !s.target_seen))
		return -400;
	*out = (struct giong__http_second_result){
		.http_major = p.http_major,
		.http_minor = p.http_minor,
		.method = p.method,
		.status_code = p.status_code,
		.chunked = !!(p.flags & F_CHUNKED),
		.has_length = !!(p.flags & F_CONTENTLENGTH),
		.content_length = p.content_length,
	};
	return 0;
}
