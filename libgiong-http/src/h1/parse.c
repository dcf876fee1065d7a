/* SPDX-License-Identifier: MIT */
/* parse.c - the request head: our scanner, the semantic checks, http-parser's second
 * opinion where the head is not plain (parse.h says how they fit). */
#include <errno.h>
#include <string.h>

#include <http_parser.h>

#include "common/authority.h"
#include "h1/fast_head.h"
#include "h1/head.h"

enum scan_state {
	S_START = 0, /* before the request line: an empty line or a method */
	S_LEAD_LF,   /* CR of a leading empty line seen */
	S_METHOD,
	S_TARGET0, /* first byte of the target */
	S_TARGET,
	S_V0, /* "HTTP/d.d": S_V0 + i expects its i-th byte */
	S_V7 = S_V0 + 7,
	S_RL_CR, /* after the version: CR */
	S_RL_LF, /* LF of the request line */
	/* then the field section's (head.h) */
	S_LINE = GIONG__HTTP_S_LINE,
	S_NAME = GIONG__HTTP_S_NAME,
	S_VALUE = GIONG__HTTP_S_VALUE,
	S_DONE = GIONG__HTTP_S_DONE,
};

/* The methods http-parser knows, as its table names them (M-SEARCH included),
 * with their lengths: every head looks its method up here. */
static const struct {
	const char *name;
	size_t len;
} known_methods[] = {
#define XX(num, name, string) {#string, sizeof(#string) - 1},
	HTTP_METHOD_MAP(XX)
#undef XX
};

static bool method_known(const char *m, size_t len)
{
	for (size_t i = 0; i < sizeof(known_methods) / sizeof(known_methods[0]); i++)
		if (known_methods[i].len == len && !memcmp(known_methods[i].name, m, len))
			return true;
	return false;
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
			while (i < stop && giong__http_is_vchar(b[i]))
				i++;
		break;
	case S_NAME:
	case S_VALUE:
		i = giong__http_field_run(b, i, stop, s->state);
		break;
	default:
		break;
	}
	return i;
}

/*
 * The end of the request line at @i, s->state S_V0, when it is "HTTP/1.1" or
 * "HTTP/1.0" and CRLF, all ten bytes there and inside both limits: the loop
 * below would take them one dispatch each and come to the same state (or the
 * same 501) at the LF. -1 when it is anything else, for the loop to read.
 */
static int version_crlf(const unsigned char *b, size_t len, const struct giong_http_limits *lim,
			struct giong__http_scan *s, uint32_t i)
{
	/* the last byte the line's limit counts is the version's last digit */
	if (len - i < 10 || i + 10 > lim->head || i + 8 - s->rl_start > lim->request_line)
		return -1;
	if (memcmp(b + i, "HTTP/1.", 7) || (b[i + 7] != '1' && b[i + 7] != '0') ||
	    b[i + 8] != '\r' || b[i + 9] != '\n')
		return -1;
	s->vmajor = 1;
	s->vminor = b[i + 7] - '0';
	if (!method_known((const char *)b + s->rl_start, s->method_len))
		return -501;
	s->state = S_LINE;
	s->pos = i + 10;
	return 0;
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
		if (s->state == S_V0) {
			int r = version_crlf(b, len, lim, s, i);

			if (r == 0)
				continue;
			if (r < -1)
				return r;
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
				if (!giong__http_is_vchar(c))
					return -400;
				s->state = S_TARGET;
				break;
			case S_TARGET:
				if (c == ' ')
					s->state = S_V0;
				else if (c == '\r')
					return -400; /* no version (HTTP/0.9's form): malformed */
				else if (!giong__http_is_vchar(c))
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
		case S_RL_LF:
			if (c != '\n')
				return -400;
			if (s->vmajor != 1 || s->vminor > 1)
				return -505;
			if (!method_known((const char *)b + s->rl_start, s->method_len))
				return -501;
			s->state = S_LINE;
			break;
		default: {
			int r = giong__http_field_byte(s, c, i, lim->fields);

			if (r)
				return r; /* 1: the head is in */
			break;
		}
		}
		s->pos = i + 1;
	}
	return s->state == S_DONE ? 1 : 0;
}

