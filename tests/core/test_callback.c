/* SPDX-License-Identifier: MIT */
/* test_callback.c - giong/core/callback.h: next-turn callbacks run in order,
 * outside the caller, once a turn, without an SQE; cancelled ones never
 * run; callback timers fire in order and never early, may be re-armed and
 * stopped from callbacks, wake a worker that has nothing else to wait for,
 * and are disarmed uncalled when the loop ends; bad arguments, other
 * workers' structs and calls after the loop are refused. */
#include <time.h>

#include "giong_test.h"

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------ the next turn */

struct order {
	int log[16];
	int n;
	struct giong_soon s[6];
	bool in_call; /* inside giong_call_soon(): a callback then is a bug */
};

static void log_soon(struct giong_soon *s, void *ctx)
{
	struct order *o = ctx;

	gt_check_false(o->in_call);
	gt_check_int_equal(giong_task_current() == NULL, 1); /* outside any task */
	gt_check_int_equal(giong_soon_queued(s), 0);         /* idle inside its callback */
	if (o->n < 16)
		o->log[o->n++] = (int)(s - o->s);
}

/* s[4]'s callback cancels s[5], queued for the same turn after it. */
static void cancel_next(struct giong_soon *s, void *ctx)
{
	struct order *o = ctx;

	log_soon(s, ctx);
	gt_check_int_equal(giong_soon_cancel(&o->s[5]), 1);
}

static void order_main(unsigned w, void *arg)
{
	struct order *o = arg;
	struct giong_stats before, after;

	(void)w;
	/* The first turn submits the worker's own reads (mailbox, signals):
	 * count from the second. */
	gt_check_int_equal(giong_yield(), 0);
	gt_check_int_equal(giong_stats(&before), 0);
	for (int i = 0; i < 4; i++) {
		o->in_call = true;
		gt_check_int_equal(giong_call_soon(&o->s[i], log_soon, o), 0);
		o->in_call = false;
	}
	gt_check_int_equal(giong_soon_queued(&o->s[1]), 1);
	gt_check_int_equal(giong_call_soon(&o->s[1], log_soon, o), -EALREADY);
	/* Cancelled before it runs: never called, the caller's again. */
	gt_check_int_equal(giong_soon_cancel(&o->s[2]), 1);
	gt_check_int_equal(giong_soon_cancel(&o->s[2]), 0);
	gt_check_int_equal(giong_soon_queued(&o->s[2]), 0);
	gt_check_int_equal(giong_call_soon(&o->s[4], cancel_next, o), 0);
	gt_check_int_equal(giong_call_soon(&o->s[5], log_soon, o), 0);
	gt_check_int_equal(o->n, 0); /* nothing from inside the task */
	gt_check_int_equal(giong_yield(), 0);
	/* 0 1 3 in order, s[1] once, s[2] never, s[4] cancelled s[5]. */
	gt_check_int_equal(o->n, 4);
	gt_check_int_equal(o->log[0], 0);
	gt_check_int_equal(o->log[1], 1);
	gt_check_int_equal(o->log[2], 3);
	gt_check_int_equal(o->log[3], 4);
	/* No SQE, no CQE for any of it (a fault plan may add enters). */
	gt_check_int_equal(giong_stats(&after), 0);
	gt_check_true(after.sqes_submitted - before.sqes_submitted <= gt_faults_ring());
	gt_check_true(after.cqes_reaped - before.cqes_reaped <= gt_faults_ring());
}

static void test_soon_order_and_cancel(void **state)
{
	struct giong_config c = gt_config(1);
	struct order o;

	(void)state;
	memset(&o, 0, sizeof(o));
	gt_run(&c, order_main, &o, NULL);
	assert_int_equal(o.n, 4);
}

/* Re-queued from its own callback: once a turn, not in a loop. */
struct again {
	struct giong_soon s;
	int runs, seen[8];
	struct giong_soon *heap;
	int heap_runs;
};

