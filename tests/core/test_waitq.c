/* SPDX-License-Identifier: MIT */
/*
 * test_waitq.c - wait queues, and the rule that a queue never mixes workers
 * (waitq.h: the waiters are tasks of one worker at a time):
 *  - on one worker: wake_one wakes the oldest, wake_all each waiter once,
 *    empty says so;
 *  - eight tasks of worker 0 wait on one queue; the three other workers try
 *    to wait on it (-EXDEV at once, never parked) and to wake it (-EXDEV,
 *    none woken), a plain thread too (GIONG_ENOTWORKER); then worker 0's
 *    wake_all wakes each of its eight exactly once, with its value;
 *  - the emptied queue is taken by worker 1's next waiter: now worker 0's
 *    wake and wait are refused, and worker 1's wake ends the wait;
 *  - under contention (for TSan): tasks of four workers wait on one queue
 *    (with a short deadline, trying again when refused) and a waker of each
 *    worker wakes it in a loop; the queue passes from worker to worker as
 *    it empties; every wake a waker counted reached exactly one waiter of
 *    its own worker, and no waiter got another worker's.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "giong_test.h"

#define GUARD_MS 10000 /* bounds every wait: a failure, never a hang */

/* ------------------------------------------------------- one worker */

struct one {
	struct giong_waitq q;
	int order[3], n;
	int ret[3];
	int woke_one, woke_all, woke_none, empty_before, empty_parked, empty_after;
};

struct one_arg {
	struct one *o;
	int id;
};

static intptr_t one_waiter(void *arg)
{
	struct one_arg *a = arg;

	a->o->ret[a->id] = giong_waitq_wait(&a->o->q, 0);
	a->o->order[a->o->n++] = a->id;
	return 0;
}

static void one_main(unsigned w, void *arg)
{
	struct one *o = arg;
	struct one_arg args[3];
	struct giong_task *t[3];

	(void)w;
	giong_waitq_init(&o->q);
	o->empty_before = giong_waitq_empty(&o->q);
	for (int i = 0; i < 3; i++) {
		args[i] = (struct one_arg){o, i};
		if (!gt_check_int_equal(giong_spawn(one_waiter, &args[i], &t[i]), 0))
			return;
	}
	giong_yield(); /* each runs to its wait, in order */
	o->empty_parked = giong_waitq_empty(&o->q);
	o->woke_one = giong_waitq_wake_one(&o->q, 10); /* the oldest: 0 */
	giong_yield();
	o->woke_all = giong_waitq_wake_all(&o->q, 20);
	o->woke_none = giong_waitq_wake_all(&o->q, 30);
	for (int i = 0; i < 3; i++)
		giong_join(t[i], NULL);
	o->empty_after = giong_waitq_empty(&o->q);
}

static void test_one_worker(void **state)
{
	struct giong_config c = gt_config(1);
	struct one o;

	(void)state;
	memset(&o, 0, sizeof(o));
	gt_run(&c, one_main, &o, NULL);
	assert_true(o.empty_before);
	assert_false(o.empty_parked);
	assert_int_equal(o.woke_one, 1);
	assert_int_equal(o.woke_all, 2);
	assert_int_equal(o.woke_none, 0);
	assert_true(o.empty_after);
	assert_int_equal(o.n, 3);
	assert_int_equal(o.order[0], 0);
	assert_int_equal(o.ret[0], 10);
	assert_int_equal(o.ret[1], 20);
	assert_int_equal(o.ret[2], 20);
	assert_int_equal(giong_waitq_wake_one(NULL, 0), 0);
	assert_int_equal(giong_waitq_wait(NULL, 0), -EINVAL);
	assert_true(giong_waitq_empty(NULL));
}

/* ------------------------------------- several workers, one queue */

#define XW_WORKERS 4
#define XW_WAITERS 8 /* on worker 0 */

