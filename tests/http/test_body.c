/* SPDX-License-Identifier: MIT */
/*
 * test_body.c - request bodies end to end (http_test.h):
 *  - echoed whole (giong_http_request_body()) at 0 B, 1 B, around a page,
 *    64 KiB, the 1 MiB limit and 8 MiB (a 16 MiB limit), with
 *    Content-Length and chunked in chunks of varied sizes, byte for byte;
 *  - read in small pieces (giong_http_request_read());
 *  - Expect: 100-continue: the 100 before the body, none before a 413;
 *  - pipelined: the answers to earlier requests go before the server waits
 *    for the rest of a later request's body;
 *  - a body past the limit (chunked) gets 413; one the handler did not read
 *    is dropped and the connection serves on;
 *  - a client that stops half-way gets 408 after body_timeout_ms; one that
 *    closes half-way leaves no descriptor behind.
 */
#include "http_test.h"

static atomic_int handled;

/* The body in pieces of at most 13 bytes, answered whole at the end; read()
 * keeps answering 0 after the end, and body() is refused after read(). */
static int pieces(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	size_t cap = 4096, len = 0;
	char *all = malloc(cap), *grown;
	const void *data;
	ssize_t n;
	int r;

	(void)ctx;
	atomic_fetch_add(&handled, 1);
	if (!all)
		return -ENOMEM;
	for (;;) {
		if (len + 13 > cap) {
			if (!(grown = realloc(all, cap *= 2))) {
				free(all);
				return -ENOMEM;
			}
			all = grown;
		}
		if ((n = giong_http_request_read(req, all + len, 13)) <= 0)
			break;
		gt_check_in_range(n, 1, 13);
		len += (size_t)n;
	}
	if (n < 0) {
		free(all);
		return (int)n;
	}
	gt_check_int_equal(giong_http_request_read(req, all, 13), 0);
	gt_check_int_equal(giong_http_request_body(req, &data), -EALREADY);
	r = giong_http_response_send(res, all, len);
	free(all);
	return r;
}

/* Answers without reading the body. */
static int ignore(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	(void)req;
	(void)ctx;
	atomic_fetch_add(&handled, 1);
	return giong_http_response_send(res, "ignored", 7);
}

/* Adds a field, then reads the body: a 100 owed goes out ahead of the
 * begun head. */
static int late_read(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	int r = giong_http_response_header(res, "X-Before", "1");

	return r ? r : ht_echo(req, res, ctx);
}

/* Streams a first piece (the head and it leave now), then reads the body and
 * writes it back: no 100 may follow the final head. */
static int stream_then_read(struct giong_http_request *req, struct giong_http_response *res,
			    void *ctx)
{
	const void *body;
	ssize_t n;
	int r;

	(void)ctx;
	if ((r = giong_http_response_write(res, "first;", 6)))
		return r;
	if ((n = giong_http_request_body(req, &body)) < 0)
		return (int)n;
	if ((r = giong_http_response_write(res, body, (size_t)n)))
		return r;
	return giong_http_response_end(res);
}

/* Reads the first 13 bytes only: the rest is dropped after it. */
static int first13(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	char buf[13];
	ssize_t n = giong_http_request_read(req, buf, sizeof(buf));

	(void)ctx;
	return n < 0 ? (int)n : giong_http_response_send(res, buf, (size_t)n);
}

static void setup(struct ht *h)
{
	ht_init(h);
	atomic_store(&handled, 0);
	assert_int_equal(giong_http_router_add(h->router, "POST", "/echo", ht_echo, &handled), 0);
	assert_int_equal(giong_http_router_add(h->router, "POST", "/pieces", pieces, NULL), 0);
	assert_int_equal(giong_http_router_add(h->router, "POST", "/ignore", ignore, NULL), 0);
	assert_int_equal(giong_http_router_add(h->router, "POST", "/late", late_read, NULL), 0);
	assert_int_equal(giong_http_router_add(h->router, "POST", "/first13", first13, NULL), 0);
	assert_int_equal(
		giong_http_router_add(h->router, "POST", "/stream_read", stream_then_read, NULL),
		0);
}

