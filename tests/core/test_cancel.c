/* SPDX-License-Identifier: MIT */
/*
 * test_cancel.c - cancellation never lets the kernel write into memory that
 * was given back, never loses data, and leaves the operation slab empty.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <liburing.h>
#include <unistd.h>

#include "giong_test.h"

#define PATTERN 0xAA

/* ---------------------- a buffer stays lent until the kernel confirms */

struct lent {
	int fds[2];
	int ret;
	unsigned char seen[64]; /* copy of the task's stack buffer at return */
	int direct;             /* bytes read back directly from the pipe */
	unsigned char rest[64];
};

static intptr_t stack_reader(void *arg)
{
	struct lent *l = arg;
	unsigned char buf[64]; /* on this task's stack: the dangerous case */
	struct io_uring_sqe *sqe = giong_sqe();

	memset(buf, PATTERN, sizeof(buf));
	io_uring_prep_read(sqe, l->fds[0], buf, sizeof(buf), 0);
	l->ret = giong_io(sqe);
	memcpy(l->seen, buf, sizeof(buf));
	return 0;
}

static intptr_t scribbler(void *arg)
{
	unsigned char junk[4096];

	(void)arg;
	/* Reuses the pooled stack the reader had: if the kernel wrote late,
	 * the pipe data would land here or be lost. */
	memset(junk, 0x55, sizeof(junk));
	giong_yield();
	return junk[100];
}

static void lent_main(unsigned w, void *arg)
{
	struct lent *l = arg;
	struct giong_task *t;

	(void)w;
	if (!gt_check_int_equal(giong_spawn(stack_reader, l, &t), 0))
		return;
	gt_check_int_equal(giong_yield(), 0); /* the read is now in the kernel */
	/* Ask for the cancel, then write before the cancel reaches the kernel:
	 * the read may complete first (then it returns the data) or be
	 * cancelled (then the bytes stay in the pipe). */
	gt_check_int_equal(giong_task_cancel(t), 0);
	gt_check_int_equal(write(l->fds[1], "hello", 5), 5);
	giong_join(t, NULL);
	for (int i = 0; i < 4; i++)
		giong_spawn(scribbler, NULL, NULL);
	giong_sleep_ms(5);
}

static void test_buffer_lent_until_confirmed(void **state)
{
	(void)state;
	for (int round = 0; round < 50; round++) {
		struct giong_config c = gt_config(1);
		struct lent l;

		memset(&l, 0, sizeof(l));
		assert_int_equal(pipe2(l.fds, O_NONBLOCK), 0);
		gt_run(&c, lent_main, &l, NULL);
		l.direct = (int)read(l.fds[0], l.rest, sizeof(l.rest));
		if (l.ret == 5) {
			/* Completed before the cancel: data returned, pipe empty. */
			assert_memory_equal(l.seen, "hello", 5);
			assert_int_equal(l.direct, -1);
		} else {
			/* Cancelled: the buffer untouched, the data still there. */
			assert_int_equal(l.ret, -ECANCELED);
			for (int i = 0; i < 64; i++)
				assert_int_equal(l.seen[i], PATTERN);
			assert_int_equal(l.direct, 5);
			assert_memory_equal(l.rest, "hello", 5);
		}
		close(l.fds[0]);
		close(l.fds[1]);
	}
}

/* ----------------------------------- 10,000 random cancel/complete races */

#define NPIPES 32
#define NREADS 10000

struct race {
	int fds[NPIPES][2];
	unsigned seed;
	long written, read_by_tasks;
	int done, timeouts, cancels, oks, other;
	bool stop; /* a reader could not be spawned: the writer ends too */
	struct giong_task *live[64];
	unsigned nlive;
	struct giong_stats end;
	uint32_t ops_baseline;
};

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static intptr_t race_reader(void *arg)
{
	struct race *r = arg;
	int p = (int)(rnd(&r->seed) % NPIPES);
	unsigned char b;
	struct io_uring_sqe *sqe = giong_sqe();
	uint64_t saved = giong_deadline_in(rnd(&r->seed) % 4);
	int ret;

	io_uring_prep_read(sqe, r->fds[p][0], &b, 1, 0);
	ret = giong_io(sqe);
	giong_deadline_restore(saved);
	if (ret == 1) {
		r->oks++;
		r->read_by_tasks++;
	} else if (ret == -ETIMEDOUT) {
		r->timeouts++;
	} else if (ret == -ECANCELED) {
		r->cancels++;
	} else {
		r->other++;
	}
	r->done++;
	return 0;
}

