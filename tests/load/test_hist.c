/* SPDX-License-Identifier: MIT */
/* test_hist.c - giong-load's latency histogram: the bucket layout (contiguous, widths within
 * 1/128), percentiles against the exact ones of sorted random samples from many
 * distributions (the 1 % bound, never below), mean and stdev, merging equal to recording
 * into one, clamping, record_n, and the edges (empty, p 0 and 100, NaN, huge counts). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hist.h"

/* 35 KiB each: static, not on the stack. */
static struct load_hist h, h2, parts[4];

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Uniform in (0, 1]. */
static double unit(void)
{
	return (double)((next() >> 11) + 1) * 0x1p-53;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Every value lies in exactly one bucket; buckets follow each other without a gap, their
 * count is LOAD_HIST_LEN, the last ends at LOAD_HIST_MAX, and each is at most 1/128 of its
 * lowest value wide (1 wide below 256). */
static void test_layout(void **state)
{
	uint64_t v = 0, buckets = 0;

	(void)state;
	while (1) {
		uint64_t lo = load_hist_lowest(v), hi = load_hist_highest(v);
		unsigned i = load_hist_index(v);

		assert_int_equal(lo, v);
		assert_int_equal(i, buckets);
		assert_int_equal(load_hist_index(hi), i);
		assert_int_equal(load_hist_lowest(hi), lo);
		assert_int_equal(load_hist_highest(lo + (hi - lo) / 2), hi);
		if (v < 256)
			assert_int_equal(hi, lo);
		else
			assert_true((hi - lo + 1) * 128 <= lo);
		buckets++;
		if (hi == LOAD_HIST_MAX)
			break;
		assert_int_equal(load_hist_index(hi + 1), i + 1);
		v = hi + 1;
	}
	assert_int_equal(buckets, LOAD_HIST_LEN);
	assert_true(LOAD_HIST_MAX >= 100000000000ull); /* 100 s in ns */
}

static void test_empty(void **state)
{
	(void)state;
	load_hist_init(&h);
	assert_int_equal(load_hist_count(&h), 0);
	assert_int_equal(load_hist_clamped(&h), 0);
	assert_int_equal(load_hist_min(&h), 0);
	assert_int_equal(load_hist_max(&h), 0);
	assert_true(load_hist_mean(&h) == 0);
	assert_true(load_hist_stdev(&h) == 0);
	assert_int_equal(load_hist_percentile(&h, 0), 0);
	assert_int_equal(load_hist_percentile(&h, 50), 0);
	assert_int_equal(load_hist_percentile(&h, 100), 0);
	assert_int_equal(load_hist_value_at_rank(&h, 1), 0);
	/* Recording then resetting gives the empty histogram back, bit for bit. */
	load_hist_init(&h2);
	load_hist_record(&h, 12345);
	load_hist_reset(&h);
	assert_memory_equal(&h, &h2, sizeof(h));
}

static void test_constant(void **state)
{
	static const uint64_t vals[] = {0, 1, 255, 256, 12345, 999999, 1000000007, LOAD_HIST_MAX};

	(void)state;
	for (size_t k = 0; k < sizeof(vals) / sizeof(vals[0]); k++) {
		load_hist_init(&h);
		load_hist_record_n(&h, vals[k], 1000);
		assert_int_equal(load_hist_count(&h), 1000);
		assert_int_equal(load_hist_min(&h), vals[k]);
		assert_int_equal(load_hist_max(&h), vals[k]);
		/* Held within [min, max]: exact, however wide the bucket. */
		assert_true(load_hist_mean(&h) == (double)vals[k]);
		assert_true(load_hist_stdev(&h) == 0);
		for (double p = 0; p <= 100; p += 0.5)
			assert_int_equal(load_hist_percentile(&h, p), vals[k]);
	}
}

/* Exact ranks: the percentiles tested are k/1000 of 100 %, rank = max(1, ceil(n * k / 1000)). */
static void check_sample(const char *name, uint64_t *v, size_t n)
{
	double exact_mean = 0, exact_sq = 0, rms = 0, mean, stdev;

	load_hist_init(&h);
	for (size_t i = 0; i < n; i++)
		load_hist_record(&h, v[i]);
	qsort(v, n, sizeof(*v), cmp_u64);
	assert_int_equal(load_hist_count(&h), n);
	assert_int_equal(load_hist_min(&h), v[0]);
	assert_int_equal(load_hist_max(&h), v[n - 1]);
	for (unsigned k = 0; k <= 1000; k++) {
		uint64_t rank = ((uint64_t)n * k + 999) / 1000, want, got;

		if (rank < 1)
			rank = 1;
		want = v[rank - 1];
		got = load_hist_percentile(&h, k / 10.0);
		if (got < want || (got - want) * 128 > want)
			fail_msg("%s: p%.1f: got %llu, exact %llu", name, k / 10.0,
				 (unsigned long long)got, (unsigned long long)want);
		assert_true((double)got <= (double)want * 1.01);
	}
	/* And the finer ones the report shows. */
	static const struct {
		double p;
		uint64_t num, den;
	} fine[] = {{99.9, 999, 1000}, {99.99, 9999, 10000}, {99.999, 99999, 100000}};
	for (size_t k = 0; k < sizeof(fine) / sizeof(fine[0]); k++) {
		uint64_t rank = ((uint64_t)n * fine[k].num + fine[k].den - 1) / fine[k].den;
		uint64_t want = v[rank - 1], got = load_hist_percentile(&h, fine[k].p);

		assert_true(got >= want && (got - want) * 128 <= want);
	}
	for (size_t i = 0; i < n; i++) {
		exact_mean += (double)v[i];
		rms += (double)v[i] * (double)v[i];
	}
	exact_mean /= (double)n;
	rms = sqrt(rms / (double)n);
	for (size_t i = 0; i < n; i++)
		exact_sq += ((double)v[i] - exact_mean) * ((double)v[i] - exact_mean);
	mean = load_hist_mean(&h);
	stdev = load_hist_stdev(&h);
	/* Each value is off by at most 1/256 of itself in its bucket's middle. */
	if (fabs(mean - exact_mean) > exact_mean / 256 + 1e-6)
		fail_msg("%s: mean %f, exact %f", name, mean, exact_mean);
	if (fabs(stdev - sqrt(exact_sq / (double)n)) > rms / 256 + 1e-6)
		fail_msg("%s: stdev %f, exact %f", name, stdev, sqrt(exact_sq / (double)n));
}

#define N 200000
static uint64_t sample[N];

static void test_error_bound(void **state)
{
	(void)state;
	for (size_t i = 0; i < N; i++)
		sample[i] = next() % 1000000000u;
	check_sample("uniform 0..1 s", sample, N);
	for (size_t i = 0; i < N; i++)
		sample[i] = next() % 300;
	check_sample("uniform 0..300 ns", sample, N);
	for (size_t i = 0; i < N; i++)
		sample[i] = 1000000 + next() % 1000;
	check_sample("uniform, narrow", sample, N);
	for (size_t i = 0; i < N; i++)
		sample[i] = (uint64_t)(-log(unit()) * 1e6);
	check_sample("exponential, mean 1 ms", sample, N);
	for (size_t i = 0; i < N; i++)
		sample[i] = next() % 10 ? 95000 + next() % 10000 : 45000000 + next() % 10000000;
	check_sample("bimodal 100 us / 50 ms", sample, N);
	for (size_t i = 0; i < N; i++)
		sample[i] = 777777;
	check_sample("constant", sample, N);
	for (size_t i = 0; i < N; i++)
		sample[i] = (uint64_t)exp2(unit() * 40) - 1;
	check_sample("log-uniform 0..2^40", sample, N);
	for (size_t i = 0; i < N; i++) {
		double x = 1e5 / pow(unit(), 1 / 1.2); /* Pareto, alpha 1.2 */

		sample[i] = x < (double)LOAD_HIST_MAX ? (uint64_t)x : LOAD_HIST_MAX;
	}
	check_sample("pareto", sample, N);
	for (size_t i = 0; i < N; i++) { /* bucket edges: 2^e - 1, 2^e, 2^e + 1 */
		unsigned e = 8 + (unsigned)(next() % 31);

		sample[i] = (UINT64_C(1) << e) - 1 + next() % 3;
	}
	check_sample("powers of two", sample, N);
	check_sample("one value", sample, 1);
	check_sample("two values", sample, 2);
}

/* Per-worker histograms merged are the histogram of all their values, bit for bit. */
static void test_merge(void **state)
{
	(void)state;
	load_hist_init(&h);
	for (int k = 0; k < 4; k++)
		load_hist_init(&parts[k]);
	for (int i = 0; i < 100000; i++) {
		uint64_t v = next() >> (next() % 48); /* every magnitude, many clamped */

		load_hist_record(&h, v);
		load_hist_record(&parts[next() % 3], v); /* parts[3] stays empty */
	}
	load_hist_init(&h2);
	for (int k = 0; k < 4; k++)
		load_hist_merge(&h2, &parts[k]);
	assert_true(load_hist_clamped(&h) > 0);
	assert_memory_equal(&h, &h2, sizeof(h));
	/* Merging an empty histogram changes nothing; into an empty one copies. */
	load_hist_merge(&h2, &parts[3]);
	assert_memory_equal(&h, &h2, sizeof(h));
	load_hist_init(&h2);
	load_hist_merge(&h2, &h);
	assert_memory_equal(&h, &h2, sizeof(h));
}

/* record_n(v, n) is n record(v). */
static void test_record_n(void **state)
{
	(void)state;
	load_hist_init(&h);
	load_hist_init(&h2);
	for (int i = 0; i < 2000; i++) {
		uint64_t v = next() >> (next() % 64), n = next() % 5;

		load_hist_record_n(&h, v, n);
		for (uint64_t j = 0; j < n; j++)
			load_hist_record(&h2, v);
	}
	assert_memory_equal(&h, &h2, sizeof(h)); /* n = 0 leaves even min and max alone */
}

static void test_clamp(void **state)
{
	(void)state;
	load_hist_init(&h);
	load_hist_record(&h, LOAD_HIST_MAX);
	load_hist_record(&h, LOAD_HIST_MAX + 1);
	load_hist_record(&h, UINT64_MAX);
	load_hist_record_n(&h, UINT64_MAX / 2, 7);
	assert_int_equal(load_hist_count(&h), 10);
	assert_int_equal(load_hist_clamped(&h), 9);
	assert_int_equal(load_hist_min(&h), LOAD_HIST_MAX);
	assert_int_equal(load_hist_max(&h), LOAD_HIST_MAX);
	assert_int_equal(load_hist_percentile(&h, 50), LOAD_HIST_MAX);
	assert_int_equal(load_hist_percentile(&h, 100), LOAD_HIST_MAX);
	assert_int_equal(h.counts[LOAD_HIST_LEN - 1], 10);
	load_hist_record(&h, 0);
	assert_int_equal(load_hist_min(&h), 0);
	assert_int_equal(load_hist_percentile(&h, 0), 0);
	assert_int_equal(load_hist_clamped(&h), 9);
}

static void test_percentile_edges(void **state)
{
	(void)state;
	load_hist_init(&h);
	for (uint64_t v = 1; v <= 100; v++) /* exact buckets: ranks are the values */
		load_hist_record(&h, v);
	assert_int_equal(load_hist_percentile(&h, 0), 1);
	assert_int_equal(load_hist_percentile(&h, 0.5), 1);
	assert_int_equal(load_hist_percentile(&h, 1), 1);
	assert_int_equal(load_hist_percentile(&h, 1.000001), 2);
	assert_int_equal(load_hist_percentile(&h, 50), 50);
	assert_int_equal(load_hist_percentile(&h, 50.000001), 51);
	assert_int_equal(load_hist_percentile(&h, 99), 99);
	assert_int_equal(load_hist_percentile(&h, 99.9), 100);
	assert_int_equal(load_hist_percentile(&h, 100), 100);
	assert_int_equal(load_hist_percentile(&h, -5), 1);
	assert_int_equal(load_hist_percentile(&h, 1e300), 100);
	assert_int_equal(load_hist_percentile(&h, NAN), 1);
	assert_int_equal(load_hist_percentile(&h, INFINITY), 100);
	assert_int_equal(load_hist_percentile(&h, -INFINITY), 1);
	assert_int_equal(load_hist_value_at_rank(&h, 0), 1);
	assert_int_equal(load_hist_value_at_rank(&h, 37), 37);
	assert_int_equal(load_hist_value_at_rank(&h, 1000), 100);
	/* 99.9 is 999/1000 exactly, not the double below it: of 1000 values, the 999th. */
	load_hist_init(&h);
	for (uint64_t v = 1; v <= 1000; v++)
		load_hist_record(&h, v);
	assert_int_equal(load_hist_percentile(&h, 99.9), load_hist_highest(999));
	assert_int_equal(load_hist_percentile(&h, 10), 100);
	/* A wide bucket's highest value is capped at the exact max. */
	load_hist_init(&h);
	load_hist_record_n(&h, 1000000, 3);
	load_hist_record(&h, 1000001);
	assert_int_equal(load_hist_percentile(&h, 50), 1000001);
	assert_true(load_hist_highest(1000000) > 1000001);
}

/* Counts near 2^64: the rank arithmetic does not overflow. */
static void test_huge_counts(void **state)
{
	(void)state;
	load_hist_init(&h);
	load_hist_record_n(&h, 1000, 1000000000000000000ull);
	load_hist_record_n(&h, 5000, 2000000000000000000ull);
	load_hist_record_n(&h, 9000, 15000000000000000000ull);
	assert_int_equal(load_hist_count(&h), 18000000000000000000ull);
	/* Just below and above 1/18 and 1/6 of the count, where the values change. */
	assert_int_equal(load_hist_percentile(&h, 5.5555555), load_hist_highest(1000));
	assert_int_equal(load_hist_percentile(&h, 5.6), load_hist_highest(5000));
	assert_int_equal(load_hist_percentile(&h, 16.6666666), load_hist_highest(5000));
	assert_int_equal(load_hist_percentile(&h, 16.7), 9000);
	assert_int_equal(load_hist_percentile(&h, 100), 9000);
	assert_true(fabs(load_hist_mean(&h) - 8111.11) < 8111.11 / 256);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),      cmocka_unit_test(test_empty),
		cmocka_unit_test(test_constant),    cmocka_unit_test(test_error_bound),
		cmocka_unit_test(test_merge),       cmocka_unit_test(test_record_n),
		cmocka_unit_test(test_clamp),       cmocka_unit_test(test_percentile_edges),
		cmocka_unit_test(test_huge_counts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
