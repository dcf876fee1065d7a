/* SPDX-License-Identifier: MIT */
/*
 * giong/net/resolve.h - host names to addresses.
 *
 * Built with c-ares (CMake option GIONG_RESOLVER_CARES, on when
 * libc-ares-dev is found), a lookup from a task parks only that task: each
 * worker has its own c-ares channel, made on first use (it reads
 * /etc/resolv.conf and friends then) and destroyed when the worker ends,
 * whose sockets are waited on with giong_poll(). The hosts file and the
 * DNS servers of resolv.conf are used as getaddrinfo() would; c-ares's
 * environment variables apply (CARES_HOSTS names another hosts file,
 * LOCALDOMAIN and RES_OPTIONS as for glibc).
 *
 * Without c-ares, a lookup from a task calls getaddrinfo() on one of the
 * runtime's helper threads (giong_offload(), <giong/core/offload.h>) and
 * parks only that task too; with or without c-ares, a lookup outside a
 * task (a plain thread, a completion callback) calls getaddrinfo() on the
 * calling thread, which blocks (a worker's callback: the whole worker) for
 * as long as the system's resolver takes. giong_resolver_backend() says
 * which one this build has.
 *
 * Numeric addresses ("192.0.2.1", "::1") and "localhost" never reach either
 * resolver.
 */
#ifndef GIONG_NET_RESOLVE_H
#define GIONG_NET_RESOLVE_H

#include <stddef.h>
#include <stdint.h>

#include <giong/core/api.h>
#include <giong/net/addr.h>

GIONG_BEGIN_DECLS

/*
 * giong_resolve() - the addresses of @host with port @port, in the order to
 * try them (RFC 6724: both families, the preferred first), written to
 * @out[0..@max). @family is AF_UNSPEC (both), AF_INET or AF_INET6.
 * With c-ares, a lookup that the task's deadline (giong_deadline_in()) or
 * a cancel interrupts returns at once; the c-ares query it started ends in
 * the background and its result is dropped. Without c-ares, a deadline or
 * cancel that comes while the lookup waits for a helper thread returns at
 * once (getaddrinfo() never runs); once getaddrinfo() runs it cannot be cut
 * short: the task waits for it (the system's own timeouts, resolv.conf's
 * timeout and attempts) and gets its answer, the cancel or deadline still
 * in force for the task's next call. @host and @out are lent to the helper
 * until the call returns.
 * Returns the number of addresses written (1..@max); -EINVAL for a NULL or
 * over-long @host, NULL @out, @max 0, @port > 65535 or another @family;
 * -EHOSTUNREACH when the name has no address of that family (it does not
 * exist, or has only the other family's); -ETIMEDOUT (the task's deadline,
 * or the DNS servers did not answer within the resolver's timeout and
 * tries: getaddrinfo()'s EAI_AGAIN); -ECANCELED; -ECONNREFUSED (a server
 * refused the connection); -EIO (the servers failed: SERVFAIL, REFUSED, a
 * malformed answer); -ENOMEM; from getaddrinfo(), the system's -errno of
 * an EAI_SYSTEM failure.
 * May suspend (in a task); otherwise blocks. Owner worker only for the
 * asynchronous path.
 */
GIONG_API int giong_resolve(const char *host, unsigned port, int family, struct giong_addr *out,
			    size_t max);

/*
 * giong_resolver_backend() - "c-ares" when this libgiong-net resolves names
 * without blocking in tasks, "getaddrinfo" when it was built without c-ares.
 * A static string.
 */
GIONG_API const char *giong_resolver_backend(void);

/*
 * Settings of a worker's resolver (c-ares only). NULL and 0 mean "as the
 * system says" (resolv.conf, nsswitch.conf, c-ares's defaults). Strings are
 * copied.
 */
struct giong_resolver_options {
	const char *resolv_conf; /* path read instead of /etc/resolv.conf */
	const char *servers;     /* "192.0.2.53,127.0.0.1:5353,[::1]:53": replace the servers
				  * of resolv.conf */
	const char *lookups;     /* "fb" (hosts file, then DNS), "bf", "f" or "b" */
	unsigned timeout_ms;     /* first wait for an answer per server and try */
	unsigned tries;          /* times each server is asked */
};

/*
 * giong_resolver_configure() - make the calling worker's resolver use @opts
 * (NULL: the system's settings again) for its next lookups: its channel is
 * made anew now, so files are read and @opts checked at once. Per worker:
 * call it on each worker that should use them (in its main task, say).
 * Borrows @opts (its strings are copied). Returns 0 (nothing changes on
 * failure); -EINVAL for a bad @opts (an unreadable resolv_conf is not one:
 * c-ares then uses its defaults); -EBUSY while lookups of this worker are
 * still in flight (abandoned ones included: see giong_resolver_stats());
 * -ENOMEM; -ENOTSUP without c-ares; GIONG_ENOTWORKER. Does not suspend.
 */
GIONG_API int giong_resolver_configure(const struct giong_resolver_options *opts);

/* Counters of the calling worker's resolver. They count structure, not
 * time, so tests may assert on them. */
struct giong_resolver_stats {
	uint64_t lookups;   /* names handed to c-ares (numeric addresses never are) */
	uint64_t abandoned; /* lookups whose task gave up first (deadline, cancel) */
	uint32_t in_flight; /* lookups c-ares has not ended yet, abandoned ones included */
	uint32_t sockets;   /* sockets c-ares has open */
	uint32_t watchers;  /* tasks waiting on those sockets with giong_poll() */
};

/*
 * giong_resolver_stats() - read the calling worker's resolver counters into
 * @out (all 0 before its first lookup). Returns 0, -EINVAL for a NULL @out,
 * -ENOTSUP without c-ares, GIONG_ENOTWORKER.
 */
GIONG_API int giong_resolver_stats(struct giong_resolver_stats *out);

GIONG_END_DECLS

#endif /* GIONG_NET_RESOLVE_H */
