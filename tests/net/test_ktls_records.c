/* SPDX-License-Identifier: MIT */
/*
 * test_ktls_records.c - kernel TLS with no TLS library (ktls_test.h): control records (an
 * alert) and what recv(), read() and recvmsg() give when they meet one; the same through
 * io_uring (SEND, SENDMSG, RECV, RECVMSG), MSG_WAITALL through the ring, and a multishot RECV
 * with provided buffers, as giong's receive queue arms it, over data records and then an alert.
 */
#include "ktls_test.h"

static void test_control_record(void **state)
{
	int fd[2];
	unsigned char buf[64];
	struct rmsg r;
	ssize_t n;

	(void)state;
	assert_int_equal(ktls_pair(fd, &kciphers[0]), 0);
	assert_int_equal(send(fd[0], "hello", 5, 0), 5);
	assert_int_equal(send_record(fd[0], 21, alert, sizeof(alert)), 2);
	assert_int_equal(send(fd[0], "after", 5, 0), 5);

	/* A plain recv stops at the change of record type, with the data before it. */
	assert_int_equal(recv(fd[1], buf, sizeof(buf), 0), 5);
	assert_memory_equal(buf, "hello", 5);
	/* At the alert: no room for its type, so the call fails; the record is kept (6.1 puts
	 * it back on rx_list), and fails the same again. */
	for (int i = 0; i < 2; i++) {
		errno = 0;
		n = recv(fd[1], buf, sizeof(buf), 0);
		print_message("plain recv at a control record: %zd, errno %d (%s)\n", n, errno,
			      strerror(errno));
		assert_int_equal(n, -1);
		assert_int_equal(errno, EIO);
	}
	errno = 0;
	assert_int_equal(read(fd[1], buf, sizeof(buf)), -1);
	assert_int_equal(errno, EIO);
	/* With room for the type: the alert, whole, typed 21, ending the call (MSG_EOR). */
	rmsg_init(&r, buf, sizeof(buf));
	n = recvmsg(fd[1], &r.m, 0);
	print_message("recvmsg at a control record: %zd, type %d, msg_flags %#x\n", n,
		      rmsg_type(&r), (unsigned)r.m.msg_flags);
	assert_int_equal(n, 2);
	assert_memory_equal(buf, alert, 2);
	assert_int_equal(rmsg_type(&r), 21);
	assert_true(r.m.msg_flags & MSG_EOR);
	/* Data after it, through recvmsg: typed 23 (application data). */
	rmsg_init(&r, buf, sizeof(buf));
	assert_int_equal(recvmsg(fd[1], &r.m, 0), 5);
	assert_memory_equal(buf, "after", 5);
	assert_int_equal(rmsg_type(&r), 23);
	pair_close(fd);
}

/* ---------------------------------------------------------------- io_uring */

/* Submit what is queued and reap one completion: its res, or -ETIME. */
static int ring_one(struct io_uring *ring)
{
	struct __kernel_timespec ts = {.tv_sec = IO_TIMEOUT_S};
	struct io_uring_cqe *cqe;
	int res;

	io_uring_submit(ring);
	if (io_uring_wait_cqe_timeout(ring, &cqe, &ts))
		return -ETIME;
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return res;
}

static void test_uring(void **state)
{
	struct io_uring ring;
	unsigned char buf[64], ctl[sizeof(alert)];
	struct msghdr m = {0};
	struct iovec iov = {(void *)alert, sizeof(alert)};
	union {
		char buf[CMSG_SPACE(1)];
		struct cmsghdr align;
	} c = {0};
	struct cmsghdr *h;
	struct rmsg r;
	int fd[2], res;

	(void)state;
	assert_int_equal(io_uring_queue_init(8, &ring, 0), 0);
	assert_int_equal(ktls_pair(fd, &kciphers[0]), 0);

	io_uring_prep_send(io_uring_get_sqe(&ring), fd[0], "ring-data", 9, 0);
	assert_int_equal(ring_one(&ring), 9);
	/* MSG_WAITALL passes through io_uring to the kTLS send, which refuses it. */
	io_uring_prep_send(io_uring_get_sqe(&ring), fd[0], "x", 1, MSG_WAITALL);
	res = ring_one(&ring);
	print_message("io_uring send with MSG_WAITALL: %d\n", res);
	assert_int_equal(res, -EOPNOTSUPP);
	io_uring_prep_recv(io_uring_get_sqe(&ring), fd[1], buf, sizeof(buf), 0);
	assert_int_equal(ring_one(&ring), 9);
	assert_memory_equal(buf, "ring-data", 9);

	/* A control record sent through the ring's SENDMSG. */
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = c.buf;
	m.msg_controllen = sizeof(c.buf);
	h = CMSG_FIRSTHDR(&m);
	h->cmsg_level = SOL_TLS;
	h->cmsg_type = TLS_SET_RECORD_TYPE;
	h->cmsg_len = CMSG_LEN(1);
	*CMSG_DATA(h) = 21;
	io_uring_prep_sendmsg(io_uring_get_sqe(&ring), fd[0], &m, 0);
	assert_int_equal(ring_one(&ring), 2);
	/* The ring's RECV meets it as recv() does; its RECVMSG, with room for the type, reads it. */
	io_uring_prep_recv(io_uring_get_sqe(&ring), fd[1], buf, sizeof(buf), 0);
	res = ring_one(&ring);
	print_message("io_uring recv at a control record: %d\n", res);
	assert_int_equal(res, -EIO);
	rmsg_init(&r, ctl, sizeof(ctl));
	io_uring_prep_recvmsg(io_uring_get_sqe(&ring), fd[1], &r.m, 0);
	assert_int_equal(ring_one(&ring), 2);
	assert_memory_equal(ctl, alert, 2);
	assert_int_equal(rmsg_type(&r), 21);
	pair_close(fd);
	io_uring_queue_exit(&ring);
}

