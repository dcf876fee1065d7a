/* SPDX-License-Identifier: MIT */
/*
 * metrics.c - giong-serve's --metrics route: the runtime's, HTTP's and the open-file cache's
 * counters of every worker in the Prometheus text format (version 0.0.4).
 *
 * A worker's counters may be read only by that worker while it runs (giong_stats(),
 * giong_http_server_stats()), so each worker publishes a copy into its slot once a second
 * (a task that waits for shutdown with a one-second deadline), under the slot's lock; the
 * worker answering a scrape reads its own live and the others' copies, at most a second old.
 *
 * Per protocol: libgiong-http2 counts a worker's HTTP/2 connections and streams (both
 * servers' together: giong_http2_stats()), the server counts every request and connection
 * whatever its protocol, so HTTP/1.1's are the server's less HTTP/2's (a connection that
 * sent nothing, or only a refused head, counts as HTTP/1.1).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <giong/http.h>
#ifdef GIONG_HAVE_HTTP2
#include <giong/http2.h>
#endif
#ifdef GIONG_HAVE_TLS
#include <giong/tls.h>
#endif

#include "accesslog.h"
#include "fcache.h"
#include "serve.h"

#define PUBLISH_MS 1000

/* A worker's HTTP/2 counters (struct giong_http2_stats's, zero without libgiong-http2). */
struct h2_figures {
	uint64_t connections, streams, refused_streams, resets_received, goaway_calm,
		protocol_errors, session_bytes;
};

struct slot {
	pthread_mutex_t lock;
	bool valid;
	struct giong_stats rt;
	struct giong_http_stats http[2];
	struct serve_fcache_stats fc;
	struct h2_figures h2;
};

static struct slot *slots;
static unsigned nslots;

int serve_metrics_init(unsigned workers)
{
	if (!(slots = calloc(workers, sizeof(*slots))))
		return -ENOMEM;
	for (unsigned i = 0; i < workers; i++)
		pthread_mutex_init(&slots[i].lock, NULL);
	nslots = workers;
	return 0;
}

void serve_metrics_free(void)
{
	for (unsigned i = 0; i < nslots; i++)
		pthread_mutex_destroy(&slots[i].lock);
	free(slots);
	slots = NULL;
	nslots = 0;
}

/* The calling worker's counters now, into @s (its lock not taken: the caller's copy). */
static void collect(struct slot *s)
{
	unsigned w = (unsigned)giong_worker_index();
	struct serve_fcache *c = serve_worker_cache();

	giong_stats(&s->rt);
	for (unsigned i = 0; i < 2; i++) {
		memset(&s->http[i], 0, sizeof(s->http[i]));
		if (i < serve_cfg.nservers)
			giong_http_server_stats(serve_cfg.servers[i], w, &s->http[i]);
	}
	memset(&s->fc, 0, sizeof(s->fc));
	if (c)
		serve_fcache_stats(c, &s->fc);
	memset(&s->h2, 0, sizeof(s->h2));
#ifdef GIONG_HAVE_HTTP2
	struct giong_http2_stats h2;

	if (serve_cfg.h2 && giong_http2_stats(&h2) == 0)
		s->h2 = (struct h2_figures){h2.connections,     h2.streams,     h2.refused_streams,
					    h2.resets_received, h2.goaway_calm, h2.protocol_errors,
					    h2.session_bytes};
#endif
	s->valid = true;
}

static void publish(void)
{
	struct slot now;
	int w = giong_worker_index();

	if (w < 0 || (unsigned)w >= nslots)
		return;
	collect(&now);
	pthread_mutex_lock(&slots[w].lock);
	slots[w].valid = true;
	slots[w].rt = now.rt;
	memcpy(slots[w].http, now.http, sizeof(now.http));
	slots[w].fc = now.fc;
	slots[w].h2 = now.h2;
	pthread_mutex_unlock(&slots[w].lock);
}

static intptr_t publisher(void *arg)
{
	(void)arg;
	for (;;) {
		uint64_t saved;
		int r;

		publish();
		saved = giong_deadline_in(PUBLISH_MS);
		r = giong_shutdown_wait();
		giong_deadline_restore(saved);
		if (r != -ETIMEDOUT)
			return 0; /* shutdown (or cancelled): the worker may end */
	}
}

