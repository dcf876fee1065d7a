/* SPDX-License-Identifier: MIT */
/*
 * h2_server.c - the HTTP/2 server giong-load's --h2 test runs against (tests/load/h2.sh):
 * libgiong-http's server with libgiong-http2's protocol table, so a plain connection speaks
 * HTTP/2 when it opens with the preface (h2c, prior knowledge) and HTTP/1.1 otherwise; with
 * --tls CERT KEY, TLS with ALPN h2 and http/1.1.
 *
 *   h2_server PORT [--tls CERT KEY]
 *
 * Routes: GET /json (27 bytes), POST /echo (the body back), GET /big (1 MiB), GET /slow
 * (27 bytes after 3 s). One worker on 127.0.0.1; "listening 127.0.0.1:PORT" on stdout once it
 * accepts; stops on SIGTERM or SIGINT, printing libgiong-http2's counters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <giong/core.h>
#include <giong/http.h>
#include <giong/http2.h>
#include <giong/net.h>

#ifdef GIONG_HAVE_TLS
#include <giong/tls.h>

#include "tls_backends.h"
#endif

#define JSON "{\"message\":\"Hello, World!\"}"

static struct giong_http_server *srv;
static char addr[64];

static int json(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	(void)req, (void)ctx;
	giong_http_response_header(res, "Content-Type", "application/json");
	return giong_http_response_send(res, JSON, sizeof(JSON) - 1);
}

static int echo(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	const void *d;
	ssize_t n = giong_http_request_body(req, &d);

	(void)ctx;
	if (n < 0)
		return (int)n;
	return giong_http_response_send(res, d, (size_t)n);
}

static int big(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	static char b[1 << 20];

	(void)req, (void)ctx;
	memset(b, 'x', sizeof(b));
	return giong_http_response_send(res, b, sizeof(b));
}

/* An answer later than giong-load's --timeout in the test: its streams time out. */
static int slow(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	int r = giong_sleep_ms(3000);

	return r ? r : json(req, res, ctx);
}

static void worker_main(unsigned w, void *arg)
{
	struct giong_listener *l;
	struct giong_http2_stats s;
	int r;

	(void)w, (void)arg;
	if ((r = giong_tcp_listen(addr, NULL, &l))) {
		printf("listen %s: %s\n", addr, giong_strerror(r));
		return;
	}
	printf("listening %s\n", addr);
	fflush(stdout);
	giong_http_serve(srv, l);
	giong_listener_close(l);
	giong_http2_stats(&s);
	printf("h2 connections %llu streams %llu refused %llu resets %llu protocol errors %llu\n",
	       (unsigned long long)s.connections, (unsigned long long)s.streams,
	       (unsigned long long)s.refused_streams, (unsigned long long)s.resets_received,
	       (unsigned long long)s.protocol_errors);
}

#ifdef GIONG_HAVE_TLS
static void *tls_config(const char *cert, const char *key)
{
	static const char *const alpn[] = {"h2", "http/1.1"};
	const struct giong_tls_backend *be = tool_tls_backend("openssl");
	struct giong_tls_config *c = NULL;

	if (!be)
		be = tool_tls_backend("wolfssl");
	if (!be || giong_tls_config_new(be, &c) || giong_tls_config_add_cert_file(c, cert, key) ||
	    giong_tls_config_alpn(c, alpn, 2) || giong_tls_config_check(c, NULL, 0)) {
		fprintf(stderr, "h2_server: TLS with %s and %s failed\n", cert, key);
		exit(1);
	}
	return c;
}
#endif

int main(int argc, char **argv)
{
	const struct giong_http_protocol *protocols[] = {giong_http2(), NULL};
	struct giong_http_server_options o = {.protocols = protocols};
	struct giong_http_router *router;
	struct giong_runtime *rt;
	struct giong_config c;
	int port = argc > 1 ? atoi(argv[1]) : 0, r;

	if (port <= 0 || port > 65535 || (argc != 2 && argc != 5) ||
	    (argc == 5 && strcmp(argv[2], "--tls"))) {
		fprintf(stderr, "usage: h2_server PORT [--tls CERT KEY]\n");
		return 2;
	}
	if (argc == 5) {
#ifdef GIONG_HAVE_TLS
		o.wrap = giong_tls_wrap_accept;
		o.wrap_ctx = tls_config(argv[3], argv[4]);
#else
		fprintf(stderr, "h2_server: built without TLS\n");
		return 77;
#endif
	}
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	if ((r = giong_http_router_new(&router)) ||
	    (r = giong_http_router_add(router, "GET", "/json", json, NULL)) ||
	    (r = giong_http_router_add(router, "POST", "/echo", echo, NULL)) ||
	    (r = giong_http_router_add(router, "GET", "/big", big, NULL)) ||
	    (r = giong_http_router_add(router, "GET", "/slow", slow, NULL)) ||
	    (r = giong_http_server_new(router, &o, &srv))) {
		fprintf(stderr, "h2_server: %s\n", giong_strerror(r));
		return 1;
	}
	giong_config_init(&c);
	c.workers = 1;
	c.shutdown_on_signals = true;
	if ((r = giong_runtime_new(&c, &rt))) {
		fprintf(stderr, "h2_server: %s\n", giong_strerror(r));
		return 1;
	}
	r = giong_runtime_run(rt, worker_main, NULL);
	giong_runtime_free(rt);
	giong_http_server_free(srv);
	giong_http_router_free(router);
#ifdef GIONG_HAVE_TLS
	giong_tls_config_free(o.wrap_ctx);
#endif
	return r ? 1 : 0;
}
