/* SPDX-License-Identifier: MIT */
/*
 * test_ktls_kernel.c - kernel TLS with no TLS library (ktls_test.h): 1 MiB byte-exact for each
 * cipher and version the kernel takes (written with write() and send()), a file spliced and
 * sent into a kTLS socket, MSG_WAITALL refused on a kTLS send, what setsockopt() takes and
 * refuses, and a record that does not decrypt.
 */
#include "ktls_test.h"

#include <sys/sendfile.h>

/* Read exactly n bytes (recv in uneven pieces, across record boundaries): 0 or -errno
 * (-EPIPE at an early EOF). */
static int recv_exact(int fd, unsigned char *buf, size_t n)
{
	static const size_t piece[] = {1, 5000, 16384, 70000, 333};
	size_t got = 0;

	for (unsigned i = 0; got < n; i++) {
		size_t want = piece[i % 5] < n - got ? piece[i % 5] : n - got;
		ssize_t r = recv(fd, buf + got, want, 0);

		if (r < 0 && retry_eintr()) {
			print_message("recv: EINTR at byte %zu\n", got);
			continue;
		}
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EPIPE;
		got += (size_t)r;
	}
	return 0;
}

enum how { HOW_WRITE_SEND, HOW_SPLICE };

struct writer {
	int fd;
	enum how how;
	const char *tmpdir;
	int err;        /* 0 or -errno of the first failed call */
	int ring_err;   /* the io_uring part of HOW_SPLICE: 0 or the CQE's res */
	const char *at; /* which call failed */
};

/* HOW_WRITE_SEND: the first half with write(), the rest with send(), in uneven pieces (records
 * of 1 byte, of exactly 16 KiB, larger than a record). */
static void write_send(struct writer *w)
{
	static const size_t piece[] = {1, 17, 1000, 4096, 16383, 16384, 16385, 65536, 100000};
	size_t off = 0;

	for (unsigned i = 0; off < DATA_LEN; i++) {
		size_t n = piece[i % 9] < DATA_LEN - off ? piece[i % 9] : DATA_LEN - off;
		ssize_t r = off < DATA_LEN / 2 ? write(w->fd, pattern + off, n)
					       : send(w->fd, pattern + off, n, 0);

		if (r < 0 && retry_eintr())
			continue;
		if (r <= 0) {
			w->err = r < 0 ? -errno : -EIO;
			w->at = off < DATA_LEN / 2 ? "write" : "send";
			return;
		}
		off += (size_t)r;
	}
}

/* Move n bytes from the pipe's read end into the socket with splice(2). */
static int splice_out(int pr, int fd, size_t n)
{
	while (n) {
		ssize_t r = splice(pr, NULL, fd, NULL, n, SPLICE_F_MOVE);

		if (r < 0 && retry_eintr())
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		n -= (size_t)r;
	}
	return 0;
}

/* HOW_SPLICE: the pattern in a file; its first third spliced file -> pipe -> socket with
 * splice(2), the second with io_uring's SPLICE (pipe -> socket), the rest with sendfile(2). */
