/* SPDX-License-Identifier: MIT */
/*
 * giong/core/runtime.h - workers, the runtime's settings, shutdown and counters.
 *
 * A runtime owns N workers, one thread each (the thread that calls
 * giong_runtime_run() is worker 0). Each worker owns one io_uring, a run
 * queue of fibers, a timer wheel, a pool of receive buffers and a pool of
 * fiber stacks. Nothing a worker owns is ever touched by another thread:
 * work crosses threads only through giong_spawn_on() and giong_chan.
 */
#ifndef GIONG_CORE_RUNTIME_H
#define GIONG_CORE_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <giong/core/api.h>

GIONG_BEGIN_DECLS

struct giong_runtime;

/* How the ring was set up; see giong_ring_tier(). */
enum giong_ring_tier {
	GIONG_TIER_DEFER = 1, /* SINGLE_ISSUER | DEFER_TASKRUN (Linux 6.1+) */
	GIONG_TIER_COOP = 2,  /* COOP_TASKRUN | TASKRUN_FLAG (Linux 5.19+) */
	GIONG_TIER_BASIC = 3, /* no set-up flags */
	/* No io_uring: the same operations emulated with epoll and
	 * non-blocking calls, files and paths on a pool of helper threads;
	 * see docs/core.md, "The epoll tier". Chosen by itself when io_uring
	 * is refused or missing (EPERM, EACCES, EOPNOTSUPP, ENOSYS: a seccomp
	 * profile, kernel.io_uring_disabled, gVisor), unless uring_only; or
	 * forced (ring_tier, GIONG_RING_TIER=epoll). */
	GIONG_TIER_EPOLL = 4,
};

/*
 * Settings of a runtime. Fill with giong_config_init(), then change what you
 * need. A zero in a numeric field means "the default".
 */
struct giong_config {
	unsigned workers;             /* default: CPUs available to the process */
	bool pin_cores;               /* pin worker i to the i-th allowed CPU; default false */
	uint32_t spin_before_park_us; /* busy-poll the ring this long before sleeping; default 0 */
	unsigned ring_entries;        /* SQ entries per worker (CQ is twice); default 1024 */
	unsigned recv_buffers;        /* receive buffers per worker, a power of two; default 1024 */
	unsigned recv_buffer_size;    /* bytes per receive buffer; default 4096 */
	size_t stack_size;            /* fiber stack size, bytes; default 128 KiB */
	unsigned stack_pool;          /* unused stacks kept per worker; default 256 (at least 1) */
	/* SIGINT/SIGTERM start a graceful shutdown (a second one: the grace ends
	 * at once); default false. They are blocked in the run's threads and read
	 * through worker 0's ring; giong_runtime_run() gives back the calling
	 * thread's mask before it returns, so one arriving after (timeout(1) and
	 * systemd send a SIGTERM to the process and one to its group) takes its
	 * default action: a program that must exit cleanly after the run blocks
	 * both itself before calling it (programs/ and examples/ do). */
	bool shutdown_on_signals;
	uint32_t shutdown_grace_ms; /* time fibers get to finish after shutdown; default 5000
				      * (the least is 1: cancel almost at once) */
	enum giong_ring_tier
		ring_tier; /* 0: best available, or GIONG_RING_TIER=defer|coop|basic|epoll */
	/* io_uring or nothing: where io_uring is refused or missing,
	 * giong_runtime_new() fails with GIONG_EURING_DISABLED or GIONG_ENOURING
	 * instead of falling back to the epoll tier; default false.
	 * GIONG_RING_TIER=uring sets it. A forced tier (ring_tier, or
	 * GIONG_RING_TIER=defer|coop|basic) never falls back either. */
	bool uring_only;
	/* No line on standard error when the epoll tier is chosen because
	 * io_uring is refused; default false (one line per runtime). */
	bool quiet_fallback;
	/* Slots in each worker's table of direct descriptors (giong/core/direct.h),
	 * where accepted TCP connections then go: 0 (default) none, regular
	 * descriptors only (the table gained nothing measurable here: issue 28 in
	 * bench/results/http.md); N > 0: N slots, cut to the soft RLIMIT_NOFILE;
	 * -1: the soft RLIMIT_NOFILE, at most GIONG_DIRECT_FILES_MAX. The
	 * environment's GIONG_DIRECT_FILES (a count, "auto" or "off") wins. */
	int direct_files;
};

