/* SPDX-License-Identifier: MIT */
/*
 * giong-load - an HTTP load generator on giong: each connection a fiber that sends a
 * request through libgiong-http's client, reads the whole response, checks its status and
 * length, and repeats, on -t workers; one io_uring_enter per turn of each worker's loop
 * serves all of them. With --h2, each connection speaks HTTP/2 with --streams requests in
 * flight (h2.c, on libnghttp2).
 *
 *   giong-load URL [-c CONNS] [-d SECS] [-n REQUESTS] [-t WORKERS] [-R RATE] [-P DEPTH]
 *              [--h2 [--streams N]] [-H 'Name: value']... [--method METHOD]
 *              [--body FILE] [--timeout MS] [--latency] [--json] [-k] [--tls-backend NAME]
 *
 * Latency is from the request's send to its response's end; with -R, from the time the
 * request should have been sent (pace.h: a stalled server cannot hide its delay, wrk2's
 * correction of coordinated omission). The report is report.c's; the histogram hist.c's.
 *
 * With -P DEPTH each connection sends DEPTH requests in one write (a client pipeline), reads
 * their DEPTH responses in order, and repeats: each request's latency runs from the batch's
 * send (with -R, from its own due time, or the send if that came first) to its response's end.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <giong/http.h>

#include "../args.h"
#include "../stop_signals.h"
#include "h2.h"
#include "hist.h"
#include "pace.h"
#include "report.h"
#include "tls_client.h"

#define PROG "giong-load"
#define MAX_FIELDS 32
#define BODY_MAX (64u << 20)

/* What each worker counts: its own, merged after the run (no sharing while it runs). */
struct worker_state {
	struct load_hist hist;
	struct load_totals totals;
	uint64_t first_ns, last_ns; /* the span its requests covered */
};

static struct {
	const char *url, *method;
	const char *fields[MAX_FIELDS][2];
	size_t field_len[MAX_FIELDS][2];
	unsigned nfields;
	char *body;
	size_t body_len;
	uint32_t conns, workers, depth, streams;
	uint64_t rate, secs, timeout_ms;
	bool latency, json, progress, h2, secs_given;
	uint32_t live; /* connections still running (atomic): the progress line stops with them */
	struct load_pace pace;
	struct load_budget budget; /* -n */
	struct load_h2 *h2run;
	uint64_t start_ns, end_ns;
	struct giong_http_client *cli;
	struct worker_state *ws;
} g;

/* The error kind of a failed exchange step. */
static enum load_err err_kind(int r, bool sent)
{
	if (r == -ETIMEDOUT)
		return LOAD_ERR_TIMEOUT;
	if (!sent && (r == -ECONNREFUSED || r == -EHOSTUNREACH || r == -ENETUNREACH ||
		      r == -EADDRNOTAVAIL || r <= -4000 /* TLS handshake */))
		return LOAD_ERR_CONNECT;
	return sent ? LOAD_ERR_READ : LOAD_ERR_WRITE;
}

/* Read the rest of @ex's response (its head in, status @status) and count it into @w;
 * ends @ex. */
static void finish(struct worker_state *w, struct giong_http_exchange *ex, int status,
		   uint64_t intended, uint64_t sent)
{
	int64_t want = giong_http_exchange_content_length(ex);
	uint64_t bytes = 0;

	for (;;) {
		const void *data;
		ssize_t n = giong_http_exchange_next(ex, &data);

		if (n == 0)
			break;
		if (n < 0) {
			w->totals.errors[err_kind((int)n, true)]++;
			giong_http_exchange_end(ex);
			return;
		}
		bytes += (uint64_t)n;
	}
	giong_http_exchange_end(ex);
	if (want >= 0 && (uint64_t)want != bytes)
		w->totals.errors[LOAD_ERR_LENGTH]++;
	if (status < 200 || status > 399)
		w->totals.errors[LOAD_ERR_STATUS]++;
	if (status >= LOAD_STATUS_MIN && status < LOAD_STATUS_MIN + LOAD_STATUS_COUNT)
		w->totals.status[status - LOAD_STATUS_MIN]++;
	w->totals.requests++;
	w->totals.bytes += bytes;
	load_hist_record(&w->hist, load_pace_latency(&g.pace, intended, sent, load_now_ns()));
}

