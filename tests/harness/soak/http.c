/* SPDX-License-Identifier: MIT */
/*
 * http.c - soak --http: the example server examples/http in a process of its
 * own, and client tasks that talk HTTP (or HTTPS) to it; main.c describes
 * the steps.
 *
 * Every request body carries the pattern of check.c (a key of its own), and
 * every response of /echo is checked against it byte for byte; /json,
 * /health and /users are checked against what the server is known to send.
 * Requests go through libgiong-http's client (keep-alive pools, pipelines,
 * deadlines, cancellation) where the client is polite, and over raw streams
 * (TCP, or TLS through giong_tls_connect()) where it is not: requests written
 * in random pieces, pipelined bursts of sized and chunked bodies, requests
 * cut off half way, connections reset (SO_LINGER {1, 0}) at random moments.
 */
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "soak.h"

extern char **environ;

#ifndef SOAK_MAKE_CERTS
#define SOAK_MAKE_CERTS "tests/tls/make-certs.sh"
#endif

/* ------------------------------------------------------------------ server */

static bool log_has(const char *path, const char *what)
{
	FILE *f = fopen(path, "r");
	char line[512];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, what) != NULL;
	fclose(f);
	return found;
}

static void show_log(const char *path, const char *prefix, unsigned last)
{
	FILE *f = fopen(path, "r");
	char line[512], **lines = calloc(last ? last : 1, sizeof(char *));
	unsigned n = 0;

	if (!f || !lines) {
		if (f)
			fclose(f);
		free(lines);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		if (prefix && strncmp(line, prefix, strlen(prefix)))
			continue;
		if (!last) {
			printf("  server worker %s", line + (prefix ? strlen(prefix) : 0));
			continue;
		}
		free(lines[n % last]);
		lines[n % last] = strdup(line);
		n++;
	}
	fclose(f);
	for (unsigned i = n > last ? n - last : 0; last && i < n; i++)
		fprintf(stderr, "    %s", lines[i % last] ? lines[i % last] : "\n");
	for (unsigned i = 0; i < (last ? last : 1); i++)
		free(lines[i]);
	free(lines);
}

int http_server_prepare(struct soak_server *srv)
{
	char certs[160];

	snprintf(srv->dir, sizeof(srv->dir), "/tmp/soak-http.XXXXXX");
	if (!mkdtemp(srv->dir)) {
		fprintf(stderr, "soak: mkdtemp: %s\n", strerror(errno));
		return -1;
	}
	snprintf(srv->log, sizeof(srv->log), "%s/server.log", srv->dir);
	if (opt.tls && !opt.certs) {
		char cmd[512];

		/* The tls tests' certificates: a test CA, localhost signed by it. */
		snprintf(certs, sizeof(certs), "%s/certs", srv->dir);
		snprintf(cmd, sizeof(cmd), "sh '%s' '%s' >'%s/certs.log' 2>&1", SOAK_MAKE_CERTS,
			 certs, srv->dir);
		if (system(cmd)) {
			fprintf(stderr, "soak: making certificates with %s failed (%s/certs.log)\n",
				SOAK_MAKE_CERTS, srv->dir);
			return -1;
		}
		opt.certs = strdup(certs);
	}
	return 0;
}

