/* SPDX-License-Identifier: MIT */
/*
 * test_udp.c - UDP sockets: IPv4 and IPv6, connected sockets, cancellation
 * that loses no datagram, bursts in order, truncation (test_udp_pool.c has
 * the rest), and no descriptor left open.
 *
 * Fibers record what they see in a struct; the asserts run after the
 * runtime has ended (a CMocka failure must not longjmp off a fiber stack).
 */
#include "udp_test.h"

/* ------------------------------------------------ IPv4 and IPv6 round trip */

struct basic {
	int family;
	int bind_a, bind_b, a_port, b_port;
	ssize_t sent, got, empty_sent, empty_got, back_sent, back;
	char data[16], back_data[16];
	unsigned flags, back_flags;
	int from_port, from_family, back_from_port;
	long max_payload;
	int pool_free, close_a, close_b;
};

static void basic_main(unsigned w, void *arg)
{
	struct basic *r = arg;
	struct giong_udp *a, *b;
	struct giong_recvbuf *buf;
	struct giong_addr to, from;
	char tmp[16];

	(void)w;
	r->bind_a = giong_udp_bind(loop_any(r->family), NULL, &a);
	r->bind_b = giong_udp_bind(loop_any(r->family), NULL, &b);
	if (r->bind_a || r->bind_b)
		return;
	r->a_port = port_of(a);
	r->b_port = port_of(b);
	r->max_payload = giong_udp_max_payload();
	to = loop_addr(r->family, r->b_port);
	r->sent = giong_udp_send_to(a, "hello", 5, &to);
	r->got = giong_udp_recv_from(b, &buf, &from, &r->flags);
	if (r->got >= 0 && r->got <= (ssize_t)sizeof(r->data))
		memcpy(r->data, giong_recvbuf_data(buf), (size_t)r->got);
	giong_recvbuf_release(buf);
	r->from_port = giong_addr_port(&from);
	r->from_family = from.ss.ss_family;
	/* An empty datagram is a datagram. */
	r->empty_sent = giong_udp_send_to(a, "", 0, &to);
	r->empty_got = giong_udp_recv(b, &buf, NULL);
	giong_recvbuf_release(buf);
	/* Back to the source, read one-shot into our buffer. */
	r->back_sent = giong_udp_send_to(b, "world", 5, &from);
	r->back = giong_udp_read_from(a, tmp, sizeof(tmp), &from, &r->back_flags);
	if (r->back > 0)
		memcpy(r->back_data, tmp, (size_t)r->back);
	r->back_from_port = giong_addr_port(&from);
	r->close_a = giong_udp_close(a);
	r->close_b = giong_udp_close(b);
	r->pool_free = pool_all_free();
}

static void run_basic(int family)
{
	struct giong_config c = gt_config(1);
	struct basic r = {.family = family};
	int fds = gt_count_fds();

	gt_run(&c, basic_main, &r, NULL);
	assert_int_equal(r.bind_a, 0);
	assert_int_equal(r.bind_b, 0);
	assert_true(r.a_port > 0 && r.b_port > 0);
	assert_int_equal(r.max_payload, 4096 - 16 - (long)sizeof(struct sockaddr_storage));
	assert_int_equal(r.sent, 5);
	assert_int_equal(r.got, 5);
	assert_memory_equal(r.data, "hello", 5);
	assert_int_equal(r.flags, 0);
	assert_int_equal(r.from_family, family);
	assert_int_equal(r.from_port, r.a_port);
	assert_int_equal(r.empty_sent, 0);
	assert_int_equal(r.empty_got, 0);
	assert_int_equal(r.back_sent, 5);
	assert_int_equal(r.back, 5);
	assert_memory_equal(r.back_data, "world", 5);
	assert_int_equal(r.back_flags, 0);
	assert_int_equal(r.back_from_port, r.b_port);
	assert_int_equal(r.close_a, 0);
	assert_int_equal(r.close_b, 0);
	assert_int_equal(r.pool_free, 1);
	assert_int_equal(gt_count_fds(), fds);
}

static void test_ipv4(void **state)
{
	(void)state;
	run_basic(AF_INET);
}

static void test_ipv6(void **state)
{
	(void)state;
	if (!have_ipv6_loopback()) {
		print_message("no IPv6 loopback here: skipped\n");
		skip();
	}
	run_basic(AF_INET6);
}

