/* SPDX-License-Identifier: MIT */
/*
 * test_server.c - the server end to end, over real sockets, with a plain
 * blocking client (http_test.h): the first smoke of the whole path.
 *  - a GET answered with Date and Content-Length, keep-alive kept;
 *  - 16 pipelined requests in one write, answered in order;
 *  - 404 and 405 (with Allow), the connection kept;
 *  - a route's own body limit, above and below the server's;
 *  - a handler's misuses of the response refused, and the answer still whole;
 *  - the server's own refusals (options, no worker, no stream), and a
 *    serve_stream() cancelled while its connection goes on alone.
 */
#include "http_test.h"

static int hello(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	(void)req;
	(void)ctx;
	return giong_http_response_send(res, "hello", 5);
}

static void smoke_client(struct ht *h)
{
	static const char get[] = "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n";
	char pipelined[16 * sizeof(get)], v[64];
	struct ht_resp r;
	struct ht_conn c;
	size_t n = 0;
	int fd = ht_connect(h);

	if (!gt_check_true(fd >= 0))
		return;
	ht_conn_init(&c, fd);
	gt_check_int_equal(ht_send_str(fd, get), 0);
	gt_check_int_equal(ht_read_response(&c, &r, false), 0);
	gt_check_int_equal(r.status, 200);
	gt_check_string_equal(r.body, "hello");
	gt_check_true(ht_header(&r, "Date", v, sizeof(v)) && strlen(v) == 29);
	gt_check_true(ht_header(&r, "Content-Length", v, sizeof(v)) && !strcmp(v, "5"));
	ht_resp_free(&r);

	for (int i = 0; i < 16; i++) {
		memcpy(pipelined + n, get, sizeof(get) - 1);
		n += sizeof(get) - 1;
	}
	gt_check_int_equal(ht_send(fd, pipelined, n), 0);
	for (int i = 0; i < 16; i++) {
		gt_check_int_equal(ht_read_response(&c, &r, false), 0);
		gt_check_int_equal(r.status, 200);
		ht_resp_free(&r);
	}
	gt_check_int_equal(ht_send_str(fd, "GET /nothing HTTP/1.1\r\nHost: t\r\n\r\n"), 0);
	gt_check_int_equal(ht_read_response(&c, &r, false), 0);
	gt_check_int_equal(r.status, 404);
	ht_resp_free(&r);
	gt_check_int_equal(ht_send_str(fd, "DELETE /hello HTTP/1.1\r\nHost: t\r\n\r\n"), 0);
	gt_check_int_equal(ht_read_response(&c, &r, false), 0);
	gt_check_int_equal(r.status, 405);
	gt_check_true(ht_header(&r, "Allow", v, sizeof(v)) && !strcmp(v, "GET, HEAD"));
	ht_resp_free(&r);
	gt_check_int_equal(ht_closed_within(&c, 100), 0);
	ht_conn_close(&c);
}

static void test_smoke(void **state)
{
	struct ht h;

	(void)state;
	ht_init(&h);
	assert_int_equal(giong_http_router_add(h.router, "GET", "/hello", hello, NULL), 0);
	ht_run(&h, smoke_client);
	assert_int_equal(h.stats.requests, 19);
	assert_int_equal(h.stats.responses[1], 17);
	assert_int_equal(h.stats.responses[3], 2);
	assert_int_equal(h.stats.open, 0);
}

/* The body's length as text. */
static int count(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	const void *body;
	ssize_t n = giong_http_request_body(req, &body);
	char text[32];

	(void)ctx;
	if (n < 0)
		return (int)n;
	snprintf(text, sizeof(text), "%zd", n);
	return giong_http_response_send(res, text, strlen(text));
}