static void requeue(struct giong_soon *s, void *ctx)
{
	struct again *a = ctx;

	if (++a->runs < 5)
		gt_check_int_equal(giong_call_soon(s, requeue, a), 0);
}

/* Frees its own struct: core must not touch it afterwards (ASan). */
static void free_self(struct giong_soon *s, void *ctx)
{
	struct again *a = ctx;

	a->heap_runs++;
	free(s);
	a->heap = NULL;
}

static void again_main(unsigned w, void *arg)
{
	struct again *a = arg;

	(void)w;
	gt_check_int_equal(giong_call_soon(&a->s, requeue, a), 0);
	a->heap = calloc(1, sizeof(*a->heap));
	if (!gt_check_non_null(a->heap))
		return;
	gt_check_int_equal(giong_call_soon(a->heap, free_self, a), 0);
	for (int i = 0; i < 8; i++) {
		gt_check_int_equal(giong_yield(), 0);
		a->seen[i] = a->runs;
	}
}

static void test_soon_requeue_and_free(void **state)
{
	struct giong_config c = gt_config(1);
	struct again a;

	(void)state;
	memset(&a, 0, sizeof(a));
	gt_run(&c, again_main, &a, NULL);
	assert_int_equal(a.runs, 5);
	assert_int_equal(a.heap_runs, 1);
	for (int i = 0; i < 5; i++)
		assert_int_equal(a.seen[i], i + 1); /* one run per turn */
	assert_int_equal(a.seen[7], 5);
}

/* A callback spawns a task; the queued callback keeps the loop going after
 * the main task returned, so the task it spawns still runs. */
struct spawner {
	struct giong_soon s;
	struct giong_timer t;
	int soon_runs, soon_task, timer_task;
};

static intptr_t spawned(void *arg)
{
	int *ran = arg;

	gt_check_non_null(giong_task_current());
	(*ran)++;
	return 0;
}

static void spawn_from_timer(struct giong_timer *t, void *ctx)
{
	struct spawner *sp = ctx;

	(void)t;
	gt_check_int_equal(giong_spawn(spawned, &sp->timer_task, NULL), 0);
}

/* Spawned by the queued callback; the timer it arms spawns the next. */
static intptr_t arm_then_sleep(void *arg)
{
	struct spawner *sp = arg;

	sp->soon_task++;
	gt_check_int_equal(giong_timer_start_in(&sp->t, 5, spawn_from_timer, sp), 0);
	gt_check_int_equal(giong_sleep_ms(30), 0); /* keeps the loop until the timer */
	return 0;
}

static void spawn_from_soon(struct giong_soon *s, void *ctx)
{
	struct spawner *sp = ctx;

	/* The first run, in the turn the main task returned in, queues itself
	 * again: then nothing but the queue is left for the next turn. */
	if (sp->soon_runs++ == 0) {
		gt_check_int_equal(giong_call_soon(s, spawn_from_soon, sp), 0);
		return;
	}
	gt_check_int_equal(giong_spawn(arm_then_sleep, ctx, NULL), 0);
}

static void spawner_main(unsigned w, void *arg)
{
	struct spawner *sp = arg;

	(void)w;
	/* The only thing left when this returns: it must still run. */
	gt_check_int_equal(giong_call_soon(&sp->s, spawn_from_soon, sp), 0);
}

static void test_callbacks_spawn_tasks(void **state)
{
	struct giong_config c = gt_config(1);
	struct spawner sp;

	(void)state;
	memset(&sp, 0, sizeof(sp));
	gt_run(&c, spawner_main, &sp, NULL);
	assert_int_equal(sp.soon_runs, 2);
	assert_int_equal(giong_soon_queued(&sp.s), 0);
	assert_int_equal(sp.soon_task, 1);
	assert_int_equal(sp.timer_task, 1);
}

/* ---------------------------------------------------------- timers */

#define NORD 64

struct tord {
	struct giong_timer t[NORD];
	uint64_t when[NORD];
	int log[NORD], n, early;
	struct giong_waitq done;
	bool finished;
};

