/* SPDX-License-Identifier: MIT */
/*
 * test_cross.c - the two backends against each other, in one program: a
 * giong server on wolfSSL with a giong client on OpenSSL, and the reverse,
 * over TCP on 127.0.0.1. TLS 1.2 and 1.3, ALPN, the certificate checks
 * (a refused name, a client certificate), a wolfSSL server refusing an OpenSSL
 * client that offers only CBC suites, 4 MB each way byte-exact,
 * close_notify both ways, truncation, and descriptors back to where they
 * were. Built once (not per backend), only when both backends are.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "tls_test.h"

#include <giong/tls/openssl.h>
#include <giong/tls/wolfssl.h>

#define BULK (4u << 20)
#define SRV_OFF 0x77777ull

static const char *const srv_alpn[] = {"h2", "http/1.1", NULL};
static const char *const cli_alpn[] = {"http/1.1", NULL};

struct side {
	const char *name; /* "wolfssl", "openssl" */
	const struct giong_tls_backend *(*backend)(void);
};

static const struct side WOLF = {"wolfssl", giong_tls_wolfssl};
static const struct side OSSL = {"openssl", giong_tls_openssl};

static struct giong_tls_config *x_config(const struct side *b, bool server, const char *const *alpn)
{
	struct giong_tls_config *c;
	size_t n = 0;

	assert_int_equal(giong_tls_config_new(b->backend(), &c), 0);
	if (server)
		assert_int_equal(giong_tls_config_add_cert_file(c, tt_path("server.pem"),
								tt_path("server.key")),
				 0);
	else
		assert_int_equal(giong_tls_config_ca_file(c, tt_path("ca.pem")), 0);
	while (alpn && alpn[n])
		n++;
	if (n)
		assert_int_equal(giong_tls_config_alpn(c, alpn, n), 0);
	return c;
}

/* --- a TCP pair with a handshake on each end --------------------------------------------------- */

struct acc {
	struct giong_listener *l;
	struct giong_tls_config *cfg;
	struct giong_stream *tls;
	int err;
};

static intptr_t acc_task(void *arg)
{
	struct acc *a = arg;
	struct giong_stream *tcp;

	giong_deadline_in(30000); /* a client that never comes ends the test */
	a->err = giong_tcp_accept(a->l, &tcp);
	if (a->err)
		return 0;
	a->err = giong_tls_accept(tcp, a->cfg, &a->tls);
	if (a->err) {
		if (getenv("TT_VERBOSE"))
			fprintf(stderr, "accept: %s: %s\n", giong_strerror(a->err),
				giong_tls_last_error(NULL));
		giong_stream_close(tcp);
	}
	return 0;
}

/* In a task: connect @cli to a listener of @srv. Returns the client's result
 * (0 with both streams), the server's in *@serr. */
static int x_pair(struct giong_tls_config *srv, struct giong_tls_config *cli, const char *name,
		  struct giong_stream **server, struct giong_stream **client, int *serr)
{
	struct acc a = {.cfg = srv};
	struct giong_stream *tcp;
	struct giong_task *t;
	struct giong_addr addr;
	char text[64];
	int r;

	*server = *client = NULL;
	if ((r = giong_tcp_listen("127.0.0.1:0", NULL, &a.l)))
		return r;
	giong_listener_addr(a.l, &addr);
	giong_addr_format(&addr, text, sizeof(text));
	if ((r = giong_spawn(acc_task, &a, &t))) {
		giong_listener_close(a.l);
		return r;
	}
	r = giong_tcp_connect(text, &tcp);
	if (r == 0) {
		r = giong_tls_connect(tcp, cli, name, client);
		if (r) {
			if (getenv("TT_VERBOSE"))
				fprintf(stderr, "connect: %s: %s\n", giong_strerror(r),
					giong_tls_last_error(NULL));
			giong_stream_close(tcp); /* the server's handshake then fails */
		}
	}
	giong_join(t, NULL);
	giong_listener_close(a.l);
	*server = a.tls;
	if (serr)
		*serr = a.err;
	if (r == 0 && a.err) {
		giong_stream_close(*client);
		*client = NULL;
		r = a.err;
	}
	return r;
}

