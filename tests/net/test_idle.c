/* SPDX-License-Identifier: MIT */
/*
 * test_idle.c - a connection with no fiber on it: 10,000 idle connections
 * held with giong_stream_on_readable() cost no stack and no pool buffer
 * (counted through the runtime's counters), and a byte on some of them
 * starts a task that echoes it.
 */
#include <sys/wait.h>

#include "net_test.h"

/* ------------------------------------------ 10,000 idle connections */

/*
 * The 10,000 clients live in a child process, so that neither process needs
 * more than about 10,000 descriptors (RLIMIT_NOFILE's hard limit may be
 * 20,000 and not raisable without CAP_SYS_RESOURCE). The child talks to the
 * test over a socketpair: the parent sends the port; the child connects in
 * batches, waiting after each for the parent's word that all were accepted;
 * then it writes one byte on every 50th connection and reports how many
 * echoes came back intact; then it resets every connection and exits.
 */
#define IDLE_CONNS 10000
#define IDLE_STEP 50
#define IDLE_PINGED (IDLE_CONNS / IDLE_STEP)
#define IDLE_BATCH 500

/* The child: plain non-blocking clients, no giong at all. */
static void idle_child(int ctl)
{
	static int cfds[IDLE_CONNS];
	int port, ok = 0, made = 0, v;

	if (nt_ctl_recv(ctl, &port))
		_exit(2);
	while (made < IDLE_CONNS) {
		int end = made + IDLE_BATCH;

		for (; made < end; made++) {
			cfds[made] = nt_plain_connect(port, 1);
			if (cfds[made] < 0) {
				nt_ctl_send(ctl, -made - 1);
				_exit(3);
			}
		}
		/* made so far; the parent answers once it has accepted them */
		if (nt_ctl_send(ctl, made) || nt_ctl_recv(ctl, &v) || v != made)
			_exit(4);
	}
	if (nt_ctl_recv(ctl, &v)) /* go: ping */
		_exit(5);
	for (int i = 0; i < IDLE_CONNS; i += IDLE_STEP) {
		unsigned char b = (unsigned char)(i / IDLE_STEP);

		if (write(cfds[i], &b, 1) != 1)
			_exit(6);
	}
	for (int i = 0; i < IDLE_CONNS; i += IDLE_STEP) {
		struct pollfd p = {cfds[i], POLLIN, 0};
		unsigned char b = 0;

		if (poll(&p, 1, 5000) == 1 && read(cfds[i], &b, 1) == 1 &&
		    b == (unsigned char)(i / IDLE_STEP))
			ok++;
	}
	nt_ctl_send(ctl, ok);
	if (nt_ctl_recv(ctl, &v)) /* done: close */
		_exit(7);
	for (int i = 0; i < IDLE_CONNS; i++)
		gt_close_rst(cfds[i]);
	nt_ctl_send(ctl, 0);
	_exit(0);
}

struct idle_conn {
	struct idle *id;
	struct giong_stream *s;
	int callbacks, handled;
	int byte; /* the byte its client sent (which of the pinged it is), or -1 */
};

struct idle {
	int ctl;
	struct giong_listener *l;
	struct idle_conn *conns;
	int accepted, accept_err, child_err;
	struct giong_stats held, after;
	int callbacks, spawned, echoed_srv, echo_ok;
	bool closing;
};

static intptr_t idle_handler(void *arg)
{
	struct idle_conn *ic = arg;
	struct giong_recvbuf *b;
	ssize_t n = giong_stream_recv(ic->s, &b);

	if (n > 0) {
		ic->byte = *(const unsigned char *)giong_recvbuf_data(b);
		if (giong_stream_write_all(ic->s, giong_recvbuf_data(b), (size_t)n) == n) {
			ic->handled++;
			ic->id->echoed_srv++;
		}
		giong_recvbuf_release(b);
	}
	/* on_readable stays registered: the next arrival calls it again. */
	return 0;
}

static void idle_readable(struct giong_stream *s, void *ctx)
{
	struct idle_conn *ic = ctx;

	(void)s;
	if (ic->id->closing)
		return;
	ic->callbacks++;
	ic->id->callbacks++;
	if (giong_spawn(idle_handler, ic, NULL) == 0)
		ic->id->spawned++;
}

static intptr_t idle_acceptor(void *arg)
{
	struct idle *id = arg;

	while (id->accepted < IDLE_CONNS) {
		struct giong_stream *s;
		struct idle_conn *ic;
		int r = giong_tcp_accept(id->l, &s);

		if (r) {
			id->accept_err = r;
			break;
		}
		ic = &id->conns[id->accepted++];
		ic->id = id;
		ic->s = s;
		ic->byte = -1;
		/* No task per connection: held by its armed receive only. */
		if (giong_stream_on_readable(s, idle_readable, ic))
			id->accept_err = -1;
	}
	return 0;
}

/* Wait for the child's next word (the worker keeps running meanwhile). */
static int idle_ctl_recv(struct idle *id, int *v)
{
	if (giong_poll(id->ctl, POLLIN, 20000) <= 0 || nt_ctl_recv(id->ctl, v))
		return -1;
	return 0;
}

