/* SPDX-License-Identifier: MIT */
/*
 * time.c - sleeping and deadline scopes (the clock is in internal.h).
 *
 * "Never early": an expiry is computed from the clock rounded *up* to the
 * next millisecond, and the wheel fires a timer only once the clock, rounded
 * down, has reached it. So a sleep of N ms lasts at least N ms.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "fiber.h"

uint64_t giong_now_ms(void)
{
	struct giong__worker *w = giong__worker_current();

	return w ? w->now : giong__clock_ms();
}

static void sleep_fired(struct giong__timer *t)
{
	struct giong__wait *wt = giong__container_of(t, struct giong__wait, timer);

	giong__make_ready(wt->f->w, wt->f);
}

int giong_sleep_until(uint64_t when_ms)
{
	struct giong__worker *w;
	struct giong__wait wt;
	int ret;

	ret = giong__wait_begin(&wt, GIONG__WAIT_SLEEP, &w);
	if (ret)
		return ret;
	if (wt.f->deadline < when_ms) {
		/* The deadline comes first: sleep until it and say so. */
		when_ms = wt.f->deadline;
		wt.result = -ETIMEDOUT;
	}
	giong__timer_init(&wt.timer, sleep_fired);
	giong__wheel_arm(&w->wheel, &wt.timer, when_ms);
	return giong__park(w, &wt);
}

int giong_sleep_ms(uint64_t ms)
{
	if (!giong__worker_current())
		return GIONG_ENOTWORKER;
	return giong_sleep_until(giong__add_sat(giong__clock_ms_ceil(), ms));
}

uint64_t giong_deadline_set(uint64_t when_ms)
{
	struct giong__worker *w = giong__worker_current();
	struct giong__fiber *f = w ? w->current : NULL;
	uint64_t prev;

	if (!f)
		return GIONG_NO_DEADLINE;
	prev = f->deadline;
	if (when_ms < f->deadline)
		f->deadline = when_ms;
	return prev;
}

uint64_t giong_deadline_in(uint64_t ms)
{
	return giong_deadline_set(giong__add_sat(giong__clock_ms_ceil(), ms));
}

void giong_deadline_restore(uint64_t saved)
{
	struct giong__worker *w = giong__worker_current();

	if (w && w->current)
		w->current->deadline = saved;
}

uint64_t giong_deadline(void)
{
	struct giong__worker *w = giong__worker_current();

	return w && w->current ? w->current->deadline : GIONG_NO_DEADLINE;
}
