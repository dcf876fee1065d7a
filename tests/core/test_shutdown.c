/* SPDX-License-Identifier: MIT */
/* test_shutdown.c - graceful shutdown: tasks that finish within the grace
 * period, tasks cancelled when it expires, SIGTERM, accept-style loops. */
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "giong_test.h"

struct sd {
	_Atomic int finished;  /* tasks that completed their work */
	_Atomic int cancelled; /* tasks that saw -ECANCELED */
	_Atomic int loop_exit; /* accept-style loops that saw GIONG_ESHUTDOWN */
	int work_ms;
};

static intptr_t worker_task(void *arg)
{
	struct sd *s = arg;
	int ret = giong_sleep_ms((uint64_t)s->work_ms);

	if (ret == 0)
		atomic_fetch_add(&s->finished, 1);
	else if (ret == -ECANCELED)
		atomic_fetch_add(&s->cancelled, 1);
	return 0;
}

static void sd_main(unsigned w, void *arg)
{
	struct sd *s = arg;

	for (int i = 0; i < 10; i++)
		giong_spawn(worker_task, s, NULL);
	if (w == 0)
		giong_shutdown();
	/* An accept-style loop: waits for work until shutdown begins. */
	if (giong_shutdown_wait() == GIONG_ESHUTDOWN)
		atomic_fetch_add(&s->loop_exit, 1);
	gt_check_true(giong_is_shutting_down());
}

static void test_tasks_finish_within_grace(void **state)
{
	struct giong_config c = gt_config(2);
	struct sd s = {.work_ms = 30};

	(void)state;
	c.shutdown_grace_ms = 5000;
	gt_run(&c, sd_main, &s, NULL);
	assert_int_equal(atomic_load(&s.finished), 20);
	assert_int_equal(atomic_load(&s.cancelled), 0);
	assert_int_equal(atomic_load(&s.loop_exit), 2);
}

static void test_tasks_cancelled_when_grace_expires(void **state)
{
	struct giong_config c = gt_config(2);
	struct sd s = {.work_ms = 60000};
	struct timespec t0, t1;

	(void)state;
	c.shutdown_grace_ms = 50;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	gt_run(&c, sd_main, &s, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_int_equal(atomic_load(&s.finished), 0);
	assert_int_equal(atomic_load(&s.cancelled), 20);
	/* Ended at the grace period, not after the 60 s of work. */
	assert_true(t1.tv_sec - t0.tv_sec < 10);
}

/* --------------------------------------------------------------- SIGTERM */

static void sig_main(unsigned w, void *arg)
{
	(void)arg;
	if (w == 0) {
		/* Tell the parent we are up. */
		if (write(gt_child_fd, "r", 1) != 1)
			_exit(3);
	}
	giong_shutdown_wait();
}

static void test_sigterm_shuts_down(void **state)
{
	struct giong_config c = gt_config(2);
	int from_child, status;
	pid_t pid;
	char b;

	(void)state;
	c.shutdown_on_signals = true;
	pid = gt_fork_run(&c, sig_main, NULL, &from_child);
	assert_int_equal(read(from_child, &b, 1), 1);
	usleep(20000);
	kill(pid, SIGTERM);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	close(from_child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 42);
}

/* ------------------------------------------ create and destroy 100 times */

static void noop_main(unsigned w, void *arg)
{
	(void)w;
	(void)arg;
	giong_sleep_ms(0);
}

static void test_100_runtimes_no_fd_leak(void **state)
{
	int before = gt_count_fds();

	(void)state;
	for (int i = 0; i < 100; i++) {
		struct giong_config c = gt_config(2);

		c.shutdown_on_signals = (i % 2) == 0;
		gt_run(&c, noop_main, NULL, NULL);
	}
	assert_int_equal(gt_count_fds(), before);
}

static void test_run_once(void **state)
{
	struct giong_config c = gt_config(1);
	struct giong_runtime *rt;

	(void)state;
	assert_int_equal(giong_runtime_new(&c, &rt), 0);
	assert_int_equal(giong_runtime_run(rt, noop_main, NULL), 0);
	assert_int_equal(giong_runtime_run(rt, noop_main, NULL), -EBUSY);
	assert_int_equal(giong_runtime_free(rt), 0);
	assert_int_equal(giong_runtime_shutdown(NULL), -EINVAL);
	assert_int_equal(giong_shutdown(), GIONG_ENOTWORKER);
	assert_false(giong_is_shutting_down());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tasks_finish_within_grace),
		cmocka_unit_test(test_tasks_cancelled_when_grace_expires),
		cmocka_unit_test(test_sigterm_shuts_down),
		cmocka_unit_test(test_100_runtimes_no_fd_leak),
		cmocka_unit_test(test_run_once),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
