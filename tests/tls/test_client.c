/* SPDX-License-Identifier: MIT */
/*
 * test_client.c - libgiong-http's client over TLS (options.connect: the
 * adapter below, around giong_tls_connect()) against libgiong-http's server
 * over TLS (options.wrap = giong_tls_wrap_accept), in one worker: https://
 * GETs on one kept-alive TLS connection, a streamed body each way,
 * giong_http_get(), a refused connect; every descriptor back.
 */
#include <stdio.h>
#include <string.h>

#include "tls_test.h"

#include <giong/http.h>

struct env {
	struct giong_http_router *router;
	struct giong_http_server *srv;
	struct giong_http_client *cli;
	struct giong_tls_config *srv_tls, *cli_tls;
	struct giong_listener *l;
	char url[64];
};

/* The connector: libgiong-http's shape, giong_tls_connect()'s work. The host
 * the URL names is the SNI and the name the certificate must carry. */
static int tls_connector(struct giong_stream *tcp, const char *host, void *ctx,
			 struct giong_stream **out)
{
	return giong_tls_connect(tcp, ctx, host, out);
}

static int h_hello(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	(void)req;
	(void)ctx;
	return giong_http_response_send(res, "hello over tls", 14);
}

static int h_echo(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	const void *body;
	ssize_t n = giong_http_request_body(req, &body);

	(void)ctx;
	if (n < 0)
		return (int)n;
	return giong_http_response_send(res, body, (size_t)n);
}

static intptr_t serve_task(void *arg)
{
	struct env *e = arg;

	gt_check_int_equal(giong_http_serve(e->srv, e->l), 0);
	return 0;
}

static void scenario(struct env *e)
{
	struct giong_http_client_stats st;
	struct giong_http_exchange *ex;
	char url[96];
	const void *data;
	char *body;
	int status;

	snprintf(url, sizeof(url), "%s/hello", e->url);
	for (int i = 0; i < 3; i++) {
		gt_check_int_equal(giong_http_get(e->cli, url, &status, &body), 14);
		gt_check_int_equal(status, 200);
		gt_check_string_equal(body, "hello over tls");
		free(body);
	}
	snprintf(url, sizeof(url), "%s/echo", e->url);
	gt_check_int_equal(giong_http_exchange_begin(e->cli, "POST", url, &ex), 0);
	gt_check_int_equal(giong_http_exchange_write(ex, "sealed ", 7), 0);
	gt_check_int_equal(giong_http_exchange_write(ex, "body", 4), 0);
	gt_check_int_equal(giong_http_exchange_response(ex), 200);
	gt_check_int_equal(giong_http_exchange_body(ex, &data), 11);
	gt_check_memory_equal(data, "sealed body", 11);
	gt_check_int_equal(giong_http_exchange_end(ex), 1);
	giong_http_client_stats(e->cli, 0, &st);
	gt_check_int_equal(st.connects, 1);
	gt_check_int_equal(st.reused, 3);
	/* Nothing listens there: the connect's error, and nothing pooled. */
	gt_check_int_equal(giong_http_get(e->cli, "https://127.0.0.1:1/", &status, &body),
			   -ECONNREFUSED);
	gt_check_null(body);
	gt_check_int_equal(giong_http_client_close_idle(e->cli), 1);
}

static void main_fn(unsigned worker, void *arg)
{
	struct env *e = arg;
	struct giong_task *t;
	struct giong_addr a;
	int hold = -EADDRINUSE;

	(void)worker;
	/* The client asks for localhost (the certificate's name): [::1] on the
	 * port is held, bound and not listening, so that it is refused there and
	 * 127.0.0.1 answers (another process's listener on [::1] would win); a
	 * port taken on ::1, another. */
	for (int tries = 0; tries < 10; tries++) {
		if (!gt_check_int_equal(giong_tcp_listen("127.0.0.1:0", NULL, &e->l), 0))
			return;
		giong_listener_addr(e->l, &a);
		hold = gt_hold_v6_loopback(giong_addr_port(&a));
		if (hold != -EADDRINUSE)
			break;
		giong_listener_close(e->l);
	}
	if (!gt_check_int_not_equal(hold, -EADDRINUSE)) {
		giong_listener_close(e->l);
		return;
	}
	snprintf(e->url, sizeof(e->url), "https://localhost:%d", giong_addr_port(&a));
	gt_check_int_equal(giong_spawn(serve_task, e, &t), 0);
	scenario(e);
	giong_shutdown();
	giong_join(t, NULL);
	giong_listener_close(e->l);
	if (hold >= 0)
		close(hold);
}

static void test_https_client(void **state)
{
	static const char *const alpn[] = {"http/1.1", NULL};
	struct giong_http_server_options so = {0};
	struct giong_http_client_options co = {0};
	struct giong_config cfg = gt_config(1);
	struct env e = {0};
	int fds = gt_count_fds();

	(void)state;
	cfg.shutdown_grace_ms = 3000;
	e.srv_tls = tt_server("server", alpn);
	e.cli_tls = tt_client(alpn);
	so.wrap = giong_tls_wrap_accept;
	so.wrap_ctx = e.srv_tls;
	co.connect = tls_connector;
	co.connect_ctx = e.cli_tls;
	/* Not what is tested: room for the first handshake, which builds both
	 * contexts (certificates, CA), under valgrind beside another test (a CI
	 * run: 2 s timed out). */
	co.connect_timeout_ms = 15000;
	assert_int_equal(giong_http_router_new(&e.router), 0);
	giong_http_router_add(e.router, "GET", "/hello", h_hello, NULL);
	giong_http_router_add(e.router, "POST", "/echo", h_echo, NULL);
	assert_int_equal(giong_http_server_new(e.router, &so, &e.srv), 0);
	assert_int_equal(giong_http_client_new(&co, &e.cli), 0);
	gt_run(&cfg, main_fn, &e, NULL);
	assert_int_equal(giong_http_client_free(e.cli), 0);
	assert_int_equal(giong_http_server_free(e.srv), 0);
	giong_http_router_free(e.router);
	giong_tls_config_free(e.srv_tls);
	giong_tls_config_free(e.cli_tls);
	gt_assert_fds(fds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_https_client),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
