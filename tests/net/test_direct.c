/* SPDX-License-Identifier: MIT */
/*
 * test_direct.c - TCP connections accepted into the worker's table of direct
 * descriptors (tcp.h, "Direct descriptors"): they echo (multishot receive,
 * one-shot read, write, writev, splice from a pipe, peek, shutdown) and hold
 * no descriptor of the process; the questions that need a descriptor get the
 * documented answers; a table near full makes regular descriptors, counted,
 * and direct ones again once there is room; close under parked tasks frees
 * every slot; giong_stream_fd_install() gives one a descriptor (Linux 6.8+);
 * regular_fds, GIONG_DIRECT_FILES=off and the default configuration (no
 * table) give regular ones. On
 * the epoll tier, and before Linux 6.13 (no table: direct.c), every
 * connection is regular and the same calls work.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "giong_test.h"
#include "net_test.h"

#include <giong/net.h>

#define CONNS 4

/* Whether workers must have a table here: an io_uring tier on Linux 6.13+,
 * where a closed slot is released at once (core's direct.c probes it; before,
 * there is no table and every socket is regular). */
static bool expect_table(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (gt_tier_epoll() || uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return false;
	return major > 6 || (major == 6 && minor >= 13);
}

/* A blocking plain client connected to @l's port. */
static int plain_client(struct giong_listener *l)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)nt_listener_port(l));
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* @n bytes from plain socket @fd (blocking, from a task: loopback data that
 * was sent before). */
static bool plain_read(int fd, char *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = recv(fd, buf + got, n - got, 0);

		if (r <= 0)
			return false;
		got += (size_t)r;
	}
	return true;
}

/* Wait (a few ticks, bounded) until the worker counts @want slots used. */
static void wait_used(uint32_t want)
{
	struct giong_stats st;

	for (int i = 0; i < 200; i++) {
		giong_stats(&st);
		if (st.direct_used == want)
			return;
		giong_sleep_ms(1);
	}
	gt_check_int_equal(st.direct_used, want);
}

/* One accepted stream: everything a user does with it. */
static void exercise(struct giong_stream *s, int cfd, bool direct)
{
	struct giong_recvbuf *b;
	struct giong_addr a;
	struct iovec iov[2] = {{"wri", 3}, {"tev", 3}};
	char buf[32];
	ssize_t w;
	int p[2];

	/* peek, then read what was peeked */
	gt_check_int_equal(send(cfd, "peek", 4, 0), 4);
	gt_check_int_equal(giong_stream_peek(s, buf, 4), 4);
	/* (a read may come back short under a fault plan: docs/testing.md) */
	gt_check_int_equal(nt_stream_read_exact(s, buf, 4), 4);
	gt_check_memory_equal(buf, "peek", 4);
	/* multishot receive, echoed with write_all */
	gt_check_int_equal(send(cfd, "hello", 5, 0), 5);
	gt_check_int_equal(giong_stream_recv(s, &b), 5);
	gt_check_int_equal(giong_stream_write_all(s, giong_recvbuf_data(b), 5), 5);
	giong_recvbuf_release(b);
	gt_check_true(plain_read(cfd, buf, 5));
	gt_check_memory_equal(buf, "hello", 5);
	/* writev sends once: a short count (a fault plan's) is not an error */
	w = giong_stream_writev(s, iov, 2);
	gt_check_true(w > 0 && w <= 6);
	if (w > 0 && w < 6)
		gt_check_int_equal(giong_stream_write_all(s, &"writev"[w], (size_t)(6 - w)), 6 - w);
	gt_check_true(plain_read(cfd, buf, 6));
	gt_check_memory_equal(buf, "writev", 6);
	/* a pipe's bytes into the socket */
	gt_check_int_equal(giong_stream_can_splice(s), 1);
	if (gt_check_int_equal(pipe(p), 0)) {
		gt_check_int_equal(write(p[1], "spliced", 7), 7);
		gt_check_int_equal(giong_stream_splice(s, p[0], 7), 7);
		gt_check_true(plain_read(cfd, buf, 7));
		gt_check_memory_equal(buf, "spliced", 7);
		close(p[0]);
		close(p[1]);
	}
	/* what needs a descriptor */
	if (direct) {
		gt_check_int_equal(giong_stream_fd(s), -EOPNOTSUPP);
		gt_check_int_equal(giong_stream_peer_addr(s, &a), -EOPNOTSUPP);
		gt_check_int_equal(giong_stream_local_addr(s, &a), -EOPNOTSUPP);
		gt_check_int_equal(giong_stream_splice_fd(s), -ENOENT);
		gt_check_int_equal(giong_tcp_set_nodelay(s, true), -EOPNOTSUPP);
	} else {
		gt_check_true(giong_stream_fd(s) >= 0);
		gt_check_int_equal(giong_stream_peer_addr(s, &a), 0);
		gt_check_int_equal(giong_stream_splice_fd(s), giong_stream_fd(s));
		gt_check_int_equal(giong_tcp_set_nodelay(s, true), 0);
	}
	/* shutdown: the peer sees the end */
	gt_check_int_equal(giong_stream_shutdown(s, SHUT_WR), 0);
	gt_check_int_equal(recv(cfd, buf, sizeof(buf), 0), 0);
}

