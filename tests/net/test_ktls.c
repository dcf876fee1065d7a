/* SPDX-License-Identifier: MIT */
/*
 * test_ktls.c - kernel TLS on a TCP socket stream (giong/net/ktls.h), send direction:
 *  - bad arguments are refused, never a crash; RX is -EOPNOTSUPP until it is built;
 *    a Unix stream has none (-ENOTSUP); a record with no kernel TLS is -ENOTCONN;
 *  - a refusal leaves the socket a plain TCP socket that still carries bytes both ways:
 *    where the kernel has no TLS, -ENOENT (-ENOPROTOOPT); where it has, a version it
 *    does not take (-EINVAL);
 *  - with the kernel's TLS (the 6.1 guest loads the module; this machine's kernel has
 *    none, and the case says so and skips): the server's writes, a send of three
 *    buffers and a splice from a pipe leave as records that a plain socket with the same
 *    keys in its receive direction reads back byte for byte, and a close_notify sent
 *    with giong_stream_ktls_send_record() (and its _nowait twin) arrives as a record of
 *    type 21.
 * Results are recorded inside tasks and asserted after the runtime returns.
 */
#include <fcntl.h>
#include <linux/tls.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net_test.h"

#ifndef SOL_TLS
#define SOL_TLS 282
#endif

#define TOTAL (1024 * 1024 + 333)

/* TLS 1.3, AES-128-GCM, a fixed key: both ends use the same material. */
static struct tls12_crypto_info_aes_gcm_128 keys(void)
{
	struct tls12_crypto_info_aes_gcm_128 k = {
		.info = {.version = TLS_1_3_VERSION, .cipher_type = TLS_CIPHER_AES_GCM_128}};

	for (unsigned i = 0; i < sizeof(k.key); i++)
		k.key[i] = (unsigned char)(0x40 + i);
	memcpy(k.salt, "\x01\x02\x03\x04", 4);
	memcpy(k.iv, "\x05\x06\x07\x08\x09\x0a\x0b\x0c", 8);
	return k; /* rec_seq 0 */
}

/* ------------------------------------------------------------ arguments */

static void arguments_main(unsigned w, void *arg)
{
	struct tls12_crypto_info_aes_gcm_128 k = keys();
	struct giong_stream *c, *s, *u[2];
	char b[2] = {1, 0};
	(void)w;
	(void)arg;

	gt_check_int_equal(giong_stream_ktls_start(NULL, GIONG_KTLS_TX, &k, sizeof(k)), -EINVAL);
	gt_check_int_equal(giong_stream_ktls_send_record(NULL, 21, b, 2), -EINVAL);
	if (!gt_check_int_equal(nt_tcp_pair(&c, &s), 0))
		return;
	gt_check_int_equal(giong_stream_ktls_start(s, GIONG_KTLS_TX, NULL, sizeof(k)), -EINVAL);
	gt_check_int_equal(giong_stream_ktls_start(s, GIONG_KTLS_TX, &k, sizeof(k) - 1), -EINVAL);
	gt_check_int_equal(giong_stream_ktls_start(s, 3, &k, sizeof(k)), -EINVAL);
	gt_check_int_equal(giong_stream_ktls_start(s, GIONG_KTLS_RX, &k, sizeof(k)), -EOPNOTSUPP);
	gt_check_int_equal(giong_stream_ktls_send_record(s, 21, b, 2), -ENOTCONN);
	gt_check_int_equal(giong_stream_ktls_send_record(s, 23, b, 2), -EINVAL);
	gt_check_int_equal(giong_stream_ktls_send_record(s, 21, NULL, 2), -EINVAL);
	gt_check_int_equal(giong_stream_ktls_send_record(s, 21, b, 16385), -EINVAL);
	gt_check_int_equal(giong_stream_ktls_send_record_nowait(NULL, 21, b, 2), -EINVAL);
	gt_check_int_equal(giong_stream_ktls_send_record_nowait(s, 23, b, 2), -EINVAL);
	gt_check_int_equal(giong_stream_ktls_send_record_nowait(s, 21, b, 2), -ENOTCONN);
	if (gt_check_int_equal(giong_unix_pair(&u[0], &u[1]), 0)) {
		gt_check_int_equal(giong_stream_ktls_start(u[0], GIONG_KTLS_TX, &k, sizeof(k)),
				   -ENOTSUP);
		giong_stream_close(u[0]);
		giong_stream_close(u[1]);
	}
	giong_stream_close(c);
	giong_stream_close(s);
}

