/* SPDX-License-Identifier: MIT */
/*
 * http - the HTTP/1.1 example server on libgiong-http: one worker per core,
 * each with its own SO_REUSEPORT listeners on IPv4 and IPv6; Ctrl-C (or
 * SIGTERM) stops accepting, closes idle connections and answers the
 * requests in progress within the grace period.
 *
 *   http [--port 8080] [--host ADDR] [--workers N] [--unix PATH] [--spin-us N]
 *        [--body-limit BYTES] [--grace-ms N] [--log] [--proxy-protocol] [--stats]
 *        [--reuse-port] [--h2]
 *        [--tls-cert FILE --tls-key FILE [--tls-backend wolfssl|openssl]
 *         [--https-port 8443] [--tls-ciphers LIST]]
 *
 * Without --host it listens on 0.0.0.0 and [::] (IPv6 only, beside it; IPv4
 * alone where the machine has no IPv6). --grace-ms is the time the requests
 * in progress get to be answered once Ctrl-C or SIGTERM came (default 5000;
 * 0: none, they are cancelled at once and their connections closed).
 * --log prints an access-log line per request to standard output;
 * --proxy-protocol expects a PROXY header (v1 or v2) on every connection,
 * HTTP and HTTPS (the header comes before the TLS handshake), from a load
 * balancer in front, and logs the client it names.
 * --tls-cert and --tls-key (PEM: the chain, the key) serve HTTPS on
 * --https-port as well, through libgiong-tls and the backend chosen
 * (wolfSSL by default; each is there when it was built), ALPN http/1.1.
 * --tls-ciphers takes the TLS 1.3 cipher suites to allow, most preferred
 * first, colon-separated, in the backend's syntax (both know the standard
 * names: TLS_AES_128_GCM_SHA256, TLS_CHACHA20_POLY1305_SHA256, ...; default:
 * the backend's list); TLS 1.2 keeps the backend's default suites.
 * --h2 serves HTTP/2 too (libgiong-http2, when it was built): on HTTPS when
 * the client picks "h2" by ALPN (offered as "h2,http/1.1"), on HTTP when it
 * starts with HTTP/2's preface (prior knowledge, h2c: h2load's default for
 * http:// URLs). Off by default: this is the HTTP/1.1 example, and its
 * benchmarks stay comparable. With --stats each worker's line adds its
 * HTTP/2 connections and streams (requests less streams: HTTP/1.1's).
 * A port another server listens on already is refused ("in use by another
 * server", exit 1) unless --reuse-port asks to share it: the listeners'
 * SO_REUSEPORT would otherwise let a second server started by mistake take
 * half the connections without a word.
 *
 * Routes:
 *   GET  /json    {"message":"Hello, World!"}       (27 bytes, application/json)
 *   GET  /users   about 8 KB of JSON, built per request (the same bytes as
 *                 bench/load/epoll_http.c's, for the benchmark)
 *   POST /echo    200 with the request body (sized or chunked)
 *   GET  /health  ok
 *   GET  /slow?ms=N  "slept N ms" after sleeping N ms (0..60000, default 1000):
 *                 a request in progress for as long as asked, for the tests
 *                 of graceful shutdown (tests/http/shutdown_tool.sh)
 *   else          404 (405 with Allow for a known path and another method)
 *
 * Try it: `make run`, then `curl -v http://127.0.0.1:8080/json`, or
 * `curl --data-binary @somefile http://127.0.0.1:8080/echo`; with TLS,
 * `curl --cacert ca.pem https://localhost:8443/json`.
 */
#include <errno.h>
#include <stdatomic.h>
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

#include "args.h"
#include "hosts.h"
#include "stop_signals.h"
#include "listeners.h"
#ifdef GIONG_HAVE_TLS
#include "tls_backends.h"
#endif

#define USERS_COUNT 144
#define MAX_WORKERS 1024

/* Where a server listens: plain HTTP, and HTTPS when TLS is configured. */
struct endpoint {
	struct giong_http_server *srv;
	int port;
	const char *scheme;
};

