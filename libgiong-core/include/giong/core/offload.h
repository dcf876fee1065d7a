/* SPDX-License-Identifier: MIT */
/*
 * giong/core/offload.h - run a blocking function on the runtime's helper
 * threads while the calling task parks.
 *
 * Some calls have no io_uring (or epoll) form and may block for long:
 * getaddrinfo(), a library that reads a file by itself, a CPU-heavy step.
 * Made from a task, they would stop every task of the worker. giong_offload()
 * runs such a call on one of the runtime's helper threads instead (the pool
 * the epoll tier runs its file operations on) and parks only the calling
 * task; the worker keeps running its other tasks, on every ring tier.
 *
 * The helpers are per runtime, shared by its workers: at most
 * GIONG_BLOCKING_THREADS of them (environment, 1 .. 128; 4 when unset or
 * out of range), started on demand and kept until the runtime is freed.
 * Calls beyond that many wait in a queue, first come first served, their
 * tasks parked.
 */
#ifndef GIONG_CORE_OFFLOAD_H
#define GIONG_CORE_OFFLOAD_H

#include <stdint.h>

#include <giong/core/api.h>

GIONG_BEGIN_DECLS

/*
 * A function to run on a helper thread. It is not a task: it runs on a
 * plain thread with no worker, so the calls for tasks (giong_sleep(),
 * giong_io(), giong_spawn(), ...) fail there with GIONG_ENOTWORKER. What is
 * documented for any thread (giong_chan_try_send(), giong_strerror(), ...)
 * and any ordinary blocking call are fine. The thread blocks every signal
 * but SIGURG (giong_offload() says why) and runs on a 256 KiB stack (1 MiB
 * in sanitizer builds), shared by every call it runs: keep large arrays
 * and deep recursion off it. Its return value is handed back to the task
 * through giong_offload()'s @result.
 */
typedef intptr_t (*giong_offload_fn)(void *arg);

/*
 * giong_offload() - run @fn(@arg) on one of the runtime's helper threads and
 * park the calling task until @fn has returned; stores @fn's return value in
 * *@result (if @result is non-NULL) and returns 0.
 *
 * Ownership: @arg, and everything @fn reads or writes through it, is lent
 * to the helper thread from the call until giong_offload() returns,
 * whatever happens meanwhile (a cancel, a deadline, the runtime shutting
 * down): giong_offload() never returns while @fn runs. Memory on the
 * calling task's stack is therefore fine. Everything @fn wrote is visible
 * to the task once the call has returned (the return is the
 * synchronisation point); before that, sharing memory with @fn needs the
 * caller's own synchronisation.
 *
 * Cancellation and deadlines (as for giong_io(): the wait ends only with
 * @fn's end). If the task is cancelled, or its deadline passes:
 *   - while @fn waits in the queue for a thread, it is taken off the queue
 *     and never runs: returns -ECANCELED or -ETIMEDOUT, *@result untouched;
 *   - while @fn runs, it cannot be stopped from outside. The task stays
 *     parked until @fn returns; @fn can notice the request with
 *     giong_offload_cancelled() and return early, and a system call of
 *     @fn waiting interruptibly (a read of a pipe, a sleep, a connect) is
 *     interrupted with EINTR (the helper is sent SIGURG, again every
 *     10 ms while @fn runs, if the program left SIGURG's disposition at its
 *     default; a disk wait does not notice). Then @fn's return value is
 *     stored and 0 returned: what @fn did is never lost. The cancel or the
 *     deadline stays in force: the task's next blocking call returns
 *     -ECANCELED or -ETIMEDOUT (giong_task_cancelled() says 1).
 * If the task was already cancelled or past its deadline, @fn never runs
 * and -ECANCELED or -ETIMEDOUT is returned at once.
 *
 * A runtime that shuts down waits for the call like any other parked task:
 * its grace period over, the task is cancelled as above, and the worker's
 * loop ends only once @fn has returned. A @fn that never returns keeps its
 * helper, its task and so the runtime from ending.
 *
 * Returns 0; -EINVAL for a NULL @fn; GIONG_ENOTWORKER outside a task (off a
 * worker, or in a completion callback on one: nothing can park there; call
 * @fn directly if blocking that thread is acceptable, as giong_resolve()
 * does); -ECANCELED or -ETIMEDOUT as above; -ENOMEM if the pool could not
 * be made, or the error of pthread_create() (-EAGAIN) if no helper thread
 * exists and none could start. On every error @fn did not run, *@result
 * is untouched and @arg is the caller's again at once.
 * May suspend. Owner worker only.
 */
GIONG_API int giong_offload(giong_offload_fn fn, void *arg, intptr_t *result);

/*
 * giong_offload_cancelled() - from inside a giong_offload_fn: 1 if the task
 * waiting for this call was cancelled or passed its deadline, so that @fn
 * may stop early (its return value is still handed back). 0 when no one
 * asked, and anywhere else than in a giong_offload_fn. Does not block;
 * thread-safe.
 */
GIONG_API int giong_offload_cancelled(void);

GIONG_END_DECLS

#endif /* GIONG_CORE_OFFLOAD_H */
