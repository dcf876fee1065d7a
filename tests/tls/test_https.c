/* SPDX-License-Identifier: MIT */
/*
 * test_https.c - libgiong-http over the TLS stream (options.wrap =
 * giong_tls_wrap_accept), with giong TLS clients in tasks of the same
 * worker: pipelining, sized and chunked bodies, limits, a file body (the
 * read-and-write path, not splice), idle keep-alive connections that hold
 * no task and no pool buffer, the idle timeout, and graceful shutdown with
 * a request in progress.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tls_test.h"

#include <giong/http.h>

struct env {
	struct giong_http_router *router;
	struct giong_http_limits limits;
	struct giong_http_server_options opts;
	struct giong_http_server *srv;
	struct giong_tls_config *srv_tls, *cli_tls;
	int port;
	void (*scenario)(struct env *e);
	int file_fd; /* /file's body */
	size_t file_len;
	int serve_ret;
};

/* --- handlers -------------------------------------------------------------------------------- */

static int h_json(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	(void)req;
	(void)ctx;
	return giong_http_response_send(res, "{\"ok\":true}", 11);
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

static int h_file(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	struct env *e = ctx;

	(void)req;
	return giong_http_response_sendfile(res, e->file_fd, 0, e->file_len);
}

static int h_slow(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	(void)req;
	(void)ctx;
	giong_sleep_ms(300);
	return giong_http_response_send(res, "slow", 4);
}

/* --- a small HTTPS client over the giong TLS stream ---------------------------------------------- */

struct hc {
	struct giong_stream *s;
	char *buf;
	size_t len, cap;
};

static int hc_open(struct env *e, struct hc *c)
{
	struct giong_stream *tcp, *tls;
	char addr[32];
	int r;

	memset(c, 0, sizeof(*c));
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", e->port);
	if ((r = giong_tcp_connect(addr, &tcp)))
		return r;
	if ((r = giong_tls_connect(tcp, e->cli_tls, "localhost", &tls))) {
		giong_stream_close(tcp);
		return r;
	}
	c->s = tls;
	return 0;
}

static void hc_close(struct hc *c)
{
	if (c->s)
		giong_stream_close(c->s);
	free(c->buf);
	memset(c, 0, sizeof(*c));
}

static int hc_fill(struct hc *c)
{
	ssize_t n;

	if (c->cap - c->len < 16384) {
		size_t cap = c->cap ? c->cap * 2 : 65536;
		char *b = realloc(c->buf, cap + 1);

		if (!b)
			return -ENOMEM;
		c->buf = b;
		c->cap = cap;
	}
	n = giong_stream_read(c->s, c->buf + c->len, c->cap - c->len);
	if (n <= 0)
		return n ? (int)n : -ENODATA;
	c->len += (size_t)n;
	c->buf[c->len] = '\0';
	return 0;
}

/* One response: its status, and its body (Content-Length framed) copied
 * into *@body (malloc'd) if @body is not NULL. */
static int hc_response(struct hc *c, int *status, char **body, size_t *blen)
{
	char *end, *cl;
	size_t hl, n;
	int r;

	while (!(end = c->len ? memmem(c->buf, c->len, "\r\n\r\n", 4) : NULL))
		if ((r = hc_fill(c)))
			return r;
	hl = (size_t)(end - c->buf) + 4;
	if (sscanf(c->buf, "HTTP/1.1 %d ", status) != 1)
		return -EBADMSG;
	cl = strcasestr(c->buf, "\r\ncontent-length:");
	n = cl && cl < end ? strtoull(cl + 17, NULL, 10) : 0;
	while (c->len < hl + n)
		if ((r = hc_fill(c)))
			return r;
	if (body) {
		*body = malloc(n + 1);
		memcpy(*body, c->buf + hl, n);
		(*body)[n] = '\0';
		*blen = n;
	}
	memmove(c->buf, c->buf + hl + n, c->len - hl - n);
	c->len -= hl + n;
	return 0;
}

static int hc_send(struct hc *c, const void *p, size_t n)
{
	ssize_t r = giong_stream_write_all(c->s, p, n);

	return r == (ssize_t)n ? 0 : (int)r;
}

/* --- the fixture: serve in the main task, the scenario in another ------------------------------- */

static intptr_t scenario_task(void *arg)
{
	struct env *e = arg;

	e->scenario(e);
	giong_shutdown();
	return 0;
}

static void https_main(unsigned worker, void *arg)
{
	struct env *e = arg;
	struct giong_listener *l;
	struct giong_addr a;

	(void)worker;
	if (!gt_check_int_equal(giong_tcp_listen("127.0.0.1:0", NULL, &l), 0))
		return;
	giong_listener_addr(l, &a);
	e->port = giong_addr_port(&a);
	gt_check_int_equal(giong_spawn(scenario_task, e, NULL), 0);
	e->serve_ret = giong_http_serve(e->srv, l);
	giong_listener_close(l);
}

static void env_init(struct env *e)
{
	static const char *const alpn[] = {"http/1.1", NULL};

	memset(e, 0, sizeof(*e));
	e->file_fd = -1;
	assert_int_equal(giong_http_router_new(&e->router), 0);
	giong_http_router_add(e->router, "GET", "/json", h_json, e);
	giong_http_router_add(e->router, "POST", "/echo", h_echo, e);
	giong_http_router_add(e->router, "GET", "/file", h_file, e);
	giong_http_router_add(e->router, "GET", "/slow", h_slow, e);
	giong_http_limits_init(&e->limits);
	e->srv_tls = tt_server("server", alpn);
	e->cli_tls = tt_client(alpn);
	e->opts.limits = &e->limits;
	e->opts.wrap = giong_tls_wrap_accept;
	e->opts.wrap_ctx = e->srv_tls;
}

static void env_run(struct env *e, void (*scenario)(struct env *e))
{
	struct giong_config cfg = gt_config(1);
	int fds = gt_count_fds();

	cfg.shutdown_grace_ms = 3000;
	e->scenario = scenario;
	assert_int_equal(giong_http_server_new(e->router, &e->opts, &e->srv), 0);
	gt_run(&cfg, https_main, e, NULL);
	assert_int_equal(giong_http_server_free(e->srv), 0);
	assert_int_equal(e->serve_ret, 0);
	giong_http_router_free(e->router);
	giong_tls_config_free(e->srv_tls);
	giong_tls_config_free(e->cli_tls);
	gt_assert_fds(fds);
	if (e->file_fd >= 0)
		close(e->file_fd);
}

/* A test that runs @scenario in the default environment. */
#define HTTPS_TEST(name, scenario)                                                                 \
	static void name(void **state)                                                             \
	{                                                                                          \
		struct env e;                                                                      \
                                                                                                   \
		(void)state;                                                                       \
		env_init(&e);                                                                      \
		env_run(&e, scenario);                                                             \
	}

/* --- scenarios ----------------------------------------------------------------------------------- */

static void pipelined(struct env *e)
{
	enum { N = 64 };
	static const char req[] = "GET /json HTTP/1.1\r\nHost: localhost\r\n\r\n";
	char *all = malloc(N * (sizeof(req) - 1)), *body;
	struct hc c;
	size_t blen, alen;
	int status;

	for (int i = 0; i < N; i++)
		memcpy(all + i * (sizeof(req) - 1), req, sizeof(req) - 1);
	if (!gt_check_int_equal(hc_open(e, &c), 0))
		goto out;
	alen = 0;
	gt_check_non_null(giong_tls_alpn(c.s, &alen));
	gt_check_int_equal(alen, 8);
	gt_check_int_equal(hc_send(&c, all, N * (sizeof(req) - 1)), 0);
	for (int i = 0; i < N; i++) {
		if (!gt_check_int_equal(hc_response(&c, &status, &body, &blen), 0))
			break;
		gt_check_int_equal(status, 200);
		gt_check_int_equal(blen, 11);
		free(body);
	}
	hc_close(&c);
out:
	free(all);
}

HTTPS_TEST(test_pipelined, pipelined)

static void bodies(struct env *e)
{
	size_t n = 1u << 20;
	unsigned char *data = malloc(n);
	char head[128], *body;
	struct hc c;
	size_t blen;
	int status, hl;

	tt_pattern(data, n, 7);
	if (!gt_check_int_equal(hc_open(e, &c), 0))
		goto out;
	/* Sized: 1 MiB, the default body limit exactly. */
	hl = snprintf(head, sizeof(head),
		      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n\r\n", n);
	gt_check_int_equal(hc_send(&c, head, (size_t)hl), 0);
	gt_check_int_equal(hc_send(&c, data, n), 0);
	if (gt_check_int_equal(hc_response(&c, &status, &body, &blen), 0)) {
		gt_check_int_equal(status, 200);
		gt_check_int_equal(blen, n);
		gt_check_true(blen == n && tt_pattern_ok((unsigned char *)body, n, 7));
		free(body);
	}
	/* Chunked: 300 KiB in chunks of odd sizes, on the same connection. */
	static const char chunked[] = "POST /echo HTTP/1.1\r\nHost: x\r\n"
				      "Transfer-Encoding: chunked\r\n\r\n";
	gt_check_int_equal(hc_send(&c, chunked, sizeof(chunked) - 1), 0);
	for (size_t off = 0, k = 1; off < 300u * 1024; k = k * 5 + 3) {
		size_t len = 1 + k % 9000;

		if (len > 300u * 1024 - off)
			len = 300u * 1024 - off;
		hl = snprintf(head, sizeof(head), "%zx\r\n", len);
		gt_check_int_equal(hc_send(&c, head, (size_t)hl), 0);
		gt_check_int_equal(hc_send(&c, data + off, len), 0);
		gt_check_int_equal(hc_send(&c, "\r\n", 2), 0);
		off += len;
	}
	gt_check_int_equal(hc_send(&c, "0\r\n\r\n", 5), 0);
	if (gt_check_int_equal(hc_response(&c, &status, &body, &blen), 0)) {
		gt_check_int_equal(status, 200);
		gt_check_int_equal(blen, 300u * 1024);
		gt_check_true(blen == 300u * 1024 && !memcmp(body, data, blen));
		free(body);
	}
	hc_close(&c);
out:
	free(data);
}

HTTPS_TEST(test_bodies, bodies)

static void limits(struct env *e)
{
	char *big = malloc(70000), *body = NULL;
	struct hc c;
	size_t blen;
	int status;

	/* A head over 64 KiB: 431, then the connection closes. */
	memset(big, 'a', 70000);
	memcpy(big, "GET /json HTTP/1.1\r\nX: ", 23);
	if (gt_check_int_equal(hc_open(e, &c), 0)) {
		gt_check_int_equal(hc_send(&c, big, 70000), 0);
		gt_check_int_equal(hc_response(&c, &status, NULL, NULL), 0);
		gt_check_int_equal(status, 431);
		hc_close(&c);
	}
	/* A body over the limit: 413 before a byte of it is read. */
	if (gt_check_int_equal(hc_open(e, &c), 0)) {
		static const char req[] =
			"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n";

		gt_check_int_equal(hc_send(&c, req, sizeof(req) - 1), 0);
		gt_check_int_equal(hc_response(&c, &status, &body, &blen), 0);
		gt_check_int_equal(status, 413);
		free(body);
		hc_close(&c);
	}
	free(big);
}

HTTPS_TEST(test_limits, limits)

static void file_body(struct env *e)
{
	static const char req[] = "GET /file HTTP/1.1\r\nHost: x\r\n\r\n";
	struct hc c;
	char *body;
	size_t blen;
	int status;

	if (!gt_check_int_equal(hc_open(e, &c), 0))
		return;
	for (int round = 0; round < 2; round++) {
		gt_check_int_equal(hc_send(&c, req, sizeof(req) - 1), 0);
		if (!gt_check_int_equal(hc_response(&c, &status, &body, &blen), 0))
			break;
		gt_check_int_equal(status, 200);
		gt_check_int_equal(blen, e->file_len);
		gt_check_true(blen == e->file_len &&
			      tt_pattern_ok((unsigned char *)body, blen, 11));
		free(body);
	}
	hc_close(&c);
}

static void test_file_body(void **state)
{
	struct env e;
	char path[] = "/tmp/giong-https-XXXXXX";
	size_t n = 3u << 20;
	unsigned char *data = malloc(n);

	(void)state;
	env_init(&e);
	e.file_fd = mkstemp(path);
	assert_true(e.file_fd >= 0);
	unlink(path);
	tt_pattern(data, n, 11);
	assert_int_equal(gt_write_all_fd(e.file_fd, data, n), (ssize_t)n);
	e.file_len = n;
	free(data);
	env_run(&e, file_body);
}

enum { IDLE_CONNS = 100 };

static void idle(struct env *e)
{
	static const char req[] = "GET /json HTTP/1.1\r\nHost: x\r\n\r\n";
	struct hc *c = calloc(IDLE_CONNS, sizeof(*c));
	struct giong_stats st;
	struct giong_http_stats hs;
	int status, open = 0;

	for (int i = 0; i < IDLE_CONNS; i++) {
		if (!gt_check_int_equal(hc_open(e, &c[i]), 0))
			break;
		open++;
		gt_check_int_equal(hc_send(&c[i], req, sizeof(req) - 1), 0);
		gt_check_int_equal(hc_response(&c[i], &status, NULL, NULL), 0);
	}
	/* The server's connections park once their answers are sent: a few ms,
	 * seconds under valgrind beside another test. */
	for (int ms = 0; ms < 10000; ms += 10) {
		gt_check_int_equal(giong_http_server_stats(e->srv, 0, &hs), 0);
		if (hs.idle == (uint32_t)open)
			break;
		giong_sleep_ms(10);
	}
	gt_check_int_equal(hs.open, (uint32_t)open);
	gt_check_int_equal(hs.idle, (uint32_t)open);
	gt_check_int_equal(giong_stats(&st), 0);
	/* The serve task, this one, the sweeper: no stack per HTTPS connection,
	 * and no pool buffer held by one either. */
	gt_check_true(st.stacks_live <= 4);
	gt_check_int_equal(st.recvbufs_free, st.recvbufs_total);
	/* And they still work after idling. */
	for (int i = 0; i < open; i += 10) {
		gt_check_int_equal(hc_send(&c[i], req, sizeof(req) - 1), 0);
		gt_check_int_equal(hc_response(&c[i], &status, NULL, NULL), 0);
		gt_check_int_equal(status, 200);
	}
	for (int i = 0; i < open; i++)
		hc_close(&c[i]);
	free(c);
}

HTTPS_TEST(test_idle, idle)

static void idle_timeout(struct env *e)
{
	static const char req[] = "GET /json HTTP/1.1\r\nHost: x\r\n\r\n";
	struct hc c;
	int status, r;
	char b;

	if (!gt_check_int_equal(hc_open(e, &c), 0))
		return;
	gt_check_int_equal(hc_send(&c, req, sizeof(req) - 1), 0);
	gt_check_int_equal(hc_response(&c, &status, NULL, NULL), 0);
	/* The server closes the idle connection: an end, not a hang. */
	r = (int)giong_stream_read(c.s, &b, 1);
	gt_check_true(r == 0 || r == GIONG_ETLS_TRUNCATED || r == -ECONNRESET);
	hc_close(&c);
}

static void test_idle_timeout(void **state)
{
	struct env e;

	(void)state;
	env_init(&e);
	e.limits.idle_timeout_ms = 200;
	env_run(&e, idle_timeout);
}

/* A body cut short by the end of the TCP stream, without close_notify (the
 * client's write side shut beneath TLS): the request is incomplete, a 400 (it
 * was a 500: GIONG_ETLS_TRUNCATED counted as the handler's failure). wolfSSL
 * still sends it; OpenSSL's connection is over after an unclean end, and the
 * client sees the end instead. Either way no 5xx is counted. */
static void truncated_body(struct env *e)
{
	static const char req[] = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc";
	struct giong_http_stats hs;
	struct hc c;
	int status = 0, fd, r;

	if (!gt_check_int_equal(hc_open(e, &c), 0))
		return;
	gt_check_int_equal(hc_send(&c, req, sizeof(req) - 1), 0);
	fd = giong_stream_fd(c.s);
	gt_check_true(fd >= 0);
	gt_check_int_equal(shutdown(fd, SHUT_WR), 0);
	r = hc_response(&c, &status, NULL, NULL);
	if (r == 0)
		gt_check_int_equal(status, 400);
	else
		gt_check_true(r == GIONG_ETLS_ALERT || r == GIONG_ETLS_TRUNCATED ||
			      r == -ECONNRESET);
	hc_close(&c);
	for (int ms = 0; ms < 10000; ms += 10) { /* the server's task ends */
		gt_check_int_equal(giong_http_server_stats(e->srv, 0, &hs), 0);
		if (hs.handler_errors)
			break;
		giong_sleep_ms(10);
	}
	gt_check_int_equal(hs.responses[4], 0);
	gt_check_int_equal(hs.handler_errors, 1); /* the handler's read failed */
}

static void test_truncated_body(void **state)
{
	struct env e;

	(void)state;
	env_init(&e);
	env_run(&e, truncated_body);
}

static intptr_t stopper(void *arg)
{
	(void)arg;
	giong_sleep_ms(100);
	giong_shutdown();
	return 0;
}

static void slow_at_shutdown(struct env *e)
{
	static const char req[] = "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n";
	struct hc c;
	char *body;
	size_t blen;
	int status;

	if (!gt_check_int_equal(hc_open(e, &c), 0))
		return;
	gt_check_int_equal(hc_send(&c, req, sizeof(req) - 1), 0);
	giong_spawn(stopper, NULL, NULL);
	/* Shutdown begins while the handler sleeps: it is still answered. */
	if (gt_check_int_equal(hc_response(&c, &status, &body, &blen), 0)) {
		gt_check_int_equal(status, 200);
		gt_check_int_equal(blen, 4);
		free(body);
	}
	hc_close(&c);
}

HTTPS_TEST(test_shutdown_in_progress, slow_at_shutdown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pipelined),      cmocka_unit_test(test_bodies),
		cmocka_unit_test(test_limits),         cmocka_unit_test(test_file_body),
		cmocka_unit_test(test_idle),           cmocka_unit_test(test_idle_timeout),
		cmocka_unit_test(test_truncated_body), cmocka_unit_test(test_shutdown_in_progress),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