static void limits_client(struct ht *h)
{
	static const char small_chunked[] = "POST /small HTTP/1.1\r\nHost: t\r\n"
					    "Transfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n"
					    "5\r\nghijk\r\n0\r\n\r\n";
	size_t big = 3u << 20;
	char *req = malloc(big + 256);
	struct ht_resp r;
	int n;

	if (!gt_check_non_null(req))
		return;
	/* 3 MiB to a route allowed 4 MiB, over the server's 1 MiB. */
	n = snprintf(req, 256, "POST /big HTTP/1.1\r\nHost: t\r\nContent-Length: %zu\r\n\r\n", big);
	memset(req + n, 'b', big);
	gt_check_int_equal(ht_exchange(h, req, (size_t)n + big, &r, false), 0);
	gt_check_int_equal(r.status, 200);
	gt_check_int_equal(atol(r.body), (long)big);
	ht_resp_free(&r);
	/* 11 bytes to a route allowed 10: 413 before the body, closed. */
	n = snprintf(req, 256, "POST /small HTTP/1.1\r\nHost: t\r\nContent-Length: 11\r\n\r\n");
	gt_check_int_equal(ht_exchange(h, req, (size_t)n, &r, false), 1);
	gt_check_int_equal(r.status, 413);
	ht_resp_free(&r);
	gt_check_int_equal(ht_exchange(h, small_chunked, sizeof(small_chunked) - 1, &r, false), 1);
	gt_check_int_equal(r.status, 413);
	ht_resp_free(&r);
	/* 10 is fine. */
	n = snprintf(req, 256,
		     "POST /small HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\n0123456789");
	gt_check_int_equal(ht_exchange(h, req, (size_t)n, &r, false), 0);
	gt_check_int_equal(r.status, 200);
	gt_check_string_equal(r.body, "10");
	ht_resp_free(&r);
	free(req);
}

static void test_route_body_limits(void **state)
{
	struct giong_http_route_options big = {.body_limit = 4u << 20}, small = {.body_limit = 10};
	struct ht h;

	(void)state;
	ht_init(&h);
	assert_int_equal(giong_http_router_add_opts(h.router, "POST", "/big", count, NULL, &big),
			 0);
	assert_int_equal(
		giong_http_router_add_opts(h.router, "POST", "/small", count, NULL, &small), 0);
	ht_run(&h, limits_client);
	assert_int_equal(h.stats.body_too_large, 2);
}

/* --- a handler's misuses of the response ------------------------------------------------ */

/* Each call refused with what it should be, and the response not harmed:
 * the handler still answers 200 "ok" (or 204) after them. */
static int misuse(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	static char big[40000];
	size_t pl;
	const char *path = giong_http_request_path(req, &pl);
	int r = 0;

	(void)ctx;
	memset(big, 'v', sizeof(big) - 1);
	gt_check_int_equal(giong_http_response_status(NULL, 200), -EINVAL);
	gt_check_int_equal(giong_http_response_status(res, 199), -EINVAL);
	gt_check_int_equal(giong_http_response_status(res, 600), -EINVAL);
	gt_check_int_equal(giong_http_response_close(NULL), -EINVAL);
	gt_check_int_equal(giong_http_response_header(res, NULL, "v"), -EINVAL);
	gt_check_int_equal(giong_http_response_header(res, "Bad Name", "v"), -EINVAL);
	gt_check_int_equal(giong_http_response_header(res, "X-Ctl", "a\001b"), -EINVAL);
	gt_check_int_equal(giong_http_response_send(NULL, NULL, 0), -EINVAL);
	gt_check_int_equal(giong_http_response_send(res, NULL, 3), -EINVAL);
	gt_check_int_equal(giong_http_response_write(NULL, NULL, 0), -EINVAL);
	gt_check_int_equal(giong_http_response_write(res, NULL, 3), -EINVAL);
	gt_check_int_equal(giong_http_response_end(NULL), -EINVAL);
	gt_check_int_equal(giong_http_response_sendfile(res, -1, 0, 1), -EINVAL);
	gt_check_int_equal(giong_http_response_sendfile(res, 0, -1, 1), -EINVAL);
	gt_check_false(giong_http_response_started(NULL));
	if (pl == 10 && !memcmp(path, "/nocontent", 10)) {
		gt_check_int_equal(giong_http_response_status(res, 204), 0);
		/* 204 has no body: neither a sized one nor a stream. */
		gt_check_int_equal(giong_http_response_send(res, "x", 1), -EINVAL);
		gt_check_int_equal(giong_http_response_write(res, "x", 1), -EINVAL);
		gt_check_int_equal(giong_http_response_end(res), -EINVAL);
		r = giong_http_response_send(res, NULL, 0);
		gt_check_int_equal(r, 0);
		gt_check_int_equal(giong_http_response_end(res), -EALREADY);
		return r;
	}
	/* The head has room for 64 KiB, no more. */
	gt_check_int_equal(giong_http_response_header(res, "X-A", big), 0);
	gt_check_int_equal(giong_http_response_header(res, "X-B", big), -E2BIG);
	gt_check_int_equal(giong_http_response_status(res, 201), -EALREADY); /* head begun */
	r = giong_http_response_send(res, "ok", 2);
	gt_check_int_equal(giong_http_response_send(res, "ok", 2), -EALREADY);
	gt_check_int_equal(giong_http_response_write(res, "ok", 2), -EALREADY);
	gt_check_int_equal(giong_http_response_end(res), -EALREADY);
	gt_check_int_equal(giong_http_response_header(res, "X-Late", "l"), -EALREADY);
	return r;
}