int http_server_start(struct soak_server *srv)
{
	char port[16], hport[16], workers[16], cert[160], key[160];
	const char *argv[24];
	pid_t parent = getpid();
	int argc = 0, port_n = opt.port, hport_n = 0;

	if (opt.tls) {
		hport_n = soak_pick_port();
		while (hport_n == port_n)
			hport_n = soak_pick_port();
	}
	snprintf(port, sizeof(port), "%d", port_n);
	snprintf(hport, sizeof(hport), "%d", hport_n);
	snprintf(workers, sizeof(workers), "%u", opt.server_workers);
	argv[argc++] = opt.http_bin;
	argv[argc++] = "--host";
	argv[argc++] = "127.0.0.1";
	argv[argc++] = "--port";
	argv[argc++] = port;
	argv[argc++] = "--workers";
	argv[argc++] = workers;
	argv[argc++] = "--stats";
	if (opt.tls) {
		snprintf(cert, sizeof(cert), "%s/server.pem", opt.certs);
		snprintf(key, sizeof(key), "%s/server.key", opt.certs);
		argv[argc++] = "--https-port";
		argv[argc++] = hport;
		argv[argc++] = "--tls-cert";
		argv[argc++] = cert;
		argv[argc++] = "--tls-key";
		argv[argc++] = key;
		argv[argc++] = "--tls-backend";
		argv[argc++] = opt.tls;
	}
	argv[argc] = NULL;

	fflush(NULL);
	srv->pid = fork();
	if (srv->pid < 0) {
		fprintf(stderr, "soak: fork: %s\n", strerror(errno));
		srv->pid = 0;
		return -1;
	}
	if (srv->pid == 0) {
		/* The server: killed if the soak dies (a crash, a sanitizer's halt),
		 * never left behind. */
		int in = open("/dev/null", O_RDONLY), out;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		out = open(srv->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
			_exit(127);
		execve(opt.http_bin, (char *const *)argv, environ);
		fprintf(stderr, "soak: cannot start %s: %s\n", opt.http_bin, strerror(errno));
		_exit(127);
	}
	for (unsigned i = 0; i < 200; i++) { /* 10 s */
		int st;

		if (log_has(srv->log, opt.tls ? "HTTPS on" : "HTTP on"))
			break;
		if (waitpid(srv->pid, &st, WNOHANG) == srv->pid) {
			fprintf(stderr, "soak: the server %s ended at start-up:\n", opt.http_bin);
			show_log(srv->log, NULL, 10);
			srv->pid = 0;
			return -1;
		}
		usleep(50000);
	}
	if (!log_has(srv->log, opt.tls ? "HTTPS on" : "HTTP on")) {
		fprintf(stderr, "soak: the server is not listening after 10 s\n");
		return -1;
	}
	opt.port = opt.tls ? hport_n : port_n;
	snprintf(opt.addr_text, sizeof(opt.addr_text), "127.0.0.1:%d", opt.port);
	snprintf(opt.origin, sizeof(opt.origin), "%s://%s:%d", opt.tls ? "https" : "http",
		 opt.tls ? "localhost" : "127.0.0.1", opt.port);
	return giong_addr_parse(opt.addr_text, &opt.addr) ? -1 : 0;
}

int http_server_stop(struct soak_server *srv)
{
	int st = 0;

	if (!srv->pid)
		return -1;
	kill(srv->pid, SIGTERM);
	for (unsigned i = 0; i < 300; i++) { /* 15 s */
		pid_t p = waitpid(srv->pid, &st, WNOHANG);

		if (p == srv->pid) {
			srv->pid = 0;
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		}
		usleep(50000);
	}
	fprintf(stderr, "soak: the server did not stop within 15 s of SIGTERM: killed\n");
	kill(srv->pid, SIGKILL);
	waitpid(srv->pid, &st, 0);
	srv->pid = 0;
	return -1;
}

void http_server_cleanup(struct soak_server *srv, bool failed)
{
	char cmd[128];

	if (srv->pid) {
		kill(srv->pid, SIGKILL);
		waitpid(srv->pid, NULL, 0);
		srv->pid = 0;
	}
	if (!srv->dir[0])
		return;
	show_log(srv->log, "http: worker ", 0);
	if (failed) {
		fprintf(stderr, "soak: the server's log (last lines):\n");
		show_log(srv->log, NULL, 10);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", srv->dir);
	(void)!system(cmd);
}

#ifdef SOAK_HTTP

#include <giong/http/client.h>
#ifdef GIONG_HAVE_TLS
#include <giong/tls.h>

#include "tls_backends.h" /* programs/tls_backends.h */
#endif

/* What a check returns for wrong bytes (counted as a mismatch already):
 * no errno, no status. */
#define BAD (-100000)

#define RD_CAP (64u * 1024u)       /* a raw connection's read buffer */
#define BURST_BODIES (48u * 1024u) /* body bytes of one pipelined burst */

static const char JSON[] = "{\"message\":\"Hello, World!\"}";
#define USERS_LEN 8173 /* GET /users: examples/http.c's 144 users */

static struct giong_http_client *steady_cli, *chaos_cli;
static void *tls_cfg; /* struct giong_tls_config * with TLS */

/* ---------------------------------------------------------------- settings */

#ifdef GIONG_HAVE_TLS
static int connector(struct giong_stream *tcp, const char *host, void *ctx,
		     struct giong_stream **out)
{
	return giong_tls_connect(tcp, ctx, host, out);
}
#endif

int http_clients_init(void)
{
	struct giong_http_client_options o = {
		.body_max = 2u * HTTP_MAX_BODY,
		.connect_timeout_ms = WATCHDOG_MS,
		.head_timeout_ms = WATCHDOG_MS,
		.body_timeout_ms = WATCHDOG_MS,
		.idle_timeout_ms = 5000, /* below the server's 15 s: it never closes first */
		.pool_max = 64,
	};

	if (opt.tls) {
#ifdef GIONG_HAVE_TLS
		static const char *const alpn[] = {"http/1.1"};
		const struct giong_tls_backend *be = tool_tls_backend(opt.tls);
		struct giong_tls_config *c;
		char ca[200], why[200] = "";
		int r;

		if (!be) {
			fprintf(stderr, "soak: --tls %s: not built in (this build has %s)\n",
				opt.tls, tool_tls_backend_names());
			return 77;
		}
		snprintf(ca, sizeof(ca), "%s/ca.pem", opt.certs);
		if ((r = giong_tls_config_new(be, &c))) {
			fprintf(stderr, "soak: TLS: %s\n", giong_strerror(r));
			return -1;
		}
		if ((r = giong_tls_config_alpn(c, alpn, 1)) ||
		    (r = giong_tls_config_ca_file(c, ca)) ||
		    (r = giong_tls_config_check(c, why, sizeof(why)))) {
			fprintf(stderr, "soak: TLS (%s, CA %s): %s%s%s\n", opt.tls, ca,
				giong_strerror(r), why[0] ? ": " : "", why);
			giong_tls_config_free(c);
			return -1;
		}
		tls_cfg = c;
		o.connect = connector;
		o.connect_ctx = c;
#else
		fprintf(stderr, "soak: built without libgiong-tls: no --tls\n");
		return 77;
#endif
	}
	if (giong_http_client_new(&o, &steady_cli) || giong_http_client_new(&o, &chaos_cli)) {
		fprintf(stderr, "soak: out of memory\n");
		return -1;
	}
	return 0;
}

void http_clients_worker_done(void)
{
	if (steady_cli)
		giong_http_client_close_idle(steady_cli);
	if (chaos_cli)
		giong_http_client_close_idle(chaos_cli);
}

void http_clients_free(void)
{
	giong_http_client_free(steady_cli);
	giong_http_client_free(chaos_cli);
	steady_cli = chaos_cli = NULL;
#ifdef GIONG_HAVE_TLS
	giong_tls_config_free(tls_cfg);
#endif
	tls_cfg = NULL;
}

/* ----------------------------------------------------------------- helpers */

/* A body length: mostly 1 B .. 64 KiB (rnd_len), some empty, some up to
 * HTTP_MAX_BODY. */
static uint32_t body_len(uint64_t *rng, uint32_t max)
{
	unsigned p = below(rng, 100);
	uint32_t n = p < 5 ? 0 : p < 92 ? rnd_len(rng) : below(rng, HTTP_MAX_BODY + 1);

	return n > max ? max : n;
}

static uint64_t new_key(struct client *cl)
{
	return msg_key(cl->c.id, cl->c.seq++);
}

/* A failed request that should have succeeded: an error, or (GIONG_FAULTS)
 * what the fault plan asked for, said and counted but not fatal. */
static void failed(const char *what, int r, bool steady)
{
	if (r == -ETIMEDOUT) { /* a hang is a hang, under a fault plan too */
		REPORT("STALL %s: no answer within %u ms\n", what, WATCHDOG_MS);
		INC(stalls);
	} else if (!opt.lenient) {
		if (r > 0)
			REPORT("ERROR %s: status %d\n", what, r);
		else
			REPORT("ERROR %s: %s\n", what, giong_err_name(r));
		INC(errors);
	}
	if (steady)
		INC(http_steady_failed);
	else
		INC(http_failed);
}

/* A response body that is not what was sent. */
static void mismatch(const char *what, const void *data, size_t n, size_t want, uint64_t key)
{
	long at = n == want && key ? check(data, key, 0, n) : -1;

	if (n != want)
		REPORT("MISMATCH %s: %zu bytes back, %zu sent\n", what, n, want);
	else
		REPORT("MISMATCH %s: byte %ld of %zu differs\n", what, at, n);
	INC(mismatches);
}

/* Check an exchange's whole body against (key, want) or the literal @lit of
 * length want. 0, or BAD (counted). */
static int check_body(const char *what, const void *data, size_t n, uint64_t key, const char *lit,
		      size_t want)
{
	bool ok = n == want && (lit ? !memcmp(data, lit, n) : check(data, key, 0, n) < 0);

	if (!ok) {
		mismatch(what, data, n, want, lit ? 0 : key);
		return BAD;
	}
	ADD(bytes_verified, n);
	INC(http_requests);
	return 0;
}

/* -------------------------------------------- requests through the client */

enum req_kind { R_ECHO, R_ECHO_CHUNKED, R_JSON, R_USERS, R_HEALTH, R_SLOW };

struct req {
	enum req_kind kind;
	uint64_t key;
	uint32_t len;
	const uint8_t *body;
	char url[200];
};

static void req_make(struct client *cl, struct req *q, enum req_kind kind, uint8_t *buf,
		     uint32_t len)
{
	static const char *const path[] = {"/echo", "/echo", "/json", "/users", "/health", "/slow"};

	q->kind = kind;
	q->key = new_key(cl);
	q->len = kind <= R_ECHO_CHUNKED ? len : 0;
	q->body = buf;
	if (kind <= R_ECHO_CHUNKED)
		fill(buf, q->key, len);
	if (kind == R_SLOW)
		snprintf(q->url, sizeof(q->url), "%s/slow?ms=%u", opt.origin, len);
	else
		snprintf(q->url, sizeof(q->url), "%s%s", opt.origin, path[kind]);
}

static const char *req_method(const struct req *q)
{
	return q->kind <= R_ECHO_CHUNKED ? "POST" : "GET";
}

/* Check the response of @q on @ex (its head read, status @status). 0, BAD
 * (a mismatch, counted), or -errno/status (a failure, the caller's). */
static int req_check(struct giong_http_exchange *ex, const struct req *q, int status)
{
	const void *data;
	ssize_t n;

	if (status != 200)
		return status;
	n = giong_http_exchange_body(ex, &data);
	if (n < 0)
		return (int)n;
	switch (q->kind) {
	case R_ECHO:
	case R_ECHO_CHUNKED:
		return check_body("POST /echo", data, (size_t)n, q->key, NULL, q->len);
	case R_JSON:
		return check_body("GET /json", data, (size_t)n, 0, JSON, sizeof(JSON) - 1);
	case R_HEALTH:
		return check_body("GET /health", data, (size_t)n, 0, "ok", 2);
	case R_USERS:
		if (n != USERS_LEN || memcmp(data, "[{\"id\":1,", 9)) {
			mismatch("GET /users", data, (size_t)n, USERS_LEN, 0);
			return BAD;
		}
		ADD(bytes_verified, (uint64_t)n);
		INC(http_requests);
		return 0;
	case R_SLOW:
		if (n < 6 || memcmp(data, "slept ", 6)) {
			mismatch("GET /slow", data, (size_t)n, 6, 0);
			return BAD;
		}
		INC(http_requests);
		return 0;
	}
	return -EINVAL;
}

/* One exchange of @q on @cli: 0 (checked), BAD (a mismatch), or -errno or
 * the status of a failure. */
static int exchange(struct giong_http_client *cli, const struct req *q, uint64_t *rng)
{
	struct giong_http_exchange *ex;
	int r = giong_http_exchange_begin(cli, req_method(q), q->url, &ex);

	if (r)
		return r;
	if (q->kind == R_ECHO_CHUNKED) {
		/* Streamed: chunks of random sizes, some empty. */
		for (uint32_t off = 0; off < q->len && !r;) {
			uint32_t k = below(rng, 4) ? 1 + below(rng, q->len - off) : 0;

			r = giong_http_exchange_write(ex, q->body + off, k);
			off += k;
		}
		if (!r && !q->len)
			r = giong_http_exchange_write(ex, "", 0);
		if (!r)
			INC(http_chunked);
	} else if (q->kind == R_ECHO) {
		giong_http_exchange_header(ex, "Content-Type", "application/octet-stream");
		r = giong_http_exchange_send(ex, q->body, q->len);
	}
	if (!r)
		r = req_check(ex, q, giong_http_exchange_response(ex));
	giong_http_exchange_end(ex);
	return r;
}

static enum req_kind pick_kind(uint64_t *rng)
{
	unsigned p = below(rng, 100);

	return p < 40   ? R_ECHO
	       : p < 60 ? R_ECHO_CHUNKED
	       : p < 80 ? R_JSON
	       : p < 90 ? R_USERS
			: R_HEALTH;
}

/* The steady stream: one well-formed request that must succeed. */
static void step_steady(struct client *cl)
{
	struct req q;
	int r;

	req_make(cl, &q, pick_kind(&cl->rng), cl->c.wbuf, body_len(&cl->rng, HTTP_MAX_BODY));
	r = exchange(steady_cli, &q, &cl->rng);
	if (r == 0)
		INC(http_steady);
	else if (r != BAD)
		failed(q.kind <= R_ECHO_CHUNKED ? "steady POST /echo" : "steady GET", r, true);
}

/* A pipelined burst through the client: 2..32 requests on one connection
 * in one write, their responses in order. */
static void step_pipeline(struct client *cl)
{
	struct giong_http_pipeline *pl;
	struct giong_http_exchange *ex;
	struct req q[32];
	unsigned n = 2 + below(&cl->rng, 31), added = 0, i = 0;
	uint32_t budget = BURST_BODIES, off = 0;
	int r, st;

	if ((r = giong_http_pipeline_begin(chaos_cli, GIONG_HTTP_PIPELINE_ANY_METHOD, &pl))) {
		failed("pipeline", r, false);
		return;
	}
	for (; added < n; added++) {
		unsigned p = below(&cl->rng, 100);
		enum req_kind k = p < 60 ? R_ECHO : p < 85 ? R_JSON : R_HEALTH;
		uint32_t len = k == R_ECHO ? body_len(&cl->rng, budget) : 0;

		req_make(cl, &q[added], k, cl->c.wbuf + off, len);
		off += len;
		budget -= len;
		if ((r = giong_http_exchange_begin(chaos_cli, req_method(&q[added]), q[added].url,
						   &ex)))
			break;
		if ((r = giong_http_pipeline_add(pl, ex, q[added].body, q[added].len))) {
			giong_http_exchange_end(ex);
			break;
		}
	}
	INC(http_pipelines);
	while (r == 0 && (st = giong_http_pipeline_next(pl, &ex)) != 0) {
		int c = st > 0 ? req_check(ex, &q[i], st) : st;

		giong_http_exchange_end(ex);
		i++;
		if (c == BAD)
			break;
		if (c) {
			failed("pipelined request", c, false);
			break;
		}
		INC(http_pipelined);
	}
	if (r)
		failed("pipeline_add", r, false);
	giong_http_pipeline_end(pl);
}

/* An exchange under a deadline of 0..10 ms: answered (checked) or -ETIMEDOUT. */
static void step_deadline(struct client *cl)
{
	struct req q;
	unsigned p = below(&cl->rng, 100);
	uint64_t saved;
	int r;

	if (p < 30)
		req_make(cl, &q, R_SLOW, NULL, below(&cl->rng, 15));
	else
		req_make(cl, &q, p < 70 ? R_ECHO : R_ECHO_CHUNKED, cl->c.wbuf,
			 body_len(&cl->rng, HTTP_MAX_BODY));
	INC(http_deadline_steps);
	saved = giong_deadline_in(below(&cl->rng, 11));
	r = exchange(chaos_cli, &q, &cl->rng);
	giong_deadline_restore(saved);
	if (r == -ETIMEDOUT && giong_now_ms() < saved)
		INC(http_timed_out);
	else if (r && r != BAD)
		failed("request under a deadline", r, false);
}

struct cancel_job {
	struct client *cl;
	struct req q;
	uint64_t rng;
	int r;
};

static intptr_t cancel_task(void *arg)
{
	struct cancel_job *j = arg;

	giong_task_set_name("soak-http-cancel");
	j->r = exchange(chaos_cli, &j->q, &j->rng);
	return 0;
}

/* An exchange in a task of its own, cancelled after 0..5 ms. */
static void step_cancel(struct client *cl)
{
	struct cancel_job j = {.cl = cl, .rng = rnd(&cl->rng) | 1};
	struct giong_task *t;
	unsigned ms = below(&cl->rng, 6);
	uint64_t saved;

	if (below(&cl->rng, 3) == 0)
		req_make(cl, &j.q, R_SLOW, NULL, below(&cl->rng, 10));
	else
		req_make(cl, &j.q, R_ECHO, cl->c.wbuf, body_len(&cl->rng, HTTP_MAX_BODY));
	INC(http_cancel_steps);
	if (giong_spawn(cancel_task, &j, &t)) {
		INC(errors);
		return;
	}
	if (ms)
		giong_sleep_ms(ms);
	else
		giong_yield();
	giong_task_cancel(t);
	/* Join with no deadline: a join that timed out would leave the task
	 * using j. */
	saved = giong_deadline();
	giong_deadline_restore(GIONG_NO_DEADLINE);
	giong_join(t, NULL);
	giong_deadline_restore(saved);
	if (j.r == -ECANCELED)
		INC(http_cancelled);
	else if (j.r && j.r != BAD)
		failed("cancelled request", j.r, false);
}

/* ---------------------------------------------------------- raw streams */

struct raw {
	struct giong_stream *s;
	uint8_t *buf; /* RD_CAP */
	size_t len, off;
};

static int raw_connect(struct client *cl, struct raw *w, bool handshake)
{
	struct giong_stream *tcp;
	int r = giong_tcp_connect_addr(&opt.addr, &tcp);

	(void)cl;
	w->s = NULL;
	w->len = w->off = 0;
	if (r)
		return r;
	INC(conns_opened);
#ifdef GIONG_HAVE_TLS
	if (opt.tls && handshake) {
		if ((r = giong_tls_connect(tcp, tls_cfg, "localhost", &w->s))) {
			giong_stream_close(tcp);
			return r;
		}
		return 0;
	}
#endif
	(void)handshake;
	w->s = tcp;
	return 0;
}

static void raw_close(struct raw *w, bool reset)
{
	if (!w->s)
		return;
	if (reset) {
		struct linger lg = {1, 0};

		if (setsockopt(giong_stream_fd(w->s), SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) == 0)
			INC(http_resets);
	}
	giong_stream_close(w->s);
	w->s = NULL;
}

/* Write @p[0, n) in 1..4 pieces, some after a yield. 0 or -errno. */
static int raw_write(struct client *cl, struct raw *w, const uint8_t *p, size_t n)
{
	unsigned k = 1 + below(&cl->rng, 4);

	while (n) {
		size_t piece = k-- <= 1 ? n : 1 + below(&cl->rng, (uint32_t)n);
		ssize_t r = giong_stream_write_all(w->s, p, piece);

		if (r < 0)
			return (int)r;
		p += piece;
		n -= piece;
		if (n && below(&cl->rng, 2))
			giong_yield();
	}
	return 0;
}

/* More bytes into the read buffer: > 0, 0 at the end of the stream, -errno. */
static ssize_t raw_fill(struct raw *w)
{
	ssize_t n;

	if (w->off == w->len)
		w->off = w->len = 0;
	if (w->len == RD_CAP) {
		memmove(w->buf, w->buf + w->off, w->len - w->off);
		w->len -= w->off;
		w->off = 0;
		if (w->len == RD_CAP)
			return -EMSGSIZE;
	}
	n = giong_stream_read(w->s, w->buf + w->len, RD_CAP - w->len);
	if (n > 0)
		w->len += (size_t)n;
	return n;
}

struct raw_resp {
	int status;
	int64_t clen; /* -1: none */
	bool close;
};

static bool field_is(const char *line, size_t n, const char *name)
{
	size_t k = strlen(name);

	return n > k && !strncasecmp(line, name, k);
}

/* Read and parse one response head. 0; -EPIPE at a clean end of stream
 * before any byte; -EBADMSG (a head this server does not send); -errno. */
static int raw_head(struct raw *w, struct raw_resp *rs)
{
	const char *h, *end = NULL;

	for (;;) {
		ssize_t n;

		if (w->len - w->off >= 4)
			end = memmem(w->buf + w->off, w->len - w->off, "\r\n\r\n", 4);
		if (end)
			break;
		n = raw_fill(w);
		if (n == 0)
			return w->len == w->off ? -EPIPE : -ECONNRESET;
		if (n < 0)
			return (int)n;
	}
	h = (const char *)w->buf + w->off;
	if (end - h < 13 || memcmp(h, "HTTP/1.1 ", 9))
		return -EBADMSG;
	rs->status = (h[9] - '0') * 100 + (h[10] - '0') * 10 + (h[11] - '0');
	rs->clen = -1;
	rs->close = false;
	for (const char *l = memchr(h, '\n', (size_t)(end - h)); l && l < end;) {
		const char *next;
		size_t ln;

		l++; /* the start of the line after that newline */
		next = memchr(l, '\n', (size_t)(end + 2 - l));
		ln = next ? (size_t)(next - l) : 0;

		if (field_is(l, ln, "content-length:"))
			rs->clen = strtoll(l + 15, NULL, 10);
		else if (field_is(l, ln, "transfer-encoding:"))
			return -EBADMSG; /* examples/http sends sized bodies only */
		else if (field_is(l, ln, "connection:") && memmem(l, ln, "close", 5))
			rs->close = true;
		l = next;
	}
	w->off = (size_t)((const uint8_t *)end + 4 - w->buf);
	return rs->clen < 0 ? -EBADMSG : 0;
}

/* Read a body of @clen bytes and check it against (key, want) or the
 * literal @lit. 0, BAD (a mismatch, counted), -errno. */
static int raw_body(struct raw *w, int64_t clen, uint64_t key, const char *lit, size_t want)
{
	size_t got = 0;

	if ((uint64_t)clen != want) {
		REPORT("MISMATCH raw response: Content-Length %" PRId64 ", %zu sent\n", clen, want);
		INC(mismatches);
		return BAD;
	}
	while (got < want) {
		size_t take = w->len - w->off;
		ssize_t n;

		if (!take) {
			n = raw_fill(w);
			if (n <= 0)
				return n ? (int)n : -ECONNRESET;
			continue;
		}
		if (take > want - got)
			take = want - got;
		if (lit ? memcmp(w->buf + w->off, lit + got, take)
			: check(w->buf + w->off, key, got, take) >= 0) {
			REPORT("MISMATCH raw response body at byte %zu of %zu\n", got, want);
			INC(mismatches);
			return BAD;
		}
		w->off += take;
		got += take;
	}
	ADD(bytes_verified, want);
	INC(http_requests);
	return 0;
}

/* One request of a raw burst, as written: its kind and what comes back. */
struct raw_req {
	enum req_kind kind;
	uint64_t key;
	uint32_t len;
};

/* Append request @q (key, len) to @out at *@at: a sized or chunked POST
 * /echo (chunks of random sizes, hex in either case, some with an
 * extension, some with a trailer) or a GET; Connection: close when @last_close.
 * Returns the bytes written, or 0 when it does not fit in @cap. */
static size_t raw_build(struct client *cl, uint8_t *out, size_t cap, struct raw_req *q,
			bool last_close)
{
	static const char *const path[] = {"/echo", "/echo", "/json", "/users", "/health"};
	const char *conn = last_close ? "Connection: close\r\n" : "";
	uint8_t *p = out, *e = out + cap;
	int n;

	if (q->kind > R_ECHO_CHUNKED) {
		n = snprintf((char *)p, (size_t)(e - p), "GET %s HTTP/1.1\r\nHost: soak\r\n%s\r\n",
			     path[q->kind], conn);
		return n > 0 && n < e - p ? (size_t)n : 0;
	}
	if (q->kind == R_ECHO) {
		n = snprintf((char *)p, (size_t)(e - p),
			     "POST /echo HTTP/1.1\r\nHost: soak\r\nContent-Length: %u\r\n%s\r\n",
			     q->len, conn);
		if (n <= 0 || (size_t)n + q->len > (size_t)(e - p))
			return 0;
		p += n;
		fill(p, q->key, q->len);
		return (size_t)n + q->len;
	}
	n = snprintf((char *)p, (size_t)(e - p),
		     "POST /echo HTTP/1.1\r\nHost: soak\r\nTransfer-Encoding: chunked\r\n%s\r\n",
		     conn);
	if (n <= 0 || n >= e - p)
		return 0;
	p += n;
	for (uint32_t off = 0; off < q->len;) {
		uint32_t k = 1 + below(&cl->rng, q->len - off);

		const char *ext = below(&cl->rng, 8) ? "" : ";soak=1";

		n = below(&cl->rng, 2) ? snprintf((char *)p, (size_t)(e - p), "%x%s\r\n", k, ext)
				       : snprintf((char *)p, (size_t)(e - p), "%X%s\r\n", k, ext);
		if (n <= 0 || (size_t)n + k + 2 > (size_t)(e - p))
			return 0;
		p += n;
		/* The pattern continues across chunks: fill the whole body at
		 * its offsets, a chunk at a time. */
		for (uint32_t i = 0; i < k; i++)
			p[i] = pat(q->key, off + i);
		p += k;
		*p++ = '\r';
		*p++ = '\n';
		off += k;
	}
	{
		static const char last[] = "0\r\n\r\n", trailer[] = "0\r\nX-Soak: t\r\n\r\n";
		bool t = below(&cl->rng, 4) == 0;
		size_t k = t ? sizeof(trailer) - 1 : sizeof(last) - 1;

		if (k > (size_t)(e - p))
			return 0;
		memcpy(p, t ? trailer : last, k);
		p += k;
	}
	INC(http_chunked);
	return (size_t)(p - out);
}

static int raw_expect(struct raw *w, const struct raw_req *q, struct raw_resp *rs)
{
	int r = raw_head(w, rs);

	if (r)
		return r;
	if (rs->status != 200)
		return rs->status;
	switch (q->kind) {
	case R_ECHO:
	case R_ECHO_CHUNKED:
		return raw_body(w, rs->clen, q->key, NULL, q->len);
	case R_JSON:
		return raw_body(w, rs->clen, 0, JSON, sizeof(JSON) - 1);
	case R_HEALTH:
		return raw_body(w, rs->clen, 0, "ok", 2);
	default:
		return -EINVAL;
	}
}

/* Build a burst of 1..16 requests into the client's wbuf; their count. */
static unsigned raw_burst_build(struct client *cl, struct raw_req *q, unsigned max, size_t *len,
				bool close_last)
{
	unsigned n = 1 + below(&cl->rng, max), i;
	uint32_t budget = BURST_BODIES;
	size_t at = 0;

	for (i = 0; i < n; i++) {
		unsigned p = below(&cl->rng, 100);
		size_t k;

		q[i].kind = p < 45 ? R_ECHO : p < 80 ? R_ECHO_CHUNKED : p < 95 ? R_JSON : R_HEALTH;
		q[i].key = new_key(cl);
		q[i].len = q[i].kind <= R_ECHO_CHUNKED ? body_len(&cl->rng, budget) : 0;
		budget -= q[i].len;
		k = raw_build(cl, cl->c.wbuf + at, HTTP_MAX_BODY - at, &q[i],
			      close_last && i + 1 == n);
		if (!k)
			break;
		at += k;
	}
	*len = at;
	return i;
}

/* A pipelined burst over a raw stream: 1..16 requests written in random
 * pieces, every response read and checked in order; 1..3 bursts on one
 * connection, the last maybe with Connection: close (then the end of
 * stream must follow). */
static void step_raw_burst(struct client *cl, struct raw *w)
{
	unsigned bursts = 1 + below(&cl->rng, 3);
	int r = raw_connect(cl, w, true);

	if (r) {
		failed("raw connect", r, false);
		return;
	}
	for (unsigned b = 0; b < bursts && !r; b++) {
		struct raw_req q[16];
		struct raw_resp rs;
		bool close_last = b + 1 == bursts && below(&cl->rng, 2);
		size_t len;
		unsigned n = raw_burst_build(cl, q, 16, &len, close_last);

		INC(http_raw_bursts);
		r = raw_write(cl, w, cl->c.wbuf, len);
		for (unsigned i = 0; i < n && !r; i++)
			r = raw_expect(w, &q[i], &rs);
		if (!r && close_last) {
			ssize_t e = w->len > w->off ? 1 : raw_fill(w);

			if (e > 0) {
				REPORT("MISMATCH raw burst: bytes after a Connection: close response\n");
				INC(mismatches);
				r = BAD;
			} else if (e < 0 && e != -ECONNRESET) {
				r = (int)e;
			}
		}
	}
	if (r && r != BAD)
		failed("raw pipelined burst", r, false);
	raw_close(w, false);
}

/* A request cut off half way: 0..2 whole requests (checked), then a random
 * prefix of one more, then a close, a reset, or a half-close after which
 * the server may answer only 400 or 408, and must close. */
static void step_cutoff(struct client *cl, struct raw *w)
{
	struct raw_req q[3];
	struct raw_resp rs;
	unsigned whole = below(&cl->rng, 3), how = below(&cl->rng, 4);
	size_t len = 0, at = 0, cut;
	const uint8_t *head;
	bool in_body;
	int r = raw_connect(cl, w, true);

	if (r) {
		failed("raw connect", r, false);
		return;
	}
	for (unsigned i = 0; i <= whole; i++) {
		/* At most 3 x 16 KiB of bodies: they always fit. */
		q[i].kind = (enum req_kind)below(&cl->rng, 3); /* echo, chunked, json */
		q[i].key = new_key(cl);
		q[i].len = q[i].kind <= R_ECHO_CHUNKED ? body_len(&cl->rng, 16384) : 0;
		len = raw_build(cl, cl->c.wbuf + at, HTTP_MAX_BODY - at, &q[i], false);
		at += len;
	}
	if (len < 2) {
		raw_close(w, false);
		return;
	}
	cut = at - len + 1 + below(&cl->rng, (uint32_t)(len - 1)); /* inside the last */
	head = memmem(cl->c.wbuf + at - len, len, "\r\n\r\n", 4);
	/* Cut in its body, the last request is being answered: its handler
	 * waits for the body, and the server sends the responses before it
	 * only with its own (docs: the batch leaves once no complete request
	 * is left), so they are read after the end below, not before. */
	in_body = head && cut >= (size_t)(head + 4 - cl->c.wbuf);
	r = raw_write(cl, w, cl->c.wbuf, cut);
	for (unsigned i = 0; i < whole && !r && !in_body; i++)
		r = raw_expect(w, &q[i], &rs);
	INC(http_cutoffs);
	if (r) {
		if (r != BAD)
			failed("requests before a cut-off one", r, false);
		raw_close(w, false);
		return;
	}
	if (in_body && how != 3) {
		raw_close(w, how == 1);
	} else if (how == 0) {
		raw_close(w, false);
	} else if (how == 1) {
		raw_close(w, true);
	} else if (how == 2) {
		giong_sleep_ms(below(&cl->rng, 30));
		raw_close(w, below(&cl->rng, 2));
	} else {
		/* Half-close: the server must see the request will never end. */
		r = giong_stream_shutdown(w->s, SHUT_WR);
		for (unsigned i = 0; i < whole && !r && in_body; i++)
			r = raw_expect(w, &q[i], &rs);
		if (!r)
			r = raw_head(w, &rs);
		if (!r) {
			INC(http_cutoff_answers);
			if (opt.lenient && rs.status >= 500) {
				/* An allocation or a TLS read the plan failed while the
				 * body was read: the server's own error, rightly a 5xx. */
				failed("a request cut off half way", rs.status, false);
			} else if (rs.status != 400 && rs.status != 408) {
				REPORT("MISMATCH: a request cut off half way answered %d\n",
				       rs.status);
				INC(mismatches);
			}
		} else if (r != BAD && r != -EPIPE && r != -ECONNRESET) {
			failed("read after a cut-off request", r, false);
		}
		raw_close(w, false);
	}
}

/* A connection reset at a random moment: right after connecting (for TLS:
 * before the handshake), with part of a request sent,
 * with whole requests sent and nothing read, or with part of a response
 * read. */
static void step_reset(struct client *cl, struct raw *w)
{
	unsigned when = below(&cl->rng, 5);
	struct raw_req q[4];
	size_t len;
	unsigned n;
	int r;

	if (when == 0) {
		if (!raw_connect(cl, w, false))
			raw_close(w, true);
		return;
	}
	if ((r = raw_connect(cl, w, true))) {
		failed("raw connect", r, false);
		return;
	}
	n = raw_burst_build(cl, q, 4, &len, false);
	if (when == 1) {
		r = raw_write(cl, w, cl->c.wbuf, 1 + below(&cl->rng, (uint32_t)len));
	} else {
		r = raw_write(cl, w, cl->c.wbuf, len);
		if (!r && when >= 3) {
			/* Read a part of the responses: a random count of bytes, for
			 * at most 1..5 ms (the responses may be shorter). */
			size_t want = 1 + below(&cl->rng, 1024 + 8 * (uint32_t)len);
			uint64_t saved = giong_deadline_in(1 + below(&cl->rng, 5));

			while (!r && w->len < want && w->len < RD_CAP) {
				ssize_t k = raw_fill(w);

				r = k > 0 ? 0 : k ? (int)k : -ECONNRESET;
			}
			giong_deadline_restore(saved);
			if (r == -ETIMEDOUT && giong_now_ms() < saved)
				r = 0;
		}
		if (!r && when == 4)
			giong_sleep_ms(below(&cl->rng, 3));
	}
	(void)n;
	if (r && r != -ECONNRESET)
		failed("before a reset", r, false);
	raw_close(w, true);
}

/* ------------------------------------------------------------------- task */

intptr_t http_client_task(void *arg)
{
	struct client *cl = arg;
	struct raw w = {.buf = cl->c.rbuf};
	/* A quarter of the clients (at least one) are the steady stream. */
	bool steady = cl->idx % 4 == 0;

	giong_task_set_name(steady ? "soak-http-steady" : "soak-http");
	cl->c.id = atomic_fetch_add(&next_conn_id, 1);
	while (!atomic_load(&stop) && !giong_task_cancelled()) {
		uint64_t saved = giong_deadline_in(WATCHDOG_MS);
		unsigned p = below(&cl->rng, 100);

		if (steady || p < 25)
			step_steady(cl);
		else if (p < 40)
			step_pipeline(cl);
		else if (p < 55)
			step_raw_burst(cl, &w);
		else if (p < 67)
			step_cutoff(cl, &w);
		else if (p < 79)
			step_reset(cl, &w);
		else if (p < 89)
			step_deadline(cl);
		else if (p < 96)
			step_cancel(cl);
		else
			giong_sleep_ms(below(&cl->rng, 20));
		giong_deadline_restore(saved);
		raw_close(&w, false);
	}
	atomic_fetch_sub(&clients_live, 1);
	return 0;
}

#else /* !SOAK_HTTP */

int http_clients_init(void)
{
	fprintf(stderr, "soak: built without libgiong-http: no --http\n");
	return 77;
}

void http_clients_free(void)
{
}

void http_clients_worker_done(void)
{
}

intptr_t http_client_task(void *arg)
{
	(void)arg;
	atomic_fetch_sub(&clients_live, 1);
	return 0;
}

#endif