int serve_metrics_worker_start(void)
{
	if (!slots || !serve_cfg.metrics_path)
		return 0; /* nobody reads them */
	return giong_spawn(publisher, NULL, NULL);
}

/* One family: its HELP and TYPE lines, then a sample per worker (and scheme for HTTP's). */
struct family {
	const char *name, *type, *help;
	int kind;      /* 0: runtime, 1: HTTP per scheme, 2: cache, 3: HTTP/2 */
	size_t offset; /* of the uint64_t (or uint32_t when is32) in its struct */
	bool is32;
};

#define RT(n, t, f, h)                                                                             \
	{                                                                                          \
		n, t, h, 0, offsetof(struct giong_stats, f), false                                 \
	}
#define RT32(n, t, f, h)                                                                           \
	{                                                                                          \
		n, t, h, 0, offsetof(struct giong_stats, f), true                                  \
	}
#define HT(n, t, f, h)                                                                             \
	{                                                                                          \
		n, t, h, 1, offsetof(struct giong_http_stats, f), false                            \
	}
#define HT32(n, t, f, h)                                                                           \
	{                                                                                          \
		n, t, h, 1, offsetof(struct giong_http_stats, f), true                             \
	}
#define FC(n, t, f, h)                                                                             \
	{                                                                                          \
		n, t, h, 2, offsetof(struct serve_fcache_stats, f), false                          \
	}
#define H2(n, t, f, h)                                                                             \
	{                                                                                          \
		n, t, h, 3, offsetof(struct h2_figures, f), false                                  \
	}
#define FC32(n, t, f, h)                                                                           \
	{                                                                                          \
		n, t, h, 2, offsetof(struct serve_fcache_stats, f), true                           \
	}

static const struct family families[] = {
	HT("giong_http_connections_accepted_total", "counter", accepted, "Connections accepted."),
	HT32("giong_http_connections_open", "gauge", open, "Connections open now."),
	HT32("giong_http_connections_idle", "gauge", idle,
	     "Open connections waiting for a request, holding no task."),
	HT("giong_http_requests_total", "counter", requests, "Request heads read."),
	HT("giong_http_refused_total", "counter", refused, "Request heads refused (4xx, closed)."),
	HT("giong_http_head_timeouts_total", "counter", head_timeouts, "Heads not in in time."),
	HT("giong_http_body_timeouts_total", "counter", body_timeouts, "Bodies not in in time."),
	HT("giong_http_idle_timeouts_total", "counter", idle_timeouts,
	   "Idle connections closed after the idle timeout."),
	HT("giong_http_write_timeouts_total", "counter", write_timeouts,
	   "Peers that did not read their responses in time."),
	HT("giong_http_handler_errors_total", "counter", handler_errors, "Handlers that failed."),
	RT("giong_ring_enters_total", "counter", enters, "io_uring_enter system calls."),
	RT("giong_ring_sqes_total", "counter", sqes_submitted, "SQEs handed to the kernel."),
	RT("giong_ring_parks_total", "counter", parks, "Enters that waited for work."),
	RT("giong_fiber_switches_total", "counter", switches, "Fiber context switches."),
	RT32("giong_fibers_live", "gauge", fibers_live, "Fibers not finished."),
	RT32("giong_recv_buffers_free", "gauge", recvbufs_free, "Receive buffers free."),
	FC("giong_serve_file_cache_hits_total", "counter", hits, "Opens the cache answered."),
	FC("giong_serve_file_cache_misses_total", "counter", misses, "Files opened."),
	FC("giong_serve_file_cache_evictions_total", "counter", evictions,
	   "Cached files dropped for room."),
	FC32("giong_serve_file_cache_entries", "gauge", entries, "Files cached now."),
	H2("giong_http2_connections_total", "counter", connections,
	   "Connections that spoke HTTP/2 (h2 and h2c)."),
	H2("giong_http2_streams_total", "counter", streams, "HTTP/2 streams opened by clients."),
	H2("giong_http2_refused_streams_total", "counter", refused_streams,
	   "HTTP/2 streams refused past the concurrency limit."),
	H2("giong_http2_resets_received_total", "counter", resets_received,
	   "RST_STREAM frames from clients."),
	H2("giong_http2_goaway_calm_total", "counter", goaway_calm,
	   "HTTP/2 connections ended with ENHANCE_YOUR_CALM."),
	H2("giong_http2_protocol_errors_total", "counter", protocol_errors,
	   "HTTP/2 connections ended for a protocol error."),
	H2("giong_http2_session_bytes", "gauge", session_bytes,
	   "Bytes libnghttp2 holds now for this worker's sessions."),
};

