/* SPDX-License-Identifier: MIT */
/*
 * test_protocol.c - the protocol end to end, over real sockets, with a plain
 * blocking client (http_test.h):
 *  - keep-alive: HTTP/1.0 closes unless Connection: keep-alive (then the
 *    response says so), Connection: close closes and nothing pipelined
 *    behind it runs;
 *  - 16 pipelined requests mixing GET and POST (Content-Length, chunked),
 *    answered in order; a request one byte per write; HEAD;
 *  - every refusal of the parser with its status and the close; 404 and
 *    405 keep the connection;
 *  - handler errors: -EIO before sending (500, kept), after part of a
 *    streamed body (closed), 0 without a response (500);
 *  - the response API's refusals (CR/LF in a value, framing fields, a status
 *    after a field) and streamed bodies in HTTP/1.1 and 1.0.
 */
#include "http_test.h"

static atomic_int handled; /* calls of the handlers below */

static int hello(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	(void)req;
	(void)ctx;
	atomic_fetch_add(&handled, 1);
	return giong_http_response_send(res, "hello", 5);
}

static int fail_early(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	(void)req;
	(void)ctx;
	/* A field was added: the begun head must be taken back for the 500. */
	giong_http_response_header(res, "X-Begun", "1");
	return -EIO;
}

static int fail_late(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	(void)req;
	(void)ctx;
	giong_http_response_write(res, "part", 4);
	return -EIO;
}

static int silent(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	(void)req;
	(void)res;
	(void)ctx;
	return 0;
}

/* The response API's refusals, each checked in the handler. */
static int api(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	(void)req;
	(void)ctx;
	gt_check_int_equal(giong_http_response_status(res, 199), -EINVAL);
	gt_check_int_equal(giong_http_response_status(res, 600), -EINVAL);
	gt_check_int_equal(giong_http_response_status(res, 201), 0);
	gt_check_int_equal(giong_http_response_header(res, "X-A", "1\r\nX-Evil: 1"), -EINVAL);
	gt_check_int_equal(giong_http_response_header(res, "X-A", "1\nX-Evil: 1"), -EINVAL);
	gt_check_int_equal(giong_http_response_header(res, "X-A", "1\rX"), -EINVAL);
	gt_check_int_equal(giong_http_response_header(res, "X-A\r\nX-Evil", "1"), -EINVAL);
	gt_check_int_equal(giong_http_response_header(res, "X A", "1"), -EINVAL);
	gt_check_int_equal(giong_http_response_header_n(res, "X-A", 3, "a\0b", 3), -EINVAL);
	static const char *const framing[] = {"Content-Length", "transfer-encoding",
					      "CONNECTION",     "Date",
					      "Server",         "Keep-Alive"};
	for (size_t i = 0; i < sizeof(framing) / sizeof(framing[0]); i++)
		gt_check_int_equal(giong_http_response_header(res, framing[i], "1"), -EINVAL);
	gt_check_false(giong_http_response_started(res));
	gt_check_int_equal(giong_http_response_header(res, "X-Ok", "a\tb"), 0);
	gt_check_true(giong_http_response_started(res));
	gt_check_int_equal(giong_http_response_status(res, 202), -EALREADY);
	gt_check_int_equal(giong_http_response_send(res, "api", 3), 0);
	gt_check_int_equal(giong_http_response_send(res, "api", 3), -EALREADY);
	gt_check_int_equal(giong_http_response_write(res, "x", 1), -EALREADY);
	gt_check_int_equal(giong_http_response_end(res), -EALREADY);
	return 0;
}

static int stream(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	int r;

	(void)req;
	(void)ctx;
	if ((r = giong_http_response_write(res, "abc", 3)) ||
	    (r = giong_http_response_write(res, "", 0)) ||
	    (r = giong_http_response_write(res, "defg", 4)))
		return r;
	gt_check_int_equal(giong_http_response_send(res, "x", 1), -EALREADY);
	gt_check_int_equal(giong_http_response_header(res, "X-Late", "1"), -EALREADY);
	r = giong_http_response_end(res);
	gt_check_int_equal(giong_http_response_end(res), -EALREADY);
	return r;
}

/* ?err=N: return -N after sending the response whole; ?close: ask for a
 * close; ?size=N: a body of N pattern bytes. */
