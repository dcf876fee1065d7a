// SPDX-License-Identifier: MIT
/*
 * timer_wheel.c - hierarchical timing wheel.
 *
 * Placement. A timer expiring at E > now goes to the level of the highest
 * 6-bit group in which E and now differ, at slot (E >> 6L) & 63. Because E
 * and now agree on every group above L and E > now, that slot index is
 * strictly greater than now's index at level L: each level only holds timers
 * of the current level-(L+1) period and never wraps. Hence:
 *
 *  - The level-L slot s becomes current at exactly one instant, the start
 *    of its span, T = (now with groups 0..L cleared) | s << 6L; every timer
 *    in it expires at or after T. That T is a lower bound on the slot's
 *    expiries (exact at level 0), found with one ctz of the level bitmap.
 *  - Every non-empty slot of level L+1 starts after the whole current
 *    level-L period, so the lowest non-empty level holds the earliest
 *    possible expiry and next_expiry() only scans for it.
 *  - Slot 0 of a level can never be occupied by this rule (its index is
 *    never greater than now's), so level 5 slot 0 is free to serve as the
 *    overflow slot for expiries that differ from now above bit 35 (more
 *    than ~2.2 years out): it becomes current at the next 2^36 ms boundary,
 *    which is still never later than such an expiry.
 *
 * Advance. Rather than stepping 1 ms at a time, advance() repeatedly jumps
 * the clock to the next slot start T (from the bitmaps) while T <= target,
 * and processes just that slot: at level 0 it fires the slot; above it
 * re-places each timer relative to now = T ("cascade") - those expiring at T
 * fire now, the rest land in a strictly later slot of a lower level (or,
 * for the overflow slot, level 5 / overflow again). Empty stretches, however
 * long, cost nothing, and a timer is cascaded at most once per level. As no
 * timer is moved before the start of the slot that holds it, and that start
 * is <= its expiry, nothing fires early.
 *
 * FIFO. Timers with equal expiry always share one list (they are placed by
 * the same rule relative to the same now, and cascades preserve list order),
 * and lists are appended at the tail, so they fire in arm order.
 */
#include "giong_private.h"
#include "timer_wheel.h"

#define NO_SLOT GIONG__WHEEL_NSLOTS
#define LEVEL_MASK (GIONG__WHEEL_SLOTS - 1)
#define OVERFLOW_LEVEL (GIONG__WHEEL_LEVELS - 1)
#define OVERFLOW_SLOT (OVERFLOW_LEVEL * GIONG__WHEEL_SLOTS)
/* Bits of time covered by the whole wheel: 36. */
#define WHEEL_SPAN_BITS (GIONG__WHEEL_LEVELS * GIONG__WHEEL_BITS)

static inline struct giong__timer *timer_of(struct giong__list_node *n)
{
	return giong__container_of(n, struct giong__timer, node);
}

void giong__wheel_init(struct giong__wheel *w, uint64_t now_ms)
{
	w->now = now_ms;
	w->count = 0;
	for (unsigned l = 0; l < GIONG__WHEEL_LEVELS; l++)
		w->occupied[l] = 0;
	giong__clist_init(&w->pending);
	for (unsigned i = 0; i < GIONG__WHEEL_NSLOTS; i++)
		giong__clist_init(&w->slots[i]);
}

void giong__timer_init(struct giong__timer *t, void (*fn)(struct giong__timer *))
{
	t->node.next = NULL;
	t->node.prev = NULL;
	t->expires = 0;
	t->fn = fn;
	t->slot = NO_SLOT;
}

/* Put @t (unlinked, t->expires > w->now) into its slot. */
static void place(struct giong__wheel *w, struct giong__timer *t)
{
	uint64_t diff = t->expires ^ w->now;
	unsigned level = (63u - (unsigned)__builtin_clzll(diff)) / GIONG__WHEEL_BITS;
	unsigned slot;

	if (level < GIONG__WHEEL_LEVELS) {
		slot = level * GIONG__WHEEL_SLOTS +
		       ((t->expires >> (level * GIONG__WHEEL_BITS)) & LEVEL_MASK);
	} else {
		level = OVERFLOW_LEVEL;
		slot = OVERFLOW_SLOT;
	}
	t->slot = slot;
	giong__clist_add_tail(&w->slots[slot], &t->node);
	w->occupied[level] |= 1ull << (slot & LEVEL_MASK);
}

void giong__wheel_arm(struct giong__wheel *w, struct giong__timer *t, uint64_t expires_ms)
{
	giong__wheel_cancel(w, t);
	t->expires = expires_ms;
	w->count++;
	if (expires_ms <= w->now) {
		t->slot = NO_SLOT;
		giong__clist_add_tail(&w->pending, &t->node);
		return;
	}
	place(w, t);
}

void giong__wheel_cancel(struct giong__wheel *w, struct giong__timer *t)
{
	unsigned slot = t->slot;

	if (!giong__timer_armed(t))
		return;
	giong__clist_del(&t->node);
	/*
	 * A timer of a slot being fired sits on advance()'s local list with its
	 * old slot number; the slot head itself is then empty and its bit
	 * already clear, so testing the real head is right in both cases.
	 */
	if (slot != NO_SLOT && giong__clist_empty(&w->slots[slot]))
		w->occupied[slot / GIONG__WHEEL_SLOTS] &= ~(1ull << (slot & LEVEL_MASK));
	t->node.next = NULL;
	t->node.prev = NULL;
	t->slot = NO_SLOT;
	w->count--;
}

