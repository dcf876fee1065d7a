/* SPDX-License-Identifier: MIT */
/*
 * waitq.c - wait queues, the public face of the scheduler's parking on a
 * queue (fiber.c): checks of the arguments and of the calling thread, and
 * the refusal to wake another worker's task.
 */
#include <errno.h>
#include <string.h>

#include "fiber.h"

int giong_waitq_init(struct giong_waitq *q)
{
	if (!q)
		return -EINVAL;
	memset(q, 0, sizeof(*q));
	return 0;
}

bool giong_waitq_empty(const struct giong_waitq *q)
{
	return !q || giong__list_empty(&q->_waiters);
}

int giong_waitq_wait(struct giong_waitq *q, unsigned flags)
{
	struct giong__worker *w;
	struct giong__wait wt;
	int ret;

	if (!q)
		return -EINVAL;
	ret = giong__wait_begin(&wt, GIONG__WAIT_QUEUE, &w);
	if (ret)
		return ret;
	if ((flags & GIONG_WAIT_SHUTDOWN) && w->shutdown_seen)
		return GIONG_ESHUTDOWN;
	return giong__park_on_queue(w, &wt, q, flags);
}

int giong_waitq_wake_one(struct giong_waitq *q, int result)
{
	struct giong__worker *w = giong__worker_current();
	struct giong__waiter *qw;

	if (!q || giong__list_empty(&q->_waiters) || !w)
		return 0;
	qw = giong__container_of(q->_waiters.first, struct giong__waiter, link);
	/* The task would be put on this worker's run queue and resumed on
	 * the wrong thread, its own worker racing it: refuse. */
	if (giong__container_of(qw, struct giong__wait, qw)->f->w != w)
		return -EXDEV;
	giong__waiter_wake(w, qw, result);
	return 1;
}

int giong_waitq_wake_all(struct giong_waitq *q, int result)
{
	int n = 0, r;

	while ((r = giong_waitq_wake_one(q, result)) > 0)
		n++;
	return n ? n : r;
}
