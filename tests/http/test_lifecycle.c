/* SPDX-License-Identifier: MIT */
/*
 * test_lifecycle.c - connections from the first byte to the last, end to
 * end:
 *  - 1,000 connections, one request each, half closed by the client and half
 *    by the server after Connection: close; the descriptors back after;
 *  - graceful shutdown under load: 50 requests in a slow handler when the
 *    shutdown begins are all answered 200 with Connection: close, idle
 *    connections close at once, new connections are refused; connections
 *    accepted with no request yet are answered when it comes within 1 s;
 *  - a Unix socket listener; giong_http_serve_stream() on a socket pair;
 *  - limits.connections = 5 with 10 clients: 5 served, the others once some
 *    close (limit_pauses counted);
 *  - a peer that never reads its responses (1 MiB ones, or a flood of small
 *    ones) is closed after write_timeout_ms, counted, with bounded memory;
 *  - the wrap hook: one that returns the stream it got, one that fails, one that returns
 *    a positive value outside its contract (for both of these the connection is closed
 *    without a response: a positive value is never taken for a status).
 */
#include "http_test.h"

static const char get_hi[] = "GET /hi HTTP/1.1\r\nHost: t\r\n\r\n";
static const char get_hi_close[] = "GET /hi HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";

static int hi(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	(void)req;
	(void)ctx;
	return giong_http_response_send(res, "hi", 2);
}

static void init(struct ht *h)
{
	ht_init(h);
	assert_int_equal(giong_http_router_add(h->router, "GET", "/hi", hi, NULL), 0);
	ht_add_stats(h);
}

/* Read one response on @c: 200 "hi" (and Connection: close if @close). */
static bool read_hi(struct ht_conn *c, bool close)
{
	struct ht_resp r;
	char v[32];
	bool ok = gt_check_int_equal(ht_read_response(c, &r, false), 0) &&
		  gt_check_int_equal(r.status, 200) && gt_check_string_equal(r.body, "hi");

	if (ok && close)
		ok = gt_check_true(ht_header(&r, "Connection", v, sizeof(v)) &&
				   !strcmp(v, "close"));
	ht_resp_free(&r);
	return ok;
}

static bool conn_open(struct ht *h, struct ht_conn *c)
{
	int fd = ht_connect(h);

	ht_conn_init(c, fd);
	return gt_check_true(fd >= 0);
}

/* ------------------------------------------------ 1,000 connections */

#define MANY 1000
#define MANY_BATCH 100

static void many_client(struct ht *h)
{
	static struct ht_conn c[MANY_BATCH];

	for (int b = 0; b < MANY / MANY_BATCH; b++) {
		for (int i = 0; i < MANY_BATCH; i++)
			if (!conn_open(h, &c[i]))
				return;
		for (int i = 0; i < MANY_BATCH; i++)
			gt_check_int_equal(ht_send_str(c[i].fd, i & 1 ? get_hi_close : get_hi), 0);
		for (int i = 0; i < MANY_BATCH; i++) {
			read_hi(&c[i], i & 1);
			/* the server closes after Connection: close, else keeps it */
			gt_check_int_equal(ht_closed_within(&c[i], i & 1 ? 2000 : 0), i & 1);
			ht_conn_close(&c[i]);
		}
	}
}

static void test_many_connections(void **state)
{
	int fds = gt_count_fds();
	struct ht h;

	(void)state;
	init(&h);
	ht_run(&h, many_client);
	assert_int_equal(h.stats.accepted, MANY);
	assert_int_equal(h.stats.requests, MANY);
	assert_int_equal(h.stats.responses[1], MANY);
	assert_int_equal(h.stats.open, 0);
	gt_assert_fds(fds);
}

/* ------------------------------------------------ graceful shutdown */

#define SLOW 50
#define IDLE 5

static atomic_int slow_in, slow_release;

/* Held until the client lets it go, after the shutdown: a fixed sleep let
 * the first handlers answer before the last ones came in when the machine
 * was slow (the 6.1 guest under emulation: 8 answers before the shutdown). */
