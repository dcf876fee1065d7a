/* SPDX-License-Identifier: MIT */
/* test_chan.c - channels and spawn_on across workers: nothing lost,
 * per-sender order kept, full channels park senders, close wakes all. */
#include <pthread.h>
#include <stdatomic.h>

#include "giong_test.h"

#define WORKERS 3
#define PER_SENDER 15000 /* 2 senders: 30,000 messages */

struct xw {
	struct giong_chan *ch;
	_Atomic int ready;
	long received;
	long sum;
	int order_ok;
	_Atomic int send_err;
	_Atomic int eperm;
	_Atomic int spawned_on[WORKERS];
};

static intptr_t on_worker(void *arg)
{
	struct xw *x = arg;

	atomic_fetch_add(&x->spawned_on[giong_worker_index()], 1);
	return 0;
}

static void xw_main(unsigned w, void *arg)
{
	struct xw *x = arg;

	if (w == 0) {
		long last[WORKERS] = {0};
		void *m;

		if (!gt_check_int_equal(giong_chan_new(8, &x->ch), 0)) { /* small: senders park */
			atomic_store(&x->ready, 1); /* the senders fail on no channel */
			return;
		}
		atomic_store(&x->ready, 1);
		x->order_ok = 1;
		while (x->received < 2L * PER_SENDER) {
			int ret = giong_chan_recv(x->ch, &m);

			if (ret) {
				x->send_err = ret;
				break;
			}
			uintptr_t v = (uintptr_t)m;
			unsigned from = (unsigned)(v >> 24);
			long seq = (long)(v & 0xffffff);

			if (from >= WORKERS || seq != last[from] + 1)
				x->order_ok = 0;
			else
				last[from] = seq;
			x->sum += seq;
			x->received++;
		}
		for (unsigned i = 0; i < WORKERS; i++)
			giong_spawn_on(i, on_worker, x);
		return;
	}
	while (!atomic_load(&x->ready))
		giong_sleep_ms(1);
	x->eperm = giong_chan_try_recv(x->ch, &(void *){0});
	for (long i = 1; i <= PER_SENDER; i++) {
		int ret = giong_chan_send(x->ch, (void *)(((uintptr_t)w << 24) | (uintptr_t)i));

		if (ret) {
			x->send_err = ret;
			return;
		}
	}
}

static void test_30000_messages_between_workers(void **state)
{
	struct giong_config c = gt_config(WORKERS);
	struct xw *x = calloc(1, sizeof(*x));
	struct giong_runtime *rt;

	(void)state;
	int run;

	assert_int_equal(giong_runtime_new(&c, &rt), 0);
	run = giong_runtime_run(rt, xw_main, x);
	giong_runtime_free(rt);
	gt_checks_assert();
	assert_int_equal(run, 0);
	assert_int_equal(x->send_err, 0);
	assert_int_equal(x->received, 2L * PER_SENDER);
	assert_int_equal(x->sum, 2L * PER_SENDER * (PER_SENDER + 1) / 2);
	assert_true(x->order_ok);
	assert_int_equal(x->eperm, -EPERM);
	/* Workers whose main returned stay up while tasks remain anywhere, so
	 * spawn_on reaches every one of them. */
	for (unsigned i = 0; i < WORKERS; i++)
		assert_int_equal(atomic_load(&x->spawned_on[i]), 1);
	giong_chan_free(x->ch);
	free(x);
}

/* ------------------------------------------------- close and try_send */

struct cl {
	int try_full, recv_after_close, recv_empty_closed, send_closed, sender_woken;
	int try_thread;
	struct giong_chan *ch;
};

static intptr_t blocked_sender(void *arg)
{
	struct cl *c = arg;

	c->sender_woken = giong_chan_send(c->ch, (void *)3);
	return 0;
}

static void *thread_try_send(void *arg)
{
	struct cl *c = arg;

	c->try_thread = giong_chan_try_send(c->ch, (void *)9);
	return NULL;
}

static void close_main(unsigned w, void *arg)
{
	struct cl *c = arg;
	void *m;
	pthread_t th;

	(void)w;
	if (!gt_check_int_equal(giong_chan_new(2, &c->ch), 0))
		return;
	gt_check_int_equal(giong_chan_try_send(c->ch, (void *)1), 0);
	/* From a plain thread: any thread may try_send. */
	pthread_create(&th, NULL, thread_try_send, c);
	pthread_join(th, NULL);
	c->try_full = giong_chan_try_send(c->ch, (void *)2);
	giong_spawn(blocked_sender, c, NULL);
	giong_yield(); /* parks: full */
	giong_chan_close(c->ch);
	giong_yield();
	c->recv_after_close = giong_chan_recv(c->ch, &m) == 0 && m == (void *)1;
	gt_check_int_equal(giong_chan_recv(c->ch, &m), 0);
	gt_check_ptr_equal(m, (void *)9);
	c->recv_empty_closed = giong_chan_recv(c->ch, &m);
	c->send_closed = giong_chan_send(c->ch, (void *)4);
	giong_chan_free(c->ch);
}

