/* SPDX-License-Identifier: MIT */
/*
 * test_udp_pool.c - UDP sockets under pressure and at the edges: 2,000
 * datagrams through a pool of one buffer, three workers on one port
 * (SO_REUSEPORT), shutdown waking a parked receive, bad input, and no
 * descriptor left open.
 *
 * Fibers record what they see in a struct; the asserts run after the
 * runtime has ended (a CMocka failure must not longjmp off a fiber stack).
 */
#include "udp_test.h"

/* ------------------------------------------- 2,000 datagrams through 1 buffer */

#define ON 2000
#define OLEN 48

struct one {
	struct giong_udp *rx, *tx;
	struct giong_addr to;
	int err, sent, received, in_order, bad, recv_err;
	int total_bufs, pool_free;
	uint64_t sqes;
};

static intptr_t one_sender(void *arg)
{
	struct one *r = arg;
	unsigned char p[OLEN];

	for (uint32_t i = 0; i < ON && !r->recv_err; i++) {
		while (r->sent - r->received >= 16 && !r->recv_err)
			giong_sleep_ms(1);
		fill(p, sizeof(p), i);
		if (giong_udp_send_to(r->tx, p, sizeof(p), &r->to) == OLEN)
			r->sent++;
	}
	return 0;
}

static void one_main(unsigned w, void *arg)
{
	struct one *r = arg;
	struct giong_task *s;
	struct giong_stats st;

	(void)w;
	giong_stats(&st);
	r->total_bufs = (int)st.recvbufs_total;
	if ((r->err = giong_udp_bind("127.0.0.1:0", NULL, &r->rx)) ||
	    (r->err = giong_udp_bind("127.0.0.1:0", NULL, &r->tx)))
		return;
	r->to = loop_addr(AF_INET, port_of(r->rx));
	giong_spawn(one_sender, r, &s);
	while (r->received < ON) {
		struct giong_recvbuf *b;
		uint64_t saved = giong_deadline_in(5000);
		ssize_t n = giong_udp_recv_from(r->rx, &b, NULL, NULL);
		long seq;

		giong_deadline_restore(saved);
		if (n < 0) {
			r->recv_err = (int)n;
			break;
		}
		seq = check(giong_recvbuf_data(b), (size_t)n, OLEN);
		giong_recvbuf_release(b); /* the only buffer: the receive re-arms */
		if (seq < 0)
			r->bad++;
		else if (seq == r->received)
			r->in_order++;
		r->received++;
	}
	giong_join(s, NULL);
	giong_udp_close(r->rx);
	giong_udp_close(r->tx);
	r->pool_free = pool_all_free();
	giong_stats(&st);
	r->sqes = st.sqes_submitted;
}

static void test_one_buffer(void **state)
{
	struct giong_config c = gt_config(1);
	struct one r;
	int fds = gt_count_fds();

	(void)state;
	memset(&r, 0, sizeof(r));
	c.recv_buffers = 1;
	gt_run(&c, one_main, &r, NULL);
	/* About one submission per send plus one re-arm per pool refill. */
	print_message("SQEs for %d datagrams through one buffer: %llu\n", ON,
		      (unsigned long long)r.sqes);
	assert_int_equal(r.err, 0);
	assert_int_equal(r.total_bufs, 1);
	assert_int_equal(r.recv_err, 0);
	assert_int_equal(r.sent, ON);
	assert_int_equal(r.received, ON);
	assert_int_equal(r.bad, 0);
	assert_int_equal(r.in_order, ON);
	assert_int_equal(r.pool_free, 1);
	assert_int_equal(gt_count_fds(), fds);
}

/* ---------------------------------------------- three workers on one port */

#define RW 3
#define RN 600
#define RSRC 48

struct rport {
	int port;
	int probe; /* the port's first socket (SO_REUSEPORT), until all bound */
	atomic_int bound, total, send_err;
	atomic_int seen[RN];
	int per_worker[RW], bind_err[RW], recv_err[RW], sent;
};