static void test_arguments(void **state)
{
	struct giong_config cfg = gt_config(1);

	(void)state;
	gt_run(&cfg, arguments_main, NULL, NULL);
}

/* ------------------------------------------------ a refusal stays plain */

/* @n bytes from @from to @to, checked. */
static void carries(struct giong_stream *from, struct giong_stream *to, uint64_t seed, size_t n)
{
	char *out = malloc(n), *in = malloc(n);

	if (gt_check_non_null(out) && gt_check_non_null(in)) {
		nt_fill(seed, 0, out, n);
		gt_check_int_equal(giong_stream_write_all(from, out, n), (ssize_t)n);
		gt_check_int_equal(nt_stream_read_exact(to, in, n), (ssize_t)n);
		gt_check_int_equal(nt_check(seed, 0, in, n), -1);
	}
	free(out);
	free(in);
}

static void refused_main(unsigned w, void *arg)
{
	struct tls12_crypto_info_aes_gcm_128 k = keys();
	struct giong_stream *c, *s;
	int has = *(int *)arg, r;
	(void)w;

	if (!gt_check_int_equal(nt_tcp_pair(&c, &s), 0))
		return;
	if (has == 0)
		k.info.version = 0x0300; /* SSL 3.0: no kernel takes it */
	r = giong_stream_ktls_start(s, GIONG_KTLS_TX, &k, sizeof(k));
	if (has == 0)
		gt_check_int_equal(r, -EINVAL);
	else
		gt_check_true(r == -ENOENT || r == -ENOPROTOOPT);
	/* Still a plain socket, both ways. */
	carries(s, c, 3, 200000);
	carries(c, s, 4, 200000);
	giong_stream_close(c);
	giong_stream_close(s);
}

static void test_refusal_stays_plain(void **state)
{
	struct giong_config cfg = gt_config(1);
	int has = giong_ktls_probe();

	(void)state;
	gt_run(&cfg, refused_main, &has, NULL);
}

/* ------------------------------------------------------------ records */

struct sent {
	struct giong_stream_send req;
	struct giong_waitq wq;
	ssize_t res;
	int calls;
};

static void on_sent(struct giong_stream_send *req, ssize_t res)
{
	struct sent *x = req->data;

	x->calls++;
	x->res = res;
	giong_waitq_wake_all(&x->wq, 0);
}

