/* SPDX-License-Identifier: MIT */
/* proxy.c - the PROXY protocol header, versions 1 and 2 (see proxy.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/conn.h"
#include "common/proxy.h"

static const char v2_sig[12] = "\r\n\r\n\0\r\nQUIT\n";

/* 0..65535 in decimal, no sign, no leading zero: the value, or -1. */
static long parse_port(const char *p, size_t n)
{
	long v = 0;

	if (!n || n > 5 || (n > 1 && p[0] == '0'))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		v = v * 10 + (p[i] - '0');
	}
	return v <= 65535 ? v : -1;
}

/* An address of @family in its canonical text: inet_pton() accepts it and
 * inet_ntop() gives the same bytes back (no leading zeros, no other form). */
static bool parse_ip(int family, const char *p, size_t n, void *out)
{
	char text[INET6_ADDRSTRLEN], back[INET6_ADDRSTRLEN];

	if (!n || n >= sizeof(text))
		return false;
	memcpy(text, p, n);
	text[n] = '\0';
	if (inet_pton(family, text, out) != 1 || !inet_ntop(family, out, back, sizeof(back)))
		return false;
	return strcmp(text, back) == 0;
}

static void set_addr(struct giong_addr *a, int family, const void *ip, uint16_t port)
{
	memset(a, 0, sizeof(*a));
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&a->ss;

		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, ip, 4);
		sin->sin_port = htons(port);
		a->len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&a->ss;

		sin6->sin6_family = AF_INET6;
		memcpy(&sin6->sin6_addr, ip, 16);
		sin6->sin6_port = htons(port);
		a->len = sizeof(*sin6);
	}
}

/* The word at line[*pos..end) up to the next SP or the end: its span, with
 * *pos moved to just past it; false if it is empty. */
static bool word(const char *line, size_t end, size_t *pos, const char **w, size_t *n)
{
	size_t e = *pos;

	while (e < end && line[e] != ' ')
		e++;
	if (e == *pos)
		return false;
	*w = line + *pos;
	*n = e - *pos;
	*pos = e;
	return true;
}

static int parse_v1(const char *buf, size_t len, struct giong_addr *src, bool *has_src)
{
	size_t end, pos = 6, n[5];
	const char *w[5];
	unsigned char ip[16], dst[16];
	int family;
	long sport, dport;

	/* The line: printable ASCII up to a CR, with the CRLF within the bound. */
	for (end = 6;; end++) {
		if (end == len)
			return 0;
		if (end + 2 > GIONG__HTTP_PROXY_V1_MAX)
			return -EBADMSG;
		if (buf[end] == '\r')
			break;
		if ((unsigned char)buf[end] < 0x20 || (unsigned char)buf[end] > 0x7e)
			return -EBADMSG; /* a bare LF, a control, a byte above 0x7e */
	}
	if (end + 1 == len)
		return 0;
	if (buf[end + 1] != '\n')
		return -EBADMSG;
	if (!word(buf, end, &pos, &w[0], &n[0]))
		return -EBADMSG;
	if (n[0] == 7 && !memcmp(w[0], "UNKNOWN", 7)) {
		*has_src = false; /* the rest of the line is ignored, as the specification says */
		return (int)end + 2;
	}
	if (n[0] == 4 && !memcmp(w[0], "TCP4", 4))
		family = AF_INET;
	else if (n[0] == 4 && !memcmp(w[0], "TCP6", 4))
		family = AF_INET6;
	else
		return -EBADMSG;
	for (int i = 1; i < 5; i++) {
		if (pos >= end || buf[pos] != ' ')
			return -EBADMSG;
		pos++; /* exactly one SP between words */
		if (!word(buf, end, &pos, &w[i], &n[i]))
			return -EBADMSG;
	}
	if (pos != end || !parse_ip(family, w[1], n[1], ip) || !parse_ip(family, w[2], n[2], dst) ||
	    (sport = parse_port(w[3], n[3])) < 0 || (dport = parse_port(w[4], n[4])) < 0)
		return -EBADMSG;
	(void)dport;
	set_addr(src, family, ip, (uint16_t)sport);
	*has_src = true;
	return (int)end + 2;
}