static int misc(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	size_t qlen, n = 0;
	const char *q = giong_http_request_query(req, &qlen);
	char *body;
	int r;

	(void)ctx;
	if (q && !strncmp(q, "size=", 5))
		n = strtoul(q + 5, NULL, 10);
	if (q && !strncmp(q, "close", 5))
		giong_http_response_close(res);
	if (q && !strncmp(q, "toobig", 6))
		return -EMSGSIZE;
	if (!(body = malloc(n + 1)))
		return -ENOMEM;
	ht_pattern(body, n, (unsigned)n);
	r = giong_http_response_send(res, body, n);
	free(body);
	if (q && !strncmp(q, "err", 3))
		return -EIO;
	return r;
}

static void setup(struct ht *h)
{
	ht_init(h);
	atomic_store(&handled, 0);
	assert_int_equal(giong_http_router_add(h->router, "GET", "/hello", hello, NULL), 0);
	assert_int_equal(giong_http_router_add(h->router, "POST", "/echo", ht_echo, &handled), 0);
	assert_int_equal(giong_http_router_add(h->router, "GET", "/fail-early", fail_early, NULL),
			 0);
	assert_int_equal(giong_http_router_add(h->router, "GET", "/fail-late", fail_late, NULL), 0);
	assert_int_equal(giong_http_router_add(h->router, "GET", "/silent", silent, NULL), 0);
	assert_int_equal(giong_http_router_add(h->router, "GET", "/api", api, NULL), 0);
	assert_int_equal(giong_http_router_add(h->router, "GET", "/stream", stream, NULL), 0);
	assert_int_equal(giong_http_router_add(h->router, "GET", "/misc", misc, NULL), 0);
}

#define GET_HELLO "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n"

/* The connection still serves: a GET /hello on it is answered. */
static void check_alive(struct ht_conn *c)
{
	ht_expect(c, GET_HELLO, 200, "hello");
}

static bool has_header(const struct ht_resp *r, const char *name, const char *value)
{
	char v[256];

	return ht_header(r, name, v, sizeof(v)) && !strcasecmp(v, value);
}

/* ---------------------------------------------------------- keep-alive */

static void keepalive_client(struct ht *h)
{
	struct ht_resp r;
	struct ht_conn c;

	/* HTTP/1.0 without keep-alive: answered, then closed. */
	if (!ht_open(h, &c))
		return;
	gt_check_int_equal(ht_request(&c, "GET /hello HTTP/1.0\r\n\r\n", &r, false), 0);
	gt_check_int_equal(r.status, 200);
	gt_check_string_equal(r.body, "hello");
	gt_check_true(has_header(&r, "Connection", "close"));
	ht_resp_free(&r);
	gt_check_int_equal(ht_closed_within(&c, 1000), 1);
	ht_conn_close(&c);

	/* HTTP/1.0 with keep-alive: said back, and the connection serves on. */
	if (!ht_open(h, &c))
		return;
	for (int i = 0; i < 2; i++) {
		gt_check_int_equal(
			ht_request(&c, "GET /hello HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &r,
				   false),
			0);
		gt_check_int_equal(r.status, 200);
		gt_check_string_equal(r.body, "hello");
		gt_check_true(has_header(&r, "Connection", "keep-alive"));
		ht_resp_free(&r);
	}
	gt_check_int_equal(ht_closed_within(&c, 100), 0);
	check_alive(&c);
	ht_conn_close(&c);

	/* HTTP/1.1 says nothing of Connection and keeps it. */
	if (!ht_open(h, &c))
		return;
	gt_check_int_equal(ht_request(&c, GET_HELLO, &r, false), 0);
	gt_check_false(ht_header(&r, "Connection", (char[8]){0}, 8));
	ht_resp_free(&r);

	/* Connection: close, with two requests pipelined behind it: the first
	 * is answered with Connection: close, the others never run. */
	atomic_store(&handled, 0);
	gt_check_int_equal(ht_send_str(c.fd,
				       "GET /hello HTTP/1.1\r\nHost: t\r\nConnection: close\r\n"
				       "\r\n" GET_HELLO
				       "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\n"
				       "\r\nx"),
			   0);
	gt_check_int_equal(ht_read_response(&c, &r, false), 0);
	gt_check_int_equal(r.status, 200);
	gt_check_true(has_header(&r, "Connection", "close"));
	ht_resp_free(&r);
	gt_check_int_equal(ht_closed_within(&c, 1000), 1);
	gt_check_int_equal(atomic_load(&handled), 1);
	ht_conn_close(&c);

	/* The same in HTTP/1.0: its close also ends what is pipelined. */
	if (!ht_open(h, &c))
		return;
	atomic_store(&handled, 0);
	gt_check_int_equal(ht_send_str(c.fd, "GET /hello HTTP/1.0\r\n\r\n" GET_HELLO), 0);
	gt_check_int_equal(ht_read_response(&c, &r, false), 0);
	gt_check_int_equal(r.status, 200);
	ht_resp_free(&r);
	gt_check_int_equal(ht_closed_within(&c, 1000), 1);
	gt_check_int_equal(atomic_load(&handled), 1);
	ht_conn_close(&c);
}

