/* SPDX-License-Identifier: MIT */
/*
 * test_ktls.c - kernel TLS on a TCP socket stream (giong/net/ktls.h):
 *  - bad arguments are refused, never a crash; a Unix stream has none (-ENOTSUP); a
 *    record with no kernel TLS is -ENOTCONN;
 *  - a refusal leaves the socket a plain TCP socket that still carries bytes both ways:
 *    where the kernel has no TLS, -ENOENT (-ENOPROTOOPT); where it has, a version it
 *    does not take (-EINVAL);
 *  - with the kernel's TLS (the 6.1 guest loads the module; this machine's kernel has
 *    none, and the case says so and skips): the server's writes, a send of three
 *    buffers and a splice from a pipe leave as records that a plain socket with the same
 *    keys in its receive direction reads back byte for byte, and a close_notify sent
 *    with giong_stream_ktls_send_record() (and its _nowait twin) arrives as a record of
 *    type 21;
 *  - receive, in the guest: bytes received but not read refuse the hand-over (-EAGAIN);
 *    once read, the socket's records sealed by a plain socket's kernel TLS arrive as
 *    plaintext (1 MiB byte for byte), a handshake record and a close_notify between
 *    them answer -EIO and are read with giong_stream_ktls_recv_record() with their
 *    types, and data after them and the end still arrive.
 * Results are recorded inside tasks and asserted after the runtime returns.
 */
#include <fcntl.h>
#include <linux/tls.h>
#include <netinet/tcp.h>
#include <pthread.h>
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
	gt_check_int_equal(giong_stream_ktls_recv_record(NULL, (uint8_t *)b, b, 2), -EINVAL);
	gt_check_int_equal(giong_stream_ktls_recv_record(s, NULL, b, 2), -EINVAL);
	gt_check_int_equal(giong_stream_ktls_recv_record(s, (uint8_t *)b, b, 0), -EINVAL);
	gt_check_int_equal(giong_stream_ktls_recv_record(s, (uint8_t *)b, b, 2), -ENOTCONN);
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
	/* The receive direction too, with its receive ahead stopped for the question
	 * and started again after the refusal. */
	r = giong_stream_ktls_start(s, GIONG_KTLS_RX, &k, sizeof(k));
	if (has == 0)
		gt_check_int_equal(r, -EINVAL);
	else
		gt_check_true(r == -ENOENT || r == -ENOPROTOOPT);
	carries(c, s, 5, 200000);
	carries(s, c, 6, 200000);
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