/* POST @body[0..n) to @path on @c, with Content-Length or chunked; the
 * response in @r. 0 or -errno. */
static int post(struct ht_conn *c, const char *path, const char *body, size_t n, bool chunked,
		struct ht_resp *r)
{
	static const size_t sizes[] = {1, 100, 4096, 7, 65536, 3, 100000};
	char head[256];
	int ret;

	if (chunked) {
		size_t cl = 0;
		char *enc = ht_chunked(body, n, sizes, sizeof(sizes) / sizeof(sizes[0]), &cl);

		if (!enc)
			return -ENOMEM;
		snprintf(head, sizeof(head),
			 "POST %s HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n", path);
		ret = ht_send_str(c->fd, head);
		if (!ret)
			ret = ht_send(c->fd, enc, cl);
		free(enc);
	} else {
		snprintf(head, sizeof(head),
			 "POST %s HTTP/1.1\r\nHost: t\r\nContent-Length: %zu\r\n\r\n", path, n);
		ret = ht_send_str(c->fd, head);
		if (!ret)
			ret = ht_send(c->fd, body, n);
	}
	return ret ? ret : ht_read_response(c, r, false);
}

/* POST @n pattern bytes and check they come back byte for byte. */
static void echo_check(struct ht_conn *c, const char *path, size_t n, bool chunked)
{
	char *body = malloc(n + 1);
	struct ht_resp r;

	if (!gt_check_non_null(body))
		return;
	ht_pattern(body, n, (unsigned)n);
	if (gt_check_int_equal(post(c, path, body, n, chunked, &r), 0)) {
		gt_check_int_equal(r.status, 200);
		if (!gt_check_int_equal(r.body_len, n) || !gt_check_memory_equal(r.body, body, n))
			gt_check_fail_msg("%s, %zu bytes, %s", path, n,
					  chunked ? "chunked" : "sized");
	}
	ht_resp_free(&r);
	free(body);
}

static const size_t echo_sizes[] = {0, 1, 4095, 4096, 4097, 65536, 1024 * 1024};

static void echo_client(struct ht *h)
{
	struct ht_conn c;

	if (!ht_open(h, &c))
		return;
	for (int chunked = 0; chunked < 2; chunked++) {
		for (size_t i = 0; i < sizeof(echo_sizes) / sizeof(echo_sizes[0]); i++)
			echo_check(&c, "/echo", echo_sizes[i], chunked);
		echo_check(&c, "/echo", 8u * 1024 * 1024, chunked);
		for (size_t i = 0; i < 6; i++)
			echo_check(&c, "/pieces", echo_sizes[i], chunked);
	}
	gt_check_int_equal(ht_closed_within(&c, 100), 0);
	ht_conn_close(&c);
}

static void test_echo(void **state)
{
	struct ht h;

	(void)state;
	setup(&h);
	h.limits.body = 16u * 1024 * 1024;
	ht_run(&h, echo_client);
	assert_int_equal(h.stats.accepted, 1);
	assert_int_equal(h.stats.responses[1], 2 * (7 + 1 + 6));
	assert_int_equal(atomic_load(&handled), 2 * (7 + 1 + 6));
}

/* ------------------------------------------------------- 100-continue */