static void splice_send(struct writer *w)
{
	const size_t third = DATA_LEN / 3;
	char path[256];
	int file, p[2] = {-1, -1};
	struct io_uring ring;
	loff_t off = 0;
	off_t soff;

	snprintf(path, sizeof(path), "%s/ktls_kernel.XXXXXX", w->tmpdir);
	file = mkstemp(path);
	if (file < 0 || (unlink(path), write(file, pattern, DATA_LEN)) != (ssize_t)DATA_LEN) {
		w->err = -errno, w->at = "file";
		goto out;
	}
	if (pipe2(p, O_CLOEXEC)) {
		w->err = -errno, w->at = "pipe";
		goto out;
	}
	while ((size_t)off < third) {
		size_t n = third - (size_t)off < 65536 ? third - (size_t)off : 65536;
		ssize_t r = splice(file, &off, p[1], NULL, n, SPLICE_F_MOVE);

		if (r <= 0 || (w->err = splice_out(p[0], w->fd, (size_t)r))) {
			w->err = w->err ? w->err : r < 0 ? -errno : -EIO;
			w->at = "splice";
			goto out;
		}
	}
	if ((w->err = io_uring_queue_init(4, &ring, 0))) {
		w->at = "io_uring_queue_init";
		goto out;
	}
	while ((size_t)off < 2 * third) {
		size_t n = 2 * third - (size_t)off < 65536 ? 2 * third - (size_t)off : 65536;
		ssize_t r = splice(file, &off, p[1], NULL, n, SPLICE_F_MOVE);
		struct io_uring_sqe *sqe;
		struct io_uring_cqe *cqe;
		struct __kernel_timespec ts = {.tv_sec = IO_TIMEOUT_S};

		if (r <= 0) {
			w->err = r < 0 ? -errno : -EIO, w->at = "splice to the pipe";
			break;
		}
		/* The pipe's r bytes into the socket; a short splice goes round again. */
		while (r > 0) {
			sqe = io_uring_get_sqe(&ring);
			io_uring_prep_splice(sqe, p[0], -1, w->fd, -1, (unsigned)r, SPLICE_F_MOVE);
			io_uring_submit(&ring);
			if (io_uring_wait_cqe_timeout(&ring, &cqe, &ts)) {
				w->ring_err = -ETIME;
				break;
			}
			if (cqe->res <= 0) {
				w->ring_err = cqe->res ? cqe->res : -EIO;
				io_uring_cqe_seen(&ring, cqe);
				break;
			}
			r -= cqe->res;
			io_uring_cqe_seen(&ring, cqe);
		}
		if (w->ring_err)
			break;
	}
	io_uring_queue_exit(&ring);
	if (w->err || w->ring_err) {
		w->at = w->at ? w->at : "io_uring splice";
		goto out;
	}
	soff = off;
	while (soff < (off_t)DATA_LEN) {
		ssize_t r = sendfile(w->fd, file, &soff, DATA_LEN - (size_t)soff);

		if (r < 0 && retry_eintr())
			continue;
		if (r <= 0) {
			w->err = r < 0 ? -errno : -EIO, w->at = "sendfile";
			break;
		}
	}
out:
	if (file >= 0)
		close(file);
	if (p[0] >= 0)
		close(p[0]), close(p[1]);
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;

	if (w->how == HOW_WRITE_SEND)
		write_send(w);
	else
		splice_send(w);
	if (w->err || w->ring_err)
		shutdown(w->fd, SHUT_WR); /* the reader sees EOF at once, not its timeout */
	return NULL;
}

/* A sends DATA_LEN bytes by `how`; B reads them back through kTLS, byte-exact. */
static void move_data(int fd[2], enum how how)
{
	struct writer w = {.fd = fd[0], .how = how, .tmpdir = getenv("TMPDIR")};
	unsigned char *got = malloc(DATA_LEN);
	pthread_t t;
	int rc;

	assert_non_null(got);
	if (!w.tmpdir || !*w.tmpdir)
		w.tmpdir = "/tmp";
	assert_int_equal(pthread_create(&t, NULL, writer_main, &w), 0);
	rc = recv_exact(fd[1], got, DATA_LEN);
	pthread_join(t, NULL);
	if (w.err || w.ring_err)
		print_message("writer: %s failed: %d (%s); io_uring: %d\n", w.at, w.err,
			      strerror(-w.err), w.ring_err);
	assert_int_equal(w.err, 0);
	assert_int_equal(w.ring_err, 0);
	assert_int_equal(rc, 0);
	assert_memory_equal(got, pattern, DATA_LEN);
	free(got);
}

/* ---------------------------------------------------------------- data, per cipher */

