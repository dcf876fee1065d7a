/* SPDX-License-Identifier: MIT */
/* authority.c - the authority grammar of RFC 3986 3.2.2-3.2.3 as RFC 9110 4.2 and 7.2
 * narrow it (authority.h). Runs on every request's Host: a table lookup per byte of a
 * reg-name, the common case. */
#include <stdint.h>

#include "common/authority.h"

/* Bit c: byte c is unreserved or a sub-delim, the bytes of a reg-name besides "%XX"
 * (ALPHA DIGIT - . _ ~ and ! $ & ' ( ) * + , ; =). */
static const uint32_t regname_set[8] = {
	0x00000000,          /* 0x00-0x1f: controls */
	0x2bff7fd2,          /* 0x20-0x3f: ! $ & ' ( ) * + , - . 0-9 ; = */
	0x87fffffe,          /* 0x40-0x5f: A-Z _ */
	0x47fffffe,          /* 0x60-0x7f: a-z ~ */
	0,          0, 0, 0, /* 0x80-0xff: none */
};

static bool regname_byte(unsigned char c)
{
	return (regname_set[c >> 5] >> (c & 31)) & 1;
}

static bool hex(unsigned char c)
{
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static bool digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* reg-name = *( unreserved / pct-encoded / sub-delims ): how many bytes of @p[0..n)
 * are one, from the start; the byte there (if any) is not. */
static size_t reg_name_run(const unsigned char *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		if (regname_byte(p[i]))
			i++;
		else if (p[i] == '%' && n - i >= 3 && hex(p[i + 1]) && hex(p[i + 2]))
			i += 3;
		else
			break;
	}
	return i;
}

/* IPv4address: four dec-octets ("0" to "255", no leading zero) and three dots. */
static bool ipv4(const unsigned char *p, size_t n)
{
	size_t i = 0;

	for (int octet = 0; octet < 4; octet++) {
		unsigned v = 0;
		size_t start;

		if (octet && (i >= n || p[i++] != '.'))
			return false;
		start = i;
		while (i < n && digit(p[i]) && i - start < 3)
			v = v * 10 + (p[i++] - '0');
		if (i == start || v > 255 || (i - start > 1 && p[start] == '0'))
			return false;
	}
	return i == n;
}

/*
 * IPv6address (RFC 3986 3.2.2, the text forms of RFC 4291 2.2): eight h16 (1 to 4
 * hex digits) separated by ':', the last two of which may be an IPv4address; one "::"
 * stands for one or more zero groups, so that at most seven are written beside it.
 */
static bool ipv6(const unsigned char *p, size_t n)
{
	unsigned groups = 0;
	bool gap = false;
	size_t i = 0;

	if (n >= 2 && p[0] == ':' && p[1] == ':') {
		gap = true;
		i = 2;
	} else if (n && p[0] == ':') {
		return false; /* one leading ':' */
	}
	while (i < n) {
		size_t j = i;

		while (j < n && j - i < 5 && hex(p[j]))
			j++;
		if (j < n && p[j] == '.') {
			if (!ipv4(p + i, n - i))
				return false; /* the IPv4 tail ends the address */
			groups += 2;
			break;
		}
		if (j == i || j - i > 4)
			return false;
		groups++;
		if (j == n)
			break;
		if (p[j] != ':' || ++j == n)
			return false; /* another byte, or a trailing single ':' */
		if (p[j] == ':') {
			if (gap)
				return false; /* a second "::" */
			gap = true;
			j++;
		}
		i = j;
	}
	return gap ? groups <= 7 : groups == 8;
}

/* IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" ). */
static bool ipvfuture(const unsigned char *p, size_t n)
{
	size_t i = 1;

	if (!n || (p[0] | 0x20) != 'v')
		return false;
	while (i < n && hex(p[i]))
		i++;
	if (i == 1 || i == n || p[i++] != '.' || i == n)
		return false;
	for (; i < n; i++)
		if (!regname_byte(p[i]) && p[i] != ':')
			return false;
	return true;
}

/* port = *DIGIT, here at most 65535. */
static bool port(const unsigned char *p, size_t n)
{
	uint32_t v = 0;

	if (n > 5)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!digit(p[i]))
			return false;
		v = v * 10 + (p[i] - '0');
	}
	return v <= 65535;
}

bool giong__http_authority_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t host_end = 0;

	if (!p || !n)
		return false;
	if (p[0] == '[') {
		/* IP-literal: up to the first ']' (none may be inside). */
		while (host_end < n && p[host_end] != ']')
			host_end++;
		if (host_end == n)
			return false; /* unbalanced */
		if (!ipv6(p + 1, host_end - 1) && !ipvfuture(p + 1, host_end - 1))
			return false;
		host_end++;
	} else {
		/* reg-name or IPv4address: the latter is a reg-name too, so that
		 * "999.1.1.1" is a valid name (RFC 3986 3.2.2: first match wins).
		 * One pass to the first ':' (which no "%XX" holds). */
		host_end = reg_name_run(p, n);
		if (!host_end || (host_end < n && p[host_end] != ':'))
			return false;
	}
	if (host_end == n)
		return true;
	return p[host_end] == ':' && port(p + host_end + 1, n - host_end - 1);
}