struct opts {
	struct giong_config cfg;
	struct endpoint ep[2];
	unsigned neps;
	const char *host; /* NULL: 0.0.0.0 and [::] */
	const char *unix_path;
	bool h2;    /* --h2 */
	bool stats; /* --stats */
	atomic_bool failed;
};

#ifdef GIONG_HAVE_HTTP2
/* Each worker's HTTP/2 counters as it ended (--stats --h2): they may be read only on the
 * worker, and print_stats() runs after the workers. */
static struct giong_http2_stats h2_end[MAX_WORKERS];

static void h2_snapshot(void *ctx)
{
	int w = giong_worker_index();

	(void)ctx;
	if (w >= 0 && w < MAX_WORKERS)
		giong_http2_stats(&h2_end[w]);
}
#endif

static int json(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	static const char body[] = "{\"message\":\"Hello, World!\"}";

	(void)req;
	(void)ctx;
	giong_http_response_header(res, "Content-Type", "application/json");
	return giong_http_response_send(res, body, sizeof(body) - 1);
}

/* A literal's bytes (without its NUL) at @p; the end. */
#define PUT_LIT(p, s) ((char *)memcpy((p), (s), sizeof(s) - 1) + sizeof(s) - 1)

/* @v in decimal at @p; the end. */
static char *put_uint(char *p, unsigned v)
{
	char digits[10];
	int n = 0;

	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n)
		*p++ = digits[--n];
	return p;
}

/* 144 users, as epoll_http's users_build(): the same bytes, built per
 * request (as a handler that renders data would). */
static int users(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	char body[USERS_COUNT * 64], *p = body;

	(void)req;
	(void)ctx;
	*p++ = '[';
	for (unsigned i = 1; i <= USERS_COUNT; i++) {
		if (i > 1)
			*p++ = ',';
		p = PUT_LIT(p, "{\"id\":");
		p = put_uint(p, i);
		p = PUT_LIT(p, ",\"name\":\"User ");
		p = put_uint(p, i);
		p = PUT_LIT(p, "\",\"email\":\"user");
		p = put_uint(p, i);
		p = PUT_LIT(p, "@example.com\"}");
	}
	*p++ = ']';
	giong_http_response_header(res, "Content-Type", "application/json");
	return giong_http_response_send(res, body, (size_t)(p - body));
}

static int echo(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	const void *body;
	ssize_t n = giong_http_request_body(req, &body);

	(void)ctx;
	if (n < 0)
		return (int)n; /* 413, 408 or 400 as the error says */
	giong_http_response_header(res, "Content-Type", "application/octet-stream");
	return giong_http_response_send(res, body, (size_t)n);
}

static int health(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	(void)req;
	(void)ctx;
	giong_http_response_header(res, "Content-Type", "text/plain");
	return giong_http_response_send(res, "ok", 2);
}

#define SLOW_MAX_MS 60000u

/* Sleep ?ms=N (a request that takes its time), then say so. A sleep cut short
 * (the task cancelled when the grace period is over) is the handler's error:
 * the server's 500 cannot be sent by a cancelled task either, so the
 * connection closes unanswered. */
static int slow(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	size_t len = 0;
	const char *q = giong_http_request_query(req, &len);
	unsigned long ms = 1000;
	char body[32];
	int r, n;

	(void)ctx;
	if (q && len > 3 && !memcmp(q, "ms=", 3)) {
		ms = 0;
		for (size_t i = 3; i < len && q[i] != '&' && ms <= SLOW_MAX_MS; i++)
			ms = q[i] >= '0' && q[i] <= '9' ? ms * 10 + (unsigned long)(q[i] - '0')
							: SLOW_MAX_MS + 1;
		if (ms > SLOW_MAX_MS) {
			giong_http_response_status(res, 400);
			giong_http_response_header(res, "Content-Type", "text/plain");
			return giong_http_response_send(res, "ms: 0..60000\n", 13);
		}
	}
	if ((r = giong_sleep_ms(ms)) < 0)
		return r;
	n = snprintf(body, sizeof(body), "slept %lu ms\n", ms);
	giong_http_response_header(res, "Content-Type", "text/plain");
	return giong_http_response_send(res, body, (size_t)n);
}