static void echo_main(unsigned w, void *arg)
{
	struct giong_listen_options lo = {.regular_fds = *(bool *)arg};
	struct giong_stream *s[CONNS];
	struct giong_listener *l;
	int cfd[CONNS], before;
	bool direct;

	(void)w;
	direct = giong_direct_size() > 0 && !lo.regular_fds;
	if (expect_table())
		gt_check_true(giong_direct_size() > 0);
	if (!gt_check_int_equal(giong_tcp_listen("127.0.0.1:0", &lo, &l), 0))
		return;
	for (int i = 0; i < CONNS; i++)
		cfd[i] = plain_client(l);
	before = gt_count_fds();
	for (int i = 0; i < CONNS; i++)
		gt_check_int_equal(giong_tcp_accept(l, &s[i]), 0);
	/* A direct connection takes no descriptor of the process. */
	if (direct) {
		gt_check_int_equal(gt_count_fds(), before);
		wait_used(CONNS);
	} else {
		gt_check_int_equal(gt_count_fds(), before + CONNS);
	}
	for (int i = 0; i < CONNS; i++)
		exercise(s[i], cfd[i], direct);
	for (int i = 0; i < CONNS; i++) {
		gt_check_int_equal(giong_stream_close(s[i]), 0);
		close(cfd[i]);
	}
	giong_listener_close(l);
	if (giong_direct_size() > 0)
		wait_used(0);
}

/* A runtime with a direct table as large as the descriptor limit allows
 * (giong_config.direct_files = -1; the default is none). */
static struct giong_config direct_config(void)
{
	struct giong_config c = gt_config(1);

	c.direct_files = -1;
	return c;
}

static void test_echo(void **state)
{
	struct giong_config c = direct_config();
	int fds = gt_count_fds();
	bool regular = false;

	(void)state;
	gt_run(&c, echo_main, &regular, NULL);
	gt_assert_fds(fds);
}

static void test_regular_option(void **state)
{
	struct giong_config c = direct_config();
	struct giong_stats st;
	int fds = gt_count_fds();
	bool regular = true;

	(void)state;
	gt_run(&c, echo_main, &regular, &st);
	gt_check_int_equal(st.direct_fallbacks, 0); /* asked for: no fallback */
	gt_checks_assert();
	gt_assert_fds(fds);
}

#define TABLE 8
#define MANY 12

struct full {
	int direct, regular, again_direct;
};

/* Echo one byte through @s and its plain peer @cfd. */
static void ping(struct giong_stream *s, int cfd)
{
	char ch = 0;

	gt_check_int_equal(send(cfd, "x", 1, 0), 1);
	gt_check_int_equal(giong_stream_read(s, &ch, 1), 1);
	gt_check_int_equal(giong_stream_write(s, &ch, 1), 1);
	gt_check_true(plain_read(cfd, &ch, 1));
	gt_check_int_equal(ch, 'x');
}