/* --- data ---------------------------------------------------------------------------------- */

struct pump {
	struct giong_stream *s;
	uint64_t off;
	size_t done;
	int err;
};

static intptr_t writer_task(void *arg)
{
	struct pump *p = arg;
	unsigned char *buf = malloc(70000);
	size_t chunk = 1;

	while (buf && p->done < BULK) {
		size_t n = BULK - p->done < chunk ? BULK - p->done : chunk;
		ssize_t r;

		tt_pattern(buf, n, p->off + p->done);
		r = giong_stream_write_all(p->s, buf, n);
		if (r != (ssize_t)n) {
			p->err = (int)r;
			/* A broken TLS stream tells its peer nothing (GIONG_FAULTS):
			 * end the socket, or the reader there waits for ever. */
			shutdown(giong_stream_fd(p->s), SHUT_RDWR);
			break;
		}
		p->done += n;
		chunk = chunk * 3 + 7 > 70000 ? 1 + p->done % 1000 : chunk * 3 + 7;
	}
	free(buf);
	return 0;
}

static intptr_t reader_task(void *arg)
{
	struct pump *p = arg;
	unsigned char *buf = malloc(20000);

	while (buf && p->done < BULK) {
		ssize_t r = giong_stream_read(p->s, buf, 1 + p->done % 20000);

		if (r <= 0) {
			p->err = r ? (int)r : -ENODATA;
			shutdown(giong_stream_fd(p->s), SHUT_RDWR); /* its writer ends too */
			break;
		}
		if (!tt_pattern_ok(buf, (size_t)r, p->off + p->done)) {
			p->err = -EBADMSG;
			shutdown(giong_stream_fd(p->s), SHUT_RDWR);
			break;
		}
		p->done += (size_t)r;
	}
	free(buf);
	return 0;
}

/* --- the cases ----------------------------------------------------------------------------------- */

struct x_case {
	const struct side *srv, *cli;
	enum giong_tls_version max; /* the client's highest; 0: 1.3 */
};

static void check_alpn(struct giong_stream *s, const char *want)
{
	size_t len;
	const char *p = giong_tls_alpn(s, &len);

	if (gt_check_non_null(p) && gt_check_int_equal(len, strlen(want)))
		gt_check_memory_equal(p, want, len);
}

