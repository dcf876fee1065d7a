/* SPDX-License-Identifier: MIT */
/*
 * pace.h - giong-load: the -R schedule, and the latency it makes the load generator record.
 *
 * With -R RATE over C connections, the requests of the whole run form one schedule: the g-th
 * request is due at start + floor(g * 10^9 / RATE) ns, and connection k (0 <= k < C) sends
 * the requests g = n * C + k, n = 0, 1, 2... So each connection paces at RATE / C, the
 * connections are staggered evenly (not all due at once), and the times are exact: no
 * interval is rounded and added up, so no drift however long the run.
 *
 * Coordinated omission (wrk2's model): a connection that is held up by a slow response sends
 * its next request late, and a load generator that measured from that late send would hide
 * the server's stall. Latency is therefore measured from when the request was due
 * (load_pace_latency()): a request that waited behind a stalled one counts its wait too.
 * Unpaced (RATE 0), requests are due at once and latency counts from the send.
 *
 * With -P DEPTH the schedule is unchanged: request n of a connection is sent once it is due
 * and a pipeline slot is free. Connections spread over workers keep their global index k.
 *
 * Pure functions over integer nanoseconds of one monotonic clock: nothing reads a clock,
 * the caller passes "now". Arithmetic saturates at UINT64_MAX rather than wrapping.
 */
#ifndef GIONG_LOAD_PACE_H
#define GIONG_LOAD_PACE_H

#include <stdint.h>

/* The highest rate: one request a nanosecond (keeps every product below 2^64). */
#define LOAD_PACE_RATE_MAX UINT64_C(1000000000)

struct load_pace {
	uint64_t rate;  /* requests per second over all connections; 0: not paced */
	uint64_t conns; /* connections sharing the rate */
	uint64_t start; /* ns: when the first request is due */
};

/*
 * load_pace_init - the schedule for @rate requests/s (0: no pacing) over @conns connections,
 * starting at @start ns. Returns 0, or -EINVAL when @conns is 0 or @rate is above
 * LOAD_PACE_RATE_MAX (*@p untouched).
 */
int load_pace_init(struct load_pace *p, uint64_t rate, uint32_t conns, uint64_t start);

/*
 * load_pace_intended - when request @n (0-based) of connection @k (< conns) is due:
 * start + floor((n * conns + k) * 10^9 / rate) ns. 0 when not paced (always due).
 */
uint64_t load_pace_intended(const struct load_pace *p, uint32_t k, uint64_t n);

/*
 * load_pace_wait - how long to wait at @now before sending a request due at @intended:
 * @intended - @now, or 0 when it is due (or late: it goes at once, and its latency still
 * counts from @intended).
 */
uint64_t load_pace_wait(uint64_t intended, uint64_t now);

/*
 * load_pace_latency - the latency to record for a request due at @intended, sent at @sent
 * and answered at @done: paced, @done - min(@intended, @sent) (from when it was due; from
 * the send if it went early, which a caller that waits never does); unpaced, @done - @sent.
 * 0 when @done comes first (a clock that went back must not record 2^64 ns).
 */
uint64_t load_pace_latency(const struct load_pace *p, uint64_t intended, uint64_t sent,
			   uint64_t done);

/*
 * One connection's schedule as a cursor: the same times as load_pace_intended(), one after
 * the other, with additions only (no division per request). The offset from start is kept
 * as q + r / rate ns, r < rate.
 */
struct load_pace_conn {
	uint64_t start;  /* the schedule's start */
	uint64_t rate;   /* 0: not paced */
	uint64_t q;      /* whole ns from start to the next request's due time */
	uint64_t r;      /* and the fraction, in 1/rate ns */
	uint64_t step_q; /* one step, conns * 10^9 / rate ns, likewise */
	uint64_t step_r;
};

/* load_pace_conn_init - connection @k's cursor at its first request (n = 0) of @p. */
void load_pace_conn_init(struct load_pace_conn *c, const struct load_pace *p, uint32_t k);

/*
 * load_pace_conn_next - the due time of the cursor's request (equal to load_pace_intended()
 * of the same k and n), and move to the next one. 0 when not paced.
 */
uint64_t load_pace_conn_next(struct load_pace_conn *c);

/*
 * The -n budget: how many requests the whole run may start, shared by every connection of
 * every worker (atomics, no lock). A request that fails still spent its share, so a run
 * against a dead server ends too.
 */
struct load_budget {
	uint64_t limit; /* 0: no limit */
	uint64_t taken; /* atomic */
};

/*
 * load_budget_take - take up to @want requests from @b: returns how many may start (@want
 * when there is no limit, fewer near its end, 0 once it is spent).
 */
uint32_t load_budget_take(struct load_budget *b, uint32_t want);

#endif /* GIONG_LOAD_PACE_H */