static void log_timer(struct giong_timer *t, void *ctx)
{
	struct tord *o = ctx;
	int i = (int)(t - o->t);

	gt_check_int_equal(giong_task_current() == NULL, 1);
	gt_check_int_equal(giong_timer_armed(t), 0);
	gt_check_int_equal(giong_timer_stop(t), 0); /* stopping itself: already idle */
	if (giong_now_ms() < o->when[i] || mono_ms() < o->when[i])
		o->early++;
	o->log[o->n++] = i;
	if (o->n == NORD - 8) {
		o->finished = true;
		giong_waitq_wake_all(&o->done, 0);
	}
}

static void tord_main(unsigned w, void *arg)
{
	struct tord *o = arg;
	uint64_t now = giong_now_ms();

	(void)w;
	giong_waitq_init(&o->done);
	/* Times from now + 1 to now + 41 ms, many shared, started out of
	 * order. */
	for (int i = 0; i < NORD; i++) {
		o->when[i] = now + 1 + (uint64_t)((i * 37) % 41);
		gt_check_int_equal(giong_timer_start(&o->t[i], o->when[i], log_timer, o), 0);
	}
	/* Eight stopped before their time: never called. */
	for (int i = 0; i < 8; i++)
		gt_check_int_equal(giong_timer_stop(&o->t[i * 8 + 3]), 1);
	/* Nothing but the timers can end this wait: the loop must wake for
	 * them (the wait takes the wheel's next time). */
	while (!o->finished)
		gt_check_int_equal(giong_waitq_wait(&o->done, 0), 0);
}

static void test_timer_order_never_early(void **state)
{
	struct giong_config c = gt_config(1);
	struct tord o;

	(void)state;
	memset(&o, 0, sizeof(o));
	gt_run(&c, tord_main, &o, NULL);
	assert_int_equal(o.n, NORD - 8);
	assert_int_equal(o.early, 0);
	for (int k = 0; k < o.n; k++) {
		assert_int_not_equal(o.log[k] % 8, 3); /* the stopped ones */
		if (k == 0)
			continue;
		/* By time; equal times in the order they were started. */
		assert_true(o.when[o.log[k - 1]] < o.when[o.log[k]] ||
			    (o.when[o.log[k - 1]] == o.when[o.log[k]] && o.log[k - 1] < o.log[k]));
	}
}

/* Far times saturate, never wrap into the past: timers started UINT64_MAX,
 * UINT64_MAX - 1 and 2^62 ms from now stay armed and can be stopped. */
struct far {
	struct giong_timer t[3];
	int ran;
};

static void far_fired(struct giong_timer *t, void *ctx)
{
	(void)t;
	((struct far *)ctx)->ran++;
}

static void far_main(unsigned w, void *arg)
{
	static const uint64_t in[3] = {UINT64_MAX, UINT64_MAX - 1, (uint64_t)1 << 62};
	struct far *f = arg;

	(void)w;
	for (int i = 0; i < 3; i++)
		gt_check_int_equal(giong_timer_start_in(&f->t[i], in[i], far_fired, f), 0);
	gt_check_int_equal(giong_sleep_ms(50), 0);
	for (int i = 0; i < 3; i++) {
		gt_check_int_equal(giong_timer_armed(&f->t[i]), 1);
		gt_check_int_equal(giong_timer_stop(&f->t[i]), 1);
	}
}

static void test_timer_far_future(void **state)
{
	struct giong_config c = gt_config(1);
	struct far f;

	(void)state;
	memset(&f, 0, sizeof(f));
	gt_run(&c, far_main, &f, NULL);
	assert_int_equal(f.ran, 0);
}

/* Re-armed from its callback (a periodic timer); a timer that stops
 * another due at the same time; one started again (moved) while armed. */
struct periodic {
	struct giong_timer tick, killer, victim, moved;
	int ticks, victim_ran, moved_ran;
	uint64_t moved_at, moved_when;
	struct giong_waitq done;
	bool finished;
};

