/* SPDX-License-Identifier: MIT */
/*
 * giong/core/waitq.h - wait queues: tasks parked until another task or a
 * completion callback wakes them. The fiber equivalent of a condition
 * variable, for one worker (no locks). The libraries built on core use it
 * for "wait for data", "wait for a connection", and so on.
 *
 * One worker at a time: the tasks waiting on a queue are always tasks of one
 * worker, the queue's worker while any waits. A task of another worker that
 * would wait on it, and a wake from another worker, are refused with -EXDEV
 * having touched nothing (a wake from a thread that is no worker: with
 * GIONG_ENOTWORKER), so a queue never mixes workers. Once none waits the
 * queue is free again, and the next task to wait, on whichever worker, takes
 * it. To wake tasks of several workers, give each worker its own queue and
 * reach the others with a channel (chan.h) or giong_spawn_on().
 */
#ifndef GIONG_CORE_WAITQ_H
#define GIONG_CORE_WAITQ_H

#include <stdbool.h>

#include <giong/core/api.h>

GIONG_BEGIN_DECLS

/* A queue of parked tasks. Caller storage; fields are private. A zeroed
 * queue is an empty one, as is one made by giong_waitq_init(). */
struct giong_waitq {
	struct giong__list_node *_first; /* the oldest waiter, of a ring of them */
	void *_worker;                   /* the waiters' worker; NULL while none waits */
};

/* Flags of giong_waitq_wait(). */
enum {
	/* Also wake with GIONG_ESHUTDOWN when the runtime begins shutting down
	 * (for calls that wait for new work: accept, request loops). */
	GIONG_WAIT_SHUTDOWN = 1u << 0,
};

/* giong_waitq_init() - an empty queue. Returns 0 or -EINVAL. */
GIONG_API int giong_waitq_init(struct giong_waitq *q);

/*
 * giong_waitq_wait() - park the calling task on @q until woken.
 * Returns the value given to giong_waitq_wake_*(), or -ECANCELED (task
 * cancelled), -ETIMEDOUT (deadline), GIONG_ESHUTDOWN (with
 * GIONG_WAIT_SHUTDOWN), -EINVAL, GIONG_ENOTWORKER, -EXDEV (tasks of
 * another worker wait on @q: see the top of this header; the call returns
 * at once). If the task is already cancelled, past its deadline, or (with
 * GIONG_WAIT_SHUTDOWN) shutdown has begun, returns at once. May suspend.
 * On the worker of @q's waiters only.
 */
GIONG_API int giong_waitq_wait(struct giong_waitq *q, unsigned flags);

/* giong_waitq_wake_one() - make the oldest waiter return @result.
 * Returns 1 if a task was woken, 0 if none waited (also for a NULL @q),
 * -EXDEV if the waiters are tasks of another worker, GIONG_ENOTWORKER if
 * tasks wait and the caller is no worker; those two wake none and touch
 * nothing. Callable from a completion callback. Does not suspend. On the
 * worker of @q's waiters only. */
GIONG_API int giong_waitq_wake_one(struct giong_waitq *q, int result);

/* giong_waitq_wake_all() - make every waiter return @result (each once).
 * Returns the number woken (> 0), or what giong_waitq_wake_one() would have
 * returned when it wakes none: 0, -EXDEV, GIONG_ENOTWORKER. Does not
 * suspend. On the worker of @q's waiters only. */
GIONG_API int giong_waitq_wake_all(struct giong_waitq *q, int result);

/* giong_waitq_empty() - true if no task waits on @q (or @q is NULL).
 * Callable from any thread: off the waiters' worker the answer may be
 * out of date by the time it is read. */
GIONG_API bool giong_waitq_empty(const struct giong_waitq *q);

GIONG_END_DECLS

#endif /* GIONG_CORE_WAITQ_H */
