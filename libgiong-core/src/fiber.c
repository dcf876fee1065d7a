/* SPDX-License-Identifier: MIT */
/*
 * fiber.c - fibers on one worker, the scheduler: the run queue, spawning, parking, what
 * resumes a parked fiber, and interrupting a wait.
 *
 * The scheduler runs on the worker thread's own stack; a fiber switches back
 * to it whenever it parks. A parked fiber describes what it waits for in a
 * struct giong__wait on its own stack. Only three things resume it: the
 * completion of its operation, a wake of its wait queue, or its timer. A
 * cancel or a passed deadline never resumes a fiber parked in I/O directly:
 * it asks the kernel to cancel and the fiber resumes on the operation's own
 * final CQE, so the kernel never writes into memory that was given back.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fiber.h"

/* ------------------------------------------------------------ run queue */

static struct giong__fiber *pop_ready(struct giong__worker *w)
{
	struct giong__fiber *f = w->run_head;

	if (f) {
		w->run_head = f->run_next;
		if (!w->run_head)
			w->run_tail = NULL;
		f->queued = false;
	}
	return f;
}

/* The oldest waiter of a non-empty list of waiters linked through @member. */
#define first_waiter(list, member) giong__container_of((list)->first, struct giong__waiter, member)

/* --------------------------------------------------------------- fibers */

void giong__fiber_free(struct giong__worker *w, struct giong__fiber *f)
{
	giong__ctx_destroy(&f->ctx);
	if (w->fiber_cache_len < 256) {
		f->run_next = w->fiber_cache;
		w->fiber_cache = f;
		w->fiber_cache_len++;
	} else {
		free(f);
	}
}

void giong__fiber_cache_fini(struct giong__worker *w)
{
	while (w->fiber_cache) {
		struct giong__fiber *f = w->fiber_cache;

		w->fiber_cache = f->run_next;
		free(f);
	}
	w->fiber_cache_len = 0;
}

static void fiber_entry(void *arg)
{
	struct giong__fiber *f = arg;
	struct giong__worker *w = f->w;

	f->result = f->fn(f->arg);
	/* Finished: wake joiners (all on this worker: join refuses others) and
	 * leave for good. The stack is recycled by the scheduler once we are
	 * off it. */
	f->finished = true;
	while (f->joiners._first)
		giong__waiter_wake(
			w, giong__container_of(f->joiners._first, struct giong__waiter, link), 0);
	giong__list_remove(&w->all, &f->all_link);
	/* The call up: the worker's last task ended (runtime.c decides whether
	 * it was the last anywhere and wakes every worker then). */
	if (--w->stats.fibers_live == 0)
		giong__active_put(w->rt);
	w->dead = f;
	w->stats.switches++;
	giong__ctx_switch_final(&f->ctx, &w->sched_ctx);
	__builtin_unreachable();
}

int giong__spawn(struct giong__worker *w, giong_task_fn fn, void *arg, bool detached,
		 struct giong__fiber **ret)
{
	struct giong__fiber *f = w->fiber_cache;
	int err;

	/* The worker is draining (its loop has ended): a task made now would
	 * never run, and its stack would outlive the worker. A completion
	 * callback or an atexit hook may still try. */
	if (GIONG__UNLIKELY(w->draining))
		return GIONG_ESHUTDOWN;
	if (f) {
		w->fiber_cache = f->run_next;
		w->fiber_cache_len--;
	} else {
		f = malloc(sizeof(*f));
		if (!f)
			return -ENOMEM;
	}
	memset(f, 0, sizeof(*f));
	err = giong__stack_get(&w->stacks, &f->stack);
	if (err) {
		free(f);
		return err;
	}
	f->stack->owner_name = "task";
	f->w = w;
	f->fn = fn;
	f->arg = arg;
	f->detached = detached;
	f->deadline = GIONG_NO_DEADLINE;
	giong__ctx_make(&f->ctx, f->stack->lo, f->stack->size, fiber_entry, f);
	giong__list_push_front(&w->all, &f->all_link);
	/* The worker's first live task takes a share of the runtime's work;
	 * fiber_entry() gives it back with the last. */
	if (w->stats.fibers_live++ == 0)
		atomic_fetch_add(&w->rt->active, 1);
	w->stats.fibers_spawned++;
	/* A task spawned after its worker began cancelling everything is
	 * cancelled from the start, so it cannot outlive the shutdown. */
	if (w->fibers_cancelled)
		f->cancelled = f->cancelled_first = true;
	giong__make_ready(w, f);
	if (ret)
		*ret = f;
	return 0;
}

/* Recycle the stack of the fiber that just finished (we are off it now). */
static void reap_dead(struct giong__worker *w)
{
	struct giong__fiber *f = w->dead;

	w->dead = NULL;
	giong__stack_put(&w->stacks, f->stack);
	f->stack = NULL;
	if (f->detached)
		giong__fiber_free(w, f);
}

void giong__run_ready(struct giong__worker *w)
{
	/* Run the fibers ready now; those made ready meanwhile (a yield, a
	 * wake) wait for the next tick, so a busy fiber cannot starve I/O. */
	struct giong__fiber *end = w->run_tail;
	struct giong__fiber *f;

	if (!end)
		return;
	do {
		f = pop_ready(w);
		w->current = f;
		w->stats.switches++;
		giong__ctx_switch(&w->sched_ctx, &f->ctx);
		w->current = NULL;
		if (w->dead)
			reap_dead(w);
	} while (f != end && w->run_head);
}