/* An exchange of the request, with the -H fields: 0 or -errno (nothing to end then). */
static int begin_request(struct giong_http_exchange **ex)
{
	int r = giong_http_exchange_begin(g.cli, g.method, g.url, ex);

	for (unsigned i = 0; i < g.nfields && !r; i++)
		r = giong_http_exchange_header_n(*ex, g.fields[i][0], g.field_len[i][0],
						 g.fields[i][1], g.field_len[i][1]);
	if (r && *ex) {
		giong_http_exchange_end(*ex);
		*ex = NULL;
	}
	return r;
}

/* One request and its whole response; counted into @w. */
static void one_request(struct worker_state *w, uint64_t intended)
{
	struct giong_http_exchange *ex;
	uint64_t sent = load_now_ns();
	int r, status;

	if ((r = begin_request(&ex))) {
		w->totals
			.errors[r == -EMFILE || r == -ENFILE ? LOAD_ERR_CONNECT : LOAD_ERR_WRITE]++;
		giong_sleep_ms(1); /* failed at once: not a busy loop that starves the worker */
		return;
	}
	if ((r = giong_http_exchange_send(ex, g.body, g.body_len))) {
		w->totals.errors[err_kind(r, false)]++;
		giong_http_exchange_end(ex);
		giong_sleep_ms(1); /* a refusing server, no descriptor left: not a busy loop */
		return;
	}
	if ((status = giong_http_exchange_response(ex)) < 0) {
		w->totals.errors[err_kind(status, true)]++;
		giong_http_exchange_end(ex);
		return;
	}
	finish(w, ex, status, intended, sent);
}

/* @depth requests in one write and their responses in order (-P); counted into @w.
 * @intended[i] is request i's due time (0s unpaced). */
static void one_batch(struct worker_state *w, const uint64_t *intended, uint32_t depth)
{
	/* The user asked for this method pipelined: not only the idempotent ones. */
	unsigned flags = GIONG_HTTP_PIPELINE_ANY_METHOD;
	struct giong_http_pipeline *pl;
	struct giong_http_exchange *ex;
	uint32_t queued = 0;
	uint64_t sent;
	int r, status;

	if ((r = giong_http_pipeline_begin(g.cli, flags, &pl))) {
		w->totals.errors[LOAD_ERR_CONNECT] += depth;
		return;
	}
	for (; queued < depth; queued++) {
		if ((r = begin_request(&ex)))
			break;
		if ((r = giong_http_pipeline_add(pl, ex, g.body, g.body_len))) {
			giong_http_exchange_end(ex);
			break;
		}
	}
	w->totals.errors[LOAD_ERR_CONNECT] += depth - queued;
	sent = load_now_ns();
	r = giong_http_pipeline_send(pl);
	for (uint32_t i = 0; (status = giong_http_pipeline_next(pl, &ex)) != 0; i++) {
		if (status < 0) {
			w->totals.errors[err_kind(status, r == 0)]++;
			giong_http_exchange_end(ex);
			continue;
		}
		finish(w, ex, status, intended[i], sent);
	}
	giong_http_pipeline_end(pl);
	if (r || queued < depth)
		giong_sleep_ms(1); /* failed at once: not a busy loop that starves the worker */
}

/* A connection: requests until the run's end, paced when -R is given. */
static intptr_t conn_task(void *arg)
{
	uint32_t k = (uint32_t)(uintptr_t)arg;
	struct worker_state *w = &g.ws[giong_worker_index()];
	struct load_pace_conn pc;
	uint64_t *intended = calloc(g.depth, sizeof(*intended)), free_at = 0;
	uint64_t *ref = calloc(g.depth, sizeof(*ref));
	struct load_h2_sched sched = {.pace = &g.pace, .budget = &g.budget, .end_ns = g.end_ns};

	if (!intended || !ref)
		goto out;
	load_pace_conn_init(&pc, &g.pace, k);
	/* Every connection starts at the run's start, a little after the workers did: their
	 * own start-up is no server's latency. */
	if (load_now_ns() < g.start_ns &&
	    giong_sleep_ms((g.start_ns - load_now_ns()) / 1000000 + 1))
		goto out;
	if (g.h2) {
		load_h2_conn(g.h2run, k, &sched, &w->hist, &w->totals);
		goto out;
	}
	while (!giong_is_shutting_down()) {
		uint64_t t = load_now_ns(), saved;
		uint32_t depth;

		/* A request whose connection was free at its due time and went out late was
		 * delayed by this program (its timer's granularity), not by the server: its
		 * latency is from its send. One due while the connection still waited for the
		 * server is from its due time: the server's delay (coordinated omission). */
		for (uint32_t i = 0; i < g.depth; i++) {
			intended[i] = g.rate ? load_pace_conn_next(&pc) : 0;
			ref[i] = g.rate && intended[i] < free_at ? intended[i] : UINT64_MAX;
		}
		/* A batch goes when its first request is due; the rest go early with it. */
		if (t >= g.end_ns || (g.rate && intended[0] >= g.end_ns))
			break;
		if (g.rate && intended[0] > t &&
		    giong_sleep_ms((intended[0] - t + 999999) / 1000000))
			break; /* cancelled: shutdown */
		if (!(depth = load_budget_take(&g.budget, g.depth)))
			break; /* -n: all sent */
		saved = giong_deadline_in(g.timeout_ms);
		if (g.depth == 1)
			one_request(w, ref[0]);
		else
			one_batch(w, ref, depth);
		giong_deadline_restore(saved);
		free_at = load_now_ns();
	}
out:
	free(intended);
	free(ref);
	/* The run's duration ends with its last response, not at -d: a request sent before the
	 * end is counted when it completes after it, and so is the time it took (requests/s is
	 * not inflated by the ones in flight at the end). */
	if (!w->first_ns || w->first_ns > g.start_ns)
		w->first_ns = g.start_ns;
	if (load_now_ns() > w->last_ns)
		w->last_ns = load_now_ns();
	__atomic_sub_fetch(&g.live, 1, __ATOMIC_RELAXED);
	return 0;
}

