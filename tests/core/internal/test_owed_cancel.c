/* SPDX-License-Identifier: MIT */
/*
 * test_owed_cancel.c - a cancel that found no SQE is owed, not lost: the
 * worker sends it at its next tick (giong__retry_cancels()), the operation
 * ends with -ECANCELED, and the count of owed cancels goes back to zero.
 * White-box: the "no SQE" moment is simulated by marking the cancel owed,
 * as request_cancel() does when giong__sqe() gives nothing.
 */
#include <liburing.h>
#include <poll.h>
#include <unistd.h>

#include "giong_test.h"
#include "internal.h"

struct owed {
	int res;
	int done;
	unsigned owed_before, owed_after;
	uint64_t sqes_before, sqes_after;
};

static void poll_done(void *ctx, int res, unsigned flags)
{
	struct owed *o = ctx;

	(void)flags;
	o->res = res;
	o->done = 1;
}

static void owed_main(unsigned w_index, void *arg)
{
	struct giong__worker *w = giong__worker_current();
	struct owed *o = arg;
	struct io_uring_sqe *sqe;
	struct giong__op *op;
	uint64_t id;
	uint32_t slot;
	int p[2];

	(void)w_index;
	if (pipe(p))
		return;
	sqe = giong_sqe();
	/* o outlives the run; nobody writes the pipe: only a cancel ends it */
	io_uring_prep_poll_add(sqe, p[0], POLLIN);
	if (giong_op_start(sqe, poll_done, o, &id))
		return;
	giong_sleep_ms(1); /* the poll is in the kernel */
	slot = (uint32_t)id - 1;
	op = &w->ops.chunks[slot >> GIONG__OP_CHUNK_SHIFT][slot & (GIONG__OP_CHUNK - 1)];
	op->cancel_wanted = true; /* what request_cancel() does without an SQE */
	w->cancels_wanted++;
	o->owed_before = w->cancels_wanted;
	o->sqes_before = w->stats.sqes_submitted;
	for (int i = 0; i < 100 && !o->done; i++)
		giong_sleep_ms(1);
	o->owed_after = w->cancels_wanted;
	o->sqes_after = w->stats.sqes_submitted;
	close(p[0]);
	close(p[1]);
}

static void test_owed_cancel_is_sent(void **state)
{
	struct giong_config c = gt_config(1);
	struct owed o = {0};

	(void)state;
	gt_run(&c, owed_main, &o, NULL);
	assert_int_equal(o.owed_before, 1);
	assert_int_equal(o.done, 1);
	assert_int_equal(o.res, -ECANCELED);
	assert_int_equal(o.owed_after, 0);
	assert_true(o.sqes_after > o.sqes_before); /* the cancel itself */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_owed_cancel_is_sent),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
