/* SPDX-License-Identifier: MIT */
/*
 * internal.h - the worker and what it owns. Never installed.
 *
 * Ownership model: a worker (one thread) owns its ring, run queue, timer
 * wheel, operation slab, buffer pool and stack pool. Only its own thread
 * touches them, so none of this is locked. The one exception is the mailbox,
 * through which other threads hand the worker work (spawn_on, channel
 * wake-ups, shutdown).
 */
#ifndef GIONG_INTERNAL_H
#define GIONG_INTERNAL_H

#include <liburing.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <giong/core.h>

#include "giong_private.h"

#include "context.h"
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

struct giong__worker;
struct giong__fiber;

/* ------------------------------------------------------------------ ring */

struct giong__ring {
	struct io_uring ring;
	enum giong_ring_tier tier;
	bool registered_fd; /* the ring fd is registered: enter with REGISTERED_RING */
	bool ext_arg;       /* FEAT_EXT_ARG: one enter can carry a timeout */
	bool taskrun_flag;  /* the kernel flags pending task work in sq.kflags */
};

/* Set up @r with the best tier (or the forced one). Returns 0 or -errno
 * translated into GIONG_EURING_* codes. */
int giong__ring_init(struct giong__ring *r, unsigned entries, enum giong_ring_tier tier);
void giong__ring_exit(struct giong__ring *r);
/* Map a setup error to the code users see. */
int giong__ring_setup_error(int err);
/* Submit everything queued and wait for @wait_nr completions or @timeout_ms
 * (UINT64_MAX: none; only with wait_nr > 0). One io_uring_enter at most;
 * none when there is nothing to submit and nothing to wait for. Returns the
 * number submitted or -errno (EINTR/ETIME/EAGAIN/EBUSY are handled by the
 * caller as "reap and retry"). */
int giong__ring_enter(struct giong__worker *w, unsigned wait_nr, uint64_t timeout_ms);
/* Completions are ready, or waiting for an enter to post them. No syscall. */
bool giong__ring_has_work(const struct giong__ring *r);
/* Parse GIONG_RING_TIER. 0 if unset, -EINVAL if unknown. */
int giong__ring_tier_from_env(void);

/* ------------------------------------------------------------ operations */

/* One entry of the slab. user_data = (gen << 32) | (index + 1); 0 is "ignore". */
struct giong__op {
	giong_op_fn fn;
	void *ctx;
	uint32_t gen;
	uint32_t next_free; /* index + 1 of the next free entry, 0 = none */
	bool live;
	bool cancel_sent;
	bool cancel_wanted; /* asked for, but no SQE was to be had: owed */
};

#define GIONG__OP_CHUNK_SHIFT 8
#define GIONG__OP_CHUNK (1u << GIONG__OP_CHUNK_SHIFT)

struct giong__op_slab {
	struct giong__op **chunks;
	uint32_t nchunks;
	uint32_t free_head; /* index + 1, 0 = none */
	uint32_t live;
};

void giong__op_slab_fini(struct giong__op_slab *s);
/* Dispatch one CQE to its operation. */
void giong__op_complete(struct giong__worker *w, uint64_t user_data, int res, unsigned flags);
/* Cancel every live operation (at worker exit). */
void giong__op_cancel_all(struct giong__worker *w);
/* Queue an ASYNC_CANCEL for @user_data whose own CQE is ignored. */
/* Queue a cancel of @user_data; false if no SQE could be had (not sent). */
bool giong__submit_cancel(struct giong__worker *w, uint64_t user_data);
/* Cancel live operation @user_data once; if no SQE can be had now, the
 * cancel is owed and giong__retry_cancels() sends it (every tick). */
void giong__cancel_op(struct giong__worker *w, uint64_t user_data);
void giong__retry_cancels(struct giong__worker *w);
struct io_uring_sqe *giong__sqe(struct giong__worker *w);
int giong__op_start(struct giong__worker *w, struct io_uring_sqe *sqe, giong_op_fn fn, void *ctx,
		    uint64_t *id);

/* ----------------------------------------------------------------- fibers */

/*
 * What a parked fiber waits for. Lives on the parked fiber's own stack,
 * which is not reused until the fiber is resumed (invariant 1).
 */
enum giong__wait_kind {
	GIONG__WAIT_READY,   /* runnable (yield) */
	GIONG__WAIT_IO,      /* an operation's completion */
	GIONG__WAIT_QUEUE,   /* a giong_waitq */
	GIONG__WAIT_SLEEP,   /* a timer */
};

struct giong__waiter {
	struct giong__waiter *next, *prev; /* in the waitq */
	struct giong_waitq *q;
	struct giong__waiter *sd_next, *sd_prev; /* in the worker's shutdown list */
	unsigned flags;
};

