/* SPDX-License-Identifier: MIT */
/*
 * test_faults.c - the fault plan of a GIONG_FAULTS=ON build
 * (private/giong_faults.h): the syntax of GIONG_FAULTS, decisions that
 * replay for a seed and a worker, the counters, and a runtime that copes
 * with a full SQ and failing enters. Built only in such a build; each test
 * sets its own plan, whatever GIONG_FAULTS the suite runs under, and puts
 * that one back at the end.
 */
#include <liburing.h>
#include <pthread.h>

#include "giong_faults.h"

#include "giong_test.h"

static char env_plan[512];

static void plan(const char *spec)
{
	char err[160];

	if (giong__faults_configure(spec, err, sizeof(err)))
		fail_msg("plan '%s' refused: %s", spec, err);
}

static int restore(void **state)
{
	(void)state;
	plan(env_plan);
	return 0;
}

static void test_syntax(void **state)
{
	static const char *const good[] = {
		"",
		"seed=7,alloc=1/500,sqe=1/50,enter=1/100,short=1/10,nobufs=1/100,tls=1/1000",
		"sqe=1/1",
		"alloc=0",
		"seed=18446744073709551615,enter=0/3",
		"tls=4294967295/4294967295",
		"workers=1,alloc=1/2",
		"workers=0",
		"alloc=@1",
		"seed=3,tls=@18446744073709551615,sqe=1/2",
	};
	static const char *const bad[] = {
		"alloc",
		"alloc=",
		"alloc=1",
		"alloc=1/0",
		"alloc=2/1",
		"alloc=-1/2",
		"alloc=1/2x",
		"alloc= 1/2",
		"bogus=1/2",
		"seed=x",
		"seed=",
		"seed=1,seed=2",
		"sqe=1/2,sqe=1/3",
		",",
		"sqe=1/2,",
		",sqe=1/2",
		"sqe=1/2,,enter=1/2",
		"tls=1/4294967296",
		"seed=18446744073709551616",
		"SQE=1/2",
		"workers=2",
		"workers=",
		"workers=1,workers=1",
		"alloc=@0",
		"alloc=@",
		"alloc=@x",
		"alloc=@1/2",
		"alloc=@-1",
		"alloc=@18446744073709551616",
		"alloc=@1,alloc=1/2",
	};
	char err[160];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		err[0] = 'x';
		if (giong__faults_configure(good[i], err, sizeof(err)))
			fail_msg("'%s' refused: %s", good[i], err);
		assert_string_equal(err, "");
	}
	assert_int_equal(giong__faults_configure(NULL, err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (giong__faults_configure(bad[i], err, sizeof(err)) != -EINVAL)
			fail_msg("'%s' accepted", bad[i]);
		if (!err[0])
			fail_msg("'%s' refused without a reason", bad[i]);
	}
	/* A refused plan leaves the one before it. */
	plan("sqe=1/1");
	assert_int_equal(giong__faults_configure("sqe=1/0", err, sizeof(err)), -EINVAL);
	giong__faults_thread(0);
	assert_int_not_equal(giong__fault(GIONG__FAULT_SQE), 0);
}

/* @n decisions of @kind on stream @worker, as bits. */
static void decide(unsigned worker, enum giong__fault_kind kind, unsigned n, uint8_t *bits)
{
	giong__faults_thread(worker);
	for (unsigned i = 0; i < n; i++)
		bits[i] = giong__fault(kind) != 0;
}

static void test_replay(void **state)
{
	enum { N = 3000 };
	static uint8_t a[N], b[N], c[N], d[N];
	unsigned hits = 0;

	(void)state;
	plan("seed=7,sqe=1/3,enter=1/3");
	decide(0, GIONG__FAULT_SQE, N, a);
	decide(0, GIONG__FAULT_SQE, N, b);
	assert_memory_equal(a, b, N); /* the same worker replays */
	for (unsigned i = 0; i < N; i++)
		hits += a[i];
	assert_in_range(hits, N / 3 - N / 15, N / 3 + N / 15);
	assert_int_equal(giong__faults_decided(GIONG__FAULT_SQE), 2 * N);
	assert_int_equal(giong__faults_injected(GIONG__FAULT_SQE), 2 * hits);
	assert_int_equal(giong__faults_decided(GIONG__FAULT_ALLOC), 0);

	decide(1, GIONG__FAULT_SQE, N, c);
	assert_memory_not_equal(a, c, N); /* another worker, another sequence */
	decide(0, GIONG__FAULT_ENTER, N, c);
	assert_memory_not_equal(a, c, N); /* another kind, too */
	plan("seed=8,sqe=1/3");
	decide(0, GIONG__FAULT_SQE, N, d);
	assert_memory_not_equal(a, d, N); /* another seed */
	plan("seed=7,sqe=1/3");
	decide(0, GIONG__FAULT_SQE, N, d);
	assert_memory_equal(a, d, N);

	/* Kinds not in the plan never fire, and are not counted. */
	decide(0, GIONG__FAULT_TLS, N, d);
	for (unsigned i = 0; i < N; i++)
		assert_int_equal(d[i], 0);
	assert_int_equal(giong__faults_decided(GIONG__FAULT_TLS), 0);
}

/* "kind=@N": the Nth decision of each stream fails, no other (what a sweep
 * over every failure point of a scenario takes). */