static void on_tick(struct giong_timer *t, void *ctx)
{
	struct periodic *p = ctx;

	if (++p->ticks < 10) {
		gt_check_int_equal(giong_timer_start_in(t, 2, on_tick, p), 0);
		return;
	}
	p->finished = true;
	giong_waitq_wake_all(&p->done, 0);
}

static void on_victim(struct giong_timer *t, void *ctx)
{
	(void)t;
	((struct periodic *)ctx)->victim_ran++;
}

static void on_killer(struct giong_timer *t, void *ctx)
{
	struct periodic *p = ctx;

	(void)t;
	gt_check_int_equal(giong_timer_stop(&p->victim), 1);
}

static void on_moved(struct giong_timer *t, void *ctx)
{
	struct periodic *p = ctx;

	(void)t;
	p->moved_ran++;
	p->moved_at = giong_now_ms();
}

static void periodic_main(unsigned w, void *arg)
{
	struct periodic *p = arg;
	uint64_t when = giong_now_ms() + 5;

	(void)w;
	giong_waitq_init(&p->done);
	gt_check_int_equal(giong_timer_start_in(&p->tick, 1, on_tick, p), 0);
	/* Same time: started first, so it fires first. */
	gt_check_int_equal(giong_timer_start(&p->killer, when, on_killer, p), 0);
	gt_check_int_equal(giong_timer_start(&p->victim, when, on_victim, p), 0);
	gt_check_int_equal(giong_timer_start_in(&p->moved, 1, on_victim, p), 0);
	p->moved_when = giong_now_ms() + 15;
	gt_check_int_equal(giong_timer_start(&p->moved, p->moved_when, on_moved, p), 0);
	while (!p->finished)
		gt_check_int_equal(giong_waitq_wait(&p->done, 0), 0);
	gt_check_int_equal(giong_sleep_until(p->moved_when + 2), 0);
}

static void test_timer_rearm_and_stop_inside(void **state)
{
	struct giong_config c = gt_config(1);
	struct periodic p;

	(void)state;
	memset(&p, 0, sizeof(p));
	gt_run(&c, periodic_main, &p, NULL);
	assert_int_equal(p.ticks, 10);
	assert_int_equal(p.victim_ran, 0);
	assert_int_equal(p.moved_ran, 1);
	assert_true(p.moved_at >= p.moved_when);
}

/* Many timers across the wheel's levels; half stopped. */
#define NMANY 20000

struct many {
	struct giong_timer *t;
	int fired, early, bad_ctx;
	uint64_t *when;
};

static void many_fire(struct giong_timer *t, void *ctx)
{
	struct many *m = ctx;
	size_t i = (size_t)(t - m->t);

	if (i >= NMANY)
		m->bad_ctx++;
	else if (giong_now_ms() < m->when[i])
		m->early++;
	m->fired++;
}

static void many_main(unsigned w, void *arg)
{
	struct many *m = arg;
	uint64_t now = giong_now_ms(), last = 0;
	struct giong_stats st;

	(void)w;
	for (int i = 0; i < NMANY; i++) {
		/* 0 .. 150 ms, and a few beyond the first level's 64 ms. */
		m->when[i] = now + (uint64_t)(((unsigned)i * 2654435761u) % 151);
		if (m->when[i] > last)
			last = m->when[i];
		gt_check_int_equal(giong_timer_start(&m->t[i], m->when[i], many_fire, m), 0);
	}
	for (int i = 0; i < NMANY; i += 2)
		gt_check_int_equal(giong_timer_stop(&m->t[i]), 1);
	gt_check_int_equal(giong_stats(&st), 0);
	gt_check_int_equal(st.timers_armed, NMANY / 2);
	gt_check_int_equal(giong_sleep_until(last + 1), 0);
	gt_check_int_equal(giong_stats(&st), 0);
	gt_check_int_equal(st.timers_armed, 0);
}

