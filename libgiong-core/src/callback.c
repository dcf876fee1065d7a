/* SPDX-License-Identifier: MIT */
/*
 * callback.c - callbacks the worker's loop runs outside any task
 * (giong/core/callback.h): the next-turn queue and callback timers.
 *
 * The queue is a circular list through giong_soon._link with its head in
 * the worker; the loop (worker.c) empties it once a turn with
 * giong__soon_run(). A callback timer is an entry of the worker's timing
 * wheel like a sleep's, so the loop's wait already ends at its time
 * (giong__wheel_next_expiry() in worker.c) and firing it costs what firing
 * a sleep does. Neither touches the ring: no SQE, no CQE.
 */
#include <errno.h>

#include "internal.h"

/* Take @n off the callback queue and mark it idle (next NULL, as callback.h says). */
static inline void unlink_node(struct giong__list_node *n)
{
	giong__clist_del(n);
	n->next = NULL;
	n->prev = NULL;
}

/*
 * _worker, the struct's holder, is the one field another thread reads (the
 * -EXDEV check): the owner writes it with relaxed atomic stores (a plain
 * store on x86-64 and arm64), the check reads it with a relaxed load. The
 * links are the owner's alone and stay plain.
 */
static inline void *holder_load(void *const *field)
{
	return __atomic_load_n(field, __ATOMIC_RELAXED);
}

static inline void holder_store(void **field, void *w)
{
	__atomic_store_n(field, w, __ATOMIC_RELAXED);
}

/* A timer's holder. Its _worker may name a worker whose loop ended with it
 * armed (giong__wheel_clear() disarms without calling it): when the name is
 * not the caller's, the entry is read too (relaxed), and idle means none. */
static void *timer_holder(const struct giong_timer *t)
{
	void *h = holder_load(&t->_worker);

	if (h && h != giong__worker_current() && !giong_timer_armed(t))
		return NULL;
	return h;
}

/*
 * The worker that may act on a struct held by @holder (NULL when idle):
 * the caller's, or NULL with *@err set (off a worker; another worker holds
 * it). Checked before anything is read or written through the struct's
 * links, so a call from the wrong thread touches nothing.
 */
static struct giong__worker *owner(const void *holder, int *err)
{
	struct giong__worker *w = giong__worker_current();

	if (!w) {
		*err = GIONG_ENOTWORKER;
		return NULL;
	}
	if (holder && holder != w) {
		*err = -EXDEV;
		return NULL;
	}
	return w;
}

/* ------------------------------------------------------ the next turn */

int giong_call_soon(struct giong_soon *s, giong_soon_fn fn, void *ctx)
{
	struct giong__worker *w;
	int err = 0;

	if (!s || !fn)
		return -EINVAL;
	if (!(w = owner(holder_load(&s->_worker), &err)))
		return err;
	if (s->_link.next)
		return -EALREADY;
	/* The loop has ended: nothing would run it. */
	if (GIONG__UNLIKELY(w->draining))
		return GIONG_ESHUTDOWN;
	s->_fn = fn;
	s->_ctx = ctx;
	giong__clist_add_tail(&w->soon, &s->_link);
	holder_store(&s->_worker, w);
	return 0;
}

int giong_soon_cancel(struct giong_soon *s)
{
	void *holder;
	int err = 0;

	if (!s)
		return -EINVAL;
	/* Idle: nothing to take back, on any thread (after the runtime
	 * returned, say), as the header promises. */
	if (!(holder = holder_load(&s->_worker)))
		return 0;
	if (!owner(holder, &err))
		return err;
	unlink_node(&s->_link);
	holder_store(&s->_worker, NULL);
	return 1;
}

int giong_soon_queued(const struct giong_soon *s)
{
	return s && holder_load(&s->_worker) != NULL;
}

void giong__soon_run(struct giong__worker *w)
{
	struct giong__list_node turn;

	if (!giong__soon_pending(w))
		return;
	/* This turn's callbacks move to a list of their own: what they queue
	 * goes to the worker's, for the next turn, so a callback that queues
	 * itself again cannot keep the loop here. A cancel of one still on
	 * @turn unlinks it from @turn (the links need no head). */
	giong__clist_move_all(&w->soon, &turn);
	while (!giong__clist_empty(&turn)) {
		struct giong_soon *s = giong__container_of(turn.next, struct giong_soon, _link);

		unlink_node(&s->_link);
		holder_store(&s->_worker, NULL);
		/* Idle from here: the callback may queue s again or free it. */
		s->_fn(s, s->_ctx);
	}
}

/* ---------------------------------------------------------- timers */

static void timer_fired(struct giong__timer *e)
{
	struct giong_timer *t = giong__container_of(e, struct giong_timer, _entry);

	/* The wheel disarmed it before this call: idle from here, the callback
	 * may start it again or free it. */
	holder_store(&t->_worker, NULL);
	t->_fn(t, t->_ctx);
}

int giong_timer_start(struct giong_timer *t, uint64_t when_ms, giong_timer_fn fn, void *ctx)
{
	struct giong__worker *w;
	int err = 0;

	if (!t || !fn)
		return -EINVAL;
	if (!(w = owner(timer_holder(t), &err)))
		return err;
	/* The loop has ended: its wheel never advances again. */
	if (GIONG__UNLIKELY(w->draining))
		return GIONG_ESHUTDOWN;
	if (!giong__timer_armed(&t->_entry))
		giong__timer_init(&t->_entry, timer_fired);
	t->_fn = fn;
	t->_ctx = ctx;
	holder_store(&t->_worker, w);
	/* Re-arming an armed timer moves it (the wheel cancels it first). */
	giong__wheel_arm(&w->wheel, &t->_entry, when_ms);
	return 0;
}

int giong_timer_start_in(struct giong_timer *t, uint64_t ms, giong_timer_fn fn, void *ctx)
{
	/* Arguments first, so a bad call reads no clock. */
	if (!t || !fn)
		return -EINVAL;
	return giong_timer_start(t, giong__add_sat(giong__clock_ms_ceil(), ms), fn, ctx);
}

int giong_timer_stop(struct giong_timer *t)
{
	struct giong__worker *w;
	void *holder;
	int err = 0;

	if (!t)
		return -EINVAL;
	/* Idle: nothing to disarm, on any thread (after the runtime returned,
	 * say), as the header promises. */
	if (!(holder = timer_holder(t)))
		return 0;
	if (!(w = owner(holder, &err)))
		return err;
	/* A name left by this worker's ended loop (an atexit hook). */
	if (!giong__timer_armed(&t->_entry))
		return 0;
	giong__wheel_cancel(&w->wheel, &t->_entry);
	holder_store(&t->_worker, NULL);
	return 1;
}

int giong_timer_armed(const struct giong_timer *t)
{
	return t && __atomic_load_n(&t->_entry.node.next, __ATOMIC_RELAXED) != NULL;
}
