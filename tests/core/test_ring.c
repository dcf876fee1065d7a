/* SPDX-License-Identifier: MIT */
/*
 * test_ring.c - the ring driver: tiers, one enter per tick, a full SQ, CQ
 * overflow; where io_uring is blocked the epoll tier by itself, or with
 * uring_only a clear error.
 */
#include <liburing.h>
#include <sys/wait.h>
#include <unistd.h>

#include "giong_test.h"
#include "uring_block.h"

struct nop_run {
	unsigned n;
	unsigned ok;
	struct giong_stats before, after;
	uint64_t faults_before, faults_after; /* gt_faults_ring() */
	int tier;
};

static intptr_t nop_task(void *arg)
{
	struct nop_run *r = arg;
	struct io_uring_sqe *sqe = giong_sqe();

	if (!sqe)
		return -1;
	io_uring_prep_nop(sqe);
	if (giong_io(sqe) == 0)
		r->ok++;
	return 0;
}

static void nop_main(unsigned w, void *arg)
{
	struct nop_run *r = arg;

	(void)w;
	r->tier = giong_ring_tier();
	giong_yield(); /* let start-up submissions go first */
	giong_stats(&r->before);
	r->faults_before = gt_faults_ring();
	for (unsigned i = 0; i < r->n; i++)
		if (!gt_check_int_equal(giong_spawn(nop_task, r, NULL), 0))
			return;
	/* Yield (stay runnable, never wait) until every task's no-op is back. */
	while (r->ok < r->n)
		giong_yield();
	giong_stats(&r->after);
	r->faults_after = gt_faults_ring();
}

static void test_one_enter_per_tick(void **state)
{
	struct giong_config c = gt_config(1);
	struct nop_run r = {.n = 1000};

	(void)state;
	c.ring_entries = 1024;
	gt_run(&c, nop_main, &r, NULL);
	assert_int_equal(r.ok, 1000);
	/* 1,000 tasks each submitting a no-op in the same tick: their SQEs go
	 * in one enter, which also brings every completion back (plus one per
	 * fault a GIONG_FAULTS plan injected in the ring meanwhile). */
	/* The epoll tier also counts its look at readiness (an epoll_wait) in
	 * the turn after, still one per turn at most: one more. */
	assert_in_range(r.after.enters - r.before.enters, 1,
			2 + gt_tier_epoll() + r.faults_after - r.faults_before);
	assert_true(r.after.sqes_submitted - r.before.sqes_submitted >= 1000);
}

static void test_tier_forced(void **state)
{
	static const char *names[] = {"defer", "coop", "basic"};

	(void)state;
	gt_skip_if_uring_refused();
	for (int t = 0; t < 3; t++) {
		struct giong_config c = gt_config(1);
		struct nop_run r = {.n = 10};

		c.ring_tier = (enum giong_ring_tier)(t + 1);
		gt_run(&c, nop_main, &r, NULL);
		assert_int_equal(r.tier, t + 1);
		assert_int_equal(r.ok, 10);
		(void)names;
	}
}

static void test_small_ring_full_sq_and_cq_overflow(void **state)
{
	struct giong_config c = gt_config(1);
	struct nop_run r = {.n = 1000};

	(void)state;
	/* 4 SQ entries and 8 CQ entries for 1,000 operations in one tick: the
	 * SQ fills 250 times and completions overflow the CQ. */
	c.ring_entries = 4;
	gt_run(&c, nop_main, &r, NULL);
	assert_int_equal(r.ok, 1000);
	assert_true(r.after.enters - r.before.enters >= 250);
}

static void test_bad_config(void **state)
{
	struct giong_config c;
	struct giong_runtime *rt = (struct giong_runtime *)1;

	(void)state;
	assert_int_equal(giong_config_init(NULL), -EINVAL);
	assert_int_equal(giong_runtime_new(NULL, NULL), -EINVAL);
	giong_config_init(&c);
	c.recv_buffers = 3; /* not a power of two */
	assert_int_equal(giong_runtime_new(&c, &rt), -EINVAL);
	assert_null(rt);
	giong_config_init(&c);
	c.stack_size = 100;
	assert_int_equal(giong_runtime_new(&c, &rt), -EINVAL);
	giong_config_init(&c);
	c.ring_tier = 9;
	assert_int_equal(giong_runtime_new(&c, &rt), -EINVAL);
	assert_int_equal(giong_runtime_run(NULL, NULL, NULL), -EINVAL);
	assert_int_equal(giong_runtime_free(NULL), 0);
}

static void tier_main(unsigned w, void *arg)
{
	(void)w;
	*(int *)arg = giong_ring_tier();
	giong_sleep_ms(1); /* a timer and a wait on whatever tier this is */
}

