/* SPDX-License-Identifier: MIT */
/*
 * reply_memo.c - replaying the last verified response head (reply_memo.h says
 * why that is sound and what it saves).
 */
#include <string.h>

#include "client/reply_memo.h"

/* @p, a span into @from, moved to the same offset in @to. */
static const char *moved(const char *p, const char *from, const char *to)
{
	return p ? to + (p - from) : NULL;
}

static bool fits(const struct giong__http_reply *r, int len)
{
	return (size_t)len <= GIONG__HTTP_MEMO_HEAD && r->nfields <= GIONG__HTTP_MEMO_FIELDS;
}

/* Remember the head buf[0..len) and its parse @r (spans into buf). */
static void remember(struct giong__http_reply_memo *m, const char *buf, int len, bool head_request,
		     const struct giong__http_reply *r)
{
	memcpy(m->buf, buf, (size_t)len);
	m->reply = *r;
	m->reply.reason = moved(r->reason, buf, m->buf);
	m->reply.fields = m->fields;
	for (uint32_t i = 0; i < r->nfields; i++) {
		m->fields[i] = r->fields[i];
		m->fields[i].name = moved(r->fields[i].name, buf, m->buf);
		m->fields[i].value = moved(r->fields[i].value, buf, m->buf);
	}
	m->head_request = head_request;
	m->len = (uint32_t)len;
}

/* The memo's answer with its spans in @buf. */
static int replay(struct giong__http_reply_memo *m, const char *buf, struct giong__http_reply *r,
		  struct giong_http_field *fields)
{
	*r = m->reply;
	r->reason = moved(m->reply.reason, m->buf, buf);
	r->fields = fields;
	for (uint32_t i = 0; i < m->reply.nfields; i++) {
		fields[i] = m->fields[i];
		fields[i].name = moved(m->fields[i].name, m->buf, buf);
		fields[i].value = moved(m->fields[i].value, m->buf, buf);
	}
	m->hits++;
	return (int)m->len;
}

int giong__http_parse_reply_memo(struct giong__http_reply_memo *m, const char *buf, size_t len,
				 const struct giong_http_limits *lim, bool head_request,
				 struct giong__http_scan *scan, struct giong__http_reply *r,
				 struct giong_http_field *fields)
{
	int n;

	/* The argument checks stay the parser's: a hit needs every argument valid. */
	if (m && m->len && buf && r && fields && len >= m->len && m->head_request == head_request &&
	    (!scan || scan->pos <= len) && !memcmp(buf, m->buf, m->len))
		return replay(m, buf, r, fields);
	n = giong__http_parse_reply(buf, len, lim, head_request, scan, r, fields);
	if (m && n > 0 && fits(r, n))
		remember(m, buf, n, head_request, r);
	return n;
}
