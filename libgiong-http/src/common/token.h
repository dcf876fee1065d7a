/* SPDX-License-Identifier: MIT */
/*
 * token.h - RFC 9110 5.6.2's tchar, the bytes of a token (a method, a field
 * name, a chunk extension's name): one table for the parser, the chunked
 * decoder, the router and the response batch. Inline and a table lookup:
 * the head parser asks it for every byte of every method and field name.
 */
#ifndef GIONG_HTTP_TOKEN_H
#define GIONG_HTTP_TOKEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bit c of the 256-bit set: whether byte c is a tchar. */
static const uint32_t giong__http_tchar_set[8] = {
	0x00000000,          /* 0x00-0x1f: controls */
	0x03ff6cfa,          /* 0x20-0x3f: ! # $ % & ' * + - . 0-9 */
	0xc7fffffe,          /* 0x40-0x5f: A-Z ^ _ */
	0x57ffffff,          /* 0x60-0x7f: ` a-z | ~ */
	0,          0, 0, 0, /* 0x80-0xff: none */
};

static inline bool giong__http_is_tchar(unsigned char c)
{
	return (giong__http_tchar_set[c >> 5] >> (c & 31)) & 1;
}

/* Whether @s[0..n) is a token (non-empty, tchars only). */
static inline bool giong__http_is_token(const char *s, size_t n)
{
	if (!s || !n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!giong__http_is_tchar((unsigned char)s[i]))
			return false;
	return true;
}

/* giong__http_token_eq() - whether buf[0..len) equals the NUL-terminated @lower,
 * ASCII case-insensitively (@lower in lower case): field names, Connection tokens. */
static inline bool giong__http_token_eq(const char *buf, size_t len, const char *lower)
{
	size_t i = 0;

	if (!buf)
		return false;
	for (; i < len && lower[i]; i++) {
		unsigned char c = (unsigned char)buf[i];

		if ((c >= 'A' && c <= 'Z' ? c + 32 : c) != (unsigned char)lower[i])
			return false;
	}
	return i == len && !lower[i];
}

#endif /* GIONG_HTTP_TOKEN_H */
