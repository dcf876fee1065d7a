/* SPDX-License-Identifier: MIT */
/*
 * test_offload.c - giong_offload(): a task's function runs on a helper
 * thread and its result comes back; the worker's other tasks run while it
 * waits; more calls than helpers all complete; a cancel or a deadline takes
 * a queued call off the queue (it never runs) and waits for a running one
 * (its result kept, the cancel still in force); a runtime shutting down
 * waits for it too; bad arguments and calls from outside a task are
 * refused. Every test runs on the default tier, the epoll tier, the coop
 * and basic io_uring tiers where io_uring is usable (each helper's
 * completion must reach the worker's loop on every one), and the default
 * tier again with spin_before_park_us.
 *
 * Nothing here waits for time to pass in order to pass: the slow functions
 * wait for a flag the test sets, bounded at 5 s (a failure, never a hang).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "giong_test.h"

#define BOUND_MS 5000

/* The tiers, and the default one busy-polling before it sleeps (a spinning
 * worker must see the helpers' completions too). */
static const struct {
	enum giong_ring_tier tier;
	uint32_t spin_us;
} tiers[] = {{0, 0}, {GIONG_TIER_EPOLL, 0}, {GIONG_TIER_COOP, 0}, {GIONG_TIER_BASIC, 0}, {0, 200}};

static const char *tier_name(enum giong_ring_tier t)
{
	static const char *names[] = {"default", "defer", "coop", "basic", "epoll"};

	return names[t];
}

/* io_uring can be set up here (forced io_uring tiers never fall back). */
static bool have_uring(void)
{
	static int known = -1;

	if (known < 0) {
		struct giong_config c = gt_config(1);
		struct giong_runtime *rt;

		c.ring_tier = GIONG_TIER_BASIC; /* forced: never the epoll tier */
		known = giong_runtime_new(&c, &rt) == 0;
		if (known)
			giong_runtime_free(rt);
	}
	return known;
}

/* Run @fn(@arg) once per tier (each run from a fresh @arg: @reset). */
static void run_tiers(unsigned workers, giong_main_fn fn, void *arg, void (*reset)(void *arg),
		      void (*check)(void *arg))
{
	for (size_t i = 0; i < sizeof(tiers) / sizeof(tiers[0]); i++) {
		struct giong_config c = gt_config(workers);

		enum giong_ring_tier t = tiers[i].tier;

		if (t != 0 && t != GIONG_TIER_EPOLL && !have_uring()) {
			print_message("tier %s: no io_uring here, not run\n", tier_name(t));
			continue;
		}
		c.ring_tier = t;
		c.spin_before_park_us = tiers[i].spin_us;
		c.shutdown_grace_ms = 50; /* test_shutdown: cancel soon */
		reset(arg);
		gt_run(&c, fn, arg, NULL);
		if (check)
			check(arg);
	}
}

/* Sleep @ms on the calling (helper) thread, through signals. */
static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Wait for *@flag on a helper thread, ignoring every signal and cancel,
 * at most BOUND_MS; true if it came. */
static bool wait_flag(atomic_int *flag)
{
	for (int i = 0; i < BOUND_MS; i++) {
		if (atomic_load(flag))
			return true;
		nap_ms(1);
	}
	return false;
}

/* From a task: park until *@flag, at most BOUND_MS. */
static bool task_wait_flag(atomic_int *flag)
{
	for (int i = 0; i < BOUND_MS && !atomic_load(flag); i++)
		giong_sleep_ms(1);
	return atomic_load(flag);
}

/* ----------------------------------------------- the result comes back */

struct basics {
	pthread_t worker, helper;
	atomic_int ran;
	int outside, in_callback, callback_ran, helper_calls;
	struct giong_soon soon;
};

static intptr_t where_am_i(void *arg)
{
	struct basics *b = arg;

	b->helper = pthread_self();
	/* Not a task: the calls for tasks are refused here. */
	b->helper_calls = giong_sleep_ms(1);
	atomic_fetch_add(&b->ran, 1);
	return 4242;
}

