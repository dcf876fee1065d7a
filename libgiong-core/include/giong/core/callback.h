/* SPDX-License-Identifier: MIT */
/*
 * giong/core/callback.h - callbacks the worker's loop runs outside any task:
 * on its next turn (struct giong_soon), and at a time (struct giong_timer).
 *
 * Neither makes an SQE nor a system call: a queued callback is a link in a
 * list of the worker, a timer an entry of the worker's timing wheel (the one
 * that times sleeps and deadlines). They are the loop's own primitives, for
 * code that must not call back from inside its caller ("tell the reader
 * from the loop, not from inside the task that asked") and for timeouts of
 * state machines that have no task (an idle pool, a protocol timer).
 *
 * A turn of the worker's loop: run the ready tasks; run the callbacks
 * queued so far; submit and, unless something is ready or queued, wait for
 * a completion or the next timer; dispatch the completions; fire the timers
 * that are due.
 *
 * Where the callbacks run: on the worker's scheduler stack, outside any
 * task, as completion callbacks do (giong/core/op.h). They must not park or
 * yield; they may queue callbacks, start and stop timers, start or cancel
 * operations, wake tasks and spawn tasks.
 *
 * Ownership. The struct is the caller's storage; core keeps no pointer to
 * it except while it is queued (a giong_soon) or armed (a giong_timer).
 * From giong_call_soon() or giong_timer_start() until its callback is
 * called, or until giong_soon_cancel() / giong_timer_stop() takes it back,
 * it belongs to the worker: the caller must not free, move or clear it.
 * Once the callback is called it is idle again, the caller's: the callback
 * may queue or arm the same struct again, or free it (or what holds it),
 * and core does not touch it after the callback returns. A zeroed struct
 * is idle; no init call is needed.
 *
 * Threads. The calls are for the worker's own thread: a struct is queued or
 * armed on the calling worker and runs there. A call on a struct that
 * another worker holds is refused with -EXDEV, touching nothing; a call off
 * any worker with GIONG_ENOTWORKER, except giong_soon_cancel() and
 * giong_timer_stop() on an idle struct, which return 0 on any thread. An
 * idle struct may be used on any worker. Calling on a struct another worker
 * holds is a programming error that the -EXDEV check catches best-effort:
 * the other thread reads only the struct's holder (and, for a timer whose
 * holder is not the caller's, whether it is armed), with relaxed atomic
 * loads; a call that races with the holder queuing, arming, cancelling or
 * stopping it may find it idle and then act on it as if it were.
 *
 * Lifetime of the worker. A queued giong_soon keeps the worker's loop
 * going, as a ready task does: it runs even if every task has ended. A
 * timer does not: when the runtime's last task ends the loop ends, and the
 * timers still armed on it are disarmed without being called (their time
 * has not come: calling them then would be early). Shutdown
 * (giong_shutdown()) changes neither: callbacks and timers run through the
 * grace period as before. Once the worker's loop has ended (its completion
 * callbacks while it drains, its atexit hooks) nothing new is accepted:
 * giong_call_soon() and giong_timer_start() return GIONG_ESHUTDOWN, and
 * giong_soon_cancel() / giong_timer_stop() still work (they find the
 * struct idle). After the runtime returned, every struct is idle.
 */
#ifndef GIONG_CORE_CALLBACK_H
#define GIONG_CORE_CALLBACK_H

#include <stdint.h>

#include <giong/core/api.h>

GIONG_BEGIN_DECLS

/* ------------------------------------------------------ the next turn */

struct giong_soon;

/* A next-turn callback: @s is the struct queued (idle again now), @ctx the
 * pointer given with it. */
typedef void (*giong_soon_fn)(struct giong_soon *s, void *ctx);

/* A callback for the worker's next turn. Caller storage; fields private. */
struct giong_soon {
	struct giong__list_node _link; /* on the worker's queue; next NULL when idle */
	giong_soon_fn _fn;
	void *_ctx;
	void *_worker; /* the worker that holds it, while queued (relaxed atomic) */
};

/*
 * giong_call_soon() - call @fn(@s, @ctx) once, from the calling worker's
 * loop, outside any task: never from inside this call. Queued callbacks run
 * in the order they were queued, after the ready tasks of the turn: those
 * queued by a task run in the same turn, those queued by a completion, a
 * timer or another queued callback in the next one (so a callback that
 * queues itself again runs once a turn, and cannot starve the loop). The
 * worker does not sleep in the kernel while one is queued.
 * Returns 0; -EINVAL for a NULL @s or @fn; -EALREADY if @s is queued
 * already (on this worker: it still runs once, with the @fn and @ctx it was
 * queued with); -EXDEV if another worker holds @s; GIONG_ENOTWORKER off a
 * worker; GIONG_ESHUTDOWN once the worker's loop has ended.
 * Owner worker only; does not suspend.
 */
