/* SPDX-License-Identifier: MIT */
/*
 * worker.c - one worker's loop: run ready fibers, run the callbacks queued
 * for the turn (giong_call_soon()), one io_uring_enter that submits
 * everything the tick produced and waits for a completion or the next
 * timer, reap every completion and the helper threads' ones, fire due
 * timers (sleeps, deadlines and callback timers alike); handling what other
 * threads sent through the mailbox; draining at the end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "fiber.h"
#include "giong_faults.h"

/* initial-exec: read with one instruction, not a __tls_get_addr call. */
__thread struct giong__worker *giong__tls_worker __attribute__((tls_model("initial-exec")));

#define GIONG__DRAIN_MS 2000 /* how long exit waits for the kernel to confirm */
/* A signal this soon after the one that began the shutdown is that one delivered
 * twice, not a second request: timeout(1) signals its child, then its process group
 * with the child in it. It does not skip the grace. */
#define GIONG__SIGNAL_REPEAT_MS 250

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Handle every message queued for @w: spawn the tasks sent to it, run the
 * calls (channel wake-ups). */
static void mailbox_drain(struct giong__worker *w)
{
	struct giong__msg *m = giong__mailbox_take(w, false);

	while (m) {
		struct giong__msg *next = m->next;

		switch (m->kind) {
		case GIONG__MSG_SPAWN:
			if (giong__spawn(w, m->fn, m->arg, true, NULL))
				w->stats.spawn_failures++;
			/* The call up: the message's share, taken by spawn_on,
			 * is given back now that the task holds one (or failed). */
			giong__active_put(w->rt);
			break;
		case GIONG__MSG_CALL:
			m->call(m);
			m = NULL; /* call() owns the message */
			break;
		}
		if (m && m->heap)
			free(m);
		m = next;
	}
}

/* ---------------------------------------------------------------- loop */

/* This worker's main task has returned, or will never run. The grace
 * period starts once every worker's has: the last one kicks them all. */
static void main_returned(struct giong__worker *w)
{
	if (atomic_fetch_sub(&w->rt->mains_left, 1) == 1)
		giong__wake_all_workers(w->rt);
}

static intptr_t main_trampoline(void *arg)
{
	struct giong__worker *w = arg;

	w->current->stack->owner_name = "main";
	w->rt->main_fn(w->index, w->rt->main_arg);
	main_returned(w);
	return 0;
}

static void signal_arm(struct giong__worker *w);

static void signal_done(void *ctx, int res, unsigned flags)
{
	struct giong__worker *w = ctx;

	(void)flags;
	w->sig_armed = false;
	if (res > 0) {
		uint64_t now = giong__clock_ms();
		bool repeat = w->rt->signal_at && now - w->rt->signal_at < GIONG__SIGNAL_REPEAT_MS;

		/* A second signal while shutting down: stop waiting for grace,
		 * on every worker (each reads the flag in check_lifecycle()). */
		if (atomic_load(&w->rt->shutdown) && !repeat &&
		    !atomic_exchange(&w->rt->grace_skipped, true))
			giong__wake_all_workers(w->rt);
		if (!w->rt->signal_at)
			w->rt->signal_at = now;
		giong__shutdown_begin(w->rt);
	}
	if (!w->draining && res != -ECANCELED)
		signal_arm(w);
}

static void signal_arm(struct giong__worker *w)
{
	struct io_uring_sqe *sqe = giong__sqe(w);

	if (!sqe)
		return;
	/* w->sig_buf is worker memory, freed only after this read completes. */
	io_uring_prep_read(sqe, w->rt->sigfd, w->sig_buf, sizeof(w->sig_buf), 0);
	w->sig_armed = giong__op_start(w, sqe, signal_done, w, &w->sig_op) == 0;
}

/* No task is left on any worker, and none is on its way; no callback is
 * queued for the next turn (one keeps the loop going as a ready task
 * does: once the loop ends giong_call_soon() is refused, so none is ever
 * left queued). Callback timers do not count: they never keep a worker. */
static bool worker_done(struct giong__worker *w)
{
	return !w->stats.fibers_live && !atomic_load(&w->rt->active) &&
	       !atomic_load(&w->mbox.pending) && !giong__soon_pending(w);
}