/* Child: make io_uring fail with @err through seccomp, then report what
 * giong_runtime_new says (@uring_only: no fallback) and which tier a worker
 * runs on. Standard error goes to @fd too: the fallback's line is checked. */
static void blocked_child(int err, unsigned nr, bool uring_only, int fd)
{
	struct giong_runtime *rt;
	struct giong_config c;
	char msg[1024];
	int ret, n, tier = 0;

	if (nr ? gt_block_uring_call(err, nr) : gt_block_uring(err))
		_exit(GT_SKIP);
	if (dup2(fd, STDERR_FILENO) < 0)
		_exit(2);
	/* A forced tier (the suite's GIONG_RING_TIER=coop|basic runs) never falls back. */
	if (!uring_only)
		unsetenv("GIONG_RING_TIER");
	giong_config_init(&c);
	c.workers = 1;
	c.uring_only = uring_only;
	ret = giong_runtime_new(&c, &rt);
	if (!ret) {
		ret = giong_runtime_run(rt, tier_main, &tier);
		giong_runtime_free(rt);
	}
	n = snprintf(msg, sizeof(msg), "RESULT %d %d %s", ret, tier, giong_strerror(ret));
	if (write(fd, msg, (size_t)n) != n)
		_exit(2);
	_exit(0);
}

/* Run blocked_child() (@nr: only that call refused, 0: all three); its output in @buf (NUL-terminated), the result line's
 * code and tier in *@code and *@tier. */
static void run_blocked(int err, unsigned nr, bool uring_only, char *buf, size_t len, int *code,
			int *tier)
{
	int p[2], status;
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		blocked_child(err, nr, uring_only, p[1]);
	}
	close(p[1]);
	while (got < len - 1 && (n = read(p[0], buf + got, len - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = 0;
	close(p[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == GT_SKIP) {
		/* No seccomp here (valgrind does not implement it): nothing to test. */
		print_message("seccomp filters unavailable: skipped\n");
		skip();
	}
	assert_int_equal(WEXITSTATUS(status), 0);
	const char *res = strstr(buf, "RESULT ");
	assert_non_null(res);
	assert_int_equal(sscanf(res, "RESULT %d %d", code, tier), 2);
}

static void check_blocked(int err, int want, const char *needle)
{
	char buf[2048];
	int code, tier;

	run_blocked(err, 0, true, buf, sizeof(buf), &code, &tier);
	assert_int_equal(code, want);
	assert_non_null(strstr(buf, needle));
	/* uring_only: no fallback made, and the message says how to have one. */
	assert_null(strstr(buf, "running on the epoll tier"));
	assert_non_null(strstr(buf, "do not ask for io_uring only"));
}

static void test_blocked_uring_says_why(void **state)
{
	(void)state;
	if (gt_tier_epoll()) {
		print_message("epoll tier forced: io_uring is not asked for: skipped\n");
		skip();
	}
	check_blocked(EPERM, GIONG_EURING_DISABLED, "seccomp");
	check_blocked(EPERM, GIONG_EURING_DISABLED, "kernel.io_uring_disabled");
	check_blocked(EOPNOTSUPP, GIONG_EURING_DISABLED, "seccomp"); /* other profiles' */
	check_blocked(ENOSYS, GIONG_ENOURING, "Linux 6.0");
}

/* By default a refused io_uring is no error: the runtime runs on the epoll
 * tier and says so in exactly one line naming the errno and the tier. */
static void check_fallback(int err, unsigned nr, const char *name)
{
	char buf[1024];
	const char *line;
	int code, tier;

	run_blocked(err, nr, false, buf, sizeof(buf), &code, &tier);
	assert_int_equal(code, 0);
	assert_int_equal(tier, GIONG_TIER_EPOLL);
	line = strstr(buf, "giong: io_uring is ");
	assert_non_null(line);
	assert_true(strstr(line, name) && strstr(line, "running on the epoll tier\n"));
	assert_null(strstr(line + 1, "giong: io_uring is ")); /* once */
}

static void test_blocked_uring_falls_back(void **state)
{
	(void)state;
	if (gt_tier_epoll()) {
		print_message("epoll tier forced: io_uring is not asked for: skipped\n");
		skip();
	}
	check_fallback(EPERM, 0, "EPERM");
	check_fallback(EOPNOTSUPP, 0, "EOPNOTSUPP");
	check_fallback(ENOSYS, 0, "ENOSYS");
	/* A ring may be made but not registered, or not entered: refused all the same. */
	check_fallback(EPERM, __NR_io_uring_register, "EPERM");
	check_fallback(EPERM, __NR_io_uring_enter, "EPERM");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_enter_per_tick),
		cmocka_unit_test(test_tier_forced),
		cmocka_unit_test(test_small_ring_full_sq_and_cq_overflow),
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_blocked_uring_says_why),
		cmocka_unit_test(test_blocked_uring_falls_back),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
