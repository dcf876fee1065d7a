/* SPDX-License-Identifier: MIT */
/*
 * sched.c - fibers on one worker: spawn, park, resume, cancel, join, and
 * wait queues.
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

#include "internal.h"

/* initial-exec: read with one instruction, not a __tls_get_addr call. */
__thread struct giong__worker *giong__tls_worker __attribute__((tls_model("initial-exec")));

/* ------------------------------------------------------------ run queue */

void giong__make_ready(struct giong__worker *w, struct giong__fiber *f)
{
	if (f->queued)
		return;
	f->queued = true;
	f->run_next = NULL;
	if (w->run_tail)
		w->run_tail->run_next = f;
	else
		w->run_head = f;
	w->run_tail = f;
}

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

/* --------------------------------------------------------------- fibers */

static void fiber_free(struct giong__worker *w, struct giong__fiber *f)
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
	/* Finished: wake joiners and leave for good. The stack is recycled by
	 * the scheduler once we are off it. */
	f->finished = true;
	giong_waitq_wake_all(&f->joiners, 0);
	if (f->all_prev)
		f->all_prev->all_next = f->all_next;
	else
		w->all = f->all_next;
	if (f->all_next)
		f->all_next->all_prev = f->all_prev;
	if (f->is_main) {
		w->main_done = true;
		if (atomic_fetch_sub(&w->rt->mains_left, 1) == 1)
			giong__wake_all_workers(w->rt); /* grace starts everywhere */
	}
	if (--w->stats.fibers_live == 0)
		giong__active_put(w->rt);
	w->dead = f;
	w->stats.switches++;
	giong__ctx_switch_final(&f->ctx, &w->sched_ctx);
	__builtin_unreachable();
}

int giong__spawn(struct giong__worker *w, giong_task_fn fn, void *arg, bool detached,
		 bool is_main, struct giong__fiber **ret)
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
	f->stack->owner_name = is_main ? "main" : "task";
	f->w = w;
	f->fn = fn;
	f->arg = arg;
	f->detached = detached;
	f->is_main = is_main;
	f->deadline = GIONG_NO_DEADLINE;
	giong_waitq_init(&f->joiners);
	giong__ctx_make(&f->ctx, f->stack->lo, f->stack->size, fiber_entry, f);
	f->all_next = w->all;
	if (w->all)
		w->all->all_prev = f;
	w->all = f;
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
		fiber_free(w, f);
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
	struct giong__wait *wt = (struct giong__wait *)((char *)t - offsetof(struct giong__wait, timer));

	giong__interrupt(wt->f->w, wt->f, -ETIMEDOUT);
}

int giong__check_wait(struct giong__worker *w, struct giong__fiber *f)
{
	if (f->cancelled)
		return -ECANCELED;
	if (f->deadline != GIONG_NO_DEADLINE && f->deadline <= w->now)
		return -ETIMEDOUT;
	return 0;
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

static void waiter_unlink(struct giong__worker *w, struct giong__waiter *qw)
{
	struct giong_waitq *q = qw->q;

	if (!q)
		return;
	if (qw->prev)
		qw->prev->next = qw->next;
	else
		q->_head = qw->next;
	if (qw->next)
		qw->next->prev = qw->prev;
	else
		q->_tail = qw->prev;
	qw->q = NULL;
	if (qw->flags & GIONG_WAIT_SHUTDOWN) {
		if (qw->sd_prev)
			qw->sd_prev->sd_next = qw->sd_next;
		else
			w->sd_waiters = qw->sd_next;
		if (qw->sd_next)
			qw->sd_next->sd_prev = qw->sd_prev;
	}
}

static struct giong__fiber *waiter_fiber(struct giong__waiter *qw)
{
	return ((struct giong__wait *)((char *)qw - offsetof(struct giong__wait, qw)))->f;
}

void giong__waiter_wake(struct giong__worker *w, struct giong__waiter *qw, int result)
{
	struct giong__wait *wt = (struct giong__wait *)((char *)qw - offsetof(struct giong__wait, qw));

	waiter_unlink(w, qw);
	wt->result = result;
	giong__make_ready(w, wt->f);
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
	case GIONG__WAIT_READY:
		break;
	}
}

void giong__cancel_all_fibers(struct giong__worker *w)
{
	w->fibers_cancelled = true;
	for (struct giong__fiber *f = w->all; f; f = f->all_next) {
		if (!f->cancelled) {
			f->cancelled = true;
			f->cancelled_first = true;
		}
		giong__interrupt(w, f, -ECANCELED);
	}
}

void giong__wake_shutdown_waiters(struct giong__worker *w)
{
	while (w->sd_waiters)
		giong__waiter_wake(w, w->sd_waiters, GIONG_ESHUTDOWN);
}

/* ---------------------------------------------------------- wait queues */

int giong_waitq_init(struct giong_waitq *q)
{
	if (!q)
		return -EINVAL;
	q->_head = q->_tail = NULL;
	return 0;
}

bool giong_waitq_empty(const struct giong_waitq *q)
{
	return !q || !q->_head;
}