static void log_line(const struct giong_http_log_entry *e, void *ctx)
{
	struct giong_addr peer;
	char addr[64] = "-";
	size_t ml, tl;
	const char *m = giong_http_request_method_name(e->req, &ml);
	const char *t = giong_http_request_target(e->req, &tl);

	(void)ctx;
	if (giong_http_request_client_addr(e->req, &peer) == 0)
		giong_addr_format(&peer, addr, sizeof(addr));
	printf("%s \"%.*s %.*s\" %d %llu\n", addr, (int)ml, m, (int)tl, t, e->status,
	       (unsigned long long)e->body_bytes);
}

/* --log names each client: accepted connections need a descriptor to be asked
 * their peer (a direct one has none: <giong/net/tcp.h>). Set before the run. */
static bool regular_fds;

/* Listen on @addr into *@l. 0 or -errno (said on worker 0). */
static int listen_on(const char *addr, bool v6only, bool is_unix, struct giong_listener **l)
{
	struct giong_listen_options lo = {.v6only = v6only, .regular_fds = regular_fds};
	int r = is_unix ? giong_unix_listen(addr, &lo, l) : giong_tcp_listen(addr, &lo, l);

	if (r && giong_worker_index() == 0)
		fprintf(stderr, "http: listen on %s: %s\n", addr, giong_strerror(r));
	return r;
}

/* The listeners of one endpoint on this worker into @ls (up to 2). */
static unsigned listen_endpoint(struct opts *o, const struct endpoint *ep, struct tool_listener *ls)
{
	struct giong_listener *l = NULL;
	char addr[160];
	unsigned n = 0;

	if (o->unix_path) {
		if (giong_worker_index() == 0 && listen_on(o->unix_path, false, true, &l) == 0)
			ls[n++] = (struct tool_listener){ep->srv, l, "http"};
		return n; /* a Unix socket path binds once: worker 0 serves it */
	}
	if (o->host) {
		snprintf(addr, sizeof(addr), strchr(o->host, ':') ? "[%s]:%d" : "%s:%d", o->host,
			 ep->port);
		if (listen_on(addr, false, false, &l) == 0)
			ls[n++] = (struct tool_listener){ep->srv, l, "http"};
		return n;
	}
	snprintf(addr, sizeof(addr), "0.0.0.0:%d", ep->port);
	if (listen_on(addr, false, false, &l) == 0)
		ls[n++] = (struct tool_listener){ep->srv, l, "http"};
	snprintf(addr, sizeof(addr), "[::]:%d", ep->port);
	if (listen_on(addr, true, false, &l) == 0) /* no IPv6 here: IPv4 alone */
		ls[n++] = (struct tool_listener){ep->srv, l, "http"};
	return n;
}

/* Refuse @ep's port if another server listens on it on the addresses the workers will bind
 * (those of listen_endpoint()), unless --reuse-port: tool_port_taken() (hosts.h) says why. */
static void probe_port(const struct opts *o, const struct endpoint *ep)
{
	const char *hosts[2] = {"0.0.0.0", "::"};
	unsigned n = 2;

	if (o->unix_path || !ep->port)
		return; /* a path, or a port the kernel chooses: nothing to share by mistake */
	if (o->host)
		hosts[0] = o->host, n = 1;
	for (unsigned i = 0; i < n; i++) {
		char text[300];

		snprintf(text, sizeof(text),
			 strchr(hosts[i], ':') && hosts[i][0] != '[' ? "[%s]:%d" : "%s:%d",
			 hosts[i], ep->port);
		/* [::] beside 0.0.0.0 is bound IPv6-only, as listen_endpoint() binds it */
		if (tool_port_taken(text, n == 2 && i == 1)) {
			fprintf(stderr,
				"http: %s port %d on %s is in use by another server (--port N for "
				"another; --reuse-port to share it)\n",
				ep->scheme, ep->port, text);
			exit(1);
		}
	}
}