static int slow(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	uint64_t give_up = giong_now_ms() + 20000; /* a client that failed early */

	(void)req;
	(void)ctx;
	atomic_fetch_add(&slow_in, 1);
	while (!atomic_load(&slow_release) && giong_now_ms() < give_up)
		if (giong_sleep_ms(5))
			return -EIO;
	return giong_http_response_send(res, "hi", 2);
}

static void shutdown_client(struct ht *h)
{
	static struct ht_conn idle[IDLE], busy[SLOW];
	struct ht_conn late;
	struct ht_resp r;
	int fd;

	for (int i = 0; i < IDLE; i++) {
		if (!conn_open(h, &idle[i]))
			return;
		gt_check_int_equal(ht_send_str(idle[i].fd, get_hi), 0);
		read_hi(&idle[i], false);
	}
	for (int i = 0; i < SLOW; i++) {
		if (!conn_open(h, &busy[i]))
			return;
		gt_check_int_equal(ht_send_str(busy[i].fd, "GET /slow HTTP/1.1\r\nHost: t\r\n\r\n"),
				   0);
	}
	for (int i = 0; i < 500 && atomic_load(&slow_in) < SLOW; i++)
		usleep(10000);
	if (!gt_check_int_equal(atomic_load(&slow_in), SLOW))
		return;
	giong_runtime_shutdown(h->rt);
	/* The idle ones close at once, while the slow ones are still held. */
	for (int i = 0; i < IDLE; i++)
		gt_check_int_equal(ht_closed_within(&idle[i], 2000), 1);
	/* A connection made now is refused: the listener stopped (or, made just
	 * before it did, it is served with Connection: close; see below). */
	fd = ht_connect(h);
	ht_conn_init(&late, fd);
	if (fd >= 0)
		gt_check_int_equal(ht_send_str(fd, get_hi), 0);
	atomic_store(&slow_release, 1); /* answered now, in the shutdown */
	for (int i = 0; i < SLOW; i++) {
		read_hi(&busy[i], true);
		gt_check_int_equal(ht_closed_within(&busy[i], 2000), 1);
	}
	if (fd >= 0) {
		int ret = ht_read_response(&late, &r, false);
		char v[32];

		gt_check_true(ret == -ENODATA || ret == -ECONNRESET ||
			      (ret == 0 && r.status == 200 &&
			       ht_header(&r, "Connection", v, sizeof(v)) && !strcmp(v, "close")));
		ht_resp_free(&r);
	}
	/* Once the serve returned the listener is closed: refused (10 s at
	 * most: the serve returns after the last close, slow under emulation). */
	int refused = 0;
	for (int i = 0; i < 1000 && !refused; i++) {
		fd = ht_connect(h);
		if (fd == -ECONNREFUSED)
			refused = 1;
		else if (fd >= 0)
			close(fd);
		usleep(10000);
	}
	gt_check_true(refused);
	for (int i = 0; i < IDLE; i++)
		ht_conn_close(&idle[i]);
	for (int i = 0; i < SLOW; i++)
		ht_conn_close(&busy[i]);
	ht_conn_close(&late);
}

static void test_graceful_shutdown(void **state)
{
	int fds = gt_count_fds();
	struct ht h;

	(void)state;
	init(&h);
	assert_int_equal(giong_http_router_add(h.router, "GET", "/slow", slow, NULL), 0);
	ht_run(&h, shutdown_client);
	assert_int_equal(h.stats.responses[1], IDLE + SLOW);
	assert_int_equal(h.stats.handler_errors, 0);
	assert_int_equal(h.stats.idle_timeouts, 0);
	assert_int_equal(h.stats.open, 0);
	gt_assert_fds(fds);
}

/* A connection accepted before the shutdown but with no request yet (its
 * client is sending: a restart must not fail it) gets its request answered,
 * with Connection: close, when it comes within GIONG__HTTP_FRESH_MS (1 s);
 * one that never sends is closed after that, well within the grace period. */
