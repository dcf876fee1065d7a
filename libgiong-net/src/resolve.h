/* SPDX-License-Identifier: MIT */
/* resolve.h - text to addresses, and the resolvers behind giong_resolve() (net internal). */
#ifndef GIONG_NET_RESOLVE_INTERNAL_H
#define GIONG_NET_RESOLVE_INTERNAL_H

#include <stddef.h>

#include <giong/net.h>

/* Longest host name giong looks up, with the NUL (RFC 1035's 253, and room). */
#define GIONG__HOST_MAX 256

/* Split "host:port" / "[v6]:port" into @host (NUL-terminated) and *@port.
 * Returns 0 or -EINVAL. */
int giong__net_addr_split(const char *text, char *host, size_t hostlen, unsigned *port);

/* @host as a numeric address ("" and "*": 0.0.0.0; "localhost": 127.0.0.1)
 * with @port into @out. Returns 0, or -EINVAL if @host is not numeric. */
int giong__net_addr_numeric(const char *host, unsigned port, struct giong_addr *out);

/* An IPv4 or IPv6 @sa of @len bytes with @port into @out. Returns 0, or
 * -EAFNOSUPPORT (another family, or too long) and @out unusable. */
int giong__net_addr_put(struct giong_addr *out, const struct sockaddr *sa, socklen_t len,
			unsigned port);

#ifdef GIONG_RESOLVER_CARES
/* giong_resolve() of a name that is not numeric, from a task, through the
 * calling worker's c-ares channel. Same returns. May suspend. */
int giong__net_cares_resolve(const char *host, unsigned port, int family, struct giong_addr *out,
			     size_t max);
#endif

#endif /* GIONG_NET_RESOLVE_INTERNAL_H */
