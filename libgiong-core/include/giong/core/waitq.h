/* SPDX-License-Identifier: MIT */
/*
 * giong/core/waitq.h - wait queues: tasks parked until another task or a
 * completion callback wakes them. The fiber equivalent of a condition
 * variable, for one worker (no locks). The libraries built on core use it
 * for "wait for data", "wait for a connection", and so on.
 */
#ifndef GIONG_CORE_WAITQ_H
#define GIONG_CORE_WAITQ_H

#include <stdbool.h>

#include <giong/core/api.h>

GIONG_BEGIN_DECLS

/* A queue of parked tasks. Caller storage; fields are private. A zeroed
 * queue is an empty one, as is one made by giong_waitq_init(). */
struct giong_waitq {
	struct giong__list _waiters; /* oldest first */
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
 * GIONG_WAIT_SHUTDOWN), -EINVAL, GIONG_ENOTWORKER. If the task is already
 * cancelled, past its deadline, or (with GIONG_WAIT_SHUTDOWN) shutdown has
 * begun, returns at once. May suspend. Owner worker only.
 */
GIONG_API int giong_waitq_wait(struct giong_waitq *q, unsigned flags);

/* giong_waitq_wake_one() - make the oldest waiter return @result.
 * Returns 1 if a task was woken, 0 if none waited (or not called from a
 * worker), -EXDEV if the oldest waiter is a task of another worker (a queue
 * serves one worker; reach another with a channel or giong_spawn_on()).
 * Does not suspend. */
GIONG_API int giong_waitq_wake_one(struct giong_waitq *q, int result);

/* giong_waitq_wake_all() - make every waiter return @result. Returns the
 * number woken, or -EXDEV as above if none could be. Does not suspend. */
GIONG_API int giong_waitq_wake_all(struct giong_waitq *q, int result);

/* giong_waitq_empty() - true if no task waits on @q. */
GIONG_API bool giong_waitq_empty(const struct giong_waitq *q);

GIONG_END_DECLS

#endif /* GIONG_CORE_WAITQ_H */