static unsigned fresh_asks; /* answers of GET /stats: 2xx responses too */

/* The server took the three (and the connection asking: four open). */
static bool took_three(const struct ht_live *o, const void *arg)
{
	(void)arg;
	fresh_asks++;
	return o->open >= 4;
}

static void fresh_client(struct ht *h)
{
	struct ht_conn sender, silent, kept;
	struct ht_live st;

	if (!conn_open(h, &kept) || !conn_open(h, &sender) || !conn_open(h, &silent))
		return;
	gt_check_int_equal(ht_send_str(kept.fd, get_hi), 0);
	read_hi(&kept, false); /* kept alive: idle, not fresh */
	/* The server took all three before the shutdown (not yet accepted,
	 * they would be refused with the listener). */
	gt_check_int_equal(ht_wait_stats(h, &st, took_three, NULL, 5000), 1);
	giong_runtime_shutdown(h->rt);
	gt_check_int_equal(ht_closed_within(&kept, 2000), 1); /* idle: closed at once */
	usleep(100000);
	gt_check_int_equal(ht_send_str(sender.fd, get_hi), 0);
	read_hi(&sender, true);
	gt_check_int_equal(ht_closed_within(&sender, 1000), 1);
	gt_check_int_equal(ht_closed_within(&silent, 3000), 1);
	ht_conn_close(&kept);
	ht_conn_close(&sender);
	ht_conn_close(&silent);
}

static void test_shutdown_fresh(void **state)
{
	int fds = gt_count_fds();
	struct ht h;

	(void)state;
	init(&h);
	h.cfg.shutdown_grace_ms = 10000;
	fresh_asks = 0;
	ht_run(&h, fresh_client);
	assert_int_equal(h.stats.responses[1], 2 + fresh_asks);
	assert_int_equal(h.stats.open, 0);
	gt_assert_fds(fds);
}

/* ------------------------------------------------ a Unix socket */

static void unix_client(struct ht *h)
{
	struct ht_conn c;

	for (int n = 0; n < 3; n++) {
		if (!conn_open(h, &c))
			return;
		for (int i = 0; i < 3; i++) {
			gt_check_int_equal(ht_send_str(c.fd, i == 2 ? get_hi_close : get_hi), 0);
			read_hi(&c, i == 2);
		}
		gt_check_int_equal(ht_closed_within(&c, 2000), 1);
		gt_check_int_equal(c.len, 0); /* closed, not answered: no byte on the socket */
		ht_conn_close(&c);
	}
}

static void test_unix_socket(void **state)
{
	char path[108];
	struct ht h;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/giong-http-life-%d.sock", (int)getpid());
	init(&h);
	h.unix_path = path;
	ht_run(&h, unix_client);
	assert_int_equal(h.stats.accepted, 3);
	assert_int_equal(h.stats.responses[1], 9);
	assert_int_equal(access(path, F_OK), -1);
}

/* ------------------------------------------------ one given stream */

struct ss {
	struct giong_http_server *srv;
	struct giong_stream *b;
	int ret, einval;
	char got[1024];
	size_t len;
	struct giong_http_stats stats;
};

static intptr_t ss_serve(void *arg)
{
	struct ss *ss = arg;

	ss->ret = giong_http_serve_stream(ss->srv, ss->b);
	return 0;
}