static void from_callback(struct giong_soon *s, void *ctx)
{
	struct basics *b = ctx;

	(void)s;
	b->in_callback = giong_offload(where_am_i, b, NULL);
	b->callback_ran = 1;
}

static void basics_main(unsigned w, void *arg)
{
	struct basics *b = arg;
	intptr_t res = -1;

	(void)w;
	b->worker = pthread_self();
	gt_check_int_equal(giong_offload(where_am_i, b, &res), 0);
	gt_check_int_equal(res, 4242);
	gt_check_int_equal(atomic_load(&b->ran), 1);
	gt_check_false(pthread_equal(b->helper, b->worker));
	gt_check_int_equal(b->helper_calls, GIONG_ENOTWORKER);
	/* The result pointer may be NULL: the function still runs. */
	gt_check_int_equal(giong_offload(where_am_i, b, NULL), 0);
	gt_check_int_equal(atomic_load(&b->ran), 2);
	/* Bad arguments, and the helper's question asked on a worker. */
	res = 7;
	gt_check_int_equal(giong_offload(NULL, b, &res), -EINVAL);
	gt_check_int_equal(res, 7);
	gt_check_int_equal(giong_offload_cancelled(), 0);
	/* A callback cannot park: refused, nothing runs. */
	gt_check_int_equal(giong_call_soon(&b->soon, from_callback, b), 0);
	giong_sleep_ms(1);
	gt_check_int_equal(b->callback_ran, 1);
	gt_check_int_equal(b->in_callback, GIONG_ENOTWORKER);
	gt_check_int_equal(atomic_load(&b->ran), 2);
}

static void basics_reset(void *arg)
{
	memset(arg, 0, sizeof(struct basics));
}

static void test_basics(void **state)
{
	struct basics b;
	intptr_t res = 9;

	(void)state;
	run_tiers(1, basics_main, &b, basics_reset, NULL);
	/* Off any worker. */
	basics_reset(&b);
	assert_int_equal(giong_offload(where_am_i, &b, &res), GIONG_ENOTWORKER);
	assert_int_equal(res, 9);
	assert_int_equal(atomic_load(&b.ran), 0);
	assert_int_equal(giong_offload(NULL, &b, &res), -EINVAL);
	assert_int_equal(giong_offload_cancelled(), 0);
}

/* ------------------------------------- the worker runs on meanwhile */

struct busy {
	int pipe[2];
	atomic_int returned; /* the slow task's giong_offload() returned */
	int ticks, r;
	intptr_t res;
};

/* Blocks its helper in read(2) until the test writes. */
static intptr_t read_pipe(void *arg)
{
	struct busy *b = arg;
	char c;
	ssize_t n;

	do
		n = read(b->pipe[0], &c, 1);
	while (n < 0 && errno == EINTR && !giong_offload_cancelled());
	return n < 0 ? -errno : c;
}

static intptr_t slow_task(void *arg)
{
	struct busy *b = arg;

	b->r = giong_offload(read_pipe, b, &b->res);
	atomic_store(&b->returned, 1);
	return 0;
}

static void busy_main(unsigned w, void *arg)
{
	struct busy *b = arg;
	struct giong_task *t;

	(void)w;
	if (!gt_check_int_equal(giong_spawn(slow_task, b, &t), 0))
		return;
	/* Twenty turns of this task's own while the other waits in read(2). */
	for (int i = 0; i < 20; i++) {
		gt_check_int_equal(giong_sleep_ms(1), 0);
		b->ticks++;
	}
	gt_check_int_equal(atomic_load(&b->returned), 0);
	gt_check_int_equal(write(b->pipe[1], "x", 1), 1);
	gt_check_int_equal(giong_join(t, NULL), 0);
	gt_check_int_equal(b->r, 0);
	gt_check_int_equal(b->res, 'x');
	gt_check_int_equal(b->ticks, 20);
}

static void busy_reset(void *arg)
{
	struct busy *b = arg;

	b->ticks = b->r = 0;
	b->res = 0;
	atomic_store(&b->returned, 0);
}

