/* SPDX-License-Identifier: MIT */
/* test_fiber.c - spawn, join, cancel, yield: order and results. */
#include "giong_test.h"

/* ------------------------------------------------ spawn order and join */

struct order {
	int log[16];
	int n;
};

struct rec_arg {
	struct order *o;
	int id;
};

static intptr_t record2(void *arg)
{
	struct rec_arg *a = arg;

	a->o->log[a->o->n++] = a->id;
	return a->id * 10;
}

static void spawn_fifo_main(unsigned w, void *arg)
{
	struct order *o = arg;
	struct rec_arg a[5];
	struct giong_task *t[5];
	intptr_t r;

	(void)w;
	for (int i = 0; i < 5; i++) {
		a[i].o = o;
		a[i].id = i + 1;
		if (!gt_check_int_equal(giong_spawn(record2, &a[i], &t[i]), 0))
			return;
	}
	/* Nothing ran yet: spawn does not switch. */
	gt_check_int_equal(o->n, 0);
	for (int i = 0; i < 5; i++) {
		gt_check_int_equal(giong_join(t[i], &r), 0);
		gt_check_int_equal(r, (i + 1) * 10);
	}
}

static void test_spawn_fifo_and_join(void **state)
{
	struct giong_config c = gt_config(1);
	struct order o = {0};

	(void)state;
	gt_run(&c, spawn_fifo_main, &o, NULL);
	assert_int_equal(o.n, 5);
	for (int i = 0; i < 5; i++)
		assert_int_equal(o.log[i], i + 1);
}

/* --------------------------------------------------------------- yield */

static intptr_t yielder(void *arg)
{
	struct rec_arg *a = arg;

	for (int i = 0; i < 3; i++) {
		a->o->log[a->o->n++] = a->id;
		gt_check_int_equal(giong_yield(), 0);
	}
	return 0;
}

static void yield_main(unsigned w, void *arg)
{
	struct rec_arg a[2] = {{arg, 1}, {arg, 2}};
	struct giong_task *t[2];

	(void)w;
	giong_spawn(yielder, &a[0], &t[0]);
	giong_spawn(yielder, &a[1], &t[1]);
	giong_join(t[0], NULL);
	giong_join(t[1], NULL);
}

static void test_yield_interleaves(void **state)
{
	struct giong_config c = gt_config(1);
	struct order o = {0};
	const int want[] = {1, 2, 1, 2, 1, 2};

	(void)state;
	gt_run(&c, yield_main, &o, NULL);
	assert_int_equal(o.n, 6);
	for (int i = 0; i < 6; i++)
		assert_int_equal(o.log[i], want[i]);
}

/* -------------------------------------------------------------- cancel */

struct cancel_state {
	int sleep_ret;
	int later_ret;
	int finished_join;
	intptr_t finished_value;
	int cancelled_join;
	int self_cancel_ret;
	int detached_ran;
};

static intptr_t sleeper(void *arg)
{
	struct cancel_state *s = arg;

	s->sleep_ret = giong_sleep_ms(60000);
	/* Every later blocking call fails too, until the task returns. */
	s->later_ret = giong_sleep_ms(1);
	return 7;
}

static intptr_t quick(void *arg)
{
	(void)arg;
	return 99;
}

static intptr_t self_cancel(void *arg)
{
	struct cancel_state *s = arg;

	giong_task_cancel(giong_task_current());
	gt_check_int_equal(giong_task_cancelled(), 1);
	s->self_cancel_ret = giong_yield();
	return 0;
}

static intptr_t detached(void *arg)
{
	struct cancel_state *s = arg;

	giong_sleep_ms(2);
	s->detached_ran = 1;
	return 0;
}