static void bulk_main(unsigned worker, void *arg)
{
	struct x_case *c = arg;
	struct giong_tls_config *srv = x_config(c->srv, true, srv_alpn);
	struct giong_tls_config *cli = x_config(c->cli, false, cli_alpn);
	const char *version = c->max == GIONG_TLS_1_2 ? "TLSv1.2" : "TLSv1.3";
	struct giong_stream *s, *k;
	struct giong_task *t[4];
	struct pump p[4];
	uint64_t saved = giong_deadline_in(60000);
	char got[8];
	int serr = 0;

	(void)worker;
	if (c->max)
		gt_check_int_equal(giong_tls_config_versions(cli, GIONG_TLS_1_2, c->max), 0);
	if (!gt_check_int_equal(x_pair(srv, cli, "localhost", &s, &k, &serr), 0)) {
		gt_check_int_equal(serr, 0);
		goto out;
	}
	gt_check_string_equal(giong_tls_backend_name(s), c->srv->name);
	gt_check_string_equal(giong_tls_backend_name(k), c->cli->name);
	gt_check_string_equal(giong_tls_version(s), version);
	gt_check_string_equal(giong_tls_version(k), version);
	if (gt_check_non_null(giong_tls_cipher(s)) && gt_check_non_null(giong_tls_cipher(k)))
		gt_check_true(*giong_tls_cipher(s) && *giong_tls_cipher(k));
	check_alpn(s, "http/1.1"); /* the server's "h2" was not offered */
	check_alpn(k, "http/1.1");
	gt_check_int_equal(giong_tls_resumed(k), 0);

	/* 4 MB each way at once. */
	p[0] = (struct pump){.s = s, .off = SRV_OFF};
	p[1] = (struct pump){.s = k, .off = SRV_OFF};
	p[2] = (struct pump){.s = k, .off = 0};
	p[3] = (struct pump){.s = s, .off = 0};
	for (int i = 0; i < 4; i++) {
		if (giong_spawn(i % 2 ? reader_task : writer_task, &p[i], &t[i])) {
			/* Not started: the pumps started end on the socket's end. */
			t[i] = NULL;
			p[i].err = -ENOMEM;
			shutdown(giong_stream_fd(s), SHUT_RDWR);
		}
	}
	for (int i = 0; i < 4; i++) {
		if (t[i])
			giong_join(t[i], NULL);
		gt_check_int_equal(p[i].err, 0);
		gt_check_int_equal(p[i].done, BULK);
	}

	/* close_notify from the client: the server's clean end... A TLS
	 * stream that broke (GIONG_FAULTS) sends nothing: its socket is ended
	 * then, or the peer's read waits for ever. */
	if (!gt_check_int_equal(giong_stream_shutdown(k, SHUT_WR), 0))
		shutdown(giong_stream_fd(k), SHUT_RDWR);
	gt_check_int_equal(giong_stream_read(s, got, sizeof(got)), 0);
	gt_check_int_equal(giong_stream_read(s, got, sizeof(got)), 0);
	/* ...and from the server after its last words: the client's. */
	if (!gt_check_int_equal(giong_stream_write_all(s, "bye", 3), 3) ||
	    !gt_check_int_equal(giong_stream_shutdown(s, SHUT_WR), 0))
		shutdown(giong_stream_fd(s), SHUT_RDWR);
	gt_check_int_equal(giong_stream_read(k, got, sizeof(got)), 3);
	gt_check_memory_equal(got, "bye", 3);
	gt_check_int_equal(giong_stream_read(k, got, sizeof(got)), 0);
	gt_check_int_equal(giong_stream_close(s), 0);
	gt_check_int_equal(giong_stream_close(k), 0);
out:
	giong_deadline_restore(saved);
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
}

static void run(giong_main_fn fn, struct x_case *c)
{
	struct giong_config cfg = gt_config(1);
	int fds = gt_count_fds();

	gt_run(&cfg, fn, c, NULL);
	gt_assert_fds(fds);
}

static void test_wolf_server_openssl_client_tls13(void **state)
{
	struct x_case c = {&WOLF, &OSSL, 0};

	(void)state;
	run(bulk_main, &c);
}

static void test_wolf_server_openssl_client_tls12(void **state)
{
	struct x_case c = {&WOLF, &OSSL, GIONG_TLS_1_2};

	(void)state;
	run(bulk_main, &c);
}

static void test_openssl_server_wolf_client_tls13(void **state)
{
	struct x_case c = {&OSSL, &WOLF, 0};

	(void)state;
	run(bulk_main, &c);
}

static void test_openssl_server_wolf_client_tls12(void **state)
{
	struct x_case c = {&OSSL, &WOLF, GIONG_TLS_1_2};

	(void)state;
	run(bulk_main, &c);
}

/* --- refusals, client certificates and truncation across the two ------------------------------- */

