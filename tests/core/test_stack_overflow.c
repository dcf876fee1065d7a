// SPDX-License-Identifier: MIT
/*
 * A fiber that overflows its stack must die of SIGSEGV with a message
 * naming the guard page and the fiber, and faults elsewhere must reach
 * whatever handled SIGSEGV before us. Each case runs in a forked child
 * whose stderr comes back through a pipe.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "context.h"
#include "stack.h"

#ifdef GIONG_VALGRIND
#include <valgrind/valgrind.h>
#endif

#define FIBER_NAME "overflow-victim"

struct child_result {
	int status;
	char err[4096];
};

/* Run @fn in a child with stderr captured; the child never returns. */
static void run_child(void (*fn)(void), struct child_result *r)
{
	int fds[2];
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], STDERR_FILENO);
		close(fds[1]);
		/* CMocka catches SIGSEGV to report tests; the child must not. */
		signal(SIGSEGV, SIG_DFL);
		signal(SIGBUS, SIG_DFL);
		fn();
		_exit(99); /* fn was supposed to die */
	}
	close(fds[1]);
	while ((n = read(fds[0], r->err + len, sizeof(r->err) - 1 - len)) > 0)
		len += (size_t)n;
	r->err[len] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &r->status, 0), pid);
}

/* ---- the overflowing fiber ------------------------------------------------ */

static volatile unsigned long never = ULONG_MAX;
static struct giong__ctx victim_ctx, victim_back;

/* Unbounded (to the compiler: bounded by a volatile) non-tail recursion. */
static __attribute__((noinline)) unsigned long overflow(unsigned long n)
{
	volatile char buf[256];

	buf[0] = (char)n;
	if (n == never)
		return 0;
	return overflow(n + 1) + buf[0];
}

static void victim_entry(void *arg)
{
	(void)arg;
	overflow(0);
	giong__ctx_switch_final(&victim_ctx, &victim_back);
}

static void overflow_on_this_thread(void)
{
	struct giong__stack_pool pool;
	struct giong__stack *s;

	giong__stack_guard_thread_init();
	giong__stack_pool_init(&pool, 64 * 1024, 4);
	/* A few other live stacks so the lookup has a list to walk. */
	for (int i = 0; i < 3; i++)
		if (giong__stack_get(&pool, &s) != 0)
			_exit(98);
	if (giong__stack_get(&pool, &s) != 0)
		_exit(98);
	s->owner_name = FIBER_NAME;
	giong__ctx_init_thread(&victim_back);
	giong__ctx_make(&victim_ctx, s->lo, s->size, victim_entry, NULL);
	giong__ctx_switch(&victim_back, &victim_ctx);
}

static void child_overflow(void)
{
	if (giong__stack_guard_install() != 0)
		_exit(97);
	overflow_on_this_thread();
}

static void *overflow_thread(void *arg)
{
	(void)arg;
	overflow_on_this_thread();
	return NULL;
}

/* Worker threads have their own live list and alternate signal stack. */
static void child_overflow_in_thread(void)
{
	pthread_t t;

	if (giong__stack_guard_install() != 0)
		_exit(97);
	if (pthread_create(&t, NULL, overflow_thread, NULL) != 0)
		_exit(96);
	pthread_join(t, NULL);
}

static void check_overflow_report(const struct child_result *r)
{
	assert_true(WIFSIGNALED(r->status));
	assert_int_equal(WTERMSIG(r->status), SIGSEGV);
	assert_non_null(strstr(r->err, "giong: fiber stack overflow"));
	assert_non_null(strstr(r->err, "guard page"));
	assert_non_null(strstr(r->err, "'" FIBER_NAME "'"));
	assert_non_null(strstr(r->err, "stack size "));
	assert_non_null(strstr(r->err, "giong_config.stack_size"));
}

static void test_overflow_reported(void **state)
{
	struct child_result r;

	(void)state;
	run_child(child_overflow, &r);
	check_overflow_report(&r);
}

static void test_overflow_reported_in_thread(void **state)
{
	struct child_result r;

	(void)state;
	run_child(child_overflow_in_thread, &r);
	check_overflow_report(&r);
}

/* ---- faults that are not overflows ----------------------------------------- */

static void fault_elsewhere(void)
{
	volatile char *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		_exit(95);
#ifdef GIONG_VALGRIND
	/* The fault is the point; memcheck need not report it as an error. */
	VALGRIND_DISABLE_ERROR_REPORTING;
#endif
	p[0] = 1;
}

static void child_fault_default(void)
{
	struct giong__stack_pool pool;
	struct giong__stack *s;

	if (giong__stack_guard_install() != 0)
		_exit(97);
	giong__stack_guard_thread_init();
	giong__stack_pool_init(&pool, 64 * 1024, 4);
	if (giong__stack_get(&pool, &s) != 0)
		_exit(98);
	fault_elsewhere();
}

static void test_other_fault_default_action(void **state)
{
	struct child_result r;

	(void)state;
	run_child(child_fault_default, &r);
	assert_true(WIFSIGNALED(r.status));
	assert_int_equal(WTERMSIG(r.status), SIGSEGV);
	assert_null(strstr(r.err, "giong:"));
}

#ifdef GIONG_COVERAGE
void __gcov_dump(void); /* libgcov's: _exit() skips the dump at exit */
#endif

static void previous_handler(int sig, siginfo_t *si, void *uctx)
{
	(void)si;
	(void)uctx;
#ifdef GIONG_COVERAGE
	__gcov_dump();
#endif
	_exit(sig == SIGSEGV ? 42 : 43);
}

static void child_fault_chained(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = previous_handler;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	if (giong__stack_guard_install() != 0 || giong__stack_guard_install() != 0)
		_exit(97);
	giong__stack_guard_thread_init();
	fault_elsewhere();
}

static void test_other_fault_chained(void **state)
{
	struct child_result r;

	(void)state;
	run_child(child_fault_chained, &r);
	assert_true(WIFEXITED(r.status));
	assert_int_equal(WEXITSTATUS(r.status), 42);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_overflow_reported),
		cmocka_unit_test(test_overflow_reported_in_thread),
		cmocka_unit_test(test_other_fault_default_action),
		cmocka_unit_test(test_other_fault_chained),
	};

#if defined(GIONG_ASAN) || defined(GIONG_TSAN)
	/* context.h defines these for -fsanitize=address/thread builds too. */
	fprintf(stderr, "skip: ASan/TSan own SIGSEGV, so giong installs no guard-page "
			"handler in sanitizer builds (ASan reports stack overflows itself)\n");
	return 77;
#endif
	return cmocka_run_group_tests(tests, NULL, NULL);
}