static void full_main(unsigned w, void *arg)
{
	struct full *f = arg;
	struct giong_stream *s[MANY + 1];
	struct giong_listener *l;
	int cfd[MANY + 1];

	(void)w;
	if (!gt_check_int_equal(giong_tcp_listen("127.0.0.1:0", NULL, &l), 0))
		return;
	/* One at a time: each accept's completion is seen before the next
	 * connection, so the listener switches before the table fills. */
	for (int i = 0; i < MANY; i++) {
		cfd[i] = plain_client(l);
		if (!gt_check_int_equal(giong_tcp_accept(l, &s[i]), 0))
			return;
		if (giong_stream_fd(s[i]) >= 0)
			f->regular++;
		else
			f->direct++;
		ping(s[i], cfd[i]);
	}
	/* Room again: once twice the headroom is free, direct again. */
	for (int i = 0; i < MANY; i++) {
		giong_stream_close(s[i]);
		close(cfd[i]);
	}
	wait_used(0);
	/* The regular accept armed now ends at this connection (the table has
	 * room): the next one, or this one, is direct. */
	for (int i = 0; i < 2; i++) {
		cfd[i] = plain_client(l);
		if (!gt_check_int_equal(giong_tcp_accept(l, &s[i]), 0))
			return;
		ping(s[i], cfd[i]);
		f->again_direct += giong_stream_fd(s[i]) < 0;
	}
	for (int i = 0; i < 2; i++) {
		giong_stream_close(s[i]);
		close(cfd[i]);
	}
	giong_listener_close(l);
}

static void test_table_full_falls_back(void **state)
{
	struct giong_config c = direct_config();
	struct giong_stats st;
	struct full f = {0};
	int fds = gt_count_fds();

	(void)state;
	c.direct_files = TABLE;
	gt_run(&c, full_main, &f, &st);
	gt_checks_assert();
	assert_int_equal(f.direct + f.regular, MANY);
	if (st.direct_files == 0) {
		assert_false(expect_table());
		assert_int_equal(st.direct_files, 0);
		assert_int_equal(f.direct, 0);
		assert_int_equal(st.direct_fallbacks, 0);
	} else {
		assert_int_equal(st.direct_files, TABLE);
		/* a headroom of 1 slot: 7 direct, 8 if the kernel accepted one
		 * more before the switch */
		assert_in_range(f.direct, TABLE - 1, TABLE);
		/* every regular one is counted, also of the two made after */
		assert_true(f.again_direct >= 1);
		assert_int_equal(st.direct_fallbacks, (uint64_t)(f.regular + 2 - f.again_direct));
		assert_int_equal(st.direct_used, 0);
	}
	gt_assert_fds(fds);
}

struct parked {
	struct giong_stream *s;
	int recv_ret, write_ret;
};

static intptr_t parked_recv(void *arg)
{
	struct parked *p = arg;
	struct giong_recvbuf *b;

	p->recv_ret = (int)giong_stream_recv(p->s, &b);
	return 0;
}

static intptr_t parked_write(void *arg)
{
	struct parked *p = arg;
	size_t len = 64u << 20;
	char *big = calloc(1, len);

	/* The peer reads nothing: the send parks once the buffers fill. */
	p->write_ret = big ? (int)giong_stream_write_all(p->s, big, len) : -ENOMEM;
	free(big);
	return 0;
}

static void close_main(unsigned w, void *arg)
{
	struct parked p = {0};
	struct giong_listener *l;
	struct giong_task *tr, *tw;
	int cfd;

	(void)w;
	(void)arg;
	if (!gt_check_int_equal(giong_tcp_listen("127.0.0.1:0", NULL, &l), 0))
		return;
	cfd = plain_client(l);
	if (!gt_check_int_equal(giong_tcp_accept(l, &p.s), 0))
		return;
	giong_listener_close(l);
	gt_check_int_equal(giong_spawn(parked_recv, &p, &tr), 0);
	gt_check_int_equal(giong_spawn(parked_write, &p, &tw), 0);
	giong_sleep_ms(20); /* both parked in the kernel */
	gt_check_int_equal(giong_stream_close(p.s), 0);
	giong_join(tr, NULL);
	giong_join(tw, NULL);
	gt_check_true(p.recv_ret == -EBADF || p.recv_ret == -ECANCELED);
	gt_check_true(p.write_ret == -EBADF || p.write_ret == -ECANCELED);
	close(cfd);
	if (giong_direct_size() > 0)
		wait_used(0);
}

static void test_close_under_parked_tasks(void **state)
{
	struct giong_config c = direct_config();
	int fds = gt_count_fds();

	(void)state;
	gt_run(&c, close_main, NULL, NULL);
	gt_assert_fds(fds);
}