/* Splits the validated head into h and fields (no check left to make on syntax). */
static void split(const char *b, const struct giong__http_scan *s, struct giong__http_head *h,
		  struct giong_http_field *fields)
{
	const char *p = b + s->rl_start, *end = b + s->pos;

	h->method = p;
	h->method_len = s->method_len;
	h->method_id = giong__http_method_id(p, s->method_len);
	p += s->method_len + 1;
	h->target = p;
	while (*p != ' ')
		p++;
	h->target_len = (uint32_t)(p - h->target);
	h->version_major = s->vmajor;
	h->version_minor = s->vminor;
	p += sizeof(" HTTP/d.d\r\n") - 1; /* the scanner saw exactly that */
	h->fields = fields;
	giong__http_split_fields(p, end, fields, &h->nfields);
}

static int expect_element(const char *t, size_t len, void *arg)
{
	bool *cont = arg;

	if (!giong__http_token_eq(t, len, "100-continue"))
		return -417;
	*cont = true;
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
	struct giong__http_framing fr = {0};
	unsigned hosts = 0;
	bool bad_expect = false;
	const char *host = NULL;
	uint32_t host_len = 0;
	bool http11 = h->version_minor == 1;
	int r;

	for (uint32_t i = 0; i < h->nfields; i++) {
		const struct giong_http_field *f = &h->fields[i];
		const char *n = f->name;
		uint32_t nl = f->name_len;

		if (giong__http_framing_field(f, &fr))
			continue;
		if (giong__http_token_eq(n, nl, "host")) {
			hosts++;
			host = f->value;
			host_len = f->value_len;
		} else if (giong__http_token_eq(n, nl, "expect")) {
			bool cont = false;

			if (giong__http_each_element(f->value, f->value_len, expect_element,
						     &cont) ||
			    !cont)
				bad_expect = true;
			else
				h->expect_continue = http11; /* RFC 9110 10.1.1: ignored in 1.0 */
		} else if (giong__http_token_eq(n, nl, "upgrade")) {
			h->upgrade = true;
		}
	}
	if (fr.bad_length || hosts > 1 || (http11 && hosts == 0))
		return -400;
	if (fr.tes) {
		if (!http11 || fr.lengths)
			return -400; /* RFC 9112 6.1 (1.0), 6.3 (with Content-Length) */
		/* RFC 9112 6.3: a request whose final coding is not chunked MUST get 400
		 * (gzip alone, identity, chunked;q=1); 501 is left for an unknown coding
		 * before a final chunked (6.1). */
		if (fr.malformed_coding || !fr.chunked_last || fr.chunked > 1)
			return -400;
		h->body = fr.unknown_coding ? GIONG__HTTP_BODY_NONE : GIONG__HTTP_BODY_CHUNKED;
	} else if (fr.lengths) {
		h->body = GIONG__HTTP_BODY_LENGTH;
		h->content_length = fr.content_length;
	}
	if ((r = target(h)))
		return r;
	if ((host_len && !giong__http_authority_valid(host, host_len)) ||
	    (h->host && !giong__http_authority_valid(h->host, h->host_len)))
		return -400; /* RFC 9112 3.2: Host, or the target's authority, not uri-host[:port] */
	if (fr.unknown_coding)
		return -501;
	if (h->form != GIONG__HTTP_ABSOLUTE_FORM && h->form != GIONG__HTTP_AUTHORITY_FORM) {
		h->host = host;
		h->host_len = host_len;
	}
	h->keep_alive = http11 ? !fr.conn_close : fr.conn_keep && !fr.conn_close;
	return bad_expect ? -417 : 0; /* after every 400 and 501 */
}