/* Shutdown and grace bookkeeping, once per tick. */
static void check_lifecycle(struct giong__worker *w)
{
	if (!w->shutdown_seen && atomic_load_explicit(&w->rt->shutdown, memory_order_relaxed)) {
		w->shutdown_seen = true;
		giong__wake_shutdown_waiters(w);
		w->grace_deadline =
			min_u64(w->grace_deadline, w->now + w->rt->cfg.shutdown_grace_ms);
	}
	/* A second signal (after shutdown began): no grace left. */
	if (w->shutdown_seen && atomic_load_explicit(&w->rt->grace_skipped, memory_order_relaxed))
		w->grace_deadline = 0;
	/* The grace period also starts once every worker's main task returned. */
	if (w->grace_deadline == UINT64_MAX &&
	    !atomic_load_explicit(&w->rt->mains_left, memory_order_relaxed))
		w->grace_deadline = w->now + w->rt->cfg.shutdown_grace_ms;
	if (w->now >= w->grace_deadline && !w->fibers_cancelled && w->stats.fibers_live)
		giong__cancel_all_fibers(w);
}

/* Completions wait to be dispatched: on the ring, or stashed off it by
 * giong__sqe() (op.c). */
static bool cqes_ready(struct giong__worker *w)
{
	if (w->ring.tier == GIONG_TIER_EPOLL)
		return giong__emu_cq_ready(&w->emu) || w->ops.stash_n;
	return io_uring_cq_ready(&w->ring.ring) || w->ops.stash_n;
}

/* Busy-poll for up to spin_ns before sleeping in the kernel; reading
 * shared memory only, no system call. No longer than until @next_ms (the
 * first timer due, on giong__clock_ms()'s clock): the wheel fires from the
 * loop, not from the ring, so a spin past it would make that timer late. */
static void spin(struct giong__worker *w, uint64_t next_ms)
{
	struct timespec ts;
	uint64_t end;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + w->spin_ns;
	if (next_ms < end / 1000000u)
		end = next_ms * 1000000u;
	for (unsigned i = 0;; i++) {
		/* The pool's completions are in memory before their eventfd
		 * write reaches the ring (with DEFER_TASKRUN, not until the
		 * next enter): looked at directly. */
		if (giong__ring_has_work(&w->ring) || w->ops.stash_n ||
		    atomic_load(&w->mbox.pending) || giong__blocking_pending(w))
			return;
		giong__cpu_relax();
		if ((i & 63) == 63) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			if ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec >= end)
				return;
		}
	}
}

static void tick_wait(struct giong__worker *w)
{
	struct io_uring *ring = &w->ring.ring;
	unsigned wait_nr = 0;
	uint64_t timeout = UINT64_MAX;
	int ret;

	/* A ready task or a queued callback: submit, never sleep. */
	if (!w->run_head && !giong__soon_pending(w)) {
		uint64_t next = giong__wheel_next_expiry(&w->wheel), now = w->now;

		/* The end of the grace period matters while there are tasks it
		 * has not cancelled yet; once past, it would make every wait
		 * a zero timeout. */
		if (!w->fibers_cancelled && w->stats.fibers_live)
			next = min_u64(next, w->grace_deadline);

		/* No spinning on the epoll tier: nothing arrives in memory
		 * without a system call to look. */
		if (w->spin_ns && w->ring.tier != GIONG_TIER_EPOLL) {
			/* Spinning waits for the peer's answer to what this tick
			 * produced: hand that to the kernel first, or there is
			 * nothing to answer. */
			if (io_uring_sq_ready(ring))
				giong__io_enter(w, 0, UINT64_MAX);
			if (!cqes_ready(w)) {
				spin(w, next);
				now = giong__clock_ms(); /* the wait below is from here */
			}
		}
		atomic_store(&w->mbox.sleeping, true);
		/* Completions already posted need no wait, and no enter at all
		 * when nothing is left to submit. */
		if (!atomic_load(&w->mbox.pending) && !cqes_ready(w) &&
		    !giong__blocking_pending(w)) {
			wait_nr = 1;
			if (next != UINT64_MAX)
				timeout = next > now ? next - now : 0;
		}
#ifdef GIONG_VALGRIND
		/* valgrind 3.19 does not know io_uring_enter can block: it keeps
		 * its big lock through the wait, and a worker waiting for another
		 * one waits for ever. In valgrind builds a worker never sleeps in
		 * the kernel: it polls, and sleeps in nanosleep, which valgrind
		 * knows to release the lock for. */
		if (wait_nr) {
			struct timespec nap = {0, 200000};

			giong__io_enter(w, 0, UINT64_MAX);
			if (!cqes_ready(w))
				nanosleep(&nap, NULL);
			atomic_store_explicit(&w->mbox.sleeping, false, memory_order_relaxed);
			return;
		}
#endif
	}
	ret = giong__io_enter(w, wait_nr, timeout);
	atomic_store_explicit(&w->mbox.sleeping, false, memory_order_relaxed);
	if (ret == -EBUSY || ret == -EAGAIN || ret == -EINTR || ret == -ETIME || ret >= 0)
		return; /* reaping next makes room; EINTR: just go round */
	if (ret == -EBADR)
		w->stats.cq_overflows++; /* completions were lost: nothing to do but count */
}