/* A multishot RECV with provided buffers (what giong's rxq arms) over kTLS: the data records,
 * then what it does at a control record. */
#define BR_ENTRIES 8
#define BR_SIZE 4096
#define BR_GROUP 7

static void test_uring_multishot(void **state)
{
	struct io_uring ring;
	struct io_uring_buf_reg reg = {.ring_entries = BR_ENTRIES, .bgid = BR_GROUP};
	struct io_uring_buf_ring *br;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	unsigned char *bufs, got[3000], ctl[sizeof(alert)];
	size_t have = 0;
	int fd[2], last = 0, cqes = 0;
	unsigned last_flags = 0;
	bool more = true;
	struct rmsg r;

	(void)state;
	assert_int_equal(io_uring_queue_init(8, &ring, 0), 0);
	assert_int_equal(
		posix_memalign((void **)&br, 4096, BR_ENTRIES * sizeof(struct io_uring_buf)), 0);
	bufs = malloc(BR_ENTRIES * BR_SIZE);
	assert_non_null(bufs);
	reg.ring_addr = (uintptr_t)br;
	assert_int_equal(io_uring_register_buf_ring(&ring, &reg, 0), 0);
	io_uring_buf_ring_init(br);
	for (int i = 0; i < BR_ENTRIES; i++)
		io_uring_buf_ring_add(br, bufs + i * BR_SIZE, BR_SIZE, (unsigned short)i,
				      io_uring_buf_ring_mask(BR_ENTRIES), i);
	io_uring_buf_ring_advance(br, BR_ENTRIES);

	assert_int_equal(ktls_pair(fd, &kciphers[0]), 0);
	for (int i = 0; i < 3; i++) /* three data records */
		assert_int_equal(send(fd[0], pattern + i * 1000, 1000, 0), 1000);
	assert_int_equal(send_record(fd[0], 21, alert, sizeof(alert)), 2);
	assert_int_equal(send(fd[0], "tail", 4, 0), 4);

	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_recv_multishot(sqe, fd[1], NULL, 0, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = BR_GROUP;
	io_uring_submit(&ring);
	while (more && cqes < 32) {
		struct __kernel_timespec ts = {.tv_sec = IO_TIMEOUT_S};

		assert_int_equal(io_uring_wait_cqe_timeout(&ring, &cqe, &ts), 0);
		cqes++;
		more = cqe->flags & IORING_CQE_F_MORE;
		last = cqe->res;
		last_flags = cqe->flags;
		if (cqe->res > 0) {
			unsigned id = cqe->flags >> IORING_CQE_BUFFER_SHIFT;

			assert_true(cqe->flags & IORING_CQE_F_BUFFER);
			assert_true(have + (size_t)cqe->res <= sizeof(got));
			memcpy(got + have, bufs + id * BR_SIZE, (size_t)cqe->res);
			have += (size_t)cqe->res;
		}
		print_message("multishot recv CQE %d: res %d, flags %#x\n", cqes, cqe->res,
			      cqe->flags);
		io_uring_cqe_seen(&ring, cqe);
	}
	/* The data byte-exact (the three records in one buffer), then the control record ends the
	 * multishot receive with -EIO, no buffer taken for it. */
	assert_int_equal(have, sizeof(got));
	assert_memory_equal(got, pattern, sizeof(got));
	assert_false(more);
	assert_int_equal(last, -EIO);
	assert_false(last_flags & IORING_CQE_F_BUFFER);
	/* The record is still there for a recvmsg with room for its type; then the data. */
	rmsg_init(&r, ctl, sizeof(ctl));
	assert_int_equal(recvmsg(fd[1], &r.m, 0), 2);
	assert_int_equal(rmsg_type(&r), 21);
	assert_int_equal(recv(fd[1], got, sizeof(got), 0), 4);
	assert_memory_equal(got, "tail", 4);
	pair_close(fd);
	io_uring_queue_exit(&ring);
	free(bufs);
	free(br);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_control_record),
		cmocka_unit_test(test_uring),
		cmocka_unit_test(test_uring_multishot),
	};

	return ktls_run_tests("test_ktls_records", tests);
}