int giong_waitq_wait(struct giong_waitq *q, unsigned flags)
{
	struct giong__worker *w = giong__worker_current();
	struct giong__fiber *f = w ? w->current : NULL;
	struct giong__wait wt;
	int ret;

	if (!q)
		return -EINVAL;
	if (!f)
		return GIONG_ENOTWORKER;
	ret = giong__check_wait(w, f);
	if (ret)
		return ret;
	if ((flags & GIONG_WAIT_SHUTDOWN) && w->shutdown_seen)
		return GIONG_ESHUTDOWN;
	memset(&wt, 0, sizeof(wt));
	wt.kind = GIONG__WAIT_QUEUE;
	wt.f = f;
	wt.qw.q = q;
	wt.qw.flags = flags;
	wt.qw.prev = q->_tail;
	if (q->_tail)
		q->_tail->next = &wt.qw;
	else
		q->_head = &wt.qw;
	q->_tail = &wt.qw;
	if (flags & GIONG_WAIT_SHUTDOWN) {
		wt.qw.sd_next = w->sd_waiters;
		if (w->sd_waiters)
			w->sd_waiters->sd_prev = &wt.qw;
		w->sd_waiters = &wt.qw;
	}
	return giong__park(w, &wt);
}

int giong_waitq_wake_one(struct giong_waitq *q, int result)
{
	struct giong__worker *w = giong__worker_current();

	if (!q || !q->_head || !w)
		return 0;
	/* The task would be put on this worker's run queue and resumed on
	 * the wrong thread, its own worker racing it: refuse. */
	if (waiter_fiber(q->_head)->w != w)
		return -EXDEV;
	giong__waiter_wake(w, q->_head, result);
	return 1;
}

int giong_waitq_wake_all(struct giong_waitq *q, int result)
{
	int n = 0, r;

	while ((r = giong_waitq_wake_one(q, result)) > 0)
		n++;
	return n ? n : r;
}

/* ---------------------------------------------------------------- tasks */

int giong_spawn(giong_task_fn fn, void *arg, struct giong_task **ret)
{
	struct giong__worker *w = giong__worker_current();
	struct giong__fiber *f;
	int err;

	if (!fn)
		return -EINVAL;
	if (!w)
		return GIONG_ENOTWORKER;
	err = giong__spawn(w, fn, arg, ret == NULL, false, &f);
	if (!err && ret)
		*ret = (struct giong_task *)f;
	return err;
}

int giong_join(struct giong_task *t, intptr_t *result)
{
	struct giong__worker *w = giong__worker_current();
	struct giong__fiber *f = (struct giong__fiber *)t;
	int ret = 0;

	if (!f || f->detached)
		return -EINVAL;
	if (!w || !w->current)
		return GIONG_ENOTWORKER;
	if (f == w->current || f->w != w)
		return -EINVAL;
	while (!f->finished) {
		ret = giong_waitq_wait(&f->joiners, 0);
		if (ret < 0) {
			/* Woken by a deadline or a cancel, but the task may have
			 * finished in the same tick, before this ran: then the
			 * join succeeded (and nothing else would free it). */
			if (f->finished)
				break;
			/* We gave up; the task lives on and frees itself. */
			f->detached = true;
			return ret;
		}
	}
	ret = 0;
	if (f->cancelled_first)
		ret = -ECANCELED;
	else if (result)
		*result = f->result;
	fiber_free(w, f);
	return ret;
}

int giong_task_detach(struct giong_task *t)
{
	struct giong__fiber *f = (struct giong__fiber *)t;

	if (!f || f->detached || f->w != giong__worker_current())
		return -EINVAL;
	if (f->finished && !f->stack)
		fiber_free(f->w, f);
	else
		f->detached = true;
	return 0;
}

int giong_task_cancel(struct giong_task *t)
{
	struct giong__fiber *f = (struct giong__fiber *)t;

	if (!f || f->w != giong__worker_current())
		return -EINVAL;
	if (f->finished || f->cancelled)
		return 0;
	f->cancelled = true;
	f->cancelled_first = true;
	giong__interrupt(f->w, f, -ECANCELED);
	return 0;
}

int giong_task_set_name(const char *name)
{
	struct giong__worker *w = giong__worker_current();

	if (!name)
		return -EINVAL;
	if (!w || !w->current)
		return GIONG_ENOTWORKER;
	w->current->stack->owner_name = name;
	return 0;
}

struct giong_task *giong_task_current(void)
{
	struct giong__worker *w = giong__worker_current();

	return w ? (struct giong_task *)w->current : NULL;
}

int giong_task_cancelled(void)
{
	struct giong__worker *w = giong__worker_current();

	return w && w->current && w->current->cancelled;
}

void giong__yield_raw(struct giong__worker *w)
{
	struct giong__fiber *f = w->current;
	struct giong__wait wt;

	memset(&wt, 0, sizeof(wt));
	wt.kind = GIONG__WAIT_READY;
	wt.f = f;
	giong__make_ready(w, f);
	f->wait = &wt;
	w->stats.switches++;
	giong__ctx_switch(&f->ctx, &w->sched_ctx);
	f->wait = NULL;
}

int giong_yield(void)
{
	struct giong__worker *w = giong__worker_current();
	struct giong__fiber *f = w ? w->current : NULL;

	if (!f)
		return GIONG_ENOTWORKER;
	if (f->cancelled)
		return -ECANCELED;
	giong__yield_raw(w);
	return f->cancelled ? -ECANCELED : 0;
}