static void test_nth(void **state)
{
	enum { N = 64 };
	uint8_t a[N];

	(void)state;
	plan("seed=7,tls=@5");
	for (unsigned worker = 0; worker < 3; worker++) {
		decide(worker, GIONG__FAULT_TLS, N, a);
		for (unsigned i = 0; i < N; i++)
			if (a[i] != (i == 4))
				fail_msg("worker %u: decision %u is %u", worker, i + 1, a[i]);
	}
	assert_int_equal(giong__faults_injected(GIONG__FAULT_TLS), 3);
	assert_int_equal(giong__faults_decided(GIONG__FAULT_TLS), 3 * N);
	decide(0, GIONG__FAULT_ALLOC, N, a); /* not in the plan */
	for (unsigned i = 0; i < N; i++)
		assert_int_equal(a[i], 0);
	plan("alloc=@1");
	decide(0, GIONG__FAULT_ALLOC, 2, a);
	assert_int_equal(a[0], 1);
	assert_int_equal(a[1], 0);
}

static void test_alloc(void **state)
{
	struct giong_config c = gt_config(1);
	struct giong_runtime *rt = NULL;

	(void)state;
	plan("alloc=1/1");
	/* giong's own allocations fail, cleanly (ASan would see a leak)... */
	assert_int_equal(giong_runtime_new(&c, &rt), -ENOMEM);
	assert_null(rt);
	assert_true(giong__faults_injected(GIONG__FAULT_ALLOC) >= 1);
	/* ...the program's own do not. */
	void *p = malloc(16);
	assert_non_null(p);
	free(p);
	plan("");
}

struct nops {
	unsigned n, ok;
};

static intptr_t nop_task(void *arg)
{
	struct nops *r = arg;

	for (unsigned i = 0; i < 50; i++) {
		struct io_uring_sqe *sqe = giong_sqe();

		if (!sqe) {
			gt_check_fail_msg("no SQE");
			return -1;
		}
		io_uring_prep_nop(sqe);
		if (!gt_check_int_equal(giong_io(sqe), 0))
			return -1;
		if (i % 10 == 0)
			giong_sleep_ms(1);
	}
	r->ok++;
	return 0;
}

static void nops_main(unsigned w, void *arg)
{
	struct nops *r = arg;
	struct giong_task *t[64];
	unsigned n = 0;

	(void)w;
	/* Joined, not left to the grace period (which starts when main returns):
	 * emulated, under ASan, the 3,200 operations take longer than it. */
	while (n < r->n && n < 64 && gt_check_int_equal(giong_spawn(nop_task, r, &t[n]), 0))
		n++;
	for (unsigned i = 0; i < n; i++)
		giong_join(t[i], NULL);
}

/* Half the SQE requests find the ring full and half the enters fail: every
 * operation still completes, every task ends, nothing leaks. */
static void test_ring_copes(void **state)
{
	struct giong_config c = gt_config(1);
	struct nops r = {.n = 64};

	(void)state;
	c.ring_entries = 16;
	plan("seed=3,sqe=1/2,enter=1/2");
	gt_run(&c, nops_main, &r, NULL);
	assert_int_equal(r.ok, r.n);
	assert_true(giong__faults_injected(GIONG__FAULT_SQE) > 0);
	assert_true(giong__faults_injected(GIONG__FAULT_ENTER) > 0);
}

static void workers_main(unsigned w, void *arg)
{
	struct giong_task *t = NULL;

	(void)w;
	*(int *)arg = giong_spawn(nop_task, NULL, &t); /* a worker's allocation: fails */
	if (t)
		giong_join(t, NULL);
}

struct workers_only {
	int new_ret, spawned, free_ret;
	uint64_t decided_at_new, injected;
};

/* On a thread of its own: this one (test_replay) took a worker's stream. */
static void *workers_only_thread(void *arg)
{
	struct workers_only *r = arg;
	struct giong_config c = gt_config(1);
	struct giong_runtime *rt = NULL;

	r->new_ret = giong_runtime_new(&c, &rt);
	r->decided_at_new = giong__faults_decided(GIONG__FAULT_ALLOC);
	if (r->new_ret)
		return NULL;
	giong_runtime_run(rt, workers_main, &r->spawned); /* its own main may fail to start */
	r->injected = giong__faults_injected(GIONG__FAULT_ALLOC);
	r->free_ret = giong_runtime_free(rt);
	return NULL;
}

/* workers=1: the program's own threads decide no fault (a server's start-up,
 * its configuration, is not the plan's), the workers still do. */
static void test_workers_only(void **state)
{
	struct workers_only r = {.spawned = 1};
	pthread_t th;

	(void)state;
	plan("workers=1,alloc=1/1");
	assert_int_equal(pthread_create(&th, NULL, workers_only_thread, &r), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(r.new_ret, 0);
	assert_int_equal(r.decided_at_new, 0);
	assert_true(r.injected >= 1);
	assert_int_not_equal(r.spawned, 0);
	assert_int_equal(r.free_ret, 0);
	plan("");
}

int main(void)
{
	const char *env = getenv("GIONG_FAULTS");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_syntax, restore),
		cmocka_unit_test_teardown(test_replay, restore),
		cmocka_unit_test_teardown(test_nth, restore),
		cmocka_unit_test_teardown(test_alloc, restore),
		cmocka_unit_test_teardown(test_ring_copes, restore),
		cmocka_unit_test_teardown(test_workers_only, restore),
	};

	snprintf(env_plan, sizeof(env_plan), "%s", env ? env : "");
	if (giong__faults_configure("", NULL, 0)) /* no fault while checking for io_uring */
		return 1;
	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
