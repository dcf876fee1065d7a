/* SPDX-License-Identifier: MIT */
/* test_bufpool.c - the provided buffer ring: exhaustion, return, reuse,
 * copies off the pool, and the refill notification. */
#include <liburing.h>
#include <sys/socket.h>
#include <unistd.h>

#include "giong_test.h"

#define NBUF 4

struct bp {
	int sv[2];
	int recv_ret[NBUF + 1];
	struct giong_recvbuf *bufs[NBUF];
	int enobufs;
	uint32_t free_before, free_dry, free_after;
	int notified;
	int reused_same; /* the refilled buffer was one given back */
	char copy_content[8];
	int copy_pooled, copy_free_after;
	int bad_take;
};

/* One buffer-select receive, the way net's receive uses the pool. */
static int recv_one(int fd, struct giong_recvbuf **out)
{
	struct io_uring_sqe *sqe = giong_sqe();
	unsigned flags;
	int ret;

	io_uring_prep_recv(sqe, fd, NULL, (unsigned)giong_bufpool_size(), 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = (uint16_t)giong_bufpool_group();
	ret = giong_io(sqe);
	flags = giong_io_cqe_flags();
	if (ret < 0)
		return ret;
	*out = NULL;
	if (!gt_check_true(flags & IORING_CQE_F_BUFFER) ||
	    !gt_check_int_equal(
		    giong_bufpool_take(flags >> IORING_CQE_BUFFER_SHIFT, (size_t)ret, out), 0))
		return -EPROTO; /* recorded: the test fails */
	return ret;
}

static void refill(struct giong_bufpool_waiter *w)
{
	struct bp *b = *(struct bp **)(w + 1);

	b->notified++;
}

static void bp_main(unsigned w, void *arg)
{
	struct bp *b = arg;
	struct giong_stats st;
	struct {
		struct giong_bufpool_waiter w;
		struct bp *b;
	} nw = {{.fn = refill}, b};
	struct giong_recvbuf *again;
	const void *first_data;

	(void)w;
	giong_stats(&st);
	b->free_before = st.recvbufs_free;
	for (int i = 0; i < NBUF; i++) {
		gt_check_int_equal(write(b->sv[1], "data", 4), 4);
		b->recv_ret[i] = recv_one(b->sv[0], &b->bufs[i]);
		if (b->recv_ret[i] < 0)
			return; /* no buffer to go on with; asserted after the run */
	}
	first_data = giong_recvbuf_data(b->bufs[0]);
	giong_stats(&st);
	b->free_dry = st.recvbufs_free;
	/* Dry: the kernel has no buffer to pick. */
	gt_check_int_equal(write(b->sv[1], "more", 4), 4);
	b->recv_ret[NBUF] = recv_one(b->sv[0], &again);
	b->enobufs = b->recv_ret[NBUF] == -ENOBUFS;
	gt_check_int_equal(giong_bufpool_notify(&nw.w), 0);
	gt_check_int_equal(giong_bufpool_notify(&nw.w), -EALREADY);
	giong_recvbuf_release(b->bufs[0]); /* 1 of 4 free: not yet half */
	gt_check_int_equal(b->notified, 0);
	giong_recvbuf_release(b->bufs[1]); /* 2 of 4: told once */
	gt_check_int_equal(b->notified, 1);
	/* Reuse: the next receive gets a buffer back ("more" is still queued). */
	if (!gt_check_int_equal(recv_one(b->sv[0], &again), 4))
		return;
	gt_check_memory_equal(giong_recvbuf_data(again), "more", 4);
	/* The pool hands buffers out again: "more" landed in one we released. */
	b->reused_same = giong_recvbuf_data(again) == first_data ||
			 giong_recvbuf_data(again) == giong_recvbuf_data(b->bufs[1]);
	/* Copy off the pool: the pool buffer goes back, the bytes stay. */
	gt_check_int_equal(giong_recvbuf_consume(again, 1), 3);
	gt_check_int_equal(giong_recvbuf_copy(&again), 0);
	b->copy_pooled = giong_bufpool_is_pooled(again);
	memcpy(b->copy_content, giong_recvbuf_data(again), 3);
	giong_stats(&st);
	b->copy_free_after = (int)st.recvbufs_free;
	giong_recvbuf_release(again);
	giong_recvbuf_release(b->bufs[2]);
	giong_recvbuf_release(b->bufs[3]);
	giong_stats(&st);
	b->free_after = st.recvbufs_free;
	b->bad_take = giong_bufpool_take(NBUF, 1, &again);
}

static void test_pool_exhaust_return_reuse(void **state)
{
	struct giong_config c = gt_config(1);
	struct bp b;

	(void)state;
	memset(&b, 0, sizeof(b));
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, b.sv), 0);
	c.recv_buffers = NBUF;
	c.recv_buffer_size = 64;
	gt_run(&c, bp_main, &b, NULL);
	assert_int_equal(b.free_before, NBUF);
	for (int i = 0; i < NBUF; i++)
		assert_int_equal(b.recv_ret[i], 4);
	assert_int_equal(b.free_dry, 0);
	assert_true(b.enobufs);
	assert_int_equal(b.notified, 1);
	assert_int_equal(b.copy_pooled, 0);
	assert_memory_equal(b.copy_content, "ore", 3);
	assert_true(b.reused_same);
	assert_int_equal(b.copy_free_after, 2); /* two released, the copied one back */
	assert_int_equal(b.free_after, NBUF);
	assert_int_equal(b.bad_take, -EINVAL);
	close(b.sv[0]);
	close(b.sv[1]);
}

static void test_recvbuf_bad_args(void **state)
{
	(void)state;
	assert_null(giong_recvbuf_data(NULL));
	assert_int_equal(giong_recvbuf_len(NULL), 0);
	assert_int_equal(giong_recvbuf_consume(NULL, 1), -EINVAL);
	giong_recvbuf_release(NULL);
	assert_int_equal(giong_recvbuf_copy(NULL), -EINVAL);
	assert_int_equal(giong_bufpool_group(), GIONG_ENOTWORKER);
	assert_int_equal(giong_bufpool_notify(NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_exhaust_return_reuse),
		cmocka_unit_test(test_recvbuf_bad_args),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
