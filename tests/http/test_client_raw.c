/* SPDX-License-Identifier: MIT */
/*
 * test_client_raw.c - the client against a plain socket server that sends
 * exact bytes (client_test.h): chunked bodies with extensions and trailers,
 * close-delimited bodies, interim 1xx responses, 204 / 304 / HEAD without a
 * body, malformed framing refused and the connection not reused, the one
 * retry of an idempotent request on a pooled connection the server closed
 * (and no retry of a POST), a server that never answers (-ETIMEDOUT within
 * the deadline, nothing pooled), a body cut short, the idle timeout and a
 * server closing a pooled connection; every descriptor given back.
 */
#include "client_test.h"

struct run {
	struct rs rs;
	struct giong_http_client_options opts;
	void (*scenario)(struct run *t, struct giong_http_client *cli);
	const char *const *replies; /* per connection, one reply per request, NULL ends */
	int replies_per_conn;
};

static void main_fn(unsigned worker, void *arg)
{
	struct run *t = arg;
	struct giong_http_client *cli;

	(void)worker;
	if (!gt_check_int_equal(giong_http_client_new(&t->opts, &cli), 0))
		return;
	t->scenario(t, cli);
	giong_http_client_close_idle(cli);
	/* The worker still holds its share: freed when it ends. */
	gt_check_int_equal(giong_http_client_free(cli), -EBUSY);
	*(struct giong_http_client **)t->rs.arg = cli;
}

/* Serve: for each request on connection i, send replies[i * per + k]; a NULL
 * reply closes the connection (after reading the request); "" sends
 * nothing and waits for the client to close; "~..." sends the rest and then
 * waits for the client to close, "!..." sends the rest and closes. */
static void serve_script(struct rs *rs, int fd, int i)
{
	struct run *t = (struct run *)rs; /* rs is the first member */
	char buf[65536];

	for (int k = 0; k < t->replies_per_conn; k++) {
		const char *r = t->replies[i * t->replies_per_conn + k];

		if (rs_read_request(fd, buf, sizeof(buf)) <= 0)
			return;
		if (!r)
			return;
		if (!*r) {
			rs_wait_close(fd);
			return;
		}
		rs_send(fd, r + (*r == '~' || *r == '!'));
		if (*r == '!')
			return;
		if (*r == '~') {
			rs_wait_close(fd);
			return;
		}
	}
}

static void run(struct run *t)
{
	struct giong_config cfg = gt_config(1);
	struct giong_http_client *cli = NULL;
	int fds = gt_count_fds();

	rs_start(&t->rs, serve_script, &cli);
	gt_run(&cfg, main_fn, t, NULL);
	rs_stop(&t->rs);
	assert_non_null(cli);
	assert_int_equal(giong_http_client_free(cli), 0);
	assert_int_equal(gt_count_fds(), fds);
}

static struct giong_http_client_stats stats(struct giong_http_client *cli)
{
	struct giong_http_client_stats s;

	giong_http_client_stats(cli, 0, &s);
	return s;
}

/* --- framing ------------------------------------------------------------------------------ */

static const char *const framing_replies[] = {
	/* connection 0: chunked with an extension and a trailer; interim 100 and 103
	 * before a 200; 204; 304 with a Content-Length; HEAD with one */
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	"5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n",
	"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
	"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 204 No Content\r\n\r\n",
	"HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\nETag: \"x\"\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n",
	/* connection 1: close-delimited */
	"!HTTP/1.1 200 OK\r\n\r\nto the end",
	NULL,
	NULL,
	NULL,
	NULL,
};

