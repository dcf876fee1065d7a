/* SPDX-License-Identifier: MIT */
/*
 * pace.c - giong-load's -R schedule: due times as exact rationals of the rate, and the
 * latency measured from them (coordinated-omission correction).
 */
#include "pace.h"

#include <errno.h>

#define NS_PER_S UINT64_C(1000000000)

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

int load_pace_init(struct load_pace *p, uint64_t rate, uint32_t conns, uint64_t start)
{
	if (!conns || rate > LOAD_PACE_RATE_MAX)
		return -EINVAL;
	p->rate = rate;
	p->conns = conns;
	p->start = start;
	return 0;
}

/*
 * floor(g * 10^9 / rate), saturating. With g = a * rate + b it is a * 10^9 +
 * floor(b * 10^9 / rate), and b * 10^9 < rate * 10^9 <= 10^18.
 */
static uint64_t offset_of(uint64_t g, uint64_t rate)
{
	uint64_t a = g / rate, b = g % rate;

	if (a > UINT64_MAX / NS_PER_S)
		return UINT64_MAX;
	return add_sat(a * NS_PER_S, b * NS_PER_S / rate);
}

uint64_t load_pace_intended(const struct load_pace *p, uint32_t k, uint64_t n)
{
	uint64_t g;

	if (!p->rate)
		return 0;
	if (n > (UINT64_MAX - k) / p->conns)
		return UINT64_MAX;
	g = n * p->conns + k;
	return add_sat(p->start, offset_of(g, p->rate));
}

uint64_t load_pace_wait(uint64_t intended, uint64_t now)
{
	return intended > now ? intended - now : 0;
}

uint64_t load_pace_latency(const struct load_pace *p, uint64_t intended, uint64_t sent,
			   uint64_t done)
{
	uint64_t from = sent;

	if (p->rate && intended < sent)
		from = intended;
	return done > from ? done - from : 0;
}

void load_pace_conn_init(struct load_pace_conn *c, const struct load_pace *p, uint32_t k)
{
	c->start = p->start;
	c->rate = p->rate;
	c->q = c->r = c->step_q = c->step_r = 0;
	if (!p->rate)
		return;
	/* k * 10^9 and conns * 10^9 fit: both are below 2^32 * 10^9 < 2^62. */
	c->q = (uint64_t)k * NS_PER_S / p->rate;
	c->r = (uint64_t)k * NS_PER_S % p->rate;
	c->step_q = p->conns * NS_PER_S / p->rate;
	c->step_r = p->conns * NS_PER_S % p->rate;
}

uint64_t load_pace_conn_next(struct load_pace_conn *c)
{
	uint64_t due;

	if (!c->rate)
		return 0;
	due = add_sat(c->start, c->q);
	c->q = add_sat(c->q, c->step_q);
	c->r += c->step_r; /* both < rate <= 10^9: no overflow */
	if (c->r >= c->rate) {
		c->r -= c->rate;
		c->q = add_sat(c->q, 1);
	}
	return due;
}

uint32_t load_budget_take(struct load_budget *b, uint32_t want)
{
	uint64_t t = __atomic_load_n(&b->taken, __ATOMIC_RELAXED), n;

	if (!b->limit)
		return want;
	do {
		if (t >= b->limit)
			return 0;
		n = b->limit - t < want ? b->limit - t : want;
	} while (!__atomic_compare_exchange_n(&b->taken, &t, t + n, 1, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return (uint32_t)n;
}
