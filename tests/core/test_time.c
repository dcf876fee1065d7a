/* SPDX-License-Identifier: MIT */
/* test_time.c - sleeping never ends early; deadlines nest and time out any
 * parked call; thousands of concurrent timers; a worker that busy-polls
 * before it parks (spin_before_park_us) still wakes for its timers and for
 * work sent from another worker. */
#include <time.h>

#include "giong_test.h"

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

struct early {
	int n, early, bad;
};

static intptr_t sleep_check(void *arg)
{
	struct early *e = arg;

	for (int i = 0; i < 20; i++) {
		uint64_t ms = (uint64_t)(i % 5) + 1;
		uint64_t t0 = mono_us();

		if (giong_sleep_ms(ms))
			e->bad++;
		if (mono_us() - t0 < ms * 1000)
			e->early++;
		e->n++;
	}
	return 0;
}

static void early_main(unsigned w, void *arg)
{
	(void)w;
	for (int i = 0; i < 10; i++)
		giong_spawn(sleep_check, arg, NULL);
}

static void test_sleep_never_early(void **state)
{
	struct giong_config c = gt_config(1);
	struct early e = {0};

	(void)state;
	gt_run(&c, early_main, &e, NULL);
	assert_int_equal(e.n, 200);
	assert_int_equal(e.bad, 0);
	assert_int_equal(e.early, 0);
}

struct dl {
	int sleep_ret, inner_ret, outer_after, nodl;
	uint64_t elapsed_ms;
	uint64_t restored;
};

static void deadline_main(unsigned w, void *arg)
{
	struct dl *d = arg;
	uint64_t t0, outer, inner;

	(void)w;
	gt_check_int_equal(giong_deadline(), GIONG_NO_DEADLINE);
	t0 = giong_now_ms();
	outer = giong_deadline_in(30);
	/* A nested scope can only shorten it. */
	inner = giong_deadline_in(1000);
	d->inner_ret = giong_sleep_ms(5000);
	d->elapsed_ms = giong_now_ms() - t0;
	giong_deadline_restore(inner);
	d->outer_after = giong_sleep_ms(1); /* the deadline has passed */
	giong_deadline_restore(outer);
	d->restored = giong_deadline();
	d->nodl = giong_sleep_ms(1);
}

static void test_deadline_scopes(void **state)
{
	struct giong_config c = gt_config(1);
	struct dl d = {0};

	(void)state;
	gt_run(&c, deadline_main, &d, NULL);
	assert_int_equal(d.inner_ret, -ETIMEDOUT);
	assert_in_range(d.elapsed_ms, 30, 1000);
	assert_int_equal(d.outer_after, -ETIMEDOUT);
	assert_int_equal(d.restored, GIONG_NO_DEADLINE);
	assert_int_equal(d.nodl, 0);
}

#define NTIMERS 5000
#define FIRST_MS 1000 /* no timer is due before start + FIRST_MS */

struct many {
	uint64_t start; /* giong_now_ms() when main began */
	int fired, early;
	struct giong_stats mid;
	uint64_t mid_ms;
};

static intptr_t one_timer(void *arg)
{
	struct many *m = arg;
	uint64_t when = m->start + FIRST_MS + (uint64_t)(rand() % 50);

	if (giong_sleep_until(when) == 0)
		m->fired++;
	if (mono_us() < when * 1000)
		m->early++;
	return 0;
}

static void many_main(unsigned w, void *arg)
{
	struct many *m = arg;

	(void)w;
	m->start = mono_us() / 1000;
	for (int i = 0; i < NTIMERS; i++)
		giong_spawn(one_timer, m, NULL);
	giong_yield(); /* they all arm their timers */
	giong_yield();
	giong_stats(&m->mid);
	m->mid_ms = mono_us() / 1000;
}

static void test_5000_timers(void **state)
{
	struct giong_config c = gt_config(1);
	struct many m = {0};
	struct giong_stats fin;

	(void)state;
	c.stack_size = 16 * 1024;
	gt_run(&c, many_main, &m, &fin);
	/* All armed at once, unless a slow build (TSan on a busy machine) took
	 * longer than FIRST_MS to start them, when some may have fired. */
	if (m.mid_ms < m.start + FIRST_MS)
		assert_true(m.mid.timers_armed >= NTIMERS);
	else
		print_message("slow start (%lu ms): armed count not checked\n",
			      (unsigned long)(m.mid_ms - m.start));
	assert_int_equal(m.fired, NTIMERS);
	assert_int_equal(m.early, 0);
	assert_int_equal(fin.timers_armed, 0);
}

/* ---- spin_before_park_us ---------------------------------------------- */

