/* SPDX-License-Identifier: MIT */
/* fast_head.c - the common request head in one pass (fast_head.h says when, and why). */
#include <string.h>

#include <giong/http/method.h>

#include "h1/fast_head.h"

#define ALNUM(c)                                                                                   \
	(((c) >= '0' && (c) <= '9') || ((c) >= 'A' && (c) <= 'Z') || ((c) >= 'a' && (c) <= 'z'))
#define TCHAR(c)                                                                                   \
	(ALNUM(c) || (c) == '!' || (c) == '#' || (c) == '$' || (c) == '%' || (c) == '&' ||         \
	 (c) == '\'' || (c) == '*' || (c) == '+' || (c) == '-' || (c) == '.' || (c) == '^' ||      \
	 (c) == '_' || (c) == '`' || (c) == '|' || (c) == '~')
/* parse.c's plain target bytes: unreserved, "%", sub-delims, ":", "@", "/", "?" */
#define TARGET(c)                                                                                  \
	(ALNUM(c) || (c) == '-' || (c) == '.' || (c) == '_' || (c) == '~' || (c) == '%' ||         \
	 (c) == '!' || (c) == '$' || (c) == '&' || (c) == '\'' || (c) == '(' || (c) == ')' ||      \
	 (c) == '*' || (c) == '+' || (c) == ',' || (c) == ';' || (c) == '=' || (c) == ':' ||       \
	 (c) == '@' || (c) == '/' || (c) == '?')
#define CLASS(c)                                                                                   \
	((TCHAR(c) ? GIONG__HTTP_B_TCHAR : 0) |                                                    \
	 ((c) >= 0x21 && (c) <= 0x7e ? GIONG__HTTP_B_VCHAR : 0) |                                  \
	 (TARGET(c) ? GIONG__HTTP_B_TARGET : 0) |                                                  \
	 ((c) == '\t' || ((c) >= 0x20 && (c) <= 0x7e) ? GIONG__HTTP_B_VALUE : 0))
#define C4(c) CLASS(c), CLASS((c) + 1), CLASS((c) + 2), CLASS((c) + 3)
#define C16(c) C4(c), C4((c) + 4), C4((c) + 8), C4((c) + 12)
#define C64(c) C16(c), C16((c) + 16), C16((c) + 32), C16((c) + 48)

const uint8_t giong__http_byte_class[256] = {C64(0), C64(64), C64(128), C64(192)};

/* The first byte from @i below @end outside @class. */
static inline uint32_t run(const unsigned char *b, uint32_t i, uint32_t end, uint8_t class)
{
	while (i < end && (giong__http_byte_class[b[i]] & class))
		i++;
	return i;
}

static inline bool ows(unsigned char c)
{
	return c == ' ' || c == '\t';
}

/* The field lines from @i to the empty line, which must end below @end: into @fields
 * (at most @max) as split_fields() would. The head's length, or 0. */
static uint32_t field_lines(const unsigned char *b, uint32_t i, uint32_t end, uint32_t max,
			    struct giong_http_field *fields, uint32_t *nfields)
{
	uint32_t n = 0;

	for (;;) {
		struct giong_http_field *f;
		uint32_t name = i, v, e;

		if (i + 1 >= end)
			return 0; /* not all here, or the head limit: the scanner's */
		if (b[i] == '\r') {
			if (b[i + 1] != '\n')
				return 0;
			*nfields = n;
			return i + 2;
		}
		i = run(b, i, end, GIONG__HTTP_B_TCHAR);
		if (i == name || i >= end || b[i] != ':' || n >= max)
			return 0;
		f = &fields[n++];
		f->name = (const char *)b + name;
		f->name_len = i - name;
		for (i++; i < end && ows(b[i]); i++)
			;
		v = i;
		i = run(b, i, end, GIONG__HTTP_B_VALUE);
		if (i + 1 >= end || b[i] != '\r' || b[i + 1] != '\n')
			return 0; /* a CTL, DEL, obs-text, a bare CR, or not all here */
		for (e = i; e > v && ows(b[e - 1]); e--)
			;
		f->value = (const char *)b + v;
		f->value_len = e - v;
		i += 2;
	}
}

uint32_t giong__http_fast_head(const unsigned char *b, size_t len,
			       const struct giong_http_limits *lim, struct giong__http_head *h,
			       struct giong_http_field *fields, uint32_t *method_len,
			       bool *target_plain)
{
	/* the scanner refuses a byte at or past lim->head: stop before */
	uint32_t end = len < lim->head ? (uint32_t)len : lim->head, i, target, n, head_len;
	uint8_t acc = GIONG__HTTP_B_TARGET;
	int id;

	i = run(b, 0, end, GIONG__HTTP_B_TCHAR);
	if (i == 0 || i + 1 >= end || b[i] != ' ' || b[i + 1] != '/')
		return 0; /* leading empty lines, no method, not origin-form, ... */
	id = giong__http_method_id((const char *)b, i);
	if (id == GIONG_HTTP_OTHER)
		return 0; /* http-parser may still know it (method_known()): the scanner's */
	n = i;
	target = ++i;
	for (; i < end && (giong__http_byte_class[b[i]] & GIONG__HTTP_B_VCHAR); i++)
		acc &= giong__http_byte_class[b[i]];
	/* " HTTP/1.d" CRLF; the line's limit counts the bytes to the version's last digit */
	if (end - i < 11 || b[i] != ' ' || memcmp(b + i + 1, "HTTP/1.", 7) ||
	    (b[i + 8] != '0' && b[i + 8] != '1') || b[i + 9] != '\r' || b[i + 10] != '\n' ||
	    i + 9 > lim->request_line)
		return 0;
	head_len = field_lines(b, i + 11, end, lim->fields, fields, &h->nfields);
	if (!head_len)
		return 0;
	h->method = (const char *)b;
	h->method_len = n;
	h->method_id = id;
	h->target = (const char *)b + target;
	h->target_len = i - target;
	h->version_major = 1;
	h->version_minor = (uint8_t)(b[i + 8] - '0');
	h->fields = fields;
	*method_len = n;
	*target_plain = acc != 0;
	return head_len;
}
