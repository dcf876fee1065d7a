/* SPDX-License-Identifier: MIT */
/*
 * test_client_raw.c - the client against a plain socket server that sends
 * exact bytes (client_test.h): chunked bodies with extensions and trailers,
 * close-delimited bodies, interim 1xx responses, 204 / 304 / HEAD without a
 * body, malformed framing refused and the connection not reused, the one
 * retry of an idempotent request on a pooled connection the server closed
 * (and no retry of a POST), a server that never answers (-ETIMEDOUT within
 * the deadline, nothing pooled), a body cut short, the idle timeout and a
 * server closing a pooled connection; pipelines (a server closing after the
 * 3rd of 8 responses, a malformed 2nd response, HEAD between GETs, the
 * misuses refused, a pooled connection found closed: sent again once);
 * every descriptor given back.
 */
#include "client_test.h"

struct run {
	struct rs rs;
	struct giong_http_client_options opts;
	void (*scenario)(struct run *t, struct giong_http_client *cli);
	const char *const *replies; /* per connection, one reply per request, NULL ends */
	int replies_per_conn;
	rs_serve_fn serve; /* NULL: serve_script() */
	/* Pipelines (serve_pipe()): the requests each connection reads first,
	 * what it then sends in one write, and how many reads the requests took. */
	int pipe_requests;
	const char *pipe_reply;
	bool pipe_close; /* close after the reply (else wait for the client's close) */
	atomic_int pipe_reads;
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