/*
 * Start of the earliest occupied slot (see the top of the file), ignoring
 * the pending list; *level_out gets its level. UINT64_MAX if empty.
 */
static uint64_t next_slot_start(const struct giong__wheel *w, unsigned *level_out)
{
	for (unsigned l = 0; l < GIONG__WHEEL_LEVELS; l++) {
		uint64_t bits = w->occupied[l];
		unsigned shift = l * GIONG__WHEEL_BITS;
		uint64_t base;

		if (!bits)
			continue;
		*level_out = l;
		if (l == OVERFLOW_LEVEL && bits == 1) {
			/* Only the overflow slot: the next 2^36 boundary. */
			return ((w->now >> WHEEL_SPAN_BITS) + 1) << WHEEL_SPAN_BITS;
		}
		if (l == OVERFLOW_LEVEL)
			bits &= ~1ull;
		base = w->now >> (shift + GIONG__WHEEL_BITS) << (shift + GIONG__WHEEL_BITS);
		return base | (uint64_t)__builtin_ctzll(bits) << shift;
	}
	return UINT64_MAX;
}

uint64_t giong__wheel_next_expiry(const struct giong__wheel *w)
{
	unsigned level;

	if (!giong__clist_empty(&w->pending))
		return w->now;
	return next_slot_start(w, &level);
}

/* Fire every timer on the local list @due. Timers armed by the callbacks
 * go to the wheel or pending list, never onto @due. */
static unsigned fire_list(struct giong__wheel *w, struct giong__list_node *due)
{
	unsigned fired = 0;

	while (!giong__clist_empty(due)) {
		struct giong__timer *t = timer_of(due->next);

		giong__clist_del(&t->node);
		t->node.next = NULL;
		t->node.prev = NULL;
		t->slot = NO_SLOT;
		w->count--;
		fired++;
		t->fn(t);
	}
	return fired;
}

/* w->now has just reached the start of slot @slot of @level: move the timers
 * it holds that expire now onto @due and re-place the rest. */
static void process_slot(struct giong__wheel *w, unsigned level, unsigned slot,
			 struct giong__list_node *due)
{
	struct giong__list_node list;

	giong__clist_move_all(&w->slots[slot], &list);
	w->occupied[level] &= ~(1ull << (slot & LEVEL_MASK));
	if (level == 0) {
		/* Exact: everything here expires at w->now. */
		giong__clist_move_all(&list, due);
		return;
	}
	giong__clist_init(due);
	while (!giong__clist_empty(&list)) {
		struct giong__timer *t = timer_of(list.next);

		giong__clist_del(&t->node);
		if (t->expires == w->now) {
			t->slot = NO_SLOT;
			giong__clist_add_tail(due, &t->node);
		} else {
			place(w, t);
		}
	}
}

unsigned giong__wheel_advance(struct giong__wheel *w, uint64_t now_ms)
{
	struct giong__list_node due;
	unsigned fired = 0;

	/* Past-due arms first: they are already late. Taking the whole list
	 * means their callbacks' own past-due arms wait for the next call. */
	if (!giong__clist_empty(&w->pending)) {
		giong__clist_move_all(&w->pending, &due);
		fired += fire_list(w, &due);
	}
	for (;;) {
		unsigned level = 0;
		uint64_t start = next_slot_start(w, &level);
		unsigned slot;

		/* start > w->now always holds, so each pass makes progress. */
		if (start > now_ms)
			break;
		w->now = start;
		/* At a 2^36 boundary this yields level 5 slot 0, the overflow. */
		slot = level * GIONG__WHEEL_SLOTS +
		       ((start >> (level * GIONG__WHEEL_BITS)) & LEVEL_MASK);
		process_slot(w, level, slot, &due);
		fired += fire_list(w, &due);
	}
	/* Nothing occupied starts at or before now_ms, so jumping over the
	 * empty stretch keeps every occupied slot ahead of the clock. */
	if (now_ms > w->now)
		w->now = now_ms;
	return fired;
}

/* Unlink every timer of the list @h, leaving each disarmed and @h empty. */
static unsigned clear_list(struct giong__list_node *h)
{
	unsigned n = 0;

	while (!giong__clist_empty(h)) {
		struct giong__timer *t = timer_of(h->next);

		giong__clist_del(&t->node);
		t->node.next = NULL;
		t->node.prev = NULL;
		t->slot = NO_SLOT;
		n++;
	}
	return n;
}

unsigned giong__wheel_clear(struct giong__wheel *w)
{
	unsigned n = clear_list(&w->pending);

	for (unsigned i = 0; i < GIONG__WHEEL_NSLOTS; i++)
		n += clear_list(&w->slots[i]);
	for (unsigned l = 0; l < GIONG__WHEEL_LEVELS; l++)
		w->occupied[l] = 0;
	w->count = 0;
	return n;
}