static void test_keepalive(void **state)
{
	struct ht h;

	(void)state;
	setup(&h);
	ht_run(&h, keepalive_client);
	assert_int_equal(h.stats.accepted, 4);
	assert_int_equal(h.stats.responses[1], 7);
	assert_int_equal(h.stats.open, 0);
}

/* ---------------------------------------------------------- pipelining */

static void pipeline_client(struct ht *h)
{
	static const size_t sizes[] = {1, 5, 3};
	char req[16][512], want[16][64];
	char *all = malloc(16 * 512), *p = all;
	struct ht_resp r;
	struct ht_conn c;

	if (!gt_check_non_null(all) || !ht_open(h, &c)) {
		free(all);
		return;
	}
	for (int i = 0; i < 16; i++) {
		int n = snprintf(want[i], sizeof(want[i]), "body %d of 16, %s", i,
				 i % 3 == 1 ? "sized" : "chunked");

		if (i % 3 == 0) {
			snprintf(req[i], sizeof(req[i]), "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n");
			strcpy(want[i], "hello");
		} else if (i % 3 == 1) {
			snprintf(req[i], sizeof(req[i]),
				 "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n%s",
				 n, want[i]);
		} else {
			size_t cl = 0;
			char *body = ht_chunked(want[i], (size_t)n, sizes, 3, &cl);

			snprintf(req[i], sizeof(req[i]),
				 "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n"
				 "\r\n%.*s",
				 (int)cl, body);
			free(body);
		}
		p += sprintf(p, "%s", req[i]);
	}
	gt_check_int_equal(ht_send(c.fd, all, (size_t)(p - all)), 0);
	for (int i = 0; i < 16; i++) {
		if (!gt_check_int_equal(ht_read_response(&c, &r, false), 0))
			break;
		gt_check_int_equal(r.status, 200);
		gt_check_int_equal(r.body_len, strlen(want[i]));
		gt_check_string_equal(r.body, want[i]);
		ht_resp_free(&r);
	}
	gt_check_int_equal(ht_closed_within(&c, 100), 0);
	ht_conn_close(&c);
	free(all);

	/* One byte per write, with small sleeps: the head and the body come in
	 * as many receives as bytes. */
	static const char slow[] = "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 11\r\n\r\n"
				   "hello world" GET_HELLO;
	if (!ht_open(h, &c))
		return;
	for (size_t i = 0; i < sizeof(slow) - 1; i++) {
		if (!gt_check_int_equal(ht_send(c.fd, slow + i, 1), 0))
			break;
		usleep(300);
	}
	gt_check_int_equal(ht_read_response(&c, &r, false), 0);
	gt_check_int_equal(r.status, 200);
	gt_check_string_equal(r.body, "hello world");
	ht_resp_free(&r);
	gt_check_int_equal(ht_read_response(&c, &r, false), 0);
	gt_check_string_equal(r.body, "hello");
	ht_resp_free(&r);

	/* HEAD: GET's fields, Content-Length of GET's body, no body. */
	gt_check_int_equal(ht_request(&c, "HEAD /hello HTTP/1.1\r\nHost: t\r\n\r\n", &r, true), 0);
	gt_check_int_equal(r.status, 200);
	gt_check_true(has_header(&r, "Content-Length", "5"));
	ht_resp_free(&r);
	gt_check_int_equal(ht_closed_within(&c, 100), 0); /* no body byte came */
	check_alive(&c);
	ht_conn_close(&c);
}