static void expect_client(struct ht *h)
{
	char *big = calloc(1, 300 * 1024);
	struct ht_resp r;
	struct ht_conn c;

	if (!gt_check_non_null(big) || !ht_open(h, &c)) {
		free(big);
		return;
	}
	/* The head, the 100, the body, the response: sized, then chunked. */
	gt_check_int_equal(ht_request(&c,
				      "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n"
				      "Expect: 100-continue\r\n\r\n",
				      &r, false),
			   0);
	gt_check_int_equal(r.status, 100);
	gt_check_string_equal(r.head, "HTTP/1.1 100 Continue\r\n\r\n");
	ht_resp_free(&r);
	ht_expect(&c, "hello", 200, "hello");
	gt_check_int_equal(
		ht_request(&c,
			   "POST /pieces HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked"
			   "\r\nExpect: 100-Continue\r\n\r\n",
			   &r, false),
		0);
	gt_check_int_equal(r.status, 100);
	ht_resp_free(&r);
	ht_expect(&c, "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", 200, "abcde");
	/* A handler that does not read: no 100, and the body never comes, so
	 * the connection closes after the response. */
	gt_check_int_equal(ht_request(&c,
				      "POST /ignore HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n"
				      "Expect: 100-continue\r\n\r\n",
				      &r, false),
			   0);
	gt_check_int_equal(r.status, 200);
	gt_check_string_equal(r.body, "ignored");
	gt_check_true(ht_header(&r, "Connection", big, 64) && !strcmp(big, "close"));
	ht_resp_free(&r);
	gt_check_int_equal(ht_closed_within(&c, 1000), 1);
	ht_conn_close(&c);

	/* Over the limit: 413 at once, no 100, closed. */
	if (!ht_open(h, &c))
		return;
	gt_check_int_equal(
		ht_request(&c,
			   "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2000000\r\n"
			   "Expect: 100-continue\r\n\r\n",
			   &r, false),
		0);
	gt_check_int_equal(r.status, 413);
	ht_resp_free(&r);
	gt_check_int_equal(ht_closed_within(&c, 1000), 1);
	ht_conn_close(&c);

	/* Chunked past the limit: 413 once the chunk is seen, closed. */
	if (!ht_open(h, &c))
		return;
	memset(big, 'x', 300 * 1024);
	gt_check_int_equal(post(&c, "/echo", big, 300 * 1024, true, &r), 0);
	gt_check_int_equal(r.status, 413);
	ht_resp_free(&r);
	gt_check_int_equal(ht_closed_within(&c, 1000), 1);
	ht_conn_close(&c);

	/* Not read by the handler: a small body is dropped, the connection
	 * serves on; one past what is worth reading closes it. */
	if (!ht_open(h, &c))
		return;
	for (int chunked = 0; chunked < 2; chunked++) {
		gt_check_int_equal(post(&c, "/ignore", big, 1000, chunked, &r), 0);
		gt_check_int_equal(r.status, 200);
		gt_check_string_equal(r.body, "ignored");
		ht_resp_free(&r);
	}
	echo_check(&c, "/echo", 10, false);
	gt_check_int_equal(post(&c, "/ignore", big, 200 * 1024, false, &r), 0);
	gt_check_int_equal(r.status, 200);
	ht_resp_free(&r);
	echo_check(&c, "/echo", 10, true);
	ht_conn_close(&c);
	free(big);
}

/* The final head left before the handler read the body: no "100 Continue" after it
 * (a second status line in the middle of the response), the body read once the
 * client sends it anyway, the response whole. */
static void expect_after_head_client(struct ht *h)
{
	struct ht_resp r;
	struct ht_conn c;

	if (!ht_open(h, &c))
		return;
	gt_check_int_equal(ht_send_str(c.fd, "POST /stream_read HTTP/1.1\r\nHost: t\r\n"
					     "Content-Length: 5\r\nExpect: 100-continue\r\n\r\n"),
			   0);
	while (!strstr(c.buf ? c.buf : "", "first;") && ht_fill(&c) > 0)
		;
	gt_check_true(c.buf && !strncmp(c.buf, "HTTP/1.1 200 ", 13));
	gt_check_int_equal(ht_send_str(c.fd, "hello"), 0);
	gt_check_int_equal(ht_read_response(&c, &r, false), 0);
	gt_check_int_equal(r.status, 200);
	gt_check_string_equal(r.body, "first;hello");
	gt_check_true(!strstr(r.head, " 100 ") && !strstr(r.body, "HTTP/1.1"));
	ht_resp_free(&r);
	ht_conn_close(&c);
}

static void test_expect_after_head(void **state)
{
	struct ht h;

	(void)state;
	setup(&h);
	ht_run(&h, expect_after_head_client);
	assert_int_equal(h.stats.responses[0], 0); /* no 1xx counted */
	assert_int_equal(h.stats.responses[1], 1);
}

