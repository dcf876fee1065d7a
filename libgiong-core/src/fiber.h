/* SPDX-License-Identifier: MIT */
/*
 * fiber.h - fibers on one worker, the scheduler (fiber.c): the run queue, a fiber's life
 * from spawn to its stack's recycling, parking and what resumes a parked
 * fiber (its operation's completion, a wake of its queue, its timer), and
 * interrupting a wait (cancel, deadline). The public waitq, time, io, chan
 * and task functions are built on it.
 */
#ifndef GIONG_SRC_FIBER_H
#define GIONG_SRC_FIBER_H

#include <errno.h>
#include <string.h>

#include "internal.h"

/*
 * What a parked fiber waits for. Lives on the parked fiber's own stack,
 * which is not reused until the fiber is resumed (invariant 1).
 */
enum giong__wait_kind {
	GIONG__WAIT_READY, /* runnable (yield) */
	GIONG__WAIT_IO,    /* an operation's completion */
	GIONG__WAIT_QUEUE, /* a giong_waitq */
	GIONG__WAIT_SLEEP, /* a timer */
	GIONG__WAIT_JOB,   /* a helper thread's job (giong_offload(), struct giong__offload) */
};

struct giong__waiter {
	struct giong__list_node link;    /* in the waitq */
	struct giong_waitq *q;           /* NULL once woken */
	struct giong__list_node sd_link; /* in the worker's shutdown list (GIONG_WAIT_SHUTDOWN) */
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
	struct giong__fiber *run_next;    /* run queue, or the worker's cache of free structs */
	struct giong__list_node all_link; /* the worker's live fibers */
	struct giong__wait *wait;         /* non-NULL while parked */
	struct giong_waitq joiners;
	uint64_t deadline;
	unsigned io_cqe_flags;
	bool queued;
	bool cancelled;
	bool finished;
	bool cancelled_first; /* cancel came before the end: join gives -ECANCELED */
	bool detached;
};

/*
 * A task's giong_offload() (offload.c): its wait and its job in the
 * runtime's helper pool, on the parked task's stack. From submit to done()
 * the job, fn, arg and what arg points to are the pool's (blocking_pool.h);
 * only done() resumes the task, so the stack outlives the loan. An
 * interrupt cancels the job (fiber.c) and, while fn runs, signals its
 * thread again every GIONG__OFFLOAD_KICK_MS through wt.timer.
 */
#define GIONG__OFFLOAD_KICK_MS 10
struct giong__offload {
	struct giong__wait wt;
	struct giong__blocking_job job;
	giong_offload_fn fn;
	void *arg;
	intptr_t value; /* fn's return (the helper's write, read after done()) */
	bool ran;       /* fn was called: the result is value, whatever the interrupt */
};

/*
 * A wait queue's waiters (struct giong_waitq): a ring, circular and doubly
 * linked through giong__waiter.link, from _first (the oldest; its prev is
 * the newest), so that the public struct holds one pointer besides the tag.
 * The tag, _worker, is the waiters' worker while the ring is not empty and
 * NULL while it is. Only the tag's worker reads or writes the ring; the tag
 * is the one field another thread may read (atomically), and it takes an
 * empty queue by a compare-and-swap from NULL. The store of NULL when the
 * last waiter leaves is a release, the swap that takes the queue next an
 * acquire: the next worker sees the ring as the last one left it. A queue
 * whose tag is another worker's is left alone: no lock, and no mixing.
 */
static inline struct giong__worker *giong__waitq_worker(const struct giong_waitq *q)
{
	return (struct giong__worker *)__atomic_load_n(&q->_worker, __ATOMIC_ACQUIRE);
}

/* Take @q for @w's tasks: 0 if it is @w's now, -EXDEV if another worker's
 * tasks wait on it. */
static inline int giong__waitq_take(struct giong_waitq *q, struct giong__worker *w)
{
	void *cur = __atomic_load_n(&q->_worker, __ATOMIC_ACQUIRE);

	if (cur == w)
		return 0;
	if (cur)
		return -EXDEV;
	return __atomic_compare_exchange_n(&q->_worker, &cur, (void *)w, false, __ATOMIC_ACQUIRE,
					   __ATOMIC_ACQUIRE)
		       ? 0
		       : -EXDEV; /* another worker took it first */
}

/* Link @n last on @q (taken by the caller's worker). */
static inline void giong__waitq_push(struct giong_waitq *q, struct giong__list_node *n)
{
	struct giong__list_node *first = q->_first;

	if (!first) {
		n->next = n->prev = n;
		q->_first = n;
		return;
	}
	n->next = first;
	n->prev = first->prev;
	first->prev->next = n;
	first->prev = n;
}