static void refuse_main(unsigned worker, void *arg)
{
	struct x_case *c = arg;
	static const char *const h2only[] = {"h2", NULL};
	struct giong_tls_config *srv = x_config(c->srv, true, h2only);
	struct giong_tls_config *cli = x_config(c->cli, false, cli_alpn);
	struct giong_tls_config *srv2 = x_config(c->srv, true, NULL);
	struct giong_tls_config *cli2 = x_config(c->cli, false, NULL);
	struct giong_stream *s, *k;
	int serr = 0;

	(void)worker;
	/* No common ALPN protocol: the server's alert ends the client's handshake. */
	gt_check_int_equal(x_pair(srv, cli, "localhost", &s, &k, &serr), GIONG_ETLS_ALERT);
	gt_check_true(serr < 0);
	gt_check_null(s);
	gt_check_null(k);
	/* A name the certificate does not carry: the client refuses. */
	gt_check_int_equal(x_pair(srv2, cli2, "wrong.test", &s, &k, &serr), GIONG_ETLS_CERT);
	gt_check_true(serr < 0);
	gt_check_true(*giong_tls_last_error(NULL) != '\0');
	gt_check_null(s);
	gt_check_null(k);
	if (c->cli == &OSSL) {
		/* A client offering only CBC suites: the server's defaults are AEADs only.
		 * (Debian's wolfSSL has no CBC suite to offer an OpenSSL server: test_ciphers.c
		 * refuses an OpenSSL client there.) */
		struct giong_tls_config *cbc = x_config(c->cli, false, NULL);

		gt_check_int_equal(giong_tls_config_versions(cbc, GIONG_TLS_1_2, GIONG_TLS_1_2), 0);
		gt_check_int_equal(giong_tls_config_ciphers(cbc,
							    "ECDHE-ECDSA-AES128-SHA:"
							    "ECDHE-ECDSA-AES256-SHA",
							    NULL),
				   0);
		gt_check_true(x_pair(srv2, cbc, "localhost", &s, &k, &serr) < 0);
		gt_check_int_equal(serr, GIONG_ETLS_HANDSHAKE);
		gt_check_null(k);
		giong_tls_config_free(cbc);
	}
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
	giong_tls_config_free(srv2);
	giong_tls_config_free(cli2);
}

static void test_refusals(void **state)
{
	struct x_case a = {&WOLF, &OSSL, 0}, b = {&OSSL, &WOLF, 0};

	(void)state;
	run(refuse_main, &a);
	run(refuse_main, &b);
}

static void client_cert_main(unsigned worker, void *arg)
{
	struct x_case *c = arg;
	struct giong_tls_config *srv = x_config(c->srv, true, NULL);
	struct giong_tls_config *cli = x_config(c->cli, false, NULL);
	struct giong_stream *s, *k;
	char got[8];
	int serr = 0;

	(void)worker;
	gt_check_int_equal(giong_tls_config_verify(srv, GIONG_TLS_VERIFY_REQUIRE), 0);
	gt_check_int_equal(giong_tls_config_ca_file(srv, tt_path("ca.pem")), 0);
	gt_check_int_equal(
		giong_tls_config_add_cert_file(cli, tt_path("client.pem"), tt_path("client.key")),
		0);
	if (c->max)
		gt_check_int_equal(giong_tls_config_versions(cli, GIONG_TLS_1_2, c->max), 0);
	if (!gt_check_int_equal(x_pair(srv, cli, "localhost", &s, &k, &serr), 0))
		goto out;
	gt_check_int_equal(serr, 0);
	if (!gt_check_int_equal(giong_stream_write_all(k, "hi", 2), 2))
		shutdown(giong_stream_fd(k), SHUT_RDWR); /* broken: the server's read ends */
	gt_check_int_equal(giong_stream_read(s, got, sizeof(got)), 2);
	/* Truncation: the server's socket ends without close_notify (test only:
	 * the lower is the server's). */
	gt_check_int_equal(giong_stream_shutdown(s->lower, SHUT_WR), 0);
	gt_check_int_equal(giong_stream_read(k, got, sizeof(got)), GIONG_ETLS_TRUNCATED);
	giong_stream_close(s);
	giong_stream_close(k);
out:
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
}

static void test_client_cert_and_truncation(void **state)
{
	struct x_case c[] = {
		{&WOLF, &OSSL, 0},
		{&WOLF, &OSSL, GIONG_TLS_1_2},
		{&OSSL, &WOLF, 0},
		{&OSSL, &WOLF, GIONG_TLS_1_2},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		run(client_cert_main, &c[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wolf_server_openssl_client_tls13),
		cmocka_unit_test(test_wolf_server_openssl_client_tls12),
		cmocka_unit_test(test_openssl_server_wolf_client_tls13),
		cmocka_unit_test(test_openssl_server_wolf_client_tls12),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_client_cert_and_truncation),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