static void tick(struct giong__worker *w)
{
	w->stats.ticks++;
	giong__run_ready(w);
	/* After the tasks: what they queued runs in this turn, and the tasks
	 * the callbacks wake run in the next. */
	giong__soon_run(w);
	if (atomic_load_explicit(&w->mbox.pending, memory_order_relaxed))
		mailbox_drain(w);
	check_lifecycle(w);
	if (worker_done(w))
		return;
	/* What could not be submitted when it was due (no SQE to be had): the
	 * mailbox and signal reads, owed cancels. */
	if (GIONG__UNLIKELY(!w->mbox.efd_armed))
		giong__mailbox_arm(w);
	if (GIONG__UNLIKELY(w->index == 0 && w->rt->sigfd >= 0 && !w->sig_armed))
		signal_arm(w);
	if (GIONG__UNLIKELY(w->cancels_wanted))
		giong__retry_cancels(w);
	if (w->ring.tier != GIONG_TIER_EPOLL &&
	    IO_URING_READ_ONCE(*w->ring.ring.sq.kflags) & IORING_SQ_CQ_OVERFLOW)
		w->stats.cq_overflows++;
	tick_wait(w);
	giong__reap(w);
	/* The helper threads' completions (giong_offload(), the epoll tier's
	 * file calls): their wake is the mailbox's eventfd on the io_uring
	 * tiers, whose read completes above but reaps nothing itself. One
	 * atomic load when there are none. */
	giong__blocking_reap(w);
	w->now = giong__clock_ms();
	giong__wheel_advance(&w->wheel, w->now);
}

/* Cancel what is still in the kernel and wait, bounded, for every final
 * CQE (invariant 4). What is not confirmed in time is leaked on purpose. */
static void drain(struct giong__worker *w)
{
	uint64_t end;

	w->draining = true;
	giong__op_cancel_all(w);
	end = giong__clock_ms() + GIONG__DRAIN_MS;
	while (w->ops.live) {
		uint64_t now = giong__clock_ms();

		if (now >= end)
			break;
		giong__io_enter(w, w->ops.stash_n || cqes_ready(w) ? 0 : 1, min_u64(end - now, 50));
		giong__reap(w);
		giong__op_cancel_all(w); /* ops started by callbacks meanwhile */
	}
	w->stats.ops_leaked = w->ops.live;
	/* The wheel never advances again: callback timers still armed are
	 * disarmed uncalled (their time has not come), so that every struct
	 * giong_timer is its owner's again (an atexit hook may free it). */
	giong__wheel_clear(&w->wheel);
}