/* http-parser's second opinion (head.c), and what it must agree on here. */
static int second_opinion(const char *head, size_t len, const struct giong__http_head *h)
{
	struct giong__http_second_result o;
	const char *ms;
	int r;

	r = giong__http_second_opinion(false, head, len, h->fields, h->nfields, h->target,
				       h->target_len, &o);
	if (r)
		return r;
	ms = http_method_str((enum http_method)o.method);
	if (o.http_major != h->version_major || o.http_minor != h->version_minor ||
	    strlen(ms) != h->method_len || memcmp(ms, h->method, h->method_len))
		return -400;
	if (o.chunked != (h->body == GIONG__HTTP_BODY_CHUNKED))
		return -400;
	if (h->body == GIONG__HTTP_BODY_LENGTH &&
	    (!o.has_length || o.content_length != h->content_length))
		return -400;
	return 0;
}

/* Byte c is pchar (RFC 3986 3.3: unreserved, pct-encoded's "%", sub-delims, ":",
 * "@"), "/" or "?", which http-parser's URL states take as path or query in strict
 * builds and others alike ("#" never: a fragment). The table is fast_head.c's. */
static bool target_byte_plain(unsigned char c)
{
	return giong__http_byte_class[c] & GIONG__HTTP_B_TARGET;
}

/* No byte of b[0..len) above 0x7F: eight at a time. */
static bool ascii(const unsigned char *b, size_t len)
{
	uint64_t acc = 0, w;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, b + i, 8);
		acc |= w;
	}
	for (; i < len; i++)
		acc |= b[i];
	return !(acc & 0x8080808080808080ull);
}

/* A framing field's value as http-parser must read it: exactly @want (case aside)
 * with the CR right after it, as the value's span ends before trailing OWS. */
static bool value_exactly(const struct giong_http_field *f, const char *want)
{
	return giong__http_token_eq(f->value, f->value_len, want) && f->value[f->value_len] == '\r';
}

/* The field names whose values http-parser reads, in the order of special_name(). */
enum {
	NAME_OTHER,
	NAME_CONNECTION,
	NAME_CONTENT_LENGTH,
	NAME_TRANSFER_ENCODING,
	NAME_UPGRADE,
	NAME_PROXY_CONNECTION,
	NAME_LIKE, /* a name one of them begins, or that begins with one */
};

/*
 * Which of those @n[0..len) is (case aside). http-parser tells them apart
 * byte by byte as the name comes, and acts on a whole match before the name
 * has ended: after "Transfer-Encoding" it clears its chunked flag even when
 * the name goes on ("Transfer-Encodingx: y" after "Transfer-Encoding:
 * chunked" leaves it reading no chunked body; found by fuzz_http_request). So
 * a name that shares a whole prefix with one of them is not plain either.
 */
static int special_name(const char *n, uint32_t len)
{
	static const char *const names[] = {"connection", "content-length", "transfer-encoding",
					    "upgrade", "proxy-connection"};
	unsigned char first = (unsigned char)n[0] | 0x20;

	/* most names start with none of c, t, u, p: one comparison for them */
	if (first != 'c' && first != 't' && first != 'u' && first != 'p')
		return NAME_OTHER;
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		const char *m = names[k];
		uint32_t i = 0;

		/* names are tchar: "| 0x20" lowers a letter and turns no other
		 * tchar into a letter or into '-' */
		while (i < len && m[i] && ((unsigned char)n[i] | 0x20) == (unsigned char)m[i])
			i++;
		if (i == len || !m[i])
			return i == len && !m[i] ? NAME_CONNECTION + (int)k : NAME_LIKE;
	}
	return NAME_OTHER;
}

/* The plain head's rules on its method, version, form and fields, with its bytes
 * (the target's, obs-text) checked by the caller. */
