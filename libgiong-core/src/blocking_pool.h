/* SPDX-License-Identifier: MIT */
/*
 * blocking_pool.h - helper threads for the calls that may block a worker
 * (open, stat, read and write of regular files, fsync, splice from a file)
 * where io_uring cannot take them: the epoll tier (issue 27); and, on every
 * tier, what a task hands over with giong_offload() (getaddrinfo).
 * libuv's model: one small bounded pool per runtime, a job queue under one
 * mutex, each completion handed back to the worker that submitted it
 * through that worker's eventfd and a completed list it reaps with one call,
 * so that every completion runs on the submitting worker's own thread.
 * Internal to libgiong-core (blocking_pool.c); calls nothing else of core.
 *
 * Why per runtime, not per worker: threads that sit in a disk wait cost the
 * same wherever they are, and a runtime of 16 workers with 4 threads each
 * would start 64 of them to keep 4 disks busy. One queue shared by the
 * workers (libuv's one per process) bounds the threads by the runtime's
 * setting, not by its worker count; what is per worker is only where a
 * completion goes (a port: its list and its eventfd).
 *
 * Threads start on demand, one more each time a job is queued with no
 * thread idle, up to the cap: a program that never blocks starts none. They
 * block every signal but GIONG__BPOOL_SIGNAL, a cancel's (worker 0's
 * signalfd stays the one reader of SIGINT and SIGTERM), run on small stacks
 * and are named "giong-blk".
 *
 * Ownership of a job (the invariant: no thread writes into freed memory).
 * From giong__bpool_submit() until its done() is called, the job struct and
 * everything its fn() reads or writes (buffers, paths, the addrinfo result)
 * belong to the pool: the submitter neither frees nor reuses them, whatever
 * a cancel answers. done() is called exactly once per submitted job, on the
 * thread that reaps the job's port (the submitting worker), or, for a job
 * still in the pool when it is freed, on the thread freeing it; from the
 * moment done() is called the job is the submitter's again, and the pool
 * never touches it after.
 *
 * Cancellation (giong__bpool_cancel(), the submitting worker's thread):
 *   queued   taken off the queue; fn() never runs; done() with -ECANCELED.
 *            Returns 0.
 *   running  a thread is inside fn() and cannot be stopped: the job keeps
 *            its memory until fn() returns, done() follows with fn()'s
 *            result. Returns -EALREADY: the canceller must wait for done().
 *            fn() may look at giong__bpool_cancelled() between steps and
 *            stop early (returning -ECANCELED). The thread is also sent
 *            GIONG__BPOOL_SIGNAL (io_uring's kernel workers get a signal
 *            the same way): a call waiting interruptibly (an open of a
 *            FIFO with no other end) ends with EINTR; a disk wait does not
 *            notice. A later cancel of the same job sends it again (the
 *            signal can land just before fn() enters its call).
 *   finished fn() returned (or a cancel came first): done() is owed at the
 *            next reap. Returns -ENOENT.
 * In every case done() is still called, once: an operation built on a job
 * completes the same way whether it was cancelled or not.
 *
 * Shutdown (giong__bpool_free()): jobs still queued complete with
 * -ECANCELED without running, running ones are waited for, the threads are
 * joined, and every completion not reaped yet is called on the freeing
 * thread. A worker that wants its completions on its own thread waits for
 * its outstanding jobs before its loop ends (giong__bpool_outstanding()).
 *
 * Users: the epoll tier's file calls (emu_fs.c), and giong_offload()
 * (offload.c) on every tier. Wiring into a worker's loop (worker.c's tick
 * for every tier, the epoll tier's enter too, emu_submit.c):
 *   - bind the worker's port to an eventfd its loop always watches (the
 *     epoll tier binds its own, registered once, level-triggered, its
 *     counter read when reported; the mailbox's is the default);
 *   - call giong__blocking_reap(w) before deciding to sleep and after any
 *     wake of that eventfd (the helpers write it when w's list goes from
 *     empty to not empty): no completion is lost as long as w reaps after
 *     every wake, or before it sleeps;
 *   - in the drain: cancel every job of w (the epoll tier does it through
 *     ASYNC_CANCEL: each job is an operation of the slab), then keep
 *     ticking with the eventfd still watched until
 *     giong__blocking_outstanding(w) is 0 (the slab's live count), so that
 *     every done() runs on w; a job still running when the drain gives up
 *     completes on the thread freeing the runtime. giong_offload()'s jobs
 *     never reach the drain: each belongs to a parked task, and a loop
 *     does not end while a task lives (the shutdown cancels the task, and
 *     the task waits for its job's done()).
 */
#ifndef GIONG_SRC_BLOCKING_POOL_H
#define GIONG_SRC_BLOCKING_POOL_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <giong/core/api.h> /* struct giong__list */

/* The signal that interrupts a helper in a blocking call when its job is
 * cancelled. SIGURG (Go's preemption signal, for the same reasons): ignored
 * by default, so a handler that does nothing changes nothing for a program
 * that does not use it. The pool installs its handler (no SA_RESTART) only
 * if the signal's disposition is still the default; a program that handles
 * SIGURG itself keeps its handler, and its running jobs are then not
 * interrupted. Only the helpers unblock it. */
#define GIONG__BPOOL_SIGNAL SIGURG

/* The default cap on helper threads (libuv's UV_THREADPOOL_SIZE default),
 * and the largest accepted (GIONG_BLOCKING_THREADS, giong__blocking_pool()). */