	rs_start(&t->rs, t->serve ? t->serve : serve_script, &cli);
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

/* --- pipelines ----------------------------------------------------------------------------- */

/* Serve a pipeline: read pipe_requests requests (no bodies), however many
 * reads they take, then send pipe_reply in one write; close or wait. */
static void serve_pipe(struct rs *rs, int fd, int i)
{
	struct run *t = (struct run *)rs;
	char buf[65536];
	size_t len = 0;
	int seen = 0, reads = 0;

	(void)i;
	buf[0] = '\0';
	while (seen < t->pipe_requests) {
		ssize_t n = recv(fd, buf + len, sizeof(buf) - 1 - len, 0);

		if (n <= 0)
			return;
		reads++;
		len += (size_t)n;
		buf[len] = '\0';
		seen = 0;
		for (const char *p = buf; (p = strstr(p, "\r\n\r\n")); p += 4)
			seen++;
	}
	atomic_store(&t->pipe_reads, reads);
	rs_send(fd, t->pipe_reply);
	if (!t->pipe_close)
		rs_wait_close(fd);
}

#define OK3(b) "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n" b

/* Begin @n GETs of @url (HEAD for the indexes in @heads) into @pl. */
static void pipe_fill(struct giong_http_client *cli, struct giong_http_pipeline *pl,
		      const char *url, int n, unsigned heads)
{
	for (int i = 0; i < n; i++) {
		struct giong_http_exchange *ex;

		gt_check_int_equal(
			giong_http_exchange_begin(cli, (heads >> i) & 1 ? "HEAD" : "GET", url, &ex),
			0);
		gt_check_int_equal(giong_http_pipeline_add(pl, ex, NULL, 0), 0);
	}
}

static void pipe_close_scenario(struct run *t, struct giong_http_client *cli)
{
	struct giong_http_pipeline *pl;
	struct giong_http_exchange *ex;
	const void *data;
	char url[96];
	int r;

	snprintf(url, sizeof(url), "%s/p", t->rs.url);
	gt_check_int_equal(giong_http_pipeline_begin(cli, 0, &pl), 0);
	pipe_fill(cli, pl, url, 8, 0);
	for (int i = 0; i < 8; i++) {
		r = giong_http_pipeline_next(pl, &ex);
		if (!gt_check_true(ex != NULL))
			break;
		if (i < 3) {
			gt_check_int_equal(r, 200);
			gt_check_int_equal(giong_http_exchange_body(ex, &data), 3);
			gt_check_memory_equal(data, i == 0 ? "one" : i == 1 ? "two" : "six", 3);
			gt_check_int_equal(giong_http_exchange_end(ex), 1); /* carries on */
		} else {
			gt_check_int_equal(r, -ECONNRESET);
			gt_check_int_equal(giong_http_exchange_status(ex), -ECONNRESET);
			gt_check_int_equal(giong_http_exchange_body(ex, &data), -ECONNRESET);
			gt_check_int_equal(giong_http_exchange_end(ex), 0);
		}
	}
	gt_check_int_equal(giong_http_pipeline_next(pl, &ex), 0);
	gt_check_null(ex);
	gt_check_int_equal(giong_http_pipeline_end(pl), 0);
	gt_check_int_equal(atomic_load(&t->pipe_reads), 1); /* the 8 requests in one write */
	gt_check_int_equal(stats(cli).connects, 1);
	gt_check_int_equal(stats(cli).retries, 0);
	gt_check_int_equal(stats(cli).idle, 0);
}

static void test_pipeline_close(void **state)
{
	struct run t = {.scenario = pipe_close_scenario,
			.serve = serve_pipe,
			.pipe_requests = 8,
			.pipe_reply = OK3("one") OK3("two") OK3("six"),
			.pipe_close = true};

	(void)state;
	run(&t);
}

static void pipe_bad_scenario(struct run *t, struct giong_http_client *cli)
{
	struct giong_http_pipeline *pl;
	struct giong_http_exchange *ex;
	const void *data;
	char url[96];

	snprintf(url, sizeof(url), "%s/p", t->rs.url);
	gt_check_int_equal(giong_http_pipeline_begin(cli, 0, &pl), 0);
	pipe_fill(cli, pl, url, 4, 0);
	gt_check_int_equal(giong_http_pipeline_next(pl, &ex), 200);
	gt_check_int_equal(giong_http_exchange_body(ex, &data), 3);
	gt_check_memory_equal(data, "one", 3);
	gt_check_int_equal(giong_http_exchange_end(ex), 1);
	gt_check_int_equal(giong_http_pipeline_next(pl, &ex), -EBADMSG);
	gt_check_int_equal(giong_http_exchange_end(ex), 0);
	/* The 3rd response is well formed, but after a bad one nothing is trusted. */
	for (int i = 2; i < 4; i++) {
		gt_check_int_equal(giong_http_pipeline_next(pl, &ex), -ECONNABORTED);
		gt_check_int_equal(giong_http_exchange_end(ex), 0);
	}
	gt_check_int_equal(giong_http_pipeline_end(pl), 0);
	gt_check_int_equal(stats(cli).bad_responses, 1);
	gt_check_int_equal(stats(cli).idle, 0);
}

static void test_pipeline_malformed(void **state)
{
	struct run t = {
		.scenario = pipe_bad_scenario,
		.serve = serve_pipe,
		.pipe_requests = 4,
		.pipe_reply = OK3("one") "HTTP/1.1 200 OK\nContent-Length: 3\r\n\r\ntwo" OK3("six")
			OK3("ten")};

	(void)state;
	run(&t);
}

static void pipe_head_scenario(struct run *t, struct giong_http_client *cli)
{
	static const char *const want[] = {"one", "", "two", "", "six"};
	struct giong_http_pipeline *pl, *other;
	struct giong_http_exchange *ex, *post;
	const void *data;
	char url[96];

	snprintf(url, sizeof(url), "%s/p", t->rs.url);
	gt_check_int_equal(giong_http_pipeline_begin(cli, 0, &pl), 0);
	/* Misuses, refused and left as they were. */
	gt_check_int_equal(giong_http_pipeline_begin(cli, 1u << 7, &other), -EINVAL);
	gt_check_int_equal(giong_http_exchange_begin(cli, "POST", url, &post), 0);
	gt_check_int_equal(giong_http_pipeline_add(pl, post, "x", 1), -EINVAL);
	gt_check_int_equal(giong_http_pipeline_begin(cli, GIONG_HTTP_PIPELINE_ANY_METHOD, &other),
			   0);
	gt_check_int_equal(giong_http_pipeline_add(other, post, "x", 1), 0);
	gt_check_int_equal(giong_http_exchange_end(post), -EBUSY); /* queued: the pipeline's */
	gt_check_int_equal(giong_http_exchange_response(post), -EBUSY);
	gt_check_int_equal(giong_http_pipeline_end(other), 0); /* ends it, unsent */
	gt_check_int_equal(giong_http_exchange_begin(cli, "GET", "http://127.0.0.2:1/", &ex), 0);
	pipe_fill(cli, pl, url, 5, 0x0a); /* GET HEAD GET HEAD GET */
	gt_check_int_equal(giong_http_pipeline_add(pl, ex, NULL, 0), -EXDEV);
	gt_check_int_equal(giong_http_exchange_end(ex), 0);
	gt_check_int_equal(giong_http_pipeline_add(pl, NULL, NULL, 0), -EINVAL);
	gt_check_int_equal(giong_http_pipeline_send(NULL), -EINVAL);
	gt_check_int_equal(giong_http_pipeline_next(NULL, &ex), -EINVAL);

	gt_check_int_equal(giong_http_pipeline_send(pl), 0);
	gt_check_int_equal(giong_http_pipeline_send(pl), -EALREADY);
	for (int i = 0; i < 5; i++) {
		gt_check_int_equal(giong_http_pipeline_next(pl, &ex), 200);
		if (i == 0) {
			struct giong_http_exchange *again;

			gt_check_int_equal(giong_http_pipeline_next(pl, &again), -EBUSY);
			gt_check_null(again);
			gt_check_int_equal(giong_http_pipeline_end(pl), -EBUSY);
		}
		gt_check_int_equal(giong_http_exchange_content_length(ex), i & 1 ? 0 : 3);
		gt_check_int_equal(giong_http_exchange_body(ex, &data), (ssize_t)strlen(want[i]));
		gt_check_memory_equal(data, want[i], strlen(want[i]));
		gt_check_int_equal(giong_http_exchange_end(ex), 1); /* the last: pooled */
	}
	gt_check_int_equal(giong_http_pipeline_next(pl, &ex), 0);
	gt_check_int_equal(giong_http_pipeline_end(pl), 1);
	gt_check_int_equal(stats(cli).idle, 1);
	gt_check_int_equal(stats(cli).connects, 1);
	gt_check_int_equal(atomic_load(&t->pipe_reads), 1);
}

static void test_pipeline_head(void **state)
{
	struct run t = {.scenario = pipe_head_scenario,
			.serve = serve_pipe,
			.pipe_requests = 5,
			/* a HEAD's Content-Length is the GET's: no body follows it */
			.pipe_reply = OK3("one") "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n" OK3(
				"two") "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n" OK3("six")};

	(void)state;
	run(&t);
}

/* Connection 0 answers one request, then reads the pipeline's and closes unanswered;
 * connection 1 serves the pipeline sent again. */
static void serve_pipe_retry(struct rs *rs, int fd, int i)
{
	char buf[4096];

	if (i > 0) {
		serve_pipe(rs, fd, i);
		return;
	}
	if (rs_read_request(fd, buf, sizeof(buf)) <= 0)
		return;
	rs_send(fd, OK3("pre"));
	(void)!recv(fd, buf, sizeof(buf), 0);
}

static void pipe_retry_scenario(struct run *t, struct giong_http_client *cli)
{
	static const char *const want[] = {"one", "two", "six"};
	struct giong_http_pipeline *pl;
	struct giong_http_exchange *ex;
	const void *data;
	char url[96], body[16];
	int pooled;

	snprintf(url, sizeof(url), "%s/p", t->rs.url);
	gt_check_int_equal(ct_exchange(cli, "GET", url, NULL, body, sizeof(body), &pooled), 200);
	gt_check_int_equal(pooled, 1);
	gt_check_int_equal(giong_http_pipeline_begin(cli, 0, &pl), 0);
	pipe_fill(cli, pl, url, 3, 0);
	/* Written on the pooled connection, which the server then closes: all 3 go
	 * again on a new one, once. */
	for (int i = 0; i < 3; i++) {
		gt_check_int_equal(giong_http_pipeline_next(pl, &ex), 200);
		gt_check_int_equal(giong_http_exchange_body(ex, &data), 3);
		gt_check_memory_equal(data, want[i], 3);
		gt_check_int_equal(giong_http_exchange_end(ex), 1);
	}
	gt_check_int_equal(giong_http_pipeline_end(pl), 1);
	gt_check_int_equal(stats(cli).retries, 3);
	gt_check_int_equal(stats(cli).connects, 2);
	gt_check_int_equal(stats(cli).idle, 1);
}

static void test_pipeline_retry(void **state)
{
	struct run t = {.scenario = pipe_retry_scenario,
			.serve = serve_pipe_retry,
			.pipe_requests = 3,
			.pipe_reply = OK3("one") OK3("two") OK3("six")};

	(void)state;
	run(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_framing),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_retry),
		cmocka_unit_test(test_deadlines),
		cmocka_unit_test(test_idle),
		cmocka_unit_test(test_pipeline_close),
		cmocka_unit_test(test_pipeline_malformed),
		cmocka_unit_test(test_pipeline_head),
		cmocka_unit_test(test_pipeline_retry),
	};

	gt_require_uring();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