static bool plain_shape(const struct giong__http_head *h, size_t len)
{
	if (len > GIONG__HTTP_PLAIN_HEAD_MAX)
		return false;
	if (h->method_id == GIONG_HTTP_OTHER || h->method_id == GIONG_HTTP_CONNECT ||
	    h->version_major != 1 || h->version_minor != 1 || h->form != GIONG__HTTP_ORIGIN_FORM)
		return false;
	for (uint32_t i = 0; i < h->nfields; i++) {
		const struct giong_http_field *f = &h->fields[i];

		switch (special_name(f->name, f->name_len)) {
		case NAME_OTHER:
			break;
		case NAME_CONNECTION:
			if (!value_exactly(f, "close") && !value_exactly(f, "keep-alive"))
				return false;
			break;
		case NAME_CONTENT_LENGTH:
			/* 18 digits stay below http-parser's overflow bound, about 1.8e18 * 10 */
			if (f->value_len > 18 || f->value[f->value_len] != '\r')
				return false;
			break;
		case NAME_TRANSFER_ENCODING:
			if (!value_exactly(f, "chunked"))
				return false;
			break;
		default:
			return false; /* Upgrade, Proxy-Connection, or a name like one */
		}
	}
	return true;
}

bool giong__http_head_plain(const struct giong__http_head *h, size_t len)
{
	if (!h || !h->method || !plain_shape(h, len))
		return false;
	for (uint32_t i = 0; i < h->target_len; i++)
		if (!target_byte_plain((unsigned char)h->target[i]))
			return false;
	/* obs-text anywhere (values are the only place left that may hold it) */
	return ascii((const unsigned char *)h->method, len);
}

/* A refusal: its status through @status, the return value an errno. */
static int refused(int *status, int r)
{
	if (status)
		*status = -r;
	return -EBADMSG;
}

int giong__http_parse_head(const char *buf, size_t len, const struct giong_http_limits *lim,
			   struct giong__http_scan *sc, struct giong__http_head *h,
			   struct giong_http_field *fields, int *status)
{
	return giong__http_parse_head_full(buf, len, lim, sc, h, fields, status, 0);
}

/* The fast pass (fast_head.h) on a head not begun: 1 with *@sc and *@out as the
 * scanner and split() would leave them, 0 to leave the head to the scanner. */
static int fast(const char *buf, size_t len, const struct giong_http_limits *lim,
		struct giong__http_scan *sc, struct giong__http_head *out,
		struct giong_http_field *fields, bool *target_plain)
{
	uint32_t method_len, n;

	if (sc->pos || sc->state != S_START)
		return 0;
	n = giong__http_fast_head((const unsigned char *)buf, len, lim, out, fields, &method_len,
				  target_plain);
	if (!n)
		return 0;
	*sc = (struct giong__http_scan){.pos = n,
					.method_len = method_len,
					.nfields = out->nfields,
					.state = S_DONE,
					.vmajor = out->version_major,
					.vminor = out->version_minor};
	return 1;
}

int giong__http_parse_head_full(const char *buf, size_t len, const struct giong_http_limits *lim,
				struct giong__http_scan *sc, struct giong__http_head *h,
				struct giong_http_field *fields, int *status, unsigned flags)
{
	size_t head_len;

	struct giong_http_limits defaults;
	struct giong__http_scan local = {0};
	struct giong__http_head out = {0};
	bool whole, target_plain = false, plain;
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
	whole = !(flags & GIONG__HTTP_PARSE_BYTE_SCANNER) &&
		fast(buf, len, lim, sc, &out, fields, &target_plain);
	if (!whole) {
		/* Below, the scanner's steps return minus the status of a refusal:
		 * they know no errno. Here it leaves through @status. */
		r = scan((const unsigned char *)buf, len, lim, sc);
		if (r < 0)
			return refused(status, r);
		if (r == 0)
			return 0;
		split(buf, sc, &out, fields);
	}
	if ((r = semantics(&out)))
		return refused(status, r);
	head_len = sc->pos - sc->rl_start;
	/* the fast pass saw the target's bytes and took no obs-text */
	plain = whole ? target_plain && plain_shape(&out, head_len)
		      : giong__http_head_plain(&out, head_len);
	if (((flags & GIONG__HTTP_PARSE_SECOND_ALWAYS) || !plain) &&
	    (r = second_opinion(buf + sc->rl_start, head_len, &out)))
		return refused(status, r);
	*h = out;
	return (int)sc->pos;
}
