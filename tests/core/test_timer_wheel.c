// SPDX-License-Identifier: MIT
/*
 * test_timer_wheel.c - the hierarchical timing wheel against a reference
 * model, plus callbacks that mutate the wheel while it fires and edge cases.
 *
 * Randomised tests print "seed N" on failure; rerun just that seed with
 * GIONG_TW_SEED=N. GIONG_TW_SEEDS=N changes how many seeds run.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timer_wheel.h"

#define MS_DAY (24ull * 3600 * 1000)
#define SPAN (1ull << 36) /* 64^6 ms: what the six levels cover */

static struct giong__wheel W;

/* Identifies the failing run in every assertion message. */
static uint64_t cur_seed;
static int cur_op;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			fail_msg("seed %llu op %d: %s (line %d)", (unsigned long long)cur_seed,    \
				 cur_op, #cond, __LINE__);                                         \
	} while (0)

/* splitmix64: small, seedable, good enough to drive operations. */
static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0. The modulo bias is irrelevant here. */
static uint64_t rnd_below(uint64_t n)
{
	return rnd() % n;
}

static uint64_t pow64(unsigned k)
{
	return 1ull << (6 * k);
}

static void seed_range(uint64_t *first, uint64_t *n, uint64_t dflt)
{
	const char *one = getenv("GIONG_TW_SEED");
	const char *cnt = getenv("GIONG_TW_SEEDS");

	*first = 1;
	*n = dflt;
	if (one) {
		*first = strtoull(one, NULL, 0);
		*n = 1;
	} else if (cnt) {
		*n = strtoull(cnt, NULL, 0);
	}
}

/* ---- test timers and the fire log ---- */

#define NTIMERS 256
#define LOG_MAX (1u << 16)

struct tt {
	struct giong__timer t;
	unsigned id;
	/* Reference model. */
	bool armed;
	bool deferred; /* armed for <= the tick being fired */
	uint64_t expires;
	uint64_t eff; /* max(expires, wheel now at arm time) */
	uint64_t seq; /* arm order */
};

static struct tt *timers;
static unsigned ntimers;
static uint64_t arm_seq;

static struct {
	unsigned id;
	uint64_t at; /* W.now when it fired */
} fire_log[LOG_MAX];
static unsigned nlog;

static void log_fire(struct giong__timer *t)
{
	struct tt *x = (struct tt *)((char *)t - offsetof(struct tt, t));

	CHECK(!giong__timer_armed(t));
	CHECK(t->expires <= W.now); /* never early */
	CHECK(nlog < LOG_MAX);
	fire_log[nlog].id = x->id;
	fire_log[nlog].at = W.now;
	nlog++;
}

static void timers_setup(unsigned n, void (*fn)(struct giong__timer *))
{
	timers = calloc(n, sizeof(*timers));
	assert_non_null(timers);
	ntimers = n;
	for (unsigned i = 0; i < n; i++) {
		giong__timer_init(&timers[i].t, fn);
		timers[i].id = i;
	}
	nlog = 0;
	arm_seq = 0;
}

static void timers_teardown(void)
{
	free(timers);
	timers = NULL;
}

static void model_arm(struct tt *x, uint64_t e)
{
	giong__wheel_arm(&W, &x->t, e);
	x->armed = true;
	x->expires = e;
	x->eff = e > W.now ? e : W.now;
	x->seq = arm_seq++;
}

static void model_cancel(struct tt *x)
{
	giong__wheel_cancel(&W, &x->t);
	x->armed = false;
}

/* ---- randomised test against the model ---- */

/* A delay whose expiry lands on every level, at boundaries, in the past and
 * beyond the wheel's span. */
static uint64_t random_expiry(void)
{
	unsigned r = (unsigned)rnd_below(100);
	uint64_t now = W.now;

	if (r < 6) {
		uint64_t back = rnd_below(200);

		return back > now ? 0 : now - back; /* past or now */
	}
	if (r < 14) {
		/* Just around a multiple of 64^k. */
		uint64_t m = pow64(1 + (unsigned)rnd_below(6));
		uint64_t e = (now / m + 1 + rnd_below(2)) * m;

		return e - 1 + rnd_below(3);
	}
	if (r < 18)
		return now + SPAN - pow64(5) + rnd_below(2 * SPAN); /* overflow */
	if (r < 22)
		return now + 30 * MS_DAY;
	{
		unsigned l = (unsigned)rnd_below(6);
		uint64_t lo = l ? pow64(l) : 1;
		uint64_t hi = pow64(l + 1);
		uint64_t d;

		if (hi > 30 * MS_DAY)
			hi = 30 * MS_DAY;
		d = lo + rnd_below(hi - lo + 1);
		return now + d;
	}
}

