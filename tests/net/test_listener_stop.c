/* SPDX-License-Identifier: MIT */
/*
 * test_listener_stop.c - giong_listener_stop(): a stopped TCP listener takes
 * no new connection (the other listener of its SO_REUSEPORT port gets every
 * one), still gives the ones it had accepted, then -ESHUTDOWN, also to a
 * task that was parked in accept; a stopped Unix listener refuses connects; an
 * inherited socket is not shut down (its other owner still listens);
 * stopping twice is fine, bad arguments are refused, nothing leaks; a listener
 * closed at once does not take the next one's connections.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "giong_test.h"

#include <giong/net.h>

#define CLIENTS 8

/* A non-blocking plain client connecting to @ga (loopback: the handshake is
 * done by the kernel at once). */
static int client(const struct giong_addr *ga)
{
	int c = socket(ga->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (c >= 0)
		connect(c, (const struct sockaddr *)&ga->ss, ga->len);
	return c;
}

/* Accept what @l has pending, without parking: the count. */
static int take_pending(struct giong_listener *l)
{
	int n = 0;

	while (giong_listener_pending(l) > 0) {
		struct giong_stream *s;

		if (!gt_check_int_equal(giong_listener_accept(l, &s), 0))
			break;
		giong_stream_close(s);
		n++;
	}
	return n;
}

/* Wait for @a and @b (may be NULL) to hold @want accepted connections
 * between them (5 s at most: a slow machine); whether they did. */
static bool wait_pending(struct giong_listener *a, struct giong_listener *b, int want)
{
	for (int waited = 0; waited < 5000; waited += 10) {
		int n = giong_listener_pending(a) + (b ? giong_listener_pending(b) : 0);

		if (n >= want)
			return true;
		giong_sleep_ms(10);
	}
	return false;
}

static intptr_t parked_acceptor(void *arg)
{
	struct giong_stream *s = NULL;
	int r = giong_listener_accept(arg, &s);

	giong_stream_close(s);
	return r;
}

static void tcp_main(unsigned worker, void *arg)
{
	struct giong_listener *a, *b;
	struct giong_addr ga;
	struct giong_task *t;
	int c[2 * CLIENTS], got, got_b;
	char text[64];
	intptr_t res;

	(void)worker;
	(void)arg;
	if (!gt_check_int_equal(giong_tcp_listen("127.0.0.1:0", NULL, &a), 0))
		return;
	gt_check_int_equal(giong_listener_addr(a, &ga), 0);
	giong_addr_format(&ga, text, sizeof(text));
	if (!gt_check_int_equal(giong_tcp_listen(text, NULL, &b), 0)) { /* the same port */
		giong_listener_close(a);
		return;
	}
	/* Before the stop: the kernel spreads clients over both. */
	for (int i = 0; i < CLIENTS; i++)
		c[i] = client(&ga);
	/* The multishot accepts take them (one left in a's queue at its stop
	 * would be lost). */
	gt_check_true(wait_pending(a, b, CLIENTS));
	gt_check_int_equal(giong_listener_stop(a), 0);
	gt_check_int_equal(giong_listener_stop(a), 0); /* again: nothing more */
	/* What a had accepted is still given, then the end. */
	got = take_pending(a);
	gt_check_int_equal(giong_listener_accept(a, &(struct giong_stream *){NULL}), -ESHUTDOWN);
	got_b = take_pending(b);
	gt_check_int_equal(got + got_b, CLIENTS);
	/* After it: every new client goes to b. */
	for (int i = CLIENTS; i < 2 * CLIENTS; i++)
		c[i] = client(&ga);
	gt_check_true(wait_pending(b, NULL, CLIENTS));
	gt_check_int_equal(giong_listener_pending(a), 0);
	gt_check_int_equal(take_pending(b), CLIENTS);
	/* A task parked in accept when its listener stops: -ESHUTDOWN. */
	gt_check_int_equal(giong_spawn(parked_acceptor, b, &t), 0);
	giong_sleep_ms(5);
	gt_check_int_equal(giong_listener_stop(b), 0);
	gt_check_int_equal(giong_join(t, &res), 0);
	gt_check_int_equal((int)res, -ESHUTDOWN);
	for (int i = 0; i < 2 * CLIENTS; i++)
		close(c[i]);
	gt_check_int_equal(giong_listener_close(a), 0);
	gt_check_int_equal(giong_listener_close(b), 0);
	gt_check_int_equal(giong_listener_stop(NULL), -EINVAL);
}

/* An inherited socket (two dups of one, as systemd's and a worker's) is not shut down by a
 * stop: the other copy still listens, and a connection made after the stop is accepted
 * through it. */
static void inherited_main(unsigned worker, void *arg)
{
	struct giong_listener *a, *b;
	struct giong_stream *s;
	struct giong_addr ga;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), other, on = 0, c;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(on);

	(void)worker;
	(void)arg;
	if (!gt_check_true(fd >= 0) ||
	    !gt_check_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0) ||
	    !gt_check_int_equal(listen(fd, 16), 0))
		return;
	other = dup(fd);
	if (!gt_check_int_equal(giong_listener_from_fd(fd, NULL, &a), 0))
		return;
	gt_check_int_equal(giong_listener_stop(a), 0);
	gt_check_int_equal(giong_listener_accept(a, &s), -ESHUTDOWN);
	gt_check_int_equal(getsockopt(other, SOL_SOCKET, SO_ACCEPTCONN, &on, &len), 0);
	gt_check_int_equal(on, 1); /* still listening for its other owner */
	gt_check_int_equal(giong_listener_close(a), 0);
	if (!gt_check_int_equal(giong_listener_from_fd(other, NULL, &b), 0))
		return;
	gt_check_int_equal(giong_listener_addr(b, &ga), 0);
	c = client(&ga);
	if (gt_check_int_equal(giong_listener_accept(b, &s), 0))
		giong_stream_close(s);
	close(c);
	gt_check_int_equal(giong_listener_close(b), 0);
}

