/* SPDX-License-Identifier: MIT */
/* test_pace.c - giong-load's -R schedule: arguments refused, no pacing at rate 0, the exact
 * due times (connections interleaved into one even schedule), fractional intervals with no
 * drift over a million requests, the cursor equal to the formula, saturation instead of
 * wrapping, and the latency measured from the due time: a simulated server stall shows in
 * every request that waited behind it (coordinated omission), not in one. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pace.h"

#define S 1000000000ull

static void test_init(void **state)
{
	struct load_pace p = {.rate = 7, .conns = 7, .start = 7};

	(void)state;
	assert_int_equal(load_pace_init(&p, 100, 0, 1), -EINVAL);
	assert_int_equal(load_pace_init(&p, LOAD_PACE_RATE_MAX + 1, 1, 1), -EINVAL);
	assert_int_equal(p.rate, 7); /* untouched on an error */
	assert_int_equal(p.start, 7);
	assert_int_equal(load_pace_init(&p, LOAD_PACE_RATE_MAX, UINT32_MAX, 0), 0);
	assert_int_equal(load_pace_init(&p, 0, 1, 5), 0);
	assert_int_equal(p.rate, 0);
}

/* Rate 0: always due, latency from the send. */
static void test_unpaced(void **state)
{
	struct load_pace p;
	struct load_pace_conn c;

	(void)state;
	assert_int_equal(load_pace_init(&p, 0, 10, 123 * S), 0);
	assert_int_equal(load_pace_intended(&p, 3, 1000), 0);
	assert_int_equal(load_pace_wait(load_pace_intended(&p, 3, 1000), 124 * S), 0);
	load_pace_conn_init(&c, &p, 3);
	assert_int_equal(load_pace_conn_next(&c), 0);
	assert_int_equal(load_pace_conn_next(&c), 0);
	assert_int_equal(load_pace_latency(&p, 0, 200, 250), 50);
	assert_int_equal(load_pace_latency(&p, 100, 200, 250), 50); /* intended ignored */
}

static void test_exact(void **state)
{
	struct load_pace p;

	(void)state;
	/* 1000/s over 10 connections: one every ms overall, each connection every 10 ms. */
	assert_int_equal(load_pace_init(&p, 1000, 10, 5), 0);
	assert_int_equal(load_pace_intended(&p, 0, 0), 5);
	assert_int_equal(load_pace_intended(&p, 3, 0), 5 + 3000000);
	assert_int_equal(load_pace_intended(&p, 3, 2), 5 + 23000000);
	assert_int_equal(load_pace_intended(&p, 9, 1), 5 + 19000000);
	/* 3/s on one connection: 333333333.33 ns apart, floored from the exact time. */
	assert_int_equal(load_pace_init(&p, 3, 1, 0), 0);
	assert_int_equal(load_pace_intended(&p, 0, 1), 333333333);
	assert_int_equal(load_pace_intended(&p, 0, 2), 666666666);
	assert_int_equal(load_pace_intended(&p, 0, 3), S);
	/* One a nanosecond. */
	assert_int_equal(load_pace_init(&p, LOAD_PACE_RATE_MAX, 4, 0), 0);
	assert_int_equal(load_pace_intended(&p, 1, 2), 9);
}

/* The connections' schedules interleave into one: merged, the g-th due time is
 * floor(g * 10^9 / rate), whatever the rate and count. */
static void test_interleave(void **state)
{
	static const struct {
		uint64_t rate;
		uint32_t conns;
	} cases[] = {{7, 3}, {1000, 16}, {999983, 7}, {1, 5}, {LOAD_PACE_RATE_MAX, 3}};
	struct load_pace p;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t prev = 0;

		assert_int_equal(load_pace_init(&p, cases[i].rate, cases[i].conns, 1000), 0);
		for (uint64_t g = 0; g < 10000; g++) {
			uint32_t k = (uint32_t)(g % cases[i].conns);
			uint64_t n = g / cases[i].conns;
			uint64_t t = load_pace_intended(&p, k, n);

			assert_int_equal(t, 1000 + g * S / cases[i].rate);
			assert_true(t >= prev);
			prev = t;
		}
	}
}

/* A million requests at fractional intervals: the cursor gives the formula's times, and
 * the formula is the exact time floored, so no error accumulates. Adding a rounded interval
 * up instead would be 333 us off after 1e6 requests at 3/s. */
static void test_no_drift(void **state)
{
	static const struct {
		uint64_t rate;
		uint32_t conns, k;
	} cases[] = {{3, 1, 0}, {7, 3, 2}, {999983, 7, 6}, {30000, 7, 0}, {1, UINT32_MAX, 12345}};
	struct load_pace p;
	struct load_pace_conn c;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t rate = cases[i].rate, conns = cases[i].conns, k = cases[i].k;

		assert_int_equal(load_pace_init(&p, rate, cases[i].conns, 42), 0);
		load_pace_conn_init(&c, &p, cases[i].k);
		for (uint64_t n = 0; n < 1000000; n++) {
			uint64_t due = load_pace_conn_next(&c);

			if (due != load_pace_intended(&p, cases[i].k, n))
				fail_msg("rate %llu conns %llu: request %llu",
					 (unsigned long long)rate, (unsigned long long)conns,
					 (unsigned long long)n);
			if (conns * n < 1000000000ull && n % 1000 == 0) /* g * 10^9 fits */
				assert_int_equal(due, 42 + (conns * n + k) * S / rate);
		}
	}
	/* 3/s: request 3e6 is due exactly 1e6 s after the start. */
	assert_int_equal(load_pace_init(&p, 3, 1, 42), 0);
	assert_int_equal(load_pace_intended(&p, 0, 3000000), 42 + 1000000 * S);
	load_pace_conn_init(&c, &p, 0);
	for (int n = 0; n < 3000000; n++)
		load_pace_conn_next(&c);
	assert_int_equal(load_pace_conn_next(&c), 42 + 1000000 * S);
}