/*
 * giong_config_init() - fill @cfg with the documented defaults.
 * Returns 0, or -EINVAL if @cfg is NULL.
 */
GIONG_API int giong_config_init(struct giong_config *cfg);

/*
 * giong_runtime_new() - create a runtime from @cfg (NULL: defaults).
 * Checks the settings and that io_uring works here (creates and discards one
 * ring, registers a buffer ring, enters once). Where io_uring is refused or
 * missing (EPERM, EACCES, EOPNOTSUPP, ENOSYS) the runtime runs on the epoll
 * tier instead and says so in one line on standard error, naming the cause
 * (quiet_fallback: silent); with uring_only or a forced io_uring tier it
 * fails with a clear code instead: GIONG_EURING_DISABLED or GIONG_ENOURING
 * (see giong_strerror()). GIONG_EURING_OLD: this kernel's io_uring lacks
 * what giong needs (no fallback: io_uring works, only too old). On the epoll
 * tier (GIONG_TIER_EPOLL) no ring is made. Returns 0 and an owned runtime in
 * *@ret (free with giong_runtime_free()), or -EINVAL for bad settings,
 * -ENOMEM.
 */
GIONG_API int giong_runtime_new(const struct giong_config *cfg, struct giong_runtime **ret);

/* Entry point of a worker's main fiber; @worker is the worker's index. */
typedef void (*giong_main_fn)(unsigned worker, void *arg);

/*
 * giong_runtime_run() - run @fn(worker, @arg) as the main task of every
 * worker, on a thread per worker (the calling thread is worker 0).
 * The run ends when no task is left on any worker: a worker whose main task
 * returned early stays up while others may still giong_spawn_on() it.
 * Once every main task has returned, or once shutdown has begun, the tasks
 * still running get shutdown_grace_ms to finish; then they are cancelled
 * (see giong_task_cancel()). Before a worker exits, every operation still in
 * the kernel is cancelled and its completion awaited, so no memory the
 * kernel may write is freed early.
 * Returns 0 when every worker ended, -EBUSY if the runtime is already
 * running or has run, -EINVAL if @rt or @fn is NULL, -EDEADLK if the calling
 * thread is already a worker (called from a task), or -errno if a worker
 * could not be started. A runtime runs once.
 */
GIONG_API int giong_runtime_run(struct giong_runtime *rt, giong_main_fn fn, void *arg);

/*
 * giong_runtime_free() - free a runtime that is not running. NULL is a no-op.
 * Returns 0, or -EBUSY if it is still running (and then frees nothing).
 */
GIONG_API int giong_runtime_free(struct giong_runtime *rt);

/*
 * giong_block_on() - run @fn(0, @arg) on a one-worker runtime on the calling
 * thread with default settings (GIONG_RING_TIER is honoured), and free it.
 * Returns 0 or the error of giong_runtime_new()/run() (-EDEADLK from a task).
 */
GIONG_API int giong_block_on(giong_main_fn fn, void *arg);

/*
 * giong_runtime_shutdown() - begin a graceful shutdown. Thread-safe and
 * async-signal-safe; idempotent. Returns 0, or -EINVAL if @rt is NULL.
 * Fibers parked in calls that wait for new work (giong_shutdown_wait(),
 * accept, channel receive) are woken with GIONG_ESHUTDOWN.
 */
GIONG_API int giong_runtime_shutdown(struct giong_runtime *rt);

