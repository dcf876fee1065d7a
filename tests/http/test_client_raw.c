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
 * Expect: 100-continue (a 100, a 103 then a 100, a 417 and a 401 at once
 * with no byte of the body sent, a server that never answers 100, the
 * task's deadline during the wait, the retry, no pipeline); the connect
 * deadline, on a TCP connect that hangs (a full accept queue) and on a
 * connector that never ends, with another task running meanwhile; every
 * descriptor given back.
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
	/* Expect: 100-continue (serve_expect()): what to do with each request,
	 * replies_per_conn per connection, and what was seen of it. */
	const int *xmodes;
	const char *const *xfinals; /* X_DENY's answer, per connection */
	struct xreq {
		bool expect;      /* its head had Expect: 100-continue */
		int body;         /* body bytes received (X_DENY, X_HOLD: until the close) */
		int wait_ms;      /* from the end of its head to its body's first byte */
		atomic_bool done; /* the server is done with it */
	} xr[16];
	/* The connect deadline: a port whose connects hang, and the connector's calls. */
	int hang_port;
	atomic_int connector_calls;
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

/* --- the exchange's calls in each of its states --------------------------------------------- */

/* Every request is answered with its own head as the body, and fields to
 * read back in order; "?close" in the target closes without an answer. */
static void serve_echo_head(struct rs *rs, int fd, int i)
{
	char buf[65536], reply[66000];
	ssize_t n;

	(void)rs;
	(void)i;
	while ((n = rs_read_request(fd, buf, sizeof(buf))) > 0) {
		char *end = strstr(buf, "\r\n\r\n");

		if (strstr(buf, "?close"))
			return;
		snprintf(
			reply, sizeof(reply),
			"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nX-One: 1\r\nX-Two: two\r\n\r\n%.*s",
			(int)(end + 4 - buf), (int)(end + 4 - buf), buf);
		rs_send(fd, reply);
	}
}

static void api_scenario(struct run *t, struct giong_http_client *cli)
{
	struct giong_http_exchange *ex, *out = (struct giong_http_exchange *)1;
	const char *name, *value;
	size_t nl, vl;
	char url[96], body[4096], *big;
	int r;

	/* begin() refuses what is no request. */
	snprintf(url, sizeof(url), "%s/a", t->rs.url);
	gt_check_int_equal(giong_http_exchange_begin(cli, "GET", url, NULL), -EINVAL);
	gt_check_int_equal(giong_http_exchange_begin(cli, "G T", url, &out), -EINVAL);
	gt_check_null(out);
	gt_check_int_equal(giong_http_exchange_begin(cli, "CONNECT", url, &out), -EINVAL);
	gt_check_int_equal(giong_http_exchange_begin(cli, "GET", "https://127.0.0.1/", &out),
			   -EPROTONOSUPPORT); /* no connector for TLS */
	gt_check_true(giong_http_exchange_begin(cli, "GET", "ftp://x/", &out) < 0);
	gt_check_null(out);

	/* A query with no path asks for "/?q"; Connection: close (no_keep_alive). */
	snprintf(url, sizeof(url), "%s?q=1", t->rs.url);
	gt_check_int_equal(giong_http_exchange_begin(cli, "GET", url, &ex), 0);
	/* Before the response: nothing to read yet. */
	gt_check_int_equal(giong_http_exchange_status(ex), -EAGAIN);
	gt_check_int_equal(giong_http_exchange_field_count(ex), -EAGAIN);
	gt_check_int_equal(giong_http_exchange_field_at(ex, 0, &name, &nl, &value, &vl), -EAGAIN);
	gt_check_int_equal(giong_http_exchange_content_length(ex), -EAGAIN);
	gt_check_null(giong_http_exchange_field(ex, "x-one", NULL));
	/* Fields: no NULL, and no head over 64 KiB. */
	gt_check_int_equal(giong_http_exchange_header(ex, NULL, "v"), -EINVAL);
	gt_check_int_equal(giong_http_exchange_header_n(ex, "X", 1, NULL, 1), -EINVAL);
	big = malloc(70000);
	memset(big, 'v', 70000);
	gt_check_int_equal(giong_http_exchange_header_n(ex, "X-Big", 5, big, 70000), -E2BIG);
	free(big);
	gt_check_int_equal(giong_http_exchange_header(ex, "X-Small", "s"), 0);
	gt_check_int_equal(giong_http_exchange_send(ex, NULL, 1), -EINVAL);
	gt_check_int_equal(giong_http_exchange_write(ex, NULL, 1), -EINVAL);
	gt_check_int_equal(giong_http_exchange_send(ex, NULL, 0), 0);
	/* Sent: too late for more of the request. */
	gt_check_int_equal(giong_http_exchange_send(ex, "x", 1), -EALREADY);
	gt_check_int_equal(giong_http_exchange_write(ex, "x", 1), -EALREADY);
	gt_check_int_equal(giong_http_exchange_header(ex, "X-Late", "l"), -EALREADY);
	gt_check_int_equal(giong_http_exchange_response(ex), 200);
	gt_check_int_equal(giong_http_exchange_response(ex), 200); /* asked again: the same */
	gt_check_int_equal(giong_http_exchange_status(ex), 200);
	/* The fields in the order sent. */
	gt_check_int_equal(giong_http_exchange_field_count(ex), 3);
	gt_check_int_equal(giong_http_exchange_field_at(ex, 1, &name, &nl, &value, &vl), 0);
	gt_check_true(nl == 5 && !memcmp(name, "X-One", 5) && vl == 1 && *value == '1');
	gt_check_int_equal(giong_http_exchange_field_at(ex, 2, &name, &nl, &value, &vl), 0);
	gt_check_true(nl == 5 && !memcmp(name, "X-Two", 5) && vl == 3 && !memcmp(value, "two", 3));
	gt_check_int_equal(giong_http_exchange_field_at(ex, 3, &name, &nl, &value, &vl), -ENOENT);
	gt_check_int_equal(giong_http_exchange_field_at(ex, 0, NULL, &nl, &value, &vl), -EINVAL);
	r = (int)giong_http_exchange_read(ex, body, sizeof(body) - 1);
	gt_check_true(r > 0);
	body[r > 0 ? r : 0] = '\0';
	gt_check_true(!strncmp(body, "GET /?q=1 HTTP/1.1\r\nHost: 127.0.0.1:", 36));
	gt_check_non_null(strstr(body, "\r\nConnection: close\r\n"));
	gt_check_non_null(strstr(body, "\r\nX-Small: s\r\n"));
	gt_check_int_equal(giong_http_exchange_end(ex), 0); /* Connection: close: not pooled */

	/* A server that closes without an answer: the exchange has failed,
	 * and says so to every later call. */
	snprintf(url, sizeof(url), "%s/x?close", t->rs.url);
	gt_check_int_equal(giong_http_exchange_begin(cli, "POST", url, &ex), 0);
	r = giong_http_exchange_send(ex, "body", 4);
	if (r >= 0)
		r = giong_http_exchange_response(ex);
	gt_check_true(r < 0);
	gt_check_int_equal(giong_http_exchange_status(ex), r);
	gt_check_int_equal(giong_http_exchange_response(ex), r);
	gt_check_int_equal(giong_http_exchange_send(ex, "x", 1), r);
	gt_check_int_equal(giong_http_exchange_write(ex, "x", 1), r);
	giong_http_exchange_end(ex);

	/* No exchange at all. */
	gt_check_int_equal(giong_http_exchange_status(NULL), -EINVAL);
	gt_check_int_equal(giong_http_exchange_response(NULL), -EINVAL);
	gt_check_int_equal(giong_http_exchange_field_count(NULL), -EINVAL);
	gt_check_int_equal(giong_http_exchange_content_length(NULL), -EINVAL);
	gt_check_int_equal(giong_http_exchange_send(NULL, NULL, 0), -EINVAL);
	gt_check_int_equal(giong_http_exchange_write(NULL, NULL, 0), -EINVAL);
	gt_check_int_equal(giong_http_exchange_header(NULL, "a", "b"), -EINVAL);
}

static void test_exchange_calls(void **state)
{
	struct run t = {.scenario = api_scenario, .serve = serve_echo_head};

	(void)state;
	t.opts.no_keep_alive = true;
	run(&t);
}

/* --- one client, one runtime after another ------------------------------------------------ */

struct reuse {
	struct rs rs;
	struct giong_http_client *cli;
	int got[2]; /* each worker's result */
};

static void reuse_main(unsigned worker, void *arg)
{
	struct reuse *u = arg;
	char url[96];

	snprintf(url, sizeof(url), "%s/r", u->rs.url);
	u->got[worker] = ct_exchange(u->cli, "GET", url, NULL, NULL, 0, NULL);
}

static void test_client_runtimes(void **state)
{
	struct reuse u = {0};
	struct giong_config one = gt_config(1), two = gt_config(2);
	struct giong_http_client_options o = {.no_keep_alive = true};
	struct giong_http_exchange *ex = (struct giong_http_exchange *)1;
	int fds = gt_count_fds();

	(void)state;
	rs_start(&u.rs, serve_echo_head, NULL);
	assert_int_equal(giong_http_client_new(&o, &u.cli), 0);
	/* Not on a worker: refused, and nothing made. */
	assert_int_equal(giong_http_exchange_begin(u.cli, "GET", u.rs.url, &ex), GIONG_ENOTWORKER);
	assert_null(ex);
	assert_int_equal(giong_http_client_close_idle(u.cli), GIONG_ENOTWORKER);
	gt_run(&one, reuse_main, &u, NULL);
	assert_int_equal(u.got[0], 200);
	/* The runtime ended: the client serves the next one, within the number
	 * of workers it first had (its table of workers is made once); a worker
	 * past it is refused, never given a slot that is not there. */
	u.got[0] = u.got[1] = 0;
	gt_run(&two, reuse_main, &u, NULL);
	assert_int_equal(u.got[0], 200);
	assert_int_equal(u.got[1], -EINVAL);
	rs_stop(&u.rs);
	assert_int_equal(giong_http_client_free(u.cli), 0);
	assert_int_equal(gt_count_fds(), fds);
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
	/* the status line, byte by byte: not HTTP, no version digit, two spaces,
	 * a tab after the code, a control byte in the reason, CR without LF */
	"HTTX/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.x 200 OK\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1  200 OK\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200\tOK\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 O\001K\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 OK\r\rContent-Length: 0\r\n\r\n",
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
	/* The 200 and 300 ms timeouts, not the 30 and 60 s defaults (the upper
	 * bounds leave room for a slow machine). */
	gt_check_in_range(giong_now_ms() - t0, 190, 5000);
	gt_check_int_equal(pooled, 0);
	t0 = giong_now_ms();
	gt_check_int_equal(ct_exchange(cli, "GET", url, NULL, body, sizeof(body), &pooled),
			   -ETIMEDOUT);
	gt_check_in_range(giong_now_ms() - t0, 290, 5000);
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

/* Begin @n GETs of @url (HEAD for the indexes in @heads, the first 32) into @pl. */
static void pipe_fill(struct giong_http_client *cli, struct giong_http_pipeline *pl,
		      const char *url, int n, unsigned heads)
{
	for (int i = 0; i < n; i++) {
		struct giong_http_exchange *ex;

		gt_check_int_equal(
			giong_http_exchange_begin(cli, i < 32 && (heads >> i) & 1 ? "HEAD" : "GET",
						  url, &ex),
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
	/* Both begun; only the one sent counts its requests (the other's was ended unsent). */
	gt_check_int_equal(stats(cli).pipelines, 2);
	gt_check_int_equal(stats(cli).pipelined, 5);
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
	gt_check_int_equal(stats(cli).pipelines, 1);
	gt_check_int_equal(stats(cli).pipelined, 3); /* the second send is in retries */
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

/* --- Expect: 100-continue -------------------------------------------------------------------- */

enum xmode {
	X_END,      /* no more requests: wait for the client's close */
	X_CONTINUE, /* 100 Continue, then read the body and echo it in a 200 */
	X_EARLY,    /* 103 Early Hints and 100 Continue in one write, then as X_CONTINUE */
	X_SILENT,   /* no interim response: wait for the body, echo it */
	X_PLAIN,    /* no expectation wanted: read the body (maybe none), echo it */
	X_DENY,     /* xfinals[conn] at once, then count what comes until the close */
	X_HOLD,     /* no answer at all: count what comes until the close */
	X_DROP,     /* close right after the head */
};

/* Receive more into buf[*len..cap - 1), NUL-terminated. */
static bool x_recv(int fd, char *buf, size_t *len, size_t cap)
{
	ssize_t n = recv(fd, buf + *len, cap - 1 - *len, 0);

	if (n <= 0)
		return false;
	*len += (size_t)n;
	buf[*len] = '\0';
	return true;
}

/* The body of the request whose head is buf[0..h) (Content-Length or chunked),
 * de-framed into @out (NUL-terminated); what follows it stays at the start of
 * buf. Its length, or -1. */
static int x_body(int fd, char *buf, size_t *len, size_t cap, size_t h, char *out)
{
	const char *cl = strcasestr(buf, "\r\ncontent-length:");
	size_t pos = h, o = 0;

	if (cl && cl < buf + h) {
		size_t n = strtoul(cl + 17, NULL, 10);

		while (*len < h + n)
			if (!x_recv(fd, buf, len, cap))
				return -1;
		memcpy(out, buf + h, n);
		o = n;
		pos = h + n;
	} else if (strcasestr(buf, "\r\ntransfer-encoding: chunked\r\n")) {
		for (;;) {
			char *eol;
			size_t n;

			while (!(eol = strstr(buf + pos, "\r\n")))
				if (!x_recv(fd, buf, len, cap))
					return -1;
			n = strtoul(buf + pos, NULL, 16);
			pos = (size_t)(eol + 2 - buf);
			while (*len < pos + n + 2)
				if (!x_recv(fd, buf, len, cap))
					return -1;
			memcpy(out + o, buf + pos, n);
			o += n;
			pos += n + 2; /* no trailers: the last chunk's CRLF ends it */
			if (!n)
				break;
		}
	}
	out[o] = '\0';
	memmove(buf, buf + pos, *len - pos + 1);
	*len -= pos;
	return (int)o;
}

/* Count what comes on @fd (past the @already bytes) until the client closes. */
static int x_count(int fd, size_t already)
{
	char b[4096];
	ssize_t n;
	int total = (int)already;

	while ((n = recv(fd, b, sizeof(b), 0)) > 0)
		total += (int)n;
	return total;
}

static void serve_expect(struct rs *rs, int fd, int i)
{
	struct run *t = (struct run *)rs;
	static char buf[1 << 17], out[1 << 17]; /* one connection at a time */
	size_t len = 0;

	buf[0] = '\0';
	for (int k = 0; k < t->replies_per_conn; k++) {
		int mode = t->xmodes[i * t->replies_per_conn + k];
		struct xreq *x = &t->xr[i * t->replies_per_conn + k];
		char head[64], *end;
		uint64_t t0;
		size_t h;
		int n;

		if (mode == X_END) {
			rs_wait_close(fd);
			return;
		}
		while (!(end = strstr(buf, "\r\n\r\n")))
			if (!x_recv(fd, buf, &len, sizeof(buf)))
				return;
		h = (size_t)(end + 4 - buf);
		end[2] = '\0'; /* the head alone, for the search */
		x->expect = strcasestr(buf, "\r\nexpect: 100-continue\r\n") != NULL;
		end[2] = '\r';
		t0 = giong_now_ms();
		switch (mode) {
		case X_DROP:
			atomic_store(&x->done, true);
			return;
		case X_DENY:
			rs_send(fd, t->xfinals[i]);
			/* fall through */
		case X_HOLD:
			x->body = x_count(fd, len - h);
			atomic_store(&x->done, true);
			return;
		case X_EARLY:
			rs_send(fd, "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
				    "HTTP/1.1 100 Continue\r\n\r\n");
			break;
		case X_CONTINUE:
			rs_send(fd, "HTTP/1.1 100 Continue\r\n\r\n");
			break;
		default:
			break;
		}
		if (len == h && x->expect && !x_recv(fd, buf, &len, sizeof(buf)))
			return;
		x->wait_ms = (int)(giong_now_ms() - t0);
		if ((n = x_body(fd, buf, &len, sizeof(buf), h, out)) < 0)
			return;
		x->body = n;
		atomic_store(&x->done, true);
		snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", n);
		rs_send(fd, head);
		gt_write_all(fd, out, (size_t)n);
	}
}

/* Wait (up to 3 s) until the server is done with request @k. */
static bool x_done(struct run *t, int k)
{
	for (int i = 0; i < 300 && !atomic_load(&t->xr[k].done); i++)
		giong_sleep_ms(10);
	return gt_check_true(atomic_load(&t->xr[k].done));
}

/* A body of @n bytes that is not all one byte. */
static char *x_make(size_t n)
{
	char *b = malloc(n + 1);

	for (size_t i = 0; b && i < n; i++)
		b[i] = (char)('a' + (i * 7 + i / 13) % 26);
	if (b)
		b[n] = '\0';
	return b;
}

static const int x_go_modes[] = {X_CONTINUE, X_EARLY, X_PLAIN, X_CONTINUE, X_END};

/* 100 Continue (after a 103, once): the body goes, intact, and the connection is
 * kept; a GET without a body sends no Expect; a streamed body waits the same. */
static void x_go_scenario(struct run *t, struct giong_http_client *cli)
{
	char url[96], *big = x_make(30000), *out = malloc(40000);
	int sent[2], pooled;
	uint64_t ms = 0;

	snprintf(url, sizeof(url), "%s/x", t->rs.url);
	gt_check_int_equal(giong_http_exchange_expect_continue(NULL, 0), -EINVAL);
	gt_check_int_equal(
		ct_expect(cli, "PUT", url, 5000, big, 30000, NULL, sent, &ms, out, 40000, &pooled),
		200);
	gt_check_int_equal(sent[0], 0);
	gt_check_true(ms < 2000); /* the 100, not the wait, let it go */
	gt_check_string_equal(out, big);
	gt_check_int_equal(pooled, 1);
	gt_check_int_equal(
		ct_expect(cli, "POST", url, 0, "hello", 5, NULL, sent, &ms, out, 40000, &pooled),
		200);
	gt_check_int_equal(sent[0], 0);
	gt_check_true(ms < 900);
	gt_check_string_equal(out, "hello");
	gt_check_int_equal(pooled, 1);
	gt_check_int_equal(
		ct_expect(cli, "GET", url, 5000, NULL, 0, NULL, sent, &ms, out, 40000, &pooled),
		200);
	gt_check_string_equal(out, "");
	gt_check_int_equal(pooled, 1);
	/* Streamed: the first write waits for the 100. */
	gt_check_int_equal(
		ct_expect(cli, "PUT", url, 5000, "stre", 4, "amed", sent, &ms, out, 40000, &pooled),
		200);
	gt_check_true(sent[0] == 0 && sent[1] == 0);
	gt_check_true(ms < 2000);
	gt_check_string_equal(out, "streamed");
	gt_check_int_equal(pooled, 1);
	for (int k = 0; k < 4; k++)
		x_done(t, k);
	gt_check_true(t->xr[0].expect && t->xr[1].expect && t->xr[3].expect);
	gt_check_false(t->xr[2].expect); /* no body, no expectation */
	gt_check_int_equal(t->xr[0].body, 30000);
	gt_check_int_equal(t->xr[1].body, 5);
	gt_check_int_equal(t->xr[2].body, 0);
	gt_check_int_equal(t->xr[3].body, 8);
	gt_check_int_equal(stats(cli).connects, 1);
	gt_check_int_equal(stats(cli).reused, 3);
	gt_check_int_equal(stats(cli).idle, 1);
	free(big);
	free(out);
}

static void test_expect_continue(void **state)
{
	struct run t = {.scenario = x_go_scenario,
			.serve = serve_expect,
			.xmodes = x_go_modes,
			.replies_per_conn = 5};

	(void)state;
	run(&t);
}

static const int x_deny_modes[] = {X_DENY, X_END, X_DENY, X_END, X_PLAIN, X_END};
static const char *const x_deny_finals[] = {
	/* keep-alive as far as the server says: the client closes all the same */
	"HTTP/1.1 417 Expectation Failed\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 401 Unauthorized\r\nContent-Length: 4\r\n\r\nnope",
	NULL,
};

/* A final response at once: no byte of the body goes, the exchange gives that
 * response, and its connection is closed, not reused. */
static void x_deny_scenario(struct run *t, struct giong_http_client *cli)
{
	char url[96], *big = x_make(30000), out[64];
	int sent[2], pooled;
	uint64_t ms = 0;

	snprintf(url, sizeof(url), "%s/x", t->rs.url);
	gt_check_int_equal(ct_expect(cli, "PUT", url, 5000, big, 30000, NULL, sent, &ms, out,
				     sizeof(out), &pooled),
			   417);
	gt_check_int_equal(sent[0], 1); /* withheld */
	gt_check_true(ms < 2000);
	gt_check_int_equal(pooled, 0);
	/* Streamed: the first write says so, and every later one. */
	gt_check_int_equal(ct_expect(cli, "POST", url, 5000, "secret", 6, "more", sent, &ms, out,
				     sizeof(out), &pooled),
			   401);
	gt_check_true(sent[0] == 1 && sent[1] == 1);
	gt_check_string_equal(out, "nope");
	gt_check_int_equal(pooled, 0);
	/* The next request makes a connection of its own. */
	gt_check_int_equal(ct_exchange(cli, "POST", url, "after", out, sizeof(out), &pooled), 200);
	gt_check_string_equal(out, "after");
	gt_check_int_equal(pooled, 1);
	for (int k = 0; k < 3; k++)
		x_done(t, k * 2); /* one request on each connection */
	gt_check_true(t->xr[0].expect && t->xr[2].expect);
	gt_check_int_equal(t->xr[0].body, 0); /* not a byte of it */
	gt_check_int_equal(t->xr[2].body, 0);
	gt_check_false(t->xr[4].expect);
	gt_check_int_equal(stats(cli).connects, 3);
	gt_check_int_equal(stats(cli).reused, 0);
	gt_check_int_equal(stats(cli).idle, 1);
	free(big);
}

static void test_expect_final(void **state)
{
	struct run t = {.scenario = x_deny_scenario,
			.serve = serve_expect,
			.xmodes = x_deny_modes,
			.xfinals = x_deny_finals,
			.replies_per_conn = 2};

	(void)state;
	run(&t);
}

static const int x_wait_modes[] = {X_SILENT, X_SILENT, X_END, X_HOLD, X_END, X_END};

/* A server that never answers 100: the body goes after the wait (the default
 * one too); the task's own deadline passing during the wait is -ETIMEDOUT, and
 * no body goes then. */
static void x_wait_scenario(struct run *t, struct giong_http_client *cli)
{
	char url[96], out[64];
	uint64_t ms = 0, saved;
	int sent[2], pooled;

	snprintf(url, sizeof(url), "%s/x", t->rs.url);
	gt_check_int_equal(ct_expect(cli, "POST", url, 200, "late", 4, NULL, sent, &ms, out,
				     sizeof(out), &pooled),
			   200);
	gt_check_int_equal(sent[0], 0);
	gt_check_in_range(ms, 195, 1500);
	gt_check_string_equal(out, "late");
	gt_check_int_equal(pooled, 1);
	gt_check_int_equal(ct_expect(cli, "PUT", url, 0, "later", 5, NULL, sent, &ms, out,
				     sizeof(out), &pooled),
			   200);
	gt_check_in_range(ms, GIONG_HTTP_CLIENT_EXPECT_TIMEOUT_MS - 5, 5000); /* not hung */
	gt_check_string_equal(out, "later");
	gt_check_int_equal(pooled, 1);
	giong_http_client_close_idle(cli);
	saved = giong_deadline_in(150);
	gt_check_int_equal(ct_expect(cli, "PUT", url, 5000, "never", 5, NULL, sent, &ms, out,
				     sizeof(out), &pooled),
			   -ETIMEDOUT);
	giong_deadline_restore(saved);
	gt_check_int_equal(sent[0], -ETIMEDOUT);
	gt_check_in_range(ms, 145, 4000); /* the deadline, not the 5 s wait */
	gt_check_int_equal(pooled, 0);
	for (int k = 0; k < 4; k++)
		if (k != 2)
			x_done(t, k);
	gt_check_true(t->xr[0].expect && t->xr[1].expect && t->xr[3].expect);
	gt_check_in_range(t->xr[0].wait_ms, 150, 1500);
	gt_check_int_equal(t->xr[0].body, 4);
	gt_check_int_equal(t->xr[1].body, 5);
	gt_check_int_equal(t->xr[3].body, 0);
	gt_check_int_equal(stats(cli).connects, 2);
	gt_check_int_equal(stats(cli).timeouts, 1);
}

static void test_expect_timeout(void **state)
{
	struct run t = {.scenario = x_wait_scenario,
			.serve = serve_expect,
			.xmodes = x_wait_modes,
			.replies_per_conn = 3};

	(void)state;
	run(&t);
}

static const int x_retry_modes[] = {X_PLAIN, X_DROP, X_CONTINUE, X_END};

/* A pooled connection the server closed on seeing the head: the idempotent PUT
 * goes again on a new one, and waits again; no pipeline takes expect-continue. */
static void x_retry_scenario(struct run *t, struct giong_http_client *cli)
{
	struct giong_http_pipeline *pl;
	struct giong_http_exchange *ex;
	char url[96], out[64];
	uint64_t ms = 0;
	int sent[2], pooled;

	snprintf(url, sizeof(url), "%s/x", t->rs.url);
	gt_check_int_equal(ct_exchange(cli, "GET", url, NULL, out, sizeof(out), &pooled), 200);
	gt_check_int_equal(pooled, 1);
	gt_check_int_equal(ct_expect(cli, "PUT", url, 5000, "again", 5, NULL, sent, &ms, out,
				     sizeof(out), &pooled),
			   200);
	gt_check_int_equal(sent[0], 0);
	gt_check_string_equal(out, "again");
	gt_check_int_equal(pooled, 1);
	x_done(t, 2);
	gt_check_true(t->xr[1].expect && t->xr[2].expect);
	gt_check_int_equal(t->xr[2].body, 5);
	gt_check_int_equal(stats(cli).retries, 1);
	gt_check_int_equal(stats(cli).connects, 2);

	gt_check_int_equal(giong_http_pipeline_begin(cli, 0, &pl), 0);
	gt_check_int_equal(giong_http_exchange_begin(cli, "PUT", url, &ex), 0);
	gt_check_int_equal(giong_http_exchange_expect_continue(ex, 0), 0);
	gt_check_int_equal(giong_http_pipeline_add(pl, ex, "x", 1), -EINVAL);
	gt_check_int_equal(giong_http_exchange_end(ex), 0);
	gt_check_int_equal(giong_http_exchange_begin(cli, "PUT", url, &ex), 0);
	gt_check_int_equal(giong_http_pipeline_add(pl, ex, "x", 1), 0);
	gt_check_int_equal(giong_http_exchange_expect_continue(ex, 0), -EBUSY);
	gt_check_int_equal(giong_http_pipeline_end(pl), 0);
}

static void test_expect_retry(void **state)
{
	struct run t = {.scenario = x_retry_scenario,
			.serve = serve_expect,
			.xmodes = x_retry_modes,
			.replies_per_conn = 2};

	(void)state;
	run(&t);
}

/* --- the connect deadline ------------------------------------------------------------------ */

/*
 * A listener on which a connect hangs: listen(fd, 0) and one connection that is
 * never accepted fill its accept queue, after which Linux drops the SYNs of the
 * next ones (LISTENOVERFLOWS) and their connects retransmit, for minutes. The
 * fillers go into @fillers[0..4) (-1: none); each is checked, and the one that
 * does not complete within 200 ms proves the queue full. Returns the listener
 * and its port in *@port, or -1 when no connect hangs here.
 */
static int hang_listener(int fillers[4], int *port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	for (int i = 0; i < 4; i++)
		fillers[i] = -1;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 0) ||
	    getsockname(lfd, (struct sockaddr *)&sa, &sl))
		goto no;
	*port = ntohs(sa.sin_port);
	for (int i = 0; i < 4; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		struct pollfd p = {.fd = fd, .events = POLLOUT};

		if (fd < 0)
			goto no;
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) && errno != EINPROGRESS) {
			close(fd);
			goto no;
		}
		if (poll(&p, 1, 200) == 0) {
			close(fd); /* it hangs: the queue is full */
			return lfd;
		}
		fillers[i] = fd; /* it got in: one more place taken */
	}
no:
	for (int i = 0; i < 4; i++)
		if (fillers[i] >= 0)
			close(fillers[i]);
	if (lfd >= 0)
		close(lfd);
	return -1;
}

struct ticker {
	atomic_int ticks;
	atomic_bool stop;
};

/* Another task of the worker: it must run on while an exchange waits to connect. */
static intptr_t tick(void *arg)
{
	struct ticker *tk = arg;

	while (!atomic_load(&tk->stop) && giong_sleep_ms(5) == 0)
		atomic_fetch_add(&tk->ticks, 1);
	return 0;
}

/* Two exchanges to @url, each -ETIMEDOUT within the connect deadline (200 ms)
 * with a ticking task beside it; no connection counted, kept or reused. */
static void connect_timeouts(struct giong_http_client *cli, const char *url)
{
	struct ticker tk = {0};
	struct giong_task *task;
	int pooled;

	if (!gt_check_int_equal(giong_spawn(tick, &tk, &task), 0))
		return;
	for (int i = 0; i < 2; i++) {
		uint64_t t0 = giong_now_ms();
		int ticks = atomic_load(&tk.ticks);

		gt_check_int_equal(ct_exchange(cli, "GET", url, NULL, NULL, 0, &pooled),
				   -ETIMEDOUT);
		/* The 200 ms, not the 10 s default (room for a slow machine). */
		gt_check_in_range(giong_now_ms() - t0, 195, 5000);
		gt_check_int_equal(pooled, 0);
		gt_check_true(atomic_load(&tk.ticks) - ticks >= 10); /* 40 or so */
		gt_check_int_equal(stats(cli).connects, 0);
		gt_check_int_equal(stats(cli).timeouts, (uint64_t)i + 1);
		gt_check_int_equal(stats(cli).idle, 0);
	}
	atomic_store(&tk.stop, true);
	giong_join(task, NULL);
}

static void connect_tcp_scenario(struct run *t, struct giong_http_client *cli)
{
	char url[96];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/never", t->hang_port);
	connect_timeouts(cli, url);
}

static void test_connect_timeout(void **state)
{
	struct run t = {.scenario = connect_tcp_scenario, .opts = {.connect_timeout_ms = 200}};
	int fillers[4], lfd = hang_listener(fillers, &t.hang_port);

	(void)state;
	if (lfd < 0)
		skip(); /* a connect to a full accept queue does not hang on this kernel */
	run(&t);
	for (int i = 0; i < 4; i++)
		if (fillers[i] >= 0)
			close(fillers[i]);
	close(lfd);
}

/* A handshake that never ends: only the connect deadline stops it (a bound of
 * 5 s makes a missing deadline a failure, not a hang). */
static int endless_connector(struct giong_stream *tcp, const char *host, void *ctx,
			     struct giong_stream **out)
{
	struct run *t = ctx;
	int r = 0;

	(void)tcp;
	(void)host;
	(void)out;
	atomic_fetch_add(&t->connector_calls, 1);
	for (int i = 0; i < 500 && r == 0; i++)
		r = giong_sleep_ms(10);
	return r ? r : -EIO;
}

static void serve_hold(struct rs *rs, int fd, int i)
{
	(void)rs;
	(void)i;
	rs_wait_close(fd);
}

static void connect_tls_scenario(struct run *t, struct giong_http_client *cli)
{
	char url[96];

	snprintf(url, sizeof(url), "https://127.0.0.1:%d/never", t->rs.port);
	connect_timeouts(cli, url);
	/* Each attempt had a TCP connection of its own, closed (not pooled). */
	gt_check_int_equal(atomic_load(&t->connector_calls), 2);
	for (int i = 0; i < 100 && atomic_load(&t->rs.conns) < 2; i++)
		giong_sleep_ms(10);
	gt_check_int_equal(atomic_load(&t->rs.conns), 2);
}

static void test_connect_timeout_connector(void **state)
{
	struct run t = {.scenario = connect_tls_scenario, .serve = serve_hold};

	(void)state;
	t.opts = (struct giong_http_client_options){
		.connect_timeout_ms = 200, .connect = endless_connector, .connect_ctx = &t};
	run(&t);
}

/* --- a pipeline at its limits ----------------------------------------------------------------- */

/* As serve_echo_head(), for pipelined requests (heads only): each head in
 * what arrived is answered in turn, the rest kept for the next read. */
static void serve_echo_pipe(struct rs *rs, int fd, int i)
{
	static char buf[1 << 20];
	char reply[4096];
	size_t len = 0;
	ssize_t n;

	(void)rs;
	(void)i;
	while ((n = recv(fd, buf + len, sizeof(buf) - 1 - len, 0)) > 0) {
		char *p = buf, *end;

		len += (size_t)n;
		buf[len] = '\0';
		while ((end = strstr(p, "\r\n\r\n"))) {
			int hl = (int)(end + 4 - p);

			snprintf(reply, sizeof(reply),
				 "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%.*s", hl, hl, p);
			rs_send(fd, reply);
			p = end + 4;
		}
		len -= (size_t)(p - buf);
		memmove(buf, p, len);
	}
}

static void pipe_limits_scenario(struct run *t, struct giong_http_client *cli)
{
	struct giong_http_pipeline *pl, *out = (struct giong_http_pipeline *)1;
	struct giong_http_exchange *ex, *extra;
	const void *data;
	char url[96], want[64];
	int n = (int)GIONG_HTTP_PIPELINE_MAX;

	snprintf(url, sizeof(url), "%s/p", t->rs.url);
	gt_check_int_equal(giong_http_pipeline_begin(cli, 0, NULL), -EINVAL);
	gt_check_int_equal(giong_http_pipeline_begin(NULL, 0, &out), -EINVAL);
	gt_check_null(out);
	gt_check_int_equal(giong_http_pipeline_next(NULL, &ex), -EINVAL);
	gt_check_null(ex);
	gt_check_int_equal(giong_http_pipeline_send(NULL), -EINVAL);
	gt_check_int_equal(giong_http_pipeline_begin(cli, 0, &pl), 0);
	gt_check_int_equal(giong_http_pipeline_send(pl), -ENOENT); /* nothing in it */
	/* As many as a pipeline holds, and not one more. */
	pipe_fill(cli, pl, url, n, 0);
	gt_check_int_equal(giong_http_exchange_begin(cli, "GET", url, &extra), 0);
	gt_check_int_equal(giong_http_pipeline_add(pl, extra, NULL, 0), -E2BIG);
	gt_check_int_equal(giong_http_pipeline_send(pl), 0);
	/* Sent: closed to more, and sent once. */
	gt_check_int_equal(giong_http_pipeline_add(pl, extra, NULL, 0), -EALREADY);
	gt_check_int_equal(giong_http_pipeline_send(pl), -EALREADY);
	giong_http_exchange_end(extra);
	snprintf(want, sizeof(want), "GET /p HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n", t->rs.port);
	for (int i = 0; i < n; i++) {
		ssize_t len;

		if (!gt_check_int_equal(giong_http_pipeline_next(pl, &ex), 200)) {
			giong_http_exchange_end(ex);
			break;
		}
		len = giong_http_exchange_body(ex, &data);
		gt_check_true(len > (ssize_t)strlen(want) &&
			      !memcmp(data, want, strlen(want))); /* each its own answer */
		gt_check_int_equal(giong_http_exchange_end(ex), 1);
	}
	gt_check_int_equal(giong_http_pipeline_next(pl, &ex), 0);
	gt_check_int_equal(giong_http_pipeline_end(pl), 1); /* all read: pooled */
	gt_check_int_equal(stats(cli).connects, 1);
}

static void test_pipeline_limits(void **state)
{
	struct run t = {.scenario = pipe_limits_scenario, .serve = serve_echo_pipe};

	(void)state;
	run(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_framing),
		cmocka_unit_test(test_exchange_calls),
		cmocka_unit_test(test_client_runtimes),
		cmocka_unit_test(test_pipeline_limits),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_retry),
		cmocka_unit_test(test_deadlines),
		cmocka_unit_test(test_idle),
		cmocka_unit_test(test_pipeline_close),
		cmocka_unit_test(test_pipeline_malformed),
		cmocka_unit_test(test_pipeline_head),
		cmocka_unit_test(test_pipeline_retry),
		cmocka_unit_test(test_expect_continue),
		cmocka_unit_test(test_expect_final),
		cmocka_unit_test(test_expect_timeout),
		cmocka_unit_test(test_expect_retry),
		cmocka_unit_test(test_connect_timeout),
		cmocka_unit_test(test_connect_timeout_connector),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