/* ------------------------------------------------------ connected sockets */

struct conn {
	int err;
	ssize_t ping, pong, second, refused, after;
	char ping_d[8], pong_d[8], second_d[8], after_d[8];
	int conn_ab, conn_ba, conn_dead, conn_f;
	ssize_t direct_from_c, send_refused;
};

static ssize_t recv_copy(struct giong_udp *u, char *out, size_t cap)
{
	struct giong_recvbuf *b;
	ssize_t n = giong_udp_recv(u, &b, NULL);

	if (n >= 0) {
		memcpy(out, giong_recvbuf_data(b), (size_t)n < cap ? (size_t)n : cap);
		giong_recvbuf_release(b);
	}
	return n;
}

static void conn_main(unsigned w, void *arg)
{
	struct conn *r = arg;
	struct giong_udp *a, *b, *c, *d, *e, *f;
	struct giong_addr to;
	char text[64];
	uint64_t saved;
	int dead_port;

	(void)w;
	if ((r->err = giong_udp_bind("127.0.0.1:0", NULL, &a)) ||
	    (r->err = giong_udp_bind("127.0.0.1:0", NULL, &b)) ||
	    (r->err = giong_udp_bind("127.0.0.1:0", NULL, &c)) ||
	    (r->err = giong_udp_bind("127.0.0.1:0", NULL, &d)) ||
	    (r->err = giong_udp_bind("127.0.0.1:0", NULL, &e)) ||
	    (r->err = giong_udp_bind("127.0.0.1:0", NULL, &f)))
		return;
	snprintf(text, sizeof(text), "127.0.0.1:%d", port_of(b));
	r->conn_ab = giong_udp_connect(a, text);
	snprintf(text, sizeof(text), "127.0.0.1:%d", port_of(a));
	r->conn_ba = giong_udp_connect(b, text);
	giong_udp_send(a, "ping", 4);
	r->ping = giong_udp_read(b, r->ping_d, sizeof(r->ping_d), NULL);
	giong_udp_send(b, "pong", 4);
	r->pong = recv_copy(a, r->pong_d, sizeof(r->pong_d));
	/* A stranger's datagram never reaches a connected socket. */
	to = loop_addr(AF_INET, port_of(a));
	r->direct_from_c = giong_udp_send_to(c, "intrude", 7, &to);
	giong_udp_send(b, "second", 6);
	r->second = recv_copy(a, r->second_d, sizeof(r->second_d));

	/* A port nobody listens on: the ICMP error comes back once as
	 * -ECONNREFUSED, and the socket keeps working afterwards. Another
	 * process may bind the port once e let it go (no error then, the
	 * datagram taken: -ETIMEDOUT): another port, three tries. */
	for (int tries = 0; tries < 3; tries++) {
		if (tries && (r->err = giong_udp_bind("127.0.0.1:0", NULL, &e)))
			break;
		dead_port = port_of(e);
		giong_udp_close(e);
		snprintf(text, sizeof(text), "127.0.0.1:%d", dead_port);
		r->conn_dead = giong_udp_connect(d, text);
		r->send_refused = giong_udp_send(d, "x", 1);
		saved = giong_deadline_in(2000);
		r->refused = recv_copy(d, text, sizeof(text));
		giong_deadline_restore(saved);
		if (r->refused != -ETIMEDOUT)
			break;
	}
	snprintf(text, sizeof(text), "127.0.0.1:%d", port_of(f));
	r->conn_f = giong_udp_connect(d, text);
	to = loop_addr(AF_INET, port_of(d));
	giong_udp_send_to(f, "after", 5, &to);
	saved = giong_deadline_in(2000);
	r->after = recv_copy(d, r->after_d, sizeof(r->after_d));
	giong_deadline_restore(saved);

	giong_udp_close(a);
	giong_udp_close(b);
	giong_udp_close(c);
	giong_udp_close(d);
	giong_udp_close(f);
}