static void ss_main(unsigned w, void *arg)
{
	struct ss *ss = arg;
	struct giong_stream *a;
	struct giong_task *t;
	ssize_t n;
	char req[256];

	(void)w;
	ss->einval = giong_http_serve_stream(ss->srv, NULL);
	/* Two requests, the second the last; read to the server's close. */
	if (!gt_check_int_equal(giong_unix_pair(&a, &ss->b), 0) ||
	    !gt_check_int_equal(giong_spawn(ss_serve, ss, &t), 0))
		return;
	snprintf(req, sizeof(req), "%s%s", get_hi, get_hi_close);
	gt_check_int_equal(giong_stream_write_all(a, req, strlen(req)), (ssize_t)strlen(req));
	while ((n = giong_stream_read(a, ss->got + ss->len, sizeof(ss->got) - 1 - ss->len)) > 0)
		ss->len += (size_t)n;
	gt_check_int_equal(n, 0);
	giong_join(t, NULL);
	gt_check_int_equal(ss->ret, 0);
	giong_stream_close(a);
	/* A peer that goes away without a request ends it too. */
	ss->ret = -1;
	if (!gt_check_int_equal(giong_unix_pair(&a, &ss->b), 0) ||
	    !gt_check_int_equal(giong_spawn(ss_serve, ss, &t), 0))
		return;
	giong_sleep_ms(20);
	giong_stream_close(a);
	giong_join(t, NULL);
	gt_check_int_equal(ss->ret, 0);
	giong_http_server_stats(ss->srv, 0, &ss->stats);
}

static void test_serve_stream(void **state)
{
	struct giong_config cfg = gt_config(1);
	struct giong_http_router *router;
	struct ss ss = {0};
	int fds = gt_count_fds();
	char *second;

	(void)state;
	assert_int_equal(giong_http_router_new(&router), 0);
	assert_int_equal(giong_http_router_add(router, "GET", "/hi", hi, NULL), 0);
	assert_int_equal(giong_http_server_new(router, NULL, &ss.srv), 0);
	gt_run(&cfg, ss_main, &ss, NULL);
	assert_int_equal(giong_http_server_free(ss.srv), 0);
	giong_http_router_free(router);
	assert_int_equal(ss.einval, -EINVAL);
	ss.got[ss.len] = '\0';
	assert_true(!strncmp(ss.got, "HTTP/1.1 200 ", 13));
	second = strstr(ss.got + 1, "HTTP/1.1 200 ");
	assert_non_null(second);
	assert_non_null(strstr(second, "Connection: close\r\n"));
	assert_int_equal(strcmp(ss.got + ss.len - 6, "\r\n\r\nhi"), 0);
	assert_int_equal(ss.stats.accepted, 2);
	assert_int_equal(ss.stats.responses[1], 2);
	assert_int_equal(ss.stats.open, 0);
	gt_assert_fds(fds);
}

/* ------------------------------------------------ the connection limit */

#define LIMIT 5
#define CLIENTS 10

static atomic_uint max_open;

static int limited(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	const struct ht *h = ctx;
	struct giong_http_stats st;

	(void)req;
	giong_http_server_stats(h->srv, 0, &st);
	if (st.open > atomic_load(&max_open))
		atomic_store(&max_open, st.open);
	return giong_http_response_send(res, "hi", 2);
}

/* Read the responses that came on the open ones of @c not yet answered; the
 * count of them. */
static int answered_sweep(struct ht_conn *c, bool *done)
{
	int n = 0;

	for (int i = 0; i < CLIENTS; i++) {
		struct pollfd p = {c[i].fd, POLLIN, 0};

		if (done[i] || c[i].fd < 0 || poll(&p, 1, 0) != 1)
			continue;
		done[i] = read_hi(&c[i], false);
		n++;
	}
	return n;
}

/* Read responses on @c as they come until @want came (5 s at most: a slow
 * machine), then 50 ms more for any that should not have: the count. */
static int answered_now(struct ht_conn *c, bool *done, int want)
{
	int n = 0;

	for (int waited = 0; waited < 5000 && n < want; waited += 10) {
		n += answered_sweep(c, done);
		if (n < want)
			usleep(10000);
	}
	usleep(50000);
	return n + answered_sweep(c, done);
}

