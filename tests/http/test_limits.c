/* SPDX-License-Identifier: MIT */
/*
 * test_limits.c - the limits end to end (http_test.h):
 *  - the head deadline: a head trickled one line every 200 ms gets 408 and
 *    a close at head_timeout_ms, not once it stops coming;
 *  - the idle deadline: a keep-alive connection left alone after a request
 *    is closed at idle_timeout_ms, and counted;
 *  - the request line, the head and the field count each accepted exactly at
 *    their limit and refused one past it (414, 431, 431);
 *  - the server's counters after each run.
 */
#include "http_test.h"

static int any(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	(void)req;
	(void)ctx;
	return giong_http_response_send(res, "ok", 2);
}

static void setup(struct ht *h)
{
	ht_init(h);
	assert_int_equal(giong_http_router_add(h->router, "GET", "/*", any, NULL), 0);
}

/* ------------------------------------------------------- deadlines */

static void head_deadline_client(struct ht *h)
{
	struct pollfd p;
	struct ht_resp r;
	struct ht_conn c;
	uint64_t t0;
	int lines = 0;

	if (!ht_open(h, &c))
		return;
	t0 = giong_now_ms();
	gt_check_int_equal(ht_send_str(c.fd, "GET / HTTP/1.1\r\nHost: t\r\n"), 0);
	/* A line every 200 ms, for 3 s at most, until the server answers. */
	for (p = (struct pollfd){.fd = c.fd, .events = POLLIN}; lines < 15; lines++) {
		if (poll(&p, 1, 200) != 0)
			break;
		if (ht_send_str(c.fd, "X-Slow: 1\r\n"))
			break;
	}
	/* At 500 ms from the first line, not 500 ms after the last: a deadline
	 * that each line put off would answer after the 15th, at 3.5 s. The
	 * upper bounds leave room for a slow machine (2-10x). */
	gt_check_in_range(lines, 1, 12);
	gt_check_int_equal(ht_read_response(&c, &r, false), 0);
	gt_check_int_equal(r.status, 408);
	gt_check_in_range(giong_now_ms() - t0, 400, 2500);
	ht_resp_free(&r);
	gt_check_int_equal(ht_closed_within(&c, 2000), 1);
	gt_check_in_range(giong_now_ms() - t0, 400, 3000);
	ht_conn_close(&c);
}

static void test_head_deadline(void **state)
{
	struct ht h;

	(void)state;
	setup(&h);
	h.limits.head_timeout_ms = 500;
	ht_run(&h, head_deadline_client);
	assert_int_equal(h.stats.head_timeouts, 1);
	assert_int_equal(h.stats.responses[3], 1);
	assert_int_equal(h.stats.refused, 0);
	assert_int_equal(h.stats.idle_timeouts, 0);
}

/* The idle deadline, and the keep-alive requests that put it off: KEEPS of
 * them KEEP_EVERY ms apart span more than IDLE_MS (the deadline would pass
 * if they did not put it off), and each round trip has IDLE_MS - KEEP_EVERY
 * to land (a slow machine). */
#define IDLE_MS 1000
#define KEEP_EVERY 300
#define KEEPS 6

static void idle_client(struct ht *h)
{
	struct ht_resp r;
	struct ht_conn c, quiet;
	uint64_t t0;

	/* One that never sent a byte is closed at the idle deadline too. */
	if (!ht_open(h, &quiet) || !ht_open(h, &c))
		return;
	gt_check_int_equal(ht_request(&c, "GET / HTTP/1.1\r\nHost: t\r\n\r\n", &r, false), 0);
	gt_check_int_equal(r.status, 200);
	ht_resp_free(&r);
	t0 = giong_now_ms();
	/* Kept past a request... */
	gt_check_int_equal(ht_closed_within(&c, IDLE_MS / 2), 0);
	/* ...and closed, without a response, at about IDLE_MS: from when the
	 * server parked it, which is before t0 by however long the response took
	 * to come (under valgrind once: 51 ms). Open for 700 at least. */
	gt_check_int_equal(ht_closed_within(&c, 3000), 1);
	gt_check_in_range(giong_now_ms() - t0, IDLE_MS - 300, IDLE_MS + 2000);
	gt_check_int_equal(ht_closed_within(&quiet, 3000), 1);
	ht_conn_close(&c);
	ht_conn_close(&quiet);

	/* A request before the deadline keeps it open. */
	if (!ht_open(h, &c))
		return;
	for (int i = 0; i < KEEPS; i++) {
		gt_check_int_equal(ht_closed_within(&c, KEEP_EVERY), 0);
		gt_check_int_equal(ht_request(&c, "GET / HTTP/1.1\r\nHost: t\r\n\r\n", &r, false),
				   0);
		gt_check_int_equal(r.status, 200);
		ht_resp_free(&r);
	}
	gt_check_int_equal(ht_closed_within(&c, IDLE_MS + 2000), 1);
	ht_conn_close(&c);
}