static uint64_t random_target(void)
{
	unsigned r = (unsigned)rnd_below(100);
	uint64_t now = W.now;

	if (r < 30)
		return now + rnd_below(71);
	if (r < 50) {
		/* Exactly to (or either side of) a 64, 4096, 262144... boundary. */
		uint64_t m = pow64(1 + (unsigned)rnd_below(6));
		uint64_t b = (now / m + 1) * m;

		return b - 1 + rnd_below(3);
	}
	if (r < 65)
		return now + rnd_below(pow64(1 + (unsigned)rnd_below(5)));
	if (r < 73)
		return now + rnd_below(30 * MS_DAY);
	if (r < 76)
		return now + SPAN + rnd_below(SPAN);
	if (r < 88) {
		/* To a random armed timer's expiry, or just before it. */
		struct tt *x = &timers[rnd_below(ntimers)];

		if (x->armed && x->expires >= now)
			return x->expires - rnd_below(2);
		return now;
	}
	{
		uint64_t ne = giong__wheel_next_expiry(&W);

		if (ne == UINT64_MAX)
			return now + 1;
		return ne - rnd_below(2); /* may be behind the clock */
	}
}

static int cmp_eff_seq(const void *a, const void *b)
{
	const struct tt *x = *(const struct tt *const *)a;
	const struct tt *y = *(const struct tt *const *)b;

	if (x->eff != y->eff)
		return x->eff < y->eff ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* count and next_expiry agree with the model. */
static void check_model(void)
{
	unsigned armed = 0;
	uint64_t min_eff = UINT64_MAX;
	uint64_t ne = giong__wheel_next_expiry(&W);

	for (unsigned i = 0; i < ntimers; i++) {
		CHECK(timers[i].armed == giong__timer_armed(&timers[i].t));
		if (!timers[i].armed)
			continue;
		armed++;
		if (timers[i].eff < min_eff)
			min_eff = timers[i].eff;
	}
	CHECK(giong__wheel_count(&W) == armed);
	if (!armed) {
		CHECK(ne == UINT64_MAX);
		return;
	}
	CHECK(ne <= min_eff); /* never later than the real earliest */
	CHECK(ne >= W.now);
	/* Exact for level 0: the earliest is due within this 64 ms period. */
	if (min_eff > W.now && (min_eff ^ W.now) < 64)
		CHECK(ne == min_eff);
	if (min_eff == W.now)
		CHECK(ne == W.now);
}

static void do_advance(uint64_t target)
{
	struct tt *expect[NTIMERS];
	unsigned n = 0, got;
	/* The clock never goes back; past-due timers fire regardless. */
	uint64_t to = target > W.now ? target : W.now;

	for (unsigned i = 0; i < ntimers; i++)
		if (timers[i].armed && timers[i].expires <= to)
			expect[n++] = &timers[i];
	qsort(expect, n, sizeof(expect[0]), cmp_eff_seq);

	nlog = 0;
	got = giong__wheel_advance(&W, target);
	CHECK(got == nlog);
	CHECK(nlog == n);
	CHECK(W.now == to);
	for (unsigned i = 0; i < n; i++) {
		CHECK(fire_log[i].id == expect[i]->id);
		/* Fired exactly at its expiry, or at once if armed late. */
		CHECK(fire_log[i].at == expect[i]->eff);
		expect[i]->armed = false;
	}
}

static void run_model_seed(uint64_t seed, int nops)
{
	uint64_t starts[] = {0, 63, SPAN - 3, (1ull << 30) - 1, 1ull << 40};

	cur_seed = seed;
	cur_op = -1;
	rng_state = seed;
	timers_setup(NTIMERS, log_fire);
	if (rnd_below(2))
		giong__wheel_init(&W, starts[rnd_below(5)]);
	else
		giong__wheel_init(&W, rnd_below(1ull << 40));

	for (cur_op = 0; cur_op < nops; cur_op++) {
		unsigned r = (unsigned)rnd_below(100);
		struct tt *x = &timers[rnd_below(ntimers)];

		if (r < 45)
			model_arm(x, random_expiry()); /* arm or re-arm */
		else if (r < 60)
			model_cancel(x); /* maybe a no-op */
		else
			do_advance(random_target());
		check_model();
	}
	/* Drain: everything left must fire, on time, in a couple of jumps. */
	do_advance(W.now + 3 * SPAN);
	check_model();
	CHECK(giong__wheel_count(&W) == 0);
	timers_teardown();
}

static void test_random_vs_model(void **state)
{
	uint64_t first, n;

	(void)state;
	seed_range(&first, &n, 200);
	for (uint64_t s = first; s < first + n; s++)
		run_model_seed(s, 2000);
}

/* ---- randomised chaos: callbacks that mutate the wheel ---- */

static void chaos_arm(struct tt *x, uint64_t e)
{
	giong__wheel_arm(&W, &x->t, e);
	x->armed = true;
	x->deferred = e <= W.now;
	x->expires = e;
}

static void chaos_fire(struct giong__timer *t)
{
	struct tt *x = (struct tt *)((char *)t - offsetof(struct tt, t));
	unsigned r = (unsigned)rnd_below(10);
	struct tt *o = &timers[rnd_below(ntimers)];

	CHECK(x->armed);
	CHECK(!giong__timer_armed(t));
	CHECK(t->expires <= W.now);
	/* Exactly on time unless it was armed already due. */
	if (!x->deferred)
		CHECK(W.now == t->expires);
	x->armed = false;
	nlog++;

	if (r < 3) {
		o->armed = false;
		giong__wheel_cancel(&W, &o->t);
	} else if (r < 6) {
		chaos_arm(o, W.now + rnd_below(3) + (rnd_below(4) ? 0 : rnd_below(1u << 20)));
	} else if (r < 8) {
		chaos_arm(x, W.now + rnd_below(100)); /* re-arm self, maybe "now" */
	}
}

static void run_chaos_seed(uint64_t seed, int nops)
{
	cur_seed = seed;
	rng_state = seed ^ 0xc4a05;
	timers_setup(64, chaos_fire);
	giong__wheel_init(&W, rnd_below(1ull << 37));

	for (cur_op = 0; cur_op < nops; cur_op++) {
		struct tt *x = &timers[rnd_below(ntimers)];
		uint64_t target;
		unsigned armed = 0;

		if (rnd_below(2)) {
			chaos_arm(x, random_expiry());
			continue;
		}
		target = random_target();
		nlog = 0;
		CHECK(giong__wheel_advance(&W, target) == nlog);
		for (unsigned i = 0; i < ntimers; i++) {
			struct tt *y = &timers[i];

			CHECK(y->armed == giong__timer_armed(&y->t));
			if (!y->armed)
				continue;
			armed++;
			/* Left behind only if a callback armed it already due. */
			if (y->expires <= target)
				CHECK(y->deferred);
			CHECK(giong__wheel_next_expiry(&W) <=
			      (y->expires > W.now ? y->expires : W.now));
		}
		CHECK(giong__wheel_count(&W) == armed);
	}
	timers_teardown();
}

static void test_random_chaos(void **state)
{
	uint64_t first, n;

	(void)state;
	seed_range(&first, &n, 50);
	for (uint64_t s = first; s < first + n; s++)
		run_chaos_seed(s, 2000);
}

/* ---- 5,000 concurrent timers ---- */

static void test_many_timers(void **state)
{
	const unsigned n = 5000;
	uint64_t last = 0;

	(void)state;
	cur_seed = 5000;
	cur_op = -1;
	rng_state = 5000;
	timers_setup(n, log_fire);
	giong__wheel_init(&W, 123456789);
	for (unsigned i = 0; i < n; i++) {
		unsigned l = (unsigned)rnd_below(6);
		uint64_t hi = pow64(l + 1) < 30 * MS_DAY ? pow64(l + 1) : 30 * MS_DAY;

		model_arm(&timers[i], W.now + 1 + rnd_below(hi));
	}
	assert_int_equal(giong__wheel_count(&W), n);

	nlog = 0;
	while (giong__wheel_count(&W)) {
		unsigned before = nlog;
		uint64_t target = W.now + 1 + rnd_below(rnd_below(2) ? 1000 : 1ull << 28);
		unsigned got = giong__wheel_advance(&W, target);

		assert_int_equal(got, nlog - before);
		for (unsigned i = before; i < nlog; i++) {
			struct tt *x = &timers[fire_log[i].id];

			assert_true(x->armed);
			x->armed = false;
			assert_true(fire_log[i].at == x->expires);
			assert_true(x->expires >= last); /* expiry order */
			last = x->expires;
		}
		for (unsigned i = 0; i < n; i++)
			if (timers[i].armed)
				assert_true(timers[i].expires > target);
	}
	assert_int_equal(nlog, n);
	timers_teardown();
}

/* ---- callbacks that arm and cancel during firing ---- */

enum { A, B, C, D, E, F, G, NCB };
static struct tt cb[NCB];
static char cb_order[64];
static unsigned cb_n;

static void cb_fire(struct giong__timer *t)
{
	struct tt *x = (struct tt *)((char *)t - offsetof(struct tt, t));

	assert_true(t->expires <= W.now);
	cb_order[cb_n++] = (char)('A' + x->id);
	if (x->id == A && W.now == 10) {
		giong__wheel_cancel(&W, &cb[B].t);  /* due in this very tick */
		giong__wheel_cancel(&W, &cb[D].t);  /* due later in this advance */
		giong__wheel_arm(&W, &cb[F].t, 12); /* due within this advance */
		giong__wheel_arm(&W, &cb[G].t, 10); /* "now": next advance */
		giong__wheel_arm(&W, &cb[A].t, 30); /* re-arm self */
		giong__wheel_arm(&W, &cb[E].t, 14); /* move E earlier */
	}
}

static void test_callbacks_mutate(void **state)
{
	(void)state;
	giong__wheel_init(&W, 0);
	for (unsigned i = 0; i < NCB; i++) {
		giong__timer_init(&cb[i].t, cb_fire);
		cb[i].id = i;
	}
	giong__wheel_arm(&W, &cb[A].t, 10);
	giong__wheel_arm(&W, &cb[B].t, 10);
	giong__wheel_arm(&W, &cb[C].t, 10);
	giong__wheel_arm(&W, &cb[D].t, 20);
	giong__wheel_arm(&W, &cb[E].t, 5000); /* level 2 until moved */
	cb_n = 0;
	assert_int_equal(giong__wheel_advance(&W, 25), 4);
	cb_order[cb_n] = 0;
	assert_string_equal(cb_order, "ACFE");
	assert_false(giong__timer_armed(&cb[B].t));
	assert_false(giong__timer_armed(&cb[D].t));
	assert_true(giong__timer_armed(&cb[G].t));
	assert_int_equal(giong__wheel_count(&W), 2);     /* G, A */
	assert_true(giong__wheel_next_expiry(&W) == 25); /* G is due */

	cb_n = 0;
	assert_int_equal(giong__wheel_advance(&W, 30), 2);
	cb_order[cb_n] = 0;
	assert_string_equal(cb_order, "GA");
	assert_int_equal(giong__wheel_count(&W), 0);
	assert_true(giong__wheel_next_expiry(&W) == UINT64_MAX);
}

/* A periodic timer re-arming itself from its callback. */
static unsigned periodic_n;

static void periodic_fire(struct giong__timer *t)
{
	assert_true(W.now == t->expires);
	periodic_n++;
	giong__wheel_arm(&W, t, t->expires + 7);
}

static void test_periodic_rearm(void **state)
{
	struct giong__timer t;

	(void)state;
	giong__wheel_init(&W, 1000);
	giong__timer_init(&t, periodic_fire);
	giong__wheel_arm(&W, &t, 1007);
	periodic_n = 0;
	/* One jump across many ticks and levels. */
	assert_int_equal(giong__wheel_advance(&W, 1000 + 7 * 10000), 10000);
	assert_int_equal(periodic_n, 10000);
	assert_true(t.expires == 1000 + 7 * 10001);
	giong__wheel_cancel(&W, &t);
	giong__wheel_cancel(&W, &t); /* no-op when not armed */
	assert_int_equal(giong__wheel_count(&W), 0);
}

/* ---- edge cases ---- */

static unsigned edge_n;
static uint64_t edge_at;

static void edge_fire(struct giong__timer *t)
{
	assert_true(t->expires <= W.now);
	edge_n++;
	edge_at = W.now;
}

static void test_expiry_now_and_past(void **state)
{
	struct giong__timer t, u;

	(void)state;
	giong__wheel_init(&W, 5000);
	giong__timer_init(&t, edge_fire);
	giong__timer_init(&u, edge_fire);
	edge_n = 0;

	giong__wheel_arm(&W, &t, 5000); /* == now */
	giong__wheel_arm(&W, &u, 12);   /* long past */
	assert_true(giong__wheel_next_expiry(&W) == 5000);
	assert_int_equal(giong__wheel_advance(&W, 5000), 2); /* same now */
	assert_int_equal(edge_n, 2);
	assert_true(edge_at == 5000);

	/* Cancel before it fires. */
	giong__wheel_arm(&W, &t, 1);
	giong__wheel_cancel(&W, &t);
	assert_int_equal(giong__wheel_advance(&W, 5001), 0);

	/* Clock going backwards does not move now back, still fires past. */
	giong__wheel_arm(&W, &t, 4000);
	assert_int_equal(giong__wheel_advance(&W, 10), 1);
	assert_true(W.now == 5001);
	assert_int_equal(giong__wheel_count(&W), 0);
}

static void test_level0_exact_and_boundaries(void **state)
{
	struct giong__timer t;

	(void)state;
	giong__timer_init(&t, edge_fire);
	/* Expiries exactly at and next to each level's boundary, from a clock
	 * that is and is not aligned. */
	for (unsigned k = 1; k <= 6; k++) {
		for (int off = -1; off <= 1; off++) {
			uint64_t starts[] = {0, 1, pow64(k) - 1, 777};

			for (unsigned s = 0; s < 4; s++) {
				uint64_t e = pow64(k) * 3 + (uint64_t)(int64_t)off;

				if (starts[s] >= e)
					continue;
				giong__wheel_init(&W, starts[s]);
				giong__wheel_arm(&W, &t, e);
				assert_true(giong__wheel_next_expiry(&W) <= e);
				edge_n = 0;
				assert_int_equal(giong__wheel_advance(&W, e - 1), 0);
				/* One ms before, the bound is exact. */
				assert_true(giong__wheel_next_expiry(&W) == e);
				assert_int_equal(giong__wheel_advance(&W, e), 1);
				assert_true(edge_at == e);
			}
		}
	}
}

static void test_max_delay_clamps(void **state)
{
	struct giong__timer t, u;
	uint64_t e, ne;
	const uint64_t now0 = SPAN - 12345; /* just below a span boundary */

	(void)state;
	giong__wheel_init(&W, now0);
	giong__timer_init(&t, edge_fire);
	giong__timer_init(&u, edge_fire);
	edge_n = 0;

	/* About 5 years: past the wheel's 2^36 ms reach, so it overflows and
	 * must be re-cascaded at least once, never early. */
	e = now0 + 5 * 365 * MS_DAY + 17;
	giong__wheel_arm(&W, &t, e);
	/* Also overflows: it lies across the next 2^36 boundary. */
	giong__wheel_arm(&W, &u, now0 + 2 * 365 * MS_DAY);
	ne = giong__wheel_next_expiry(&W);
	assert_true(ne <= now0 + 2 * 365 * MS_DAY && ne > now0);

	assert_int_equal(giong__wheel_advance(&W, now0 + 2 * 365 * MS_DAY), 1);
	/* Step in large and small jumps right up to one before e. */
	while (W.now < e - 1) {
		uint64_t step = (e - 1 - W.now) / 3 + 1;

		assert_true(giong__wheel_next_expiry(&W) <= e);
		assert_int_equal(giong__wheel_advance(&W, W.now + step), 0);
	}
	assert_true(W.now == e - 1);
	assert_true(giong__wheel_next_expiry(&W) == e);
	assert_int_equal(giong__wheel_advance(&W, e), 1);
	assert_true(edge_at == e);

	/* In one jump, from an unaligned clock, ~3 years out. */
	giong__wheel_init(&W, 98765);
	e = 98765 + SPAN + SPAN / 2 + 3;
	giong__wheel_arm(&W, &t, e);
	assert_int_equal(giong__wheel_advance(&W, e - 1), 0);
	assert_int_equal(giong__wheel_advance(&W, e), 1);
	assert_true(edge_at == e);
}

static void test_idle_gap_is_fast(void **state)
{
	struct giong__timer t[3];
	struct timespec a, b;
	double ms;

	(void)state;
	giong__wheel_init(&W, 42);
	for (unsigned i = 0; i < 3; i++)
		giong__timer_init(&t[i], edge_fire);
	giong__wheel_arm(&W, &t[0], 42 + 30 * MS_DAY);
	giong__wheel_arm(&W, &t[1], 42 + 29 * MS_DAY + 5);
	giong__wheel_arm(&W, &t[2], 42 + 60 * MS_DAY);
	edge_n = 0;
	/* The CPU time this thread took, not the wall time: a loaded machine
	 * (2 cores under -j2) may leave it waiting to run for longer. */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	/* A 1 ms stepper would take billions of iterations here. */
	assert_int_equal(giong__wheel_advance(&W, 42 + 30 * MS_DAY), 2);
	assert_int_equal(giong__wheel_advance(&W, 42 + 365 * MS_DAY), 1);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	assert_true(ms < 100.0); /* generous, for valgrind */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expiry_now_and_past),
		cmocka_unit_test(test_level0_exact_and_boundaries),
		cmocka_unit_test(test_max_delay_clamps),
		cmocka_unit_test(test_idle_gap_is_fast),
		cmocka_unit_test(test_callbacks_mutate),
		cmocka_unit_test(test_periodic_rearm),
		cmocka_unit_test(test_many_timers),
		cmocka_unit_test(test_random_vs_model),
		cmocka_unit_test(test_random_chaos),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