int giong__worker_run(struct giong__worker *w)
{
	struct giong_runtime *rt = w->rt;
	int err;

	giong__tls_worker = w;
	giong__faults_thread(w->index); /* GIONG_FAULTS: this worker's decisions replay */
	err = giong__ring_init(&w->ring, rt->cfg.ring_entries, rt->cfg.ring_tier);
	if (!err && w->ring.tier == GIONG_TIER_EPOLL)
		err = giong__emu_init(w, rt->cfg.ring_entries);
	if (err) {
		giong__worker_refuse(w);
		goto out;
	}
	err = giong__bufpool_init(w, rt->cfg.recv_buffers, rt->cfg.recv_buffer_size);
	if (err) {
		giong__worker_refuse(w);
		goto out_ring;
	}
	giong__direct_init(w, rt->cfg.direct_files);
	giong__stack_guard_thread_init();
	giong__ctx_init_thread(&w->sched_ctx);
	w->now = giong__clock_ms();
	giong__wheel_init(&w->wheel, w->now);
	giong__clist_init(&w->soon);
	w->grace_deadline = UINT64_MAX;
	giong__mailbox_arm(w);
	if (w->index == 0 && rt->sigfd >= 0)
		signal_arm(w);
	err = giong__spawn(w, main_trampoline, w, true, NULL);
	if (err)
		main_returned(w);
	/* The call up: the start-up share (see giong_runtime_run()) is given
	 * back; the main task holds one now, if it could start. */
	giong__active_put(rt);
	do {
		while (!worker_done(w))
			tick(w);
	} while (!giong__mailbox_close_if_empty(w));
	drain(w);
	while (w->natexit > 0) {
		w->natexit--;
		w->atexit[w->natexit].fn(w->atexit[w->natexit].ctx);
	}
	giong__ctx_destroy(&w->sched_ctx);
	giong__stack_guard_thread_fini();
	/* Invariant 4: memory the kernel may still write is leaked, not freed.
	 * Operations it never confirmed may hold pool buffers (and the worker's
	 * own read buffers, see giong__worker_free()). */
	if (!w->stats.ops_leaked)
		giong__bufpool_fini(w);
out_ring:
	/* With operations unconfirmed, closing the ring is still safe for the
	 * ring's own memory; the kernel tears down what remains. */
	if (w->ring.tier == GIONG_TIER_EPOLL)
		giong__emu_fini(w);
	giong__ring_exit(&w->ring);
out:
	giong__fill_stats(w, &w->final_stats);
	giong__tls_worker = NULL;
	return err;
}

int giong__worker_new(struct giong_runtime *rt, unsigned index, struct giong__worker **ret)
{
	struct giong__worker *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->rt = rt;
	w->index = index;
	w->spin_ns = (uint64_t)rt->cfg.spin_before_park_us * 1000;
	pthread_mutex_init(&w->mbox.lock, NULL);
	w->mbox.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->mbox.efd < 0) {
		int err = -errno;

		pthread_mutex_destroy(&w->mbox.lock);
		free(w);
		return err;
	}
	giong__stack_pool_init(&w->stacks, rt->cfg.stack_size, rt->cfg.stack_pool);
	*ret = w;
	return 0;
}

void giong__worker_free(struct giong__worker *w)
{
	if (!w)
		return;
	/* No message is left: a worker closes its mailbox empty when its loop
	 * ends, or drains it when its loop never ran (giong__mailbox_refuse()). */
	giong__stack_pool_fini(&w->stacks);
	giong__fiber_cache_fini(w);
	giong__op_slab_fini(&w->ops);
	close(w->mbox.efd);
	pthread_mutex_destroy(&w->mbox.lock);
	/* The struct holds buffers lent to the kernel (the eventfd and
	 * signalfd reads): kept if an operation was never confirmed. */
	if (!w->final_stats.ops_leaked)
		free(w);
}

void giong__worker_refuse(struct giong__worker *w)
{
	struct giong__msg *m = giong__mailbox_take(w, true);

	/* The tasks sent to it cannot run there: each message's share goes
	 * back (the call up), and so do the worker's own two (its main task
	 * and the start-up share). */
	while (m) {
		struct giong__msg *next = m->next;

		if (m->kind == GIONG__MSG_SPAWN) {
			w->stats.spawn_failures++;
			giong__active_put(w->rt);
			if (m->heap)
				free(m);
		}
		m = next;
	}
	main_returned(w);
	giong__active_put(w->rt);
}

void giong__fill_stats(struct giong__worker *w, struct giong_stats *out)
{
	*out = w->stats;
	out->stacks_live = w->stacks.live;
	out->stacks_pooled = w->stacks.count;
	out->ops_live = w->ops.live;
	out->timers_armed = giong__wheel_count(&w->wheel);
	out->recvbufs_total = w->pool.count;
	out->recvbufs_free = w->pool.free;
	out->ring_tier = (uint32_t)w->ring.tier;
	out->direct_files = w->direct_size;
	out->direct_used = w->direct_used;
}
