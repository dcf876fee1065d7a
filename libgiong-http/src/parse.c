/* SPDX-License-Identifier: MIT */
/* parse.c - the request head: our scanner, the semantic checks, http-parser's second
 * opinion (parse.h says how they fit). */
#include <errno.h>
#include <string.h>

#include <http_parser.h>

#include "parse.h"
#include "token.h"

enum scan_state {
	S_START = 0, /* before the request line: an empty line or a method */
	S_LEAD_LF,   /* CR of a leading empty line seen */
	S_METHOD,
	S_TARGET0, /* first byte of the target */
	S_TARGET,
	S_V0, /* "HTTP/d.d": S_V0 + i expects its i-th byte */
	S_V7 = S_V0 + 7,
	S_RL_CR,  /* after the version: CR */
	S_RL_LF,  /* LF of the request line */
	S_09_LF,  /* "method SP target CR": HTTP/0.9's line, 505 at its LF */
	S_LINE,   /* start of a field line, or of the empty line */
	S_NAME,   /* inside a field name */
	S_VALUE,  /* after the colon */
	S_VAL_LF, /* CR of a field line seen */
	S_END_LF, /* CR of the empty line seen */
	S_DONE,
};

static bool is_vchar(unsigned char c)
{
	return c >= 0x21 && c <= 0x7e;
}

/* field-vchar or SP/HTAB: VCHAR, obs-text (0x80-0xFF), SP, HTAB. */
static bool is_value_byte(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c + 32) : c;
}