/* A progress line once a second on a terminal, from worker 0 (its own counts only are
 * readable while the run goes on: the line says so). */
static intptr_t progress_task(void *arg)
{
	struct worker_state *w = arg;
	uint64_t last = 0;

	while (load_now_ns() < g.end_ns && __atomic_load_n(&g.live, __ATOMIC_RELAXED) &&
	       !giong_sleep_ms(1000)) {
		uint64_t n = w->totals.requests;

		fprintf(stderr, "\r" PROG ": %llu s: worker 0 %llu req/s      ",
			(unsigned long long)((load_now_ns() - g.start_ns) / 1000000000u),
			(unsigned long long)(n - last));
		last = n;
	}
	fprintf(stderr, "\r%60s\r", "");
	return 0;
}

static void worker_main(unsigned worker, void *arg)
{
	struct giong_task **tasks;
	uint32_t mine = 0;

	(void)arg;
	for (uint32_t k = worker; k < g.conns; k += g.workers)
		mine++;
	tasks = calloc(mine ? mine : 1, sizeof(*tasks));
	if (!tasks) {
		fprintf(stderr, PROG ": worker %u: out of memory\n", worker);
		return;
	}
	mine = 0;
	for (uint32_t k = worker; k < g.conns; k += g.workers)
		if (giong_spawn(conn_task, (void *)(uintptr_t)k, &tasks[mine]) == 0)
			mine++;
		else
			__atomic_sub_fetch(&g.live, 1, __ATOMIC_RELAXED);
	if (worker == 0 && g.progress)
		giong_spawn(progress_task, &g.ws[0], NULL);
	for (uint32_t i = 0; i < mine; i++)
		giong_join(tasks[i], NULL);
	free(tasks);
	/* The pool holds idle connections: close them now, from their worker. */
	giong_http_client_close_idle(g.cli);
}

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: " PROG " URL [-c CONNS] [-d SECS] [-n REQUESTS] [-t WORKERS] [-R RATE]\n"
		"       [-P DEPTH] [--h2 [--streams N]] [-H 'Name: value']... [--method METHOD]\n"
		"       [--body FILE] [--timeout MS] [--latency] [--json] [-k] [--tls-backend NAME]\n"
		"  -c CONNS        connections (10), spread over the workers\n"
		"  -d SECS         duration (10; with -n and no -d, until -n is done, a day at most)\n"
		"  -n REQUESTS     requests in all: the run ends once they are answered or failed\n"
		"  -t WORKERS      worker threads (1)\n"
		"  -R RATE         requests/s in all, paced; latency from each request's due time\n"
		"  -P DEPTH        pipelining: DEPTH requests per write, their responses in order (1,\n"
		"                  at most %u); latency from the batch's send\n"
		"  --h2            HTTP/2%s: h2c (prior knowledge) for http://, ALPN h2 for https://\n"
		"  --streams N     --h2: requests in flight per connection (1, at most %u)\n"
		"  -m N            --streams N (h2load's -m); -m with a word is the method\n"
		"  -H 'N: v'       a request field (up to %d)\n"
		"  --method METHOD the method (GET)\n"
		"  --body FILE     the request body (at most 64 MiB)\n"
		"  --timeout MS    a request's deadline, connect to last byte (2000); --h2: the\n"
		"                  connect's, and each stream's from its send to its end\n"
		"  --latency       the percentile table in the report\n"
		"  --json          the report as one JSON object\n"
		"  -k              https: do not verify the server's certificate\n"
		"  --tls-backend   https: %s\n",
		GIONG_HTTP_PIPELINE_MAX,
		load_h2_available() ? "" : " (not in this build: no libnghttp2)",
		LOAD_H2_STREAMS_MAX, MAX_FIELDS, load_tls_backends());
	exit(status);
}