/* Two seconds of polling: far longer than anything here waits, so a spin
 * that missed a timer or a message would show as a wait of about this much
 * (from when it began: the sleep, the start of worker 1's idling). A spin
 * that sees what it waits for returns at once, so the length costs nothing;
 * it leaves half of it for a loaded machine (2 cores, -j2, valgrind's one
 * thread at a time, the emulated guest) to tell the two apart. */
#define SPIN_US 2000000

struct spin {
	uint64_t slept_us[10];
	int sleep_bad;
	_Atomic uint64_t posted_us, ran_us;
	int spawn_ret;
};

static intptr_t spin_ran(void *arg)
{
	struct spin *sp = arg;

	atomic_store(&sp->ran_us, mono_us());
	return 0;
}

static void spin_main(unsigned w, void *arg)
{
	struct spin *sp = arg;

	if (w != 0)
		return; /* worker 1 idles: it spins, then parks, until it is sent work */
	for (int i = 0; i < 10; i++) {
		uint64_t t0 = mono_us();

		if (giong_sleep_ms(5))
			sp->sleep_bad++;
		sp->slept_us[i] = mono_us() - t0;
	}
	/* Worker 1 has had nothing to do for 50 ms: it is inside its spin. */
	atomic_store(&sp->posted_us, mono_us());
	sp->spawn_ret = giong_spawn_on(1, spin_ran, sp);
	while (!atomic_load(&sp->ran_us) && giong_sleep_ms(1) == 0)
		;
}

static void test_spin_wakes_for_timers_and_work(void **state)
{
	struct giong_config c = gt_config(2);
	struct spin sp;
	uint64_t worst = 0;

	(void)state;
	memset(&sp, 0, sizeof(sp));
	c.spin_before_park_us = SPIN_US;
	gt_run(&c, spin_main, &sp, NULL);
	assert_int_equal(sp.sleep_bad, 0);
	assert_int_equal(sp.spawn_ret, 0);
	for (int i = 0; i < 10; i++) {
		assert_true(sp.slept_us[i] >= 5000); /* never early */
		if (sp.slept_us[i] > worst)
			worst = sp.slept_us[i];
	}
	/* A 5 ms sleep is over when its timer is due, not when the spin is:
	 * the slowest of ten within half the spin (a loaded machine). */
	print_message("spin %u us: slowest 5 ms sleep %" PRIu64 " us, work sent to a spinning "
		      "worker ran after %" PRIu64 " us\n",
		      SPIN_US, worst, sp.ran_us - sp.posted_us);
	assert_true(worst < SPIN_US / 2);
	assert_true(sp.ran_us >= sp.posted_us);
	assert_true(sp.ran_us - sp.posted_us < SPIN_US / 2);
}

/* Far times saturate, never wrap into the past: a deadline UINT64_MAX ms
 * away times out nothing, and a sleep that long lasts until cancelled. */
struct far {
	int dl_sleep_ret, sleep_ret;
	uint64_t dl_after, sleep_ms;
};

static intptr_t sleep_forever(void *arg)
{
	struct far *f = arg;
	uint64_t t0 = mono_us();

	f->sleep_ret = giong_sleep_ms(UINT64_MAX);
	f->sleep_ms = (mono_us() - t0) / 1000;
	return 0;
}

static void far_main(unsigned w, void *arg)
{
	struct far *f = arg;
	struct giong_task *t;
	uint64_t saved;

	(void)w;
	saved = giong_deadline_in(UINT64_MAX);
	f->dl_after = giong_deadline();
	f->dl_sleep_ret = giong_sleep_ms(10);
	giong_deadline_restore(saved);
	gt_check_int_equal(giong_spawn(sleep_forever, f, &t), 0);
	gt_check_int_equal(giong_sleep_ms(50), 0);
	gt_check_int_equal(giong_task_cancel(t), 0);
	gt_check_int_equal(giong_join(t, NULL), -ECANCELED);
}

static void test_far_times_saturate(void **state)
{
	struct giong_config c = gt_config(1);
	struct far f = {0};

	(void)state;
	gt_run(&c, far_main, &f, NULL);
	assert_true(f.dl_after >= UINT64_MAX - 1);
	assert_int_equal(f.dl_sleep_ret, 0);
	assert_int_equal(f.sleep_ret, -ECANCELED);
	assert_true(f.sleep_ms >= 50);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sleep_never_early),
		cmocka_unit_test(test_deadline_scopes),
		cmocka_unit_test(test_far_times_saturate),
		cmocka_unit_test(test_5000_timers),
		cmocka_unit_test(test_spin_wakes_for_timers_and_work),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
