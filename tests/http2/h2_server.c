/* SPDX-License-Identifier: MIT */
/*
 * h2_server - the server the HTTP/2 tests talk to (tests/http2/h2_frames.py,
 * interop.sh): libgiong-http with the HTTP/2 protocol of libgiong-http2, on
 * the public APIs only, as a program would use them.
 *
 *   h2_server [--port N] [--host ADDR] [--tls CERTDIR [--backend openssl|wolfssl]]
 *             [--no-h2] [--idle-ms N] [--head-ms N] [--write-ms N] [--grace-ms N] [--body-limit BYTES]
 *             [--h2-streams N] [--h2-window BYTES]
 *
 * --port 0 (the default) lets the kernel pick the port; once listening it
 * prints "port N" on standard output (flushed), which the tests wait for.
 * --tls serves TLS with CERTDIR/server.pem and server.key (tests/tls/
 * make-certs.sh makes them), ALPN "h2" then "http/1.1"; --no-h2 leaves HTTP/2
 * out (plain HTTP/1.1 and ALPN http/1.1 only). --h2-streams and --h2-window
 * set SETTINGS_MAX_CONCURRENT_STREAMS and the stream window through
 * giong_http2_new() (otherwise giong_http2(), the defaults). One worker:
 * every connection on it, so its counters are all of them. SIGTERM or SIGINT
 * stop it gracefully; it then prints its counters on standard output:
 *   h2 connections N streams N refused_streams N resets_received N goaway_calm N
 *      protocol_errors N session_bytes N
 *   http accepted N requests N 2xx N 4xx N 5xx N refused N idle_timeouts N head_timeouts N
 *        write_timeouts N handler_errors N open N idle N
 *
 * Routes (the byte pattern of /big and /file: byte i is i % 251, so that a
 * frame lost, doubled or moved shows):
 *   GET  /json            {"message":"Hello, World!"} (HEAD: its fields, no body)
 *   GET  /big?n=BYTES     n bytes of the pattern, one sized send (n <= 64 MiB)
 *   POST /echo            the body, read whole (giong_http_request_body)
 *   POST /count?sleep_ms=N  the body's length in decimal, read 4 KiB at a time with a
 *                         sleep of N ms before each read: a slow reader, for flow control
 *   GET  /stream?n=K&ms=M K pieces "piece NNNNN\n" (12 bytes), M ms apart, streamed
 *   GET  /file            FILE_SIZE bytes of the pattern, sent from a file (sendfile)
 *   GET  /sleep?ms=N      "slept\n" after N ms
 *   GET  /status/:code    that status (200..599), no body for 204 and 304
 *   GET  /stats           the counters now, as printed at the exit (with the server's
 *                         open and idle connections at the end of the second line)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <giong/http.h>
#include <giong/http2.h>
#ifdef GIONG_HAVE_TLS
#include <giong/tls.h>
#endif

#include "args.h"
#include "stop_signals.h"
#ifdef GIONG_HAVE_TLS
#include "tls_backends.h"
#endif

#define BIG_MAX (64u << 20)
#define FILE_SIZE (1048576u + 123u) /* not a multiple of any frame or buffer size */
#define PIECE_LEN 12
#define MS_MAX 60000u

struct opts {
	const char *host;
	int port;
	struct giong_http_server *srv;
	int file_fd; /* /file's content, unlinked at once */
	int failed;
};

static inline unsigned char pattern(uint64_t i)
{
	return (unsigned char)(i % 251);
}

/* The value of @key in the query of @req as a number, @def when absent, -1 when not a
 * number or above @max. */
static long long query_num(const struct giong_http_request *req, const char *key, long long def,
			   long long max)
{
	size_t len = 0, klen = strlen(key);
	const char *q = giong_http_request_query(req, &len);

	for (size_t i = 0; q && i < len;) {
		size_t end = i;

		while (end < len && q[end] != '&')
			end++;
		if (end - i > klen && !memcmp(q + i, key, klen) && q[i + klen] == '=') {
			long long v = 0;

			if (i + klen + 1 == end)
				return -1;
			for (size_t k = i + klen + 1; k < end; k++) {
				if (q[k] < '0' || q[k] > '9' || (v = v * 10 + (q[k] - '0')) > max)
					return -1;
			}
			return v;
		}
		i = end + 1;
	}
	return def;
}

