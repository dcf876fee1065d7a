/* SPDX-License-Identifier: MIT */
/*
 * test_client.c - the client against giong's own server, in the same worker
 * (a serve task and the scenario in the main task): keep-alive reuse, a body
 * from memory and a streamed (chunked) one, HEAD, 404, a 1 MiB body read
 * whole and streamed in place, giong_http_get(), the pool bound with tasks
 * running exchanges at once, close_idle; 16 GETs pipelined in one write on
 * the pooled connection, answered in order; Expect: 100-continue answered by
 * the server's 100 (a body from memory and a streamed one) and by a handler
 * that does not read the body (withheld); every descriptor given back.
 */
#include "client_test.h"

struct env {
	struct giong_http_router *router;
	struct giong_http_server *srv;
	struct giong_http_client *cli;
	struct giong_http_client_options opts;
	char url[64];
	char *big; /* /big's body */
	size_t big_len;
	atomic_int done;
};

static int h_hello(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	(void)req;
	(void)ctx;
	giong_http_response_header(res, "X-Hello", "yes");
	return giong_http_response_send(res, "hello", 5);
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

/* Answers without reading the body: a client that expects 100-continue keeps it. */
static int h_deny(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	(void)req;
	(void)ctx;
	giong_http_response_status(res, 401);
	return giong_http_response_send(res, "no", 2);
}

static int h_big(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	struct env *e = ctx;

	(void)req;
	/* Chunked, in pieces: the client de-chunks them. */
	for (size_t off = 0; off < e->big_len; off += 65536) {
		size_t n = e->big_len - off < 65536 ? e->big_len - off : 65536;
		int r = giong_http_response_write(res, e->big + off, n);

		if (r)
			return r;
	}
	return giong_http_response_end(res);
}

/* /seq?i=K: its query back, K + 1 times (every answer of its own length). */
static int h_seq(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	char body[512];
	size_t ql, n = 0;
	const char *q = giong_http_request_query(req, &ql);

	(void)ctx;
	if (!q || ql < 3 || ql > 8)
		return giong_http_response_send(res, "?", 1);
	for (int k = atoi(q + 2) + 1; k > 0 && n + ql <= sizeof(body); k--, n += ql)
		memcpy(body + n, q, ql);
	return giong_http_response_send(res, body, n);
}

static int h_slow(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	(void)req;
	(void)ctx;
	giong_sleep_ms(30);
	return giong_http_response_send(res, "slow", 4);
}

struct serve {
	struct env *e;
	struct giong_listener *l;
};

static intptr_t serve_task(void *arg)
{
	struct serve *s = arg;

	gt_check_int_equal(giong_http_serve(s->e->srv, s->l), 0);
	return 0;
}

static intptr_t one_slow(void *arg)
{
	struct env *e = arg;
	char url[96], body[16];
	int pooled;

	snprintf(url, sizeof(url), "%s/slow", e->url);
	gt_check_int_equal(ct_exchange(e->cli, "GET", url, NULL, body, sizeof(body), &pooled), 200);
	gt_check_string_equal(body, "slow");
	atomic_fetch_add(&e->done, 1);
	return 0;
}

static struct giong_http_client_stats stats(struct env *e)
{
	struct giong_http_client_stats s;

	giong_http_client_stats(e->cli, 0, &s);
	return s;
}

/* 16 GETs pipelined on the pooled connection: each answer its own, in order. */
static void pipeline_scenario(struct env *e)
{
	struct giong_http_pipeline *pl;
	struct giong_http_exchange *ex;
	uint64_t reused = stats(e).reused;
	char url[96], want[512];
	const void *data;

	gt_check_int_equal(giong_http_pipeline_begin(e->cli, 0, &pl), 0);
	for (int i = 0; i < 16; i++) {
		snprintf(url, sizeof(url), "%s/seq?i=%d", e->url, i);
		gt_check_int_equal(giong_http_exchange_begin(e->cli, "GET", url, &ex), 0);
		gt_check_int_equal(giong_http_pipeline_add(pl, ex, NULL, 0), 0);
	}
	gt_check_int_equal(giong_http_pipeline_send(pl), 0);
	for (int i = 0; i < 16; i++) {
		size_t n = 0;
		ssize_t got;
		int ql = snprintf(url, sizeof(url), "i=%d", i);

		for (int k = 0; k <= i; k++, n += (size_t)ql)
			memcpy(want + n, url, (size_t)ql);
		gt_check_int_equal(giong_http_pipeline_next(pl, &ex), 200);
		gt_check_int_equal(giong_http_exchange_content_length(ex), (int64_t)n);
		got = giong_http_exchange_body(ex, &data);
		gt_check_int_equal(got, (ssize_t)n);
		gt_check_true(got == (ssize_t)n && !memcmp(data, want, n));
		gt_check_int_equal(giong_http_exchange_end(ex), 1);
	}
	gt_check_int_equal(giong_http_pipeline_next(pl, &ex), 0);
	gt_check_int_equal(giong_http_pipeline_end(pl), 1);
	gt_check_int_equal(stats(e).reused, reused + 16);
	gt_check_int_equal(stats(e).connects, 1);
	gt_check_int_equal(stats(e).idle, 1);
	gt_check_int_equal(stats(e).pipelines, 1);
	gt_check_int_equal(stats(e).pipelined, 16);
}

static uint64_t continues_sent(struct env *e)
{
	struct giong_http_stats st;

	giong_http_server_stats(e->srv, 0, &st);
	return st.responses[0];
}

/* Expect: 100-continue with the server's own handling: its 100 goes at the
 * handler's first read of the body, so a body the handler reads goes at once
 * (not after the wait), and one it does not read is never sent. */
static void expect_scenario(struct env *e)
{
	uint64_t c0 = continues_sent(e), conns = stats(e).connects, ms = 0;
	size_t len = 200000;
	char url[96], *out = malloc(len + 1);
	int sent[2], pooled;

	snprintf(url, sizeof(url), "%s/echo", e->url);
	gt_check_int_equal(ct_expect(e->cli, "PUT", url, 5000, e->big, len, NULL, sent, &ms, out,
				     len + 1, &pooled),
			   200);
	gt_check_int_equal(sent[0], 0);
	gt_check_true(ms < 2000); /* the 100, not the wait */
	gt_check_true(strlen(out) == len && !memcmp(out, e->big, len));
	gt_check_int_equal(pooled, 1);
	gt_check_int_equal(continues_sent(e), c0 + 1);
	gt_check_int_equal(ct_expect(e->cli, "PUT", url, 5000, "stre", 4, "amed", sent, &ms, out,
				     len + 1, &pooled),
			   200);
	gt_check_true(sent[0] == 0 && sent[1] == 0);
	gt_check_true(ms < 2000);
	gt_check_string_equal(out, "streamed");
	gt_check_int_equal(pooled, 1);
	gt_check_int_equal(continues_sent(e), c0 + 2);
	gt_check_int_equal(stats(e).connects, conns + 1);
	/* The handler answers without reading: the body stays here, and the
	 * connection (which the server closes too) is not reused. */
	snprintf(url, sizeof(url), "%s/deny", e->url);
	gt_check_int_equal(ct_expect(e->cli, "POST", url, 5000, e->big, len, NULL, sent, &ms, out,
				     len + 1, &pooled),
			   401);
	gt_check_int_equal(sent[0], 1);
	gt_check_true(ms < 2000);
	gt_check_string_equal(out, "no");
	gt_check_int_equal(pooled, 0);
	gt_check_int_equal(continues_sent(e), c0 + 2);
	gt_check_int_equal(stats(e).idle, 0);
	free(out);
}

static void scenario(struct env *e)
{
	struct giong_http_exchange *ex;
	char url[96], body[256];
	const void *data;
	const char *v;
	size_t len, got = 0;
	ssize_t n;
	char *gb;
	int st, pooled;

	snprintf(url, sizeof(url), "%s/hello", e->url);
	gt_check_int_equal(giong_http_exchange_begin(e->cli, "GET", url, &ex), 0);
	gt_check_int_equal(giong_http_exchange_response(ex), 200);
	v = giong_http_exchange_field(ex, "x-hello", &len);
	gt_check_true(v && len == 3 && !memcmp(v, "yes", 3));
	gt_check_int_equal(giong_http_exchange_content_length(ex), 5);
	gt_check_int_equal(giong_http_exchange_body(ex, &data), 5);
	gt_check_memory_equal(data, "hello", 5);
	gt_check_int_equal(giong_http_exchange_end(ex), 1);
	/* Reused. */
	gt_check_int_equal(ct_exchange(e->cli, "GET", url, NULL, body, sizeof(body), &pooled), 200);
	gt_check_int_equal(stats(e).reused, 1);
	gt_check_int_equal(stats(e).connects, 1);
	/* HEAD: GET's fields, no body. */
	gt_check_int_equal(giong_http_exchange_begin(e->cli, "HEAD", url, &ex), 0);
	gt_check_int_equal(giong_http_exchange_response(ex), 200);
	gt_check_int_equal(giong_http_exchange_content_length(ex), 0);
	gt_check_int_equal(giong_http_exchange_body(ex, &data), 0);
	gt_check_int_equal(giong_http_exchange_end(ex), 1);
	/* 404, kept. */
	snprintf(url, sizeof(url), "%s/none?x=1", e->url);
	gt_check_int_equal(ct_exchange(e->cli, "GET", url, NULL, NULL, 0, &pooled), 404);
	gt_check_int_equal(pooled, 1);
	/* A body from memory, and one streamed. */
	snprintf(url, sizeof(url), "%s/echo", e->url);
	gt_check_int_equal(ct_exchange(e->cli, "POST", url, "ping", body, sizeof(body), &pooled),
			   200);
	gt_check_string_equal(body, "ping");
	gt_check_int_equal(giong_http_exchange_begin(e->cli, "PUT", url, &ex), 0);
	gt_check_int_equal(giong_http_exchange_header(ex, "Content-Type", "text/plain"), 0);
	gt_check_int_equal(giong_http_exchange_write(ex, "stre", 4), 0);
	gt_check_int_equal(giong_http_exchange_write(ex, "amed", 4), 0);
	gt_check_int_equal(giong_http_exchange_send(ex, "x", 1), -EALREADY);
	gt_check_int_equal(giong_http_exchange_response(ex), 200);
	gt_check_int_equal(giong_http_exchange_body(ex, &data), 8);
	gt_check_memory_equal(data, "streamed", 8);
	gt_check_int_equal(giong_http_exchange_end(ex), 1);
	/* 1 MiB chunked, whole then streamed in place. */
	snprintf(url, sizeof(url), "%s/big", e->url);
	gt_check_int_equal(giong_http_exchange_begin(e->cli, "GET", url, &ex), 0);
	gt_check_int_equal(giong_http_exchange_response(ex), 200);
	gt_check_int_equal(giong_http_exchange_content_length(ex), -1);
	n = giong_http_exchange_body(ex, &data);
	gt_check_int_equal(n, (ssize_t)e->big_len);
	gt_check_true(n == (ssize_t)e->big_len && !memcmp(data, e->big, e->big_len));
	gt_check_int_equal(giong_http_exchange_end(ex), 1);
	gt_check_int_equal(giong_http_exchange_begin(e->cli, "GET", url, &ex), 0);
	gt_check_int_equal(giong_http_exchange_response(ex), 200);
	while ((n = giong_http_exchange_next(ex, &data)) > 0) {
		gt_check_true(got + (size_t)n <= e->big_len &&
			      !memcmp(data, e->big + got, (size_t)n));
		got += (size_t)n;
	}
	gt_check_int_equal(n, 0);
	gt_check_int_equal(got, e->big_len);
	gt_check_int_equal(giong_http_exchange_end(ex), 1);
	/* The convenience. */
	snprintf(url, sizeof(url), "%s/hello", e->url);
	gt_check_int_equal(giong_http_get(e->cli, url, &st, &gb), 5);
	gt_check_int_equal(st, 200);
	gt_check_string_equal(gb, "hello");
	free(gb);
	gt_check_int_equal(stats(e).connects, 1);
	gt_check_int_equal(stats(e).idle, 1);
	pipeline_scenario(e);

	/* The pool bound: 6 exchanges at once want 6 connections; 3 stay. */
	for (int i = 0; i < 6; i++)
		gt_check_int_equal(giong_spawn(one_slow, e, NULL), 0);
	while (atomic_load(&e->done) < 6)
		giong_sleep_ms(5);
	gt_check_int_equal(stats(e).connects, 6);
	gt_check_int_equal(stats(e).idle, 3);
	gt_check_int_equal(giong_http_client_close_idle(e->cli), 3);
	gt_check_int_equal(stats(e).idle, 0);
	expect_scenario(e);
	/* Errors that are the caller's. */
	gt_check_int_equal(giong_http_exchange_begin(e->cli, "GET", "ftp://x/", &ex),
			   -EPROTONOSUPPORT);
	gt_check_int_equal(giong_http_exchange_begin(e->cli, "GET", "https://x/", &ex),
			   -EPROTONOSUPPORT);
	gt_check_int_equal(giong_http_exchange_begin(e->cli, "GET", "http://u@x/", &ex), -EINVAL);
	gt_check_int_equal(giong_http_exchange_begin(e->cli, "G T", "http://x/", &ex), -EINVAL);
	gt_check_int_equal(giong_http_exchange_begin(e->cli, "GET", "http://x:99999/", &ex),
			   -EINVAL);
	gt_check_int_equal(giong_http_exchange_end(NULL), 0);
}

static void main_fn(unsigned worker, void *arg)
{
	struct env *e = arg;
	struct serve s = {.e = e};
	struct giong_task *t;
	struct giong_addr a;

	(void)worker;
	if (!gt_check_int_equal(giong_tcp_listen("127.0.0.1:0", NULL, &s.l), 0))
		return;
	giong_listener_addr(s.l, &a);
	snprintf(e->url, sizeof(e->url), "http://127.0.0.1:%d", giong_addr_port(&a));
	gt_check_int_equal(giong_spawn(serve_task, &s, &t), 0);
	scenario(e);
	giong_shutdown();
	giong_join(t, NULL);
	giong_listener_close(s.l);
}

static void test_own_server(void **state)
{
	struct giong_config cfg = gt_config(1);
	struct env e = {.opts = {.pool_max = 3}};
	int fds = gt_count_fds();

	(void)state;
	e.big_len = 1u << 20;
	e.big = malloc(e.big_len);
	for (size_t i = 0; i < e.big_len; i++)
		e.big[i] = (char)('a' + (i * 7 + i / 251) % 26);
	assert_int_equal(giong_http_router_new(&e.router), 0);
	giong_http_router_add(e.router, "GET", "/hello", h_hello, &e);
	giong_http_router_add(e.router, "POST", "/echo", h_echo, &e);
	giong_http_router_add(e.router, "PUT", "/echo", h_echo, &e);
	giong_http_router_add(e.router, "POST", "/deny", h_deny, &e);
	giong_http_router_add(e.router, "GET", "/big", h_big, &e);
	giong_http_router_add(e.router, "GET", "/slow", h_slow, &e);
	giong_http_router_add(e.router, "GET", "/seq", h_seq, &e);
	assert_int_equal(giong_http_server_new(e.router, NULL, &e.srv), 0);
	assert_int_equal(giong_http_client_new(&e.opts, &e.cli), 0);
	gt_run(&cfg, main_fn, &e, NULL);
	assert_int_equal(giong_http_client_free(e.cli), 0);
	assert_int_equal(giong_http_server_free(e.srv), 0);
	giong_http_router_free(e.router);
	free(e.big);
	assert_int_equal(gt_count_fds(), fds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_server),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