static void test_many_timers(void **state)
{
	struct giong_config c = gt_config(1);
	struct many m;

	(void)state;
	memset(&m, 0, sizeof(m));
	m.t = calloc(NMANY, sizeof(*m.t));
	m.when = calloc(NMANY, sizeof(*m.when));
	assert_non_null(m.t);
	assert_non_null(m.when);
	gt_run(&c, many_main, &m, NULL);
	assert_int_equal(m.fired, NMANY / 2);
	assert_int_equal(m.early, 0);
	assert_int_equal(m.bad_ctx, 0);
	free(m.t);
	free(m.when);
}

/* A callback queued by a timer's callback, then by itself (after the
 * turn's queue ran): the loop must not sleep with it queued. Nothing else
 * would wake the task. */
struct chain {
	struct giong_timer t;
	struct giong_soon s;
	struct giong_waitq q;
	int runs;
	bool woken;
};

static void chain_soon(struct giong_soon *s, void *ctx)
{
	struct chain *ch = ctx;

	/* Queued from its own callback, after the turn's queue ran: the
	 * loop must go round without sleeping, no task being ready. */
	if (++ch->runs < 4) {
		gt_check_int_equal(giong_call_soon(s, chain_soon, ch), 0);
		return;
	}
	ch->woken = true;
	giong_waitq_wake_all(&ch->q, 0);
}

static void chain_timer(struct giong_timer *t, void *ctx)
{
	struct chain *ch = ctx;

	(void)t;
	gt_check_int_equal(giong_call_soon(&ch->s, chain_soon, ch), 0);
}

static void chain_main(unsigned w, void *arg)
{
	struct chain *ch = arg;

	(void)w;
	giong_waitq_init(&ch->q);
	gt_check_int_equal(giong_timer_start_in(&ch->t, 3, chain_timer, ch), 0);
	/* A loop asleep with the callback queued would wake only for this
	 * deadline: -ETIMEDOUT then fails the test instead of hanging it. */
	giong_deadline_in(5000);
	while (!ch->woken)
		if (!gt_check_int_equal(giong_waitq_wait(&ch->q, 0), 0))
			break;
}

static void test_no_sleep_with_callback_queued(void **state)
{
	struct giong_config c = gt_config(1);
	struct chain ch;
	uint64_t t0 = mono_ms();

	(void)state;
	memset(&ch, 0, sizeof(ch));
	gt_run(&c, chain_main, &ch, NULL);
	assert_true(ch.woken);
	assert_int_equal(ch.runs, 4);
	assert_true(mono_ms() - t0 < 5000);
}

/* ------------------------------------------- the loop's end, and misuse */

struct ending {
	struct giong_timer far, in_hook;
	struct giong_soon s;
	int far_ran, hook_start, hook_soon, hook_stop, hook_armed;
};

static void never(struct giong_timer *t, void *ctx)
{
	(void)t;
	((struct ending *)ctx)->far_ran++;
}

static void never_soon(struct giong_soon *s, void *ctx)
{
	(void)s;
	(void)ctx;
}

static void ending_hook(void *ctx)
{
	struct ending *e = ctx;

	/* The loop has ended: the far timer was disarmed uncalled, and
	 * nothing new is taken. */
	e->hook_armed = giong_timer_armed(&e->far);
	e->hook_stop = giong_timer_stop(&e->far);
	e->hook_start = giong_timer_start_in(&e->in_hook, 1, never, e);
	e->hook_soon = giong_call_soon(&e->s, never_soon, e);
}

static void ending_main(unsigned w, void *arg)
{
	struct ending *e = arg;

	(void)w;
	gt_check_int_equal(giong_worker_atexit(ending_hook, e), 0);
	/* A timer does not keep the worker: the run ends long before it. */
	gt_check_int_equal(giong_timer_start_in(&e->far, 60000, never, e), 0);
	gt_check_int_equal(giong_timer_start(&e->in_hook, GIONG_NO_DEADLINE, never, e), 0);
}