#define GIONG__BPOOL_THREADS 4
#define GIONG__BPOOL_THREADS_MAX 128

struct giong__bpool;

struct giong__blocking_job {
	/* Set by the submitter. fn() runs on a helper thread and returns the
	 * result (a count, or a negative errno); done() runs on the submitting
	 * worker's thread, from giong__bpool_reap(), and finds the job's owner
	 * with giong__container_of(). */
	long (*fn)(struct giong__blocking_job *job);
	void (*done)(struct giong__blocking_job *job);
	/* fn()'s return, or -ECANCELED if it never ran; valid in done(). */
	long res;
	/* The pool's, from submit to done(). */
	struct giong__list_node link; /* on the queue, then on the port's list */
	unsigned port;
	int state;          /* enum in blocking_pool.c, under the pool's lock */
	atomic_bool cancel; /* a cancel came while it ran */
	pthread_t thread;   /* the helper running it (state running) */
};

/* A new pool of at most @max_threads threads (1 .. GIONG__BPOOL_THREADS_MAX)
 * completing into @nports ports. Starts no thread. A port must be bound
 * before a job is submitted through it. 0 or -EINVAL, -ENOMEM. */
int giong__bpool_new(unsigned max_threads, unsigned nports, struct giong__bpool **ret);
/* Port @port's completions wake @efd (an EFD_NONBLOCK eventfd, not owned:
 * it must stay open while bound, and the last one bound until the pool is
 * freed). One write, made under the pool's lock, when its completed list
 * goes from empty to not empty; the reader reaps after every wake. May
 * re-bind a port at any time (the epoll tier binds its own eventfd, and the
 * mailbox's back at its end); once this returns, the old eventfd is never
 * written again and may be closed. */
void giong__bpool_bind(struct giong__bpool *p, unsigned port, int efd);
/* Queue @job (fn and done set) to complete into @port; starts a thread if
 * none is idle and the cap allows. 0; -EINVAL for a bad argument; -ESHUTDOWN
 * once the pool is being freed; the error of pthread_create() if no thread
 * exists and none could start. On an error the job stays the caller's and
 * done() will not be called. Only the port's owner calls this (and cancel,
 * reap, outstanding): each port is one thread's. */
int giong__bpool_submit(struct giong__bpool *p, unsigned port, struct giong__blocking_job *job);
/* See "Cancellation" above: 0, -EALREADY or -ENOENT; -EINVAL for NULL. */
int giong__bpool_cancel(struct giong__bpool *p, struct giong__blocking_job *job);
/* Call done() of every job completed into @port so far, in completion order,
 * on the calling thread; returns how many. Cheap when there is nothing (one
 * atomic load, no lock). */
unsigned giong__bpool_reap(struct giong__bpool *p, unsigned port);
/* Something waits to be reaped on @port (readable without the lock: a
 * worker looks before it sleeps). */
bool giong__bpool_pending(struct giong__bpool *p, unsigned port);
/* Jobs submitted through @port whose done() has not been called yet. */
unsigned giong__bpool_outstanding(struct giong__bpool *p, unsigned port);
/* fn() may ask whether a cancel came while it ran (any thread). */
static inline bool giong__bpool_cancelled(struct giong__blocking_job *job)
{
	return atomic_load_explicit(&job->cancel, memory_order_relaxed);
}

/* What the pool did, for tests and counters. */
struct giong__bpool_stats {
	unsigned threads;      /* started so far (never more than the cap) */
	unsigned idle;         /* waiting for a job */
	unsigned queued;       /* jobs waiting for a thread */
	unsigned long ran;     /* fn() calls returned */
	unsigned long cancels; /* jobs cancelled before they ran */
};
void giong__bpool_stats(struct giong__bpool *p, struct giong__bpool_stats *out);

/* See "Shutdown" above. Any thread but a helper's; NULL is a no-op. */
void giong__bpool_free(struct giong__bpool *p);

/* The runtime's pool, one port per worker bound to the worker's mailbox
 * eventfd (whatever the tier, the loop already wakes on it). */
struct giong__worker;
struct giong_runtime;

/* The pool of @w's runtime, created on first use (threads still start only
 * with jobs); NULL if it could not be (ENOMEM, EMFILE). The cap is
 * GIONG_BLOCKING_THREADS from the environment if it holds 1 ..
 * GIONG__BPOOL_THREADS_MAX, else GIONG__BPOOL_THREADS. */
struct giong__bpool *giong__blocking_pool(struct giong__worker *w);
/* giong__bpool_submit() through @w's port; -ENOMEM if the pool could not be
 * made. Then giong__blocking_reap(w) on @w's thread calls the done()s. */
int giong__blocking_submit(struct giong__worker *w, struct giong__blocking_job *job);
int giong__blocking_cancel(struct giong__worker *w, struct giong__blocking_job *job);
/* 0 without a pool (nothing was ever submitted). */
unsigned giong__blocking_reap(struct giong__worker *w);
bool giong__blocking_pending(struct giong__worker *w);
unsigned giong__blocking_outstanding(struct giong__worker *w);
/* giong_runtime_free(): the pool, if one was made, before the workers
 * (whose eventfds its threads may still write). */
void giong__blocking_pool_free(struct giong_runtime *rt);

#endif /* GIONG_SRC_BLOCKING_POOL_H */
