/* SPDX-License-Identifier: MIT */
/*
 * test_idle.c - idle keep-alive connections cost no task: 10,000 (or as
 * many as RLIMIT_NOFILE allows, at least 1,000) connections that each had
 * one request answered and are then held open by their clients. While they
 * are held, the server's counters (GET /stats, read on the worker) show
 * them all open and idle, no fiber or stack beyond the fixed ones (the serve
 * task, the sweeper, the task answering /stats) and no pool buffer held but
 * the /stats request's own. Then the clients reset them all: open goes back
 * to 0 and the descriptors to the baseline. Resident memory per idle
 * connection is printed, not asserted.
 *
 * The clients live in a child process (plain non-blocking sockets and poll,
 * no giong), so that neither process needs much more than N descriptors
 * (the hard limit may be 20,000 and not raisable). The scenario thread talks
 * to it over a socketpair.
 *
 * Also: idle_timeout_ms closes a connection left idle (the sweeper), and
 * not one that keeps asking.
 */
#include <sys/wait.h>

#include "http_test.h"

/* Under TSan 2,000: the burst of requests gives each its fiber at once, and
 * 10,000 stacks with their guard pages and TSan's shadow for each pass the
 * kernel's limit of mappings (vm.max_map_count, 65,530), where TSan's own
 * allocator fails. */
#if defined(__SANITIZE_THREAD__)
#define IDLE_WANT 2000
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define IDLE_WANT 2000
#endif
#endif
#ifndef IDLE_WANT
#define IDLE_WANT 10000
#endif
#define IDLE_MIN 1000
#define IDLE_BATCH 250

static const char idle_req[] = "GET /hi HTTP/1.1\r\nHost: t\r\n\r\n";

struct idle {
	int ctl; /* the parent's end of the socketpair */
	int n;   /* connections to make */
	pid_t child;
	long rss_before, rss_held;
	struct ht_live base, held, after;
};

static int ctl_send(int fd, int v)
{
	return write(fd, &v, sizeof(v)) == sizeof(v) ? 0 : -1;
}

static int ctl_recv(int fd, int *v, int ms)
{
	struct pollfd p = {fd, POLLIN, 0};

	if (poll(&p, 1, ms) != 1)
		return -1;
	return read(fd, v, sizeof(*v)) == sizeof(*v) ? 0 : -1;
}

/* One batch of the child's: connect @n, send each its request, read each
 * its whole response ("hi" after the head). 0, or -1. */
/* Why a batch of the child's failed, on its stderr (the test's output): a
 * count short of N alone says nothing. Returns -1. */
static int batch_fail(const char *what, int i, int err)
{
	fprintf(stderr, "idle child: %s failed at connection %d of the batch: %s\n", what, i,
		err ? strerror(err) : "-");
	return -1;
}

static int sock_error(int fd)
{
	int e = 0;
	socklen_t len = sizeof(e);

	return getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) ? errno : e;
}

static int child_batch(int port, int *fds, int n)
{
	static char buf[IDLE_BATCH][512];
	static size_t len[IDLE_BATCH];
	struct pollfd p[IDLE_BATCH];
	int done = 0, state[IDLE_BATCH];
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (int i = 0; i < n; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fds[i] < 0 ||
		    (connect(fds[i], (struct sockaddr *)&sa, sizeof(sa)) && errno != EINPROGRESS))
			return batch_fail("connect", i, errno);
		state[i] = 0;
		len[i] = 0;
		p[i] = (struct pollfd){fds[i], POLLOUT, 0};
	}
	while (done < n) {
		if (poll(p, (nfds_t)n, 10000) <= 0)
			return batch_fail("poll (10 s, nothing ready)", done, errno);
		for (int i = 0; i < n; i++) {
			char *e;
			ssize_t k;

			if (!p[i].revents || state[i] == 2)
				continue;
			if (p[i].revents & (POLLERR | POLLHUP))
				return batch_fail("POLLERR/POLLHUP", i, sock_error(fds[i]));
			if (state[i] == 0) {
				if (send(fds[i], idle_req, sizeof(idle_req) - 1, MSG_NOSIGNAL) !=
				    (ssize_t)sizeof(idle_req) - 1)
					return batch_fail("send", i, errno);
				state[i] = 1;
				p[i].events = POLLIN;
				continue;
			}
			k = recv(fds[i], buf[i] + len[i], sizeof(buf[i]) - 1 - len[i], 0);
			if (k <= 0)
				return batch_fail(k ? "recv" : "recv (the server closed)", i,
						  errno);
			len[i] += (size_t)k;
			buf[i][len[i]] = '\0';
			if ((e = strstr(buf[i], "\r\n\r\n")) && !strcmp(e + 4, "hi")) {
				if (strncmp(buf[i], "HTTP/1.1 200 ", 13))
					return batch_fail("a response that is no 200", i, 0);
				state[i] = 2;
				p[i].events = 0;
				done++;
			}
		}
	}
	return 0;
}

