/* SPDX-License-Identifier: MIT */
/*
 * giong/core/time.h - the clock, sleeping, and deadlines.
 *
 * Time is in milliseconds of CLOCK_MONOTONIC. Timers live in each worker's
 * timing wheel (1 ms resolution); arming and cancelling one makes no system
 * call. A timer never fires early: a sleep of N ms lasts at least N ms.
 *
 * Timeouts use a deadline scope on the calling task rather than a timeout
 * argument on every call: any parked call (I/O, join, channel, sleep) whose
 * deadline passes returns -ETIMEDOUT; an I/O operation is cancelled in the
 * kernel first and its completion awaited, and if it completed anyway its
 * result is returned instead. Scopes nest: an inner scope can only shorten
 * the deadline.
 *
 *     uint64_t saved = giong_deadline_in(500);
 *     ssize_t n = giong_stream_read(s, buf, sizeof buf); // -ETIMEDOUT after 500 ms
 *     giong_deadline_restore(saved);
 */
#ifndef GIONG_CORE_TIME_H
#define GIONG_CORE_TIME_H

#include <stdint.h>

#include <giong/core/api.h>

GIONG_BEGIN_DECLS

/* No deadline. */
#define GIONG_NO_DEADLINE UINT64_MAX

/* giong_now_ms() - CLOCK_MONOTONIC in ms. Inside a worker this is the time
 * cached at the start of the current tick (no system call). */
GIONG_API uint64_t giong_now_ms(void);

/*
 * giong_sleep_ms() - park the calling task for at least @ms milliseconds.
 * Returns 0, -ECANCELED, -ETIMEDOUT if the task's deadline comes first, or
 * GIONG_ENOTWORKER. May suspend.
 */
GIONG_API int giong_sleep_ms(uint64_t ms);

/* giong_sleep_until() - like giong_sleep_ms() until giong_now_ms() >= @when. */
GIONG_API int giong_sleep_until(uint64_t when_ms);

/*
 * giong_deadline_set() - set the calling task's deadline to the earlier of
 * its current one and @when_ms (absolute, giong_now_ms() clock). Returns the
 * previous deadline, to give back to giong_deadline_restore(); outside a
 * task it does nothing and returns GIONG_NO_DEADLINE.
 */
GIONG_API uint64_t giong_deadline_set(uint64_t when_ms);

/* giong_deadline_in() - giong_deadline_set(giong_now_ms() + @ms). */
GIONG_API uint64_t giong_deadline_in(uint64_t ms);

/* giong_deadline_restore() - make @saved the calling task's deadline again. */
GIONG_API void giong_deadline_restore(uint64_t saved);

/* giong_deadline() - the calling task's deadline, or GIONG_NO_DEADLINE. */
GIONG_API uint64_t giong_deadline(void);

GIONG_END_DECLS

#endif /* GIONG_CORE_TIME_H */
