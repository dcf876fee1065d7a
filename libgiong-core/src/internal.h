/* SPDX-License-Identifier: MIT */
/*
 * internal.h - what every file of core needs: the runtime, the worker and
 * what it owns, and how to find the calling thread's worker. Never
 * installed.
 *
 * Ownership model: a worker (one thread) owns its ring, run queue, timer
 * wheel, operation slab, buffer pool and stack pool. Only its own thread
 * touches them, so none of this is locked. The one exception is the mailbox,
 * through which other threads hand the worker work (spawn_on, channel
 * wake-ups, shutdown).
 *
 * The files call each other in one direction only, each using the ones
 * before it (tests/build/check-core-order.sh holds it):
 *
 *   context stack timer_wheel error   leaves
 *   ring      the io_uring, one enter per tick
 *   bufpool   the provided buffer ring
 *   blocking_pool  helper threads for calls that may block (the epoll
 *             tier's files, giong_offload())
 *   epoll emu_fs emu_net emu_submit   the epoll tier: the SQE contract
 *             emulated without io_uring (epoll.h)
 *   op        the operation slab, completion dispatch (reap), cancels
 *   mailbox   other threads reach a worker; kicking every worker
 *   fiber     the scheduler: run queue, spawn, park, interrupt
 *   waitq time callback io offload chan task    the public waiting,
 *             timing, loop-callback, I/O, helper-thread and task calls
 *   worker    one worker's loop and drain
 *   runtime   settings, creating and running workers, shutdown, counters
 *
 * and one call goes up, documented where it is made: a worker's last task
 * ending, or a share of the runtime's work given back, is reported to the
 * runtime with giong__active_put() (runtime.c).
 */
#ifndef GIONG_INTERNAL_H
#define GIONG_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <giong/core.h>

#include "giong_private.h"

#include "blocking_pool.h"
#include "bufpool.h"
#include "context.h"
#include "epoll.h"
#include "mailbox.h"
#include "op.h"
#include "ring.h"
#include "stack.h"
#include "timer_wheel.h"

static inline void giong__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/* The monotonic clock in ms, rounded down (for "now") or up (for expiries:
 * a deadline computed from it is never early). */
static inline uint64_t giong__clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static inline uint64_t giong__clock_ms_ceil(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ((uint64_t)ts.tv_nsec + 999999) / 1000000;
}

/* @a + @b, saturated at UINT64_MAX - 1: an expiry "@b ms after @a" for any
 * @b, including GIONG_NO_DEADLINE (UINT64_MAX), stays in the far future and
 * never wraps into the past. UINT64_MAX - 1, not UINT64_MAX, so that the
 * wheel's "nothing armed" (UINT64_MAX) stays distinct. */
static inline uint64_t giong__add_sat(uint64_t a, uint64_t b)
{
	uint64_t sum;

	if (__builtin_add_overflow(a, b, &sum) || sum > UINT64_MAX - 1)
		return UINT64_MAX - 1;
	return sum;
}

struct giong__fiber;

struct giong_runtime {
	struct giong_config cfg;
	struct giong__worker **workers;
	unsigned nworkers;
	atomic_bool shutdown;
	atomic_bool grace_skipped; /* a second signal: cancel every task now */
	uint64_t signal_at;        /* the first signal's giong__clock_ms() (worker 0's), or 0 */
	atomic_int state;          /* 0 new, 1 running, 2 done */
	/*
	 * When may a worker end? When no task is left anywhere, for a task on
	 * one worker may still spawn_on() another. active counts the workers
	 * that have live tasks plus spawn_on messages in flight; it only moves
	 * when a worker's own count goes between 0 and 1, so the hot path
	 * rarely touches it. Once it is 0 it stays 0: no task is left to spawn.
	 * Taken with an atomic add where a share begins, given back with
	 * giong__active_put().
	 */
	atomic_long active;
	atomic_int mains_left; /* workers whose main task has not returned */
	giong_main_fn main_fn;
	void *main_arg;
	int sigfd;
	int start_error;
	/* Helper threads for calls that may block, made by the first job
	 * (blocking_pool.c); NULL in a program that never submits one. */
	_Atomic(struct giong__bpool *) blocking;
};

