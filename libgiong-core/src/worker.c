/* SPDX-License-Identifier: MIT */
/*
 * worker.c - one worker's loop: run ready fibers, one io_uring_enter that
 * submits everything the tick produced and waits for a completion or the
 * next timer, reap every completion, fire due timers; and the mailbox
 * through which other threads hand the worker work.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define GIONG__DRAIN_MS 2000 /* how long exit waits for the kernel to confirm */

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* -------------------------------------------------------------- mailbox */

static void mailbox_arm(struct giong__worker *w);

static void mailbox_read_done(void *ctx, int res, unsigned flags)
{
	struct giong__worker *w = ctx;

	(void)res;
	(void)flags;
	w->mbox.efd_armed = false;
	/* The messages themselves are taken at the top of the next tick. */
	if (!w->draining)
		mailbox_arm(w);
}

static void mailbox_arm(struct giong__worker *w)
{
	struct io_uring_sqe *sqe = giong__sqe(w);

	if (!sqe)
		return;
	/* w->mbox.efd_buf belongs to the worker, which outlives the read: the
	 * worker is freed only after its operations have all completed. */
	io_uring_prep_read(sqe, w->mbox.efd, &w->mbox.efd_buf, sizeof(w->mbox.efd_buf), 0);
	if (giong__op_start(w, sqe, mailbox_read_done, w, &w->mbox.efd_op) == 0)
		w->mbox.efd_armed = true;
}

bool giong__mailbox_post(struct giong__worker *target, struct giong__msg *m)
{
	struct giong__mailbox *mb = &target->mbox;

	m->next = NULL;
	pthread_mutex_lock(&mb->lock);
	if (mb->closed) {
		pthread_mutex_unlock(&mb->lock);
		return false;
	}
	if (mb->tail)
		mb->tail->next = m;
	else
		mb->head = m;
	mb->tail = m;
	atomic_store(&mb->pending, true);
	pthread_mutex_unlock(&mb->lock);
	/* Pairs with the worker's store to sleeping and load of pending (both
	 * seq_cst): either it sees pending, or we see it sleeping and kick. */
	if (atomic_load(&mb->sleeping) && target != giong__worker_current()) {
		uint64_t one = 1;
		ssize_t r = write(mb->efd, &one, sizeof(one));
		(void)r; /* EAGAIN: the counter is already non-zero, a wake is due */
	}
	return true;
}

/* Take every queued message, in order; with @close, posts fail from now on. */
static struct giong__msg *mailbox_take(struct giong__worker *w, bool close)
{
	struct giong__mailbox *mb = &w->mbox;
	struct giong__msg *m;

	pthread_mutex_lock(&mb->lock);
	if (close)
		mb->closed = true;
	m = mb->head;
	mb->head = mb->tail = NULL;
	atomic_store(&mb->pending, false);
	pthread_mutex_unlock(&mb->lock);
	return m;
}

/* Close the mailbox if nothing is queued: from then on posts fail, so no
 * task can be sent to a worker whose loop is over (its share of "active"
 * would never be given back, and the run would never end). False if
 * something arrived since the loop's last look: go round again. */
static bool mailbox_close_if_empty(struct giong__worker *w)
{
	struct giong__mailbox *mb = &w->mbox;
	bool empty;

	pthread_mutex_lock(&mb->lock);
	empty = mb->head == NULL;
	if (empty)
		mb->closed = true;
	pthread_mutex_unlock(&mb->lock);
	return empty;
}

/* A worker that never ran its loop (its ring or pool could not be set up,
 * or its thread could not be created): close the mailbox and give back the
 * shares of tasks already sent to it (they cannot run there). */
void giong__mailbox_refuse(struct giong__worker *w)
{
	struct giong__msg *m = mailbox_take(w, true);

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
}