static void cancel_main(unsigned w, void *arg)
{
	struct cancel_state *s = arg;
	struct giong_task *t, *q, *sc;
	intptr_t r = 0;

	(void)w;
	if (!gt_check_int_equal(giong_spawn(sleeper, s, &t), 0))
		return;
	gt_check_int_equal(giong_yield(), 0); /* let it park */
	gt_check_int_equal(giong_task_cancel(t), 0);
	s->cancelled_join = giong_join(t, &r);

	/* A task that finished before the cancel keeps its value. */
	if (!gt_check_int_equal(giong_spawn(quick, NULL, &q), 0))
		return;
	gt_check_int_equal(giong_yield(), 0);
	gt_check_int_equal(giong_task_cancel(q), 0);
	s->finished_join = giong_join(q, &s->finished_value);

	if (!gt_check_int_equal(giong_spawn(self_cancel, s, &sc), 0))
		return;
	gt_check_int_equal(giong_join(sc, NULL), -ECANCELED);

	if (!gt_check_int_equal(giong_spawn(detached, s, NULL), 0))
		return;
}

static void test_cancel(void **state)
{
	struct giong_config c = gt_config(1);
	struct cancel_state s = {0};

	(void)state;
	gt_run(&c, cancel_main, &s, NULL);
	assert_int_equal(s.sleep_ret, -ECANCELED);
	assert_int_equal(s.later_ret, -ECANCELED);
	assert_int_equal(s.cancelled_join, -ECANCELED);
	assert_int_equal(s.finished_join, 0);
	assert_int_equal(s.finished_value, 99);
	assert_int_equal(s.self_cancel_ret, -ECANCELED);
	/* The runtime waited for the detached task after main returned. */
	assert_int_equal(s.detached_ran, 1);
}

/* ------------------------------------------------------- bad arguments */

static void bad_args_main(unsigned w, void *arg)
{
	(void)w;
	(void)arg;
	gt_check_int_equal(giong_spawn(NULL, NULL, NULL), -EINVAL);
	gt_check_int_equal(giong_join(NULL, NULL), -EINVAL);
	gt_check_int_equal(giong_join((struct giong_task *)giong_task_current(), NULL), -EINVAL);
	gt_check_int_equal(giong_task_cancel(NULL), -EINVAL);
	gt_check_int_equal(giong_task_detach(NULL), -EINVAL);
	gt_check_int_equal(giong_spawn_on(5, quick, NULL), -EINVAL);
}

static void test_bad_arguments(void **state)
{
	struct giong_config c = gt_config(1);

	(void)state;
	gt_run(&c, bad_args_main, NULL, NULL);
	/* Outside a worker: a clear code, no crash. */
	assert_int_equal(giong_spawn(quick, NULL, NULL), GIONG_ENOTWORKER);
	assert_int_equal(giong_yield(), GIONG_ENOTWORKER);
	assert_int_equal(giong_sleep_ms(1), GIONG_ENOTWORKER);
	assert_null(giong_task_current());
	assert_int_equal(giong_worker_index(), -1);
}

/* ------------------------------------------- many fibers, stack reuse */

static intptr_t tiny(void *arg)
{
	return (intptr_t)arg + 1;
}

static void many_main(unsigned w, void *arg)
{
	long *sum = arg;
	struct giong_task *t[100];
	struct giong_stats st;

	(void)w;
	for (int round = 0; round < 100; round++) {
		for (intptr_t i = 0; i < 100; i++)
			if (!gt_check_int_equal(giong_spawn(tiny, (void *)i, &t[i]), 0))
				return;
		for (int i = 0; i < 100; i++) {
			intptr_t r;
			gt_check_int_equal(giong_join(t[i], &r), 0);
			*sum += r;
		}
	}
	giong_stats(&st);
	/* 100 at a time, pooled: never more than 101 stacks mapped. */
	gt_check_true(st.stacks_live + st.stacks_pooled <= 101);
	gt_check_int_equal(st.fibers_spawned, 10001);
}

static void test_many_fibers_reuse_stacks(void **state)
{
	struct giong_config c = gt_config(1);
	long sum = 0;
	struct giong_stats st;

	(void)state;
	gt_run(&c, many_main, &sum, &st);
	assert_int_equal(sum, 100 * (100 * 101 / 2));
	assert_int_equal(st.fibers_live, 0);
	assert_int_equal(st.stacks_live, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spawn_fifo_and_join),
		cmocka_unit_test(test_yield_interleaves),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_many_fibers_reuse_stacks),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