static void test_pipeline(void **state)
{
	struct ht h;

	(void)state;
	setup(&h);
	ht_run(&h, pipeline_client);
	assert_int_equal(h.stats.requests, 16 + 4);
	assert_int_equal(h.stats.responses[1], 16 + 4);
}

/* ---------------------------------------------------------- refusals */

struct refusal {
	const char *req;
	int status;
};

static const struct refusal refusals[] = {
	{"GET /hello HTTP/1.1\nHost: t\r\n\r\n", 400},
	{"GET /hello HTTP/1.1\r\nHost: t\n\r\n", 400},
	{"GET /hello HTTP/1.1\r\nHost: t\r\nX-A: 1\r\n  folded\r\n\r\n", 400},
	{"GET /hello HTTP/1.1\r\nHost: t\r\nHost: u\r\n\r\n", 400},
	{"GET /hello HTTP/1.1\r\n\r\n", 400},
	{"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\n"
	 "Transfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n",
	 400},
	{"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx", 400},
	{"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400},
	{"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nxy\r\n0\r\n\r\n",
	 400},
	{"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n", 400},
	{"FOO /hello HTTP/1.1\r\nHost: t\r\n\r\n", 501},
	{"get /hello HTTP/1.1\r\nHost: t\r\n\r\n", 501},
	{"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
	 501},
	{"GET /hello HTTP/1.2\r\nHost: t\r\n\r\n", 505},
	{"GET /hello HTTP/2.0\r\nHost: t\r\n\r\n", 505},
	{"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505},
	{"GET /hello HTTP/1.1\r\nHost: t\r\nExpect: something-else\r\n\r\n", 417},
};

static void refusal_client(struct ht *h)
{
	char *big = malloc(128 * 1024);
	struct ht_resp r;
	struct ht_conn c;
	int n;

	for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		n = ht_exchange(h, refusals[i].req, strlen(refusals[i].req), &r, false);
		if (!gt_check_int_equal(n, 1) || !gt_check_int_equal(r.status, refusals[i].status))
			gt_check_fail_msg("refusal %zu: %s", i, refusals[i].req);
		ht_resp_free(&r);
	}
	if (!gt_check_non_null(big))
		return;
	/* 414: a request line past 8 KiB. */
	n = sprintf(big, "GET /%09000d HTTP/1.1\r\nHost: t\r\n\r\n", 1);
	gt_check_int_equal(ht_exchange(h, big, (size_t)n, &r, false), 1);
	gt_check_int_equal(r.status, 414);
	ht_resp_free(&r);
	/* 431: one field past the 64 KiB head, then 101 fields. */
	n = sprintf(big, "GET /hello HTTP/1.1\r\nHost: t\r\nX-Big: %070000d\r\n\r\n", 1);
	gt_check_int_equal(ht_exchange(h, big, (size_t)n, &r, false), 1);
	gt_check_int_equal(r.status, 431);
	ht_resp_free(&r);
	n = sprintf(big, "GET /hello HTTP/1.1\r\nHost: t\r\n");
	for (int i = 0; i < 100; i++)
		n += sprintf(big + n, "X-%d: %d\r\n", i, i);
	n += sprintf(big + n, "\r\n");
	gt_check_int_equal(ht_exchange(h, big, (size_t)n, &r, false), 1);
	gt_check_int_equal(r.status, 431);
	ht_resp_free(&r);
	free(big);

	/* 404, and 405 with Allow: the connection is kept. */
	if (!ht_open(h, &c))
		return;
	gt_check_int_equal(ht_request(&c, "GET /nowhere HTTP/1.1\r\nHost: t\r\n\r\n", &r, false),
			   0);
	gt_check_int_equal(r.status, 404);
	ht_resp_free(&r);
	gt_check_int_equal(ht_request(&c, "PUT /hello HTTP/1.1\r\nHost: t\r\n\r\n", &r, false), 0);
	gt_check_int_equal(r.status, 405);
	gt_check_true(has_header(&r, "Allow", "GET, HEAD"));
	ht_resp_free(&r);
	/* A 405 to a request with a body: the body is dropped, not parsed. */
	gt_check_int_equal(ht_request(&c,
				      "PUT /hello HTTP/1.1\r\nHost: t\r\nContent-Length: 32\r\n\r\n"
				      "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n",
				      &r, false),
			   0);
	gt_check_int_equal(r.status, 405);
	ht_resp_free(&r);
	gt_check_int_equal(ht_closed_within(&c, 100), 0);
	check_alive(&c);
	ht_conn_close(&c);
}

static void test_refusals(void **state)
{
	size_t n = sizeof(refusals) / sizeof(refusals[0]);
	struct ht h;

	(void)state;
	setup(&h);
	ht_run(&h, refusal_client);
	/* Bad chunked bodies are the handler's: two of the refusals above. */
	assert_int_equal(h.stats.refused, n + 3 - 2);
	assert_int_equal(h.stats.responses[3], n - 6 + 3 + 3); /* six are 501 and 505 */
	assert_int_equal(h.stats.responses[4], 6);
	assert_int_equal(h.stats.responses[1], 1);
	assert_int_equal(atomic_load(&handled), 2 + 1); /* the bad chunked ones, check_alive */
}

/* ---------------------------------------------------------- handlers */

static void handler_client(struct ht *h)
{
	struct ht_resp r;
	struct ht_conn c;
	int n;

	if (!ht_open(h, &c))
		return;
	/* -EIO before anything left: a 500, without the field it had added. */
	gt_check_int_equal(ht_request(&c, "GET /fail-early HTTP/1.1\r\nHost: t\r\n\r\n", &r, false),
			   0);
	gt_check_int_equal(r.status, 500);
	gt_check_false(ht_header(&r, "X-Begun", (char[8]){0}, 8));
	gt_check_false(has_header(&r, "Connection", "close"));
	ht_resp_free(&r);
	check_alive(&c);
	/* 0 without a response: a 500, kept. */
	gt_check_int_equal(ht_request(&c, "GET /silent HTTP/1.1\r\nHost: t\r\n\r\n", &r, false), 0);
	gt_check_int_equal(r.status, 500);
	ht_resp_free(&r);
	check_alive(&c);
	/* The response API's refusals; nothing of the refused fields shows. */
	gt_check_int_equal(ht_request(&c, "GET /api HTTP/1.1\r\nHost: t\r\n\r\n", &r, false), 0);
	gt_check_int_equal(r.status, 201);
	gt_check_string_equal(r.body, "api");
	gt_check_true(has_header(&r, "X-Ok", "a\tb"));
	gt_check_null(strstr(r.head, "Evil"));
	gt_check_true(has_header(&r, "Content-Length", "3"));
	ht_resp_free(&r);
	/* Streamed, HTTP/1.1: chunked, kept. */
	gt_check_int_equal(ht_request(&c, "GET /stream HTTP/1.1\r\nHost: t\r\n\r\n", &r, false), 0);
	gt_check_int_equal(r.status, 200);
	gt_check_true(r.chunked);
	gt_check_false(ht_header(&r, "Content-Length", (char[8]){0}, 8));
	gt_check_string_equal(r.body, "abcdefg");
	ht_resp_free(&r);
	check_alive(&c);
	/* HEAD of it: GET's fields, not a byte of body (nor its last chunk). */
	gt_check_int_equal(ht_request(&c, "HEAD /stream HTTP/1.1\r\nHost: t\r\n\r\n", &r, true), 0);
	gt_check_int_equal(r.status, 200);
	gt_check_true(has_header(&r, "Transfer-Encoding", "chunked"));
	ht_resp_free(&r);
	gt_check_int_equal(ht_closed_within(&c, 100), 0);
	check_alive(&c);
	/* Part of a streamed body, then an error: cut, closed. */
	n = ht_request(&c, "GET /fail-late HTTP/1.1\r\nHost: t\r\n\r\n", &r, false);
	gt_check_int_equal(n, -EBADMSG); /* the chunked body never ends */
	gt_check_int_equal(r.status, 200);
	gt_check_true(ht_closed_within(&c, 1000) == 1 || c.eof);
	ht_resp_free(&r);
	ht_conn_close(&c);

	/* Streamed, HTTP/1.0: no chunked coding, ended by the close. */
	if (!ht_open(h, &c))
		return;
	gt_check_int_equal(
		ht_request(&c, "GET /stream HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", &r, false),
		0);
	gt_check_int_equal(r.status, 200);
	gt_check_false(r.chunked);
	gt_check_false(ht_header(&r, "Transfer-Encoding", (char[8]){0}, 8));
	gt_check_false(ht_header(&r, "Content-Length", (char[8]){0}, 8));
	gt_check_true(has_header(&r, "Connection", "close"));
	gt_check_string_equal(r.body, "abcdefg");
	ht_resp_free(&r);
	gt_check_true(c.eof);
	ht_conn_close(&c);
}

static void test_handlers(void **state)
{
	struct ht h;

	(void)state;
	setup(&h);
	ht_run(&h, handler_client);
	assert_int_equal(h.stats.responses[4], 2);
	assert_int_equal(h.stats.handler_errors, 2);
	assert_int_equal(h.stats.open, 0);
}

/* Handler errors after a whole response, asked closes, the library's 413,
 * and batches past their bound. */
static void misc_client(struct ht *h)
{
	char *req = malloc(40 * 64), *p = req, *want = malloc(20000);
	struct ht_resp r;
	struct ht_conn c;

	if (!gt_check_non_null(req) || !gt_check_non_null(want) || !ht_open(h, &c))
		goto out;
	/* 40 responses of 15,000 bytes requested in one write: more than a
	 * batch holds, so it is written out mid-way; all in order. */
	for (int i = 0; i < 40; i++)
		p += sprintf(p, "GET /misc?size=%d HTTP/1.1\r\nHost: t\r\n\r\n", 15000 + i);
	gt_check_int_equal(ht_send(c.fd, req, (size_t)(p - req)), 0);
	for (int i = 0; i < 40; i++) {
		if (!gt_check_int_equal(ht_read_response(&c, &r, false), 0))
			break;
		ht_pattern(want, 15000 + (size_t)i, 15000 + (unsigned)i);
		gt_check_int_equal(r.body_len, 15000 + i);
		gt_check_memory_equal(r.body, want, 15000 + (size_t)i);
		ht_resp_free(&r);
	}
	/* A handler that failed after its response was whole: the response
	 * stands, and (router.h) the connection is closed after it. */
	gt_check_int_equal(ht_request(&c, "GET /misc?err HTTP/1.1\r\nHost: t\r\n\r\n", &r, false),
			   0);
	gt_check_int_equal(r.status, 200);
	ht_resp_free(&r);
	gt_check_int_equal(ht_closed_within(&c, 1000), 1);
	ht_conn_close(&c);

	/* giong_http_response_close(): said, and done. */
	if (!ht_open(h, &c))
		goto out;
	gt_check_int_equal(ht_request(&c, "GET /misc?close HTTP/1.1\r\nHost: t\r\n\r\n", &r, false),
			   0);
	gt_check_int_equal(r.status, 200);
	gt_check_true(has_header(&r, "Connection", "close"));
	ht_resp_free(&r);
	gt_check_int_equal(ht_closed_within(&c, 1000), 1);
	ht_conn_close(&c);

	/* -EMSGSIZE from a handler: 413, closed. */
	if (!ht_open(h, &c))
		goto out;
	gt_check_int_equal(
		ht_request(&c, "GET /misc?toobig HTTP/1.1\r\nHost: t\r\n\r\n", &r, false), 0);
	gt_check_int_equal(r.status, 413);
	gt_check_true(has_header(&r, "Connection", "close"));
	ht_resp_free(&r);
	gt_check_int_equal(ht_closed_within(&c, 1000), 1);
	ht_conn_close(&c);
out:
	free(req);
	free(want);
}

static void test_misc(void **state)
{
	struct ht h;

	(void)state;
	setup(&h);
	ht_run(&h, misc_client);
	assert_int_equal(h.stats.responses[1], 42);
	assert_int_equal(h.stats.responses[3], 1);
	assert_int_equal(h.stats.handler_errors, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keepalive), cmocka_unit_test(test_pipeline),
		cmocka_unit_test(test_refusals),  cmocka_unit_test(test_handlers),
		cmocka_unit_test(test_misc),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