struct giong__worker {
	struct giong_runtime *rt;
	unsigned index;
	struct giong__ring ring;
	struct giong__emu emu;       /* the epoll tier's SQ, CQ and epoll set (epoll.h) */
	struct giong__ctx sched_ctx; /* the thread's own stack */
	struct giong__fiber *current;
	struct giong__fiber *run_head, *run_tail;
	struct giong__list all;           /* live fibers */
	struct giong__fiber *dead;        /* finished, stack to recycle once off it */
	struct giong__fiber *fiber_cache; /* freed fiber structs for reuse */
	unsigned fiber_cache_len;
	struct giong__stack_pool stacks;
	struct giong__wheel wheel;
	/* giong_call_soon()'s queue: circular through giong_soon._link, this
	 * the head (callback.c); set up by giong__worker_run(). */
	struct giong__list_node soon;
	struct giong__op_slab ops;
	struct giong__bufpool pool;
	struct giong__mailbox mbox;
	struct giong__list sd_waiters; /* woken with GIONG_ESHUTDOWN */
	struct giong_stats stats;
	struct giong_stats final_stats; /* snapshot at exit, for giong_runtime_stats() */
	uint64_t now;
	uint64_t grace_deadline; /* UINT64_MAX until draining */
	uint64_t spin_ns;
	bool reaping;            /* inside giong__reap(): it does not nest */
	bool sig_armed;          /* worker 0: the signalfd read is in the kernel */
	unsigned cancels_wanted; /* operations whose cancel is owed (no SQE then) */
	bool shutdown_seen;
	bool draining; /* exiting: no new operations, every live one cancelled */
	bool fibers_cancelled;
	/* The table of direct descriptors registered with the ring (direct.c):
	 * its size (0: none) and the slots counted used. */
	unsigned direct_size, direct_used;
	bool direct_install;  /* the kernel has IORING_OP_FIXED_FD_INSTALL (6.8+) */
	uint64_t sig_buf[16]; /* signalfd_siginfo (128 bytes), lent to the kernel */
	uint64_t sig_op;
	pthread_t thread;
	bool thread_started;
	struct {
		void (*fn)(void *ctx);
		void *ctx;
	} atexit[16];
	unsigned natexit;
};

/* The worker whose loop runs on this thread, or NULL (set by worker.c).
 * initial-exec: read with one instruction, not a __tls_get_addr call. */
extern __thread struct giong__worker *giong__tls_worker __attribute__((tls_model("initial-exec")));

static inline struct giong__worker *giong__worker_current(void)
{
	return giong__tls_worker;
}

/* callback.c */
/* Run the giong_soon callbacks queued when the call begins, in order; those
 * they queue wait for the next call. */
void giong__soon_run(struct giong__worker *w);

static inline bool giong__soon_pending(const struct giong__worker *w)
{
	return !giong__clist_empty(&w->soon);
}

/* worker.c */
int giong__worker_new(struct giong_runtime *rt, unsigned index, struct giong__worker **ret);
void giong__worker_free(struct giong__worker *w);
/* Run @w's loop on the calling thread until no task is left anywhere.
 * A worker whose ring or pool cannot be set up refuses (below) and returns
 * the error. */
int giong__worker_run(struct giong__worker *w);
/* A worker that will never run its loop: close its mailbox, give back the
 * shares of the tasks sent to it and its own. */
void giong__worker_refuse(struct giong__worker *w);
void giong__fill_stats(struct giong__worker *w, struct giong_stats *out);

/* direct.c */
/* Register @w's table of direct descriptors (@want slots, as
 * giong_config.direct_files); none on the epoll tier or where the kernel
 * refuses one. Never fails: without a table, sockets are regular. */
void giong__direct_init(struct giong__worker *w, int want);

/* runtime.c - the one call up (see the top of this file). */
void giong__active_put(struct giong_runtime *rt);

#endif /* GIONG_INTERNAL_H */