static void test_cipher(void **state)
{
	const struct kcipher *c = *state;
	long tx = tls_stat("TlsTxSw"), rx = tls_stat("TlsRxSw");
	int fd[2], rc = ktls_pair(fd, c);

	if (rc && !c->required) {
		print_message("%s: refused by setsockopt(SOL_TLS): %s\n", c->name, strerror(-rc));
		pair_close(fd);
		skip();
	}
	assert_int_equal(rc, 0);
	/* The kernel counts each direction it took, in software (no NIC offload here); other
	 * tests may run at the same time, so at least one more. */
	assert_true(tls_stat("TlsTxSw") > tx && tls_stat("TlsRxSw") > rx);
	assert_true(tls_stat("TlsCurrTxSw") >= 1 && tls_stat("TlsCurrRxSw") >= 1);
	/* giong's socket writes ask for MSG_WAITALL; a kTLS socket refuses the flag outright,
	 * before sending anything (tls_sw_sendmsg's flag check). */
	errno = 0;
	assert_int_equal(send(fd[0], "x", 1, MSG_WAITALL), -1);
	assert_int_equal(errno, EOPNOTSUPP);
	move_data(fd, HOW_WRITE_SEND);
	print_message("%s: 1 MiB byte-exact\n", c->name);
	pair_close(fd);
}

/* What setsockopt() takes and refuses around a kTLS socket. */
static void test_setup_rules(void **state)
{
	union kinfo k, back;
	socklen_t len = kinfo_fill(&k, &kciphers[0]), blen = sizeof(back);
	int fd[2], one = 1, e[5];

	(void)state;
	/* SOL_TLS before the ULP: the TCP socket has no such level. */
	assert_int_equal(tcp_pair(fd), 0);
	e[0] = setsockopt(fd[0], SOL_TLS, TLS_TX, &k, len) ? errno : 0;
	/* A version the kernel does not know (TLS 1.1): refused, the socket stays plain TCP. */
	assert_int_equal(ulp_tls(fd[0]), 0);
	k.info.version = 0x0302;
	e[1] = setsockopt(fd[0], SOL_TLS, TLS_TX, &k, len) ? errno : 0;
	k.info.version = TLS_1_3_VERSION;
	pair_close(fd);
	print_message("SOL_TLS without the ULP: %s; TLS 1.1: %s\n", ename(e[0]), ename(e[1]));
	assert_int_equal(e[0], ENOPROTOOPT);
	assert_int_equal(e[1], EINVAL);

	assert_int_equal(ktls_pair(fd, &kciphers[0]), 0);
	/* Each direction once: no rekeying on 6.1 (6.14 takes a new TLS_RX after a KeyUpdate). */
	e[2] = setsockopt(fd[0], SOL_TLS, TLS_TX, &k, len) ? errno : 0;
	e[3] = setsockopt(fd[1], SOL_TLS, TLS_RX, &k, len) ? errno : 0;
	/* TLS 1.3 receive without padding (zero-copy decrypt; 6.0+). */
	e[4] = setsockopt(fd[1], SOL_TLS, TLS_RX_EXPECT_NO_PAD, &one, sizeof(one)) ? errno : 0;
	print_message("TLS_TX again: %s; TLS_RX again: %s; TLS_RX_EXPECT_NO_PAD: %s\n", ename(e[2]),
		      ename(e[3]), ename(e[4]));
	assert_int_equal(e[2], EBUSY);
	assert_int_equal(e[3], EBUSY);
	assert_int_equal(e[4], 0);
	/* The kernel gives the crypto info back, key included, into exactly the cipher's size. */
	e[0] = getsockopt(fd[0], SOL_TLS, TLS_TX, &back, &blen) ? errno : 0;
	blen = len;
	memset(&back, 0, sizeof(back));
	e[1] = getsockopt(fd[0], SOL_TLS, TLS_TX, &back, &blen) ? errno : 0;
	print_message("getsockopt(TLS_TX) into a larger buffer: %s; its size: %s\n", ename(e[0]),
		      ename(e[1]));
	assert_int_equal(e[0], EINVAL);
	assert_int_equal(e[1], 0);
	assert_int_equal(blen, len);
	assert_memory_equal(&back, &k, len);
	/* Still a working pair. */
	assert_int_equal(send(fd[0], "ok", 2, 0), 2);
	assert_int_equal(recv(fd[1], &back, sizeof(back), 0), 2);
	pair_close(fd);
}

