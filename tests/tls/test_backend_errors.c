/* SPDX-License-Identifier: MIT */
/*
 * test_backend_errors.c - what a backend reports when a handshake or a
 * configuration fails, with one backend: the words of each verification
 * outcome (a misnamed host or address, a certificate for another purpose,
 * one that signed itself), chains the backend refuses (a chain certificate
 * too weak for OpenSSL's security level, a PEM block without its end), ALPN
 * lists at the header's limits, the peer's alerts in place of a handshake,
 * a read in flight when the stream breaks, and (OpenSSL) errors a program
 * left on its thread's error queue.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "faulty_stream.h"
#include "tls_test.h"

#ifdef GIONG_TLS_OPENSSL_H /* TT_BACKEND_HEADER is the OpenSSL backend's */
#include <openssl/err.h>
#define TT_OPENSSL 1
#else
#define TT_OPENSSL 0
#endif

/* --- files the test makes ------------------------------------------------------------------ */

static char tmpdir[64];

static const char *tmp_path(const char *name)
{
	static char p[4][256];
	static unsigned next;
	char *r = p[next++ % 4];

	snprintf(r, 256, "%s/%s", tmpdir, name);
	return r;
}

/* The contents of @path, NUL-terminated, in a heap buffer. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* @path: the server's chain with @extra after it. */
static void chain_with(const char *path, const char *extra, size_t extra_len)
{
	size_t n;
	char *pem = slurp(tt_path("server.pem"), &n);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(gt_write_all_fd(fd, pem, n), (ssize_t)n);
	assert_int_equal(gt_write_all_fd(fd, extra, extra_len), (ssize_t)extra_len);
	close(fd);
	free(pem);
}