/*
 * Each worker serves its listeners (IPv4 and IPv6, for HTTP and HTTPS): the
 * last from its main task (a worker whose main task returns is given the
 * grace period and then stopped), the others from tasks of their own.
 */
static void worker_main(unsigned worker, void *arg)
{
	struct opts *o = arg;
	struct tool_listener ls[4];
	unsigned n = 0;

	for (unsigned i = 0; i < o->neps; i++) {
		unsigned got = listen_endpoint(o, &o->ep[i], ls + n);

		if (!got && !o->unix_path) { /* an endpoint that cannot listen at all */
			for (unsigned j = 0; j < n; j++)
				giong_listener_close(ls[j].l);
			n = 0;
			break;
		}
		n += got;
	}
	if (!n) {
		if (worker == 0 || !o->unix_path) {
			atomic_store(&o->failed, true);
			giong_shutdown();
		}
		return;
	}
#ifdef GIONG_HAVE_HTTP2
	if (o->h2 && o->stats && giong_worker_atexit(h2_snapshot, NULL) && worker == 0)
		fprintf(stderr, "http: --stats: no HTTP/2 counters from worker 0\n");
#endif
	if (worker == 0)
		for (unsigned i = 0; i < o->neps; i++)
			fprintf(stderr,
				"http: %s%s on %s%s port %d with %d workers; Ctrl-C stops\n",
				o->ep[i].scheme, o->h2 ? " and HTTP/2" : "",
				o->unix_path ? o->unix_path
				: o->host    ? o->host
					     : "0.0.0.0 and [::]",
				o->unix_path ? " (unix)," : "", o->ep[i].port,
				giong_worker_count());
	tool_serve_all(ls, n);
}

static void usage(int status)
{
	fprintf(stderr,
		"usage: http [--port N] [--host ADDR] [--workers N] [--unix PATH] [--spin-us N]\n"
		"            [--body-limit BYTES] [--grace-ms N] [--log] [--proxy-protocol]\n"
		"            [--stats] [--reuse-port] [--h2]\n"
		"            [--tls-cert FILE --tls-key FILE [--tls-backend wolfssl|openssl]\n"
		"             [--https-port N] [--tls-ciphers LIST]]\n");
	exit(status);
}

static void print_stats(const struct giong_runtime *rt, const struct opts *o)
{
	for (unsigned i = 0;; i++) {
		struct giong_stats st;
		struct giong_http_stats hs, ts;

		if (giong_runtime_stats(rt, i, &st) ||
		    giong_http_server_stats(o->ep[0].srv, i, &hs))
			break; /* past the last worker */
		if (o->neps > 1 && giong_http_server_stats(o->ep[1].srv, i, &ts) == 0) {
			hs.requests += ts.requests;
			hs.accepted += ts.accepted;
			for (int k = 0; k < 5; k++)
				hs.responses[k] += ts.responses[k];
		}
		fprintf(stderr,
			"http: worker %u: requests %llu enters %llu parks %llu switches %llu "
			"accepted %llu 2xx %llu 4xx %llu 5xx %llu stacks pooled %u",
			i, (unsigned long long)hs.requests, (unsigned long long)st.enters,
			(unsigned long long)st.parks, (unsigned long long)st.switches,
			(unsigned long long)hs.accepted, (unsigned long long)hs.responses[1],
			(unsigned long long)hs.responses[3], (unsigned long long)hs.responses[4],
			st.stacks_pooled);
#ifdef GIONG_HAVE_HTTP2
		if (o->h2 && i < MAX_WORKERS)
			fprintf(stderr, " h2 connections %llu h2 streams %llu",
				(unsigned long long)h2_end[i].connections,
				(unsigned long long)h2_end[i].streams);
#endif
		fputc('\n', stderr);
	}
}