static void test_connected(void **state)
{
	struct giong_config c = gt_config(1);
	struct conn r;
	int fds = gt_count_fds();

	(void)state;
	memset(&r, 0, sizeof(r));
	gt_run(&c, conn_main, &r, NULL);
	assert_int_equal(r.err, 0);
	assert_int_equal(r.conn_ab, 0);
	assert_int_equal(r.conn_ba, 0);
	assert_int_equal(r.ping, 4);
	assert_memory_equal(r.ping_d, "ping", 4);
	assert_int_equal(r.pong, 4);
	assert_memory_equal(r.pong_d, "pong", 4);
	assert_int_equal(r.direct_from_c, 7);
	assert_int_equal(r.second, 6);
	assert_memory_equal(r.second_d, "second", 6);
	assert_int_equal(r.conn_dead, 0);
	assert_int_equal(r.send_refused, 1);
	assert_int_equal(r.refused, -ECONNREFUSED);
	assert_int_equal(r.conn_f, 0);
	assert_int_equal(r.after, 5);
	assert_memory_equal(r.after_d, "after", 5);
	assert_int_equal(gt_count_fds(), fds);
}

/* ------------------------------- cancellation around recv_from loses nothing */

#define CN 2000
#define CLEN 64

struct cancel {
	struct giong_udp *rx, *tx;
	struct giong_addr to;
	unsigned seed;
	int seen[CN];
	int received, sent, bad, other;
	int timeouts, cancels, via_read;
	int err, pool_free;
	bool gave_up;
};

static intptr_t cancel_sender(void *arg)
{
	struct cancel *r = arg;
	unsigned char p[CLEN];

	for (uint32_t i = 0; i < CN; i++) {
		/* Keep at most 32 in flight, so the kernel never drops one. */
		while (r->sent - r->received >= 32 && !r->gave_up)
			giong_sleep_ms(1);
		if (r->gave_up)
			break;
		fill(p, sizeof(p), i);
		if (giong_udp_send_to(r->tx, p, sizeof(p), &r->to) == CLEN)
			r->sent++;
		/* Pause now and then, so that some waits time out. */
		if (rnd(&r->seed) % 8 == 0)
			giong_sleep_ms(rnd(&r->seed) % 4);
		else if (rnd(&r->seed) % 4 == 0)
			giong_yield();
	}
	return 0;
}

static void cancel_count(struct cancel *r, const void *p, ssize_t n)
{
	long seq = check(p, (size_t)n, CLEN);

	if (seq < 0 || seq >= CN)
		r->bad++;
	else
		r->seen[seq]++;
	r->received++;
}

/* Receives with random short deadlines, sometimes through read_from (which
 * takes from the same queue once recv_from was used), until cancelled. */
static intptr_t cancel_receiver(void *arg)
{
	struct cancel *r = arg;

	while (r->received < CN) {
		uint64_t saved = giong_deadline_in(rnd(&r->seed) % 3);
		struct giong_recvbuf *b;
		unsigned char p[CLEN + 8];
		bool rd = rnd(&r->seed) % 4 == 0;
		ssize_t n;

		if (rd)
			n = giong_udp_read_from(r->rx, p, sizeof(p), NULL, NULL);
		else
			n = giong_udp_recv_from(r->rx, &b, NULL, NULL);
		giong_deadline_restore(saved);
		if (n >= 0) {
			cancel_count(r, rd ? (const void *)p : giong_recvbuf_data(b), n);
			r->via_read += rd;
			if (!rd)
				giong_recvbuf_release(b);
		} else if (n == -ETIMEDOUT) {
			r->timeouts++;
		} else if (n == -ECANCELED) {
			r->cancels++;
			return 0;
		} else {
			r->other++;
			return 0;
		}
	}
	return 0;
}

static void cancel_main(unsigned w, void *arg)
{
	struct cancel *r = arg;
	struct giong_task *s;
	uint64_t end;

	(void)w;
	if ((r->err = giong_udp_bind("127.0.0.1:0", NULL, &r->rx)) ||
	    (r->err = giong_udp_bind("127.0.0.1:0", NULL, &r->tx)))
		return;
	r->to = loop_addr(AF_INET, port_of(r->rx));
	giong_spawn(cancel_sender, r, &s);
	end = giong_now_ms() + 20000;
	while (r->received < CN && giong_now_ms() < end) {
		struct giong_task *t;

		giong_spawn(cancel_receiver, r, &t);
		/* Cancel at a random moment: before it ran, while parked, or
		 * just after a datagram arrived. */
		switch (rnd(&r->seed) % 3) {
		case 0:
			break;
		case 1:
			giong_yield();
			break;
		default:
			giong_sleep_ms(rnd(&r->seed) % 3);
		}
		giong_task_cancel(t);
		giong_join(t, NULL);
	}
	r->gave_up = r->received < CN;
	giong_join(s, NULL);
	giong_udp_close(r->rx);
	giong_udp_close(r->tx);
	r->pool_free = pool_all_free();
}

