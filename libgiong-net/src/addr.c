/* SPDX-License-Identifier: MIT */
/* addr.c - socket addresses from and to text. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include <giong/net/addr.h>

#include "resolve.h"

int giong__net_addr_split(const char *text, char *host, size_t hostlen, unsigned *port)
{
	const char *colon, *h = text;
	size_t n;
	char *end;
	unsigned long p;

	if (text[0] == '[') {
		const char *close = strchr(text, ']');

		if (!close || close[1] != ':')
			return -EINVAL;
		h = text + 1;
		n = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(text, ':');
		if (!colon || memchr(text, ':', (size_t)(colon - text)))
			return -EINVAL; /* bare IPv6 needs brackets */
		n = (size_t)(colon - text);
	}
	if (n >= hostlen)
		return -EINVAL;
	memcpy(host, h, n);
	host[n] = '\0';
	if (!colon[1])
		return -EINVAL;
	errno = 0;
	p = strtoul(colon + 1, &end, 10);
	if (errno || *end || p > 65535 || colon[1] == '-' || colon[1] == '+' || colon[1] == ' ')
		return -EINVAL;
	*port = (unsigned)p;
	return 0;
}

int giong__net_addr_numeric(const char *host, unsigned port, struct giong_addr *out)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)&out->ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&out->ss;

	memset(out, 0, sizeof(*out));
	if (!host[0] || !strcmp(host, "*"))
		host = "0.0.0.0";
	else if (!strcmp(host, "localhost"))
		host = "127.0.0.1";
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		out->len = sizeof(*in4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		out->len = sizeof(*in6);
		return 0;
	}
	return -EINVAL;
}

int giong_addr_parse(const char *text, struct giong_addr *out)
{
	char host[INET6_ADDRSTRLEN + 8];
	unsigned port;
	int ret;

	if (!text || !out)
		return -EINVAL;
	ret = giong__net_addr_split(text, host, sizeof(host), &port);
	return ret ? ret : giong__net_addr_numeric(host, port, out);
}

int giong_addr_resolve(const char *text, struct giong_addr *out)
{
	char host[GIONG__HOST_MAX];
	unsigned port;
	int ret;

	if (!text || !out)
		return -EINVAL;
	ret = giong__net_addr_split(text, host, sizeof(host), &port);
	if (ret)
		return ret;
	/* The first address in the order giong_resolve() gives. */
	ret = giong_resolve(host, port, AF_UNSPEC, out, 1);
	return ret < 0 ? ret : 0;
}

int giong_addr_from(const struct sockaddr *sa, socklen_t len, struct giong_addr *out)
{
	if (!sa || !out || len > sizeof(out->ss))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	memcpy(&out->ss, sa, len);
	out->len = len;
	return 0;
}

int giong_addr_port(const struct giong_addr *a)
{
	if (!a)
		return -EINVAL;
	if (a->ss.ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)&a->ss)->sin_port);
	if (a->ss.ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)&a->ss)->sin6_port);
	return -EINVAL;
}

int giong_addr_format(const struct giong_addr *a, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];
	int n;

	if (!a || !buf || !len)
		return -EINVAL;
	switch (a->ss.ss_family) {
	case AF_INET:
		inet_ntop(AF_INET, &((const struct sockaddr_in *)&a->ss)->sin_addr, ip, sizeof(ip));
		n = snprintf(buf, len, "%s:%d", ip, giong_addr_port(a));
		break;
	case AF_INET6:
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)&a->ss)->sin6_addr, ip,
			  sizeof(ip));
		n = snprintf(buf, len, "[%s]:%d", ip, giong_addr_port(a));
		break;
	case AF_UNIX: {
		const struct sockaddr_un *un = (const struct sockaddr_un *)&a->ss;
		size_t plen = a->len > offsetof(struct sockaddr_un, sun_path)
				      ? a->len - offsetof(struct sockaddr_un, sun_path)
				      : 0;

		if (plen && un->sun_path[0] == '\0') /* abstract: not NUL-terminated */
			n = snprintf(buf, len, "@%.*s", (int)plen - 1, un->sun_path + 1);
		else
			n = snprintf(buf, len, "%.*s", (int)strnlen(un->sun_path, plen),
				     un->sun_path);
		break;
	}
	default:
		return -EINVAL;
	}
	if (n < 0)
		return -EINVAL;
	return (size_t)n >= len ? -ENOSPC : n;
}