static void framing_scenario(struct run *t, struct giong_http_client *cli)
{
	struct giong_http_exchange *ex;
	char body[256], url[96];
	size_t len;
	const char *v;
	int pooled;

	snprintf(url, sizeof(url), "%s/x", t->rs.url);
	gt_check_int_equal(ct_exchange(cli, "GET", url, NULL, body, sizeof(body), &pooled), 200);
	gt_check_string_equal(body, "hello, world");
	gt_check_int_equal(pooled, 1);
	gt_check_int_equal(ct_exchange(cli, "GET", url, NULL, body, sizeof(body), &pooled), 200);
	gt_check_string_equal(body, "ok");
	gt_check_int_equal(pooled, 1);

	gt_check_int_equal(giong_http_exchange_begin(cli, "DELETE", url, &ex), 0);
	gt_check_int_equal(giong_http_exchange_response(ex), 204);
	gt_check_int_equal(giong_http_exchange_content_length(ex), 0);
	gt_check_int_equal(giong_http_exchange_body(ex, (const void **)&v), 0);
	gt_check_int_equal(giong_http_exchange_end(ex), 1);

	gt_check_int_equal(giong_http_exchange_begin(cli, "GET", url, &ex), 0);
	gt_check_int_equal(giong_http_exchange_header(ex, "If-None-Match", "\"x\""), 0);
	gt_check_int_equal(giong_http_exchange_header(ex, "Content-Length", "3"), -EINVAL);
	gt_check_int_equal(giong_http_exchange_response(ex), 304);
	v = giong_http_exchange_field(ex, "etag", &len);
	gt_check_true(v && len == 3 && !memcmp(v, "\"x\"", 3));
	gt_check_int_equal(giong_http_exchange_field_count(ex), 2);
	gt_check_int_equal(giong_http_exchange_read(ex, body, sizeof(body)), 0);
	gt_check_int_equal(giong_http_exchange_end(ex), 1);

	gt_check_int_equal(ct_exchange(cli, "HEAD", url, NULL, body, sizeof(body), &pooled), 200);
	gt_check_string_equal(body, "");
	gt_check_int_equal(pooled, 1);
	gt_check_int_equal(stats(cli).connects, 1);

	/* the pooled one is closed by the server (5 replies done): close-delimited
	 * next, on a new connection, and not pooled after */
	giong_sleep_ms(50);
	gt_check_int_equal(ct_exchange(cli, "GET", url, NULL, body, sizeof(body), &pooled), 200);
	gt_check_string_equal(body, "to the end");
	gt_check_int_equal(pooled, 0);
	gt_check_int_equal(stats(cli).connects, 2);
	gt_check_int_equal(stats(cli).retries, 0);
	gt_check_int_equal(stats(cli).idle, 0);
}

static void test_framing(void **state)
{
	struct run t = {
		.scenario = framing_scenario, .replies = framing_replies, .replies_per_conn = 5};

	(void)state;
	run(&t);
}

/* --- malformed responses: an error, and the connection not reused ------------------------- */

static const char *const bad_replies[] = {
	"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokXX0\r\n\r\n",
	"HTTP/1.1 200 OK\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA",
	"HTTP/2.0 200 OK\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
	"HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n",
	"HTTP/1.1 200 OK\r\nBad Name: x\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 600 What\r\nContent-Length: 0\r\n\r\n",
};

static void bad_scenario(struct run *t, struct giong_http_client *cli)
{
	char url[96], body[64];
	int pooled, n = (int)(sizeof(bad_replies) / sizeof(bad_replies[0]));

	snprintf(url, sizeof(url), "%s/bad", t->rs.url);
	for (int i = 0; i < n; i++) {
		int r = ct_exchange(cli, "GET", url, NULL, body, sizeof(body), &pooled);

		if (i == 4) { /* the body is fine; the bytes after it are not */
			gt_check_int_equal(r, 200);
		} else if (!gt_check_int_equal(r, -EBADMSG)) {
			fprintf(stderr, "reply %d\n", i);
		}
		gt_check_int_equal(pooled, 0);
	}
	gt_check_int_equal(stats(cli).connects, n);
	gt_check_int_equal(stats(cli).bad_responses, n - 1);
	gt_check_int_equal(stats(cli).idle, 0);
}

static void test_malformed(void **state)
{
	struct run t = {.scenario = bad_scenario, .replies = bad_replies, .replies_per_conn = 1};

	(void)state;
	run(&t);
}

/* --- retry ---------------------------------------------------------------------------------- */

static const char *const retry_replies[] = {
	/* connection 0: one answer, then the next request is read and dropped */
	"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na",
	NULL,
	/* connection 1: the retried GET, then the POST's request dropped */
	"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb",
	NULL,
	NULL,
	NULL,
};