/* The child: N clients made in batches, reported, held, then reset. */
static void idle_child(int ctl, int n)
{
	int *fds = calloc((size_t)n, sizeof(*fds));
	int port, v, made = 0;

	if (!fds || ctl_recv(ctl, &port, 30000))
		_exit(2);
	while (made < n) {
		int k = n - made < IDLE_BATCH ? n - made : IDLE_BATCH;

		if (child_batch(port, fds + made, k))
			break;
		made += k;
	}
	ctl_send(ctl, made);
	if (ctl_recv(ctl, &v, 30000)) /* close them */
		_exit(3);
	for (int i = 0; i < made; i++)
		gt_close_rst(fds[i]);
	ctl_send(ctl, 0);
	_exit(made == n ? 0 : 4);
}

static int hi(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	(void)req;
	(void)ctx;
	return giong_http_response_send(res, "hi", 2);
}

static bool all_idle(const struct ht_live *o, const void *arg)
{
	const struct idle *id = arg;

	return o->idle >= (unsigned)id->n;
}

static bool only_asker(const struct ht_live *o, const void *arg)
{
	(void)arg;
	return o->open == 1;
}

static void idle_client(struct ht *h)
{
	struct idle *id = h->arg;
	int made = -1, v;

	if (!gt_check_int_equal(ht_get_stats(h, &id->base), 0))
		return;
	id->rss_before = ht_rss_kb();
	if (!gt_check_int_equal(ctl_send(id->ctl, h->port), 0) ||
	    !gt_check_int_equal(ctl_recv(id->ctl, &made, 20000), 0) ||
	    !gt_check_int_equal(made, id->n))
		return;
	/* The last responses' sends end just after the client read them. */
	gt_check_int_equal(ht_wait_stats(h, &id->held, all_idle, id, 2000), 1);
	id->rss_held = ht_rss_kb();
	gt_check_int_equal(ctl_send(id->ctl, 1), 0);
	gt_check_int_equal(ctl_recv(id->ctl, &v, 20000), 0);
	/* 10,000 resets to take in: seconds under a sanitizer. */
	gt_check_int_equal(ht_wait_stats(h, &id->after, only_asker, NULL, 60000), 1);
}