static int bad_request(struct giong_http_response *res, const char *why)
{
	giong_http_response_status(res, 400);
	giong_http_response_header(res, "Content-Type", "text/plain");
	return giong_http_response_send(res, why, strlen(why));
}

static int json(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	static const char body[] = "{\"message\":\"Hello, World!\"}";

	(void)req;
	(void)ctx;
	giong_http_response_header(res, "Content-Type", "application/json");
	return giong_http_response_send(res, body, sizeof(body) - 1);
}

static int big(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	long long n = query_num(req, "n", 65536, BIG_MAX);
	unsigned char *p;
	int r;

	(void)ctx;
	if (n < 0)
		return bad_request(res, "n: 0..67108864\n");
	if (!(p = malloc((size_t)n + 1)))
		return -ENOMEM;
	for (long long i = 0; i < n; i++)
		p[i] = pattern((uint64_t)i);
	giong_http_response_header(res, "Content-Type", "application/octet-stream");
	r = giong_http_response_send(res, p, (size_t)n);
	free(p);
	return r;
}

static int echo(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	const void *body;
	ssize_t n = giong_http_request_body(req, &body);

	(void)ctx;
	if (n < 0)
		return (int)n; /* the status the error stands for (413, 408, 400) */
	giong_http_response_header(res, "Content-Type", "application/octet-stream");
	return giong_http_response_send(res, body, (size_t)n);
}

/* A slow reader: the window a client gets must follow what this reads, not what arrived. */
static int count(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	long long ms = query_num(req, "sleep_ms", 0, MS_MAX);
	unsigned long long total = 0;
	char buf[4096], out[32];
	int n;

	(void)ctx;
	if (ms < 0)
		return bad_request(res, "sleep_ms: 0..60000\n");
	for (;;) {
		ssize_t got;
		int r;

		if (ms && (r = giong_sleep_ms((uint64_t)ms)) < 0)
			return r;
		if ((got = giong_http_request_read(req, buf, sizeof(buf))) < 0)
			return (int)got;
		if (got == 0)
			break;
		total += (unsigned long long)got;
	}
	n = snprintf(out, sizeof(out), "%llu\n", total);
	giong_http_response_header(res, "Content-Type", "text/plain");
	return giong_http_response_send(res, out, (size_t)n);
}

static int stream(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	long long n = query_num(req, "n", 10, 99999), ms = query_num(req, "ms", 0, MS_MAX);
	int r;

	(void)ctx;
	if (n < 0 || ms < 0)
		return bad_request(res, "n: 0..99999, ms: 0..60000\n");
	giong_http_response_header(res, "Content-Type", "text/plain");
	for (long long i = 0; i < n; i++) {
		char piece[32];

		if (i && ms && (r = giong_sleep_ms((uint64_t)ms)) < 0)
			return r;
		snprintf(piece, sizeof(piece), "piece %05u\n", (unsigned)i); /* i < 100000 */
		if ((r = giong_http_response_write(res, piece, PIECE_LEN)) < 0)
			return r;
	}
	return giong_http_response_end(res);
}

static int file(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	const struct opts *o = ctx;

	(void)req;
	giong_http_response_header(res, "Content-Type", "application/octet-stream");
	return giong_http_response_sendfile(res, o->file_fd, 0, FILE_SIZE);
}

static int sleep_then(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	long long ms = query_num(req, "ms", 1000, MS_MAX);
	int r;

	(void)ctx;
	if (ms < 0)
		return bad_request(res, "ms: 0..60000\n");
	if ((r = giong_sleep_ms((uint64_t)ms)) < 0)
		return r;
	giong_http_response_header(res, "Content-Type", "text/plain");
	return giong_http_response_send(res, "slept\n", 6);
}