static void test_worker_not_blocked(void **state)
{
	struct busy b;

	(void)state;
	memset(&b, 0, sizeof(b));
	assert_int_equal(pipe2(b.pipe, O_CLOEXEC), 0);
	run_tiers(1, busy_main, &b, busy_reset, NULL);
	close(b.pipe[0]);
	close(b.pipe[1]);
}

/* ------------------------------ more calls than helpers: none lost */

#define MANY 24 /* per worker */
#define CAP 2

struct many {
	atomic_int running, most, ran;
	int results[2][MANY];
	int codes[2][MANY];
};

struct many_arg {
	struct many *m;
	int worker, i;
};

static struct many_arg many_args[2][MANY];

static intptr_t count_in(void *arg)
{
	struct many_arg *a = arg;
	struct many *m = a->m;
	int now = atomic_fetch_add(&m->running, 1) + 1, most = atomic_load(&m->most);

	while (now > most && !atomic_compare_exchange_weak(&m->most, &most, now))
		;
	nap_ms(1); /* long enough for the queue to fill behind it */
	atomic_fetch_sub(&m->running, 1);
	atomic_fetch_add(&m->ran, 1);
	return a->worker * 1000 + a->i;
}

static intptr_t many_task(void *arg)
{
	struct many_arg *a = arg;
	intptr_t res = -1;

	a->m->codes[a->worker][a->i] = giong_offload(count_in, a, &res);
	a->m->results[a->worker][a->i] = (int)res;
	return 0;
}

static void many_main(unsigned w, void *arg)
{
	struct many *m = arg;
	struct giong_task *t[MANY] = {0}; /* a spawn that failed: joined as NULL, refused */

	for (int i = 0; i < MANY; i++) {
		many_args[w][i] = (struct many_arg){m, (int)w, i};
		gt_check_int_equal(giong_spawn(many_task, &many_args[w][i], &t[i]), 0);
	}
	for (int i = 0; i < MANY; i++)
		gt_check_int_equal(giong_join(t[i], NULL), 0);
	for (int i = 0; i < MANY; i++) {
		gt_check_int_equal(m->codes[w][i], 0);
		gt_check_int_equal(m->results[w][i], (int)w * 1000 + i);
	}
}

static void many_reset(void *arg)
{
	memset(arg, 0, sizeof(struct many));
}

static void many_check(void *arg)
{
	struct many *m = arg;

	assert_int_equal(atomic_load(&m->ran), 2 * MANY);
	assert_in_range(atomic_load(&m->most), 1, CAP);
}

static void test_more_than_cap(void **state)
{
	struct many m;

	(void)state;
	setenv("GIONG_BLOCKING_THREADS", "2", 1); /* CAP */
	run_tiers(2, many_main, &m, many_reset, many_check);
	unsetenv("GIONG_BLOCKING_THREADS");
}

/* --------------------------------- a cancel waits for a running call */

struct held {
	atomic_int started, release, fn_returned;
	int saw_cancel;
	/* What the cancelled task saw. */
	int r, returned_after_fn, cancelled_after, next_call;
	intptr_t res;
	atomic_int task_returned;
	/* The interrupted read. */
	int pipe[2];
	int r2;
	intptr_t res2;
};

/* Ignores signals and cancels: returns when the test says so. */
static intptr_t hold(void *arg)
{
	struct held *h = arg;

	atomic_store(&h->started, 1);
	wait_flag(&h->release);
	h->saw_cancel = giong_offload_cancelled();
	atomic_store(&h->fn_returned, 1);
	return 77;
}

static intptr_t held_task(void *arg)
{
	struct held *h = arg;

	h->r = giong_offload(hold, h, &h->res);
	h->returned_after_fn = atomic_load(&h->fn_returned);
	h->cancelled_after = giong_task_cancelled();
	h->next_call = giong_yield();
	atomic_store(&h->task_returned, 1);
	return 0;
}

static intptr_t read_task(void *arg)
{
	struct held *h = arg;

	h->r2 = giong_offload(read_pipe, &(struct busy){.pipe = {h->pipe[0], h->pipe[1]}},
			      &h->res2);
	return 0;
}