struct xq {
	struct giong_waitq q;
	_Atomic int phase;   /* 1: worker 0's waiters wait; 2..4: the hand-over */
	_Atomic int entered; /* worker 0's waiters about to wait */
	_Atomic int foreign_done;
	_Atomic int woken[XW_WAITERS]; /* how often each returned from its wait */
	int ret[XW_WAITERS];
	/* worker w's tries on worker 0's queue */
	int f_wait[XW_WORKERS], f_one[XW_WORKERS], f_all[XW_WORKERS], f_empty[XW_WORKERS];
	int t_wait, t_one, t_all, t_empty; /* a plain thread's */
	int woken_before;                  /* any of the eight woken before worker 0 woke them */
	int wake_all_ret, empty_after;
	/* the hand-over to worker 1 */
	int w1_ret, w1_woken, w0_wake, w0_wait, w1_wake;
	_Atomic int w1_entered;
};

struct xq_arg {
	struct xq *x;
	int id;
};

static bool wait_phase(struct xq *x, int phase)
{
	uint64_t end = giong_now_ms() + GUARD_MS;

	while (atomic_load(&x->phase) < phase && giong_now_ms() < end)
		giong_sleep_ms(1);
	return gt_check_true(atomic_load(&x->phase) >= phase);
}

static intptr_t xq_waiter(void *arg)
{
	struct xq_arg *a = arg;
	uint64_t saved = giong_deadline_in(GUARD_MS);

	atomic_fetch_add(&a->x->entered, 1);
	a->x->ret[a->id] = giong_waitq_wait(&a->x->q, 0);
	atomic_fetch_add(&a->x->woken[a->id], 1);
	giong_deadline_restore(saved);
	return 0;
}

static void *xq_thread(void *arg)
{
	struct xq *x = arg;

	x->t_wait = giong_waitq_wait(&x->q, 0);
	x->t_one = giong_waitq_wake_one(&x->q, 1);
	x->t_all = giong_waitq_wake_all(&x->q, 1);
	x->t_empty = giong_waitq_empty(&x->q);
	return NULL;
}

static intptr_t w1_waiter(void *arg)
{
	struct xq *x = arg;
	uint64_t saved = giong_deadline_in(GUARD_MS);

	atomic_store(&x->w1_entered, 1);
	x->w1_ret = giong_waitq_wait(&x->q, 0);
	x->w1_woken++;
	giong_deadline_restore(saved);
	return 0;
}

static void xq_worker0(struct xq *x)
{
	struct xq_arg args[XW_WAITERS];
	struct giong_task *t[XW_WAITERS];
	uint64_t end = giong_now_ms() + GUARD_MS, saved;
	pthread_t th;
	int n = 0;

	for (; n < XW_WAITERS; n++) {
		args[n] = (struct xq_arg){x, n};
		if (!gt_check_int_equal(giong_spawn(xq_waiter, &args[n], &t[n]), 0))
			break;
	}
	/* A waiter counts itself and parks with no yield between. */
	while (atomic_load(&x->entered) < n && giong_now_ms() < end)
		giong_yield();
	atomic_store(&x->phase, 1);
	if (pthread_create(&th, NULL, xq_thread, x) == 0)
		pthread_join(th, NULL);
	while (atomic_load(&x->foreign_done) < XW_WORKERS - 1 && giong_now_ms() < end)
		giong_sleep_ms(1);
	giong_yield(); /* a wake that got through would have run its task by now */
	for (int i = 0; i < n; i++)
		x->woken_before += atomic_load(&x->woken[i]);
	x->wake_all_ret = giong_waitq_wake_all(&x->q, 42);
	for (int i = 0; i < n; i++)
		giong_join(t[i], NULL);
	x->empty_after = giong_waitq_empty(&x->q);

	/* Free again: worker 1's next waiter takes it. */
	atomic_store(&x->phase, 2);
	if (!wait_phase(x, 3))
		return;
	x->w0_wake = giong_waitq_wake_all(&x->q, 1);
	saved = giong_deadline_in(GUARD_MS); /* a wait let through would hang */
	x->w0_wait = giong_waitq_wait(&x->q, 0);
	giong_deadline_restore(saved);
	atomic_store(&x->phase, 4);
}

