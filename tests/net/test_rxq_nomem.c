/* SPDX-License-Identifier: MIT */
/*
 * test_rxq_nomem.c - a receive queue that cannot grow (no memory) never
 * delivers a stream with a hole: the bytes queued before are delivered,
 * then -ENOMEM, for good; a UDP socket reports the lost datagram once
 * (-ENOMEM) and receives on.
 *
 * The queue's only allocation is its ring of buffers (push() in rxq.c),
 * made once more than one buffer is queued.
 * This file compiles rxq.c itself with malloc() replaced by one that fails
 * on demand; the library's own rxq.o is then never linked in (every symbol
 * it defines is defined here first), so sock.c and udp.c use this copy.
 */
#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>

/* Allocations rxq.c may still make before they fail; -1: no limit. */
static int rxq_allocs_left = -1;
static int rxq_allocs_failed;

static void *rxq_malloc(size_t n)
{
	if (rxq_allocs_left == 0) {
		rxq_allocs_failed++;
		errno = ENOMEM;
		return NULL;
	}
	if (rxq_allocs_left > 0)
		rxq_allocs_left--;
	return malloc(n);
}

#define malloc(n) rxq_malloc(n)
#include "rxq.c"
#undef malloc

#include "net_test.h"

#include "sock.h"

#define GUARD_MS 10000 /* bounds every wait: a failure, never a hang */

/* ------------------------------------------------------------ a stream */

/* More than 8 pool buffers (4 KiB): the queue holds the first in place,
 * its first ring holds 8, and growing that is the allocation that fails. */
#define NM_BYTES (8 * 4096 + 4000)

struct nm {
	struct giong_waitq wq;
	int setup, wait_ret;
	ssize_t end, again;
	long long got, bad;
};

static void wake_reader(struct giong_stream *s, void *ctx)
{
	struct nm *nm = ctx;

	(void)s;
	giong_waitq_wake_one(&nm->wq, 0);
}

static void stream_main(unsigned w, void *arg)
{
	struct nm *nm = arg;
	struct giong_stream *a, *b;
	struct giong__rxq *q;
	char *buf = malloc(NM_BYTES);
	uint64_t saved;
	ssize_t n;

	(void)w;
	giong_waitq_init(&nm->wq);
	nm->bad = -1;
	if (!buf || (nm->setup = giong_unix_pair(&a, &b))) {
		nm->setup = nm->setup ? nm->setup : -ENOMEM;
		free(buf);
		return;
	}
	q = &giong__net_sock_of(b)->rxq;
	/* The receive stays armed with nobody reading: everything that
	 * arrives is queued, the second buffer needs a ring (allowed), the
	 * ninth a bigger one. */
	nm->setup = giong_stream_on_readable(b, wake_reader, nm);
	rxq_allocs_left = 1;
	nt_fill(5, 0, buf, NM_BYTES);
	giong_stream_write_all(a, buf, NM_BYTES);
	giong_stream_close(a);
	saved = giong_deadline_in(GUARD_MS);
	while (!q->err && !q->eof && nm->wait_ret >= 0)
		nm->wait_ret = giong_waitq_wait(&nm->wq, 0);
	giong_deadline_restore(saved);
	rxq_allocs_left = -1;
	giong_stream_on_readable(b, NULL, NULL);

	/* A prefix of the stream, then the error: never bytes after a hole. */
	memset(buf, 0, NM_BYTES);
	while ((n = giong_stream_read(b, buf + nm->got, (size_t)(NM_BYTES - nm->got))) > 0)
		nm->got += n;
	nm->end = n;
	nm->again = giong_stream_read(b, buf, 1);
	nm->bad = nt_check(5, 0, buf, (size_t)nm->got);
	giong_stream_close(b);
	free(buf);
}