/* giong_shutdown() - giong_runtime_shutdown() of the calling worker's runtime.
 * Returns 0, or GIONG_ENOTWORKER outside a worker. */
GIONG_API int giong_shutdown(void);

/* giong_is_shutting_down() - true once shutdown has begun for the calling
 * worker's runtime (false outside a worker). */
GIONG_API bool giong_is_shutting_down(void);

/*
 * giong_shutdown_wait() - park the calling fiber until shutdown begins.
 * Returns GIONG_ESHUTDOWN then, -ECANCELED or -ETIMEDOUT (deadline), or
 * GIONG_ENOTWORKER. May suspend.
 */
GIONG_API int giong_shutdown_wait(void);

/*
 * giong_worker_atexit() - call @fn(@ctx) on the calling worker's thread when
 * the worker ends, after its operations were drained and before its receive
 * pool and ring are freed: for per-worker state of libraries built on core.
 * Hooks run in the reverse order of registration. At most 16 per worker.
 * Returns 0, -EINVAL, -ENOSPC, or GIONG_ENOTWORKER.
 */
GIONG_API int giong_worker_atexit(void (*fn)(void *ctx), void *ctx);

/* giong_worker_index() - index of the calling worker, or -1 outside a worker. */
GIONG_API int giong_worker_index(void);

/* giong_worker_count() - number of workers of the calling worker's runtime,
 * or GIONG_ENOTWORKER. */
GIONG_API int giong_worker_count(void);

/* giong_ring_tier() - the tier the calling worker's ring was set up with,
 * or GIONG_ENOTWORKER. */
GIONG_API int giong_ring_tier(void);

/* Counters of one worker. They count structure, not time, so tests may
 * assert on them. */
struct giong_stats {
	uint64_t ticks;  /* turns of the worker loop */
	uint64_t enters; /* io_uring_enter system calls (epoll tier: submissions, epoll_waits) */
	uint64_t sqes_submitted; /* SQEs handed to the kernel */
	uint64_t cqes_reaped;    /* CQEs consumed */
	uint64_t parks;          /* enters that waited for a completion or a timer */
	uint64_t switches;       /* fiber context switches */
	uint64_t fibers_spawned;
	uint64_t cq_overflows;   /* times the kernel reported a CQ overflow backlog */
	uint64_t spawn_failures; /* giong_spawn_on() tasks that could not start (no memory) */
	uint32_t ops_leaked;     /* operations unconfirmed at exit (leaked on purpose) */
	uint32_t fibers_live;    /* fibers not finished */
	uint32_t stacks_live;    /* stacks in use (mapped and held by a fiber) */
	uint32_t stacks_pooled;  /* unused stacks kept for reuse */
	uint32_t ops_live;       /* operations whose final completion has not arrived */
	uint32_t timers_armed;
	uint32_t recvbufs_total; /* buffers in the receive pool */
	uint32_t recvbufs_free;  /* buffers the kernel may fill now */
	uint32_t ring_tier;    /* enum giong_ring_tier the worker runs on (as giong_ring_tier()) */
	uint32_t direct_files; /* slots in the worker's direct descriptor table (0: none) */
	uint32_t direct_used;  /* of which in use (giong/core/direct.h) */
	uint64_t direct_fallbacks; /* files that became regular descriptors, the table full */
};

/*
 * giong_stats() - read the calling worker's counters into @out.
 * Returns 0, -EINVAL if @out is NULL, or GIONG_ENOTWORKER.
 */
GIONG_API int giong_stats(struct giong_stats *out);

/*
 * giong_runtime_stats() - the counters worker @worker had when it ended.
 * Only valid after giong_runtime_run() returned.
 * Returns 0, -EINVAL for a bad argument, or -EBUSY before the run ended
 * (while running, or before it started).
 */
GIONG_API int giong_runtime_stats(const struct giong_runtime *rt, unsigned worker,
				  struct giong_stats *out);

GIONG_END_DECLS

#endif /* GIONG_CORE_RUNTIME_H */