static void test_cancel_loses_nothing(void **state)
{
	struct giong_config c = gt_config(1);
	struct cancel *r = calloc(1, sizeof(*r));
	int fds = gt_count_fds();

	(void)state;
	r->seed = 4242;
	gt_run(&c, cancel_main, r, NULL);
	print_message("datagrams %d: timed out %d, cancelled %d, via read_from %d\n", r->received,
		      r->timeouts, r->cancels, r->via_read);
	assert_int_equal(r->err, 0);
	assert_false(r->gave_up);
	assert_int_equal(r->sent, CN);
	assert_int_equal(r->received, CN);
	assert_int_equal(r->bad, 0);
	assert_int_equal(r->other, 0);
	for (int i = 0; i < CN; i++)
		assert_int_equal(r->seen[i], 1);
	assert_true(r->timeouts > 0 && r->cancels > 0 && r->via_read > 0);
	assert_int_equal(r->pool_free, 1);
	assert_int_equal(gt_count_fds(), fds);
	free(r);
}

/* ------------------------------------------------- 64 in a burst, in order */

#define BN 64
#define BLEN 200

struct burst {
	struct giong_udp *rx, *tx;
	int err, got, in_order, bad;
	int pool_free;
};

static intptr_t burst_receiver(void *arg)
{
	struct burst *r = arg;

	for (int i = 0; i < BN; i++) {
		struct giong_recvbuf *b;
		uint64_t saved = giong_deadline_in(5000);
		ssize_t n = giong_udp_recv_from(r->rx, &b, NULL, NULL);
		long seq;

		giong_deadline_restore(saved);
		if (n < 0)
			break;
		seq = check(giong_recvbuf_data(b), (size_t)n, BLEN);
		giong_recvbuf_release(b);
		r->got++;
		if (seq < 0)
			r->bad++;
		else if (seq == i)
			r->in_order++;
	}
	return 0;
}

static void burst_main(unsigned w, void *arg)
{
	struct burst *r = arg;
	struct giong_task *t;
	struct giong_addr to;
	unsigned char p[BLEN];

	(void)w;
	if ((r->err = giong_udp_bind("127.0.0.1:0", NULL, &r->rx)) ||
	    (r->err = giong_udp_bind("127.0.0.1:0", NULL, &r->tx)))
		return;
	to = loop_addr(AF_INET, port_of(r->rx));
	giong_spawn(burst_receiver, r, &t);
	giong_yield(); /* the receiver parks: the multishot is armed */
	for (uint32_t i = 0; i < BN; i++) {
		fill(p, sizeof(p), i);
		giong_udp_send_to(r->tx, p, sizeof(p), &to); /* no yield between */
	}
	giong_join(t, NULL);
	giong_udp_close(r->rx);
	giong_udp_close(r->tx);
	r->pool_free = pool_all_free();
}

static void test_burst_in_order(void **state)
{
	struct giong_config c = gt_config(1);
	struct burst r;
	int fds = gt_count_fds();

	(void)state;
	memset(&r, 0, sizeof(r));
	gt_run(&c, burst_main, &r, NULL);
	assert_int_equal(r.err, 0);
	assert_int_equal(r.got, BN);
	assert_int_equal(r.bad, 0);
	assert_int_equal(r.in_order, BN);
	assert_int_equal(r.pool_free, 1);
	assert_int_equal(gt_count_fds(), fds);
}

/* ------------------------------------------------------------- truncation */

struct trunc {
	int err;
	long max;
	ssize_t big, exact, small_read, whole_read, queued_read, huge_read;
	unsigned big_f, exact_f, small_f, whole_f, queued_f, huge_f;
	int big_ok, exact_ok, small_ok, whole_ok, queued_ok, huge_ok;
};