/* ------------------------------------------------------------- parking */

static void deadline_fired(struct giong__timer *t)
{
	struct giong__wait *wt = giong__container_of(t, struct giong__wait, timer);

	giong__interrupt(wt->f->w, wt->f, -ETIMEDOUT);
}

int giong__park(struct giong__worker *w, struct giong__wait *wt)
{
	struct giong__fiber *f = wt->f;
	bool timed = wt->kind != GIONG__WAIT_SLEEP && f->deadline != GIONG_NO_DEADLINE;

	if (timed) {
		giong__timer_init(&wt->timer, deadline_fired);
		giong__wheel_arm(&w->wheel, &wt->timer, f->deadline);
	}
	f->wait = wt;
	w->stats.switches++;
	giong__ctx_switch(&f->ctx, &w->sched_ctx);
	f->wait = NULL;
	if (giong__timer_armed(&wt->timer))
		giong__wheel_cancel(&w->wheel, &wt->timer);
	return wt->result;
}

int giong__park_on_queue(struct giong__worker *w, struct giong__wait *wt, struct giong_waitq *q,
			 unsigned flags)
{
	if (giong__waitq_take(q, w))
		return -EXDEV;
	wt->qw.q = q;
	wt->qw.flags = flags;
	giong__waitq_push(q, &wt->qw.link);
	if (flags & GIONG_WAIT_SHUTDOWN)
		giong__list_push_front(&w->sd_waiters, &wt->qw.sd_link);
	return giong__park(w, wt);
}

void giong__waiter_wake(struct giong__worker *w, struct giong__waiter *qw, int result)
{
	struct giong__wait *wt = giong__container_of(qw, struct giong__wait, qw);

	if (qw->q) {
		giong__waitq_remove(qw->q, &qw->link);
		qw->q = NULL;
		if (qw->flags & GIONG_WAIT_SHUTDOWN)
			giong__list_remove(&w->sd_waiters, &qw->sd_link);
	}
	wt->result = result;
	giong__make_ready(w, wt->f);
}

/* A cancelled job still running: signal its helper again (blocking_pool.h:
 * the first signal may have landed before fn entered its call). Re-armed
 * until fn returns; giong__park() disarms it when done() resumes the task. */
static void offload_kick(struct giong__timer *t)
{
	struct giong__wait *wt = giong__container_of(t, struct giong__wait, timer);
	struct giong__offload *o = giong__container_of(wt, struct giong__offload, wt);
	struct giong__worker *w = wt->f->w;

	if (giong__blocking_cancel(w, &o->job) == -EALREADY)
		giong__wheel_arm(&w->wheel, t, w->now + GIONG__OFFLOAD_KICK_MS);
}

/* Resumed by the job's done() only, never here: fn keeps its memory until
 * it returns. Queued, the cancel completes the job at once (-ECANCELED, fn
 * never runs); running, fn is asked to stop, and asked again. */
static void offload_interrupt(struct giong__worker *w, struct giong__wait *wt)
{
	struct giong__offload *o = giong__container_of(wt, struct giong__offload, wt);

	if (giong__blocking_cancel(w, &o->job) != -EALREADY)
		return;
	/* The deadline's timer is done with (it fired, or a cancel came
	 * first and the deadline no longer matters): it becomes the kick. */
	if (giong__timer_armed(&wt->timer))
		giong__wheel_cancel(&w->wheel, &wt->timer);
	giong__timer_init(&wt->timer, offload_kick);
	giong__wheel_arm(&w->wheel, &wt->timer, w->now + GIONG__OFFLOAD_KICK_MS);
}

void giong__interrupt(struct giong__worker *w, struct giong__fiber *f, int code)
{
	struct giong__wait *wt = f->wait;

	if (!wt || wt->interrupted)
		return;
	wt->interrupted = true;
	wt->interrupt_code = code;
	switch (wt->kind) {
	case GIONG__WAIT_IO:
		/* Resumed by the operation's own CQE, never before (invariant 2).
		 * A cancel with no SQE to be had now is sent at the next tick. */
		giong__cancel_op(w, wt->op_id);
		break;
	case GIONG__WAIT_QUEUE:
		if (wt->qw.q)
			giong__waiter_wake(w, &wt->qw, code);
		break;
	case GIONG__WAIT_SLEEP:
		if (giong__timer_armed(&wt->timer))
			giong__wheel_cancel(&w->wheel, &wt->timer);
		wt->result = code;
		giong__make_ready(w, f);
		break;
	case GIONG__WAIT_JOB:
		offload_interrupt(w, wt);
		break;
	case GIONG__WAIT_READY:
		break;
	}
}

void giong__cancel_all_fibers(struct giong__worker *w)
{
	struct giong__list_node *n, *tmp;

	w->fibers_cancelled = true;
	giong__list_for_each_safe(n, tmp, &w->all) {
		struct giong__fiber *f = giong__container_of(n, struct giong__fiber, all_link);

		if (!f->cancelled) {
			f->cancelled = true;
			f->cancelled_first = true;
		}
		giong__interrupt(w, f, -ECANCELED);
	}
}

void giong__wake_shutdown_waiters(struct giong__worker *w)
{
	while (!giong__list_empty(&w->sd_waiters))
		giong__waiter_wake(w, first_waiter(&w->sd_waiters, sd_link), GIONG_ESHUTDOWN);
}
