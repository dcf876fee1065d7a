/* SPDX-License-Identifier: MIT */
/*
 * The HTTPS consumers' program (https_wolfssl/, https_openssl/ define
 * BACKEND and include this): libgiong-http served over libgiong-tls with one
 * backend, through the installed headers and libraries. A server on one end
 * of a Unix socket pair (wrap = giong_tls_wrap_accept), a giong TLS client
 * task on the other sending one request; the response is checked. The
 * certificates are the tls tests' ($GIONG_TLS_CERTS, from make-certs.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <giong/core/version.h>
#include <giong/http.h>
#include <giong/tls.h>

static int hello(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	(void)req;
	(void)ctx;
	return giong_http_response_send(res, "hello", 5);
}

struct run {
	struct giong_http_server *srv;
	struct giong_tls_config *cli;
	struct giong_stream *client;
	char got[512];
	int ok;
};

static intptr_t client(void *arg)
{
	static const char req[] = "GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
	struct run *r = arg;
	struct giong_stream *tls;
	size_t n = 0;
	ssize_t k;

	if (giong_tls_connect(r->client, r->cli, "localhost", &tls)) {
		fprintf(stderr, "consumer: handshake: %s\n", giong_tls_last_error(NULL));
		giong_stream_close(r->client);
		return 0;
	}
	if (giong_stream_write_all(tls, req, sizeof(req) - 1) == (ssize_t)(sizeof(req) - 1))
		while (n < sizeof(r->got) - 1 &&
		       (k = giong_stream_read(tls, r->got + n, sizeof(r->got) - 1 - n)) > 0)
			n += (size_t)k;
	r->got[n] = '\0';
	r->ok = !strncmp(r->got, "HTTP/1.1 200 OK\r\n", 17) && strstr(r->got, "\r\n\r\nhello");
	giong_stream_close(tls);
	return 0;
}

static void worker(unsigned index, void *arg)
{
	struct run *r = arg;
	struct giong_stream *server;

	(void)index;
	if (giong_unix_pair(&r->client, &server))
		return;
	if (giong_spawn(client, r, NULL)) {
		giong_stream_close(r->client);
		giong_stream_close(server);
		return;
	}
	giong_http_serve_stream(r->srv, server);
}

int main(void)
{
	const char *dir = getenv("GIONG_TLS_CERTS");
	struct giong_http_server_options opts = {.wrap = giong_tls_wrap_accept};
	struct giong_http_router *router;
	struct giong_tls_config *srv;
	struct giong_config cfg;
	struct giong_runtime *rt;
	struct run r = {0};
	char cert[4096], key[4096], ca[4096];

	if (!dir) {
		fprintf(stderr, "consumer: GIONG_TLS_CERTS is not set\n");
		return 1;
	}
	snprintf(cert, sizeof(cert), "%s/server.pem", dir);
	snprintf(key, sizeof(key), "%s/server.key", dir);
	snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
	giong_config_init(&cfg);
	cfg.workers = 1;
	if (giong_tls_config_new(BACKEND(), &srv) ||
	    giong_tls_config_add_cert_file(srv, cert, key) ||
	    giong_tls_config_new(BACKEND(), &r.cli) || giong_tls_config_ca_file(r.cli, ca)) {
		fprintf(stderr, "consumer: TLS configuration failed (%s)\n", dir);
		return 1;
	}
	opts.wrap_ctx = srv;
	if (giong_http_router_new(&router) ||
	    giong_http_router_add(router, "GET", "/hello", hello, NULL) ||
	    giong_http_server_new(router, &opts, &r.srv) || giong_runtime_new(&cfg, &rt)) {
		fprintf(stderr, "consumer: could not set up (io_uring available?)\n");
		return 1;
	}
	giong_runtime_run(rt, worker, &r);
	giong_runtime_free(rt);
	giong_http_server_free(r.srv);
	giong_http_router_free(router);
	giong_tls_config_free(srv);
	giong_tls_config_free(r.cli);
	if (!r.ok) {
		fprintf(stderr, "consumer: libgiong-http over TLS answered:\n%s\n", r.got);
		return 1;
	}
	printf("consumer: giong %s, https served a request (%s)\n", giong_version(),
	       giong_http_reason(200));
	return 0;
}