/* One family by protocol, per worker: HTTP/2's count (the @h2 field of the worker's
 * h2_figures) and HTTP/1.1's, the server's count (the @all field of struct giong_http_stats,
 * both schemes) less HTTP/2's; never below 0 (the two are read at slightly different times). */
static void render_by_protocol(FILE *out, const struct slot *v, unsigned n, const char *name,
			       const char *help, size_t all, size_t h2)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
	for (unsigned w = 0; w < n; w++) {
		uint64_t total = 0, two;

		if (!v[w].valid)
			continue;
		for (unsigned i = 0; i < serve_cfg.nservers; i++) {
			uint64_t x;

			memcpy(&x, (const char *)&v[w].http[i] + all, sizeof(x));
			total += x;
		}
		memcpy(&two, (const char *)&v[w].h2 + h2, sizeof(two));
		fprintf(out, "%s{worker=\"%u\",protocol=\"http/1.1\"} %llu\n", name, w,
			total > two ? (unsigned long long)(total - two) : 0);
		fprintf(out, "%s{worker=\"%u\",protocol=\"h2\"} %llu\n", name, w,
			(unsigned long long)two);
	}
}

static unsigned long long value_of(const struct family *f, const void *base)
{
	const char *p = (const char *)base + f->offset;
	uint64_t v64;
	uint32_t v32;

	if (f->is32) {
		memcpy(&v32, p, sizeof(v32));
		return v32;
	}
	memcpy(&v64, p, sizeof(v64));
	return v64;
}

static void render(FILE *out, const struct slot *v, unsigned n)
{
	static const char *const scheme[2] = {"http", "https"};

	for (size_t k = 0; k < sizeof(families) / sizeof(families[0]); k++) {
		const struct family *f = &families[k];

		if (f->kind == 3 && !serve_cfg.h2)
			continue; /* no HTTP/2 served: no HTTP/2 figures */
		fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help, f->name, f->type);
		for (unsigned w = 0; w < n; w++) {
			if (!v[w].valid)
				continue;
			if (f->kind == 1) {
				for (unsigned i = 0; i < serve_cfg.nservers; i++)
					fprintf(out, "%s{worker=\"%u\",scheme=\"%s\"} %llu\n",
						f->name, w, scheme[i], value_of(f, &v[w].http[i]));
			} else {
				const void *base = f->kind == 3   ? (const void *)&v[w].h2
						   : f->kind == 2 ? (const void *)&v[w].fc
								  : (const void *)&v[w].rt;

				fprintf(out, "%s{worker=\"%u\"} %llu\n", f->name, w,
					value_of(f, base));
			}
		}
	}
	fprintf(out, "# HELP giong_http_responses_total Responses by status class.\n"
		     "# TYPE giong_http_responses_total counter\n");
	for (unsigned w = 0; w < n; w++)
		for (unsigned i = 0; v[w].valid && i < serve_cfg.nservers; i++)
			for (int c = 0; c < 5; c++)
				fprintf(out,
					"giong_http_responses_total{worker=\"%u\",scheme=\"%s\","
					"class=\"%dxx\"} %llu\n",
					w, scheme[i], c + 1,
					(unsigned long long)v[w].http[i].responses[c]);
	render_by_protocol(out, v, n, "giong_serve_requests_by_protocol_total",
			   "Requests by protocol (HTTP/2: streams; HTTP/1.1: the rest).",
			   offsetof(struct giong_http_stats, requests),
			   offsetof(struct h2_figures, streams));
	render_by_protocol(out, v, n, "giong_serve_connections_by_protocol_total",
			   "Connections by protocol (HTTP/1.1: those that did not speak HTTP/2).",
			   offsetof(struct giong_http_stats, accepted),
			   offsetof(struct h2_figures, connections));
	/* The process's own count, live (accesslog.c): not a worker's. */
	fprintf(out,
		"# HELP giong_serve_access_log_dropped_total Access-log lines dropped: the "
		"output took them slower than they came.\n"
		"# TYPE giong_serve_access_log_dropped_total counter\n"
		"giong_serve_access_log_dropped_total %llu\n",
		(unsigned long long)serve_alog_dropped());