/* The next record on plain socket @fd (kernel TLS receive side): its type and bytes. */
static ssize_t read_record(int fd, uint8_t *type, void *buf, size_t len)
{
	union {
		char buf[CMSG_SPACE(sizeof(uint8_t))];
		struct cmsghdr align;
	} control;
	struct iovec iov = {buf, len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	struct io_uring_sqe *sqe = giong_sqe();
	struct cmsghdr *cm;
	int n;

	if (!sqe)
		return -EBUSY;
	memset(&control, 0, sizeof(control));
	mh.msg_control = control.buf;
	mh.msg_controllen = sizeof(control.buf);
	io_uring_prep_recvmsg(sqe, fd, &mh, 0);
	n = giong_io(sqe);
	cm = CMSG_FIRSTHDR(&mh);
	*type = 23;
	if (n >= 0 && cm && cm->cmsg_level == SOL_TLS && cm->cmsg_type == TLS_GET_RECORD_TYPE)
		memcpy(type, CMSG_DATA(cm), 1);
	return n;
}

static void records_main(unsigned w, void *arg)
{
	struct tls12_crypto_info_aes_gcm_128 k = keys();
	struct giong_stream *c, *s;
	struct sent x = {0};
	char *out = malloc(TOTAL), *in = malloc(TOTAL);
	struct iovec three[3];
	size_t off, part;
	uint8_t type = 0;
	char alert[2];
	int cfd, p[2] = {-1, -1};
	(void)w;
	(void)arg;

	if (!gt_check_non_null(out) || !gt_check_non_null(in) ||
	    !gt_check_int_equal(nt_tcp_pair(&c, &s), 0))
		goto out;
	nt_fill(9, 0, out, TOTAL);
	/* The server sends through the kernel's TLS; the client's socket decrypts
	 * with the same keys (no TLS library on either side). */
	gt_check_int_equal(giong_stream_ktls_start(s, GIONG_KTLS_TX, &k, sizeof(k)), 0);
	gt_check_int_equal(giong_stream_ktls_start(s, GIONG_KTLS_TX, &k, sizeof(k)), -EALREADY);
	cfd = giong_stream_fd(c);
	gt_check_true(cfd >= 0);
	gt_check_int_equal(setsockopt(cfd, SOL_TCP, TCP_ULP, "tls", sizeof("tls")), 0);
	gt_check_int_equal(setsockopt(cfd, SOL_TLS, TLS_RX, &k, sizeof(k)), 0);

	/* A write of half of it: whole, short counts inside are the stream's. */
	part = TOTAL / 2;
	gt_check_int_equal(giong_stream_write_all(s, out, part), (ssize_t)part);
	off = part;
	/* A send of three buffers whose sizes cut records anywhere: all of it. */
	part = (TOTAL - off) / 2;
	three[0] = (struct iovec){out + off, 1};
	three[1] = (struct iovec){out + off + 1, part - 4097};
	three[2] = (struct iovec){out + off + part - 4096, 4096};
	x.req.done = on_sent;
	x.req.data = &x;
	giong_waitq_init(&x.wq);
	gt_check_int_equal(giong_stream_send_start(s, &x.req, three, 3), 0);
	/* Read while it goes: 1 MiB is more than the two socket buffers hold. */
	gt_check_int_equal(nt_stream_read_exact(c, in, off + part), (ssize_t)(off + part));
	while (!x.calls)
		if (giong_waitq_wait(&x.wq, 0) < 0)
			break;
	gt_check_int_equal(x.res, (ssize_t)part);
	off += part;
	/* The rest through a pipe: spliced into the socket, encrypted on the way. */
	part = TOTAL - off;
	if (gt_check_int_equal(pipe(p), 0)) {
		gt_check_int_equal(fcntl(p[1], F_SETPIPE_SZ, 1 << 20) >= (int)part, 1);
		gt_check_int_equal(write(p[1], out + off, part), (ssize_t)part);
		for (size_t done = 0; done < part;) {
			ssize_t n = giong_stream_splice(s, p[0], part - done);

			if (!gt_check_true(n > 0))
				break;
			done += (size_t)n;
		}
	}
	gt_check_int_equal(nt_stream_read_exact(c, in + off, part), (ssize_t)part);
	gt_check_int_equal(nt_check(9, 0, in, TOTAL), -1);

	/* close_notify: a record of type 21, read with its type. */
	gt_check_int_equal(giong_stream_ktls_send_record(s, 21, "\x01\x00", 2), 2);
	gt_check_int_equal(read_record(cfd, &type, alert, sizeof(alert)), 2);
	gt_check_int_equal(type, 21);
	gt_check_int_equal(alert[0], 1);
	gt_check_int_equal(alert[1], 0);
	/* The same without waiting (a close's path): a record of type 21 too. */
	gt_check_int_equal(giong_stream_ktls_send_record_nowait(s, 21, "\x01\x00", 2), 2);
	gt_check_int_equal(read_record(cfd, &type, alert, sizeof(alert)), 2);
	gt_check_int_equal(type, 21);
	giong_stream_close(c);
	giong_stream_close(s);
out:
	if (p[0] >= 0) {
		close(p[0]);
		close(p[1]);
	}
	free(out);
	free(in);
}

static void test_records(void **state)
{
	struct giong_config cfg = gt_config(1);
	int has = giong_ktls_probe();

	(void)state;
	if (has) {
		fprintf(stderr,
			"SKIP: the kernel lacks TLS (CONFIG_TLS, the tls module): "
			"TCP_ULP tls: %s\n",
			strerror(-has));
		skip();
	}
	gt_run(&cfg, records_main, NULL, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arguments),
		cmocka_unit_test(test_refusal_stays_plain),
		cmocka_unit_test(test_records),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