static int setup(void **state)
{
	static const char open_block[] = "-----BEGIN CERTIFICATE-----\nMIIB\n";
	char cmd[1024];
	size_t n;
	char *weak;

	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/giong-tls-errors-XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	/* An RSA 1024 certificate: below OpenSSL's default security level (2). */
	snprintf(cmd, sizeof(cmd),
		 "openssl req -x509 -newkey rsa:1024 -nodes -keyout '%s' -out '%s' "
		 "-subj /CN=weak -days 30 2>/dev/null",
		 tmp_path("weak.key"), tmp_path("weak.pem"));
	assert_int_equal(system(cmd), 0);
	weak = slurp(tmp_path("weak.pem"), &n);
	chain_with(tmp_path("weakchain.pem"), weak, n);
	free(weak);
	/* The leaf, then a block that begins and never ends. */
	chain_with(tmp_path("openchain.pem"), open_block, sizeof(open_block) - 1);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* --- handshakes that fail, and the words for them ------------------------------------------ */

struct hs {
	struct giong_tls_config *srv, *cli;
	const char *name;
	int want;         /* the client's result */
	const char *why;  /* in the client's words (tt_connect_error), or NULL */
	int server_err;   /* the server's result (out) */
	const char *alpn; /* agreed on success, or NULL */
};

static void hs_main(unsigned worker, void *arg)
{
	struct hs *h = arg;
	struct giong_stream *s, *k;
	int r;

	(void)worker;
	r = tt_pair(h->srv, h->cli, h->name, &s, &k, &h->server_err);
	if (getenv("TT_VERBOSE"))
		fprintf(stderr, "%s: client %d (%s), server %d\n", h->name, r, tt_connect_error,
			h->server_err);
	gt_check_int_equal(r, h->want);
	if (r) {
		gt_check_null(k);
		gt_check_string_not_equal(tt_connect_error, "");
		if (h->why && !gt_check_non_null(strcasestr(tt_connect_error, h->why)))
			fprintf(stderr, "the client's words: %s\n", tt_connect_error);
		return;
	}
	if (h->alpn) {
		size_t len = 0;
		const char *p = giong_tls_alpn(k, &len);

		gt_check_true(p && len == strlen(h->alpn) && !memcmp(p, h->alpn, len));
	}
	giong_stream_close(s);
	giong_stream_close(k);
}

static void run_hs(struct hs *h)
{
	struct giong_config cfg = gt_config(1);

	gt_run(&cfg, hs_main, h, NULL);
	giong_tls_config_free(h->srv);
	giong_tls_config_free(h->cli);
}

static void test_hostname_mismatch(void **state)
{
	/* The server's certificate names localhost, 127.0.0.1 and ::1. */
	struct hs h = {.srv = tt_server("server", NULL),
		       .cli = tt_client(NULL),
		       .name = "other.test",
		       .want = GIONG_ETLS_CERT,
		       .why = "name mismatch"}; /* "hostname", "peer subject name" */

	(void)state;
	run_hs(&h);
}

static void test_ip_mismatch(void **state)
{
	struct hs h = {.srv = tt_server("server", NULL),
		       .cli = tt_client(NULL),
		       .name = "10.9.8.7",
		       .want = GIONG_ETLS_CERT,
		       .why = "address mismatch"}; /* "IP", "peer ip" */
	struct hs v6 = {
		.srv = tt_server("server", NULL), .cli = tt_client(NULL), .name = "::1", .want = 0};

	(void)state;
	run_hs(&h);
	run_hs(&v6); /* an address it names: fine */
}

static void test_wrong_purpose(void **state)
{
	/* A server presenting a certificate for clients only (clientAuth): its
	 * certificate is refused (GIONG_ETLS_CERT, as the header says of an
	 * unfit server certificate), on every backend. */
	struct hs h = {.srv = tt_server("client", NULL),
		       .cli = tt_client(NULL),
		       .name = "client.test",
		       .want = GIONG_ETLS_CERT,
		       .why = TT_OPENSSL ? "purpose" : "Ext Key Use"};

	(void)state;
	run_hs(&h);
}

/* --- the peer's alerts in place of a handshake --------------------------------------------- */

struct raw_alert {
	const char *bytes; /* the "server's" answer: one plaintext alert record */
	int want;
	const char *why;
};

static void raw_alert_main(unsigned worker, void *arg)
{
	struct raw_alert *ra = arg;
	struct giong_tls_config *cli = tt_client(NULL);
	struct giong_stream *a, *b, *k = (struct giong_stream *)1;
	int r;

	(void)worker;
	if (!gt_check_int_equal(giong_unix_pair(&a, &b), 0))
		goto out;
	gt_check_int_equal(giong_stream_write_all(b, ra->bytes, 7), 7);
	r = giong_tls_connect(a, cli, "localhost", &k);
	if (getenv("TT_VERBOSE"))
		fprintf(stderr, "alert %02x: %d (%s)\n", (unsigned char)ra->bytes[6], r,
			giong_tls_last_error(NULL));
	gt_check_int_equal(r, ra->want);
	gt_check_null(k);
	if (ra->why && !gt_check_non_null(strcasestr(giong_tls_last_error(NULL), ra->why)))
		fprintf(stderr, "the client's words: %s\n", giong_tls_last_error(NULL));
	/* The stream beneath is the caller's again, and still works. */
	gt_check_int_equal(giong_stream_write(a, "x", 1), 1);
	giong_stream_close(a);
	giong_stream_close(b);
out:
	giong_tls_config_free(cli);
}

static void run_raw_alert(struct raw_alert *ra)
{
	struct giong_config cfg = gt_config(1);

	gt_run(&cfg, raw_alert_main, ra, NULL);
}

static void test_fatal_alert_for_hello(void **state)
{
	/* handshake_failure (40) is all the server says: GIONG_ETLS_ALERT. */
	struct raw_alert ra = {.bytes = "\x15\x03\x03\x00\x02\x02\x28", .want = GIONG_ETLS_ALERT};

	(void)state;
	run_raw_alert(&ra);
}

static void test_close_notify_for_hello(void **state)
{
	/* close_notify (a warning) instead of a ServerHello: no handshake. */
	struct raw_alert ra = {.bytes = "\x15\x03\x03\x00\x02\x01\x00",
			       .want = GIONG_ETLS_HANDSHAKE};

	(void)state;
	run_raw_alert(&ra);
}

/* --- ALPN at the header's limits ------------------------------------------------------------ */

static void test_alpn_at_limits(void **state)
{
	/* 16 names of 255 bytes each, what giong_tls_config_alpn() takes: both
	 * ends agree on the server's first. */
	static char names[16][256];
	const char *list[16];
	struct giong_tls_config *srv, *cli;
	struct hs h = {.name = "localhost"};

	(void)state;
	for (int i = 0; i < 16; i++) {
		memset(names[i], 'a' + i, 255);
		names[i][255] = '\0';
		list[i] = names[i];
	}
	srv = tt_server("server", NULL);
	cli = tt_client(NULL);
	assert_int_equal(giong_tls_config_alpn(srv, list + 15, 1), 0); /* the client's last */
	assert_int_equal(giong_tls_config_alpn(cli, list, 16), 0);
	h.srv = srv;
	h.cli = cli;
	h.alpn = names[15];
	run_hs(&h);
}

/* --- a read in flight when the stream breaks ------------------------------------------------ */

/* The stream beneath: faulty_stream.h, its writes all through writev (no
 * send_start). */

struct reader {
	struct giong_stream *s;
	ssize_t r;
	bool started;
};

static intptr_t reader_task(void *arg)
{
	struct reader *rd = arg;
	char buf[64];

	rd->started = true;
	rd->r = giong_stream_read(rd->s, buf, sizeof(buf));
	return 0;
}

static void broken_read_main(unsigned worker, void *arg)
{
	struct giong_tls_config *srv = tt_server("server", NULL);
	struct giong_tls_config *cli = tt_client(NULL);
	struct giong_stream *a, *b, *s, *k;
	struct reader rd = {0};
	struct giong_task *t;
	struct faulty *f;
	char buf[8];

	(void)worker;
	(void)arg;
	if (!gt_check_int_equal(giong_unix_pair(&a, &b), 0))
		goto out;
	f = faulty_over(a, &faulty_writev_ops);
	if (!gt_check_int_equal(tt_pair_over(&f->base, b, srv, cli, "localhost", &s, &k, NULL), 0))
		goto out;
	/* The server's reader parks; then its write fails beneath: broken. */
	rd.s = s;
	gt_check_int_equal(giong_spawn(reader_task, &rd, &t), 0);
	while (!rd.started)
		giong_sleep_ms(1);
	giong_sleep_ms(2);
	f->write_err = -ECONNRESET;
	gt_check_int_equal(giong_stream_write(s, "lost", 4), -ECONNRESET);
	f->write_err = 0;
	/* A record that does not check reaches the parked reader: the library
	 * wants to send an alert, which may not follow a cut record. The read
	 * fails (OpenSSL: with the stream's -EPIPE), and nothing reaches the
	 * peer. */
	f->corrupt = true;
	gt_check_int_equal(giong_stream_write_all(k, "hello", 5), 5);
	giong_join(t, NULL);
	if (getenv("TT_VERBOSE"))
		fprintf(stderr, "broken read: %zd (%s)\n", rd.r, giong_tls_last_error(s));
	gt_check_true(rd.r < 0);
	if (TT_OPENSSL)
		gt_check_int_equal(rd.r, -EPIPE);
	gt_check_int_equal(giong_stream_read(s, buf, sizeof(buf)), -EPIPE); /* for good */
	gt_check_int_equal(giong_stream_shutdown(a, SHUT_WR), 0);           /* beneath s */
	gt_check_int_equal(giong_stream_read(k, buf, sizeof(buf)), GIONG_ETLS_TRUNCATED);
	giong_stream_close(s);
	giong_stream_close(k);
out:
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
}

static void test_read_in_flight_when_broken(void **state)
{
	struct giong_config cfg = gt_config(1);
	int fds = gt_count_fds();

	(void)state;
	gt_run(&cfg, broken_read_main, NULL, NULL);
	gt_assert_fds(fds);
}

/* --- OpenSSL: errors the program left on its thread's queue --------------------------------- */

#if TT_OPENSSL
struct late {
	struct giong_stream *s;
};

static intptr_t late_writer(void *arg)
{
	struct late *l = arg;

	giong_sleep_ms(5);
	return giong_stream_write_all(l->s, "pong", 4) == 4 ? 0 : -1;
}

static void stale_main(unsigned worker, void *arg)
{
	struct giong_tls_config *srv = tt_server("server", NULL);
	struct giong_tls_config *cli = tt_client(NULL);
	struct giong_stream *s, *k;
	struct giong_task *t;
	struct late l;
	intptr_t wr = -1;
	char buf[8];

	(void)worker;
	(void)arg;
	ERR_raise(ERR_LIB_USER, ERR_R_PASSED_INVALID_ARGUMENT); /* before the handshake */
	if (!gt_check_int_equal(tt_pair(srv, cli, "localhost", &s, &k, NULL), 0))
		goto out;
	/* A read that has to wait (OpenSSL's SSL_get_error() would read the
	 * program's error as the read's own), and writes, all succeed. */
	l.s = s;
	gt_check_int_equal(giong_spawn(late_writer, &l, &t), 0);
	ERR_raise(ERR_LIB_USER, ERR_R_PASSED_INVALID_ARGUMENT);
	gt_check_int_equal(giong_stream_read(k, buf, sizeof(buf)), 4);
	gt_check_memory_equal(buf, "pong", 4);
	giong_join(t, &wr);
	gt_check_int_equal(wr, 0);
	ERR_raise(ERR_LIB_USER, ERR_R_PASSED_INVALID_ARGUMENT);
	gt_check_int_equal(giong_stream_write_all(k, "ping", 4), 4);
	gt_check_int_equal(giong_stream_read(s, buf, sizeof(buf)), 4);
	gt_check_memory_equal(buf, "ping", 4);
	ERR_raise(ERR_LIB_USER, ERR_R_PASSED_INVALID_ARGUMENT);
	gt_check_int_equal(giong_stream_shutdown(k, SHUT_WR), 0);
	gt_check_int_equal(giong_stream_read(s, buf, sizeof(buf)), 0); /* close_notify */
	gt_check_string_equal(giong_tls_last_error(k), "");
	giong_stream_close(s);
	giong_stream_close(k);
out:
	ERR_clear_error();
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
}
#endif

static void test_program_errors_on_queue(void **state)
{
	(void)state;
#if TT_OPENSSL
	struct giong_config cfg = gt_config(1);

	gt_run(&cfg, stale_main, NULL, NULL);
#else
	skip(); /* wolfSSL_get_error() does not read the queue */
#endif
}

/* --- configurations that do not build ------------------------------------------------------ */

static int check_chain(const char *chain, char *err, size_t len)
{
	struct giong_tls_config *c;
	int r;

	assert_int_equal(giong_tls_config_new(tt_backend(), &c), 0);
	assert_int_equal(giong_tls_config_add_cert_file(c, chain, tt_path("server.key")), 0);
	err[0] = '\0';
	r = giong_tls_config_check(c, err, len);
	if (getenv("TT_VERBOSE"))
		fprintf(stderr, "check %s: %d: %s\n", chain, r, err);
	giong_tls_config_free(c);
	return r;
}

static void test_weak_chain_certificate(void **state)
{
	char err[200];
	int r;

	(void)state;
	r = check_chain(tmp_path("weakchain.pem"), err, sizeof(err));
	if (TT_OPENSSL) {
		assert_int_equal(r, GIONG_ETLS_CONFIG);
		assert_non_null(strstr(err, "chain certificate is refused"));
	} else {
		assert_int_equal(r, 0);
	}
}

static void test_unterminated_chain_block(void **state)
{
	char err[200];

	(void)state;
	assert_int_equal(check_chain(tmp_path("openchain.pem"), err, sizeof(err)),
			 GIONG_ETLS_CONFIG);
	assert_true(err[0] != '\0');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostname_mismatch),
		cmocka_unit_test(test_ip_mismatch),
		cmocka_unit_test(test_wrong_purpose),
		cmocka_unit_test(test_fatal_alert_for_hello),
		cmocka_unit_test(test_close_notify_for_hello),
		cmocka_unit_test(test_alpn_at_limits),
		cmocka_unit_test(test_read_in_flight_when_broken),
		cmocka_unit_test(test_program_errors_on_queue),
		cmocka_unit_test(test_weak_chain_certificate),
		cmocka_unit_test(test_unterminated_chain_block),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, setup, teardown);
}
