/* SPDX-License-Identifier: MIT */
/*
 * h2.h - giong-load --h2: HTTP/2 (RFC 9113) as h2load speaks it, on libnghttp2's client
 * session driven by hand over a giong stream (nghttp2_session_mem_send() into one write,
 * each received buffer through nghttp2_session_mem_recv()): h2c with prior knowledge for
 * http:// URLs, TLS with ALPN "h2" for https://.
 *
 * Each connection is one task that keeps up to --streams requests in flight on its session,
 * opening a stream as soon as one closes (and, with -R, as soon as the next request is due),
 * and counts each stream as giong-load counts an HTTP/1.1 exchange: its status, its body's
 * bytes against its content-length, its latency from its send (paced: from its due time when
 * the connection had no free stream then) to its end; a stream the server resets, or that
 * a lost connection takes with it, is a read error; one with no end within --timeout is a
 * timeout (the stream is reset, the connection goes on). Streams past the server's
 * SETTINGS_MAX_CONCURRENT_STREAMS wait in nghttp2 until one closes (none is refused): their
 * latency counts that wait, as h2load's does.
 *
 * Built only with libnghttp2 (GIONG_LOAD_HAVE_H2, set when libgiong-http2 is built): without
 * it load_h2_available() is false and load_h2_new() says so.
 */
#ifndef GIONG_LOAD_H2_H
#define GIONG_LOAD_H2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <giong/http/client.h>

#include "hist.h"
#include "pace.h"
#include "report.h"

/* The most streams in flight per connection (--streams). */
#define LOAD_H2_STREAMS_MAX 1024u

/* What every connection of the run asks for (borrowed by load_h2_new() only while it runs). */
struct load_h2_args {
	const char *url;                /* http:// (h2c) or https:// (h2) */
	const char *method;             /* NULL is "GET" */
	const char *const (*fields)[2]; /* -H names and values (not NUL-terminated) */
	const size_t (*field_len)[2];
	unsigned nfields;
	const char *body; /* --body, borrowed for the run; NULL: none */
	size_t body_len;
	uint32_t streams;              /* in flight per connection, 1..LOAD_H2_STREAMS_MAX */
	uint64_t timeout_ms;           /* connect, and each stream's send to end */
	giong_http_connect_fn connect; /* https://: TLS over the TCP stream (ALPN h2) */
	void *connect_ctx;
};

/* How the run is scheduled, shared by every connection (borrowed while they run). */
struct load_h2_sched {
	const struct load_pace *pace; /* -R; rate 0: unpaced */
	struct load_budget *budget;   /* -n */
	uint64_t end_ns;              /* -d: no request starts at or after it */
};

struct load_h2;

/* Whether this build speaks HTTP/2 (linked with libnghttp2). */
bool load_h2_available(void);

/*
 * load_h2_new - check @a (the URL's scheme and authority, the fields: lowercased, Host as
 * :authority, connection-specific ones refused as RFC 9113 8.2.2 says) and keep what every
 * connection sends. Returns 0 and the run's state in *@ret, or -EINVAL / -ENOMEM /
 * -ENOTSUP (built without libnghttp2) having said why on stderr.
 */
int load_h2_new(const struct load_h2_args *a, struct load_h2 **ret);

/* load_h2_free - free what load_h2_new() made (NULL: nothing). */
void load_h2_free(struct load_h2 *h);

/* load_h2_protocol - "h2c" or "h2", as the report names it. */
const char *load_h2_protocol(const struct load_h2 *h);

/*
 * load_h2_conn - connection @k of the run (its share of the -R schedule): connect, keep the
 * streams going until @s says stop (the run's end, the budget spent, shutdown), reconnecting
 * when a connection is lost, and wait for the streams still open. Counts into @hist and @t
 * (the caller's worker's: no locking). Returns 0, or -ENOMEM. Runs in a task.
 */
int load_h2_conn(const struct load_h2 *h, uint32_t k, const struct load_h2_sched *s,
		 struct load_hist *hist, struct load_totals *t);

/* load_now_ns - CLOCK_MONOTONIC in ns: the clock of every time the load generator keeps. */
static inline uint64_t load_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif /* GIONG_LOAD_H2_H */