static int parse_v2(const unsigned char *p, size_t len, struct giong_addr *src, bool *has_src)
{
	size_t total;
	unsigned cmd, fam;

	if (len < 16)
		return 0;
	if ((p[12] >> 4) != 2)
		return -EBADMSG;
	cmd = p[12] & 0x0f;
	fam = p[13];
	total = 16 + ((size_t)p[14] << 8 | p[15]);
	if (cmd > 1 || total > GIONG__HTTP_PROXY_V2_MAX)
		return -EBADMSG;
	if (len < total)
		return 0;
	*has_src = false;
	if (cmd == 0 || fam == 0x00)
		return (int)total; /* LOCAL, or UNSPEC: the connection's own peer */
	if (fam == 0x11 && total >= 16 + 12) {
		set_addr(src, AF_INET, p + 16, (uint16_t)(p[24] << 8 | p[25]));
		*has_src = true;
		return (int)total;
	}
	if (fam == 0x21 && total >= 16 + 36) {
		set_addr(src, AF_INET6, p + 16, (uint16_t)(p[48] << 8 | p[49]));
		*has_src = true;
		return (int)total;
	}
	return -EBADMSG; /* UDP, Unix, or addresses that do not fit the length */
}

int giong__http_proxy_parse(const char *buf, size_t len, struct giong_addr *src, bool *has_src)
{
	size_t k;

	if ((!buf && len) || !src || !has_src)
		return -EINVAL;
	if (!len)
		return 0; /* a prefix of either (and no memcmp on a NULL buf) */
	/* Which version: decided by the first bytes, each a prefix of one. */
	k = len < sizeof(v2_sig) ? len : sizeof(v2_sig);
	if (!memcmp(buf, v2_sig, k))
		return k < sizeof(v2_sig) ? 0
					  : parse_v2((const unsigned char *)buf, len, src, has_src);
	k = len < 6 ? len : 6;
	if (!memcmp(buf, "PROXY ", k))
		return k < 6 ? 0 : parse_v1(buf, len, src, has_src);
	return -EBADMSG;
}

/*
 * The PROXY header a load balancer sends first (proxy.h), read from the
 * socket before anything else, and exactly: the bytes after it are the
 * client's (a TLS handshake, for a wrap), so it is first peeked at and then
 * only its own length is taken. A balancer writes it in one piece; should it
 * come in several, the peek is tried again every millisecond until the head
 * deadline. Returns 0 (c->client set when it named one), -EBADMSG for a missing
 * or malformed header, or -errno.
 */
int giong__http_read_proxy_header(struct giong_http_conn *c)
{
	char buf[GIONG__HTTP_PROXY_V2_MAX];
	struct giong_addr addr;
	bool has = false;
	int r;

	for (;;) {
		/* Through net: the socket may be a direct one (no descriptor). */
		r = (int)giong_stream_peek(c->s, buf, sizeof(buf));
		if (r <= 0)
			return r ? r : -ECONNRESET;
		r = giong__http_proxy_parse(buf, (size_t)r, &addr, &has);
		if (r < 0)
			return r;
		if (r > 0)
			break;
		if ((r = giong_sleep_ms(1)) < 0)
			return r;
	}
	for (int got = 0; got < r;) {
		ssize_t n = giong_stream_read(c->s, buf + got, (size_t)(r - got));

		if (n <= 0)
			return n ? (int)n : -ECONNRESET;
		got += (int)n;
	}
	if (has) {
		if (!(c->client = malloc(sizeof(*c->client))))
			return -ENOMEM;
		*c->client = addr;
	}
	return 0;
}