static void xq_main(unsigned w, void *arg)
{
	struct xq *x = arg;
	struct giong_task *t;
	uint64_t end;

	if (w == 0) {
		xq_worker0(x);
		return;
	}
	if (!wait_phase(x, 1)) {
		atomic_fetch_add(&x->foreign_done, 1);
		return;
	}
	x->f_wait[w] = giong_waitq_wait(&x->q, 0); /* at once: never parked */
	x->f_one[w] = giong_waitq_wake_one(&x->q, 1);
	x->f_all[w] = giong_waitq_wake_all(&x->q, 1);
	x->f_empty[w] = giong_waitq_empty(&x->q);
	atomic_fetch_add(&x->foreign_done, 1);
	if (w != 1 || !wait_phase(x, 2))
		return;
	if (!gt_check_int_equal(giong_spawn(w1_waiter, x, &t), 0))
		return;
	end = giong_now_ms() + GUARD_MS;
	while (!atomic_load(&x->w1_entered) && giong_now_ms() < end)
		giong_yield();
	atomic_store(&x->phase, 3);
	if (wait_phase(x, 4))
		x->w1_wake = giong_waitq_wake_all(&x->q, 43);
	giong_join(t, NULL);
}

static void test_workers_never_mix(void **state)
{
	struct giong_config c = gt_config(XW_WORKERS);
	struct xq *x = calloc(1, sizeof(*x));

	(void)state;
	assert_non_null(x);
	gt_run(&c, xq_main, x, NULL);
	for (int w = 1; w < XW_WORKERS; w++) {
		assert_int_equal(x->f_wait[w], -EXDEV);
		assert_int_equal(x->f_one[w], -EXDEV);
		assert_int_equal(x->f_all[w], -EXDEV);
		assert_false(x->f_empty[w]);
	}
	assert_int_equal(x->t_wait, GIONG_ENOTWORKER);
	assert_int_equal(x->t_one, GIONG_ENOTWORKER);
	assert_int_equal(x->t_all, GIONG_ENOTWORKER);
	assert_false(x->t_empty);
	assert_int_equal(x->woken_before, 0);
	assert_int_equal(x->wake_all_ret, XW_WAITERS);
	for (int i = 0; i < XW_WAITERS; i++) {
		assert_int_equal(atomic_load(&x->woken[i]), 1);
		assert_int_equal(x->ret[i], 42);
	}
	assert_true(x->empty_after);
	/* The hand-over: worker 1's now, worker 0 refused. */
	assert_int_equal(x->w0_wake, -EXDEV);
	assert_int_equal(x->w0_wait, -EXDEV);
	assert_int_equal(x->w1_wake, 1);
	assert_int_equal(x->w1_woken, 1);
	assert_int_equal(x->w1_ret, 43);
	free(x);
}

/* ------------------------------------------------------ contention */

#define CW_WORKERS 4
#define CW_WAITERS 3  /* per worker */
#define CW_ROUNDS 100 /* waits per waiter */
#define CW_CODE(w) (1000 + (int)(w))

/* One worker's counts; each touched by that worker's tasks only. */
struct cw_worker {
	long wakes;   /* woken, as its waker's wake_all counted them */
	long woken;   /* waits that returned this worker's code */
	long foreign; /* waits that returned another worker's code (never) */
	long timeouts, refused_waits, refused_wakes, bad;
	int waiters_done;
};

struct cw {
	struct giong_waitq q;
	_Atomic int ready; /* workers at the start line */
	struct cw_worker per[CW_WORKERS];
};

/* CW_ROUNDS waits that parked (woken or timed out); a wait refused because
 * another worker's tasks hold the queue is tried again a little later. */