#ifdef GIONG_HAVE_TLS
/* The TLS configuration of --tls-*: ALPN http/1.1 (h2 first with @h2),
 * checked now so that a bad key is said at start-up rather than by every
 * handshake. */
static struct giong_tls_config *tls_setup(const char *backend, const char *cert, const char *key,
					  const char *ciphers13, bool h2)
{
	const struct giong_tls_backend *be;
	static const char *const alpn[] = {"h2", "http/1.1"};
	struct giong_tls_config *c;
	char why[160];
	int r;

	be = tool_tls_backend(backend);
	if (!be) {
		fprintf(stderr, "http: --tls-backend %s: not built in (this build has %s)\n",
			backend, tool_tls_backend_names());
		exit(2);
	}
	if ((r = giong_tls_config_new(be, &c))) {
		fprintf(stderr, "http: TLS: %s\n", giong_strerror(r));
		exit(1);
	}
	if ((r = giong_tls_config_add_cert_file(c, cert, key))) {
		fprintf(stderr, "http: --tls-cert %s --tls-key %s: %s\n", cert, key,
			giong_strerror(r));
		exit(1);
	}
	why[0] = '\0';
	if ((r = giong_tls_config_alpn(c, h2 ? alpn : alpn + 1, h2 ? 2 : 1)) ||
	    (ciphers13 && (r = giong_tls_config_ciphers(c, NULL, ciphers13))) ||
	    (r = giong_tls_config_check(c, why, sizeof(why)))) {
		fprintf(stderr, "http: TLS (%s): %s: %s\n", backend, giong_strerror(r), why);
		exit(1);
	}
	return c;
}
#endif

int main(int argc, char **argv)
{
	struct opts o = {
		.ep = {{.port = 8080, .scheme = "HTTP"}, {.port = 8443, .scheme = "HTTPS"}}};
	const char *tls_cert = NULL, *tls_key = NULL, *tls_backend = "wolfssl", *tls_ciphers = NULL;
	struct giong_http_limits lim;
	struct giong_http_server_options so = {.limits = &lim};
	struct giong_http_router *router;
	struct giong_runtime *rt;
	bool reuse_port = false;
	int r;
#ifdef GIONG_HAVE_HTTP2
	const struct giong_http_protocol *protocols[2] = {NULL, NULL};
#endif
#ifdef GIONG_HAVE_TLS
	struct giong_tls_config *tls = NULL;
#endif

	giong_config_init(&o.cfg);
	giong_http_limits_init(&lim);
	o.cfg.shutdown_on_signals = true;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fprintf(stderr, "http: the HTTP/1.1 example server of libgiong-http\n");
			usage(0);
		}
		if (!strcmp(argv[i], "--stats")) {
			o.stats = true;
			continue;
		}
		if (!strcmp(argv[i], "--h2")) {
#ifndef GIONG_HAVE_HTTP2
			fprintf(stderr, "http: --h2: built without libgiong-http2\n");
			return 2;
#endif
			o.h2 = true;
			continue;
		}
		if (!strcmp(argv[i], "--log")) {
			so.log = log_line;
			regular_fds = true;
			continue;
		}
		if (!strcmp(argv[i], "--reuse-port")) {
			reuse_port = true;
			continue;
		}
		if (!strcmp(argv[i], "--proxy-protocol")) {
			so.proxy_protocol = true;
			continue;
		}
		if (i + 1 >= argc)
			usage(2);
		if (!strcmp(argv[i], "--port"))
			o.ep[0].port = (int)tool_number("http", "--port", argv[++i], 0, 65535);
		else if (!strcmp(argv[i], "--https-port"))
			o.ep[1].port =
				(int)tool_number("http", "--https-port", argv[++i], 0, 65535);
		else if (!strcmp(argv[i], "--tls-cert"))
			tls_cert = argv[++i];
		else if (!strcmp(argv[i], "--tls-key"))
			tls_key = argv[++i];
		else if (!strcmp(argv[i], "--tls-backend"))
			tls_backend = argv[++i];
		else if (!strcmp(argv[i], "--tls-ciphers"))
			tls_ciphers = argv[++i];
		else if (!strcmp(argv[i], "--host"))
			o.host = argv[++i];
		else if (!strcmp(argv[i], "--unix"))
			o.unix_path = argv[++i];
		else if (!strcmp(argv[i], "--workers"))
			o.cfg.workers = (unsigned)tool_number("http", "--workers", argv[++i], 1,
							      MAX_WORKERS);
		else if (!strcmp(argv[i], "--spin-us"))
			o.cfg.spin_before_park_us =
				(uint32_t)tool_number("http", "--spin-us", argv[++i], 0, 10000000);
		else if (!strcmp(argv[i], "--grace-ms"))
			/* 0 is the runtime's default: its least, 1, cancels at once */
			o.cfg.shutdown_grace_ms =
				(uint32_t)tool_number("http", "--grace-ms", argv[++i], 0, 3600000)
					?: 1;
		else if (!strcmp(argv[i], "--body-limit"))
			lim.body = tool_number("http", "--body-limit", argv[++i], 1, UINT64_MAX);
		else
			usage(2);
	}
	if (!tls_cert != !tls_key) {
		fprintf(stderr, "http: --tls-cert and --tls-key go together\n");
		usage(2);
	}
	if (tls_ciphers && !tls_cert) {
		fprintf(stderr, "http: --tls-ciphers is for HTTPS: it needs --tls-cert\n");
		usage(2);
	}
	for (unsigned i = 0; !reuse_port && i < (tls_cert ? 2u : 1u); i++)
		probe_port(&o, &o.ep[i]);
