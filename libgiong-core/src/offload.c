/* SPDX-License-Identifier: MIT */
/*
 * offload.c - giong_offload(): a task's blocking call made on the runtime's
 * helper threads (blocking_pool.c), the task parked until the call has
 * returned.
 *
 * The job, its wait and the caller's fn and arg live together on the
 * parked task's stack (struct giong__offload, fiber.h). Only the job's
 * done() resumes the task: a cancel or a deadline goes through
 * giong__interrupt() (fiber.c), which cancels the job in the pool and so
 * either completes it unrun or lets fn finish. The stack therefore outlives
 * every use the helper makes of it, and whatever arg points to stays lent
 * exactly until giong_offload() returns.
 *
 * done() runs on the submitting worker's thread: every tier's loop reaps
 * the pool's completions (worker.c after each turn's completions; the epoll
 * tier's enter as well, emu_submit.c).
 */
#include <errno.h>
#include <string.h>

#include "fiber.h"

/* The job the calling helper thread runs now, for giong_offload_cancelled();
 * NULL on any other thread, and between jobs. */
static __thread struct giong__blocking_job *offload_current;

/* On a helper thread. */
static long offload_run(struct giong__blocking_job *job)
{
	struct giong__offload *o = giong__container_of(job, struct giong__offload, job);

	offload_current = job;
	o->value = o->fn(o->arg);
	offload_current = NULL;
	/* Seen by done() on the worker: the pool's lock orders the two. */
	o->ran = true;
	return 0;
}

/* On the submitting worker (giong__blocking_reap()). The job was taken off
 * the queue unrun only by an interrupt's cancel: report why it was asked. */
static void offload_done(struct giong__blocking_job *job)
{
	struct giong__offload *o = giong__container_of(job, struct giong__offload, job);
	struct giong__wait *wt = &o->wt;

	if (o->ran)
		wt->result = 0;
	else
		wt->result = wt->interrupted ? wt->interrupt_code : -ECANCELED;
	giong__make_ready(wt->f->w, wt->f);
}

int giong_offload(giong_offload_fn fn, void *arg, intptr_t *result)
{
	struct giong__worker *w;
	struct giong__offload o;
	int ret;

	if (!fn)
		return -EINVAL;
	ret = giong__wait_begin(&o.wt, GIONG__WAIT_JOB, &w);
	if (ret)
		return ret;
	memset(&o.job, 0, sizeof(o.job));
	o.job.fn = offload_run;
	o.job.done = offload_done;
	o.fn = fn;
	o.arg = arg;
	o.value = 0;
	o.ran = false;
	/* From here until done() resumes us, o (on this task's stack), fn and
	 * what arg points to are the pool's (blocking_pool.h). */
	ret = giong__blocking_submit(w, &o.job);
	if (ret) /* refused: fn will not run, nothing is lent */
		return ret == -ESHUTDOWN ? GIONG_ESHUTDOWN : ret;
	ret = giong__park(w, &o.wt);
	if (!ret && result)
		*result = o.value;
	return ret;
}

int giong_offload_cancelled(void)
{
	struct giong__blocking_job *job = offload_current;

	return job && giong__bpool_cancelled(job);
}