static void unix_main(unsigned worker, void *arg)
{
	struct giong_listener *l;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char path[108];
	int c;

	(void)worker;
	(void)arg;
	snprintf(path, sizeof(path), "/tmp/giong-lstop-%d.sock", getpid());
	if (!gt_check_int_equal(giong_unix_listen(path, NULL, &l), 0))
		return;
	gt_check_int_equal(giong_listener_stop(l), 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	gt_check_int_equal(connect(c, (struct sockaddr *)&sa, sizeof(sa)), -1);
	gt_check_int_equal(errno, ECONNREFUSED);
	close(c);
	gt_check_int_equal(giong_listener_accept(l, &(struct giong_stream *){NULL}), -ESHUTDOWN);
	gt_check_int_equal(giong_listener_close(l), 0);
}

static void test_tcp(void **state)
{
	struct giong_config cfg = gt_config(1);
	int fds = gt_count_fds();

	(void)state;
	gt_run(&cfg, tcp_main, NULL, NULL);
	gt_assert_fds(fds);
}

static void test_inherited(void **state)
{
	struct giong_config cfg = gt_config(1);
	int fds = gt_count_fds();

	(void)state;
	gt_run(&cfg, inherited_main, NULL, NULL);
	gt_assert_fds(fds);
}

static void test_unix(void **state)
{
	struct giong_config cfg = gt_config(1);
	int fds = gt_count_fds();

	(void)state;
	gt_run(&cfg, unix_main, NULL, NULL);
	gt_assert_fds(fds);
}

/* A listener closed right after it was made (its multishot accept not yet
 * submitted), then another, which gets the same descriptor number: the new
 * one's accept must get its connection. It did not when the close was a
 * close(2) at once: the stale accept was submitted on the new socket. */
struct reopened {
	int rounds, accepted, ret;
};

static void reopened_main(unsigned w, void *arg)
{
	struct reopened *t = arg;

	(void)w;
	for (int i = 0; i < t->rounds && !t->ret; i++) {
		struct giong_listen_options o = {.no_reuseport = true};
		struct giong_listener *first, *l;
		struct giong_stream *c, *s;
		char addr[64];
		uint64_t saved;

		if ((t->ret = giong_tcp_listen("127.0.0.1:0", &o, &first)))
			return;
		giong_listener_close(first);
		if ((t->ret = giong_tcp_listen("127.0.0.1:0", &o, &l)))
			return;
		struct giong_addr a;

		giong_listener_addr(l, &a);
		snprintf(addr, sizeof(addr), "127.0.0.1:%d", giong_addr_port(&a));
		if (!(t->ret = giong_tcp_connect(addr, &c))) {
			saved = giong_deadline_in(5000);
			t->ret = giong_tcp_accept(l, &s);
			giong_deadline_restore(saved);
			if (!t->ret) {
				t->accepted++;
				giong_stream_close(s);
			}
			giong_stream_close(c);
		}
		giong_listener_close(l);
	}
}

static void test_reopened(void **state)
{
	struct giong_config c = gt_config(1);
	struct reopened t = {.rounds = 20};
	int fds = gt_count_fds();

	(void)state;
	gt_run(&c, reopened_main, &t, NULL);
	assert_int_equal(t.ret, 0);
	assert_int_equal(t.accepted, t.rounds);
	gt_assert_fds(fds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcp),
		cmocka_unit_test(test_unix),
		cmocka_unit_test(test_inherited),
		cmocka_unit_test(test_reopened),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