/* Lets hold() return 40 ms from now. */
static intptr_t releaser(void *arg)
{
	struct held *h = arg;

	giong_sleep_ms(40);
	atomic_store(&h->release, 1);
	return 0;
}

static void held_main(unsigned w, void *arg)
{
	struct held *h = arg;
	struct giong_task *t;
	uint64_t saved;

	(void)w;
	if (!gt_check_int_equal(giong_spawn(held_task, h, &t), 0))
		return;
	gt_check_true(task_wait_flag(&h->started));
	gt_check_int_equal(giong_task_cancel(t), 0);
	/* Cancelled, but fn runs on: the task stays parked. */
	for (int i = 0; i < 20; i++)
		giong_sleep_ms(1);
	gt_check_int_equal(atomic_load(&h->task_returned), 0);
	atomic_store(&h->release, 1);
	gt_check_int_equal(giong_join(t, NULL), -ECANCELED);
	gt_check_int_equal(h->r, 0);
	gt_check_int_equal(h->res, 77);
	gt_check_int_equal(h->returned_after_fn, 1);
	gt_check_int_equal(h->saw_cancel, 1);
	gt_check_int_equal(h->cancelled_after, 1);
	gt_check_int_equal(h->next_call, -ECANCELED);

	/* A helper waiting in read(2) is interrupted by the cancel (SIGURG,
	 * sent again until the call ends): fn returns what read said. */
	if (!gt_check_int_equal(giong_spawn(read_task, h, &t), 0))
		return;
	giong_sleep_ms(5);
	gt_check_int_equal(giong_task_cancel(t), 0);
	gt_check_int_equal(giong_join(t, NULL), -ECANCELED);
	gt_check_int_equal(h->r2, 0);
	gt_check_int_equal(h->res2, -EINTR);

	/* A deadline that passes while fn runs: the same, with -ETIMEDOUT
	 * for the next call (the deadline's timer resends the signal). */
	atomic_store(&h->started, 0);
	atomic_store(&h->release, 0);
	atomic_store(&h->fn_returned, 0);
	h->saw_cancel = 0;
	if (!gt_check_int_equal(giong_spawn(releaser, h, NULL), 0))
		return;
	saved = giong_deadline_in(10);
	h->r = giong_offload(hold, h, &h->res);
	h->returned_after_fn = atomic_load(&h->fn_returned);
	h->next_call = giong_sleep_ms(1);
	giong_deadline_restore(saved);
	gt_check_int_equal(h->r, 0);
	gt_check_int_equal(h->res, 77);
	gt_check_int_equal(h->returned_after_fn, 1);
	gt_check_int_equal(h->saw_cancel, 1);
	gt_check_int_equal(h->next_call, -ETIMEDOUT);
}

static void held_reset(void *arg)
{
	struct held *h = arg;
	int p0 = h->pipe[0], p1 = h->pipe[1];

	memset(h, 0, sizeof(*h));
	h->pipe[0] = p0;
	h->pipe[1] = p1;
}

static void test_cancel_running(void **state)
{
	struct held h;

	(void)state;
	memset(&h, 0, sizeof(h));
	assert_int_equal(pipe2(h.pipe, O_CLOEXEC), 0);
	run_tiers(1, held_main, &h, held_reset, NULL);
	close(h.pipe[0]);
	close(h.pipe[1]);
}

/* ---------------------- a cancel or deadline takes a queued call off */

struct queued {
	struct held h; /* the one helper's holder */
	atomic_int never_ran;
	int timed, cancelled, pre_cancelled;
};

static intptr_t must_not_run(void *arg)
{
	atomic_fetch_add(&((struct queued *)arg)->never_ran, 1);
	return 0;
}

static intptr_t hold_task(void *arg)
{
	struct held *h = arg;

	h->r = giong_offload(hold, h, &h->res);
	return 0;
}

static intptr_t queued_cancel_task(void *arg)
{
	struct queued *q = arg;

	q->cancelled = giong_offload(must_not_run, q, NULL);
	return 0;
}

static intptr_t pre_cancelled_task(void *arg)
{
	struct queued *q = arg;

	giong_task_cancel(giong_task_current());
	q->pre_cancelled = giong_offload(must_not_run, q, NULL);
	return 0;
}

