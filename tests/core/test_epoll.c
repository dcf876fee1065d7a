/* SPDX-License-Identifier: MIT */
/*
 * test_epoll.c - the epoll tier (GIONG_TIER_EPOLL) honours the SQE contract
 * on its own: multishot accept and receive (pool buffers, IORING_CQE_F_MORE
 * and F_BUFFER as io_uring posts them), one-shot receive, MSG_WAITALL send,
 * connect on a blocking socket, poll, deadlines and cancels with io_uring's
 * codes, a descriptor closed behind core's back whose number comes back, the
 * pool running dry under a multishot receive, many descriptors ready at once.
 */
#include <fcntl.h>
#include <liburing.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "giong_test.h"

#define BIG (1u << 20)

struct ms {
	unsigned cqes, more, buffers, final;
	int final_res;
	int fds[8];
	unsigned nfds;
	char got[64];
	unsigned got_len;
};

static void accept_cb(void *ctx, int res, unsigned flags)
{
	struct ms *m = ctx;

	m->cqes++;
	if (flags & IORING_CQE_F_MORE) {
		m->more++;
		if (res >= 0 && m->nfds < 8)
			m->fds[m->nfds++] = res;
	} else {
		m->final++;
		m->final_res = res;
	}
}

static void recv_cb(void *ctx, int res, unsigned flags)
{
	struct ms *m = ctx;
	struct giong_recvbuf *b;

	m->cqes++;
	if (flags & IORING_CQE_F_BUFFER) {
		m->buffers++;
		if (giong_bufpool_take(flags >> IORING_CQE_BUFFER_SHIFT, (size_t)res, &b) == 0) {
			unsigned n = (unsigned)giong_recvbuf_len(b);

			if (m->got_len + n <= sizeof(m->got)) {
				memcpy(m->got + m->got_len, giong_recvbuf_data(b), n);
				m->got_len += n;
			}
			giong_recvbuf_release(b);
		}
	}
	if (flags & IORING_CQE_F_MORE) {
		m->more++;
	} else {
		m->final++;
		m->final_res = res;
	}
}

/* Run @fn as the main task of one worker forced onto the epoll tier. */
static void run_epoll(giong_main_fn fn)
{
	struct giong_config c = gt_config(1);

	c.ring_tier = GIONG_TIER_EPOLL;
	gt_run(&c, fn, NULL, NULL);
}

static int wait_until(const unsigned *v, unsigned want)
{
	for (int i = 0; i < 2000 && *v < want; i++)
		giong_sleep_ms(1);
	return *v >= want ? 0 : -ETIMEDOUT;
}

static int listener(struct sockaddr_in *a)
{
	socklen_t len = sizeof(*a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0); /* blocking, as net's */

	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)a, sizeof(*a)) || listen(fd, 16) ||
	    getsockname(fd, (struct sockaddr *)a, &len))
		return -1;
	return fd;
}

