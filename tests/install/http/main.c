// SPDX-License-Identifier: MIT
/*
 * Uses libgiong-http through the installed headers and library: a server on
 * one end of a Unix socket pair (giong_http_serve_stream()), a client task on
 * the other end sending one request, and the response checked.
 */
#include <stdio.h>
#include <string.h>

#include <giong/core/version.h>
#include <giong/http.h>

static int hello(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	(void)req;
	(void)ctx;
	return giong_http_response_send(res, "hello", 5);
}

struct run {
	struct giong_http_server *srv;
	struct giong_stream *client;
	char got[512];
	int ok;
};

static intptr_t client(void *arg)
{
	static const char req[] = "GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
	struct run *r = arg;
	size_t n = 0;
	ssize_t k;

	if (giong_stream_write_all(r->client, req, sizeof(req) - 1) < 0)
		return 0;
	while (n < sizeof(r->got) - 1 &&
	       (k = giong_stream_read(r->client, r->got + n, sizeof(r->got) - 1 - n)) > 0)
		n += (size_t)k;
	r->got[n] = '\0';
	r->ok = !strncmp(r->got, "HTTP/1.1 200 OK\r\n", 17) && strstr(r->got, "\r\n\r\nhello");
	giong_stream_close(r->client);
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
	struct giong_http_router *router;
	struct giong_config cfg;
	struct giong_runtime *rt;
	struct run r = {0};

	giong_config_init(&cfg);
	cfg.workers = 1;
	if (giong_http_router_new(&router) ||
	    giong_http_router_add(router, "GET", "/hello", hello, NULL) ||
	    giong_http_server_new(router, NULL, &r.srv) || giong_runtime_new(&cfg, &rt)) {
		fprintf(stderr, "consumer: could not set up (io_uring available?)\n");
		return 1;
	}
	giong_runtime_run(rt, worker, &r);
	giong_runtime_free(rt);
	giong_http_server_free(r.srv);
	giong_http_router_free(router);
	if (!r.ok) {
		fprintf(stderr, "consumer: libgiong-http answered:\n%s\n", r.got);
		return 1;
	}
	printf("consumer: giong %s, http served a request (%s)\n", giong_version(),
	       giong_http_reason(200));
	return 0;
}