static void test_loop_end(void **state)
{
	struct giong_config c = gt_config(1);
	struct ending e;
	struct giong_stats st;
	uint64_t t0 = mono_ms();

	(void)state;
	memset(&e, 0, sizeof(e));
	gt_run(&c, ending_main, &e, &st);
	assert_true(mono_ms() - t0 < 10000);
	assert_int_equal(e.far_ran, 0);
	assert_int_equal(e.hook_armed, 0);
	assert_int_equal(e.hook_stop, 0);
	assert_int_equal(e.hook_start, GIONG_ESHUTDOWN);
	assert_int_equal(e.hook_soon, GIONG_ESHUTDOWN);
	assert_int_equal(giong_timer_armed(&e.far), 0);
	assert_int_equal(giong_timer_armed(&e.in_hook), 0);
	assert_int_equal(giong_soon_queued(&e.s), 0);
	assert_int_equal(st.timers_armed, 0);
	/* The runtime returned: every struct is idle, and stop / cancel
	 * still work from here, off any worker. */
	assert_int_equal(giong_timer_stop(&e.far), 0);
	assert_int_equal(giong_timer_stop(&e.in_hook), 0);
	assert_int_equal(giong_soon_cancel(&e.s), 0);
}

static void dummy_soon(struct giong_soon *s, void *ctx)
{
	(void)s;
	(void)ctx;
}

static void dummy_timer(struct giong_timer *t, void *ctx)
{
	(void)t;
	(void)ctx;
}

/* Worker 0 holds a queued soon and an armed timer; worker 1 tries them. */
struct cross {
	struct giong_soon s;
	struct giong_timer t;
	atomic_int stage; /* 1: worker 0 holds both; 2: worker 1 has tried */
	int soon_ret, cancel_ret, start_ret, stop_ret, queued, armed;
};

static void cross_main(unsigned w, void *arg)
{
	struct cross *x = arg;

	if (w == 0) {
		gt_check_int_equal(giong_call_soon(&x->s, dummy_soon, x), 0);
		gt_check_int_equal(giong_timer_start_in(&x->t, 60000, dummy_timer, x), 0);
		atomic_store(&x->stage, 1);
		/* Hold the loop (no yield) so the soon stays queued meanwhile;
		 * bounded. */
		for (int i = 0; i < 10000 && atomic_load(&x->stage) != 2; i++)
			usleep(1000);
		gt_check_int_equal(atomic_load(&x->stage), 2);
		gt_check_int_equal(giong_timer_stop(&x->t), 1);
		return;
	}
	while (atomic_load(&x->stage) != 1)
		giong_sleep_ms(1);
	x->soon_ret = giong_call_soon(&x->s, dummy_soon, x);
	x->cancel_ret = giong_soon_cancel(&x->s);
	x->start_ret = giong_timer_start_in(&x->t, 1, dummy_timer, x);
	x->stop_ret = giong_timer_stop(&x->t);
	x->queued = giong_soon_queued(&x->s);
	x->armed = giong_timer_armed(&x->t);
	atomic_store(&x->stage, 2);
}

