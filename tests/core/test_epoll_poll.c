/* SPDX-License-Identifier: MIT */
/*
 * test_epoll_poll.c - waits on one descriptor whose io_uring answers the
 * epoll tier must give too, each run on the default tier and on the epoll
 * tier:
 *
 *   - a cancel by descriptor without IORING_ASYNC_CANCEL_ALL takes one of
 *     two operations waiting on a socket (a POLL_ADD and a RECV); the other
 *     still completes when the socket becomes readable;
 *   - POLL_ADD of a mask with none of POLLIN, POLLOUT, POLLPRI, POLLRDHUP
 *     (POLLHUP alone, POLLRDNORM alone) completes: POLLHUP (and POLLRDHUP)
 *     when the peer closes, POLLRDNORM when it writes.
 */
#include <liburing.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "giong_test.h"

#define WAIT_MS 3000 /* every wait's bound: a lost wake fails, never hangs */

struct pair {
	int sv[2];
	int polled, received; /* the two waiters' results */
	char buf[16];
};

/* Each tier in turn, on a fresh socket pair. */
static void run_tiers(giong_main_fn fn)
{
	for (int i = 0; i < 2; i++) {
		struct giong_config c = gt_config(1);
		struct pair p;

		fprintf(stderr, "%s tier\n", i ? "epoll" : "default");
		memset(&p, 0, sizeof(p));
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p.sv), 0);
		if (i)
			c.ring_tier = GIONG_TIER_EPOLL;
		gt_run(&c, fn, &p, NULL);
		close(p.sv[0]);
		if (p.sv[1] >= 0)
			close(p.sv[1]);
	}
}

/* giong_io() of @sqe, bounded by WAIT_MS. */
static int io_bounded(struct io_uring_sqe *sqe)
{
	uint64_t saved = giong_deadline_in(WAIT_MS);
	int r = giong_io(sqe);

	giong_deadline_restore(saved);
	return r;
}

static intptr_t poller(void *arg)
{
	struct pair *p = arg;
	struct io_uring_sqe *sqe = giong_sqe();

	io_uring_prep_poll_add(sqe, p->sv[0], POLLIN);
	p->polled = io_bounded(sqe);
	return 0;
}

static intptr_t receiver(void *arg)
{
	struct pair *p = arg;
	struct io_uring_sqe *sqe = giong_sqe();

	io_uring_prep_recv(sqe, p->sv[0], p->buf, sizeof(p->buf), 0);
	p->received = io_bounded(sqe);
	return 0;
}

/* Which of the two the cancel takes is io_uring's choice (the first it
 * finds); the other must still hear the socket. */
static void cancel_one_main(unsigned w, void *arg)
{
	struct pair *p = arg;
	struct giong_task *a, *b;
	struct io_uring_sqe *sqe;

	(void)w;
	gt_check_int_equal(giong_spawn(poller, p, &a), 0);
	gt_check_int_equal(giong_spawn(receiver, p, &b), 0);
	giong_sleep_ms(10); /* both wait */
	sqe = giong_sqe();
	io_uring_prep_cancel_fd(sqe, p->sv[0], 0);
	gt_check_int_equal(giong_io(sqe), 0);
	gt_check_int_equal(write(p->sv[1], "hello", 5), 5);
	gt_check_int_equal(giong_join(a, NULL), 0);
	gt_check_int_equal(giong_join(b, NULL), 0);
	if (p->polled == -ECANCELED) {
		gt_check_int_equal(p->received, 5);
		gt_check_memory_equal(p->buf, "hello", 5);
	} else {
		gt_check_int_equal(p->received, -ECANCELED);
		gt_check_true(p->polled > 0 && (p->polled & POLLIN));
	}
}

static void test_cancel_by_fd_leaves_the_other(void **state)
{
	(void)state;
	run_tiers(cancel_one_main);
}

static intptr_t closer(void *arg)
{
	struct pair *p = arg;

	giong_sleep_ms(10);
	close(p->sv[1]);
	p->sv[1] = -1;
	return 0;
}

static intptr_t writer(void *arg)
{
	struct pair *p = arg;

	giong_sleep_ms(10);
	return write(p->sv[1], "x", 1);
}

static void hup_main(unsigned w, void *arg)
{
	struct pair *p = arg;
	struct giong_task *t;
	intptr_t wrote = 0;

	(void)w;
	/* Readable, asked for POLLRDNORM only: the kernel's poll reports it. */
	gt_check_int_equal(giong_spawn(writer, p, &t), 0);
	gt_check_int_equal(giong_poll(p->sv[0], POLLRDNORM, WAIT_MS), POLLRDNORM);
	gt_check_int_equal(giong_join(t, &wrote), 0);
	gt_check_int_equal(wrote, 1);
	gt_check_int_equal(read(p->sv[0], p->buf, 1), 1);
	/* POLLHUP alone: the peer's close, reported whatever the mask, with
	 * POLLRDHUP, which io_uring also always listens for (IO_POLL_UNMASK). */
	gt_check_int_equal(giong_spawn(closer, p, &t), 0);
	gt_check_int_equal(giong_poll(p->sv[0], POLLHUP, WAIT_MS), POLLHUP | POLLRDHUP);
	gt_check_int_equal(giong_join(t, NULL), 0);
}

static void test_poll_without_in_or_out(void **state)
{
	(void)state;
	run_tiers(hup_main);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cancel_by_fd_leaves_the_other),
		cmocka_unit_test(test_poll_without_in_or_out),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
