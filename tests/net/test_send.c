/* SPDX-License-Identifier: MIT */
/*
 * test_send.c - giong_stream_send_start(): a send no task waits for.
 *  - one buffer and several arrive whole and in order; done reports the
 *    whole count once, outside any task;
 *  - a second send while one is in flight is -EBUSY; a task's write waits
 *    for the send and its bytes come after the send's;
 *  - a send of 8 MiB to a peer that does not read, then a close: done is
 *    called (cancelled, or a short count), nothing leaks, the descriptor goes;
 *  - done may close the stream; bad arguments are -EINVAL, never a crash.
 * Results are recorded inside tasks and asserted after the runtime returns.
 */
#include <limits.h>

#include "net_test.h"

struct sent {
	struct giong_stream_send req;
	int calls;
	ssize_t res;
	bool in_task; /* done was called from inside a task (it must not be) */
	bool close_in_done;
	struct giong_stream *s;
	struct giong_waitq wq;
};

static void on_sent(struct giong_stream_send *req, ssize_t res)
{
	struct sent *x = req->data;

	x->calls++;
	x->res = res;
	x->in_task = giong_task_current() != NULL;
	if (x->close_in_done)
		gt_check_int_equal(giong_stream_close(x->s), 0);
	giong_waitq_wake_all(&x->wq, 0);
}

static void sent_init(struct sent *x, struct giong_stream *s)
{
	memset(x, 0, sizeof(*x));
	x->req.done = on_sent;
	x->req.data = x;
	x->s = s;
	giong_waitq_init(&x->wq);
}

static void sent_wait(struct sent *x)
{
	while (!x->calls)
		if (giong_waitq_wait(&x->wq, 0) < 0)
			break;
}

/* ------------------------------------------------ (a) order and counts */

#define BIG (3 * 65536 + 17)

static void order_main(unsigned w, void *arg)
{
	struct giong_stream *c, *s;
	struct sent a, b;
	char *buf = malloc(BIG), *in = malloc(BIG + 64);
	struct iovec one, three[3];
	(void)w;
	(void)arg;

	if (!gt_check_non_null(buf) || !gt_check_non_null(in) ||
	    !gt_check_int_equal(nt_tcp_pair(&c, &s), 0))
		goto out;
	nt_fill(1, 0, buf, BIG);

	/* One buffer, then a second send at once: -EBUSY while it is in flight. */
	sent_init(&a, s);
	one = (struct iovec){buf, 1000};
	gt_check_int_equal(giong_stream_send_start(s, &a.req, &one, 1), 0);
	sent_init(&b, s);
	gt_check_int_equal(giong_stream_send_start(s, &b.req, &one, 1), -EBUSY);
	gt_check_int_equal(a.calls, 0); /* not before the tick ends */
	sent_wait(&a);
	gt_check_int_equal(a.calls, 1);
	gt_check_int_equal(a.res, 1000);
	gt_check_false(a.in_task);
	gt_check_int_equal(b.calls, 0);

	/* Three buffers in one send, then a task's write that must wait for it. */
	sent_init(&a, s);
	three[0] = (struct iovec){buf + 1000, 10};
	three[1] = (struct iovec){buf + 1010, 0};
	three[2] = (struct iovec){buf + 1010, BIG - 1010 - 5};
	gt_check_int_equal(giong_stream_send_start(s, &a.req, three, 3), 0);
	gt_check_int_equal(giong_stream_write_all(s, buf + BIG - 5, 5), 5);
	gt_check_int_equal(a.calls, 1); /* the write waited for the send */
	gt_check_int_equal(a.res, BIG - 1000 - 5);
	gt_check_int_equal(nt_stream_read_exact(c, in, BIG), BIG);
	gt_check_int_equal(nt_check(1, 0, in, BIG), -1);

	/* done may close the stream it reports on. */
	sent_init(&a, s);
	a.close_in_done = true;
	gt_check_int_equal(giong_stream_send_start(s, &a.req, &one, 1), 0);
	sent_wait(&a);
	gt_check_int_equal(a.res, 1000);
	gt_check_int_equal(nt_stream_read_exact(c, in, 1000), 1000);
	gt_check_int_equal(giong_stream_read(c, in, 1), 0); /* and it is gone */
	giong_stream_close(c);
out:
	free(buf);
	free(in);
}

