/* SPDX-License-Identifier: MIT */
/*
 * waitq.c - wait queues, the public face of the scheduler's parking on a
 * queue (fiber.c): checks of the arguments and of the calling thread, and
 * the refusal to let a queue mix workers. A queue's waiters are all tasks of
 * the worker its tag names (fiber.h); a wait or a wake from any other thread
 * reads the tag alone and is refused. Waking tasks of several workers at
 * once would need a lock on every queue - on every socket's receive path -
 * and a message per waiter that outlives the wake (chan.c does this, for
 * the one place that needs it): a channel or giong_spawn_on() reaches
 * another worker instead.
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
	/* The tag alone: set while a task waits, and safe to read anywhere. */
	return !q || !giong__waitq_worker(q);
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
	struct giong__worker *w, *owner;

	if (!q || !(owner = giong__waitq_worker(q)))
		return 0; /* none waits */
	w = giong__worker_current();
	/* Another worker's task would be put on this worker's run queue and
	 * resumed on the wrong thread, its own worker racing it; and the ring
	 * is that worker's to touch: refuse, having read the tag only. */
	if (owner != w)
		return w ? -EXDEV : GIONG_ENOTWORKER;
	giong__waiter_wake(w, giong__container_of(q->_first, struct giong__waiter, link), result);
	return 1;
}

int giong_waitq_wake_all(struct giong_waitq *q, int result)
{
	int n = 0, r;

	while ((r = giong_waitq_wake_one(q, result)) > 0)
		n++;
	return n ? n : r;
}