GIONG_API int giong_call_soon(struct giong_soon *s, giong_soon_fn fn, void *ctx);

/*
 * giong_soon_cancel() - take @s off the queue: its callback will not be
 * called, and @s is the caller's again when this returns. Also from a
 * callback (of another struct queued for the same turn, say). Returns 1 if
 * @s was queued, 0 if it was idle (never queued, or its callback already
 * called or running: on any thread, also off a worker); -EINVAL for NULL;
 * -EXDEV if another worker holds @s; GIONG_ENOTWORKER off a worker for a
 * queued @s. Owner worker only; does not suspend.
 */
GIONG_API int giong_soon_cancel(struct giong_soon *s);

/* giong_soon_queued() - 1 if @s is queued (on any worker), else 0 (also for
 * NULL). On the worker that holds it, exact; elsewhere, a hint. */
GIONG_API int giong_soon_queued(const struct giong_soon *s);

/* ---------------------------------------------------------- timers */

/*
 * The timing wheel's entry (core's, libgiong-core/src/timer_wheel.h), here
 * because struct giong_timer embeds it. Private.
 */
struct giong__timer {
	struct giong__list_node node; /* next == NULL when not armed */
	uint64_t expires;             /* absolute ms */
	void (*fn)(struct giong__timer *t);
	uint32_t slot;
};

struct giong_timer;

/* A timer's callback: @t is the timer (disarmed now), @ctx its pointer. */
typedef void (*giong_timer_fn)(struct giong_timer *t, void *ctx);

/* A callback timer on the worker's timing wheel. Caller storage; fields
 * private. */
struct giong_timer {
	struct giong__timer _entry;
	giong_timer_fn _fn;
	void *_ctx;
	void *_worker; /* the worker whose wheel holds it (relaxed atomic) */
};

/*
 * giong_timer_start() - call @fn(@t, @ctx) once, from the calling worker's
 * loop and outside any task, when giong_now_ms() has reached @when_ms
 * (absolute, giong_now_ms()'s clock; 1 ms resolution). Never early: inside
 * the callback giong_now_ms() >= @when_ms. Timers fire in order of their
 * time, and those of the same time in the order they were started. A time
 * not after giong_now_ms() is due already: such timers fire at the end of
 * the current turn (from a timer's callback: of the next one), first and
 * in the order they were started. Starting an armed timer moves it to the new
 * time, with the new @fn and @ctx (a re-start counts as a new start for
 * the order). GIONG_NO_DEADLINE arms a timer that never fires.
 * Returns 0; -EINVAL for a NULL @t or @fn; -EXDEV if another worker holds
 * @t; GIONG_ENOTWORKER off a worker; GIONG_ESHUTDOWN once the worker's loop
 * has ended. Owner worker only; does not suspend.
 */
GIONG_API int giong_timer_start(struct giong_timer *t, uint64_t when_ms, giong_timer_fn fn,
				void *ctx);

/* giong_timer_start_in() - giong_timer_start() for @ms milliseconds from
 * now: the clock read now, rounded up, so that at least @ms ms pass (as in
 * giong_sleep_ms()). Same returns. */
GIONG_API int giong_timer_start_in(struct giong_timer *t, uint64_t ms, giong_timer_fn fn,
				   void *ctx);

/*
 * giong_timer_stop() - disarm @t: its callback will not be called, and @t is
 * the caller's again when this returns. Also from its own callback (then
 * @t is idle already: 0) and from another timer's. Returns 1 if @t was
 * armed, 0 if it was idle (on any thread, also off a worker); -EINVAL for
 * NULL; -EXDEV if another worker holds @t; GIONG_ENOTWORKER off a worker for
 * an armed @t. Owner worker only; does not suspend.
 */
GIONG_API int giong_timer_stop(struct giong_timer *t);

/* giong_timer_armed() - 1 if @t is armed (on any worker), else 0 (also for
 * NULL). On the worker that holds it, exact; elsewhere, a hint. */
GIONG_API int giong_timer_armed(const struct giong_timer *t);

GIONG_END_DECLS

#endif /* GIONG_CORE_CALLBACK_H */