static void misuse_client(struct ht *h)
{
	struct ht_conn c;
	struct ht_resp r;
	char v[16], *end;

	if (!ht_open(h, &c))
		return;
	/* A 40 KB head: more than struct ht_resp holds, read here. */
	gt_check_int_equal(ht_send_str(c.fd, "GET /misuse HTTP/1.1\r\nHost: t\r\n\r\n"), 0);
	while (!(end = c.len ? memmem(c.buf, c.len, "\r\n\r\nok", 6) : NULL))
		if (!gt_check_int_equal(ht_fill(&c), 1))
			break;
	if (end) {
		*end = '\0';
		gt_check_true(!strncmp(c.buf, "HTTP/1.1 200 ", 13));
		gt_check_non_null(strstr(c.buf, "\r\nX-A: vvvv"));
		gt_check_null(strstr(c.buf, "\r\nX-B:"));
		gt_check_non_null(strstr(c.buf, "\r\nContent-Length: 2"));
		ht_drop(&c, (size_t)(end - c.buf) + 6);
	}
	gt_check_int_equal(ht_request(&c, "GET /nocontent HTTP/1.1\r\nHost: t\r\n\r\n", &r, false),
			   0);
	gt_check_int_equal(r.status, 204);
	gt_check_false(ht_header(&r, "Content-Length", v, sizeof(v)));
	ht_resp_free(&r);
	gt_check_true(ht_expect(&c, "GET /nocontent HTTP/1.1\r\nHost: t\r\n\r\n", 204, NULL));
	ht_conn_close(&c);
}

static void test_response_misuse(void **state)
{
	struct ht h;

	(void)state;
	ht_init(&h);
	assert_int_equal(giong_http_router_add(h.router, "GET", "/misuse", misuse, NULL), 0);
	assert_int_equal(giong_http_router_add(h.router, "GET", "/nocontent", misuse, NULL), 0);
	ht_run(&h, misuse_client);
	assert_int_equal(h.stats.requests, 3);
}

/* --- the server's own refusals, and a serve_stream() cancelled ------------------------------- */

struct streamed {
	struct giong_http_server *srv;
	struct giong_stream *s;
	int ret;
};

static intptr_t serve_stream_task(void *arg)
{
	struct streamed *st = arg;

	st->ret = giong_http_serve_stream(st->srv, st->s);
	return 0;
}

static int read_all(struct giong_stream *s, char *buf, size_t cap, const char *until)
{
	size_t got = 0;

	while (got + 1 < cap) {
		ssize_t n = giong_stream_read(s, buf + got, cap - 1 - got);

		if (n <= 0)
			return n ? (int)n : -ENODATA;
		got += (size_t)n;
		buf[got] = '\0';
		if (strstr(buf, until))
			return 0;
	}
	return -E2BIG;
}