static intptr_t rport_sender(void *arg)
{
	struct rport *r = arg;
	struct giong_udp *src[RSRC];
	struct giong_addr to = loop_addr(AF_INET, r->port);
	unsigned char p[32];
	uint64_t end = giong_now_ms() + 5000;
	int n = 0;

	while (atomic_load(&r->bound) < RW && giong_now_ms() < end)
		giong_sleep_ms(1);
	/* The workers have the port: the probe goes before it takes a datagram. */
	close(r->probe);
	r->probe = -1;
	/* Many source ports, so that the kernel's hash spreads them. */
	for (; n < RSRC; n++)
		if (giong_udp_bind("127.0.0.1:0", NULL, &src[n]))
			break;
	for (uint32_t i = 0; i < RN && n == RSRC; i++) {
		while ((int)i - atomic_load(&r->total) >= 64 && giong_now_ms() < end + 10000)
			giong_sleep_ms(1);
		fill(p, sizeof(p), i);
		if (giong_udp_send_to(src[i % RSRC], p, sizeof(p), &to) == sizeof(p))
			r->sent++;
		else
			atomic_fetch_add(&r->send_err, 1);
	}
	while (n > 0)
		giong_udp_close(src[--n]);
	return 0;
}

static void rport_main(unsigned w, void *arg)
{
	struct rport *r = arg;
	struct giong_udp_options o = {.reuseport = true};
	struct giong_task *s = NULL;
	struct giong_udp *u;
	char text[64];
	uint64_t end = giong_now_ms() + 20000;

	snprintf(text, sizeof(text), "127.0.0.1:%d", r->port);
	r->bind_err[w] = giong_udp_bind(text, &o, &u);
	atomic_fetch_add(&r->bound, 1);
	if (r->bind_err[w])
		return;
	if (w == 0)
		giong_spawn(rport_sender, r, &s);
	while (atomic_load(&r->total) < RN && giong_now_ms() < end) {
		struct giong_recvbuf *b;
		uint64_t saved = giong_deadline_in(20);
		ssize_t n = giong_udp_recv_from(u, &b, NULL, NULL);
		long seq;

		giong_deadline_restore(saved);
		if (n == -ETIMEDOUT)
			continue;
		if (n < 0) {
			r->recv_err[w] = (int)n;
			break;
		}
		seq = check(giong_recvbuf_data(b), (size_t)n, 32);
		giong_recvbuf_release(b);
		if (seq >= 0 && seq < RN)
			atomic_fetch_add(&r->seen[seq], 1);
		r->per_worker[w]++;
		atomic_fetch_add(&r->total, 1);
	}
	if (s)
		giong_join(s, NULL);
	giong_udp_close(u);
}

/* A port free on 127.0.0.1, held by a socket with SO_REUSEPORT in *@fd (the
 * workers join it; nobody else can take the port before they did): the port
 * or -1. */
