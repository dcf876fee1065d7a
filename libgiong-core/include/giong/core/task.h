/* SPDX-License-Identifier: MIT */
/*
 * giong/core/task.h - fibers: spawn, join, cancel, yield.
 *
 * A task is a function running on its own stack (a fiber) on the worker that
 * spawned it. It never changes thread, so tasks of one worker need no locks
 * between them. A task runs until it parks in a giong call that waits for the
 * kernel, a timer or another task; the worker then runs the next ready task.
 */
#ifndef GIONG_CORE_TASK_H
#define GIONG_CORE_TASK_H

#include <stdint.h>

#include <giong/core/api.h>

GIONG_BEGIN_DECLS

struct giong_task;

/* Body of a task; its return value is what giong_join() gives. */
typedef intptr_t (*giong_task_fn)(void *arg);

/*
 * giong_spawn() - start @fn(@arg) as a new task on the calling worker. It is
 * queued behind the tasks already ready (FIFO) and starts when the caller
 * parks or yields.
 * If @ret is non-NULL, *@ret receives an owned handle that must be given to
 * giong_join() or giong_task_detach() exactly once; with @ret NULL the task
 * is detached from the start.
 * Returns 0, -EINVAL if @fn is NULL, -ENOMEM, GIONG_ENOTWORKER, or
 * GIONG_ESHUTDOWN when the worker's loop has already ended (from a completion
 * callback or an atexit hook run while the worker drains).
 * Owner worker only; does not suspend.
 */
GIONG_API int giong_spawn(giong_task_fn fn, void *arg, struct giong_task **ret);

/*
 * giong_spawn_on() - start @fn(@arg) as a detached task on worker @worker of
 * the calling worker's runtime (which may be the caller's own). Thread-safe
 * from any worker. Returns 0, -EINVAL for a bad worker index or NULL @fn,
 * -ENOMEM, GIONG_ESHUTDOWN once the runtime is shutting down or worker
 * @worker's loop is over (or never started), or GIONG_ENOTWORKER.
 */
GIONG_API int giong_spawn_on(unsigned worker, giong_task_fn fn, void *arg);

/*
 * giong_join() - wait for @t to finish and free the handle (takes ownership).
 * Stores the task's return value in *@result (may be NULL) and returns 0; or
 * returns -ECANCELED if @t was cancelled before it finished (its return value
 * is then discarded). If the calling task is itself cancelled or its deadline
 * passes while waiting, returns -ECANCELED / -ETIMEDOUT and @t is detached
 * (it keeps running, its handle is freed when it ends) - unless @t finished
 * in the meantime: then the join succeeds as above.
 * Returns -EINVAL if @t is NULL, detached, the calling task or another
 * worker's task; GIONG_ENOTWORKER outside a task. May suspend.
 */
GIONG_API int giong_join(struct giong_task *t, intptr_t *result);

/*
 * giong_task_detach() - give up the handle @t: the task runs on and frees
 * itself when it ends. Returns 0, or -EINVAL for NULL, a handle already
 * given up, or a call from another worker than @t's.
 */
GIONG_API int giong_task_detach(struct giong_task *t);

/*
 * giong_task_cancel() - cancel @t (borrows the handle). Every operation @t is
 * parked in is cancelled (its completion is awaited as always) and returns
 * -ECANCELED, and so does every later blocking call of @t, until @t returns.
 * A task that already finished keeps its value. Cancelling the calling task
 * itself is allowed. Returns 0 or -EINVAL. Does not suspend.
 */
GIONG_API int giong_task_cancel(struct giong_task *t);

/*
 * giong_task_set_name() - name the calling task for diagnostics (the stack
 * overflow message names it). @name is borrowed: it must outlive the task
 * (a string literal). Returns 0, -EINVAL, or GIONG_ENOTWORKER.
 */
GIONG_API int giong_task_set_name(const char *name);

/* giong_task_current() - the calling task, or NULL outside a task. Borrowed:
 * valid while the task runs. */
GIONG_API struct giong_task *giong_task_current(void);

/* giong_task_cancelled() - 1 if the calling task has been cancelled, else 0. */
GIONG_API int giong_task_cancelled(void);

/*
 * giong_task_stack_left() - bytes of stack left below the caller's frame in
 * the calling task, down to its guard page (giong_config.stack_size sets the
 * whole). For code about to go deep, a TLS handshake say, to refuse cleanly
 * (GIONG_ESTACK) rather than overflow. Returns the count, or
 * GIONG_ENOTWORKER outside a task. Does not suspend.
 */
GIONG_API long giong_task_stack_left(void);

/*
 * giong_yield() - let every other ready task run, then continue.
 * Returns 0, -ECANCELED if the task is cancelled, or GIONG_ENOTWORKER.
 * May suspend.
 */
GIONG_API int giong_yield(void);

GIONG_END_DECLS

#endif /* GIONG_CORE_TASK_H */