static intptr_t race_writer(void *arg)
{
	struct race *r = arg;

	while (r->done < NREADS && !r->stop) {
		for (int i = 0; i < 8; i++) {
			int p = (int)(rnd(&r->seed) % NPIPES);

			if (write(r->fds[p][1], "x", 1) == 1)
				r->written++;
		}
		if (rnd(&r->seed) % 4 == 0)
			giong_sleep_ms(1);
		else
			giong_yield();
	}
	return 0;
}

static void race_main(unsigned w, void *arg)
{
	struct race *r = arg;
	struct giong_stats st;

	(void)w;
	giong_yield();
	giong_stats(&st);
	r->ops_baseline = st.ops_live;
	giong_spawn(race_writer, r, NULL);
	for (int i = 0; i < NREADS; i++) {
		struct giong_task *t;

		if (!gt_check_int_equal(giong_spawn(race_reader, r, &t), 0)) {
			r->stop = true;
			return;
		}
		if (rnd(&r->seed) % 3 == 0) {
			/* Cancel some at a random moment: now, or after a yield. */
			if (rnd(&r->seed) % 2)
				giong_yield();
			giong_task_cancel(t);
		}
		giong_task_detach(t);
		if (i % 64 == 0)
			giong_yield();
	}
	while (r->done < NREADS)
		giong_sleep_ms(1);
	giong_stats(&r->end);
}

static void test_random_cancel_races(void **state)
{
	struct giong_config c = gt_config(1);
	struct race *r = calloc(1, sizeof(*r));
	struct giong_stats fin;
	long left = 0;
	char buf[4096];

	(void)state;
	r->seed = 12345;
	for (int i = 0; i < NPIPES; i++)
		assert_int_equal(pipe2(r->fds[i], O_NONBLOCK), 0);
	c.ring_entries = 512;
	gt_run(&c, race_main, r, &fin);
	for (int i = 0; i < NPIPES; i++) {
		ssize_t n;

		while ((n = read(r->fds[i][0], buf, sizeof(buf))) > 0)
			left += n;
		close(r->fds[i][0]);
		close(r->fds[i][1]);
	}
	print_message("reads %d: ok %d, timed out %d, cancelled %d\n", r->done, r->oks, r->timeouts,
		      r->cancels);
	assert_int_equal(r->done, NREADS);
	assert_int_equal(r->other, 0);
	/* Nothing lost: every byte written was read by a task or is still in
	 * its pipe. */
	assert_int_equal(r->read_by_tasks + left, r->written);
	/* The slab holds only the worker's own standing operations. */
	assert_int_equal(r->end.ops_live, r->ops_baseline);
	assert_int_equal(fin.ops_live, 0);
	assert_int_equal(fin.ops_leaked, 0);
	assert_true(r->timeouts > 0 && r->cancels > 0 && r->oks > 0);
	free(r);
}

/* ------------------------------------------ teardown with ops in flight */

struct teardown {
	int fds[2];
	int task_ret[8];
	int cb_calls, cb_res;
	unsigned char cb_buf[16];
};

static intptr_t stuck_reader(void *arg)
{
	struct teardown *t = arg;
	static int slot;
	int me = slot++;
	char b[8];
	struct io_uring_sqe *sqe = giong_sqe();

	io_uring_prep_read(sqe, t->fds[0], b, sizeof(b), 0);
	t->task_ret[me] = giong_io(sqe);
	return 0;
}

static void stackless_done(void *ctx, int res, unsigned flags)
{
	struct teardown *t = ctx;

	(void)flags;
	t->cb_calls++;
	t->cb_res = res;
}

static void teardown_main(unsigned w, void *arg)
{
	struct teardown *t = arg;
	struct io_uring_sqe *sqe;

	(void)w;
	for (int i = 0; i < 8; i++)
		giong_spawn(stuck_reader, t, NULL);
	/* A stackless operation nobody cancels: the worker must at exit. */
	sqe = giong_sqe();
	io_uring_prep_read(sqe, t->fds[0], t->cb_buf, sizeof(t->cb_buf), 0);
	gt_check_int_equal(giong_op_start(sqe, stackless_done, t, NULL), 0);
	/* main returns now; the readers get the grace period, then are
	 * cancelled. */
}