/* Multishot accept, then a CONNECT through the emulator on a blocking socket. */
static void accept_main(unsigned w, void *arg)
{
	struct sockaddr_in a;
	struct ms m = {0};
	uint64_t id;
	int lfd = listener(&a), c[3], cfd;
	struct io_uring_sqe *sqe;

	struct giong_stats st;

	(void)w;
	(void)arg;
	gt_check_int_equal(giong_ring_tier(), GIONG_TIER_EPOLL);
	gt_check_int_equal(giong_stats(&st), 0);
	gt_check_int_equal(st.ring_tier, GIONG_TIER_EPOLL);
	if (!gt_check_true(lfd >= 0))
		return;
	sqe = giong_sqe();
	io_uring_prep_multishot_accept(sqe, lfd, NULL, NULL, SOCK_CLOEXEC);
	gt_check_int_equal(giong_op_start(sqe, accept_cb, &m, &id), 0);
	for (int i = 0; i < 3; i++) {
		c[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		gt_check_int_equal(connect(c[i], (struct sockaddr *)&a, sizeof(a)), 0);
	}
	gt_check_int_equal(wait_until(&m.more, 3), 0);
	gt_check_int_equal(m.final, 0);

	/* CONNECT: the socket is blocking before and after. */
	cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sqe = giong_sqe();
	io_uring_prep_connect(sqe, cfd, (struct sockaddr *)&a, sizeof(a));
	gt_check_int_equal(giong_io(sqe), 0);
	gt_check_int_equal(fcntl(cfd, F_GETFL) & O_NONBLOCK, 0);
	gt_check_int_equal(wait_until(&m.more, 4), 0);

	/* Cancel: one final CQE, -ECANCELED, no F_MORE. */
	gt_check_int_equal(giong_op_cancel(id), 0);
	gt_check_int_equal(wait_until(&m.final, 1), 0);
	gt_check_int_equal(m.final_res, -ECANCELED);
	for (unsigned i = 0; i < m.nfds; i++)
		close(m.fds[i]);
	for (int i = 0; i < 3; i++)
		close(c[i]);
	close(cfd);
	close(lfd);
}

/* Multishot receive into pool buffers; the peer's shutdown ends it (res 0). */
static void recv_main(unsigned w, void *arg)
{
	struct ms m = {0};
	struct io_uring_sqe *sqe;
	int sv[2];

	(void)w;
	(void)arg;
	if (!gt_check_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0))
		return;
	sqe = giong_sqe();
	io_uring_prep_recv_multishot(sqe, sv[0], NULL, 0, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = (uint16_t)giong_bufpool_group();
	gt_check_int_equal(giong_op_start(sqe, recv_cb, &m, NULL), 0);
	giong_sleep_ms(5); /* parked on readiness by now */
	gt_check_int_equal(write(sv[1], "hello", 5), 5);
	gt_check_int_equal(wait_until(&m.buffers, 1), 0);
	gt_check_int_equal(write(sv[1], " world", 6), 6);
	gt_check_int_equal(wait_until(&m.got_len, 11), 0);
	gt_check_int_equal(memcmp(m.got, "hello world", 11), 0);
	gt_check_int_equal(m.more, m.buffers);
	shutdown(sv[1], SHUT_WR);
	gt_check_int_equal(wait_until(&m.final, 1), 0);
	gt_check_int_equal(m.final_res, 0);
	close(sv[0]);
	close(sv[1]);
}

static intptr_t reader(void *arg)
{
	int fd = (int)(intptr_t)arg;
	static char buf[65536];
	size_t total = 0;

	while (total < BIG) {
		struct io_uring_sqe *sqe = giong_sqe();
		int r;

		io_uring_prep_recv(sqe, fd, buf, sizeof(buf), 0);
		r = giong_io(sqe);
		if (r <= 0)
			return r;
		total += (size_t)r;
	}
	return (intptr_t)total;
}

static intptr_t recv_one(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char c;
	struct io_uring_sqe *sqe = giong_sqe();

	io_uring_prep_recv(sqe, fd, &c, 1, 0);
	return giong_io(sqe);
}

/* One-shot receive: deadline, cancel, data; MSG_WAITALL send; poll. */
static void oneshot_main(unsigned w, void *arg)
{
	struct giong_task *t;
	struct io_uring_sqe *sqe;
	intptr_t res = 0;
	uint64_t saved;
	char *big = calloc(1, BIG);
	int sv[2], ret;

	(void)w;
	(void)arg;
	if (!gt_check_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0) || !big)
		return;
	saved = giong_deadline_in(20);
	gt_check_int_equal(recv_one((void *)(intptr_t)sv[0]), -ETIMEDOUT);
	giong_deadline_restore(saved);
	gt_check_int_equal(giong_spawn(recv_one, (void *)(intptr_t)sv[0], &t), 0);
	giong_sleep_ms(5);
	gt_check_int_equal(giong_task_cancel(t), 0);
	gt_check_int_equal(giong_join(t, &res), -ECANCELED);
	gt_check_int_equal(giong_poll(sv[0], POLLIN, 0), 0);
	gt_check_int_equal(giong_spawn(recv_one, (void *)(intptr_t)sv[0], &t), 0);
	giong_sleep_ms(5);
	gt_check_int_equal(write(sv[1], "x", 1), 1);
	gt_check_int_equal(giong_join(t, &res), 0);
	gt_check_int_equal(res, 1);

	/* 1 MiB with MSG_WAITALL over a socket buffer far smaller: waits for
	 * room again and again, answers once, with every byte. */
	gt_check_int_equal(giong_spawn(reader, (void *)(intptr_t)sv[0], &t), 0);
	sqe = giong_sqe();
	io_uring_prep_send(sqe, sv[1], big, BIG, MSG_WAITALL);
	ret = giong_io(sqe);
	gt_check_int_equal(ret, BIG);
	gt_check_int_equal(giong_join(t, &res), 0);
	gt_check_int_equal(res, BIG);
	gt_check_true(giong_poll(sv[1], POLLOUT, 100) & POLLOUT);
	free(big);
	close(sv[0]);
	close(sv[1]);
}

/* A socket closed with close(2) while registered: its number comes back
 * with the next socket, which must still be heard. */
