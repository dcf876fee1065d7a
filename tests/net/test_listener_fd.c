/* SPDX-License-Identifier: MIT */
/*
 * test_listener_fd.c - giong_listener_from_fd(): listeners on sockets made
 * elsewhere (systemd's socket activation, a parent process): TCP over IPv4
 * and IPv6 and Unix sockets accept and serve; two workers share one socket
 * through dup(2); bad descriptors (closed, a pipe, a socket that does not
 * listen, a datagram socket) are refused and stay the caller's; the
 * descriptor is closed with the listener and nothing leaks.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "net_test.h"

#include <giong/net.h>

/* A listening socket made the way systemd makes one: socket, bind, listen. */
static int plain_listener(int family, struct sockaddr_storage *ss, socklen_t *len)
{
	int fd = socket(family, SOCK_STREAM, 0);

	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		a->sin_family = AF_INET;
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*len = sizeof(*a);
	} else if (family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_loopback;
		*len = sizeof(*a);
	} else {
		struct sockaddr_un *a = (struct sockaddr_un *)ss;

		a->sun_family = AF_UNIX;
		/* abstract: nothing to remove afterwards */
		snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "giong-lfd-%d", getpid());
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
				   strlen(a->sun_path + 1));
	}
	if (fd < 0 || bind(fd, (struct sockaddr *)ss, *len) || listen(fd, 64)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*len = sizeof(*ss);
	getsockname(fd, (struct sockaddr *)ss, len); /* the port the kernel chose */
	return fd;
}

struct serve_arg {
	struct giong_listener *l;
	int served;
};

/* Accept one connection, answer "ok" to its byte. */
static intptr_t serve_one(void *arg)
{
	struct serve_arg *a = arg;
	struct giong_stream *s;
	char b;

	if (!gt_check_int_equal(giong_listener_accept(a->l, &s), 0))
		return 0;
	if (gt_check_int_equal(giong_stream_read(s, &b, 1), 1) &&
	    gt_check_int_equal(giong_stream_write_all(s, "ok", 2), 2))
		a->served++;
	giong_stream_close(s);
	return 0;
}

static int family_of_case;

static void serve_main(unsigned worker, void *arg)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd = plain_listener(family_of_case, &ss, &len), c;
	struct serve_arg a = {0};
	struct giong_task *t;
	struct giong_addr ga;
	char buf[4] = {0};

	(void)worker;
	(void)arg;
	if (fd < 0) {
		if (family_of_case == AF_INET6)
			return; /* no IPv6 here: nothing to test */
		gt_check_fail_msg("plain listener: %s", strerror(errno));
		return;
	}
	if (!gt_check_int_equal(giong_listener_from_fd(fd, NULL, &a.l), 0)) {
		close(fd);
		return;
	}
	/* The address is the socket's own. */
	gt_check_int_equal(giong_listener_addr(a.l, &ga), 0);
	gt_check_int_equal(ga.ss.ss_family, family_of_case);
	gt_check_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	giong_spawn(serve_one, &a, &t);
	/* A plain client on the same address (connect(2) is immediate on
	 * loopback; the answer waits for the server task to run). */
	c = socket(family_of_case, SOCK_STREAM | SOCK_NONBLOCK, 0);
	gt_check_true(c >= 0);
	connect(c, (struct sockaddr *)&ss, len);
	giong_sleep_ms(5);
	gt_check_int_equal(write(c, "x", 1), 1);
	giong_join(t, NULL);
	gt_check_int_equal(a.served, 1);
	for (int i = 0; i < 100 && read(c, buf, 2) != 2; i++)
		giong_sleep_ms(1);
	gt_check_memory_equal(buf, "ok", 2);
	close(c);
	gt_check_int_equal(giong_listener_close(a.l), 0); /* closes fd */
}

static void run_family(int family)
{
	struct giong_config cfg = gt_config(1);
	int fds = gt_count_fds();

	family_of_case = family;
	gt_run(&cfg, serve_main, NULL, NULL);
	gt_assert_fds(fds);
}

static void test_tcp4(void **state)
{
	(void)state;
	run_family(AF_INET);
}

static void test_tcp6(void **state)
{
	(void)state;
	run_family(AF_INET6);
}

static void test_unix(void **state)
{
	(void)state;
	run_family(AF_UNIX);
}

/* --- one inherited socket, two workers ---------------------------------------------------------- */

static int shared_fd = -1;
/* One dup(2) per worker, made before the workers start: TSan does not see
 * the ring's closes, and took a dup() on one worker reusing the number of a
 * socket another had closed through the ring for a race. */
