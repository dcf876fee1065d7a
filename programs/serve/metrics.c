/* SPDX-License-Identifier: MIT */
/*
 * metrics.c - giong-serve's --metrics route: the runtime's, HTTP's and the open-file cache's
 * counters of every worker in the Prometheus text format (version 0.0.4).
 *
 * A worker's counters may be read only by that worker while it runs (giong_stats(),
 * giong_http_server_stats()), so each worker publishes a copy into its slot once a second
 * (a task that waits for shutdown with a one-second deadline), under the slot's lock; the
 * worker answering a scrape reads its own live and the others' copies, at most a second old.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <giong/http.h>

#include "accesslog.h"
#include "fcache.h"
#include "serve.h"

#define PUBLISH_MS 1000

struct slot {
	pthread_mutex_t lock;
	bool valid;
	struct giong_stats rt;
	struct giong_http_stats http[2];
	struct serve_fcache_stats fc;
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
	int kind;      /* 0: runtime, 1: HTTP per scheme, 2: cache */
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
};

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

		fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help, f->name, f->type);
		for (unsigned w = 0; w < n; w++) {
			if (!v[w].valid)
				continue;
			if (f->kind == 1) {
				for (unsigned i = 0; i < serve_cfg.nservers; i++)
					fprintf(out, "%s{worker=\"%u\",scheme=\"%s\"} %llu\n",
						f->name, w, scheme[i], value_of(f, &v[w].http[i]));
			} else {
				fprintf(out, "%s{worker=\"%u\"} %llu\n", f->name, w,
					value_of(f, f->kind ? (const void *)&v[w].fc
							    : (const void *)&v[w].rt));
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
	/* The process's own count, live (accesslog.c): not a worker's. */
	fprintf(out,
		"# HELP giong_serve_access_log_dropped_total Access-log lines dropped: the "
		"output took them slower than they came.\n"
		"# TYPE giong_serve_access_log_dropped_total counter\n"
		"giong_serve_access_log_dropped_total %llu\n",
		(unsigned long long)serve_alog_dropped());
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