static void reuse_main(unsigned w, void *arg)
{
	struct giong_task *t;
	intptr_t res = 0;
	uint64_t saved;
	int sv[2], tv[2];

	(void)w;
	(void)arg;
	if (!gt_check_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0))
		return;
	saved = giong_deadline_in(10);
	gt_check_int_equal(recv_one((void *)(intptr_t)sv[0]), -ETIMEDOUT); /* registered */
	giong_deadline_restore(saved);
	close(sv[0]);
	close(sv[1]);
	if (!gt_check_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, tv), 0))
		return;
	gt_check_int_equal(tv[0], sv[0]); /* the same number */
	gt_check_int_equal(giong_spawn(recv_one, (void *)(intptr_t)tv[0], &t), 0);
	giong_sleep_ms(5);
	gt_check_int_equal(write(tv[1], "y", 1), 1);
	saved = giong_deadline_in(2000);
	gt_check_int_equal(giong_join(t, &res), 0);
	giong_deadline_restore(saved);
	gt_check_int_equal(res, 1);
	close(tv[0]);
	close(tv[1]);
}

/* The pool runs dry: a multishot receive whose buffers are all held ends
 * with -ENOBUFS, final, as on io_uring. Datagrams: one buffer each. */
struct dry {
	unsigned buffers, final;
	int final_res;
	struct giong_recvbuf *held[128];
};

static void dry_cb(void *ctx, int res, unsigned flags)
{
	struct dry *d = ctx;

	if ((flags & IORING_CQE_F_BUFFER) && d->buffers < 128 &&
	    giong_bufpool_take(flags >> IORING_CQE_BUFFER_SHIFT, (size_t)res,
			       &d->held[d->buffers]) == 0)
		d->buffers++;
	if (!(flags & IORING_CQE_F_MORE)) {
		d->final++;
		d->final_res = res;
	}
}

static void dry_main(unsigned w, void *arg)
{
	static struct dry d;
	struct io_uring_sqe *sqe;
	int sv[2];

	(void)w;
	(void)arg;
	memset(&d, 0, sizeof(d));
	if (!gt_check_int_equal(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0))
		return;
	for (int i = 0; i < 70; i++)
		gt_check_int_equal(write(sv[1], "d", 1), 1);
	sqe = giong_sqe();
	io_uring_prep_recv_multishot(sqe, sv[0], NULL, 0, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = (uint16_t)giong_bufpool_group();
	gt_check_int_equal(giong_op_start(sqe, dry_cb, &d, NULL), 0);
	gt_check_int_equal(wait_until(&d.final, 1), 0);
	gt_check_int_equal(d.final_res, -ENOBUFS);
	gt_check_int_equal(d.buffers, 64); /* gt_config()'s pool */
	for (unsigned i = 0; i < d.buffers; i++)
		giong_recvbuf_release(d.held[i]);
	close(sv[0]);
	close(sv[1]);
}

/* Many descriptors become readable in one turn: every waiter is answered. */
static void many_main(unsigned w, void *arg)
{
	enum { N = 64 };
	struct giong_task *t[N];
	int sv[N][2];

	(void)w;
	(void)arg;
	for (int i = 0; i < N; i++) {
		if (!gt_check_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv[i]), 0))
			return;
		gt_check_int_equal(giong_spawn(recv_one, (void *)(intptr_t)sv[i][0], &t[i]), 0);
	}
	giong_sleep_ms(5); /* all parked on readiness */
	for (int i = 0; i < N; i++)
		gt_check_int_equal(write(sv[i][1], "m", 1), 1);
	for (int i = 0; i < N; i++) {
		intptr_t res = 0;

		gt_check_int_equal(giong_join(t[i], &res), 0);
		gt_check_int_equal(res, 1);
		close(sv[i][0]);
		close(sv[i][1]);
	}
}

/* Each case runs its main task on a worker forced onto the epoll tier. */
struct epoll_case {
	giong_main_fn fn;
};

static void test_case(void **state)
{
	run_epoll(((const struct epoll_case *)*state)->fn);
}

int main(void)
{
	static struct epoll_case accept = {accept_main}, recv = {recv_main}, one = {oneshot_main},
				 reuse = {reuse_main}, dry = {dry_main}, many = {many_main};
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_prestate(test_case, &accept),
		cmocka_unit_test_prestate(test_case, &recv),
		cmocka_unit_test_prestate(test_case, &one),
		cmocka_unit_test_prestate(test_case, &reuse),
		cmocka_unit_test_prestate(test_case, &dry),
		cmocka_unit_test_prestate(test_case, &many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