/* Unlink @n from @q; the last one out frees the queue (its tag to NULL). */
static inline void giong__waitq_remove(struct giong_waitq *q, struct giong__list_node *n)
{
	if (n->next == n) {
		q->_first = NULL;
		n->next = n->prev = NULL;
		__atomic_store_n(&q->_worker, NULL, __ATOMIC_RELEASE);
		return;
	}
	n->prev->next = n->next;
	n->next->prev = n->prev;
	if (q->_first == n)
		q->_first = n->next;
	n->next = n->prev = NULL;
}

/* Make a fiber for @fn(@arg) on @w and queue it; the worker must not be
 * draining (GIONG_ESHUTDOWN). *@ret (if non-NULL) is the fiber. */
int giong__spawn(struct giong__worker *w, giong_task_fn fn, void *arg, bool detached,
		 struct giong__fiber **ret);
/* Run the fibers ready at the start of the call, once each. */
void giong__run_ready(struct giong__worker *w);
/* Free a finished, joined or detached fiber's struct (into the cache). */
void giong__fiber_free(struct giong__worker *w, struct giong__fiber *f);
void giong__fiber_cache_fini(struct giong__worker *w);
/* Park the current fiber on @wt (already linked where it waits); arms the
 * deadline timer. Returns wt->result. */
int giong__park(struct giong__worker *w, struct giong__wait *wt);
/* Link the current fiber on @q (and, with GIONG_WAIT_SHUTDOWN, on the
 * worker's shutdown list) and park; @wt from giong__wait_begin(). -EXDEV at
 * once, linked nowhere, if tasks of another worker wait on @q. */
int giong__park_on_queue(struct giong__worker *w, struct giong__wait *wt, struct giong_waitq *q,
			 unsigned flags);
/* Make the task parked through @qw return @result from its wait. */
void giong__waiter_wake(struct giong__worker *w, struct giong__waiter *qw, int result);
/* Ask a parked fiber to stop waiting with @code (-ECANCELED/-ETIMEDOUT). */
void giong__interrupt(struct giong__worker *w, struct giong__fiber *f, int code);
void giong__cancel_all_fibers(struct giong__worker *w);
void giong__wake_shutdown_waiters(struct giong__worker *w);

/* Pre-park check: -ECANCELED / -ETIMEDOUT if the fiber must not park. */
static inline int giong__check_wait(const struct giong__worker *w, const struct giong__fiber *f)
{
	if (f->cancelled)
		return -ECANCELED;
	if (f->deadline != GIONG_NO_DEADLINE && f->deadline <= w->now)
		return -ETIMEDOUT;
	return 0;
}

/*
 * The preamble of every park: the calling task's worker in *@wp and @wt
 * cleared and set up for a wait of @kind. Returns 0; or GIONG_ENOTWORKER
 * outside a task (*@wp is still the worker, or NULL off one), -ECANCELED or
 * -ETIMEDOUT if the task must not park.
 */
static inline int giong__wait_begin(struct giong__wait *wt, enum giong__wait_kind kind,
				    struct giong__worker **wp)
{
	struct giong__worker *w = giong__worker_current();
	struct giong__fiber *f = w ? w->current : NULL;
	int ret;

	*wp = w;
	if (!f)
		return GIONG_ENOTWORKER;
	ret = giong__check_wait(w, f);
	if (ret)
		return ret;
	memset(wt, 0, sizeof(*wt));
	wt->kind = kind;
	wt->f = f;
	return 0;
}

/* Queue @f to run in the next turn of the loop (once: a queued fiber stays
 * where it is). Inline: every completion and wake comes through here. */
static inline void giong__make_ready(struct giong__worker *w, struct giong__fiber *f)
{
	if (f->queued)
		return;
	f->queued = true;
	f->run_next = NULL;
	if (w->run_tail)
		w->run_tail->run_next = f;
	else
		w->run_head = f;
	w->run_tail = f;
}

/* Let the other ready fibers run once; ignores cancellation (internal use
 * where a fiber must not leave before something it lent is given back). */
static inline void giong__yield_raw(struct giong__worker *w)
{
	struct giong__fiber *f = w->current;
	struct giong__wait wt;

	memset(&wt, 0, sizeof(wt));
	wt.kind = GIONG__WAIT_READY;
	wt.f = f;
	giong__make_ready(w, f);
	f->wait = &wt;
	w->stats.switches++;
	giong__ctx_switch(&f->ctx, &w->sched_ctx);
	f->wait = NULL;
}

#endif /* GIONG_SRC_FIBER_H */