static void test_order_and_counts(void **state)
{
	struct giong_config cfg = gt_config(1);
	int fds = gt_count_fds();

	(void)state;
	gt_run(&cfg, order_main, NULL, NULL);
	gt_assert_fds(fds);
}

/* ------------------------------------- (b) close with a send in flight */

#define HUGE (8u << 20)

static void close_main(unsigned w, void *arg)
{
	struct giong_stream *c, *s;
	struct sent a;
	char *buf = calloc(1, HUGE);
	struct iovec one = {buf, HUGE};
	(void)w;
	(void)arg;

	if (!gt_check_non_null(buf) || !gt_check_int_equal(nt_tcp_pair(&c, &s), 0)) {
		free(buf);
		return;
	}
	sent_init(&a, s);
	gt_check_int_equal(giong_stream_send_start(s, &a.req, &one, 1), 0);
	giong_sleep_ms(20); /* the peer reads nothing: the send fills the window */
	gt_check_int_equal(a.calls, 0);
	gt_check_int_equal(giong_stream_close(s), 0);
	/* A send (or a close) on the closed stream is refused at once. */
	sent_wait(&a);
	gt_check_int_equal(a.calls, 1);
	gt_check_true(a.res == -ECANCELED || (a.res >= 0 && a.res < (ssize_t)HUGE));
	free(buf); /* lent until done: free only now */
	giong_stream_close(c);
}

static void test_close_in_flight(void **state)
{
	struct giong_config cfg = gt_config(1);
	int fds = gt_count_fds();

	(void)state;
	gt_run(&cfg, close_main, NULL, NULL);
	gt_assert_fds(fds);
}

/* ---------------------------------------------------- (c) bad arguments */

static const struct giong_stream_ops bare_ops = {.name = "bare"};

static void bad_main(unsigned w, void *arg)
{
	struct giong_stream *c, *s;
	struct giong_stream bare = {.ops = &bare_ops};
	struct sent a;
	char byte = 'x';
	struct iovec one = {&byte, 1}, huge[2] = {{&byte, INT_MAX}, {&byte, 1}};
	(void)w;
	(void)arg;

	if (!gt_check_int_equal(nt_tcp_pair(&c, &s), 0))
		return;
	sent_init(&a, s);
	gt_check_int_equal(giong_stream_send_start(NULL, &a.req, &one, 1), -EINVAL);
	gt_check_int_equal(giong_stream_send_start(s, NULL, &one, 1), -EINVAL);
	gt_check_int_equal(giong_stream_send_start(s, &a.req, NULL, 1), -EINVAL);
	gt_check_int_equal(giong_stream_send_start(s, &a.req, &one, 0), -EINVAL);
	gt_check_int_equal(giong_stream_send_start(s, &a.req, &one, IOV_MAX + 1), -EINVAL);
	gt_check_int_equal(giong_stream_send_start(s, &a.req, huge, 2), -EINVAL);
	a.req.done = NULL;
	gt_check_int_equal(giong_stream_send_start(s, &a.req, &one, 1), -EINVAL);
	sent_init(&a, s);
	gt_check_int_equal(giong_stream_send_start(&bare, &a.req, &one, 1), -ENOTSUP);
	gt_check_int_equal(a.calls, 0);
	giong_stream_close(c);
	giong_stream_close(s);
}

/* Off a worker: refused, nothing touched. */
static void test_bad_arguments(void **state)
{
	struct giong_config cfg = gt_config(1);
	struct sent a;
	char byte = 0;
	struct iovec one = {&byte, 1};

	(void)state;
	gt_run(&cfg, bad_main, NULL, NULL);
	sent_init(&a, NULL);
	assert_int_equal(giong_stream_send_start(NULL, &a.req, &one, 1), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_counts),
		cmocka_unit_test(test_close_in_flight),
		cmocka_unit_test(test_bad_arguments),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
