/* SPDX-License-Identifier: MIT */
/*
 * resolve.c - giong_resolve(): numeric addresses at once; names from a task
 * through the worker's c-ares channel (resolve_cares.c), or, built without
 * c-ares, through getaddrinfo() on core's helper threads (giong_offload());
 * getaddrinfo() on the calling thread everywhere else.
 */
#include <errno.h>
#include <netdb.h>
#include <string.h>

#include <giong/net.h>

#include "resolve.h"

/* getaddrinfo()'s failures as giong_resolve() reports them. */
static int gai_errno(int e)
{
	switch (e) {
	case EAI_NONAME:
	case EAI_NODATA:
	case EAI_ADDRFAMILY:
		return -EHOSTUNREACH;
	case EAI_AGAIN:
		return -ETIMEDOUT; /* the servers did not answer (in time) */
	case EAI_MEMORY:
		return -ENOMEM;
	case EAI_SYSTEM:
		return errno ? -errno : -EIO;
	default:
		return -EIO;
	}
}

int giong__net_addr_put(struct giong_addr *out, const struct sockaddr *sa, socklen_t len,
			unsigned port)
{
	if (!sa || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6) ||
	    giong_addr_from(sa, len, out))
		return -EAFNOSUPPORT;
	if (sa->sa_family == AF_INET)
		((struct sockaddr_in *)&out->ss)->sin_port = htons((uint16_t)port);
	else
		((struct sockaddr_in6 *)&out->ss)->sin6_port = htons((uint16_t)port);
	return 0;
}

/* The blocking path: the calling thread waits in the system's resolver. */
static int resolve_blocking(const char *host, unsigned port, int family, struct giong_addr *out,
			    size_t max)
{
	struct addrinfo hints, *res = NULL, *ai;
	size_t n = 0;
	int e;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = family;
	hints.ai_socktype = SOCK_STREAM; /* one entry per address, not one per socket type */
	e = getaddrinfo(host, NULL, &hints, &res);
	if (e)
		return gai_errno(e);
	for (ai = res; ai && n < max; ai = ai->ai_next)
		if (!giong__net_addr_put(&out[n], ai->ai_addr, ai->ai_addrlen, port))
			n++;
	freeaddrinfo(res);
	return n ? (int)n : -EHOSTUNREACH;
}

#ifndef GIONG_RESOLVER_CARES
/* One getaddrinfo() handed to a helper thread. On the calling task's stack:
 * giong_offload() lends it, and @out, to the helper until it returns. */
struct gai_call {
	const char *host;
	unsigned port;
	int family;
	struct giong_addr *out;
	size_t max;
};

/* On a helper thread: gai_errno() reads that thread's errno, as it must. */
static intptr_t gai_offloaded(void *arg)
{
	struct gai_call *c = arg;

	return resolve_blocking(c->host, c->port, c->family, c->out, c->max);
}

/* From a task: park it, not the worker, while the system's resolver works.
 * A cancel or deadline cannot cut getaddrinfo() short: the task waits for
 * it, then gets its answer (giong_offload()), as giong_io() returns an
 * operation that completed anyway. If the pool refuses the call (no memory,
 * no thread could start) the lookup blocks here: slower, never wrong. */
static int resolve_offloaded(const char *host, unsigned port, int family, struct giong_addr *out,
			     size_t max)
{
	struct gai_call c = {host, port, family, out, max};
	intptr_t n = 0;
	int r = giong_offload(gai_offloaded, &c, &n);

	if (r == 0)
		return (int)n;
	if (r == -ECANCELED || r == -ETIMEDOUT)
		return r; /* asked to stop before the lookup began */
	return resolve_blocking(host, port, family, out, max);
}
#endif

int giong_resolve(const char *host, unsigned port, int family, struct giong_addr *out, size_t max)
{
	if (!host || !out || !max || port > 65535 ||
	    strnlen(host, GIONG__HOST_MAX) >= GIONG__HOST_MAX)
		return -EINVAL;
	if (family != AF_UNSPEC && family != AF_INET && family != AF_INET6)
		return -EINVAL;
	if (max > INT32_MAX)
		max = INT32_MAX; /* the count is returned as an int */
	/* Numeric: no resolver at all, whichever is built. */
	if (giong__net_addr_numeric(host, port, out) == 0) {
		if (family != AF_UNSPEC && out->ss.ss_family != family)
			return -EHOSTUNREACH;
		return 1;
	}
	/* A task can park: c-ares, or getaddrinfo() on a helper thread.
	 * Anywhere else nothing may park, so block. */
	if (giong_task_current()) {
#ifdef GIONG_RESOLVER_CARES
		return giong__net_cares_resolve(host, port, family, out, max);
#else
		return resolve_offloaded(host, port, family, out, max);
#endif
	}
	return resolve_blocking(host, port, family, out, max);
}

const char *giong_resolver_backend(void)
{
#ifdef GIONG_RESOLVER_CARES
	return "c-ares";
#else
	return "getaddrinfo";
#endif
}

#ifndef GIONG_RESOLVER_CARES
int giong_resolver_configure(const struct giong_resolver_options *opts)
{
	(void)opts;
	return giong_worker_index() < 0 ? GIONG_ENOTWORKER : -ENOTSUP;
}

int giong_resolver_stats(struct giong_resolver_stats *out)
{
	if (!out)
		return -EINVAL;
	return giong_worker_index() < 0 ? GIONG_ENOTWORKER : -ENOTSUP;
}
#endif
