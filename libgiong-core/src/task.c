/* SPDX-License-Identifier: MIT */
/*
 * task.c - tasks as users see them (giong/core/task.h): spawning here or on
 * another worker, joining, detaching, cancelling, yielding. Built on the
 * scheduler (fiber.c) and, for spawn_on, the target's mailbox.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fiber.h"

int giong_spawn(giong_task_fn fn, void *arg, struct giong_task **ret)
{
	struct giong__worker *w = giong__worker_current();
	struct giong__fiber *f;
	int err;

	if (!fn)
		return -EINVAL;
	if (!w)
		return GIONG_ENOTWORKER;
	err = giong__spawn(w, fn, arg, ret == NULL, &f);
	if (!err && ret)
		*ret = (struct giong_task *)f;
	return err;
}

int giong_spawn_on(unsigned worker, giong_task_fn fn, void *arg)
{
	struct giong__worker *w = giong__worker_current();
	struct giong__msg *m;

	if (!w)
		return GIONG_ENOTWORKER;
	if (!fn || worker >= w->rt->nworkers)
		return -EINVAL;
	if (atomic_load_explicit(&w->rt->shutdown, memory_order_relaxed))
		return GIONG_ESHUTDOWN;
	if (worker == w->index)
		return giong__spawn(w, fn, arg, true, NULL);
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->kind = GIONG__MSG_SPAWN;
	m->fn = fn;
	m->arg = arg;
	m->heap = true;
	/* The message is a share of the runtime's work until the target has
	 * spawned it (worker.c gives it back then). */
	atomic_fetch_add(&w->rt->active, 1);
	if (!giong__mailbox_post(w->rt->workers[worker], m)) {
		/* The target's loop is over, or never began. */
		free(m);
		giong__active_put(w->rt);
		return GIONG_ESHUTDOWN;
	}
	return 0;
}

int giong_join(struct giong_task *t, intptr_t *result)
{
	struct giong__fiber *f = (struct giong__fiber *)t;
	struct giong__worker *w = giong__worker_current();
	int ret = 0;

	if (!f || f->detached)
		return -EINVAL;
	if (!w || !w->current)
		return GIONG_ENOTWORKER;
	if (f == w->current || f->w != w)
		return -EINVAL;
	while (!f->finished) {
		struct giong__wait wt;

		ret = giong__wait_begin(&wt, GIONG__WAIT_QUEUE, &w);
		if (!ret)
			ret = giong__park_on_queue(w, &wt, &f->joiners, 0);
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
	giong__fiber_free(w, f);
	return ret;
}

int giong_task_detach(struct giong_task *t)
{
	struct giong__fiber *f = (struct giong__fiber *)t;

	if (!f || f->detached || f->w != giong__worker_current())
		return -EINVAL;
	if (f->finished && !f->stack)
		giong__fiber_free(f->w, f);
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

long giong_task_stack_left(void)
{
	struct giong__worker *w = giong__worker_current();
	struct giong__fiber *f = w ? w->current : NULL;
	char *sp = __builtin_frame_address(0);

	if (!f || !f->stack)
		return GIONG_ENOTWORKER;
	return sp > (char *)f->stack->lo ? (long)(sp - (char *)f->stack->lo) : 0;
}

int giong_task_cancelled(void)
{
	struct giong__worker *w = giong__worker_current();

	return w && w->current && w->current->cancelled;
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