bool giong__http_token_eq(const char *buf, size_t len, const char *lo)
{
	size_t n = strlen(lo);

	if (!buf || len != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (lower(buf[i]) != lo[i])
			return false;
	return true;
}

/* The methods http-parser knows, as its table names them (M-SEARCH included). */
static const char *const known_methods[] = {
#define XX(num, name, string) #string,
	HTTP_METHOD_MAP(XX)
#undef XX
};

static bool method_known(const char *m, size_t len)
{
	for (size_t i = 0; i < sizeof(known_methods) / sizeof(known_methods[0]); i++)
		if (strlen(known_methods[i]) == len && !memcmp(known_methods[i], m, len))
			return true;
	return false;
}

static int method_id(const char *m, size_t len)
{
	static const struct {
		const char *name;
		int id;
	} ids[] = {
		{"GET", GIONG_HTTP_GET},         {"HEAD", GIONG_HTTP_HEAD},
		{"POST", GIONG_HTTP_POST},       {"PUT", GIONG_HTTP_PUT},
		{"DELETE", GIONG_HTTP_DELETE},   {"CONNECT", GIONG_HTTP_CONNECT},
		{"OPTIONS", GIONG_HTTP_OPTIONS}, {"TRACE", GIONG_HTTP_TRACE},
		{"PATCH", GIONG_HTTP_PATCH},
	};
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		if (strlen(ids[i].name) == len && !memcmp(ids[i].name, m, len))
			return ids[i].id;
	return GIONG_HTTP_OTHER;
}

/*
 * Where the byte-by-byte loop below must look next: in the states that take
 * long runs of one class of byte (the method, the target, a field name, a
 * field value), skip the bytes that only continue the state, up to the
 * limits that a byte of the run could cross (so that the loop still sees
 * the byte that crosses them). The answer is the one the loop would give
 * byte by byte; this only spares it a dispatch per byte.
 */
static uint32_t run_ahead(const unsigned char *b, size_t len, const struct giong_http_limits *lim,
			  const struct giong__http_scan *s)
{
	uint32_t i = s->pos, stop = len < lim->head ? (uint32_t)len : lim->head;

	switch (s->state) {
	case S_METHOD:
	case S_TARGET:
		if (stop > s->rl_start + lim->request_line)
			stop = s->rl_start + lim->request_line;
		if (s->state == S_METHOD)
			while (i < stop && giong__http_is_tchar(b[i]))
				i++;
		else
			while (i < stop && is_vchar(b[i]))
				i++;
		break;
	case S_NAME:
		while (i < stop && giong__http_is_tchar(b[i]))
			i++;
		break;
	case S_VALUE:
		while (i < stop && is_value_byte(b[i]) && b[i] != '\r')
			i++;
		break;
	default:
		break;
	}
	return i;
}

/*
 * The scanner: from s->pos to len, one byte at a time. Returns 1 when the empty line
 * ending the head has been read (s->pos is the head's length), 0 for need more, or
 * minus a status. Decides at the first byte that shows a refusal.
 */
static int scan(const unsigned char *b, size_t len, const struct giong_http_limits *lim,
		struct giong__http_scan *s)
{
	static const char version[] = "HTTP/d.d";

	while (s->pos < len) {
		uint32_t i = run_ahead(b, len, lim, s);
		unsigned char c;

		if (i == len) {
			s->pos = i;
			break;
		}
		c = b[i];
		if (i >= lim->head)
			return -431; /* the head would be longer than the limit */
		switch (s->state) {
		case S_START:
			if (c == '\r') {
				s->state = S_LEAD_LF;
				break;
			}
			if (!giong__http_is_tchar(c))
				return -400; /* whitespace or garbage before the method */
			s->rl_start = i;
			s->state = S_METHOD;
			break;
		case S_LEAD_LF:
			if (c != '\n' || ++s->empty_lines > GIONG__HTTP_LEADING_EMPTY_MAX)
				return -400;
			s->state = S_START;
			break;
		case S_METHOD:
		case S_TARGET0:
		case S_TARGET:
		case S_V0:
		case S_V0 + 1:
		case S_V0 + 2:
		case S_V0 + 3:
		case S_V0 + 4:
		case S_V0 + 5:
		case S_V0 + 6:
		case S_V7:
		case S_RL_CR:
			if (c != '\r' && i - s->rl_start >= lim->request_line)
				return -414;
			switch (s->state) {
			case S_METHOD:
				if (c == ' ') {
					s->method_len = i - s->rl_start;
					s->state = S_TARGET0;
				} else if (!giong__http_is_tchar(c)) {
					return -400;
				}
				break;
			case S_TARGET0:
				if (!is_vchar(c))
					return -400;
				s->state = S_TARGET;
				break;
			case S_TARGET:
				if (c == ' ')
					s->state = S_V0;
				else if (c == '\r')
					s->state = S_09_LF;
				else if (!is_vchar(c))
					return -400;
				break;
			case S_RL_CR:
				if (c != '\r')
					return -400; /* HTTP/1.10, a trailing SP, ... */
				s->state = S_RL_LF;
				break;
			default: {
				char want = version[s->state - S_V0];

				if (want == 'd') {
					if (c < '0' || c > '9')
						return -400;
					if (s->state == S_V0 + 5)
						s->vmajor = c - '0';
					else
						s->vminor = c - '0';
				} else if (c != (unsigned char)want) {
					return -400;
				}
				s->state++;
				break;
			}
			}
			break;
		case S_09_LF:
		case S_RL_LF:
			if (c != '\n')
				return -400;
			if (s->state == S_09_LF || s->vmajor != 1 || s->vminor > 1)
				return -505;
			if (!method_known((const char *)b + s->rl_start, s->method_len))
				return -501;
			s->state = S_LINE;
			break;
		case S_LINE:
			if (c == '\r') {
				s->state = S_END_LF;
				break;
			}
			if (!giong__http_is_tchar(c))
				return -400; /* obs-fold, whitespace, an empty name, a bare LF */
			if (s->nfields >= lim->fields)
				return -431;
			s->nfields++;
			s->state = S_NAME;
			break;
		case S_NAME:
			if (c == ':')
				s->state = S_VALUE;
			else if (!giong__http_is_tchar(c))
				return -400; /* SP or HTAB before the colon, a line with no colon */
			break;
		case S_VALUE:
			if (c == '\r')
				s->state = S_VAL_LF;
			else if (!is_value_byte(c))
				return -400; /* NUL, a CTL, DEL, a bare LF */
			break;
		case S_VAL_LF:
			if (c != '\n')
				return -400; /* a bare CR */
			s->state = S_LINE;
			break;
		case S_END_LF:
			if (c != '\n')
				return -400;
			s->state = S_DONE;
			s->pos = i + 1;
			return 1;
		default:
			return -400;
		}
		s->pos = i + 1;
	}
	return s->state == S_DONE ? 1 : 0;
}

static bool ows(char c)
{
	return c == ' ' || c == '\t';
}

/* Splits the validated head into h and fields (no check left to make on syntax). */
static void split(const char *b, const struct giong__http_scan *s, struct giong__http_head *h,
		  struct giong__http_field *fields)
{
	const char *p = b + s->rl_start, *end = b + s->pos;

	h->method = p;
	h->method_len = s->method_len;
	h->method_id = method_id(p, s->method_len);
	p += s->method_len + 1;
	h->target = p;
	while (*p != ' ')
		p++;
	h->target_len = (uint32_t)(p - h->target);
	h->version_major = s->vmajor;
	h->version_minor = s->vminor;
	p = (const char *)memchr(p, '\n', (size_t)(end - p)) + 1;
	h->fields = fields;
	h->nfields = 0;
	while (*p != '\r') {
		struct giong__http_field *f = &fields[h->nfields++];
		const char *eol = memchr(p, '\r', (size_t)(end - p)), *v;

		f->name = p;
		while (*p != ':')
			p++;
		f->name_len = (uint32_t)(p - f->name);
		v = p + 1;
		while (v < eol && ows(*v))
			v++;
		while (eol > v && ows(eol[-1]))
			eol--;
		f->value = v;
		f->value_len = (uint32_t)(eol - v);
		p = (const char *)memchr(v, '\n', (size_t)(end - v)) + 1;
	}
}

/* Calls fn(token, len, arg) for each element of a comma-separated list (#rule, RFC 9110
 * 5.6.1: empty elements are allowed and skipped); stops at fn's non-zero return. */
static int each_element(const char *v, uint32_t len, int (*fn)(const char *, size_t, void *),
			void *arg)
{
	const char *p = v, *end = v + len;

	while (p < end) {
		const char *e = memchr(p, ',', (size_t)(end - p)), *q;
		int r;

		if (!e)
			e = end;
		q = e;
		while (p < q && ows(*p))
			p++;
		while (q > p && ows(q[-1]))
			q--;
		if (q > p && (r = fn(p, (size_t)(q - p), arg)))
			return r;
		p = e + 1;
	}
	return 0;
}

struct te_state {
	unsigned codings, chunked; /* elements seen, of which chunked */
	bool chunked_last, unknown, malformed;
};

static int te_element(const char *t, size_t len, void *arg)
{
	struct te_state *te = arg;
	size_t n = 0;

	te->codings++;
	if (giong__http_token_eq(t, len, "chunked")) {
		te->chunked++;
		te->chunked_last = true;
		return 0;
	}
	te->chunked_last = false;
	while (n < len && giong__http_is_tchar((unsigned char)t[n]))
		n++;
	if (n == 0 || (n < len && !ows(t[n]) && t[n] != ';'))
		te->malformed = true; /* not a transfer-coding at all */
	else
		te->unknown = true; /* gzip, identity, chunked;q=1, ...: none implemented */
	return 0;
}

struct conn_state {
	bool close, keep_alive;
};

static int conn_element(const char *t, size_t len, void *arg)
{
	struct conn_state *c = arg;

	if (giong__http_token_eq(t, len, "close"))
		c->close = true;
	else if (giong__http_token_eq(t, len, "keep-alive"))
		c->keep_alive = true;
	return 0;
}

static int expect_element(const char *t, size_t len, void *arg)
{
	bool *cont = arg;

	if (!giong__http_token_eq(t, len, "100-continue"))
		return -417;
	*cont = true;
	return 0;
}

/* Content-Length's value: 1*DIGIT, no overflow (RFC 9110 8.6). */
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

static const char slash[] = "/";

/* The target's form, its path and query, its authority (absolute and authority form). */
static int target(struct giong__http_head *h)
{
	struct http_parser_url u;
	const char *t = h->target, *q;
	uint32_t len = h->target_len;

	if (memchr(t, '#', len))
		return -400; /* a fragment is never sent in a request target */
	if (len > UINT16_MAX && t[0] != '/')
		return -400; /* past http_parser_url's 16-bit offsets: no such authority */
	if (h->method_id == GIONG_HTTP_CONNECT) {
		http_parser_url_init(&u);
		if (http_parser_parse_url(t, len, 1, &u) ||
		    u.field_set != ((1u << UF_HOST) | (1u << UF_PORT)))
			return -400; /* CONNECT takes authority-form, host:port, only */
		h->form = GIONG__HTTP_AUTHORITY_FORM;
		h->host = t;
		h->host_len = len;
		return 0;
	}
	if (len == 1 && t[0] == '*') {
		if (h->method_id != GIONG_HTTP_OPTIONS)
			return -400;
		h->form = GIONG__HTTP_ASTERISK_FORM;
		return 0;
	}
	if (t[0] == '/') {
		h->form = GIONG__HTTP_ORIGIN_FORM;
		q = memchr(t, '?', len);
		h->path = t;
		h->path_len = q ? (uint32_t)(q - t) : len;
		if (q) {
			h->query = q + 1;
			h->query_len = len - h->path_len - 1;
		}
		return 0;
	}
	http_parser_url_init(&u);
	if (http_parser_parse_url(t, len, 0, &u) || !(u.field_set & (1u << UF_SCHEMA)) ||
	    !(u.field_set & (1u << UF_HOST)) || (u.field_set & (1u << UF_USERINFO)))
		return -400;
	if (!giong__http_token_eq(t + u.field_data[UF_SCHEMA].off, u.field_data[UF_SCHEMA].len,
				  "http") &&
	    !giong__http_token_eq(t + u.field_data[UF_SCHEMA].off, u.field_data[UF_SCHEMA].len,
				  "https"))
		return -400;
	h->form = GIONG__HTTP_ABSOLUTE_FORM;
	/* The authority: from the end of "scheme://" to the path or the query, the port
	 * and an IPv6 literal's brackets included (no userinfo: refused above). */
	h->host = t + u.field_data[UF_SCHEMA].off + u.field_data[UF_SCHEMA].len + 3;
	h->host_len = 0;
	while (h->host + h->host_len < t + len && h->host[h->host_len] != '/' &&
	       h->host[h->host_len] != '?')
		h->host_len++;
	if (u.field_set & (1u << UF_PATH)) {
		h->path = t + u.field_data[UF_PATH].off;
		h->path_len = u.field_data[UF_PATH].len;
	} else {
		h->path = slash;
		h->path_len = 1;
	}
	if (u.field_set & (1u << UF_QUERY)) {
		h->query = t + u.field_data[UF_QUERY].off;
		h->query_len = u.field_data[UF_QUERY].len;
	}
	return 0;
}

/* Framing, Host, Connection, Expect: RFC 9112 3.2, 6, 9.3; RFC 9110 7.2, 8.6, 10.1.1. */
static int semantics(struct giong__http_head *h)
{
	struct te_state te = {0};
	struct conn_state conn = {0};
	unsigned hosts = 0, lengths = 0, tes = 0;
	bool bad_length = false, bad_expect = false;
	const char *host = NULL;
	uint32_t host_len = 0;
	bool http11 = h->version_minor == 1;
	int r;

	for (uint32_t i = 0; i < h->nfields; i++) {
		const struct giong__http_field *f = &h->fields[i];
		const char *n = f->name;
		uint32_t nl = f->name_len;

		if (giong__http_token_eq(n, nl, "host")) {
			hosts++;
			host = f->value;
			host_len = f->value_len;
		} else if (giong__http_token_eq(n, nl, "content-length")) {
			/* Even two equal values are refused: RFC 9110 8.6 allows it, and it
			 * is the choice no smuggling can exploit. */
			if (++lengths > 1 ||
			    content_length(f->value, f->value_len, &h->content_length))
				bad_length = true;
		} else if (giong__http_token_eq(n, nl, "transfer-encoding")) {
			tes++;
			each_element(f->value, f->value_len, te_element, &te);
		} else if (giong__http_token_eq(n, nl, "connection")) {
			each_element(f->value, f->value_len, conn_element, &conn);
		} else if (giong__http_token_eq(n, nl, "expect")) {
			bool cont = false;

			if (each_element(f->value, f->value_len, expect_element, &cont) || !cont)
				bad_expect = true;
			else
				h->expect_continue = http11; /* RFC 9110 10.1.1: ignored in 1.0 */
		} else if (giong__http_token_eq(n, nl, "upgrade")) {
			h->upgrade = true;
		}
	}
	if (bad_length || hosts > 1 || (http11 && hosts == 0))
		return -400;
	if (tes) {
		if (!http11 || lengths)
			return -400; /* RFC 9112 6.1 (1.0), 6.3 (with Content-Length) */
		/* RFC 9112 6.3: a request whose final coding is not chunked MUST get 400
		 * (gzip alone, identity, chunked;q=1); 501 is left for an unknown coding
		 * before a final chunked (6.1). */
		if (te.malformed || !te.chunked_last || te.chunked > 1)
			return -400;
		h->body = te.unknown ? GIONG__HTTP_BODY_NONE : GIONG__HTTP_BODY_CHUNKED;
	} else if (lengths) {
		h->body = GIONG__HTTP_BODY_LENGTH;
	}
	if ((r = target(h)))
		return r;
	if (te.unknown)
		return -501;
	if (h->form != GIONG__HTTP_ABSOLUTE_FORM && h->form != GIONG__HTTP_AUTHORITY_FORM) {
		h->host = host;
		h->host_len = host_len;
	}
	h->keep_alive = http11 ? !conn.close : conn.keep_alive && !conn.close;
	return bad_expect ? -417 : 0; /* after every 400 and 501 */
}

/* http-parser's second opinion: every callback must match what split() found. */
struct second {
	const struct giong__http_head *h;
	uint32_t field; /* fields begun */
	const char *name, *value;
	size_t name_len, value_len;
	bool in_value, mismatch, headers_done, message_done;
};

static void field_end(struct second *s)
{
	const struct giong__http_field *f;
	size_t vl = s->value_len;

	if (!s->field)
		return;
	if (s->field > s->h->nfields) {
		s->mismatch = true;
		return;
	}
	f = &s->h->fields[s->field - 1];
	while (vl && ows(s->value[vl - 1]))
		vl--; /* http-parser hands trailing OWS over */
	if (s->name != f->name || s->name_len != f->name_len ||
	    (vl && (s->value != f->value || vl != f->value_len)) || (!vl && f->value_len))
		s->mismatch = true;
}

static int on_url(http_parser *p, const char *at, size_t len)
{
	struct second *s = p->data;

	if (at != s->h->target || len != s->h->target_len)
		s->mismatch = true;
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
	.on_url = on_url,
	.on_header_field = on_header_field,
	.on_header_value = on_header_value,
	.on_headers_complete = on_headers_complete,
	.on_message_complete = on_message_complete,
};

static int second_opinion(const char *head, size_t len, const struct giong__http_head *h)
{
	struct second s = {.h = h};
	const char *ms;
	http_parser p;
	size_t n;

	http_parser_init(&p, HTTP_REQUEST);
	p.data = &s;
	n = http_parser_execute(&p, &settings, head, len);
	if (HTTP_PARSER_ERRNO(&p) == HPE_HEADER_OVERFLOW)
		return -431; /* a head limit above http-parser's own (80 KiB) */
	if (HTTP_PARSER_ERRNO(&p) != HPE_OK || n != len || !s.headers_done || !s.message_done ||
	    s.mismatch || s.field != h->nfields)
		return -400;
	ms = http_method_str((enum http_method)p.method);
	if (p.http_major != h->version_major || p.http_minor != h->version_minor ||
	    strlen(ms) != h->method_len || memcmp(ms, h->method, h->method_len))
		return -400;
	if (!!(p.flags & F_CHUNKED) != (h->body == GIONG__HTTP_BODY_CHUNKED))
		return -400;
	if (h->body == GIONG__HTTP_BODY_LENGTH &&
	    (!(p.flags & F_CONTENTLENGTH) || p.content_length != h->content_length))
		return -400;
	return 0;
}

int giong__http_parse_head(const char *buf, size_t len, const struct giong_http_limits *lim,
			   struct giong__http_scan *sc, struct giong__http_head *h,
			   struct giong__http_field *fields)
{
	struct giong_http_limits defaults;
	struct giong__http_scan local = {0};
	struct giong__http_head out = {0};
	int r;

	if ((!buf && len) || !h || !fields)
		return -EINVAL;
	if (!lim) {
		giong_http_limits_init(&defaults);
		lim = &defaults;
	}
	if (!sc)
		sc = &local;
	if (lim->head > INT32_MAX || lim->request_line > INT32_MAX)
		return -EINVAL; /* the length must fit the return value */
	if (len > UINT32_MAX)
		len = UINT32_MAX; /* past any head limit: the scanner refuses before */
	if (sc->pos > len)
		return -EINVAL; /* the buffer lost bytes it had */
	r = scan((const unsigned char *)buf, len, lim, sc);
	if (r <= 0)
		return r;
	split(buf, sc, &out, fields);
	if ((r = semantics(&out)))
		return r;
	if ((r = second_opinion(buf + sc->rl_start, sc->pos - sc->rl_start, &out)))
		return r;
	*h = out;
	return (int)sc->pos;
}