/* A record of @type with @len bytes at @buf sealed by plain socket @fd's kernel TLS. */
static ssize_t send_record_raw(int fd, uint8_t type, const void *buf, size_t len)
{
	union {
		char buf[CMSG_SPACE(sizeof(uint8_t))];
		struct cmsghdr align;
	} control = {0};
	struct iovec iov = {(void *)buf, len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *cm;

	mh.msg_control = control.buf;
	mh.msg_controllen = sizeof(control.buf);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_TLS;
	cm->cmsg_type = TLS_SET_RECORD_TYPE;
	cm->cmsg_len = CMSG_LEN(1);
	memcpy(CMSG_DATA(cm), &type, 1);
	return sendmsg(fd, &mh, MSG_NOSIGNAL);
}

/* The client writes with plain system calls from its own thread (1 MiB is more than
 * the socket buffers hold, and the server must be reading meanwhile). */
struct writer {
	int fd;
	const char *out;
	struct tls12_crypto_info_aes_gcm_128 k;
	int err; /* the first step that failed, 0 if none */
};

static void *writer_main(void *arg)
{
	struct writer *wr = arg;
	const char ticket[4] = {4, 0, 0, 0}; /* a NewSessionTicket's head, empty */

	if (setsockopt(wr->fd, SOL_TCP, TCP_ULP, "tls", sizeof("tls")) ||
	    setsockopt(wr->fd, SOL_TLS, TLS_TX, &wr->k, sizeof(wr->k)))
		wr->err = 1;
	for (size_t off = 0; !wr->err && off < TOTAL;) {
		ssize_t n = write(wr->fd, wr->out + off, TOTAL - off);

		if (n <= 0)
			wr->err = 2;
		else
			off += (size_t)n;
	}
	if (!wr->err && send_record_raw(wr->fd, 22, ticket, 4) != 4)
		wr->err = 3;
	if (!wr->err && write(wr->fd, "after", 5) != 5)
		wr->err = 4;
	if (!wr->err && send_record_raw(wr->fd, 21, "\x01\x00", 2) != 2)
		wr->err = 5;
	if (!wr->err && shutdown(wr->fd, SHUT_WR))
		wr->err = 6;
	return NULL;
}

/* The receive direction to the kernel; again while a fault plan's full ring refuses
 * the cancel of the receive ahead (-EBUSY: nothing changed). */
static int start_rx(struct giong_stream *s, const struct tls12_crypto_info_aes_gcm_128 *k)
{
	int r, tries = 0;

	while ((r = giong_stream_ktls_start(s, GIONG_KTLS_RX, k, sizeof(*k))) == -EBUSY &&
	       ++tries < 100)
		giong_yield();
	return r;
}

static void receive_main(unsigned w, void *arg)
{
	struct tls12_crypto_info_aes_gcm_128 k = keys();
	struct writer wr = {.k = k};
	struct giong_stream *c, *s;
	struct giong_recvbuf *b = NULL;
	char *in = malloc(TOTAL), *out = malloc(TOTAL), rec[64];
	pthread_t t;
	uint8_t type = 0;
	(void)w;
	(void)arg;

	if (!gt_check_non_null(out) || !gt_check_non_null(in) ||
	    !gt_check_int_equal(nt_tcp_pair(&c, &s), 0))
		goto out;
	nt_fill(11, 0, out, TOTAL);
	wr.fd = giong_stream_fd(c);
	wr.out = out;
	gt_check_int_equal(write(wr.fd, "x", 1), 1);
	gt_check_int_equal(giong_stream_recv(s, &b), 1); /* arms the receive ahead */
	giong_recvbuf_release(b);
#ifndef GIONG_FAULTS
	/* Bytes received ahead of any reader are the library's: no hand-over yet. (A
	 * fault plan may end the receive ahead and leave it unarmed: "y" would then
	 * wait in the socket, and be the kernel's.) */
	gt_check_int_equal(write(wr.fd, "y", 1), 1);
	gt_check_int_equal(giong_sleep_ms(50), 0); /* "y" is queued by now */
	gt_check_int_equal(giong_stream_ktls_start(s, GIONG_KTLS_RX, &k, sizeof(k)), -EAGAIN);
	gt_check_int_equal(giong_stream_read(s, rec, sizeof(rec)), 1);
#endif
	gt_check_int_equal(start_rx(s, &k), 0);
	gt_check_int_equal(giong_stream_ktls_start(s, GIONG_KTLS_RX, &k, sizeof(k)), -EALREADY);
	if (!gt_check_int_equal(pthread_create(&t, NULL, writer_main, &wr), 0))
		goto close;
	gt_check_int_equal(nt_stream_read_exact(s, in, TOTAL), TOTAL);
	gt_check_int_equal(nt_check(11, 0, in, TOTAL), -1);
	/* The handshake record: -EIO, then read with its type; data goes on after. */
	gt_check_int_equal(giong_stream_read(s, rec, sizeof(rec)), -EIO);
	gt_check_int_equal(giong_stream_ktls_recv_record(s, &type, rec, sizeof(rec)), 4);
	gt_check_int_equal(type, 22);
	gt_check_int_equal(giong_stream_recv(s, &b), 5);
	if (b)
		gt_check_int_equal(memcmp(giong_recvbuf_data(b), "after", 5), 0);
	giong_recvbuf_release(b);
	/* close_notify, then the end of the stream. */
	gt_check_int_equal(giong_stream_recv(s, &b), -EIO);
	gt_check_int_equal(giong_stream_ktls_recv_record(s, &type, rec, sizeof(rec)), 2);
	gt_check_int_equal(type, 21);
	gt_check_int_equal(rec[0] == 1 && rec[1] == 0, 1);
	gt_check_int_equal(giong_stream_read(s, rec, sizeof(rec)), 0);
	pthread_join(t, NULL);
	gt_check_int_equal(wr.err, 0);
close:
	giong_stream_close(c);
	giong_stream_close(s);
out:
	free(out);
	free(in);
}

/* Skip (77) where the kernel has no TLS, saying so. */
static void need_kernel_tls(void)
{
	int has = giong_ktls_probe();

	if (has) {
		fprintf(stderr,
			"SKIP: the kernel lacks TLS (CONFIG_TLS, the tls module): "
			"TCP_ULP tls: %s\n",
			strerror(-has));
		skip();
	}
}

static void test_records(void **state)
{
	struct giong_config cfg = gt_config(1);

	(void)state;
	need_kernel_tls();
	gt_run(&cfg, records_main, NULL, NULL);
}

static void test_receive(void **state)
{
	struct giong_config cfg = gt_config(1);

	(void)state;
	need_kernel_tls();
	gt_run(&cfg, receive_main, NULL, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arguments),
		cmocka_unit_test(test_refusal_stays_plain),
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_receive),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