static void serve_api_main(unsigned worker, void *arg)
{
	struct giong_http_server *srv = arg;
	struct giong_stream *a, *b;
	struct giong_task *t;
	struct streamed st = {.srv = srv};
	char buf[512];

	(void)worker;
	/* No server: the stream is closed all the same (its peer sees the end). */
	if (!gt_check_int_equal(giong_unix_pair(&a, &b), 0))
		return;
	gt_check_int_equal(giong_http_serve_stream(NULL, a), -EINVAL);
	gt_check_int_equal(giong_stream_read(b, buf, sizeof(buf)), 0);
	giong_stream_close(b);
	gt_check_int_equal(giong_http_serve_stream(srv, NULL), -EINVAL);
	gt_check_int_equal(giong_http_serve(srv, NULL), -EINVAL);

	/* serve_stream() cancelled while its connection is open: it returns
	 * -ECANCELED, and the connection goes on serving alone. */
	if (!gt_check_int_equal(giong_unix_pair(&a, &b), 0))
		return;
	st.s = a;
	gt_check_int_equal(giong_spawn(serve_stream_task, &st, &t), 0);
	giong_sleep_ms(5);
	gt_check_int_equal(giong_task_cancel(t), 0);
	giong_join(t, NULL);
	gt_check_int_equal(st.ret, -ECANCELED);
	gt_check_int_equal(giong_stream_write_all(b, "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n", 32),
			   32);
	if (gt_check_int_equal(read_all(b, buf, sizeof(buf), "hello"), 0)) {
		gt_check_true(!strncmp(buf, "HTTP/1.1 200 ", 13));
		gt_check_non_null(strstr(buf, "\r\nServer: giong-test\r\n"));
	}
	giong_stream_close(b); /* the connection ends: the server's count goes back */
	giong_sleep_ms(20);
}

static void test_server_api(void **state)
{
	struct giong_http_router *router;
	struct giong_http_server *srv = (struct giong_http_server *)1;
	struct giong_http_server_options o = {0};
	struct giong_http_limits lim;
	struct giong_http_stats st;
	struct giong_config cfg = gt_config(1);

	(void)state;
	assert_int_equal(giong_http_router_new(&router), 0);
	assert_int_equal(giong_http_router_add(router, "GET", "/hello", hello, NULL), 0);
	assert_int_equal(giong_http_server_new(NULL, NULL, &srv), -EINVAL);
	assert_int_equal(giong_http_server_new(router, NULL, NULL), -EINVAL);
	o.server_name = "";
	assert_int_equal(giong_http_server_new(router, &o, &srv), -EINVAL);
	assert_null(srv);
	o.server_name = "giong\r\nX-Injected: 1"; /* never a second field */
	assert_int_equal(giong_http_server_new(router, &o, &srv), -EINVAL);
	o.server_name = NULL;
	giong_http_limits_init(&lim);
	lim.request_line = lim.head + 1; /* a request line longer than the head */
	o.limits = &lim;
	assert_int_equal(giong_http_server_new(router, &o, &srv), -EINVAL);
	o.limits = NULL;
	o.server_name = "giong-test";
	assert_int_equal(giong_http_server_new(router, &o, &srv), 0);
	assert_int_equal(giong_http_server_stats(NULL, 0, &st), -EINVAL);
	assert_int_equal(giong_http_server_stats(srv, 0, NULL), -EINVAL);
	assert_int_equal(giong_http_server_free(NULL), 0);
	gt_run(&cfg, serve_api_main, srv, NULL);
	assert_int_equal(giong_http_server_stats(srv, 0, &st), 0);
	assert_int_equal(st.requests, 1);
	assert_int_equal(st.responses[1], 1);
	assert_int_equal(st.open, 0);
	assert_int_equal(giong_http_server_free(srv), 0);
	giong_http_router_free(router);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_smoke),
		cmocka_unit_test(test_route_body_limits),
		cmocka_unit_test(test_response_misuse),
		cmocka_unit_test(test_server_api),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