struct giong__wait {
	enum giong__wait_kind kind;
	struct giong__fiber *f;
	int result;
	bool interrupted;   /* cancel or deadline asked for it */
	uint8_t opcode;     /* WAIT_IO: the SQE's IORING_OP_* (in the padding) */
	int interrupt_code; /* -ECANCELED or -ETIMEDOUT */
	unsigned cqe_flags;
	uint64_t op_id;            /* WAIT_IO */
	struct giong__waiter qw;   /* WAIT_QUEUE */
	struct giong__timer timer; /* deadline, or the sleep itself */
};
/* Cleared on every park: kept within two cache lines. At 136 bytes (one
 * field too many) a no-op round trip through the ring cost 15 % more
 * (bench_runtime, BM_giong_nop_batch64). */
_Static_assert(sizeof(struct giong__wait) <= 128, "struct giong__wait grew past 128 bytes");

struct giong__fiber {
	struct giong__ctx ctx;
	struct giong__stack *stack;
	struct giong__worker *w;
	giong_task_fn fn;
	void *arg;
	intptr_t result;
	struct giong__fiber *run_next;            /* run queue */
	struct giong__fiber *all_next, *all_prev; /* worker's live fibers */
	struct giong__wait *wait;                 /* non-NULL while parked */
	struct giong_waitq joiners;
	uint64_t deadline;
	unsigned io_cqe_flags;
	bool queued;
	bool cancelled;
	bool finished;
	bool cancelled_first; /* cancel came before the end: join gives -ECANCELED */
	bool detached;
	bool is_main;
};

/* ---------------------------------------------------------------- buffers */

struct giong_recvbuf {
	char *data;   /* first unconsumed byte */
	uint32_t len; /* unconsumed bytes */
	uint32_t cap; /* heap buffer (bid -1): bytes of room after the struct */
	int32_t bid;  /* pool buffer id, or -1 for a heap buffer */
	struct giong__worker *w;
};

struct giong__bufpool {
	struct io_uring_buf_ring *br; /* shared with the kernel; see bufpool.c */
	size_t br_bytes;
	char *mem; /* count * size bytes, lent to the kernel while a buffer is in the ring */
	size_t mem_bytes;
	struct giong_recvbuf *descs; /* one per buffer id */
	unsigned count, size, mask;
	unsigned free; /* buffers in the ring, available to the kernel */
	int bgid;
	bool registered;
	struct giong__list waiters;        /* struct giong_bufpool_waiter, oldest first */
	struct giong__list dry;            /* struct giong_bufpool_dry, in order added */
	struct giong__list_node *dry_next; /* while calling them: the next one */
};

int giong__bufpool_init(struct giong__worker *w, unsigned count, unsigned size);
/* Map and register a provided buffer ring (liburing 2.3 lacks the helper). */
struct io_uring_buf_ring *giong__buf_ring_setup(struct io_uring *ring, unsigned entries,
							 int bgid, int *err);
void giong__buf_ring_free(struct io_uring *ring, struct io_uring_buf_ring *br, unsigned entries,
			  int bgid);
/* A CQE consumed a buffer from the ring. */
void giong__bufpool_consumed(struct giong__worker *w);
void giong__bufpool_fini(struct giong__worker *w);

/* --------------------------------------------------------------- mailbox */

enum giong__msg_kind {
	GIONG__MSG_SPAWN, /* spawn fn(arg) as a detached task */
	GIONG__MSG_CALL,  /* run call(msg) on the worker, outside any task */
};

struct giong__msg {
	struct giong__msg *next;
	enum giong__msg_kind kind;
	giong_task_fn fn;                   /* MSG_SPAWN */
	void *arg;
	void (*call)(struct giong__msg *m); /* MSG_CALL; may free the message */
	bool heap;                          /* MSG_SPAWN: free after handling */
};

struct giong__mailbox {
	pthread_mutex_t lock;
	struct giong__msg *head, *tail;
	atomic_bool sleeping; /* the worker is (about to be) blocked in the kernel */
	atomic_bool pending;  /* head != NULL, readable without the lock */
	int efd;              /* eventfd the worker keeps a read armed on */
	uint64_t efd_buf;     /* lent to the kernel while the read is armed */
	uint64_t efd_op;
	bool efd_armed;
	bool closed;          /* under lock: the worker's loop is over, posts fail */
};

/* Queue @m for @target. False if @target's loop is over (or never began):
 * @m was not queued and stays the caller's. */
bool giong__mailbox_post(struct giong__worker *target, struct giong__msg *m);
/* Close the mailbox of a worker whose loop will never run; give back what
 * was sent to it. */