static void test_bad_arguments(void **state)
{
	struct giong_config c = gt_config(2);
	struct giong_soon s;
	struct giong_timer t;
	struct cross x;

	(void)state;
	memset(&s, 0, sizeof(s));
	memset(&t, 0, sizeof(t));
	/* Off a worker: nothing new is taken; an idle struct has nothing to
	 * take back, so cancel and stop say 0 (the header's promise). */
	assert_int_equal(giong_call_soon(&s, dummy_soon, NULL), GIONG_ENOTWORKER);
	assert_int_equal(giong_soon_cancel(&s), 0);
	assert_int_equal(giong_timer_start(&t, 1, dummy_timer, NULL), GIONG_ENOTWORKER);
	assert_int_equal(giong_timer_start_in(&t, 1, dummy_timer, NULL), GIONG_ENOTWORKER);
	assert_int_equal(giong_timer_stop(&t), 0);
	/* NULLs, wherever. */
	assert_int_equal(giong_call_soon(NULL, dummy_soon, NULL), -EINVAL);
	assert_int_equal(giong_call_soon(&s, NULL, NULL), -EINVAL);
	assert_int_equal(giong_soon_cancel(NULL), -EINVAL);
	assert_int_equal(giong_soon_queued(NULL), 0);
	assert_int_equal(giong_timer_start(NULL, 1, dummy_timer, NULL), -EINVAL);
	assert_int_equal(giong_timer_start(&t, 1, NULL, NULL), -EINVAL);
	assert_int_equal(giong_timer_start_in(NULL, 1, dummy_timer, NULL), -EINVAL);
	assert_int_equal(giong_timer_start_in(&t, 1, NULL, NULL), -EINVAL);
	assert_int_equal(giong_timer_stop(NULL), -EINVAL);
	assert_int_equal(giong_timer_armed(NULL), 0);
	assert_int_equal(giong_soon_queued(&s), 0);
	assert_int_equal(giong_timer_armed(&t), 0);
	/* Another worker's. */
	memset(&x, 0, sizeof(x));
	gt_run(&c, cross_main, &x, NULL);
	assert_int_equal(x.soon_ret, -EXDEV);
	assert_int_equal(x.cancel_ret, -EXDEV);
	assert_int_equal(x.start_ret, -EXDEV);
	assert_int_equal(x.stop_ret, -EXDEV);
	assert_int_equal(x.queued, 1);
	assert_int_equal(x.armed, 1);
	assert_int_equal(giong_timer_armed(&x.t), 0);
	assert_int_equal(giong_soon_queued(&x.s), 0);
	assert_int_equal(giong_timer_stop(&x.t), 0);
	assert_int_equal(giong_soon_cancel(&x.s), 0);
}

/* Worker 0 queues and cancels a soon over and over, without yielding, while
 * worker 1 tries to cancel it and asks if it is queued: worker 1 reads only
 * the holder, an atomic field (the TSan build reports a race otherwise), and
 * sees either an idle struct (0) or another worker's (-EXDEV), never
 * touching it. */
struct churn {
	struct giong_soon s;
	atomic_int stage; /* 1: worker 0 churns; 2: worker 1 is done */
	int zero, exdev, other, churned;
};

static void churn_main(unsigned w, void *arg)
{
	struct churn *x = arg;

	if (w == 0) {
		atomic_store(&x->stage, 1);
		for (int i = 0; i < 2000000 && atomic_load(&x->stage) != 2; i++) {
			gt_check_int_equal(giong_call_soon(&x->s, dummy_soon, x), 0);
			gt_check_int_equal(giong_soon_cancel(&x->s), 1);
			x->churned++;
		}
		return;
	}
	while (atomic_load(&x->stage) != 1)
		giong_sleep_ms(1);
	for (int i = 0; i < 20000; i++) {
		int r = giong_soon_cancel(&x->s);

		if (r == 0)
			x->zero++;
		else if (r == -EXDEV)
			x->exdev++;
		else
			x->other++;
		(void)giong_soon_queued(&x->s);
	}
	atomic_store(&x->stage, 2);
}

static void test_cross_worker_race(void **state)
{
	struct giong_config c = gt_config(2);
	struct churn x;

	(void)state;
	memset(&x, 0, sizeof(x));
	gt_run(&c, churn_main, &x, NULL);
	assert_int_equal(x.other, 0);
	assert_int_equal(x.zero + x.exdev, 20000);
	assert_true(x.churned > 0);
	assert_int_equal(giong_soon_queued(&x.s), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_soon_order_and_cancel),
		cmocka_unit_test(test_soon_requeue_and_free),
		cmocka_unit_test(test_callbacks_spawn_tasks),
		cmocka_unit_test(test_timer_order_never_early),
		cmocka_unit_test(test_timer_far_future),
		cmocka_unit_test(test_timer_rearm_and_stop_inside),
		cmocka_unit_test(test_many_timers),
		cmocka_unit_test(test_no_sleep_with_callback_queued),
		cmocka_unit_test(test_loop_end),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_cross_worker_race),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
