/* SPDX-License-Identifier: MIT */
/*
 * hist.c - giong-load's latency histogram: everything but recording (inline in hist.h),
 * i.e. merging and the summary figures, which run once at the end of a run.
 */
#include "hist.h"

#include <math.h>
#include <string.h>

/* Percentiles are rounded to this many parts (1e-7 %), so that ranks are integers. */
#define PARTS 1000000000u

void load_hist_reset(struct load_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

void load_hist_init(struct load_hist *h)
{
	load_hist_reset(h);
}

void load_hist_merge(struct load_hist *dst, const struct load_hist *src)
{
	for (unsigned i = 0; i < LOAD_HIST_LEN; i++)
		dst->counts[i] += src->counts[i];
	dst->count += src->count;
	dst->clamped += src->clamped;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t load_hist_count(const struct load_hist *h)
{
	return h->count;
}

uint64_t load_hist_clamped(const struct load_hist *h)
{
	return h->clamped;
}

uint64_t load_hist_min(const struct load_hist *h)
{
	return h->count ? h->min : 0;
}

uint64_t load_hist_max(const struct load_hist *h)
{
	return h->max;
}

/* The shift of bucket @i: its width is 1 << shift. The first 256 buckets have width 1. */
static unsigned bucket_shift(unsigned i)
{
	unsigned half = i >> LOAD_HIST_SUB_BITS;

	return half ? half - 1 : 0;
}

static uint64_t bucket_lowest(unsigned i)
{
	unsigned shift = bucket_shift(i);

	return (uint64_t)(i - (shift << LOAD_HIST_SUB_BITS)) << shift;
}

static uint64_t bucket_highest(unsigned i)
{
	return bucket_lowest(i) + (UINT64_C(1) << bucket_shift(i)) - 1;
}

/* The middle of bucket @i, as HdrHistogram takes it: lowest + half the width, rounded down. */
static uint64_t bucket_middle(unsigned i)
{
	return bucket_lowest(i) + ((UINT64_C(1) << bucket_shift(i)) >> 1);
}

uint64_t load_hist_lowest(uint64_t v)
{
	return bucket_lowest(load_hist_index(v));
}

uint64_t load_hist_highest(uint64_t v)
{
	return bucket_highest(load_hist_index(v));
}

/*
 * What a value of bucket @i counts as in the mean and stdev: the bucket's middle, held
 * within the exact [min, max] (every value lies there too, so this is never farther from
 * it; and a constant, or a bucket with the min or max alone, comes out exact).
 */
static double bucket_value(const struct load_hist *h, unsigned i)
{
	uint64_t v = bucket_middle(i);

	if (v < h->min)
		v = h->min;
	if (v > h->max)
		v = h->max;
	return (double)v;
}

double load_hist_mean(const struct load_hist *h)
{
	double sum = 0;

	if (!h->count)
		return 0;
	for (unsigned i = 0; i < LOAD_HIST_LEN; i++)
		if (h->counts[i])
			sum += (double)h->counts[i] * bucket_value(h, i);
	return sum / (double)h->count;
}

double load_hist_stdev(const struct load_hist *h)
{
	double mean, sq = 0;

	if (!h->count)
		return 0;
	mean = load_hist_mean(h);
	for (unsigned i = 0; i < LOAD_HIST_LEN; i++) {
		if (h->counts[i]) {
			double d = bucket_value(h, i) - mean;

			sq += (double)h->counts[i] * d * d;
		}
	}
	return sqrt(sq / (double)h->count);
}

uint64_t load_hist_value_at_rank(const struct load_hist *h, uint64_t rank)
{
	uint64_t seen = 0;

	if (!h->count)
		return 0;
	if (rank <= 1)
		return h->min;
	if (rank >= h->count)
		return h->max;
	for (unsigned i = 0; i < LOAD_HIST_LEN; i++) {
		seen += h->counts[i];
		if (seen >= rank) {
			uint64_t v = bucket_highest(i);

			return v < h->max ? v : h->max;
		}
	}
	return h->max; /* not reached: the counts add up to h->count */
}

uint64_t load_hist_percentile(const struct load_hist *h, double p)
{
	uint64_t parts, q, r, rank;

	if (!(p > 0)) /* NaN too */
		p = 0;
	if (p > 100)
		p = 100;
	parts = (uint64_t)llround(p * (PARTS / 100));
	/*
	 * rank = ceil(count * parts / PARTS) without overflow: count = q * PARTS + r, and
	 * q * parts <= count, r * parts < 10^18.
	 */
	q = h->count / PARTS;
	r = h->count % PARTS;
	rank = q * parts + (r * parts + PARTS - 1) / PARTS;
	return load_hist_value_at_rank(h, rank);
}
