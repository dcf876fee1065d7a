/* SPDX-License-Identifier: MIT */
/*
 * timer_wheel.h - the per-worker hierarchical timing wheel (internal).
 *
 * Six levels of 64 slots with 1 ms ticks: a level-L slot spans 64^L ms, so
 * level 5 reaches 64^6 ms (about 2.2 years). Timers are intrusive (embedded
 * in the owner's struct); arm and cancel are O(1) and never allocate.
 *
 * Guarantees:
 *  - Never early: a timer armed for absolute time E fires only during an
 *    advance whose target is >= E, and (unless E was already past when it
 *    was armed) exactly when the wheel's clock reaches E, so w->now == E
 *    inside the callback.
 *  - Order: timers fire in order of expiry; equal expiries fire in arm order
 *    (a re-arm counts as a new arm). Timers armed with E <= w->now fire at
 *    the start of the next advance, in arm order, before anything else.
 *  - Callbacks may arm, re-arm or cancel any timer, including ones due in
 *    the same advance. A timer armed from a callback for a time <= the tick
 *    being fired waits for the next advance (so a callback re-arming itself
 *    "now" cannot livelock an advance); one armed for a later time within
 *    the advance's target fires in this advance. Callbacks must not call
 *    giong__wheel_advance() themselves.
 *
 * Not thread-safe: a wheel belongs to one worker.
 */
#ifndef GIONG_TIMER_WHEEL_H
#define GIONG_TIMER_WHEEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <giong/core/callback.h>

#include "clist.h" /* the slots */

#ifdef __cplusplus
extern "C" {
#endif

#define GIONG__WHEEL_LEVELS 6
#define GIONG__WHEEL_BITS 6 /* log2 of slots per level */
#define GIONG__WHEEL_SLOTS (1u << GIONG__WHEEL_BITS)
#define GIONG__WHEEL_NSLOTS (GIONG__WHEEL_LEVELS * GIONG__WHEEL_SLOTS)

/*
 * The wheel's lists are circular and doubly linked through struct
 * giong__list_node (a slot's head is one too), so insertion at the tail
 * (FIFO) and unlinking need no special cases. Not the shared giong__list
 * (giong_private.h, first/last) on purpose: a timer is unlinked without
 * knowing which list holds it - a callback may cancel a timer that sits on
 * advance()'s local list of due timers - and arm and cancel, the wheel's
 * hot path, stay free of branches.
 *
 * The entry, struct giong__timer, is declared in <giong/core/callback.h>
 * because the public struct giong_timer embeds it: node (next == NULL when
 * not armed), expires (absolute ms), fn (called disarmed), slot (level *
 * 64 + index, or "no slot").
 */
struct giong__wheel {
	uint64_t now;   /* last processed ms */
	unsigned count; /* armed timers */
	/* Bit i of occupied[L] is set iff slots[L * 64 + i] is non-empty. */
	uint64_t occupied[GIONG__WHEEL_LEVELS];
	struct giong__list_node pending; /* armed with expires <= now */
	struct giong__list_node slots[GIONG__WHEEL_NSLOTS];
};

void giong__wheel_init(struct giong__wheel *w, uint64_t now_ms);
void giong__timer_init(struct giong__timer *t, void (*fn)(struct giong__timer *));

/* Arm @t to fire at @expires_ms (absolute). Re-arming an armed timer moves
 * it. An expiry <= w->now fires at the next advance. */
void giong__wheel_arm(struct giong__wheel *w, struct giong__timer *t, uint64_t expires_ms);

/* Disarm @t; a no-op if it is not armed. */
void giong__wheel_cancel(struct giong__wheel *w, struct giong__timer *t);

static inline bool giong__timer_armed(const struct giong__timer *t)
{
	return t->node.next != NULL;
}

/*
 * Earliest time at which an advance could fire something: never later than
 * the earliest armed expiry and exact when that timer sits in level 0 (due
 * within the current 64 ms). w->now if a past-due timer is waiting for the
 * next advance; UINT64_MAX when nothing is armed. A handful of bitmap
 * tests, for computing the io_uring wait timeout.
 */
uint64_t giong__wheel_next_expiry(const struct giong__wheel *w);

/* Advance the clock to @now_ms (never backwards), firing every timer with
 * expires <= @now_ms. Returns the number of timers fired. */
unsigned giong__wheel_advance(struct giong__wheel *w, uint64_t now_ms);

/* Disarm every armed timer without calling it (a worker whose loop has
 * ended: the callback timers left, whose time has not come). Returns how
 * many there were. */
unsigned giong__wheel_clear(struct giong__wheel *w);

static inline unsigned giong__wheel_count(const struct giong__wheel *w)
{
	return w->count;
}

#ifdef __cplusplus
}
#endif

#endif /* GIONG_TIMER_WHEEL_H */