static void test_expect(void **state)
{
	struct ht h;

	(void)state;
	setup(&h);
	h.limits.body = 256 * 1024;
	ht_run(&h, expect_client);
	assert_int_equal(h.stats.responses[0], 2);
	assert_int_equal(h.stats.body_too_large, 2);
	assert_int_equal(h.stats.responses[3], 2);
}

/* Bodies pipelined with the heads around them in one write; 100-continue
 * behind a response still queued, and after a field was added; trailers. */
static void pipelined_client(struct ht *h)
{
	size_t n = 60000, len = 0;
	char *body = malloc(n), *all = malloc(4 * n), hd[128];
	struct ht_resp r;
	struct ht_conn c;

	if (!gt_check_non_null(body) || !gt_check_non_null(all) || !ht_open(h, &c))
		goto out;
	for (int i = 0; i < 3; i++) {
		len += (size_t)sprintf(
			all + len, "POST /%s HTTP/1.1\r\nHost: t\r\nContent-Length: %zu\r\n\r\n",
			i == 1 ? "ignore" : "echo", n - (size_t)i);
		ht_pattern(all + len, n - (size_t)i, (unsigned)i);
		len += n - (size_t)i;
	}
	len += (size_t)sprintf(all + len, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n"
					  "\r\nend");
	gt_check_int_equal(ht_send(c.fd, all, len), 0);
	for (int i = 0; i < 3; i++) {
		if (!gt_check_int_equal(ht_read_response(&c, &r, false), 0))
			break;
		ht_pattern(body, n - (size_t)i, (unsigned)i);
		if (i == 1) {
			gt_check_string_equal(r.body, "ignored");
		} else {
			gt_check_int_equal(r.body_len, n - (size_t)i);
			gt_check_memory_equal(r.body, body, n - (size_t)i);
		}
		ht_resp_free(&r);
	}
	gt_check_int_equal(ht_read_response(&c, &r, false), 0);
	gt_check_string_equal(r.body, "end");
	ht_resp_free(&r);

	/* A request answered (in the batch), then one expecting a 100, in one
	 * write: the 200, the 100, then after the body its response. */
	gt_check_int_equal(
		ht_send_str(c.fd, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nab"
				  "POST /late HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n"
				  "Expect: 100-continue\r\n\r\n"),
		0);
	gt_check_int_equal(ht_read_response(&c, &r, false), 0);
	gt_check_string_equal(r.body, "ab");
	ht_resp_free(&r);
	gt_check_int_equal(ht_read_response(&c, &r, false), 0);
	gt_check_int_equal(r.status, 100);
	ht_resp_free(&r);
	gt_check_int_equal(ht_request(&c, "xyz", &r, false), 0);
	gt_check_int_equal(r.status, 200);
	gt_check_string_equal(r.body, "xyz");
	gt_check_true(ht_header(&r, "X-Before", hd, sizeof(hd)) && !strcmp(hd, "1"));
	ht_resp_free(&r);

	/* A request answered, then one whose body comes in two writes, the second
	 * only after the first answer arrived (a client that waits for it): that
	 * answer must go before the server waits for the rest of the body. Before,
	 * it sat in the batch until the body deadline (30 s). */
	{
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		gt_check_int_equal(
			ht_send_str(c.fd, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n"
					  "\r\nhiPOST /echo HTTP/1.1\r\nHost: t\r\n"
					  "Content-Length: 10\r\n\r\nabc"),
			0);
		gt_check_int_equal(ht_read_response(&c, &r, false), 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		gt_check_string_equal(r.body, "hi");
		gt_check_true(t1.tv_sec - t0.tv_sec < 3); /* the body deadline is 30 s */
		ht_resp_free(&r);
		gt_check_int_equal(ht_send_str(c.fd, "defghij"), 0);
		gt_check_int_equal(ht_read_response(&c, &r, false), 0);
		gt_check_string_equal(r.body, "abcdefghij");
		ht_resp_free(&r);
	}

	/* Trailers are read and dropped; the connection serves on. */
	gt_check_int_equal(
		ht_request(&c,
			   "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n"
			   "\r\n2;ext=1\r\nhi\r\n0\r\nX-Trailer: 1\r\nX-Two: 2\r\n\r\n",
			   &r, false),
		0);
	gt_check_string_equal(r.body, "hi");
	ht_resp_free(&r);
	echo_check(&c, "/echo", 7, true);
	/* Read in part: the rest dropped, the connection serves on. */
	for (int chunked = 0; chunked < 2; chunked++) {
		ht_pattern(body, 5000, 1);
		gt_check_int_equal(post(&c, "/first13", body, 5000, chunked, &r), 0);
		gt_check_int_equal(r.body_len, chunked ? 1 : 13); /* the first chunk is 1 byte */
		gt_check_memory_equal(r.body, body, r.body_len);
		ht_resp_free(&r);
		echo_check(&c, "/echo", 100, chunked);
	}
	/* Expect in HTTP/1.0 is ignored: no 100, the body is read as sent. */
	ht_expect(&c,
		  "POST /echo HTTP/1.0\r\nConnection: keep-alive\r\n"
		  "Content-Length: 2\r\nExpect: 100-continue\r\n\r\nok",
		  200, "ok");
	gt_check_int_equal(ht_closed_within(&c, 100), 0);
	ht_conn_close(&c);
out:
	free(body);
	free(all);
}

static void test_pipelined(void **state)
{
	struct ht h;

	(void)state;
	setup(&h);
	ht_run(&h, pipelined_client);
	assert_int_equal(h.stats.requests, 8 + 4 + 1 + 2);
	assert_int_equal(h.stats.responses[0], 1);
	assert_int_equal(h.stats.responses[1], 8 + 4 + 1 + 2);
}

/* ------------------------------------------------------- slow and gone */

static void slow_client(struct ht *h)
{
	static const char *const heads[] = {
		"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n0123456789",
		"POST /pieces HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n64\r\n0123",
	};
	struct ht_resp r;
	struct ht_conn c;

	for (int i = 0; i < 2; i++) {
		uint64_t t0;

		if (!ht_open(h, &c))
			return;
		gt_check_int_equal(ht_send_str(c.fd, heads[i]), 0);
		t0 = giong_now_ms();
		gt_check_int_equal(ht_read_response(&c, &r, false), 0);
		gt_check_int_equal(r.status, 408);
		/* The 300 ms body timeout, not the 30 s default (room for a slow
		 * machine above). */
		gt_check_in_range(giong_now_ms() - t0, 200, 5000);
		ht_resp_free(&r);
		gt_check_int_equal(ht_closed_within(&c, 1000), 1);
		ht_conn_close(&c);
	}
	/* Gone half-way, each way of reading: the close follows the part of the
	 * body at once (the server reads it, then the end), with no pause a slow
	 * machine could stretch past the body timeout: a third one counted. */
	for (int i = 0; i < 2; i++) {
		if (!ht_open(h, &c))
			return;
		gt_check_int_equal(ht_send_str(c.fd, heads[i]), 0);
		ht_conn_close(&c);
	}
	/* Gone with the head only, and with a reset (at once too). */
	if (!ht_open(h, &c))
		return;
	gt_check_int_equal(ht_send_str(c.fd, heads[0]), 0);
	setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &(struct linger){1, 0}, sizeof(struct linger));
	ht_conn_close(&c);
	usleep(100 * 1000);
	/* The server still serves. */
	if (!ht_open(h, &c))
		return;
	echo_check(&c, "/echo", 5, false);
	ht_conn_close(&c);
}

static void test_slow(void **state)
{
	int fds = gt_count_fds();
	struct ht h;

	(void)state;
	setup(&h);
	h.limits.body_timeout_ms = 300;
	ht_run(&h, slow_client);
	assert_int_equal(h.stats.body_timeouts, 2);
	assert_int_equal(h.stats.accepted, 6);
	assert_int_equal(h.stats.open, 0);
	assert_int_equal(gt_count_fds(), fds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_echo),
		cmocka_unit_test(test_expect),
		cmocka_unit_test(test_expect_after_head),
		cmocka_unit_test(test_pipelined),
		cmocka_unit_test(test_slow),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