static void mailbox_drain(struct giong__worker *w)
{
	struct giong__msg *m = mailbox_take(w, false);

	while (m) {
		struct giong__msg *next = m->next;

		switch (m->kind) {
		case GIONG__MSG_SPAWN:
			if (giong__spawn(w, m->fn, m->arg, true, false, NULL))
				w->stats.spawn_failures++;
			giong__active_put(w->rt); /* the message's share, taken by spawn_on */
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

/* ---------------------------------------------------------------- reap */

void giong__reap(struct giong__worker *w)
{
	struct io_uring *ring = &w->ring.ring;
	struct {
		uint64_t ud;
		int res;
		unsigned flags;
	} batch[64];

	if (w->reaping)
		return; /* from a callback of this very loop: it reaps on */
	w->reaping = true;
	for (;;) {
		struct io_uring_cqe *cqe;
		unsigned head, n = 0;

		/* Copy, then release the slots before any callback runs: a
		 * callback may submit and, with a full SQ, enter and reap. */
		io_uring_for_each_cqe(ring, head, cqe) {
			batch[n].ud = cqe->user_data;
			batch[n].res = cqe->res;
			batch[n].flags = cqe->flags;
			if (++n == 64)
				break;
		}
		if (!n)
			break;
		io_uring_cq_advance(ring, n);
		w->stats.cqes_reaped += n;
		for (unsigned i = 0; i < n; i++) {
			if (batch[i].flags & IORING_CQE_F_BUFFER)
				giong__bufpool_consumed(w);
			giong__op_complete(w, batch[i].ud, batch[i].res, batch[i].flags);
		}
	}
	w->reaping = false;
}

/* ---------------------------------------------------------------- loop */

static intptr_t main_trampoline(void *arg)
{
	struct giong__worker *w = arg;

	w->rt->main_fn(w->index, w->rt->main_arg);
	return 0;
}

static void signal_arm(struct giong__worker *w);

static void signal_done(void *ctx, int res, unsigned flags)
{
	struct giong__worker *w = ctx;

	(void)flags;
	w->sig_armed = false;
	if (res > 0) {
		/* A second signal while shutting down: stop waiting for grace,
		 * on every worker (each reads the flag in check_lifecycle()). */
		if (atomic_load(&w->rt->shutdown) && !atomic_exchange(&w->rt->grace_skipped, true))
			giong__wake_all_workers(w->rt);
		giong_runtime_shutdown(w->rt);
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

/* No task is left on any worker, and none is on its way. */
static bool worker_done(struct giong__worker *w)
{
	return !w->stats.fibers_live && !atomic_load(&w->rt->active) &&
	       !atomic_load(&w->mbox.pending);
}

void giong__wake_all_workers(struct giong_runtime *rt)
{
	/* Async-signal-safe: write(2) only. */
	for (unsigned i = 0; i < rt->nworkers; i++) {
		uint64_t one = 1;
		ssize_t r = write(rt->workers[i]->mbox.efd, &one, sizeof(one));
		(void)r; /* EAGAIN: the counter is already non-zero, a wake is due */
	}
}

void giong__active_put(struct giong_runtime *rt)
{
	if (atomic_fetch_sub(&rt->active, 1) == 1)
		giong__wake_all_workers(rt); /* the last task anywhere ended */
}

/* A worker that will run no main task gives up its shares. */
void giong__worker_abandon(struct giong_runtime *rt)
{
	if (atomic_fetch_sub(&rt->mains_left, 1) == 1)
		giong__wake_all_workers(rt);
	giong__active_put(rt);
}

/* Shutdown and grace bookkeeping, once per tick. */
static void check_lifecycle(struct giong__worker *w)
{
	if (!w->shutdown_seen && atomic_load_explicit(&w->rt->shutdown, memory_order_relaxed)) {
		w->shutdown_seen = true;
		giong__wake_shutdown_waiters(w);
		w->grace_deadline = min_u64(w->grace_deadline, w->now + w->rt->cfg.shutdown_grace_ms);
	}
	/* A second signal (after shutdown began): no grace left. */
	if (w->shutdown_seen && atomic_load_explicit(&w->rt->grace_skipped, memory_order_relaxed))
		w->grace_deadline = 0;
	/* The grace period also starts once every worker's main task returned. */
	if (w->grace_deadline == UINT64_MAX && !atomic_load_explicit(&w->rt->mains_left, memory_order_relaxed))
		w->grace_deadline = w->now + w->rt->cfg.shutdown_grace_ms;
	if (w->now >= w->grace_deadline && !w->fibers_cancelled && w->stats.fibers_live)
		giong__cancel_all_fibers(w);
}

/* Busy-poll for up to spin_ns before sleeping in the kernel; reading
 * shared memory only, no system call. */
static void spin(struct giong__worker *w)
{
	struct timespec ts;
	uint64_t end;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + w->spin_ns;
	for (unsigned i = 0;; i++) {
		if (giong__ring_has_work(&w->ring) || atomic_load(&w->mbox.pending))
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

	if (!w->run_head) {
		uint64_t next = giong__wheel_next_expiry(&w->wheel);

		/* The end of the grace period matters while there are tasks it
		 * has not cancelled yet; once past, it would make every wait
		 * a zero timeout. */
		if (!w->fibers_cancelled && w->stats.fibers_live)
			next = min_u64(next, w->grace_deadline);

		if (w->spin_ns) {
			/* Spinning waits for the peer's answer to what this tick
			 * produced: hand that to the kernel first, or there is
			 * nothing to answer. */
			if (io_uring_sq_ready(ring))
				giong__ring_enter(w, 0, UINT64_MAX);
			if (!io_uring_cq_ready(ring))
				spin(w);
		}
		atomic_store(&w->mbox.sleeping, true);
		/* Completions already posted need no wait, and no enter at all
		 * when nothing is left to submit. */
		if (!atomic_load(&w->mbox.pending) && !io_uring_cq_ready(ring)) {
			wait_nr = 1;
			if (next != UINT64_MAX)
				timeout = next > w->now ? next - w->now : 0;
		}
#ifdef GIONG_VALGRIND
		/* valgrind 3.19 does not know io_uring_enter can block: it keeps
		 * its big lock through the wait, and a worker waiting for another
		 * one waits for ever. In valgrind builds a worker never sleeps in
		 * the kernel: it polls, and sleeps in nanosleep, which valgrind
		 * knows to release the lock for. */
		if (wait_nr) {
			struct timespec nap = {0, 200000};

			giong__ring_enter(w, 0, UINT64_MAX);
			if (!io_uring_cq_ready(ring))
				nanosleep(&nap, NULL);
			atomic_store_explicit(&w->mbox.sleeping, false, memory_order_relaxed);
			return;
		}
#endif
	}
	ret = giong__ring_enter(w, wait_nr, timeout);
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
	if (atomic_load_explicit(&w->mbox.pending, memory_order_relaxed))
		mailbox_drain(w);
	check_lifecycle(w);
	if (worker_done(w))
		return;
	/* What could not be submitted when it was due (no SQE to be had): the
	 * mailbox and signal reads, owed cancels. */
	if (GIONG__UNLIKELY(!w->mbox.efd_armed))
		mailbox_arm(w);
	if (GIONG__UNLIKELY(w->index == 0 && w->rt->sigfd >= 0 && !w->sig_armed))
		signal_arm(w);
	if (GIONG__UNLIKELY(w->cancels_wanted))
		giong__retry_cancels(w);
	if (IO_URING_READ_ONCE(*w->ring.ring.sq.kflags) & IORING_SQ_CQ_OVERFLOW)
		w->stats.cq_overflows++;
	tick_wait(w);
	giong__reap(w);
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
		giong__ring_enter(w, 1, min_u64(end - now, 50));
		giong__reap(w);
		giong__op_cancel_all(w); /* ops started by callbacks meanwhile */
	}
	w->stats.ops_leaked = w->ops.live;
}

int giong__worker_run(struct giong__worker *w)
{
	struct giong_runtime *rt = w->rt;
	int err;

	giong__tls_worker = w;
	err = giong__ring_init(&w->ring, rt->cfg.ring_entries, rt->cfg.ring_tier);
	if (err) {
		giong__mailbox_refuse(w);
		giong__worker_abandon(rt);
		goto out;
	}
	err = giong__bufpool_init(w, rt->cfg.recv_buffers, rt->cfg.recv_buffer_size);
	if (err) {
		giong__mailbox_refuse(w);
		giong__worker_abandon(rt);
		goto out_ring;
	}
	giong__stack_guard_thread_init();
	giong__ctx_init_thread(&w->sched_ctx);
	w->now = giong__clock_ms();
	giong__wheel_init(&w->wheel, w->now);
	w->grace_deadline = UINT64_MAX;
	mailbox_arm(w);
	if (w->index == 0 && rt->sigfd >= 0)
		signal_arm(w);
	err = giong__spawn(w, main_trampoline, w, true, true, NULL);
	if (err)
		giong__worker_abandon(rt);
	else
		giong__active_put(rt); /* the start-up share; the main task holds one now */
	do {
		while (!worker_done(w))
			tick(w);
	} while (!mailbox_close_if_empty(w));
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
	giong__ring_exit(&w->ring);
out:
	giong__fill_stats(w, &w->final_stats);
	giong__tls_worker = NULL;
	return err;
}

int giong_worker_atexit(void (*fn)(void *ctx), void *ctx)
{
	struct giong__worker *w = giong__worker_current();

	if (!fn)
		return -EINVAL;
	if (!w)
		return GIONG_ENOTWORKER;
	if (w->natexit == sizeof(w->atexit) / sizeof(w->atexit[0]))
		return -ENOSPC;
	w->atexit[w->natexit].fn = fn;
	w->atexit[w->natexit].ctx = ctx;
	w->natexit++;
	return 0;
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