static int shared_dups[2] = {-1, -1};
static atomic_int shared_served;

static intptr_t serve_until(void *arg)
{
	struct giong_listener *l = arg;

	for (;;) {
		struct giong_stream *s;
		char b;

		if (giong_listener_accept(l, &s))
			return 0; /* closed: shutdown */
		if (giong_stream_read(s, &b, 1) == 1 && giong_stream_write_all(s, "ok", 2) == 2)
			atomic_fetch_add(&shared_served, 1);
		giong_stream_close(s);
	}
}

static void shared_main(unsigned worker, void *arg)
{
	struct giong_listener *l = NULL;
	struct giong_task *t;
	int fd = shared_dups[worker];

	(void)arg;
	if (!gt_check_int_equal(giong_listener_from_fd(fd, NULL, &l), 0)) {
		close(fd);
		return;
	}
	giong_spawn(serve_until, l, &t);
	if (worker == 0) {
		/* Worker 0's main task is the client: 40 connections, through the
		 * ring like any task, each answered by either worker. */
		struct giong_addr a;

		giong_listener_addr(l, &a);
		for (int i = 0; i < 40; i++) {
			struct giong_stream *c;
			char buf[2];

			if (!gt_check_int_equal(giong_tcp_connect_addr(&a, &c), 0))
				break;
			gt_check_int_equal(giong_stream_write_all(c, "x", 1), 1);
			gt_check_int_equal(nt_stream_read_exact(c, buf, 2), 2);
			giong_stream_close(c);
		}
		giong_shutdown();
	} else {
		struct giong_waitq q = {0};

		giong_waitq_wait(&q, GIONG_WAIT_SHUTDOWN); /* until worker 0 is done */
	}
	giong_listener_close(l); /* wakes serve_until */
	giong_join(t, NULL);
}

static void test_two_workers_share_one_socket(void **state)
{
	struct giong_config cfg = gt_config(2);
	struct sockaddr_storage ss;
	socklen_t len;
	int fds;

	(void)state;
	shared_fd = plain_listener(AF_INET, &ss, &len);
	assert_true(shared_fd >= 0);
	fds = gt_count_fds();
	for (int i = 0; i < 2; i++)
		assert_true((shared_dups[i] = dup(shared_fd)) >= 0);
	gt_run(&cfg, shared_main, NULL, NULL);
	assert_int_equal(atomic_load(&shared_served), 40);
	gt_assert_fds(fds); /* each worker's dup closed with its listener */
	close(shared_fd);
}

/* --- refusals ------------------------------------------------------------------------------------- */

static void refuse_main(unsigned worker, void *arg)
{
	struct giong_listener *l = (struct giong_listener *)1;
	int p[2], udp, idle;

	(void)worker;
	(void)arg;
	gt_check_int_equal(giong_listener_from_fd(-1, NULL, &l), -EBADF);
	gt_check_null(l);
	gt_check_int_equal(giong_listener_from_fd(3, NULL, NULL), -EINVAL);
	gt_check_int_equal(pipe(p), 0);
	gt_check_int_equal(giong_listener_from_fd(p[0], NULL, &l), -ENOTSOCK);
	close(p[0]);
	close(p[1]);
	gt_check_int_equal(giong_listener_from_fd(p[0], NULL, &l), -EBADF); /* closed now */
	udp = socket(AF_INET, SOCK_DGRAM, 0);
	gt_check_int_equal(giong_listener_from_fd(udp, NULL, &l), -EINVAL);
	idle = socket(AF_INET, SOCK_STREAM, 0); /* not listening */
	gt_check_int_equal(giong_listener_from_fd(idle, NULL, &l), -EINVAL);
	/* Refused descriptors are still the caller's, open. */
	gt_check_true(fcntl(udp, F_GETFD) >= 0 && fcntl(idle, F_GETFD) >= 0);
	close(udp);
	close(idle);
}

static void test_refusals(void **state)
{
	struct giong_config cfg = gt_config(1);
	struct giong_listener *l = (struct giong_listener *)1;
	int fds = gt_count_fds();

	(void)state;
	assert_int_equal(giong_listener_from_fd(0, NULL, &l),
			 GIONG_ENOTWORKER); /* a plain thread */
	gt_run(&cfg, refuse_main, NULL, NULL);
	gt_assert_fds(fds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_tcp4),
		cmocka_unit_test(test_tcp6),
		cmocka_unit_test(test_unix),
		cmocka_unit_test(test_two_workers_share_one_socket),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
