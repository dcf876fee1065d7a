/* SPDX-License-Identifier: MIT */
/*
 * giong/net/addr.h - socket addresses from and to text.
 *
 * Accepted forms: "1.2.3.4:80", "[::1]:80", ":80" and "*:80" (any IPv4
 * address), "[::]:80" (any IPv6 address), "localhost:80". Parsing takes no
 * time and never resolves names; giong_addr_resolve() does, through
 * giong_resolve() (resolve.h): without blocking the worker in a task when
 * libgiong-net is built with c-ares, with a blocking getaddrinfo() otherwise.
 */
#ifndef GIONG_NET_ADDR_H
#define GIONG_NET_ADDR_H

#include <stddef.h>
#include <sys/socket.h>

#include <giong/core/api.h>

GIONG_BEGIN_DECLS

/* An IPv4, IPv6 or Unix socket address. Caller storage. */
struct giong_addr {
	struct sockaddr_storage ss;
	socklen_t len;
};

/* Longest text giong_addr_format() writes, with the NUL. */
#define GIONG_ADDR_STRLEN 112

/*
 * giong_addr_parse() - parse numeric "host:port" text into @out.
 * Returns 0, or -EINVAL for NULL arguments or text that is not a numeric
 * address with a port in 0..65535 ("localhost" is accepted as 127.0.0.1).
 */
GIONG_API int giong_addr_parse(const char *text, struct giong_addr *out);

/*
 * giong_addr_resolve() - like giong_addr_parse(), but a host name is looked
 * up with giong_resolve() and its first address (in RFC 6724's order) kept.
 * Returns 0, -EINVAL, -EHOSTUNREACH when the name has no address, or
 * another error of giong_resolve() (-ETIMEDOUT, -ECANCELED, -EIO, ...).
 * May suspend (built with c-ares, in a task); otherwise blocks.
 */
GIONG_API int giong_addr_resolve(const char *text, struct giong_addr *out);

/* giong_addr_from() - copy a sockaddr of @len bytes into @out. Returns 0 or
 * -EINVAL (NULL, or longer than struct sockaddr_storage). */
GIONG_API int giong_addr_from(const struct sockaddr *sa, socklen_t len, struct giong_addr *out);

/* giong_addr_port() - the port of an IPv4/IPv6 address, or -EINVAL. */
GIONG_API int giong_addr_port(const struct giong_addr *a);

/*
 * giong_addr_format() - write @a as text ("1.2.3.4:80", "[::1]:80", a Unix
 * path, or "@name" for an abstract Unix name) into @buf of @len bytes.
 * Returns the length written (without the NUL), -EINVAL, or -ENOSPC.
 */
GIONG_API int giong_addr_format(const struct giong_addr *a, char *buf, size_t len);

GIONG_END_DECLS

#endif /* GIONG_NET_ADDR_H */
