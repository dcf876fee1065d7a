/* SPDX-License-Identifier: MIT */
/*
 * hist.h - giong-load: a log-linear latency histogram, after HdrHistogram's design.
 *
 * Values are nanoseconds (what the caller's clock gives: no conversion on the hot path).
 * Below 256 ns every value has a bucket of its own; above, each power of two [2^e, 2^(e+1))
 * is cut into 128 buckets of width 2^(e-7). A bucket's width is therefore at most 1/128 of
 * its lowest value, and any value reported for a bucket (its highest value) is within
 * 1/128 (0.79 %) above the recorded value it stands for, and never below it: better than
 * HdrHistogram's 2 significant digits (1 %) and never flattering.
 *
 * Range: 0 to LOAD_HIST_MAX (2^40 - 1 ns, 1099.5 s); larger values are recorded as
 * LOAD_HIST_MAX and counted apart (load_hist_clamped()). The counts are a fixed array in the
 * struct (35 KiB): no allocation ever, the caller owns the storage (one histogram per worker,
 * merged at the end with load_hist_merge()).
 *
 * Pure code: no I/O, no clock, no locking (a histogram belongs to one thread).
 */
#ifndef GIONG_LOAD_HIST_H
#define GIONG_LOAD_HIST_H

#include <stdint.h>

/* log2 of the buckets in each half power of two: 128, so a bucket is <= 1/128 of its values. */
#define LOAD_HIST_SUB_BITS 7
/* Values below this (256) have a bucket each. */
#define LOAD_HIST_EXACT (1u << (LOAD_HIST_SUB_BITS + 1))
/* Values are recorded in [0, 2^LOAD_HIST_BITS). */
#define LOAD_HIST_BITS 40
/* The largest value kept as it is; larger ones are clamped to it. */
#define LOAD_HIST_MAX ((UINT64_C(1) << LOAD_HIST_BITS) - 1)
/*
 * Buckets: 256 exact ones for [0, 256), then 128 for each power of two up to 2^40. With
 * shift = floor(log2 v) - 7 (0 below 256), the index is (shift << 7) + (v >> shift).
 */
#define LOAD_HIST_LEN ((LOAD_HIST_BITS - LOAD_HIST_SUB_BITS + 1) << LOAD_HIST_SUB_BITS)

struct load_hist {
	uint64_t count;   /* values recorded, clamped ones included */
	uint64_t clamped; /* of those, how many were above LOAD_HIST_MAX */
	uint64_t min;     /* exact smallest value (after clamping); UINT64_MAX when empty */
	uint64_t max;     /* exact largest value (after clamping); 0 when empty */
	uint64_t counts[LOAD_HIST_LEN];
};

/*
 * load_hist_index - the bucket of @v (<= LOAD_HIST_MAX). Inline because it is
 * load_hist_record()'s whole cost: an OR, a count of leading zeros, a subtraction, two
 * shifts and an add.
 * "v | 255" keeps __builtin_clzll() defined at 0 and makes the shift 0 below 256.
 */
static inline unsigned load_hist_index(uint64_t v)
{
	unsigned shift =
		63 - (unsigned)__builtin_clzll(v | (LOAD_HIST_EXACT - 1)) - LOAD_HIST_SUB_BITS;

	return (shift << LOAD_HIST_SUB_BITS) + (unsigned)(v >> shift);
}

/*
 * load_hist_record_n - record @v (nanoseconds) @n times. A @v above LOAD_HIST_MAX is
 * recorded as LOAD_HIST_MAX and counted in load_hist_clamped(); @n = 0 records nothing.
 * No division, no call: this runs once per response on the load generator's hot path, so it
 * lives in the header (load_hist_record()'s constant @n folds the first test away).
 */
static inline void load_hist_record_n(struct load_hist *h, uint64_t v, uint64_t n)
{
	if (!n)
		return;
	if (v > LOAD_HIST_MAX) {
		v = LOAD_HIST_MAX;
		h->clamped += n;
	}
	h->counts[load_hist_index(v)] += n;
	h->count += n;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

/* load_hist_record - record @v (nanoseconds) once; see load_hist_record_n(). */
static inline void load_hist_record(struct load_hist *h, uint64_t v)
{
	load_hist_record_n(h, v, 1);
}

/* load_hist_init - make @h an empty histogram (the same as load_hist_reset()). */
void load_hist_init(struct load_hist *h);

/* load_hist_reset - forget every value recorded in @h. */
void load_hist_reset(struct load_hist *h);

/*
 * load_hist_merge - add every value of @src to @dst, as if they had been recorded there:
 * afterwards @dst is bit for bit what recording both histograms' values into one gives.
 * @src is only read; @dst and @src may not be the same histogram.
 */
void load_hist_merge(struct load_hist *dst, const struct load_hist *src);

/* load_hist_count - how many values @h holds (clamped ones included). */
uint64_t load_hist_count(const struct load_hist *h);

/* load_hist_clamped - how many of them were above LOAD_HIST_MAX (recorded as LOAD_HIST_MAX). */
uint64_t load_hist_clamped(const struct load_hist *h);

/* load_hist_min - the exact smallest value recorded; 0 when @h is empty. */
uint64_t load_hist_min(const struct load_hist *h);

/* load_hist_max - the exact largest value recorded (after clamping); 0 when @h is empty. */
uint64_t load_hist_max(const struct load_hist *h);

/*
 * load_hist_mean - the mean of the values, each counted as its bucket's middle held within
 * the exact [min, max]: within 1/256 of the exact mean (each value is off by at most half
 * its bucket), exact for a constant and for values below 256. 0 when @h is empty.
 */
double load_hist_mean(const struct load_hist *h);

/*
 * load_hist_stdev - the population standard deviation of the values, from the same bucket
 * values as load_hist_mean() (HdrHistogram's way, with its middles held within [min, max]):
 * 0 for a constant and when @h is empty.
 */
double load_hist_stdev(const struct load_hist *h);

/*
 * load_hist_percentile - the value at percentile @p (0 to 100; outside or NaN is taken as
 * the nearer end, NaN as 0): HdrHistogram's definition, the smallest recorded value v such
 * that at least @p % of all values are <= v, i.e. the one of rank max(1, ceil(p/100 * count))
 * in sorted order. @p is first rounded to 1e-7 (99.9 means exactly 999/1000, not the double
 * just below it), so ranks are exact integer arithmetic.
 *
 * Reported as the highest value of the bucket that holds it, but never above the exact
 * max; the smallest rank reports the exact min and the largest the exact max. So for the
 * exact answer v the result r has v <= r <= v + v/128 (1 % or better, never below v).
 * 0 when @h is empty.
 */
uint64_t load_hist_percentile(const struct load_hist *h, double p);

/*
 * load_hist_value_at_rank - the @rank-th smallest value (1-based; 0 is taken as 1 and a rank
 * above the count as the count), reported as load_hist_percentile() does. 0 when empty.
 */
uint64_t load_hist_value_at_rank(const struct load_hist *h, uint64_t rank);

/* load_hist_lowest - the smallest value that shares @v's bucket (@v <= LOAD_HIST_MAX). */
uint64_t load_hist_lowest(uint64_t v);

/* load_hist_highest - the largest value that shares @v's bucket (@v <= LOAD_HIST_MAX). */
uint64_t load_hist_highest(uint64_t v);

#endif /* GIONG_LOAD_HIST_H */