static void retry_scenario(struct run *t, struct giong_http_client *cli)
{
	char url[96], body[64];
	int pooled;

	snprintf(url, sizeof(url), "%s/r", t->rs.url);
	gt_check_int_equal(ct_exchange(cli, "GET", url, NULL, body, sizeof(body), &pooled), 200);
	gt_check_string_equal(body, "a");
	/* the server reads this one and closes: sent again, once, on a new connection */
	gt_check_int_equal(ct_exchange(cli, "GET", url, NULL, body, sizeof(body), &pooled), 200);
	gt_check_string_equal(body, "b");
	gt_check_int_equal(stats(cli).retries, 1);
	gt_check_int_equal(stats(cli).connects, 2);
	/* a POST is not idempotent: its failure is the caller's */
	gt_check_int_equal(ct_exchange(cli, "POST", url, "x=1", body, sizeof(body), &pooled),
			   -ECONNRESET);
	gt_check_int_equal(stats(cli).retries, 1);
	gt_check_int_equal(stats(cli).connects, 2);
}

static void test_retry(void **state)
{
	struct run t = {
		.scenario = retry_scenario, .replies = retry_replies, .replies_per_conn = 2};

	(void)state;
	run(&t);
}

/* --- deadlines ------------------------------------------------------------------------------- */

static const char *const slow_replies[] = {
	"",                                                  /* never answers */
	"~HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", /* then stops */
};

static void slow_client(struct run *t, struct giong_http_client *cli)
{
	char url[96], body[64];
	uint64_t t0 = giong_now_ms();
	int pooled;

	snprintf(url, sizeof(url), "%s/slow", t->rs.url);
	gt_check_int_equal(ct_exchange(cli, "GET", url, NULL, body, sizeof(body), &pooled),
			   -ETIMEDOUT);
	gt_check_in_range(giong_now_ms() - t0, 190, 1500);
	gt_check_int_equal(pooled, 0);
	t0 = giong_now_ms();
	gt_check_int_equal(ct_exchange(cli, "GET", url, NULL, body, sizeof(body), &pooled),
			   -ETIMEDOUT);
	gt_check_in_range(giong_now_ms() - t0, 290, 1500);
	gt_check_int_equal(pooled, 0);
	gt_check_int_equal(stats(cli).timeouts, 2);
	gt_check_int_equal(stats(cli).idle, 0);
}

static void test_deadlines(void **state)
{
	struct run t = {.scenario = slow_client,
			.replies = slow_replies,
			.replies_per_conn = 1,
			.opts = {.head_timeout_ms = 200, .body_timeout_ms = 300}};

	(void)state;
	run(&t);
}

/* --- idle connections -------------------------------------------------------------------------- */

static const char *const idle_replies[] = {
	"!HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n1", NULL, /* closed while pooled */
	"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n2",  "",   /* kept open */
	"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n3",  "",
};

static void idle_scenario(struct run *t, struct giong_http_client *cli)
{
	char url[96], body[64];
	int pooled;

	snprintf(url, sizeof(url), "%s/i", t->rs.url);
	gt_check_int_equal(ct_exchange(cli, "GET", url, NULL, body, sizeof(body), &pooled), 200);
	gt_check_int_equal(pooled, 1);
	/* The server closes it: the pool sees the end at once and closes it too. */
	giong_sleep_ms(50);
	gt_check_int_equal(stats(cli).idle, 0);
	gt_check_int_equal(stats(cli).idle_closed, 1);
	gt_check_int_equal(ct_exchange(cli, "GET", url, NULL, body, sizeof(body), &pooled), 200);
	gt_check_string_equal(body, "2");
	gt_check_int_equal(stats(cli).retries, 0);
	gt_check_int_equal(stats(cli).idle, 1);
	/* The idle timeout (150 ms) closes the pooled one. */
	giong_sleep_ms(400);
	gt_check_int_equal(stats(cli).idle, 0);
	gt_check_int_equal(stats(cli).idle_closed, 2);
	gt_check_int_equal(ct_exchange(cli, "GET", url, NULL, body, sizeof(body), &pooled), 200);
	gt_check_string_equal(body, "3");
	gt_check_int_equal(stats(cli).connects, 3);
}

static void test_idle(void **state)
{
	struct run t = {.scenario = idle_scenario,
			.replies = idle_replies,
			.replies_per_conn = 2,
			.opts = {.idle_timeout_ms = 150}};

	(void)state;
	run(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_framing), cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_retry),   cmocka_unit_test(test_deadlines),
		cmocka_unit_test(test_idle),
	};

	gt_require_uring();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
