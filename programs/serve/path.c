/* SPDX-License-Identifier: MIT */
/*
 * path.c - giong-serve: the request target's path decoded, normalised and refused where it
 * could leave the document root; the HTML and URL escapes of a directory listing.
 */
#include "path.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* One byte at out[*o], keeping room for the NUL. */
static int put(char *out, size_t cap, size_t *o, unsigned char c)
{
	if (*o >= cap - 1)
		return -ENAMETOOLONG;
	out[(*o)++] = (char)c;
	return 0;
}

int serve_path_decode(const char *target, size_t len, char *out, size_t cap, size_t *out_len)
{
	size_t end = 0, i, o = 0;
	int dir = 0;

	if (!target || !out || !cap)
		return !cap && out ? -ENAMETOOLONG : -EINVAL;
	while (end < len && target[end] != '?' && target[end] != '#')
		end++;
	if (end == 0 || target[0] != '/')
		return -EINVAL;
	i = 0;
	while (i < end) {
		/* A segment: its first two bytes wait in pre[] until it is known not to be
		 * "." or ".." (a dropped "." must not need room in @out). */
		unsigned char pre[2];
		size_t n = 0, seg = o; /* seg: where its separator goes */
		int r;

		while (i < end && target[i] == '/')
			i++;
		if (i == end) {
			dir = 1;
			break;
		}
		while (i < end && target[i] != '/') {
			unsigned char c = (unsigned char)target[i];

			if (c == '%') {
				int hi, lo;

				if (end - i < 3 ||
				    (hi = hexval((unsigned char)target[i + 1])) < 0 ||
				    (lo = hexval((unsigned char)target[i + 2])) < 0)
					return -EINVAL;
				c = (unsigned char)(hi << 4 | lo);
				i += 3;
				if (c == '/')
					return -EACCES;
			} else {
				i++;
			}
			if (c < 0x20 || c == 0x7f || c == '\\')
				return -EACCES;
			if (n < 2) {
				pre[n++] = c;
				continue;
			}
			if (n == 2) { /* a third byte: flush the separator and pre[] */
				if (seg && (r = put(out, cap, &o, '/')) < 0)
					return r;
				if ((r = put(out, cap, &o, pre[0])) < 0 ||
				    (r = put(out, cap, &o, pre[1])) < 0)
					return r;
			}
			if ((r = put(out, cap, &o, c)) < 0)
				return r;
			n++;
		}
		if (n == 1 && pre[0] == '.') {
			dir = 1;
			continue;
		}
		if (n == 2 && pre[0] == '.' && pre[1] == '.')
			return -EACCES;
		if (n <= 2) {
			if (seg && (r = put(out, cap, &o, '/')) < 0)
				return r;
			for (size_t k = 0; k < n; k++)
				if ((r = put(out, cap, &o, pre[k])) < 0)
					return r;
		}
		dir = 0;
	}
	out[o] = '\0';
	if (out_len)
		*out_len = o;
	return dir ? SERVE_PATH_DIR : 0;
}

/* Appends @s (@n bytes) whole at out[*o] if it fits before the NUL; *@need grows anyway. */
static void emit(char *out, size_t cap, size_t *o, size_t *need, bool *full, const char *s,
		 size_t n)
{
	*need += n;
	if (*full || !cap || cap - 1 - *o < n) {
		*full = true;
		return;
	}
	memcpy(out + *o, s, n);
	*o += n;
}

size_t serve_html_escape(const char *in, size_t len, char *out, size_t cap)
{
	size_t o = 0, need = 0;
	bool full = false;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];
		const char *s;

		switch (c) {
		case '&':
			s = "&amp;";
			break;
		case '<':
			s = "&lt;";
			break;
		case '>':
			s = "&gt;";
			break;
		case '"':
			s = "&quot;";
			break;
		case '\'':
			s = "&#39;";
			break;
		default:
			s = c < 0x20 || c == 0x7f ? "&#xFFFD;" : NULL;
			break;
		}
		if (s)
			emit(out, cap, &o, &need, &full, s, strlen(s));
		else
			emit(out, cap, &o, &need, &full, (const char *)&in[i], 1);
	}
	if (cap)
		out[o] = '\0';
	return need;
}

static bool unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '~' || c == '/';
}

size_t serve_url_encode(const char *in, size_t len, char *out, size_t cap)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0, need = 0;
	bool full = false;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];

		if (unreserved(c)) {
			emit(out, cap, &o, &need, &full, (const char *)&in[i], 1);
		} else {
			char e[3] = {'%', hex[c >> 4], hex[c & 15]};

			emit(out, cap, &o, &need, &full, e, 3);
		}
	}
	if (cap)
		out[o] = '\0';
	return need;
}