/* Far past any real run: times saturate at UINT64_MAX, never wrap to the past. */
static void test_saturate(void **state)
{
	struct load_pace p;
	struct load_pace_conn c;

	(void)state;
	assert_int_equal(load_pace_init(&p, 1, 1000, 0), 0);
	assert_int_equal(load_pace_intended(&p, 999, UINT64_MAX), UINT64_MAX);
	assert_int_equal(load_pace_intended(&p, 0, UINT64_MAX / 1000), UINT64_MAX);
	assert_int_equal(load_pace_init(&p, 1000, 1, UINT64_MAX - 10), 0);
	assert_int_equal(load_pace_intended(&p, 0, 0), UINT64_MAX - 10);
	assert_int_equal(load_pace_intended(&p, 0, 1), UINT64_MAX);
	load_pace_conn_init(&c, &p, 0);
	assert_int_equal(load_pace_conn_next(&c), UINT64_MAX - 10);
	assert_int_equal(load_pace_conn_next(&c), UINT64_MAX);
	assert_int_equal(load_pace_conn_next(&c), UINT64_MAX);
}

static void test_wait_latency(void **state)
{
	struct load_pace p;

	(void)state;
	assert_int_equal(load_pace_wait(1000, 400), 600);
	assert_int_equal(load_pace_wait(1000, 1000), 0);
	assert_int_equal(load_pace_wait(1000, 5000), 0);
	assert_int_equal(load_pace_init(&p, 100, 1, 0), 0);
	assert_int_equal(load_pace_latency(&p, 1000, 1000, 1500), 500);
	assert_int_equal(load_pace_latency(&p, 1000, 3000, 3500), 2500); /* sent late */
	assert_int_equal(load_pace_latency(&p, 1000, 800, 1500), 700);   /* sent early */
	assert_int_equal(load_pace_latency(&p, 1000, 1000, 900), 0);     /* clock went back */
	assert_int_equal(load_pace_latency(&p, 0, 0, UINT64_MAX), UINT64_MAX);
}

/*
 * Coordinated omission: one connection at 100/s for 10 s against a server that answers in
 * 1 ms but stalls once, for 1 s, at t = 2 s. The client sends each request when it is due
 * or, if the previous answer is late, when that answer comes. Measured from the send, the
 * stall is one slow request among a thousand; measured from the due time it is every request
 * that should have gone during that second or while the backlog drained (1 ms each against
 * 10 ms of schedule: 111 of them), with latencies from 1 s down.
 */
static void test_coordinated_omission(void **state)
{
	struct load_pace p;
	struct load_pace_conn c;
	uint64_t free_at = 0, slow_paced = 0, slow_naive = 0, max_paced = 0;

	(void)state;
	assert_int_equal(load_pace_init(&p, 100, 1, 0), 0);
	load_pace_conn_init(&c, &p, 0);
	for (int n = 0; n < 1000; n++) {
		uint64_t due = load_pace_conn_next(&c);
		uint64_t sent = due > free_at ? due : free_at;
		uint64_t done = sent + 1000000;

		if (sent <= 2 * S && done > 2 * S)
			done = 2 * S + S; /* the stall */
		free_at = done;
		if (load_pace_latency(&p, due, sent, done) >= 5000000)
			slow_paced++;
		if (done - sent >= 5000000)
			slow_naive++;
		if (load_pace_latency(&p, due, sent, done) > max_paced)
			max_paced = load_pace_latency(&p, due, sent, done);
	}
	assert_int_equal(slow_naive, 1);
	assert_int_equal(slow_paced, 111);
	assert_int_equal(max_paced, S);
}

/* The -n budget: exactly its limit in all, however it is asked for; no limit gives all. */
static void test_budget(void **state)
{
	struct load_budget b = {.limit = 10};
	struct load_budget none = {0};
	uint64_t got = 0;

	(void)state;
	assert_int_equal(load_budget_take(&b, 4), 4);
	assert_int_equal(load_budget_take(&b, 4), 4);
	assert_int_equal(load_budget_take(&b, 4), 2); /* the end: fewer */
	assert_int_equal(load_budget_take(&b, 1), 0);
	b = (struct load_budget){.limit = 1000};
	for (int i = 0; i < 2000; i++)
		got += load_budget_take(&b, 1 + i % 7);
	assert_int_equal(got, 1000);
	assert_int_equal(load_budget_take(&none, 9), 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init),         cmocka_unit_test(test_unpaced),
		cmocka_unit_test(test_exact),        cmocka_unit_test(test_interleave),
		cmocka_unit_test(test_no_drift),     cmocka_unit_test(test_saturate),
		cmocka_unit_test(test_wait_latency), cmocka_unit_test(test_coordinated_omission),
		cmocka_unit_test(test_budget),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
