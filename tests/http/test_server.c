/* SPDX-License-Identifier: MIT */
/*
 * test_server.c - the server end to end, over real sockets, with a plain
 * blocking client (http_test.h): the first smoke of the whole path.
 *  - a GET answered with Date and Content-Length, keep-alive kept;
 *  - 16 pipelined requests in one write, answered in order;
 *  - 404 and 405 (with Allow), the connection kept.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_smoke),
	};

	gt_require_uring();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