static void test_stream_error_not_hole(void **state)
{
	struct giong_config c = gt_config(1);
	struct nm nm;
	int fds = gt_count_fds();

	(void)state;
	memset(&nm, 0, sizeof(nm));
	rxq_allocs_failed = 0;
	gt_run(&c, stream_main, &nm, NULL);
	assert_int_equal(nm.setup, 0);
	assert_int_equal(nm.wait_ret, 0);
	assert_true(rxq_allocs_failed >= 1);
	/* The 8 buffers queued before the failure... */
	assert_true(nm.got > 0 && nm.got <= 8 * 4096 && nm.got < NM_BYTES);
	assert_int_equal(nm.bad, -1);
	/* ...then the error, where a clean end would hide the hole. */
	assert_int_equal(nm.end, -ENOMEM);
	assert_int_equal(nm.again, -ENOMEM);
	gt_assert_fds(fds);
}

/* ---------------------------------------------------------------- UDP */

struct nu {
	int setup;
	ssize_t got[4]; /* each receive's result */
	char byte[4];   /* and its byte */
};

/* One datagram's length (its first byte in *@byte), or -errno; bounded. */
static ssize_t recv_byte(struct giong_udp *u, char *byte)
{
	uint64_t saved = giong_deadline_in(GUARD_MS); /* without the fix: lost, silently */
	struct giong_recvbuf *b;
	ssize_t n = giong_udp_recv(u, &b, NULL);

	giong_deadline_restore(saved);
	if (n > 0) {
		*byte = *(const char *)giong_recvbuf_data(b);
		giong_recvbuf_release(b);
	}
	return n;
}

static void udp_main(unsigned w, void *arg)
{
	struct nu *nu = arg;
	struct giong_udp *u, *tx;
	struct giong_addr ua;
	uint64_t until;

	(void)w;
	if ((nu->setup = giong_udp_bind("127.0.0.1:0", NULL, &u)))
		return;
	if ((nu->setup = giong_udp_bind("127.0.0.1:0", NULL, &tx)) ||
	    (nu->setup = giong_udp_local_addr(u, &ua))) {
		giong_udp_close(u);
		return;
	}
	/* One queued datagram is held in place: no allocation. */
	rxq_allocs_left = 0;
	giong_udp_send_to(tx, "1", 1, &ua);
	nu->got[0] = recv_byte(u, &nu->byte[0]);
	/* The receive stays armed, nobody takes: the second datagram queued
	 * needs the queue's ring, and cannot have it. */
	giong_udp_send_to(tx, "2", 1, &ua);
	giong_udp_send_to(tx, "3", 1, &ua);
	until = giong_now_ms() + GUARD_MS;
	while (!rxq_allocs_failed && giong_now_ms() < until)
		giong_sleep_ms(1);
	rxq_allocs_left = -1;
	/* What was queued, then the loss reported once; the next datagram
	 * comes through. */
	nu->got[1] = recv_byte(u, &nu->byte[1]);
	nu->got[2] = recv_byte(u, &nu->byte[2]);
	giong_udp_send_to(tx, "4", 1, &ua);
	nu->got[3] = recv_byte(u, &nu->byte[3]);
	giong_udp_close(tx);
	giong_udp_close(u);
}

static void test_udp_error_once(void **state)
{
	struct giong_config c = gt_config(1);
	struct nu nu;
	int fds = gt_count_fds();

	(void)state;
	memset(&nu, 0, sizeof(nu));
	rxq_allocs_failed = 0;
	gt_run(&c, udp_main, &nu, NULL);
	assert_int_equal(nu.setup, 0);
	assert_int_equal(nu.got[0], 1);
	assert_int_equal(nu.byte[0], '1');
	assert_true(rxq_allocs_failed >= 1);
	assert_int_equal(nu.got[1], 1);
	assert_int_equal(nu.byte[1], '2');
	assert_int_equal(nu.got[2], -ENOMEM);
	assert_int_equal(nu.got[3], 1);
	assert_int_equal(nu.byte[3], '4');
	gt_assert_fds(fds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_error_not_hole),
		cmocka_unit_test(test_udp_error_once),
	};

	gt_require_runtime();
	if (getenv("NT_FILTER"))
		cmocka_set_test_filter(getenv("NT_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