static int status(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	size_t len = 0;
	const char *v = giong_http_request_param(req, "code", &len);
	int code = 0;

	(void)ctx;
	for (size_t i = 0; v && i < len && i < 3; i++)
		code = v[i] >= '0' && v[i] <= '9' ? code * 10 + (v[i] - '0') : 0;
	if (!v || len != 3 || code < 200 || code > 599)
		return bad_request(res, "status: 200..599\n");
	giong_http_response_status(res, code);
	if (code == 204 || code == 304)
		return giong_http_response_send(res, NULL, 0);
	giong_http_response_header(res, "Content-Type", "text/plain");
	return giong_http_response_send(res, "status\n", 7);
}

/* /file's content: a temporary file, unlinked at once (the descriptor keeps it). */
static int make_file(void)
{
	char path[] = "/tmp/h2_server.XXXXXX";
	unsigned char buf[65536];
	int fd = mkstemp(path);

	if (fd < 0)
		return -1;
	unlink(path);
	for (uint64_t off = 0; off < FILE_SIZE;) {
		size_t n = FILE_SIZE - off < sizeof(buf) ? FILE_SIZE - off : sizeof(buf);

		for (size_t i = 0; i < n; i++)
			buf[i] = pattern(off + i);
		if (write(fd, buf, n) != (ssize_t)n) {
			close(fd);
			return -1;
		}
		off += n;
	}
	return fd;
}

/* The calling worker's counters, HTTP/2's and the server's, as two lines into @buf: what
 * /stats answers and what the exit prints. Their length. */
static int counters(const struct giong_http_server *srv, char *buf, size_t len)
{
	struct giong_http2_stats h2 = {0};
	struct giong_http_stats hs = {0};
	struct giong_stats cs = {0};
	int r = giong_http2_stats(&h2);

	if (r)
		fprintf(stderr, "h2_server: giong_http2_stats: %s\n", giong_strerror(r));
	giong_http_server_stats(srv, (unsigned)giong_worker_index(), &hs);
	giong_stats(&cs);
	return snprintf(
		buf, len,
		"h2 connections %llu streams %llu refused_streams %llu resets_received %llu "
		"goaway_calm %llu protocol_errors %llu session_bytes %llu\n"
		"http accepted %llu requests %llu 2xx %llu 4xx %llu 5xx %llu refused %llu "
		"idle_timeouts %llu head_timeouts %llu write_timeouts %llu handler_errors %llu open %u idle %u\n"
		"core stacks_live %u recvbufs_held %u\n",
		(unsigned long long)h2.connections, (unsigned long long)h2.streams,
		(unsigned long long)h2.refused_streams, (unsigned long long)h2.resets_received,
		(unsigned long long)h2.goaway_calm, (unsigned long long)h2.protocol_errors,
		(unsigned long long)h2.session_bytes, (unsigned long long)hs.accepted,
		(unsigned long long)hs.requests, (unsigned long long)hs.responses[1],
		(unsigned long long)hs.responses[3], (unsigned long long)hs.responses[4],
		(unsigned long long)hs.refused, (unsigned long long)hs.idle_timeouts,
		(unsigned long long)hs.head_timeouts, (unsigned long long)hs.write_timeouts,
		(unsigned long long)hs.handler_errors, hs.open, hs.idle, cs.stacks_live,
		cs.recvbufs_total - cs.recvbufs_free);
}

/* The counters now: the tests see whether the connections a client left are gone. */
static int stats(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	const struct opts *o = ctx;
	char buf[1024];
	int n = counters(o->srv, buf, sizeof(buf));

	(void)req;
	giong_http_response_header(res, "Content-Type", "text/plain");
	return giong_http_response_send(res, buf, n > 0 && (size_t)n < sizeof(buf) ? (size_t)n : 0);
}