static intptr_t cw_waiter(void *arg)
{
	struct cw *x = arg;
	unsigned w = (unsigned)giong_worker_index();
	struct cw_worker *me = &x->per[w];
	uint64_t end = giong_now_ms() + 6 * GUARD_MS;

	for (int i = 0; i < CW_ROUNDS;) {
		uint64_t saved = giong_deadline_in(3);
		int r = giong_waitq_wait(&x->q, 0);

		giong_deadline_restore(saved);
		if (r == -EXDEV) {
			me->refused_waits++;
			if (giong_now_ms() >= end) {
				me->bad++; /* never got the queue */
				break;
			}
			giong_sleep_ms(1); /* let the holder's tasks finish a round */
			continue;
		}
		i++;
		if (r == CW_CODE(w))
			me->woken++;
		else if (r == -ETIMEDOUT)
			me->timeouts++;
		else if (r >= CW_CODE(0) && r < CW_CODE(CW_WORKERS))
			me->foreign++;
		else
			me->bad++;
		if (i % 4 == 0)
			giong_sleep_ms(
				2); /* off the queue a while: it may pass to another worker */
	}
	me->waiters_done++;
	return 0;
}

/* Wakes the queue for this worker in a loop, one waiter or all of them in
 * turn (so that some waits time out meanwhile), until its waiters are done. */
static intptr_t cw_waker(void *arg)
{
	struct cw *x = arg;
	unsigned w = (unsigned)giong_worker_index();
	struct cw_worker *me = &x->per[w];
	uint64_t end = giong_now_ms() + 6 * GUARD_MS;

	for (unsigned i = 0; me->waiters_done < CW_WAITERS && giong_now_ms() < end; i++) {
		int n = i % 2 ? giong_waitq_wake_one(&x->q, CW_CODE(w))
			      : giong_waitq_wake_all(&x->q, CW_CODE(w));

		if (n > 0)
			me->wakes += n;
		else if (n == -EXDEV)
			me->refused_wakes++;
		else if (n != 0)
			me->bad++;
		/* A pause in the kernel: the waiters park for real, and the
		 * other workers' threads get the two cores meanwhile. */
		giong_sleep_ms(1);
	}
	return 0;
}

static void cw_main(unsigned w, void *arg)
{
	struct cw *x = arg;
	struct giong_task *t[CW_WAITERS + 1];
	uint64_t end = giong_now_ms() + GUARD_MS;
	int n = 0;

	(void)w;
	/* All start together: a worker alone would have the queue to itself. */
	atomic_fetch_add(&x->ready, 1);
	while (atomic_load(&x->ready) < CW_WORKERS && giong_now_ms() < end)
		giong_yield();
	for (; n < CW_WAITERS; n++)
		if (!gt_check_int_equal(giong_spawn(cw_waiter, arg, &t[n]), 0))
			break;
	if (gt_check_int_equal(giong_spawn(cw_waker, arg, &t[n]), 0))
		n++;
	while (n > 0)
		giong_join(t[--n], NULL);
}

static void test_contended_handover(void **state)
{
	struct giong_config c = gt_config(CW_WORKERS);
	struct cw *x = calloc(1, sizeof(*x));
	long woken = 0, refused = 0;

	(void)state;
	assert_non_null(x);
	gt_run(&c, cw_main, x, NULL);
	for (int w = 0; w < CW_WORKERS; w++) {
		const struct cw_worker *p = &x->per[w];

		print_message("worker %d: woken %ld, timeouts %ld, waits refused %ld, "
			      "wakes refused %ld\n",
			      w, p->woken, p->timeouts, p->refused_waits, p->refused_wakes);
		assert_int_equal(p->waiters_done, CW_WAITERS);
		assert_int_equal(p->woken + p->timeouts, (long)CW_WAITERS * CW_ROUNDS);
		assert_true(p->woken > 0); /* each worker had the queue in turn */
		/* Exactly once: every wake counted reached one waiter, and every
		 * waiter that got this worker's code was counted by its waker. */
		assert_int_equal(p->wakes, p->woken);
		assert_int_equal(p->foreign, 0);
		assert_int_equal(p->bad, 0);
		woken += p->woken;
		refused += p->refused_waits + p->refused_wakes;
	}
	assert_true(woken > 0);
	print_message("woken %ld, refused %ld in all\n", woken, refused);
	free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_worker),
		cmocka_unit_test(test_workers_never_mix),
		cmocka_unit_test(test_contended_handover),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