#ifdef GIONG_HAVE_HTTP2
	if (o.h2) {
		protocols[0] = giong_http2(); /* h2 by ALPN, h2c by its preface */
		so.protocols = protocols;
	}
#endif
	if (giong_http_router_new(&router) ||
	    giong_http_router_add(router, "GET", "/json", json, NULL) ||
	    giong_http_router_add(router, "GET", "/users", users, NULL) ||
	    giong_http_router_add(router, "POST", "/echo", echo, NULL) ||
	    giong_http_router_add(router, "GET", "/health", health, NULL) ||
	    giong_http_router_add(router, "GET", "/slow", slow, NULL) ||
	    (r = giong_http_server_new(router, &so, &o.ep[0].srv))) {
		fprintf(stderr, "http: out of memory\n");
		return 1;
	}
	o.neps = 1;
	if (tls_cert) {
#ifdef GIONG_HAVE_TLS
		tls = tls_setup(tls_backend, tls_cert, tls_key, tls_ciphers, o.h2);
		so.wrap = giong_tls_wrap_accept;
		so.wrap_ctx = tls;
		if (giong_http_server_new(router, &so, &o.ep[1].srv)) {
			fprintf(stderr, "http: out of memory\n");
			return 1;
		}
		o.neps = 2;
#else
		(void)tls_backend;
		(void)tls_ciphers;
		fprintf(stderr, "http: built without libgiong-tls: no HTTPS\n");
		return 2;
#endif
	}
	r = giong_runtime_new(&o.cfg, &rt);
	if (r) {
		fprintf(stderr, "http: %s\n", giong_strerror(r));
		return 1;
	}
	tool_block_stop_signals(); /* to the exit: stop_signals.h says why */
	r = giong_runtime_run(rt, worker_main, &o);
	if (o.stats && r == 0)
		print_stats(rt, &o);
	giong_runtime_free(rt);
	for (unsigned i = 0; i < o.neps; i++)
		giong_http_server_free(o.ep[i].srv);
#ifdef GIONG_HAVE_TLS
	giong_tls_config_free(tls);
#endif
	giong_http_router_free(router);
	if (r) {
		fprintf(stderr, "http: %s\n", giong_strerror(r));
		return 1;
	}
	if (atomic_load(&o.failed))
		return 1; /* the worker said why */
	fprintf(stderr, "http: stopped\n");
	return 0;
}