static void test_idle(void **state)
{
	struct ht h;

	(void)state;
	setup(&h);
	h.limits.idle_timeout_ms = IDLE_MS;
	ht_run(&h, idle_client);
	assert_int_equal(h.stats.idle_timeouts, 3);
	assert_int_equal(h.stats.requests, 1 + KEEPS);
	assert_int_equal(h.stats.responses[1], 1 + KEEPS);
	assert_int_equal(h.stats.head_timeouts, 0);
	assert_int_equal(h.stats.open, 0);
}

/* ------------------------------------------------------- sizes */

#define LINE_LIMIT 64
#define HEAD_LIMIT 256
#define FIELDS_LIMIT 4

/* A request line of exactly @n bytes (CRLF excluded) and Host into @buf. */
static void request_line(char *buf, size_t n)
{
	size_t pad = n - strlen("GET / HTTP/1.1");

	sprintf(buf, "GET /%.*s HTTP/1.1\r\nHost: t\r\n\r\n", (int)pad,
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
}

/* A head of exactly @n bytes, final CRLF included, into @buf. */
static void head_of(char *buf, size_t n)
{
	static const char pre[] = "GET / HTTP/1.1\r\nHost: t\r\nX-Pad: ";
	size_t pad = n - (sizeof(pre) - 1) - 4;

	memcpy(buf, pre, sizeof(pre) - 1);
	memset(buf + sizeof(pre) - 1, 'p', pad);
	strcpy(buf + sizeof(pre) - 1 + pad, "\r\n\r\n");
}

/* A head with @n fields (Host first). */
static void fields_of(char *buf, int n)
{
	int k = sprintf(buf, "GET / HTTP/1.1\r\nHost: t\r\n");

	for (int i = 1; i < n; i++)
		k += sprintf(buf + k, "X-%d: %d\r\n", i, i);
	strcpy(buf + k, "\r\n");
}

/* @req on a fresh connection: @status, and closed or kept as it should. */
static void expect_status(struct ht *h, const char *req, int status, const char *what)
{
	struct ht_resp r;
	int closed = ht_exchange(h, req, strlen(req), &r, false);

	if (!gt_check_int_equal(r.status, status) ||
	    !gt_check_int_equal(closed, status == 200 ? 0 : 1))
		gt_check_fail_msg("%s", what);
	ht_resp_free(&r);
}

static void sizes_client(struct ht *h)
{
	char buf[1024];

	gt_check_int_equal(LINE_LIMIT, h->limits.request_line);
	request_line(buf, LINE_LIMIT);
	expect_status(h, buf, 200, "request line at the limit");
	request_line(buf, LINE_LIMIT + 1);
	expect_status(h, buf, 414, "request line one past");
	head_of(buf, HEAD_LIMIT);
	gt_check_int_equal(strlen(buf), HEAD_LIMIT);
	expect_status(h, buf, 200, "head at the limit");
	head_of(buf, HEAD_LIMIT + 1);
	expect_status(h, buf, 431, "head one past");
	/* Leading empty lines count in the head. */
	head_of(buf + 2, HEAD_LIMIT - 2);
	memcpy(buf, "\r\n", 2);
	expect_status(h, buf, 200, "head with an empty line, at the limit");
	head_of(buf + 2, HEAD_LIMIT - 1);
	memcpy(buf, "\r\n", 2);
	expect_status(h, buf, 431, "head with an empty line, one past");
	fields_of(buf, FIELDS_LIMIT);
	expect_status(h, buf, 200, "fields at the limit");
	fields_of(buf, FIELDS_LIMIT + 1);
	expect_status(h, buf, 431, "one field past");
}

static void test_sizes(void **state)
{
	struct ht h;

	(void)state;
	setup(&h);
	h.limits.request_line = LINE_LIMIT;
	h.limits.head = HEAD_LIMIT;
	h.limits.fields = FIELDS_LIMIT;
	ht_run(&h, sizes_client);
	assert_int_equal(h.stats.requests, 8);
	assert_int_equal(h.stats.responses[1], 4);
	assert_int_equal(h.stats.responses[3], 4);
	assert_int_equal(h.stats.refused, 4);
	assert_int_equal(h.stats.accepted, 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_head_deadline),
		cmocka_unit_test(test_idle),
		cmocka_unit_test(test_sizes),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