/* A record that does not decrypt (a wrong key; what a TLS 1.3 KeyUpdate's next record is on
 * 6.1) ends the receive side for good. */
static void test_wrong_key(void **state)
{
	union kinfo k;
	socklen_t len = kinfo_fill(&k, &kciphers[0]);
	struct timeval tv = {.tv_sec = 1};
	int fd[2], e[3];
	char buf[16];

	(void)state;
	assert_int_equal(tcp_pair(fd), 0);
	assert_int_equal(ulp_tls(fd[0]), 0);
	assert_int_equal(ulp_tls(fd[1]), 0);
	assert_int_equal(setsockopt(fd[0], SOL_TLS, TLS_TX, &k, len), 0);
	k.g128.key[0] ^= 1;
	assert_int_equal(setsockopt(fd[1], SOL_TLS, TLS_RX, &k, len), 0);
	/* After the first error the receiver may wait for a record that never comes: not long. */
	assert_int_equal(setsockopt(fd[1], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	assert_int_equal(send(fd[0], "x", 1, 0), 1);
	for (int i = 0; i < 2; i++)
		e[i] = recv(fd[1], buf, sizeof(buf), 0) < 0 ? errno : 0;
	/* The sender learns nothing; a later record finds the receiver dead still. */
	assert_int_equal(send(fd[0], "y", 1, 0), 1);
	e[2] = recv(fd[1], buf, sizeof(buf), 0) < 0 ? errno : 0;
	print_message("recv of a record that does not decrypt: %s, again: %s, later: %s\n",
		      ename(e[0]), ename(e[1]), ename(e[2]));
	assert_int_equal(e[0], EBADMSG);
	assert_int_equal(e[1], EBADMSG);
	assert_int_equal(e[2], EBADMSG);
	pair_close(fd);
}

/* ---------------------------------------------------------------- splice, sendfile */

static void test_splice(void **state)
{
	int fd[2];

	(void)state;
	assert_int_equal(ktls_pair(fd, &kciphers[0]), 0);
	move_data(fd, HOW_SPLICE);
	pair_close(fd);
}

/* Which drivers the kernel picked for the AEADs kTLS asked for (/proc/crypto lists an instance
 * once made): the CPU's (aesni, x86_64 ChaCha) or the generic C ones. Printed for the notes. */
static void print_drivers(void)
{
	FILE *f = fopen("/proc/crypto", "r");
	char line[256], name[128] = "";

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *v = strchr(line, ':');

		if (!v)
			continue;
		v += 2;
		v[strcspn(v, "\n")] = 0;
		if (!strncmp(line, "name ", 5))
			snprintf(name, sizeof(name), "%s", v);
		else if (!strncmp(line, "driver ", 7) &&
			 (!strcmp(name, "gcm(aes)") || !strcmp(name, "rfc7539(chacha20,poly1305)")))
			printf("kernel AEAD %s: driver %s\n", name, v);
	}
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_prestate(test_cipher, (void *)&kciphers[0]),
		cmocka_unit_test_prestate(test_cipher, (void *)&kciphers[1]),
		cmocka_unit_test_prestate(test_cipher, (void *)&kciphers[2]),
		cmocka_unit_test_prestate(test_cipher, (void *)&kciphers[3]),
		cmocka_unit_test_prestate(test_cipher, (void *)&kciphers[4]),
		cmocka_unit_test_prestate(test_cipher, (void *)&kciphers[5]),
		cmocka_unit_test(test_splice),
		cmocka_unit_test(test_setup_rules),
		cmocka_unit_test(test_wrong_key),
	};
	int rc = ktls_run_tests("test_ktls_kernel", tests);

	if (rc != GT_SKIP)
		print_drivers();
	return rc;
}
