/* SPDX-License-Identifier: MIT */
/* reply.c - the response head (reply.h): the status line's scanner, then the
 * field section, framing and second opinion shared with requests (head.h). */
#include <errno.h>
#include <string.h>

#include "h1/head.h"
#include "h1/reply.h"

enum reply_state {
	R_V0 = 0, /* "HTTP/d.d": R_V0 + i expects its i-th byte */
	R_V7 = R_V0 + 7,
	R_SP1,  /* the SP after the version */
	R_CODE, /* R_CODE + i: the i-th digit of the status */
	R_SP2 = R_CODE + 3,
	R_REASON, /* reason bytes, to the CR */
	R_LF,     /* LF of the status line */
};

/* The scanner of the status line, then of the fields (head.h). The status
 * code is kept in s->method_len while it is read. 1 done, 0 more, -status. */
static int scan(const unsigned char *b, size_t len, const struct giong_http_limits *lim,
		struct giong__http_scan *s)
{
	static const char version[] = "HTTP/d.d";

	while (s->pos < len) {
		uint32_t i = s->pos, stop = len < lim->head ? (uint32_t)len : lim->head;
		unsigned char c;
		int r;

		if (s->state >= GIONG__HTTP_S_LINE)
			i = giong__http_field_run(b, i, stop, s->state);
		else if (s->state == R_REASON)
			while (i < stop && i < lim->request_line &&
			       giong__http_is_value_byte(b[i]) && b[i] != '\r')
				i++;
		if (i == len) {
			s->pos = i;
			break;
		}
		c = b[i];
		if (i >= lim->head)
			return -431;
		if (s->state >= GIONG__HTTP_S_LINE) {
			if ((r = giong__http_field_byte(s, c, i, lim->fields)))
				return r; /* 1: the head is in */
			s->pos = i + 1;
			continue;
		}
		if (c != '\r' && i >= lim->request_line)
			return -431; /* the status line is longer than a request line may be */
		if (s->state <= R_V7) {
			char want = version[s->state - R_V0];

			if (want == 'd') {
				if (c < '0' || c > '9')
					return -400;
				if (s->state == R_V0 + 5)
					s->vmajor = c - '0';
				else
					s->vminor = c - '0';
			} else if (c != (unsigned char)want) {
				return -400;
			}
			s->state++;
		} else if (s->state == R_SP1 || s->state == R_SP2) {
			if (c != ' ')
				return -400;
			if (s->state == R_SP1 && (s->vmajor != 1 || s->vminor > 1))
				return -505;
			s->state++;
		} else if (s->state < R_SP2) {
			if (c < '0' || c > '9' || (s->state == R_CODE && (c < '1' || c > '5')))
				return -400; /* RFC 9110 15: 100..599 */
			s->method_len = s->method_len * 10 + (uint32_t)(c - '0');
			s->state++;
		} else if (s->state == R_REASON) {
			if (c != '\r')
				return -400; /* a CTL in the reason, a bare LF */
			s->state = R_LF;
		} else if (s->state == R_LF) {
			if (c != '\n')
				return -400;
			s->state = GIONG__HTTP_S_LINE;
		} else {
			return -400;
		}
		s->pos = i + 1;
	}
	return s->state == GIONG__HTTP_S_DONE ? 1 : 0;
}

/* RFC 9112 6.3, as reply.h says; what the fields say of the framing in *@frp
 * (zeroed by the caller), for the second opinion. */
static int framing(struct giong__http_reply *r, bool head_request, struct giong__http_framing *frp)
{
	struct giong__http_framing fr = {0};
	bool http11 = r->version_minor == 1, bodiless;

	for (uint32_t i = 0; i < r->nfields; i++)
		giong__http_framing_field(&r->fields[i], &fr);
	*frp = fr;
	if (fr.bad_length)
		return -400;
	if (fr.tes && (fr.lengths || !http11 || fr.malformed_coding || fr.unknown_coding ||
		       fr.chunked != 1 || !fr.chunked_last))
		return -400;
	if ((r->status < 200 || r->status == 204) && (fr.tes || fr.content_length))
		return -400; /* RFC 9110 8.6, RFC 9112 6.1: never sent with those */
	r->keep_alive = http11 ? !fr.conn_close : fr.conn_keep && !fr.conn_close;
	bodiless = head_request || r->status < 200 || r->status == 204 || r->status == 304;
	if (bodiless) {
		r->body = GIONG__HTTP_REPLY_NONE;
	} else if (fr.tes) {
		r->body = GIONG__HTTP_REPLY_CHUNKED;
	} else if (fr.lengths) {
		r->body = GIONG__HTTP_REPLY_LENGTH;
		r->content_length = fr.content_length;
	} else {
		r->body = GIONG__HTTP_REPLY_CLOSE;
		r->keep_alive = false;
	}
	return 0;
}

/* http-parser's word on the same bytes (head.c): it must agree with ours, and
 * with what framing() read of the fields (@fr: read once, for both). */
static int second_opinion(const char *head, size_t len, const struct giong__http_reply *r,
			  const struct giong__http_framing *frp)
{
	const struct giong__http_framing fr = *frp;
	struct giong__http_second_result o;
	int e;

	e = giong__http_second_opinion(true, head, len, r->fields, r->nfields, r->reason,
				       r->reason_len, &o);
	if (e)
		return e;
	if (o.http_major != 1 || o.http_minor != r->version_minor ||
	    o.status_code != (unsigned)r->status || o.chunked != (fr.tes != 0) ||
	    o.has_length != (fr.lengths != 0) ||
	    (fr.lengths && o.content_length != fr.content_length))
		return -400;
	return 0;
}

/* A refused head as an errno: -EMSGSIZE past a limit (431), else -EBADMSG. */
static int refused(int status)
{
	return status == -431 ? -EMSGSIZE : -EBADMSG;
}

int giong__http_parse_reply(const char *buf, size_t len, const struct giong_http_limits *lim,
			    bool head_request, struct giong__http_scan *sc,
			    struct giong__http_reply *r, struct giong_http_field *fields)
{
	struct giong_http_limits defaults;
	struct giong__http_scan local = {0};
	struct giong__http_reply out = {0};
	struct giong__http_framing fr;
	const char *p, *eol;
	int e;

	if ((!buf && len) || !r || !fields)
		return -EINVAL;
	if (!lim) {
		giong_http_limits_init(&defaults);
		lim = &defaults;
	}
	if (!sc)
		sc = &local;
	if (lim->head > INT32_MAX)
		return -EINVAL; /* the length must fit the return value */
	if (len > UINT32_MAX)
		len = UINT32_MAX;
	if (sc->pos > len)
		return -EINVAL;
	/* Below, the scanner's steps return minus the status a server would
	 * answer (400, 431, 505): they know no errno. Here it becomes one. */
	e = scan((const unsigned char *)buf, len, lim, sc);
	if (e < 0)
		return refused(e);
	if (e == 0)
		return 0;
	out.status = (int)sc->method_len;
	out.version_minor = sc->vminor;
	/* "HTTP/1.1 200 " is 13 bytes; the reason runs to the CR. */
	p = buf + 13;
	eol = memchr(p, '\r', sc->pos - 13);
	out.reason = p;
	out.reason_len = (uint32_t)(eol - p);
	out.fields = fields;
	giong__http_split_fields(eol + 2, buf + sc->pos, fields, &out.nfields);
	if ((e = framing(&out, head_request, &fr)) || (e = second_opinion(buf, sc->pos, &out, &fr)))
		return refused(e);
	*r = out;
	return (int)sc->pos;
}