static void test_teardown_in_flight(void **state)
{
	struct giong_config c = gt_config(1);
	struct teardown t;
	struct giong_stats fin;
	int fds_before = gt_count_fds();

	(void)state;
	memset(&t, 0, sizeof(t));
	assert_int_equal(pipe(t.fds), 0);
	c.shutdown_grace_ms = 20;
	gt_run(&c, teardown_main, &t, &fin);
	for (int i = 0; i < 8; i++)
		assert_int_equal(t.task_ret[i], -ECANCELED);
	assert_int_equal(t.cb_calls, 1);
	assert_int_equal(t.cb_res, -ECANCELED);
	assert_int_equal(fin.ops_live, 0);
	assert_int_equal(fin.ops_leaked, 0);
	close(t.fds[0]);
	close(t.fds[1]);
	assert_int_equal(gt_count_fds(), fds_before);
}

/* ------------- a blocking call in a kernel worker, interrupted by giong */

/*
 * A write-only open of a FIFO with no reader, through a /proc/self/fd link
 * (its lookup is never cached, so io_uring hands the open to a kernel worker
 * thread, where it blocks). Interrupting it, the kernel ends the open with
 * -EINTR on Linux 6.1 and with its internal -ERESTARTSYS on later kernels;
 * the task must see why giong interrupted it, and no descriptor may be left.
 * On the epoll tier a helper thread of core's pool blocks in the open, and
 * the cancel's signal (GIONG__BPOOL_SIGNAL) ends it the same way.
 */
struct blocked_open {
	char link[64];
	int deadline_ret, cancel_ret, join_ret;
};

static intptr_t open_fifo_for_writing(void *arg)
{
	struct blocked_open *b = arg;

	/* b->link is the test's, alive past the runtime: it outlasts the open's
	 * completion, which giong_io() awaits (cancelled or not). */
	return gt_io_open(b->link, O_WRONLY | O_CLOEXEC);
}

static intptr_t cancelled_opener(void *arg)
{
	struct blocked_open *b = arg;

	b->cancel_ret = (int)open_fifo_for_writing(b);
	return 0;
}

static void blocked_open_main(unsigned w, void *arg)
{
	struct blocked_open *b = arg;
	struct giong_task *t;
	uint64_t saved;
	intptr_t res = 0;

	(void)w;
	b->cancel_ret = 1; /* the task's open must overwrite it */
	saved = giong_deadline_in(50);
	b->deadline_ret = (int)open_fifo_for_writing(b);
	giong_deadline_restore(saved);
	if (!gt_check_int_equal(giong_spawn(cancelled_opener, b, &t), 0))
		return;
	gt_check_int_equal(giong_sleep_ms(30), 0); /* blocked in the kernel worker by now */
	gt_check_int_equal(giong_task_cancel(t), 0);
	b->join_ret = giong_join(t, &res);
}

static void test_blocking_open_interrupted(void **state)
{
	struct giong_config c = gt_config(1);
	struct blocked_open b;
	char fifo[64];
	int pfd, fds_before = gt_count_fds();

	(void)state;
	memset(&b, 0, sizeof(b));
	snprintf(fifo, sizeof(fifo), "/tmp/giong-cancel-fifo-%d", (int)getpid());
	unlink(fifo);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	pfd = open(fifo, O_PATH | O_CLOEXEC);
	assert_true(pfd >= 0);
	snprintf(b.link, sizeof(b.link), "/proc/self/fd/%d", pfd);
	gt_run(&c, blocked_open_main, &b, NULL);
	assert_int_equal(b.deadline_ret, -ETIMEDOUT); /* 6.1 gave -EINTR before the fix */
	assert_int_equal(b.join_ret, -ECANCELED);     /* cancelled first */
	assert_int_equal(b.cancel_ret, -ECANCELED);   /* the open itself, inside the task */
	close(pfd);
	unlink(fifo);
	assert_int_equal(gt_count_fds(), fds_before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buffer_lent_until_confirmed),
		cmocka_unit_test(test_random_cancel_races),
		cmocka_unit_test(test_teardown_in_flight),
		cmocka_unit_test(test_blocking_open_interrupted),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