static void worker_main(unsigned worker, void *arg)
{
	struct opts *o = arg;
	struct giong_listener *l = NULL;
	struct giong_addr a;
	char addr[160], buf[1024];
	int r;

	(void)worker;
	snprintf(addr, sizeof(addr), strchr(o->host, ':') ? "[%s]:%d" : "%s:%d", o->host, o->port);
	if ((r = giong_tcp_listen(addr, NULL, &l)) || (r = giong_listener_addr(l, &a))) {
		fprintf(stderr, "h2_server: listen on %s: %s\n", addr, giong_strerror(r));
		if (l)
			giong_listener_close(l);
		o->failed = 1;
		giong_shutdown();
		return;
	}
	printf("port %d\n", giong_addr_port(&a));
	fflush(stdout);
	r = giong_http_serve(o->srv, l);
	if (r && r != GIONG_ESHUTDOWN)
		fprintf(stderr, "h2_server: serve: %s\n", giong_strerror(r));
	giong_listener_close(l);
	/* every connection has ended (unless serve was cancelled at the end of the grace
	 * period, said above): what nghttp2 still holds is a leak */
	if (counters(o->srv, buf, sizeof(buf)) > 0)
		fputs(buf, stdout);
	fflush(stdout);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: h2_server [--port N] [--host ADDR] [--tls CERTDIR [--backend "
		"openssl|wolfssl]] [--no-h2]\n"
		"                 [--idle-ms N] [--head-ms N] [--write-ms N] [--grace-ms N] "
		"[--body-limit BYTES] [--h2-streams N] [--h2-window BYTES]\n");
	exit(2);
}

#ifdef GIONG_HAVE_TLS
static struct giong_tls_config *tls_setup(const char *backend, const char *dir, bool h2)
{
	static const char *const alpn[] = {"h2", "http/1.1"};
	const struct giong_tls_backend *be = tool_tls_backend(backend);
	struct giong_tls_config *c;
	char cert[4096], key[4096], why[160] = "";
	int r;

	if (!be) {
		fprintf(stderr, "h2_server: --backend %s: not built (this build has %s)\n", backend,
			tool_tls_backend_names());
		exit(77); /* the tests skip a backend the build lacks */
	}
	snprintf(cert, sizeof(cert), "%s/server.pem", dir);
	snprintf(key, sizeof(key), "%s/server.key", dir);
	if ((r = giong_tls_config_new(be, &c)) ||
	    (r = giong_tls_config_add_cert_file(c, cert, key)) ||
	    (r = giong_tls_config_alpn(c, h2 ? alpn : alpn + 1, h2 ? 2 : 1)) ||
	    (r = giong_tls_config_check(c, why, sizeof(why)))) {
		fprintf(stderr, "h2_server: TLS (%s, %s): %s %s\n", backend, dir, giong_strerror(r),
			why);
		exit(1);
	}
	return c;
}
#endif

int main(int argc, char **argv)
{
	struct opts o = {.host = "127.0.0.1"};
	const char *certs = NULL, *backend = "openssl";
	const struct giong_http_protocol *protos[2] = {NULL, NULL}, *mine = NULL;
	struct giong_http2_options h2o;
	struct giong_http_limits lim;
	struct giong_http_server_options so = {.limits = &lim, .server_name = "h2_server"};
	struct giong_http_router *router;
	struct giong_runtime *rt;
	struct giong_config cfg;
	bool h2 = true, h2_custom = false;
	int r = -ENOMEM; /* what a router_add() failure means */
#ifdef GIONG_HAVE_TLS
	struct giong_tls_config *tls = NULL;
#endif

	giong_config_init(&cfg);
	giong_http_limits_init(&lim);
	giong_http2_options_init(&h2o);
	cfg.workers = 1;
	cfg.shutdown_on_signals = true;
	lim.body = BIG_MAX;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--no-h2")) {
			h2 = false;
			continue;
		}
		if (i + 1 >= argc)
			usage();
		if (!strcmp(argv[i], "--port"))
			o.port = (int)tool_number("h2_server", "--port", argv[++i], 0, 65535);
		else if (!strcmp(argv[i], "--host"))
			o.host = argv[++i];
		else if (!strcmp(argv[i], "--tls"))
			certs = argv[++i];
		else if (!strcmp(argv[i], "--backend"))
			backend = argv[++i];
		else if (!strcmp(argv[i], "--idle-ms"))
			lim.idle_timeout_ms = (uint32_t)tool_number("h2_server", "--idle-ms",
								    argv[++i], 1, MS_MAX);
		else if (!strcmp(argv[i], "--head-ms"))
			lim.head_timeout_ms = (uint32_t)tool_number("h2_server", "--head-ms",
								    argv[++i], 1, MS_MAX);
		else if (!strcmp(argv[i], "--write-ms"))
			lim.write_timeout_ms = (uint32_t)tool_number("h2_server", "--write-ms",
								     argv[++i], 1, MS_MAX);
		else if (!strcmp(argv[i], "--grace-ms"))
			cfg.shutdown_grace_ms = (uint32_t)tool_number("h2_server", "--grace-ms",
								      argv[++i], 1, MS_MAX);
		else if (!strcmp(argv[i], "--body-limit"))
			lim.body =
				tool_number("h2_server", "--body-limit", argv[++i], 1, UINT64_MAX);
		else if (!strcmp(argv[i], "--h2-streams"))
			h2_custom = true, h2o.max_concurrent_streams =
						  (uint32_t)tool_number("h2_server", "--h2-streams",
									argv[++i], 1, 1u << 20);
		else if (!strcmp(argv[i], "--h2-window"))
			h2_custom = true,
			h2o.stream_window = (uint32_t)tool_number("h2_server", "--h2-window",
								  argv[++i], 1, 0x7fffffff);
		else
			usage();
	}
	if (h2 && h2_custom && (r = giong_http2_new(&h2o, &mine))) {
		fprintf(stderr, "h2_server: giong_http2_new: %s\n", giong_strerror(r));
		return 1;
	}
	protos[0] = mine ? mine : giong_http2();
	so.protocols = h2 ? protos : NULL;
	if ((o.file_fd = make_file()) < 0) {
		fprintf(stderr, "h2_server: the temporary file of /file: %s\n", strerror(errno));
		return 1;
	}
	if (certs) {
#ifdef GIONG_HAVE_TLS
		tls = tls_setup(backend, certs, h2);
		so.wrap = giong_tls_wrap_accept;
		so.wrap_ctx = tls;
#else
		fprintf(stderr, "h2_server: built without libgiong-tls: no --tls\n");
		return 77;
#endif
	}
	if (giong_http_router_new(&router) ||
	    giong_http_router_add(router, "GET", "/json", json, NULL) ||
	    giong_http_router_add(router, "GET", "/big", big, NULL) ||
	    giong_http_router_add(router, "POST", "/echo", echo, NULL) ||
	    giong_http_router_add(router, "POST", "/count", count, NULL) ||
	    giong_http_router_add(router, "GET", "/stream", stream, NULL) ||
	    giong_http_router_add(router, "GET", "/file", file, &o) ||
	    giong_http_router_add(router, "GET", "/sleep", sleep_then, NULL) ||
	    giong_http_router_add(router, "GET", "/status/:code", status, NULL) ||
	    giong_http_router_add(router, "GET", "/stats", stats, &o) ||
	    (r = giong_http_server_new(router, &so, &o.srv)) ||
	    (r = giong_runtime_new(&cfg, &rt))) {
		fprintf(stderr, "h2_server: setting up: %s\n", giong_strerror(r));
		return 1;
	}
	tool_block_stop_signals(); /* to the exit: stop_signals.h says why */
	r = giong_runtime_run(rt, worker_main, &o);
	giong_runtime_free(rt);
	giong_http_server_free(o.srv);
	giong_http_router_free(router);
	giong_http2_free(mine);
#ifdef GIONG_HAVE_TLS
	giong_tls_config_free(tls);
#endif
	close(o.file_fd);
	if (r)
		fprintf(stderr, "h2_server: %s\n", giong_strerror(r));
	return r || o.failed ? 1 : 0;
}