static void limit_client(struct ht *h)
{
	struct ht_conn c[CLIENTS];
	bool done[CLIENTS] = {0};
	int closed = 0;

	for (int i = 0; i < CLIENTS; i++) {
		if (!conn_open(h, &c[i]))
			return;
		gt_check_int_equal(ht_send_str(c[i].fd, "GET /lim HTTP/1.1\r\nHost: t\r\n\r\n"), 0);
	}
	gt_check_int_equal(answered_now(c, done, LIMIT), LIMIT);
	/* Two of the served go: two more are served. */
	for (int i = 0; i < CLIENTS && closed < 2; i++)
		if (done[i])
			ht_conn_close(&c[i]), closed++;
	gt_check_int_equal(answered_now(c, done, 2), 2);
	for (int i = 0; i < CLIENTS; i++)
		if (done[i])
			ht_conn_close(&c[i]);
	gt_check_int_equal(answered_now(c, done, CLIENTS - LIMIT - 2), CLIENTS - LIMIT - 2);
	for (int i = 0; i < CLIENTS; i++)
		ht_conn_close(&c[i]);
}

static void test_connection_limit(void **state)
{
	struct ht h;

	(void)state;
	init(&h);
	h.limits.connections = LIMIT;
	assert_int_equal(giong_http_router_add(h.router, "GET", "/lim", limited, &h), 0);
	ht_run(&h, limit_client);
	assert_int_equal(h.stats.responses[1], CLIENTS);
	assert_true(h.stats.limit_pauses > 0);
	assert_true(atomic_load(&max_open) <= LIMIT);
	assert_int_equal(h.stats.open, 0);
}

/* ------------------------------------------------ a peer that never reads */

#define BIG (1024 * 1024)

static int big(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	static char body[BIG];

	(void)req;
	(void)ctx;
	return giong_http_response_send(res, body, sizeof(body));
}

static bool timed_out(const struct ht_live *o, const void *arg)
{
	return o->write_timeouts >= *(const unsigned *)arg && o->open == 1;
}

/* Send GET /hi on @fd until the server takes no more for 300 ms (it is not
 * reading), it closed, or 64 MiB went; the bytes sent. */
static size_t flood(int fd)
{
	size_t sent = 0;
	int stuck = 0;

	while (stuck < 30 && sent < 64u * 1024 * 1024) {
		ssize_t n = send(fd, get_hi, sizeof(get_hi) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n == (ssize_t)sizeof(get_hi) - 1)
			sent += (size_t)n, stuck = 0;
		else if (n < 0 && errno == EAGAIN)
			stuck++, usleep(10000);
		else
			break; /* closed already, or a part of one sent */
	}
	return sent;
}

static void nonreader_client(struct ht *h)
{
	static const char get_big[] = "GET /big HTTP/1.1\r\nHost: t\r\n\r\n";
	struct ht_live st;
	struct ht_conn c;
	unsigned want = 1;
	long rss0 = ht_rss_kb();
	size_t sent;

	/* 32 MiB of responses asked for, none read. */
	if (!conn_open(h, &c))
		return;
	for (int i = 0; i < 32; i++)
		gt_check_int_equal(ht_send_str(c.fd, get_big), 0);
	gt_check_int_equal(ht_wait_stats(h, &st, timed_out, &want, 5000), 1);
	gt_close_rst(c.fd);
	c.fd = -1;
	ht_conn_close(&c);
	/* Small responses, as many requests as the server takes in, none read. */
	if (!conn_open(h, &c))
		return;
	sent = flood(c.fd);
	want = 2;
	gt_check_int_equal(ht_wait_stats(h, &st, timed_out, &want, 5000), 1);
	print_message("a non-reader: %zu bytes of requests taken; RSS %ld -> %ld KiB\n", sent, rss0,
		      ht_rss_kb());
	gt_check_true(ht_rss_kb() - rss0 < 64 * 1024);
	gt_close_rst(c.fd);
	c.fd = -1;
	ht_conn_close(&c);
}

static void test_write_timeout(void **state)
{
	struct ht h;

	(void)state;
	init(&h);
	h.limits.write_timeout_ms = 500;
	assert_int_equal(giong_http_router_add(h.router, "GET", "/big", big, NULL), 0);
	ht_run(&h, nonreader_client);
	assert_int_equal(h.stats.write_timeouts, 2);
	assert_int_equal(h.stats.open, 0);
}