static void queued_main(unsigned w, void *arg)
{
	struct queued *q = arg;
	struct giong_task *holder, *t;
	uint64_t saved;

	(void)w;
	if (!gt_check_int_equal(giong_spawn(hold_task, &q->h, &holder), 0))
		return;
	gt_check_true(task_wait_flag(&q->h.started));
	/* The one helper is held: this call queues, and its deadline passes. */
	saved = giong_deadline_in(20);
	q->timed = giong_offload(must_not_run, q, NULL);
	giong_deadline_restore(saved);
	gt_check_int_equal(q->timed, -ETIMEDOUT);
	/* Cancelled while queued. */
	if (gt_check_int_equal(giong_spawn(queued_cancel_task, q, &t), 0)) {
		giong_sleep_ms(2);
		gt_check_int_equal(giong_task_cancel(t), 0);
		gt_check_int_equal(giong_join(t, NULL), -ECANCELED);
		gt_check_int_equal(q->cancelled, -ECANCELED);
	}
	/* Cancelled before the call: refused at once. */
	if (gt_check_int_equal(giong_spawn(pre_cancelled_task, q, &t), 0)) {
		gt_check_int_equal(giong_join(t, NULL), -ECANCELED);
		gt_check_int_equal(q->pre_cancelled, -ECANCELED);
	}
	atomic_store(&q->h.release, 1);
	gt_check_int_equal(giong_join(holder, NULL), 0);
	gt_check_int_equal(q->h.r, 0);
	gt_check_int_equal(q->h.res, 77);
	/* The helper is free again, and the queue did not keep the others. */
	giong_sleep_ms(5);
	gt_check_int_equal(atomic_load(&q->never_ran), 0);
}

static void queued_reset(void *arg)
{
	memset(arg, 0, sizeof(struct queued));
}

static void test_cancel_queued(void **state)
{
	struct queued q;

	(void)state;
	setenv("GIONG_BLOCKING_THREADS", "1", 1);
	run_tiers(1, queued_main, &q, queued_reset, NULL);
	unsetenv("GIONG_BLOCKING_THREADS");
}

/* ------------------------ shutdown waits for a call, then cancels it */

struct ending {
	atomic_int started, fn_returned, task_returned;
	int r;
	intptr_t res;
};

/* Returns once asked to stop (the runtime's grace is over). */
static intptr_t until_cancelled(void *arg)
{
	struct ending *e = arg;
	int i;

	atomic_store(&e->started, 1);
	for (i = 0; i < BOUND_MS && !giong_offload_cancelled(); i++)
		nap_ms(1);
	atomic_store(&e->fn_returned, 1);
	return i < BOUND_MS ? 1 : 0;
}

static intptr_t ending_task(void *arg)
{
	struct ending *e = arg;

	e->r = giong_offload(until_cancelled, e, &e->res);
	gt_check_int_equal(atomic_load(&e->fn_returned), 1);
	atomic_store(&e->task_returned, 1);
	return 0;
}

static void ending_main(unsigned w, void *arg)
{
	struct ending *e = arg;

	(void)w;
	/* Detached and left behind: the main task returns at once. */
	gt_check_int_equal(giong_spawn(ending_task, e, NULL), 0);
	gt_check_true(task_wait_flag(&e->started));
}

static void ending_reset(void *arg)
{
	memset(arg, 0, sizeof(struct ending));
}

static void ending_check(void *arg)
{
	struct ending *e = arg;

	assert_int_equal(atomic_load(&e->task_returned), 1);
	assert_int_equal(e->r, 0);
	assert_int_equal(e->res, 1); /* it saw the cancel, not the bound */
}

static void test_shutdown(void **state)
{
	struct ending e;

	(void)state;
	run_tiers(1, ending_main, &e, ending_reset, ending_check);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basics),        cmocka_unit_test(test_worker_not_blocked),
		cmocka_unit_test(test_more_than_cap), cmocka_unit_test(test_cancel_running),
		cmocka_unit_test(test_cancel_queued), cmocka_unit_test(test_shutdown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