static int free_udp_port(int *fd)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int port = -1, one = 1;

	*fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (*fd >= 0 && !setsockopt(*fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) &&
	    !bind(*fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(*fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	return port;
}

static void test_reuseport_three_workers(void **state)
{
	struct giong_config c = gt_config(RW);
	struct rport *r = calloc(1, sizeof(*r));
	int fds = gt_count_fds();

	(void)state;
	if (RUNNING_ON_VALGRIND) {
		/* valgrind runs one thread at a time: workers parked in the
		 * kernel starve the others, and the test says nothing. */
		print_message("several workers under valgrind: skipped\n");
		free(r);
		skip();
	}
	r->port = free_udp_port(&r->probe);
	assert_true(r->port > 0);
	gt_run(&c, rport_main, r, NULL);
	if (r->probe >= 0)
		close(r->probe); /* no sender ran */
	print_message("per worker: %d %d %d\n", r->per_worker[0], r->per_worker[1],
		      r->per_worker[2]);
	for (int w = 0; w < RW; w++) {
		assert_int_equal(r->bind_err[w], 0);
		assert_int_equal(r->recv_err[w], 0);
		assert_true(r->per_worker[w] > 0);
	}
	assert_int_equal(r->send_err, 0);
	assert_int_equal(r->sent, RN);
	assert_int_equal(r->total, RN);
	for (int i = 0; i < RN; i++)
		assert_int_equal(r->seen[i], 1);
	assert_int_equal(gt_count_fds(), fds);
	free(r);
}

/* ----------------------------------------------------------- shutdown */

struct sdown {
	int err, count;
	ssize_t last;
};

static intptr_t sdown_receiver(void *arg)
{
	struct giong_udp *u = ((void **)arg)[0];
	struct sdown *r = ((void **)arg)[1];
	struct giong_recvbuf *b;

	while ((r->last = giong_udp_recv_from(u, &b, NULL, NULL)) >= 0) {
		giong_recvbuf_release(b);
		r->count++;
	}
	return 0;
}

static void sdown_main(unsigned w, void *arg)
{
	struct sdown *r = arg;
	struct giong_udp *u, *tx;
	struct giong_task *t;
	struct giong_addr to;
	void *pair[2];

	(void)w;
	if ((r->err = giong_udp_bind("127.0.0.1:0", NULL, &u)) ||
	    (r->err = giong_udp_bind("127.0.0.1:0", NULL, &tx)))
		return;
	pair[0] = u;
	pair[1] = r;
	to = loop_addr(AF_INET, port_of(u));
	giong_spawn(sdown_receiver, pair, &t);
	for (int i = 0; i < 3; i++)
		giong_udp_send_to(tx, "abc", 3, &to);
	giong_sleep_ms(5);
	giong_shutdown();
	giong_join(t, NULL);
	giong_udp_close(u);
	giong_udp_close(tx);
}

static void test_shutdown_wakes_recv(void **state)
{
	struct giong_config c = gt_config(1);
	struct sdown r;
	int fds = gt_count_fds();

	(void)state;
	memset(&r, 0, sizeof(r));
	gt_run(&c, sdown_main, &r, NULL);
	assert_int_equal(r.err, 0);
	assert_int_equal(r.count, 3);
	assert_int_equal(r.last, GIONG_ESHUTDOWN);
	assert_int_equal(gt_count_fds(), fds);
}

/* -------------------------------------------------------------- bad input */

#define NBAD 40

struct bad {
	long got[NBAD], want[NBAD];
	int line[NBAD];
	int n;
	ssize_t bcast_on;
};

#define CHECK(r, expr, w)                                                                          \
	do {                                                                                       \
		(r)->got[(r)->n] = (long)(expr);                                                   \
		(r)->want[(r)->n] = (w);                                                           \
		(r)->line[(r)->n++] = __LINE__;                                                    \
	} while (0)

static void bad_main(unsigned w, void *arg)
{
	struct bad *r = arg;
	struct giong_udp *u = NULL, *v = NULL, *bc = NULL;
	struct giong_udp_options bo = {.broadcast = true};
	struct giong_recvbuf *b;
	struct giong_addr to, odd;
	char buf[8], text[64];
	static char huge[70000];
	uint64_t saved;

	(void)w;
	CHECK(r, giong_udp_bind(NULL, NULL, &u), -EINVAL);
	CHECK(r, giong_udp_bind("nonsense", NULL, &u), -EINVAL);
	CHECK(r, giong_udp_bind("127.0.0.1:70000", NULL, &u), -EINVAL);
	CHECK(r, giong_udp_bind("::1:0", NULL, &u), -EINVAL);
	CHECK(r, giong_udp_bind("127.0.0.1:0", NULL, NULL), -EINVAL);
	CHECK(r, giong_udp_bind("127.0.0.1:0", NULL, &u), 0);
	snprintf(text, sizeof(text), "127.0.0.1:%d", port_of(u));
	CHECK(r, giong_udp_bind(text, NULL, &v), -EADDRINUSE);
	CHECK(r, giong_udp_connect(NULL, "127.0.0.1:1"), -EINVAL);
	CHECK(r, giong_udp_connect(u, NULL), -EINVAL);
	CHECK(r, giong_udp_connect(u, "junk:port"), -EINVAL);
	CHECK(r, giong_udp_recv_from(NULL, &b, NULL, NULL), -EINVAL);
	CHECK(r, giong_udp_recv_from(u, NULL, NULL, NULL), -EINVAL);
	CHECK(r, giong_udp_recv(NULL, &b, NULL), -EINVAL);
	CHECK(r, giong_udp_read_from(u, buf, 0, NULL, NULL), -EINVAL);
	CHECK(r, giong_udp_read_from(u, NULL, 8, NULL, NULL), -EINVAL);
	CHECK(r, giong_udp_read_from(NULL, buf, 8, NULL, NULL), -EINVAL);
	CHECK(r, giong_udp_read(u, buf, 0, NULL), -EINVAL);
	to = loop_addr(AF_INET, port_of(u));
	CHECK(r, giong_udp_send_to(u, "x", 1, NULL), -EINVAL);
	CHECK(r, giong_udp_send_to(NULL, "x", 1, &to), -EINVAL);
	CHECK(r, giong_udp_send_to(u, NULL, 1, &to), -EINVAL);
	odd = to;
	odd.len = 0;
	CHECK(r, giong_udp_send_to(u, "x", 1, &odd), -EINVAL);
	odd.len = sizeof(odd.ss) + 1;
	CHECK(r, giong_udp_send_to(u, "x", 1, &odd), -EINVAL);
	memset(&odd, 0, sizeof(odd));
	odd.ss.ss_family = AF_UNIX;
	odd.len = sizeof(struct sockaddr_un);
	CHECK(r, giong_udp_send_to(u, "x", 1, &odd), -EINVAL);
	CHECK(r, giong_udp_send_to(u, huge, sizeof(huge), &to), -EMSGSIZE);
	CHECK(r, giong_udp_send(u, "x", 1), -EDESTADDRREQ);
	CHECK(r, giong_udp_send(u, NULL, 1), -EINVAL);
	CHECK(r, giong_udp_send(NULL, "x", 1), -EINVAL);
	CHECK(r, giong_udp_local_addr(NULL, &to), -EINVAL);
	CHECK(r, giong_udp_local_addr(u, NULL), -EINVAL);
	/* Broadcast needs the option. */
	giong_addr_parse("255.255.255.255:9", &to);
	CHECK(r, giong_udp_send_to(u, "x", 1, &to), -EACCES);
	CHECK(r, giong_udp_bind("127.0.0.1:0", &bo, &bc), 0);
	r->bcast_on = giong_udp_send_to(bc, "x", 1, &to);
	/* Nothing arrives: the deadline ends the wait, nothing else. */
	saved = giong_deadline_in(5);
	CHECK(r, giong_udp_recv_from(u, &b, NULL, NULL), -ETIMEDOUT);
	CHECK(r, giong_udp_read_from(bc, buf, sizeof(buf), NULL, NULL), -ETIMEDOUT);
	giong_deadline_restore(saved);
	CHECK(r, giong_udp_close(NULL), -EINVAL);
	CHECK(r, giong_udp_close(u), 0);
	CHECK(r, giong_udp_close(bc), 0);
}

static void test_bad_input(void **state)
{
	struct giong_config c = gt_config(1);
	struct bad r;
	struct giong_udp *u = NULL;
	int fds = gt_count_fds();

	(void)state;
	memset(&r, 0, sizeof(r));
	/* Outside a worker. */
	assert_int_equal(giong_udp_bind("127.0.0.1:0", NULL, &u), GIONG_ENOTWORKER);
	assert_null(u);
	assert_int_equal(giong_udp_max_payload(), GIONG_ENOTWORKER);
	assert_int_equal(giong_udp_close(NULL), -EINVAL);
	gt_run(&c, bad_main, &r, NULL);
	for (int i = 0; i < r.n; i++) {
		if (r.got[i] != r.want[i])
			print_error("line %d: got %ld (%s), want %ld\n", r.line[i], r.got[i],
				    giong_strerror((int)r.got[i]), r.want[i]);
		assert_int_equal(r.got[i], r.want[i]);
	}
	/* With SO_BROADCAST the kernel lets it through (or has no route). */
	assert_true(r.bcast_on != -EACCES);
	assert_true(strlen(giong_strerror(-EINVAL)) > 0);
	assert_int_equal(gt_count_fds(), fds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_buffer),
		cmocka_unit_test(test_reuseport_three_workers),
		cmocka_unit_test(test_shutdown_wakes_recv),
		cmocka_unit_test(test_bad_input),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
