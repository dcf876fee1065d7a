/* SPDX-License-Identifier: MIT */
/*
 * giong_test.h - shared fixtures for giong's CMocka tests.
 *
 * A test exits 77 (skipped) only when the kernel cannot give it io_uring or
 * a feature it needs, and says which; any other failure fails.
 */
#ifndef GIONG_TEST_H
#define GIONG_TEST_H

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <giong/core.h>

/* RUNNING_ON_VALGRIND: 1 under valgrind (a test may leave out what valgrind
 * changes, saying why), 0 elsewhere or without valgrind's header. */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

#define GT_SKIP 77

/*
 * A failed assertion aborts the program (after CMocka's message) instead of
 * longjmp-ing to the test runner: some tests assert inside tasks, and a
 * longjmp off a fiber stack would leave the runtime behind, the thread
 * still a worker, and every later test of the program failing with
 * -EDEADLK. Read by CMocka at the failure, so setting it first is enough.
 */
static inline void gt_abort_on_failure(void)
{
	setenv("CMOCKA_TEST_ABORT", "1", 0);
}

/* Exit 77 if io_uring is unusable here, naming the reason. Also
 * gt_abort_on_failure(). */
static inline void gt_require_uring(void)
{
	struct giong_config c;
	struct giong_runtime *rt;
	int err;

	gt_abort_on_failure();
	giong_config_init(&c);
	c.workers = 1;
	err = giong_runtime_new(&c, &rt);
	if (err == GIONG_EURING_DISABLED || err == GIONG_ENOURING || err == GIONG_EURING_OLD) {
		fprintf(stderr, "SKIP: %s\n", giong_strerror(err));
		exit(GT_SKIP);
	}
	if (err) {
		fprintf(stderr, "giong_runtime_new: %s\n", giong_strerror(err));
		exit(1);
	}
	giong_runtime_free(rt);
}

/* A config for tests: @workers workers, small pools, short grace. */
static inline struct giong_config gt_config(unsigned workers)
{
	struct giong_config c;

	giong_config_init(&c);
	c.workers = workers;
	c.ring_entries = 256;
	c.recv_buffers = 64;
	c.shutdown_grace_ms = 2000;
	return c;
}

/* Run @fn on a runtime made from @cfg; fail the test on any error. If
 * @stats is non-NULL, worker 0's final counters are stored there. */
static inline void gt_run(const struct giong_config *cfg, giong_main_fn fn, void *arg,
			  struct giong_stats *stats)
{
	struct giong_runtime *rt;

	assert_int_equal(giong_runtime_new(cfg, &rt), 0);
	assert_int_equal(giong_runtime_run(rt, fn, arg), 0);
	if (stats)
		assert_int_equal(giong_runtime_stats(rt, 0, stats), 0);
	assert_int_equal(giong_runtime_free(rt), 0);
}

/* In a child of gt_fork_run(): the write end of the pipe to the parent. */
static int gt_child_fd = -1;

/*
 * Run @fn on a runtime made from @cfg in a child process (for signals sent
 * to a whole process). The child writes to the parent through gt_child_fd;
 * it exits 42 when the run returned cleanly, 1 if it could not run, and is
 * ended by SIGALRM after 60 s whatever happens. Returns the child's pid and
 * the read end of the pipe in *@from_child.
 */
static inline pid_t gt_fork_run(const struct giong_config *cfg, giong_main_fn fn, void *arg,
				int *from_child)
{
	int p[2];
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct giong_runtime *rt;

		close(p[0]);
		gt_child_fd = p[1];
		alarm(60);
		if (giong_runtime_new(cfg, &rt) || giong_runtime_run(rt, fn, arg))
			_exit(1);
		giong_runtime_free(rt);
		_exit(42);
	}
	close(p[1]);
	*from_child = p[0];
	return pid;
}

/* Open descriptors of this process (entries of /proc/self/fd). */
static inline int gt_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the DIR's own descriptor */
}

#endif /* GIONG_TEST_H */
