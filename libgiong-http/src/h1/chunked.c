/* SPDX-License-Identifier: MIT */
/* chunked.c - the chunked-body decoder (chunked.h). */
#include <errno.h>
#include <string.h>

#include "h1/chunked.h"
#include "common/token.h"

enum {
	C_SIZE0,   /* the first hex digit of a size */
	C_SIZE,    /* more digits, or what ends them */
	C_BWS,     /* SP/HTAB after the size: only ';' may follow */
	C_EXT,     /* extensions, skipped to the CR */
	C_SIZE_LF, /* CR of the size line seen */
	C_DATA,
	C_DATA_CR,
	C_DATA_LF,
	C_TLINE,  /* start of a trailer line, or of the final empty line */
	C_TNAME,  /* in a trailer field's name */
	C_TVALUE, /* after its colon */
	C_TLF,    /* CR of a trailer line seen */
	C_END_LF, /* CR of the final empty line seen */
	C_DONE,
};

static int hex(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int giong__http_chunked_init(struct giong__http_chunked *c, const struct giong_http_limits *lim)
{
	struct giong_http_limits d;

	if (!c)
		return -EINVAL;
	if (!lim) {
		giong_http_limits_init(&d);
		lim = &d;
	}
	*c = (struct giong__http_chunked){.body_max = lim->body, .trailers_max = lim->head};
	return 0;
}

/* Refuse the body with @status (400, 413, 431): kept in c->error, sticky. */
static int fail(struct giong__http_chunked *c, int status)
{
	c->error = status;
	return -EBADMSG;
}

int giong__http_chunked_feed(struct giong__http_chunked *c, const char *buf, size_t len,
			     size_t *used, size_t *data_off, size_t *data_len)
{
	const unsigned char *b = (const unsigned char *)buf;
	size_t i = 0;

	if (!c || !used || !data_off || !data_len || (!buf && len))
		return -EINVAL;
	*used = 0;
	*data_off = *data_len = 0;
	if (c->error)
		return -EBADMSG;
	if (c->state == C_DONE)
		return GIONG__HTTP_CHUNKED_DONE;
	while (i < len) {
		unsigned char ch = b[i];
		int d;

		if (c->state <= C_SIZE_LF && ch != '\r' && ch != '\n' &&
		    ++c->line > GIONG__HTTP_CHUNK_LINE_MAX) {
			*used = i;
			return fail(c, 400);
		}
		if (c->state >= C_TLINE && c->state < C_DONE && ++c->trailers > c->trailers_max) {
			*used = i;
			return fail(c, 431);
		}
		switch (c->state) {
		case C_SIZE0:
		case C_SIZE:
			if ((d = hex(ch)) >= 0) {
				if (c->size > (UINT64_MAX >> 4)) {
					*used = i;
					return fail(c, 400); /* overflow */
				}
				c->size = c->size << 4 | (uint64_t)d;
				c->state = C_SIZE;
				break;
			}
			if (c->state == C_SIZE0)
				goto bad; /* no digit: "0x", a sign, SP, an empty line */
			if (ch == '\r')
				c->state = C_SIZE_LF;
			else if (ch == ';')
				c->state = C_EXT;
			else if (ch == ' ' || ch == '\t')
				c->state = C_BWS;
			else
				goto bad; /* "0x3", "3 xyz", a bare LF */
			break;
		case C_BWS:
			if (ch == ';')
				c->state = C_EXT;
			else if (ch != ' ' && ch != '\t')
				goto bad; /* only extensions may follow the BWS */
			break;
		case C_EXT:
			if (ch == '\r')
				c->state = C_SIZE_LF;
			else if (ch != '\t' && (ch < 0x20 || ch == 0x7f))
				goto bad; /* a CTL, a bare LF */
			break;
		case C_SIZE_LF:
			if (ch != '\n')
				goto bad;
			c->line = 0;
			if (c->size == 0) {
				c->state = C_TLINE;
				break;
			}
			if (c->size > c->body_max || c->total > c->body_max - c->size) {
				*used = i + 1;
				return fail(c, 413);
			}
			c->remaining = c->size;
			c->total += c->size;
			c->size = 0;
			c->state = C_DATA;
			break;
		case C_DATA: {
			size_t n = len - i;

			if (n > c->remaining)
				n = (size_t)c->remaining;
			c->remaining -= n;
			if (!c->remaining)
				c->state = C_DATA_CR;
			*data_off = i;
			*data_len = n;
			*used = i + n;
			return GIONG__HTTP_CHUNKED_DATA;
		}
		case C_DATA_CR:
			if (ch != '\r')
				goto bad; /* data longer than its size, or a bare LF */
			c->state = C_DATA_LF;
			break;
		case C_DATA_LF:
			if (ch != '\n')
				goto bad;
			c->state = C_SIZE0;
			break;
		case C_TLINE:
			if (ch == '\r')
				c->state = C_END_LF;
			else if (giong__http_is_tchar(ch))
				c->state = C_TNAME;
			else
				goto bad; /* obs-fold, whitespace, an empty name, a bare LF */
			break;
		case C_TNAME:
			if (ch == ':')
				c->state = C_TVALUE;
			else if (!giong__http_is_tchar(ch))
				goto bad;
			break;
		case C_TVALUE:
			if (ch == '\r')
				c->state = C_TLF;
			else if (ch != '\t' && (ch < 0x20 || ch == 0x7f))
				goto bad;
			break;
		case C_TLF:
			if (ch != '\n')
				goto bad;
			c->state = C_TLINE;
			break;
		case C_END_LF:
			if (ch != '\n')
				goto bad;
			c->state = C_DONE;
			*used = i + 1;
			return GIONG__HTTP_CHUNKED_DONE;
		default:
			goto bad;
		}
		i++;
	}
	*used = len;
	return GIONG__HTTP_CHUNKED_MORE;
bad:
	*used = i;
	return fail(c, 400);
}