static void add_field(const char *text)
{
	const char *colon = strchr(text, ':'), *v;

	if (!colon || colon == text || g.nfields == MAX_FIELDS) {
		fprintf(stderr, PROG ": -H '%s': 'Name: value', at most %d\n", text, MAX_FIELDS);
		exit(2);
	}
	for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
		;
	g.fields[g.nfields][0] = text;
	g.field_len[g.nfields][0] = (size_t)(colon - text);
	g.fields[g.nfields][1] = v;
	g.field_len[g.nfields][1] = strlen(v);
	g.nfields++;
}

static void read_body(const char *path)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16, n;

	free(g.body); /* a second --body replaces the first */
	g.body = NULL;
	g.body_len = 0;
	if (!f || !(g.body = malloc(cap))) {
		fprintf(stderr, PROG ": --body %s: %s\n", path, strerror(errno));
		exit(1);
	}
	while ((n = fread(g.body + g.body_len, 1, cap - g.body_len, f)) > 0) {
		g.body_len += n;
		if (g.body_len == cap) {
			char *nb = cap < BODY_MAX ? realloc(g.body, cap *= 2) : NULL;

			if (!nb) {
				fprintf(stderr, PROG ": --body %s: over 64 MiB\n", path);
				exit(1);
			}
			g.body = nb;
		}
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	struct giong_http_client_options co = {0};
	struct load_tls_args tls = {.backend = load_tls_default_backend()};
	struct giong_config cfg;
	struct giong_runtime *rt;
	struct load_totals total = {0};
	struct load_hist *hist;
	struct load_run run;
	int r;

	g.method = "GET";
	g.conns = 10;
	g.workers = 1;
	g.depth = 1;
	g.secs = 10;
	g.timeout_ms = 2000;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			usage(0);
		else if (!strcmp(a, "--latency"))
			g.latency = true;
		else if (!strcmp(a, "--json"))
			g.json = true;
		else if (!strcmp(a, "-k"))
			tls.insecure = true;
		else if (!strcmp(a, "--h2"))
			g.h2 = true;
		else if (a[0] != '-' && !g.url)
			g.url = a;
		else if (i + 1 >= argc)
			usage(2);
		else if (!strcmp(a, "-c"))
			g.conns = (uint32_t)tool_number(PROG, a, argv[++i], 1, 1000000);
		else if (!strcmp(a, "-d"))
			g.secs = tool_number(PROG, a, argv[++i], 1, 86400), g.secs_given = true;
		else if (!strcmp(a, "-n"))
			g.budget.limit = tool_number(PROG, a, argv[++i], 1, UINT64_MAX / 2);
		else if (!strcmp(a, "--streams") ||
			 (!strcmp(a, "-m") &&
			  strspn(argv[i + 1], "0123456789") == strlen(argv[i + 1])))
			g.streams =
				(uint32_t)tool_number(PROG, a, argv[++i], 1, LOAD_H2_STREAMS_MAX);
		else if (!strcmp(a, "-t"))
			g.workers = (uint32_t)tool_number(PROG, a, argv[++i], 1, 1024);
		else if (!strcmp(a, "-R"))
			g.rate = tool_number(PROG, a, argv[++i], 1, 1000000000);
		else if (!strcmp(a, "-P"))
			g.depth = (uint32_t)tool_number(PROG, a, argv[++i], 1,
							GIONG_HTTP_PIPELINE_MAX);
		else if (!strcmp(a, "-H"))
			add_field(argv[++i]);
		else if (!strcmp(a, "-m") || !strcmp(a, "--method"))
			g.method = argv[++i];
		else if (!strcmp(a, "--body"))
			read_body(argv[++i]);
		else if (!strcmp(a, "--timeout"))
			g.timeout_ms = tool_number(PROG, a, argv[++i], 1, 3600000);
		else if (!strcmp(a, "--tls-backend"))
			tls.backend = argv[++i];
		else
			usage(2);
	}
	if (!g.url)
		usage(2);
	if (g.streams && !g.h2) {
		fprintf(stderr,
			PROG ": --streams/-m N is HTTP/2's (--h2); HTTP/1.1 pipelines: -P\n");
		return 2;
	}
	if (g.h2 && g.depth > 1) {
		fprintf(stderr, PROG ": -P is HTTP/1.1's pipelining; with --h2, --streams N\n");
		return 2;
	}
	if (!g.streams)
		g.streams = 1;
	if (g.budget.limit && !g.secs_given)
		g.secs = 86400; /* -n alone: the count ends the run (a day at most) */
	{
		/* A connection is a descriptor: as many as the hard limit allows. */
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	if (g.conns < g.workers)
		g.workers = g.conns; /* a worker with no connection would idle */
	g.progress = !g.json && isatty(2);
	co.pool_max = g.conns; /* every connection kept alive between its requests */
	co.head_timeout_ms = co.body_timeout_ms = (uint32_t)g.timeout_ms;
	co.connect_timeout_ms = (uint32_t)g.timeout_ms;
	if (!strncmp(g.url, "https://", 8)) {
		tls.alpn = g.h2 ? "h2" : NULL;
		co.connect = load_tls_connector();
		if (!(co.connect_ctx = load_tls_config(&tls)))
			return 1; /* said why */
	}
	if (g.h2) {
		struct load_h2_args ha = {.url = g.url,
					  .method = g.method,
					  .fields = (const char *const(*)[2])g.fields,
					  .field_len = (const size_t(*)[2])g.field_len,
					  .nfields = g.nfields,
					  .body = g.body,
					  .body_len = g.body_len,
					  .streams = g.streams,
					  .timeout_ms = g.timeout_ms,
					  .connect = co.connect,
					  .connect_ctx = co.connect_ctx};

		if (load_h2_new(&ha, &g.h2run))
			return 1; /* said why */
	}
	if ((r = giong_http_client_new(&co, &g.cli)) ||
	    !(g.ws = calloc(g.workers, sizeof(*g.ws))) || !(hist = malloc(sizeof(*hist)))) {
		fprintf(stderr, PROG ": %s\n", r ? giong_strerror(r) : "out of memory");
		return 1;
	}
	for (uint32_t i = 0; i < g.workers; i++)
		load_hist_init(&g.ws[i].hist);
	giong_config_init(&cfg);
	cfg.workers = g.workers;
	cfg.shutdown_on_signals = true;
	cfg.shutdown_grace_ms = (uint32_t)g.timeout_ms;
	if ((r = giong_runtime_new(&cfg, &rt))) {
		fprintf(stderr, PROG ": %s\n", giong_strerror(r));
		return 1;
	}
	g.start_ns = load_now_ns() + 100000000u; /* the workers' start-up before it */
	g.end_ns = g.start_ns + g.secs * 1000000000u;
	load_pace_init(&g.pace, g.rate, g.conns, g.start_ns);
	g.live = g.conns;
	tool_block_stop_signals(); /* to the exit: ../stop_signals.h says why */
	r = giong_runtime_run(rt, worker_main, NULL);
	giong_runtime_free(rt);
	giong_http_client_free(g.cli);
	load_tls_free(co.connect_ctx);
	if (r) {
		fprintf(stderr, PROG ": %s\n", giong_strerror(r));
		return 1;
	}
	load_hist_init(hist);
	for (uint32_t i = 0; i < g.workers; i++) {
		g.ws[i].totals.duration_ns = g.ws[i].last_ns - g.ws[i].first_ns;
		load_totals_add(&total, &g.ws[i].totals);
		load_hist_merge(hist, &g.ws[i].hist);
	}
	run = (struct load_run){.url = g.url,
				.method = g.method,
				.conns = g.conns,
				.workers = g.workers,
				.depth = g.depth,
				.protocol = g.h2 ? load_h2_protocol(g.h2run) : "http/1.1",
				.streams = g.streams,
				.rate = g.rate,
				.latency = g.latency};
	r = g.json ? load_report_json_file(stdout, &run, &total, hist)
		   : load_report_text_file(stdout, &run, &total, hist);
	free(hist);
	load_h2_free(g.h2run);
	free(g.ws);
	free(g.body);
	return r < 0 ? 1 : 0;
}