#ifdef GIONG_HAVE_TLS
	/* The process's kernel TLS counts (libgiong-tls's, every worker's together). */
	struct giong_tls_ktls_stats k;

	if (giong_tls_ktls_stats(&k) == 0)
		fprintf(out,
			"# HELP giong_tls_ktls_tx_total TLS connections whose send direction the "
			"kernel took (docs/tls.md, Kernel TLS).\n"
			"# TYPE giong_tls_ktls_tx_total counter\n"
			"giong_tls_ktls_tx_total %llu\n"
			"# HELP giong_tls_ktls_fallback_total TLS connections left in user space, "
			"by reason.\n"
			"# TYPE giong_tls_ktls_fallback_total counter\n"
			"giong_tls_ktls_fallback_total{reason=\"module\"} %llu\n"
			"giong_tls_ktls_fallback_total{reason=\"cipher\"} %llu\n"
			"giong_tls_ktls_fallback_total{reason=\"other\"} %llu\n"
			"# HELP giong_tls_ktls_rx_total TLS connections whose receive direction the "
			"kernel took too.\n"
			"# TYPE giong_tls_ktls_rx_total counter\n"
			"giong_tls_ktls_rx_total %llu\n"
			"# HELP giong_tls_ktls_rx_fallback_total TLS connections whose receive "
			"direction stayed in user space after the send direction went.\n"
			"# TYPE giong_tls_ktls_rx_fallback_total counter\n"
			"giong_tls_ktls_rx_fallback_total %llu\n"
			"# HELP giong_tls_ktls_released_total TLS library objects freed: both "
			"directions in the kernel.\n"
			"# TYPE giong_tls_ktls_released_total counter\n"
			"giong_tls_ktls_released_total %llu\n"
			"# HELP giong_tls_ktls_key_update_total TLS connections ended by the "
			"peer's KeyUpdate under kernel TLS (Linux before 6.14 cannot follow it).\n"
			"# TYPE giong_tls_ktls_key_update_total counter\n"
			"giong_tls_ktls_key_update_total %llu\n",
			(unsigned long long)k.tx, (unsigned long long)k.fallback_module,
			(unsigned long long)k.fallback_cipher, (unsigned long long)k.fallback_other,
			(unsigned long long)k.rx, (unsigned long long)k.rx_fallback,
			(unsigned long long)k.released, (unsigned long long)k.key_update);
#endif
}

int serve_metrics_handle(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	struct slot *v = calloc(nslots ? nslots : 1, sizeof(*v));
	int self = giong_worker_index(), r;
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	(void)req;
	(void)ctx;
	if (!v)
		return -ENOMEM;
	for (unsigned w = 0; w < nslots; w++) {
		if ((int)w == self) {
			collect(&v[w]);
			continue;
		}
		pthread_mutex_lock(&slots[w].lock);
		v[w].valid = slots[w].valid;
		v[w].rt = slots[w].rt;
		memcpy(v[w].http, slots[w].http, sizeof(v[w].http));
		v[w].fc = slots[w].fc;
		v[w].h2 = slots[w].h2;
		pthread_mutex_unlock(&slots[w].lock);
	}
	if (!(out = open_memstream(&text, &len))) {
		free(v);
		return -ENOMEM;
	}
	render(out, v, nslots);
	free(v);
	if (fclose(out) != 0) {
		free(text);
		return -ENOMEM;
	}
	r = giong_http_response_header(res, "Content-Type", "text/plain; version=0.0.4");
	if (!r)
		r = giong_http_response_header(res, "Cache-Control", "no-store");
	if (!r)
		r = giong_http_response_send(res, text, len);
	free(text);
	return r;
}