/* giong_stream_fd_install(): a direct socket gets a descriptor on Linux
 * 6.8+ and is regular from then on (the multishot receive armed on the slot
 * goes on; the slot is freed); -EOPNOTSUPP before; a regular one's own. */
static void install_main(unsigned w, void *arg)
{
	struct giong_stream *s;
	struct giong_listener *l;
	struct giong_recvbuf *b;
	struct giong_addr a;
	char buf[8];
	int cfd, fd;

	(void)w;
	(void)arg;
	if (!gt_check_int_equal(giong_tcp_listen("127.0.0.1:0", NULL, &l), 0))
		return;
	cfd = plain_client(l);
	if (!gt_check_int_equal(giong_tcp_accept(l, &s), 0))
		return;
	giong_listener_close(l);
	/* arm the multishot receive on the slot first */
	gt_check_int_equal(send(cfd, "one", 3, 0), 3);
	gt_check_int_equal(giong_stream_recv(s, &b), 3);
	giong_recvbuf_release(b);
	fd = giong_stream_fd_install(s);
	print_message("fd_install: table %d, kernel can install %d: %d\n", giong_direct_size(),
		      giong_direct_can_install(), fd);
	if (giong_direct_size() > 0 && giong_direct_can_install() != 1) {
		gt_check_int_equal(fd, -EOPNOTSUPP);
		gt_check_int_equal(giong_stream_fd(s), -EOPNOTSUPP);
	} else if (gt_check_true(fd >= 0)) {
		gt_check_int_equal(giong_stream_fd(s), fd);
		gt_check_int_equal(giong_stream_fd_install(s), fd); /* once */
		gt_check_int_equal(giong_stream_peer_addr(s, &a), 0);
		gt_check_int_equal(giong_tcp_set_nodelay(s, true), 0);
		if (giong_direct_size() > 0)
			wait_used(0); /* the slot is closed */
	}
	/* the stream goes on either way */
	gt_check_int_equal(send(cfd, "two", 3, 0), 3);
	gt_check_int_equal(giong_stream_recv(s, &b), 3);
	gt_check_int_equal(giong_stream_write_all(s, giong_recvbuf_data(b), 3), 3);
	giong_recvbuf_release(b);
	gt_check_true(plain_read(cfd, buf, 3));
	gt_check_memory_equal(buf, "two", 3);
	gt_check_int_equal(giong_stream_close(s), 0);
	close(cfd);
	if (giong_direct_size() > 0)
		wait_used(0);
}

static void test_fd_install(void **state)
{
	struct giong_config c = direct_config();
	int fds = gt_count_fds();

	(void)state;
	gt_run(&c, install_main, NULL, NULL);
	gt_assert_fds(fds);
}

static void off_main(unsigned w, void *arg)
{
	(void)w;
	*(int *)arg = giong_direct_size();
}

static void test_env_off(void **state)
{
	struct giong_config c = direct_config();
	struct giong_runtime *rt;
	int size = -1;

	(void)state;
	setenv("GIONG_DIRECT_FILES", "off", 1);
	gt_run(&c, off_main, &size, NULL);
	assert_int_equal(size, 0);
	unsetenv("GIONG_DIRECT_FILES");
	{ /* the default: no table */
		struct giong_config d = gt_config(1);

		size = -1;
		gt_run(&d, off_main, &size, NULL);
		assert_int_equal(size, 0);
	}
	setenv("GIONG_DIRECT_FILES", "auto", 1);
	{ /* the environment turns it on */
		struct giong_config d = gt_config(1);

		size = -1;
		gt_run(&d, off_main, &size, NULL);
		if (expect_table())
			assert_true(size > 0);
		else
			assert_int_equal(size, 0);
	}
	setenv("GIONG_DIRECT_FILES", "nonsense", 1);
	assert_int_equal(giong_runtime_new(&c, &rt), -EINVAL);
	unsetenv("GIONG_DIRECT_FILES");
	c.direct_files = -2;
	assert_int_equal(giong_runtime_new(&c, &rt), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_echo),
		cmocka_unit_test(test_regular_option),
		cmocka_unit_test(test_table_full_falls_back),
		cmocka_unit_test(test_close_under_parked_tasks),
		cmocka_unit_test(test_fd_install),
		cmocka_unit_test(test_env_off),
	};

	/* The environment decides the table here, not the caller's. */
	unsetenv("GIONG_DIRECT_FILES");
	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