void giong__mailbox_refuse(struct giong__worker *w);
/* Kick every worker out of its wait (async-signal-safe). */
void giong__wake_all_workers(struct giong_runtime *rt);
/* active bookkeeping (see struct giong_runtime). */
void giong__active_put(struct giong_runtime *rt);
void giong__worker_abandon(struct giong_runtime *rt);

/* ----------------------------------------------------------------- worker */

struct giong_runtime {
	struct giong_config cfg;
	struct giong__worker **workers;
	unsigned nworkers;
	atomic_bool shutdown;
	atomic_bool grace_skipped; /* a second signal: cancel every task now */
	atomic_int state; /* 0 new, 1 running, 2 done */
	/*
	 * When may a worker end? When no task is left anywhere, for a task on
	 * one worker may still spawn_on() another. active counts the workers
	 * that have live tasks plus spawn_on messages in flight; it only moves
	 * when a worker's own count goes between 0 and 1, so the hot path
	 * rarely touches it. Once it is 0 it stays 0: no task is left to spawn.
	 */
	atomic_long active;
	atomic_int mains_left; /* workers whose main task has not returned */
	giong_main_fn main_fn;
	void *main_arg;
	int sigfd;
	int start_error;
};

struct giong__worker {
	struct giong_runtime *rt;
	unsigned index;
	struct giong__ring ring;
	struct giong__ctx sched_ctx; /* the thread's own stack */
	struct giong__fiber *current;
	struct giong__fiber *run_head, *run_tail;
	struct giong__fiber *all; /* live fibers */
	struct giong__fiber *dead; /* finished, stack to recycle once off it */
	struct giong__fiber *fiber_cache; /* freed fiber structs for reuse */
	unsigned fiber_cache_len;
	struct giong__stack_pool stacks;
	struct giong__wheel wheel;
	struct giong__op_slab ops;
	struct giong__bufpool pool;
	struct giong__mailbox mbox;
	struct giong__waiter *sd_waiters; /* woken with GIONG_ESHUTDOWN */
	struct giong_stats stats;
	struct giong_stats final_stats; /* snapshot at exit, for giong_runtime_stats() */
	uint64_t now;
	uint64_t grace_deadline; /* UINT64_MAX until draining */
	uint64_t spin_ns;
	bool reaping; /* inside giong__reap(): it does not nest (completion order) */
	bool sig_armed; /* worker 0: the signalfd read is in the kernel */
	unsigned cancels_wanted; /* operations whose cancel is owed (no SQE then) */
	bool shutdown_seen;
	bool draining; /* exiting: no new operations, every live one cancelled */
	bool main_done;
	bool fibers_cancelled;
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

extern __thread struct giong__worker *giong__tls_worker __attribute__((tls_model("initial-exec")));

static inline struct giong__worker *giong__worker_current(void)
{
	return giong__tls_worker;
}

int giong__worker_new(struct giong_runtime *rt, unsigned index, struct giong__worker **ret);
void giong__worker_free(struct giong__worker *w);
int giong__worker_run(struct giong__worker *w);
uint64_t giong__clock_ms(void);
uint64_t giong__clock_ms_ceil(void); /* rounded up: for expiries */
void giong__fill_stats(struct giong__worker *w, struct giong_stats *out);
/* Consume every ready CQE, calling operation callbacks. */
void giong__reap(struct giong__worker *w);

/* sched.c */
int giong__spawn(struct giong__worker *w, giong_task_fn fn, void *arg, bool detached,
		 bool is_main, struct giong__fiber **ret);
void giong__run_ready(struct giong__worker *w);
void giong__make_ready(struct giong__worker *w, struct giong__fiber *f);
/* Park the current fiber on @wt (already linked where it waits); arms the
 * deadline timer. Returns wt->result. */
int giong__park(struct giong__worker *w, struct giong__wait *wt);
/* Ask a parked fiber to stop waiting with @code (-ECANCELED/-ETIMEDOUT). */
void giong__interrupt(struct giong__worker *w, struct giong__fiber *f, int code);
void giong__cancel_all_fibers(struct giong__worker *w);
void giong__wake_shutdown_waiters(struct giong__worker *w);
void giong__fiber_cache_fini(struct giong__worker *w);
/* Pre-park check: -ECANCELED / -ETIMEDOUT if the fiber must not park. */
int giong__check_wait(struct giong__worker *w, struct giong__fiber *f);
void giong__waiter_wake(struct giong__worker *w, struct giong__waiter *qw, int result);
/* Let the other ready fibers run once; ignores cancellation (internal use
 * where a fiber must not leave before something it lent is given back). */
void giong__yield_raw(struct giong__worker *w);

#endif /* GIONG_INTERNAL_H */