static void trunc_main(unsigned w, void *arg)
{
	struct trunc *r = arg;
	struct giong_udp *rx, *rx2, *tx;
	struct giong_recvbuf *b;
	struct giong_addr to, to2;
	unsigned char *p, *q;
	size_t plen;

	(void)w;
	if ((r->err = giong_udp_bind("127.0.0.1:0", NULL, &rx)) ||
	    (r->err = giong_udp_bind("127.0.0.1:0", NULL, &rx2)) ||
	    (r->err = giong_udp_bind("127.0.0.1:0", NULL, &tx)))
		return;
	r->max = giong_udp_max_payload();
	plen = (size_t)r->max + 100;
	p = malloc(plen);
	q = malloc(plen);
	fill(p, plen, 7);
	to = loop_addr(AF_INET, port_of(rx));
	to2 = loop_addr(AF_INET, port_of(rx2));

	/* Through a pool buffer: cut at max_payload and flagged. */
	giong_udp_send_to(tx, p, plen, &to);
	r->big = giong_udp_recv_from(rx, &b, NULL, &r->big_f);
	r->big_ok = r->big == r->max && !memcmp(giong_recvbuf_data(b), p, (size_t)r->max);
	giong_recvbuf_release(b);
	giong_udp_send_to(tx, p, (size_t)r->max, &to);
	r->exact = giong_udp_recv_from(rx, &b, NULL, &r->exact_f);
	r->exact_ok = r->exact == r->max && !memcmp(giong_recvbuf_data(b), p, (size_t)r->max);
	giong_recvbuf_release(b);
	/* read_from after recv_from takes from the queue: cut to our buffer. */
	giong_udp_send_to(tx, p, 100, &to);
	r->queued_read = giong_udp_read_from(rx, q, 10, NULL, &r->queued_f);
	r->queued_ok = r->queued_read == 10 && !memcmp(q, p, 10);

	/* One-shot read_from on a socket that never used recv_from. */
	giong_udp_send_to(tx, p, 100, &to2);
	r->small_read = giong_udp_read_from(rx2, q, 10, NULL, &r->small_f);
	r->small_ok = r->small_read == 10 && !memcmp(q, p, 10);
	giong_udp_send_to(tx, p, 100, &to2);
	r->whole_read = giong_udp_read(rx2, q, plen, &r->whole_f);
	r->whole_ok = r->whole_read == 100 && !memcmp(q, p, 100);
	/* The caller's buffer is not bound by the pool's size. */
	giong_udp_send_to(tx, p, plen, &to2);
	r->huge_read = giong_udp_read(rx2, q, plen, &r->huge_f);
	r->huge_ok = r->huge_read == (ssize_t)plen && !memcmp(q, p, plen);

	free(p);
	free(q);
	giong_udp_close(rx);
	giong_udp_close(rx2);
	giong_udp_close(tx);
}

static void test_truncation(void **state)
{
	struct giong_config c = gt_config(1);
	struct trunc r;
	int fds = gt_count_fds();

	(void)state;
	memset(&r, 0, sizeof(r));
	gt_run(&c, trunc_main, &r, NULL);
	assert_int_equal(r.err, 0);
	assert_true(r.max > 0);
	assert_int_equal(r.big, r.max);
	assert_int_equal(r.big_f, GIONG_UDP_TRUNCATED);
	assert_true(r.big_ok);
	assert_int_equal(r.exact, r.max);
	assert_int_equal(r.exact_f, 0);
	assert_true(r.exact_ok);
	assert_int_equal(r.queued_read, 10);
	assert_int_equal(r.queued_f, GIONG_UDP_TRUNCATED);
	assert_true(r.queued_ok);
	assert_int_equal(r.small_read, 10);
	assert_int_equal(r.small_f, GIONG_UDP_TRUNCATED);
	assert_true(r.small_ok);
	assert_int_equal(r.whole_read, 100);
	assert_int_equal(r.whole_f, 0);
	assert_true(r.whole_ok);
	assert_int_equal(r.huge_read, r.max + 100);
	assert_int_equal(r.huge_f, 0);
	assert_true(r.huge_ok);
	assert_int_equal(gt_count_fds(), fds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4),       cmocka_unit_test(test_ipv6),
		cmocka_unit_test(test_connected),  cmocka_unit_test(test_burst_in_order),
		cmocka_unit_test(test_truncation), cmocka_unit_test(test_cancel_loses_nothing),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