static void idle_main(unsigned w, void *arg)
{
	struct idle *id = arg;
	struct giong_listen_options o = {.backlog = 4096, .max_pending = 4096};
	struct giong_task *ta;
	int v;

	(void)w;
	if (giong_tcp_listen("127.0.0.1:0", &o, &id->l)) {
		id->accept_err = -999;
		return;
	}
	giong_spawn(idle_acceptor, id, &ta);
	nt_ctl_send(id->ctl, nt_listener_port(id->l));
	for (;;) {
		uint64_t until;

		if (idle_ctl_recv(id, &v) || v < 0) {
			id->child_err = v < 0 ? v : -1;
			break;
		}
		until = giong_now_ms() + 10000;
		while (id->accepted < v && !id->accept_err && giong_now_ms() < until)
			giong_sleep_ms(1);
		nt_ctl_send(id->ctl, id->accepted);
		if (id->accepted != v || v == IDLE_CONNS)
			break;
	}
	if (id->accepted != IDLE_CONNS) {
		giong_task_cancel(ta);
		giong_join(ta, NULL);
		goto out;
	}
	giong_join(ta, NULL);
	giong_sleep_ms(20);
	giong_stats(&id->held);
	/* A byte on every 50th: each starts a task that echoes it. */
	nt_ctl_send(id->ctl, 1);
	if (idle_ctl_recv(id, &id->echo_ok))
		id->child_err = -2;
	giong_sleep_ms(10);
	giong_stats(&id->after);
out:
	id->closing = true;
	for (int i = 0; i < id->accepted; i++)
		giong_stream_close(id->conns[i].s);
	giong_listener_close(id->l);
	nt_ctl_send(id->ctl, 2);
	idle_ctl_recv(id, &v);
}

static void test_idle_connections_without_fibers(void **state)
{
	struct giong_config c = gt_config(1);
	struct idle *id = calloc(1, sizeof(*id));
	int fds = gt_count_fds(), per_conn_ok = 1, sv[2], status = -1;
	pid_t pid;

	(void)state;
	if (gt_raise_nofile(IDLE_CONNS + 512) < IDLE_CONNS + 512)
		skip(); /* cannot hold 10,000 connections here */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(sv[0]);
		idle_child(sv[1]);
	}
	close(sv[1]);
	id->ctl = sv[0];
	id->conns = calloc(IDLE_CONNS, sizeof(*id->conns));
	c.ring_entries = 1024;
	gt_run(&c, idle_main, id, NULL);
	close(sv[0]);
	waitpid(pid, &status, 0);
	print_message("%d held: stacks_live %u, fibers_live %u, ops_live %u, pool %u/%u free\n",
		      id->accepted, id->held.stacks_live, id->held.fibers_live, id->held.ops_live,
		      id->held.recvbufs_free, id->held.recvbufs_total);
	assert_int_equal(id->child_err, 0);
	assert_int_equal(id->accept_err, 0);
	assert_int_equal(id->accepted, IDLE_CONNS);
	/* 10,000 connections held: only the test's own main task has a stack,
	 * no pool buffer is taken, and every receive is armed in the kernel. */
	assert_true(id->held.stacks_live <= 2);
	assert_true(id->held.fibers_live <= 2);
	assert_int_equal(id->held.recvbufs_free, id->held.recvbufs_total);
	assert_true(id->held.ops_live >= IDLE_CONNS);
	/* A byte on 200 of them: one callback each, one task each, echoed. */
	assert_int_equal(id->callbacks, IDLE_PINGED);
	assert_int_equal(id->spawned, IDLE_PINGED);
	assert_int_equal(id->echoed_srv, IDLE_PINGED);
	assert_int_equal(id->echo_ok, IDLE_PINGED);
	/* Each pinged connection exactly once, no other one. Told apart by the
	 * byte its client sent, not by accept order: a slow machine (an emulated
	 * guest) can accept a batch's connections in another order than the
	 * client made them. */
	int seen[IDLE_PINGED] = {0};
	for (int i = 0; i < IDLE_CONNS; i++) {
		const struct idle_conn *ic = &id->conns[i];

		if (ic->byte < 0) {
			if (ic->callbacks || ic->handled)
				per_conn_ok = 0;
		} else if (ic->byte >= IDLE_PINGED || ic->callbacks != 1 || ic->handled != 1 ||
			   seen[ic->byte]++) {
			per_conn_ok = 0;
		}
	}
	for (int b = 0; b < IDLE_PINGED; b++)
		if (seen[b] != 1)
			per_conn_ok = 0;
	assert_true(per_conn_ok);
	/* The tasks are gone again, their buffers back. */
	assert_true(id->after.stacks_live <= 2);
	assert_int_equal(id->after.recvbufs_free, id->after.recvbufs_total);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	free(id->conns);
	free(id);
	gt_assert_fds(fds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idle_connections_without_fibers),
	};

	/* The plain peers write to sockets giong may have closed (a failed
	 * allocation under a GIONG_FAULTS plan): an error, not a signal. */
	signal(SIGPIPE, SIG_IGN);
	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