static void test_idle_keepalive_connections(void **state)
{
	struct idle id = {0};
	struct ht h;
	long lim;
	int fds = gt_count_fds(), sv[2], status = -1;

	(void)state;
	lim = gt_raise_nofile(IDLE_WANT + 512);
	id.n = lim - 256 < IDLE_WANT ? (int)(lim - 256) : IDLE_WANT;
	if (id.n < IDLE_MIN)
		skip();
	ht_init(&h);
	h.cfg.recv_buffers = 1024;
	h.cfg.ring_entries = 1024;
	h.limits.idle_timeout_ms = 60000;
	h.limits.connections = IDLE_WANT + 100;
	h.arg = &id;
	assert_int_equal(giong_http_router_add(h.router, "GET", "/hi", hi, NULL), 0);
	ht_add_stats(&h);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	id.child = fork(); /* before the runtime's threads exist */
	assert_true(id.child >= 0);
	if (id.child == 0) {
		close(sv[0]);
		idle_child(sv[1], id.n);
	}
	close(sv[1]);
	id.ctl = sv[0];
	ht_run(&h, idle_client);
	close(sv[0]);
	waitpid(id.child, &status, 0);
	print_message("%d idle connections: open %u idle %u, fibers_live %u (%u before), "
		      "stacks_live %u (%u before), pool %u/%u free; RSS %ld -> %ld KiB, "
		      "%.0f bytes per idle connection\n",
		      id.n, id.held.open, id.held.idle, id.held.fibers, id.base.fibers,
		      id.held.stacks, id.base.stacks, id.held.bufs_free, id.held.bufs_total,
		      id.rss_before, id.rss_held,
		      (double)(id.rss_held - id.rss_before) * 1024.0 / id.n);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* Before: the serve task, the sweeper and the one answering /stats. */
	assert_true(id.base.fibers <= 3);
	assert_int_equal(id.held.open, id.n + 1); /* the asking one too */
	assert_int_equal(id.held.idle, id.n);
	assert_int_equal(id.held.fibers, id.base.fibers);
	assert_int_equal(id.held.stacks, id.base.stacks);
	/* Only the /stats request's own buffer is out of the pool. */
	assert_true(id.held.bufs_free + 1 >= id.held.bufs_total);
	assert_int_equal(id.held.bufs_free, id.base.bufs_free);
	assert_int_equal(id.after.open, 1);
	assert_int_equal(id.after.idle, 0);
	assert_int_equal(h.stats.open, 0);
	assert_int_equal(h.stats.idle, 0);
	assert_true(h.stats.accepted >= (uint64_t)id.n + 3);
	assert_int_equal(h.stats.idle_timeouts, 0);
	gt_assert_fds(fds);
}

/* idle_timeout_ms: a connection left idle is closed by the sweeper; one
 * that asks again in time is kept: BUSY_ROUNDS requests BUSY_EVERY ms apart
 * span twice IDLE_TIMEOUT_MS, and each has IDLE_TIMEOUT_MS - BUSY_EVERY to
 * make its round trip (a slow machine: the emulated guest, valgrind). */
#define IDLE_TIMEOUT_MS 1000
#define BUSY_EVERY 250
#define BUSY_ROUNDS 8

static void timeout_client(struct ht *h)
{
	struct ht_conn quiet, busy;
	struct ht_resp r;

	ht_conn_init(&quiet, ht_connect(h));
	ht_conn_init(&busy, ht_connect(h));
	if (!gt_check_true(quiet.fd >= 0 && busy.fd >= 0))
		return;
	gt_check_int_equal(ht_send_str(quiet.fd, idle_req), 0);
	gt_check_int_equal(ht_read_response(&quiet, &r, false), 0);
	ht_resp_free(&r);
	for (int i = 0; i < BUSY_ROUNDS; i++) {
		gt_check_int_equal(ht_send_str(busy.fd, idle_req), 0);
		gt_check_int_equal(ht_read_response(&busy, &r, false), 0);
		ht_resp_free(&r);
		usleep(BUSY_EVERY * 1000);
	}
	gt_check_int_equal(ht_closed_within(&quiet, 1000), 1);
	gt_check_int_equal(ht_closed_within(&busy, 0), 0);
	ht_conn_close(&quiet);
	ht_conn_close(&busy);
}

static void test_idle_timeout(void **state)
{
	struct ht h;

	(void)state;
	ht_init(&h);
	h.limits.idle_timeout_ms = IDLE_TIMEOUT_MS;
	assert_int_equal(giong_http_router_add(h.router, "GET", "/hi", hi, NULL), 0);
	ht_run(&h, timeout_client);
	assert_int_equal(h.stats.idle_timeouts, 1);
	assert_int_equal(h.stats.open, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idle_keepalive_connections),
		cmocka_unit_test(test_idle_timeout),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