/* Shutdown with a peer that does not read (a batch stuck in flight, the
 * write timeout far away): the server waits for it, and ends as soon as the
 * peer goes away, within the grace period. (One that stays past the grace
 * period is cancelled with the serve task: giong_http_serve() then returns
 * -ECANCELED, as documented.) */
static void shutdown_nonreader_client(struct ht *h)
{
	struct ht_conn c;

	if (!conn_open(h, &c))
		return;
	flood(c.fd);
	giong_runtime_shutdown(h->rt);
	usleep(300 * 1000);
	gt_close_rst(c.fd);
	c.fd = -1;
	ht_conn_close(&c);
}

static void test_shutdown_nonreader(void **state)
{
	struct ht h;

	(void)state;
	init(&h);
	h.cfg.shutdown_grace_ms = 3000;
	ht_run(&h, shutdown_nonreader_client);
	assert_int_equal(h.stats.open, 0);
	assert_int_equal(h.stats.write_timeouts, 0);
}

/* ------------------------------------------------ the wrap hook */

static atomic_int wraps;

static int wrap_same(struct giong_stream *s, void *ctx, struct giong_stream **out)
{
	(void)ctx;
	atomic_fetch_add(&wraps, 1);
	*out = s;
	return 0;
}

static int wrap_fail(struct giong_stream *s, void *ctx, struct giong_stream **out)
{
	(void)s;
	(void)ctx;
	(void)out;
	atomic_fetch_add(&wraps, 1);
	return -EPROTO;
}

/* Outside the contract (0 or -errno): a positive value, one that looks like a status. */
static int wrap_positive(struct giong_stream *s, void *ctx, struct giong_stream **out)
{
	(void)s;
	(void)ctx;
	(void)out;
	atomic_fetch_add(&wraps, 1);
	return 400;
}

static void wrap_ok_client(struct ht *h)
{
	struct ht_conn c;

	for (int n = 0; n < 2; n++) {
		if (!conn_open(h, &c))
			return;
		gt_check_int_equal(ht_send_str(c.fd, get_hi), 0);
		read_hi(&c, false);
		gt_check_int_equal(ht_send_str(c.fd, get_hi), 0);
		read_hi(&c, false);
		ht_conn_close(&c);
	}
}

static void wrap_fail_client(struct ht *h)
{
	struct ht_conn c;

	for (int n = 0; n < 3; n++) {
		if (!conn_open(h, &c))
			return;
		ht_send_str(c.fd, get_hi); /* may fail: the server may be gone */
		gt_check_int_equal(ht_closed_within(&c, 2000), 1);
		ht_conn_close(&c);
	}
}

static void test_wrap(void **state)
{
	int fds = gt_count_fds();
	struct ht h;

	(void)state;
	atomic_store(&wraps, 0);
	init(&h);
	h.opts.wrap = wrap_same;
	ht_run(&h, wrap_ok_client);
	assert_int_equal(atomic_load(&wraps), 2);
	assert_int_equal(h.stats.responses[1], 4);

	/* A wrap that fails, and one outside its contract: closed, no byte sent. */
	for (int i = 0; i < 2; i++) {
		atomic_store(&wraps, 0);
		init(&h);
		h.opts.wrap = i ? wrap_positive : wrap_fail;
		ht_run(&h, wrap_fail_client);
		assert_int_equal(atomic_load(&wraps), 3);
		assert_int_equal(h.stats.accepted, 3);
		assert_int_equal(h.stats.requests, 0);
		assert_int_equal(h.stats.open, 0);
	}
	gt_assert_fds(fds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_many_connections),   cmocka_unit_test(test_graceful_shutdown),
		cmocka_unit_test(test_unix_socket),        cmocka_unit_test(test_serve_stream),
		cmocka_unit_test(test_connection_limit),   cmocka_unit_test(test_write_timeout),
		cmocka_unit_test(test_shutdown_nonreader), cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_shutdown_fresh),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