static void test_close_and_try_send(void **state)
{
	struct giong_config cfg = gt_config(1);
	struct cl c = {0};

	(void)state;
	gt_run(&cfg, close_main, &c, NULL);
	assert_int_equal(c.try_thread, 0);
	assert_int_equal(c.try_full, -EAGAIN);
	assert_int_equal(c.sender_woken, -EPIPE);
	assert_true(c.recv_after_close);
	assert_int_equal(c.recv_empty_closed, -EPIPE);
	assert_int_equal(c.send_closed, -EPIPE);
	assert_int_equal(giong_chan_new(0, &c.ch), -EINVAL);
	assert_int_equal(giong_chan_send(NULL, NULL), -EINVAL);
	assert_int_equal(giong_chan_try_send(NULL, NULL), -EINVAL);
}

/* ----------------------------------- a parked receiver times out cleanly */

static void timeout_main(unsigned w, void *arg)
{
	int *ret = arg;
	struct giong_chan *ch;
	uint64_t saved;
	void *m;

	(void)w;
	giong_chan_new(1, &ch);
	saved = giong_deadline_in(10);
	*ret = giong_chan_recv(ch, &m);
	giong_deadline_restore(saved);
	giong_chan_free(ch);
}

static void test_recv_timeout(void **state)
{
	struct giong_config c = gt_config(1);
	int ret = 0;

	(void)state;
	gt_run(&c, timeout_main, &ret, NULL);
	assert_int_equal(ret, -ETIMEDOUT);
}

/* ------------- try_recv, the receiving worker's own, and every refusal */

struct own {
	struct giong_chan *_Atomic ch;
	_Atomic int done;
	int try_order_ok, try_empty, try_closed_left, try_closed_empty;
	int other_try_recv, other_recv, other_try_send;
	int nulls_ok, new_refused_ok;
};

static void own_main(unsigned w, void *arg)
{
	struct own *o = arg;
	struct giong_chan *ch = NULL;
	void *m = NULL, *a = NULL, *b = NULL;

	if (w == 1) {
		/* Another worker: may send, may not receive. */
		while (!(ch = atomic_load(&o->ch)))
			giong_sleep_ms(1);
		o->other_try_recv = giong_chan_try_recv(ch, &m);
		o->other_recv = giong_chan_recv(ch, &m);
		o->other_try_send = giong_chan_try_send(ch, (void *)3);
		atomic_store(&o->done, 1);
		return;
	}
	o->new_refused_ok = giong_chan_new(0, &ch) == -EINVAL &&
			    giong_chan_new(2, NULL) == -EINVAL &&
			    giong_chan_new((1u << 30) + 1, &ch) == -EINVAL;
	if (!gt_check_int_equal(giong_chan_new(2, &ch), 0))
		return;
	giong_chan_try_send(ch, (void *)1);
	giong_chan_try_send(ch, (void *)2);
	o->try_order_ok = giong_chan_try_recv(ch, &a) == 0 && giong_chan_try_recv(ch, &b) == 0 &&
			  a == (void *)1 && b == (void *)2;
	o->try_empty = giong_chan_try_recv(ch, &m);
	atomic_store(&o->ch, ch);
	while (!atomic_load(&o->done))
		giong_sleep_ms(1);
	giong_chan_close(ch);
	o->try_closed_left = giong_chan_try_recv(ch, &m) == 0 && m == (void *)3;
	o->try_closed_empty = giong_chan_try_recv(ch, &m);
	o->nulls_ok = giong_chan_try_recv(NULL, &m) == -EINVAL &&
		      giong_chan_try_recv(ch, NULL) == -EINVAL &&
		      giong_chan_recv(NULL, &m) == -EINVAL &&
		      giong_chan_recv(ch, NULL) == -EINVAL && giong_chan_close(NULL) == -EINVAL &&
		      giong_chan_close(ch) == 0;
	giong_chan_free(ch);
	giong_chan_free(NULL);
}

static void test_own_worker_and_refusals(void **state)
{
	struct giong_config cfg = gt_config(2);
	struct giong_chan *ch = (struct giong_chan *)1;
	struct own o;

	(void)state;
	memset(&o, 0, sizeof(o));
	assert_int_equal(giong_chan_new(2, &ch), GIONG_ENOTWORKER); /* no worker to receive */
	gt_run(&cfg, own_main, &o, NULL);
	assert_true(o.new_refused_ok);
	assert_true(o.try_order_ok);
	assert_int_equal(o.try_empty, -EAGAIN);
	assert_int_equal(o.other_try_recv, -EPERM);
	assert_int_equal(o.other_recv, -EPERM);
	assert_int_equal(o.other_try_send, 0);
	assert_true(o.try_closed_left); /* queued before the close: still received */
	assert_int_equal(o.try_closed_empty, -EPIPE);
	assert_true(o.nulls_ok); /* and a second close is 0: idempotent */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_30000_messages_between_workers),
		cmocka_unit_test(test_close_and_try_send),
		cmocka_unit_test(test_recv_timeout),
		cmocka_unit_test(test_own_worker_and_refusals),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
