/* SPDX-License-Identifier: MIT */
/*
 * test_edges.c - the TLS stream and configuration at their edges, with one
 * backend: setters' refusals (sizes, kinds of file, limits), certificates,
 * keys and CA files that do not load, the system's roots, SNI with no or no
 * matching name, server tickets off, the client's session cache (eviction,
 * a session dropped after a failed handshake), calls from the wrong worker
 * or no worker, the readable notice deferred to the worker loop, and a
 * stream beneath that fails (receive, write, send_start), corrupts a record
 * or cannot send_start at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "faulty_stream.h"
#include "tls_test.h"

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

static void put_file(const char *name, const void *data, size_t len)
{
	int fd = open(tmp_path(name), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(gt_write_all_fd(fd, data, len), (ssize_t)len);
	close(fd);
}

/* The contents of certificate file @name, NUL-terminated, in a heap buffer. */
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

static int setup(void **state)
{
	static const char junk[] = "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n"
				   "-----END CERTIFICATE-----\n";
	char cmd[1024];
	size_t n;
	char *pem;
	int fd;

	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/giong-tls-edges-XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	put_file("empty.pem", "", 0);
	put_file("junk.pem", junk, sizeof(junk) - 1);
	/* A valid leaf, then a chain certificate that is not one. */
	pem = slurp(tt_path("server.pem"), &n);
	pem = realloc(pem, n + sizeof(junk));
	memcpy(pem + n, junk, sizeof(junk));
	put_file("badchain.pem", pem, n + sizeof(junk) - 1);
	free(pem);
	/* Over the 1 MiB a certificate file may have (sparse). */
	fd = open(tmp_path("huge.pem"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (1 << 20) + 1), 0);
	close(fd);
	assert_int_equal(mkdir(tmp_path("junk-dir"), 0700), 0);
	put_file("junk-dir/junk.pem", junk, sizeof(junk) - 1);
	/* The server's key under a passphrase nobody gives. */
	snprintf(cmd, sizeof(cmd),
		 "openssl pkey -in '%s' -aes128 -passout pass:secret -out '%s' 2>/dev/null",
		 tt_path("server.key"), tmp_path("encrypted.key"));
	assert_int_equal(system(cmd), 0);
	snprintf(
		cmd, sizeof(cmd),
		"openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout '%s' "
		"-out '%s' -subj /CN=localhost -addext subjectAltName=DNS:localhost -days 30 "
		"2>/dev/null",
		tmp_path("self.key"), tmp_path("self.pem"));
	assert_int_equal(system(cmd), 0);
	/* Valid from 2099 only, signed by the test CA (openssl ca dates it). */
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && mkdir -p db && : >db/index.txt && echo 01 >db/serial && "
		 "printf '[ca]\\ndefault_ca=t\\n[t]\\ndir=db\\ndatabase=db/index.txt\\n"
		 "serial=db/serial\\nnew_certs_dir=db\\ndefault_md=sha256\\npolicy=p\\n"
		 "x509_extensions=x\\n[p]\\ncommonName=supplied\\n[x]\\n"
		 "subjectAltName=DNS:localhost\\n' >db/ca.cnf && "
		 "openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
		 "-keyout future.key -subj /CN=future -out future.csr 2>/dev/null && "
		 "openssl ca -batch -config db/ca.cnf -cert '%s' -keyfile '%s' -in future.csr "
		 "-startdate 20990101000000Z -enddate 20991231000000Z -out future.pem 2>/dev/null",
		 tmpdir, tt_path("ca.pem"), tt_path("ca.key"));
	assert_int_equal(system(cmd), 0);
	/* The server's certificate with its signature spoiled (a byte of the
	 * DER signature at its end, far from the PEM's framing). */
	{
		size_t n;
		char *pem = slurp(tt_path("server.pem"), &n);
		char *end = strstr(pem, "-----END");

		assert_non_null(end);
		end -= 6; /* before "==\n" padding and the newline: inside the signature */
		*end = *end == 'A' ? 'B' : 'A';
		put_file("badsig.pem", pem, n);
		free(pem);
	}
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* --- the setters --------------------------------------------------------------------------- */

static void test_setter_refusals(void **state)
{
	struct giong_tls_config *c;
	const char *many[17];
	char longname[300], *big;

	(void)state;
	assert_int_equal(giong_tls_config_new(tt_backend(), &c), 0);
	assert_ptr_equal(giong_tls_config_backend(c), tt_backend());
	assert_null(giong_tls_config_backend(NULL));

	/* Every setter refuses a NULL configuration. */
	assert_int_equal(giong_tls_config_tickets(NULL, true), -EINVAL);
	assert_int_equal(giong_tls_config_ca_system(NULL), -EINVAL);
	assert_int_equal(giong_tls_config_handshake_timeout(NULL, 1), -EINVAL);
	assert_int_equal(giong_tls_config_check(NULL, NULL, 0), -EINVAL);
	assert_int_equal(giong_tls_config_add_cert_file(c, NULL, "x"), -EINVAL);

	/* Certificate files: a directory, an empty file, one over 1 MiB. */
	assert_int_equal(giong_tls_config_add_cert_file(c, tmpdir, tt_path("server.key")), -EINVAL);
	assert_int_equal(
		giong_tls_config_add_cert_file(c, tmp_path("empty.pem"), tt_path("server.key")),
		-EINVAL);
	assert_int_equal(
		giong_tls_config_add_cert_file(c, tt_path("server.pem"), tmp_path("huge.pem")),
		-EFBIG);
	big = calloc(1, (1u << 20) + 1);
	assert_int_equal(giong_tls_config_add_cert_mem(c, big, (1u << 20) + 1, "k", 1), -EFBIG);
	free(big);

	/* CA paths: a file where a file is wanted, not a directory, and no "". */
	assert_int_equal(giong_tls_config_ca_file(c, tmpdir), -EISDIR);
	assert_int_equal(giong_tls_config_ca_dir(c, ""), -EINVAL);
	assert_int_equal(giong_tls_config_ca_file(c, NULL), -EINVAL);

	/* ALPN: at most 16 names of 1..255 bytes. */
	for (int i = 0; i < 17; i++)
		many[i] = "h2";
	assert_int_equal(giong_tls_config_alpn(c, many, 17), -EINVAL);
	assert_int_equal(giong_tls_config_alpn(c, many, 16), 0);
	memset(longname, 'a', 256);
	longname[256] = '\0';
	many[0] = longname;
	assert_int_equal(giong_tls_config_alpn(c, many, 1), -EINVAL);
	longname[255] = '\0';
	assert_int_equal(giong_tls_config_alpn(c, many, 1), 0);
	assert_int_equal(giong_tls_config_alpn(c, NULL, 0), 0); /* cleared */
	assert_int_equal(giong_tls_config_ciphers(c, NULL, ""), -EINVAL);

	/* A failed setter changed nothing: this one still builds as a client. */
	assert_int_equal(giong_tls_config_ca_file(c, tt_path("ca.pem")), 0);
	assert_int_equal(giong_tls_config_check(c, NULL, 0), 0);
	giong_tls_config_free(c);
}

/* What giong_tls_config_check() says of @c, with the backend's words. */
static int check_of(struct giong_tls_config *c, char *err, size_t len)
{
	int r = giong_tls_config_check(c, err, len);

	if (r && getenv("TT_VERBOSE"))
		fprintf(stderr, "check: %s\n", err);
	return r;
}

static void test_files_that_do_not_load(void **state)
{
	struct {
		const char *chain, *key;
	} certs[] = {
		{"junk.pem", NULL},       /* the leaf is no certificate */
		{NULL, "encrypted.key"},  /* a key under a passphrase: never a prompt */
		{"junk.pem", "junk.pem"}, /* and the key no key either */
	};
	struct giong_tls_config *c;
	char err[160];

	(void)state;
	for (size_t i = 0; i < sizeof(certs) / sizeof(certs[0]); i++) {
		const char *chain =
			certs[i].chain ? tmp_path(certs[i].chain) : tt_path("server.pem");
		const char *key = certs[i].key ? tmp_path(certs[i].key) : tt_path("server.key");

		assert_int_equal(giong_tls_config_new(tt_backend(), &c), 0);
		assert_int_equal(giong_tls_config_add_cert_file(c, chain, key), 0); /* read only */
		err[0] = '\0';
		assert_int_equal(check_of(c, err, sizeof(err)), GIONG_ETLS_CONFIG);
		assert_true(err[0] != '\0');
		/* The verdict stays: a second check (or handshake) gives it again. */
		assert_int_equal(giong_tls_config_check(c, NULL, 0), GIONG_ETLS_CONFIG);
		giong_tls_config_free(c);
	}

	/* A key that loads but is another certificate's (both P-256): refused,
	 * saying so, on every backend. */
	assert_int_equal(giong_tls_config_new(tt_backend(), &c), 0);
	assert_int_equal(
		giong_tls_config_add_cert_file(c, tt_path("server.pem"), tt_path("sni.key")), 0);
	err[0] = '\0';
	assert_int_equal(check_of(c, err, sizeof(err)), GIONG_ETLS_CONFIG);
	if (!strstr(err, "does not match"))
		fail_msg("a mismatched key said: %s", err);
	giong_tls_config_free(c);

	/* A CA file that holds no certificate. */
	assert_int_equal(giong_tls_config_new(tt_backend(), &c), 0);
	assert_int_equal(giong_tls_config_ca_file(c, tmp_path("junk.pem")), 0);
	assert_int_equal(check_of(c, err, sizeof(err)), GIONG_ETLS_CONFIG);
	assert_true(err[0] != '\0');
	giong_tls_config_free(c);

	/* TLS 1.2 suites that exist, TLS 1.3 ones that do not. */
	assert_int_equal(giong_tls_config_new(tt_backend(), &c), 0);
	assert_int_equal(giong_tls_config_ca_file(c, tt_path("ca.pem")), 0);
	assert_int_equal(
		giong_tls_config_ciphers(c, "ECDHE-ECDSA-AES128-GCM-SHA256", "TLS_NO_SUCH"), 0);
	assert_int_equal(check_of(c, err, sizeof(err)), GIONG_ETLS_CONFIG);
	giong_tls_config_free(c);
	/* ...and both known: it builds. */
	assert_int_equal(giong_tls_config_new(tt_backend(), &c), 0);
	assert_int_equal(giong_tls_config_ca_file(c, tt_path("ca.pem")), 0);
	assert_int_equal(giong_tls_config_ciphers(c, "ECDHE-ECDSA-AES128-GCM-SHA256",
						  "TLS_AES_128_GCM_SHA256"),
			 0);
	assert_int_equal(check_of(c, err, sizeof(err)), 0);
	giong_tls_config_free(c);
}

/* A valid leaf followed by a block that is no certificate: refused by the
 * configuration check on every backend (wolfSSL's chain loader alone would keep
 * it and send it to every client). */
static void test_bad_chain(void **state)
{
	struct giong_tls_config *c;
	char err[160];

	(void)state;
	assert_int_equal(giong_tls_config_new(tt_backend(), &c), 0);
	assert_int_equal(
		giong_tls_config_add_cert_file(c, tmp_path("badchain.pem"), tt_path("server.key")),
		0);
	assert_int_equal(check_of(c, err, sizeof(err)), GIONG_ETLS_CONFIG);
	giong_tls_config_free(c);
}

/* --- handshakes at the edges --------------------------------------------------------------- */

struct edge_case {
	struct giong_tls_config *srv, *cli;
	const char *name;
	int want;         /* the client's result */
	int want_resumed; /* of a second connection, when >= 0 */
	const char *alpn; /* expected, or NULL for none */
	const char *why;  /* in the client's error (tt_connect_error) when it fails */
};

static int talk(struct giong_stream *s, struct giong_stream *k)
{
	char b[4];

	/* Traffic the client reads: a TLS 1.3 ticket comes with it. */
	if (giong_stream_write_all(s, "pong", 4) != 4)
		return -EIO;
	for (size_t got = 0; got < 4;) {
		ssize_t r = giong_stream_read(k, b + got, 4 - got);

		if (r <= 0)
			return r ? (int)r : -ENODATA;
		got += (size_t)r;
	}
	return memcmp(b, "pong", 4) ? -EBADMSG : 0;
}

static void edge_main(unsigned worker, void *arg)
{
	struct edge_case *c = arg;
	struct giong_stream *s, *k;
	int r;

	(void)worker;
	for (int i = 0; i < (c->want_resumed >= 0 ? 2 : 1); i++) {
		r = tt_pair(c->srv, c->cli, c->name, &s, &k, NULL);
		gt_check_int_equal(r, c->want);
		if (r && c->why && !gt_check_non_null(strstr(tt_connect_error, c->why)))
			fprintf(stderr, "the client's error: %s\n", tt_connect_error);
		if (r)
			continue;
		gt_check_int_equal(talk(s, k), 0);
		if (i == 1)
			gt_check_int_equal(giong_tls_resumed(k), c->want_resumed);
		if (c->alpn) {
			size_t len;
			const char *p = giong_tls_alpn(k, &len);

			gt_check_true(p && len == strlen(c->alpn) && !memcmp(p, c->alpn, len));
		} else {
			gt_check_null(giong_tls_alpn(k, NULL));
		}
		gt_check_string_equal(giong_tls_last_error(k), ""); /* nothing failed */
		giong_stream_close(s);
		giong_stream_close(k);
	}
}

static void run_edge(struct edge_case *c)
{
	struct giong_config cfg = gt_config(1);

	gt_run(&cfg, edge_main, c, NULL);
	giong_tls_config_free(c->srv);
	giong_tls_config_free(c->cli);
}

static void test_system_roots(void **state)
{
	/* The system's roots load, and do not trust the test CA. */
	struct edge_case c = {.srv = tt_server("server", NULL),
			      .name = "localhost",
			      .want = GIONG_ETLS_CERT,
			      .want_resumed = -1};
	char err[160];

	(void)state;
	assert_int_equal(giong_tls_config_new(tt_backend(), &c.cli), 0);
	assert_int_equal(giong_tls_config_ca_system(c.cli), 0);
	assert_int_equal(check_of(c.cli, err, sizeof(err)), 0);
	run_edge(&c);
}

static void test_sni_without_match(void **state)
{
	struct edge_case by_ip = {.name = "127.0.0.1", .want_resumed = -1};
	struct edge_case other = {.name = "nomatch.test", .want_resumed = -1};

	(void)state;
	/* Two certificates; a client that sends no SNI (a numeric address)
	 * gets the first, which names 127.0.0.1. */
	by_ip.srv = tt_server("server", NULL);
	assert_int_equal(
		giong_tls_config_add_cert_file(by_ip.srv, tt_path("sni.pem"), tt_path("sni.key")),
		0);
	by_ip.cli = tt_client(NULL);
	run_edge(&by_ip);
	/* A name neither names: the first again (the client, not checking,
	 * takes it; checking, it would refuse it: test_stream's sni). */
	other.srv = tt_server("sni", NULL);
	assert_int_equal(giong_tls_config_add_cert_file(other.srv, tt_path("server.pem"),
							tt_path("server.key")),
			 0);
	assert_int_equal(giong_tls_config_new(tt_backend(), &other.cli), 0);
	assert_int_equal(giong_tls_config_verify(other.cli, GIONG_TLS_VERIFY_NONE), 0);
	run_edge(&other);
}

static void test_server_tickets_off(void **state)
{
	struct edge_case off = {.name = "localhost", .want_resumed = 0};
	struct edge_case on = {.name = "localhost", .want_resumed = 1};

	(void)state;
	off.srv = tt_server("server", NULL);
	assert_int_equal(giong_tls_config_tickets(off.srv, false), 0);
	off.cli = tt_client(NULL);
	run_edge(&off);
	on.srv = tt_server("server", NULL); /* the same client settings resume otherwise */
	on.cli = tt_client(NULL);
	run_edge(&on);
}

static void test_no_name_no_verify(void **state)
{
	/* No server name: -EINVAL while verifying (there is nothing to check
	 * the certificate against), fine without. */
	struct edge_case c = {.srv = tt_server("server", NULL), .want_resumed = -1};

	(void)state;
	assert_int_equal(giong_tls_config_new(tt_backend(), &c.cli), 0);
	assert_int_equal(giong_tls_config_verify(c.cli, GIONG_TLS_VERIFY_NONE), 0);
	run_edge(&c);
}

static void test_ca_dir_without_ca(void **state)
{
	/* A CA directory with no CA in it: refused by the check (wolfSSL reads
	 * it whole), or loaded lazily and then trusting nothing (OpenSSL). Never
	 * a handshake that succeeds. */
	struct edge_case c = {.name = "localhost", .want = GIONG_ETLS_CERT, .want_resumed = -1};
	char err[160];
	int r;

	(void)state;
	assert_int_equal(giong_tls_config_new(tt_backend(), &c.cli), 0);
	assert_int_equal(giong_tls_config_ca_dir(c.cli, tmp_path("junk-dir")), 0);
	r = check_of(c.cli, err, sizeof(err));
	if (r) {
		assert_int_equal(r, GIONG_ETLS_CONFIG);
		assert_true(err[0] != '\0');
		giong_tls_config_free(c.cli);
		return;
	}
	c.srv = tt_server("server", NULL);
	run_edge(&c);
}

static void test_alpn_with_comma(void **state)
{
	/* ALPN names are bytes; wolfSSL takes them as one comma-separated list,
	 * so it cannot take "a,b": the check says so rather than offer "a" and
	 * "b". OpenSSL speaks it as it is. */
	static const char *const odd[] = {"a,b", NULL};
	struct edge_case c = {.name = "localhost", .want_resumed = -1, .alpn = "a,b"};
	char err[160];

	(void)state;
	c.srv = tt_server("server", odd);
	c.cli = tt_client(odd);
	if (!strcmp(tt_backend()->name, "wolfssl")) {
		assert_int_equal(check_of(c.cli, err, sizeof(err)), GIONG_ETLS_CONFIG);
		assert_non_null(strstr(err, "ALPN"));
		giong_tls_config_free(c.srv);
		giong_tls_config_free(c.cli);
		return;
	}
	run_edge(&c);
}

static void test_client_presents_first_cert(void **state)
{
	/* A client with two certificates presents the first, which the server
	 * (requiring one) accepts. */
	struct edge_case c = {.name = "localhost", .want_resumed = -1};

	(void)state;
	c.srv = tt_server("server", NULL);
	assert_int_equal(giong_tls_config_verify(c.srv, GIONG_TLS_VERIFY_REQUIRE), 0);
	assert_int_equal(giong_tls_config_ca_file(c.srv, tt_path("ca.pem")), 0);
	c.cli = tt_client(NULL);
	assert_int_equal(
		giong_tls_config_add_cert_file(c.cli, tt_path("client.pem"), tt_path("client.key")),
		0);
	assert_int_equal(giong_tls_config_add_cert_file(c.cli, tt_path("untrusted.pem"),
							tt_path("untrusted.key")),
			 0);
	run_edge(&c);
}

/* --- the client's sessions ----------------------------------------------------------------- */

static int connect_once(struct giong_tls_config *srv, struct giong_tls_config *cli,
			const char *name, int *resumed)
{
	struct giong_stream *s, *k;
	int r = tt_pair(srv, cli, name, &s, &k, NULL);

	if (r)
		return r;
	*resumed = giong_tls_resumed(k);
	r = talk(s, k);
	giong_stream_close(s);
	giong_stream_close(k);
	return r;
}

static void cache_main(unsigned worker, void *arg)
{
	struct giong_tls_config *srv = tt_server("server", NULL), *cli;
	char name[32];
	int resumed = -1;

	(void)worker;
	(void)arg;
	giong_tls_config_new(tt_backend(), &cli);
	gt_check_int_equal(giong_tls_config_verify(cli, GIONG_TLS_VERIFY_NONE), 0);
	gt_check_int_equal(giong_tls_config_versions(cli, GIONG_TLS_1_3, GIONG_TLS_1_3), 0);
	/* 33 names, one more than the cache holds: the first is the oldest. */
	for (int i = 0; i <= 32; i++) {
		snprintf(name, sizeof(name), "n%d.test", i);
		gt_check_int_equal(connect_once(srv, cli, name, &resumed), 0);
		gt_check_int_equal(resumed, 0);
		if (i == 31) { /* the cache is full; n0 is used again: n1 is the oldest now */
			gt_check_int_equal(connect_once(srv, cli, "n0.test", &resumed), 0);
			gt_check_int_equal(resumed, 1);
		}
	}
	gt_check_int_equal(connect_once(srv, cli, "n1.test", &resumed), 0);
	gt_check_int_equal(resumed, 0); /* evicted */
	gt_check_int_equal(connect_once(srv, cli, "n0.test", &resumed), 0);
	gt_check_int_equal(resumed, 1);
	gt_check_int_equal(connect_once(srv, cli, "n32.test", &resumed), 0);
	gt_check_int_equal(resumed, 1);
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
}

static void test_session_cache_eviction(void **state)
{
	struct giong_config cfg = gt_config(1);

	(void)state;
	gt_run(&cfg, cache_main, NULL, NULL);
}

static void drop_main(unsigned worker, void *arg)
{
	static const char *const http11[] = {"http/1.1", NULL};
	static const char *const h2[] = {"h2", NULL};
	struct giong_tls_config *srv = tt_server("server", NULL);
	struct giong_tls_config *picky = tt_server("server", h2);
	struct giong_tls_config *cli = tt_client(http11);
	struct giong_stream *s, *k;
	int resumed = -1;

	(void)worker;
	(void)arg;
	gt_check_int_equal(giong_tls_config_versions(cli, GIONG_TLS_1_3, GIONG_TLS_1_3), 0);
	gt_check_int_equal(connect_once(srv, cli, "localhost", &resumed), 0);
	gt_check_int_equal(resumed, 0);
	/* The kept session is offered to a server that then refuses the
	 * handshake (no common ALPN): the session goes with it... */
	gt_check_true(tt_pair(picky, cli, "localhost", &s, &k, NULL) < 0);
	gt_check_null(k);
	/* ...so the next connection to the first server is a full one, which
	 * brings a new session the one after resumes. */
	gt_check_int_equal(connect_once(srv, cli, "localhost", &resumed), 0);
	gt_check_int_equal(resumed, 0);
	gt_check_int_equal(connect_once(srv, cli, "localhost", &resumed), 0);
	gt_check_int_equal(resumed, 1);
	giong_tls_config_free(srv);
	giong_tls_config_free(picky);
	giong_tls_config_free(cli);
}

static void test_session_dropped_after_failure(void **state)
{
	struct giong_config cfg = gt_config(1);

	(void)state;
	gt_run(&cfg, drop_main, NULL, NULL);
}

/* --- workers -------------------------------------------------------------------------------- */

struct two {
	struct giong_tls_config *srv, *cli;
	struct giong_stream *_Atomic shared; /* worker 0's TLS stream */
	atomic_int done;                     /* worker 1 tried it */
};

static void two_main(unsigned worker, void *arg)
{
	struct two *t = arg;
	struct giong_stream *s, *k, *x;
	char b[4];

	if (worker == 1) {
		while (!(x = atomic_load(&t->shared)))
			giong_sleep_ms(1);
		if (x == (struct giong_stream *)1)
			return; /* worker 0's handshake failed (checked there) */
		/* Another worker's stream: every call refused, nothing done. */
		gt_check_int_equal(giong_stream_read(x, b, sizeof(b)), -EPERM);
		gt_check_int_equal(giong_stream_write(x, "x", 1), -EPERM);
		gt_check_int_equal(giong_stream_shutdown(x, SHUT_WR), -EPERM);
		gt_check_int_equal(giong_stream_on_readable(x, NULL, NULL), -EPERM);
		gt_check_int_equal(giong_stream_close(x), -EPERM);
		atomic_store(&t->done, 1);
		return;
	}
	if (!gt_check_int_equal(tt_pair(t->srv, t->cli, "localhost", &s, &k, NULL), 0)) {
		atomic_store(&t->shared, (struct giong_stream *)1);
		return;
	}
	atomic_store(&t->shared, k);
	while (!atomic_load(&t->done))
		giong_sleep_ms(1);
	/* Still whole on its own worker. */
	gt_check_int_equal(talk(s, k), 0);
	giong_stream_close(s);
	giong_stream_close(k);
}

static const struct giong_stream_ops never_ops = {.name = "never"};

static void test_wrong_worker(void **state)
{
	struct two t = {.srv = tt_server("server", NULL), .cli = tt_client(NULL)};
	struct giong_config cfg = gt_config(2);
	struct giong_stream fake = {.ops = &never_ops}, *out = (struct giong_stream *)1;

	(void)state;
	gt_run(&cfg, two_main, &t, NULL);
	assert_int_equal(atomic_load(&t.done), 1);
	/* No worker at all (this is the test's main thread). */
	assert_int_equal(giong_tls_accept(&fake, t.srv, &out), GIONG_ENOTWORKER);
	assert_null(out);
	assert_int_equal(giong_tls_wrap_accept(&fake, t.srv, &out), GIONG_ENOTWORKER);
	assert_int_equal(giong_tls_connect(&fake, t.cli, "", &out), -EINVAL);
	assert_int_equal(giong_tls_connect(&fake, t.cli, NULL, &out), -EINVAL); /* verifying */
	giong_tls_config_free(t.srv);
	giong_tls_config_free(t.cli);
}

static void server_needs_cert_main(unsigned worker, void *arg)
{
	struct giong_tls_config *srv, *cli = tt_client(NULL);
	struct giong_stream *s, *k;
	int serr = 0;

	(void)worker;
	(void)arg;
	giong_tls_config_new(tt_backend(), &srv);
	gt_check_true(tt_pair(srv, cli, "localhost", &s, &k, &serr) < 0);
	gt_check_int_equal(serr, GIONG_ETLS_CONFIG);
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
}

static void test_server_without_cert(void **state)
{
	struct giong_config cfg = gt_config(1);

	(void)state;
	gt_run(&cfg, server_needs_cert_main, NULL, NULL);
}

/* --- the readable notice, deferred --------------------------------------------------------- */

struct notice {
	int calls;
	struct giong_waitq q;
};

static void noticed(struct giong_stream *s, void *ctx)
{
	struct notice *n = ctx;

	(void)s;
	n->calls++;
	giong_waitq_wake_all(&n->q, 0);
}

/* Two records in one write of the stream beneath, and a read that takes a
 * part of the first: the rest is held inside the TLS stream. */
static void hold_some(struct giong_stream *s, struct giong_stream *k, unsigned char *buf)
{
	static unsigned char big[20000];

	tt_pattern(big, sizeof(big), 0);
	gt_check_int_equal(giong_stream_write_all(k, big, sizeof(big)), sizeof(big));
	gt_check_int_equal(giong_stream_read(s, buf, 100), 100);
}

static void deferred_main(unsigned worker, void *arg)
{
	struct giong_tls_config *srv = tt_server("server", NULL);
	struct giong_tls_config *cli = tt_client(NULL);
	struct giong_stream *s, *k;
	struct notice n = {0};
	unsigned char buf[20000];
	size_t got = 100;

	(void)worker;
	(void)arg;
	if (!gt_check_int_equal(tt_pair(srv, cli, "localhost", &s, &k, NULL), 0))
		goto out;
	hold_some(s, k, buf);
	/* Bytes are held: the notice comes, but from the worker loop, once,
	 * however often it is asked for meanwhile. */
	gt_check_int_equal(giong_stream_on_readable(s, noticed, &n), 0);
	gt_check_int_equal(n.calls, 0);
	gt_check_int_equal(giong_stream_on_readable(s, noticed, &n), 0);
	gt_check_int_equal(n.calls, 0);
	giong_waitq_wait(&n.q, 0);
	giong_sleep_ms(5);
	gt_check_int_equal(n.calls, 1);
	/* Withdrawn before the loop comes round: no call. */
	gt_check_int_equal(giong_stream_on_readable(s, noticed, &n), 0);
	gt_check_int_equal(giong_stream_on_readable(s, NULL, NULL), 0);
	giong_sleep_ms(5);
	gt_check_int_equal(n.calls, 1);
	/* All of it is still there, in order. */
	while (got < 20000) {
		ssize_t r = giong_stream_read(s, buf, sizeof(buf));

		if (!gt_check_true(r > 0) || !gt_check_true(tt_pattern_ok(buf, (size_t)r, got)))
			break;
		got += (size_t)r;
	}
	gt_check_int_equal(got, 20000);
	/* Closed with a notice on its way: no call, nothing touched after. */
	hold_some(s, k, buf);
	gt_check_int_equal(giong_stream_on_readable(s, noticed, &n), 0);
	gt_check_int_equal(giong_stream_close(s), 0);
	giong_sleep_ms(5);
	gt_check_int_equal(n.calls, 1);
	giong_stream_close(k);
out:
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
}

static void test_deferred_readable(void **state)
{
	struct giong_config cfg = gt_config(1);
	int fds = gt_count_fds();

	(void)state;
	gt_run(&cfg, deferred_main, NULL, NULL);
	gt_assert_fds(fds);
}

/* --- a stream beneath that fails ------------------------------------------------------------ */

/* The stream beneath: faulty_stream.h. */

static void lower_fails_main(unsigned worker, void *arg)
{
	struct giong_tls_config *srv = tt_server("server", NULL);
	struct giong_tls_config *cli = tt_client(NULL);
	struct giong_stream *s, *k;
	struct faulty *f;
	struct tt_sent snd = {.req.done = tt_sent_done};
	struct iovec iov = {"data", 4}, empty = {NULL, 0};
	char buf[64];

	(void)worker;
	(void)arg;

	/* The receive beneath fails for good: the same error every time. */
	if (!gt_check_int_equal(faulty_pair(srv, cli, &faulty_ops, &s, &f, &k), 0))
		goto out;
	f->recv_err = -ECONNRESET;
	gt_check_int_equal(giong_stream_read(s, buf, sizeof(buf)), -ECONNRESET);
	f->recv_err = 0;
	gt_check_int_equal(giong_stream_write_all(k, "late", 4), 4);
	gt_check_int_equal(giong_stream_read(s, buf, sizeof(buf)), -ECONNRESET); /* sticky */
	giong_stream_close(s);
	giong_stream_close(k);

	/* A transient failure (-EBUSY: the ring was full) takes nothing. */
	if (!gt_check_int_equal(faulty_pair(srv, cli, &faulty_ops, &s, &f, &k), 0))
		goto out;
	f->recv_err = -EBUSY;
	gt_check_int_equal(giong_stream_read(s, buf, sizeof(buf)), -EBUSY);
	f->recv_err = 0;
	gt_check_int_equal(giong_stream_write_all(k, "fine", 4), 4);
	gt_check_int_equal(giong_stream_read(s, buf, sizeof(buf)), 4);
	gt_check_memory_equal(buf, "fine", 4);

	/* send_start refused beneath: an empty send leaves the stream whole... */
	f->send_err = -EBUSY;
	gt_check_int_equal(giong_stream_send_start(s, &snd.req, &empty, 1), -EBUSY);
	gt_check_false(snd.done);
	f->send_err = 0;
	gt_check_int_equal(giong_stream_write_all(s, "ok", 2), 2);
	gt_check_int_equal(giong_stream_read(k, buf, sizeof(buf)), 2);
	/* ...the write beneath failing breaks it: the records may be cut. */
	f->write_err = -ECONNRESET;
	gt_check_int_equal(giong_stream_write(s, "lost", 4), -ECONNRESET);
	f->write_err = 0;
	gt_check_int_equal(giong_stream_write(s, "more", 4), -EPIPE);
	/* No close_notify can follow a cut: shutting the write side ends the
	 * stream beneath instead, and the peer sees the cut now, not at close. */
	gt_check_int_equal(giong_stream_shutdown(s, SHUT_WR), -EPIPE);
	uint64_t saved = giong_deadline_in(5000);
	gt_check_int_equal(giong_stream_read(k, buf, sizeof(buf)), GIONG_ETLS_TRUNCATED);
	giong_deadline_restore(saved);
	gt_check_int_equal(giong_stream_shutdown(s, SHUT_WR), -EPIPE); /* every time */
	gt_check_int_equal(giong_stream_send_start(s, &snd.req, &iov, 1), -EPIPE);
	giong_stream_close(s); /* no close_notify after a cut */
	giong_stream_close(k);

	/* A send_start whose records were made, then refused beneath: broken. */
	if (!gt_check_int_equal(faulty_pair(srv, cli, &faulty_ops, &s, &f, &k), 0))
		goto out;
	f->send_err = -ENOMEM;
	gt_check_int_equal(giong_stream_send_start(s, &snd.req, &iov, 1), -ENOMEM);
	f->send_err = 0;
	gt_check_int_equal(giong_stream_write(s, "x", 1), -EPIPE);
	giong_stream_close(s);
	giong_stream_close(k);
out:
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
}

static void test_lower_fails(void **state)
{
	struct giong_config cfg = gt_config(1);
	int fds = gt_count_fds();

	(void)state;
	gt_run(&cfg, lower_fails_main, NULL, NULL);
	gt_assert_fds(fds);
}

static void plain_lower_main(unsigned worker, void *arg)
{
	struct giong_tls_config *srv = tt_server("server", NULL);
	struct giong_tls_config *cli = tt_client(NULL);
	struct giong_stream *s, *k;
	struct faulty *f;
	struct tt_sent snd = {.req.done = tt_sent_done};
	struct iovec iov[4] = {{"a", 1}, {NULL, 0}, {"bc", 2}, {"", 0}};
	struct notice n = {0};
	char buf[64];

	(void)worker;
	(void)arg;
	if (!gt_check_int_equal(faulty_pair(srv, cli, &faulty_writev_ops, &s, &f, &k), 0))
		goto out;
	/* Beneath has no send_start: none here either, and nothing broken. */
	gt_check_int_equal(giong_stream_send_start(s, &snd.req, iov, 1), -ENOTSUP);
	/* ...nor a readable notice. */
	gt_check_int_equal(giong_stream_on_readable(s, noticed, &n), -ENOTSUP);
	/* Empty pieces among the others are skipped; an all-empty write sends
	 * nothing and is no error. */
	gt_check_int_equal(giong_stream_writev(s, iov, 4), 3);
	gt_check_int_equal(giong_stream_writev(s, iov + 1, 1), 0);
	gt_check_int_equal(giong_stream_read(k, buf, sizeof(buf)), 3);
	gt_check_memory_equal(buf, "abc", 3);
	/* Half closed from our side, and the peer's close_notify read. */
	gt_check_int_equal(giong_stream_shutdown(s, SHUT_WR), 0);
	gt_check_int_equal(giong_stream_read(k, buf, sizeof(buf)), 0);
	gt_check_int_equal(giong_stream_shutdown(s, SHUT_WR), 0); /* once is enough */
	gt_check_int_equal(giong_stream_write(s, "x", 1), -EPIPE);
	gt_check_int_equal(giong_stream_send_start(s, &snd.req, iov, 1), -ENOTSUP);
	giong_stream_close(s);
	giong_stream_close(k);
out:
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
}

static void test_lower_without_send_start(void **state)
{
	struct giong_config cfg = gt_config(1);
	int fds = gt_count_fds();

	(void)state;
	gt_run(&cfg, plain_lower_main, NULL, NULL);
	gt_assert_fds(fds);
}

static void corrupt_main(unsigned worker, void *arg)
{
	struct giong_tls_config *srv = tt_server("server", NULL);
	struct giong_tls_config *cli = tt_client(NULL);
	struct giong_stream *s, *k;
	struct faulty *f;
	char buf[64];
	ssize_t r;

	(void)worker;
	(void)arg;
	if (!gt_check_int_equal(faulty_pair(srv, cli, &faulty_ops, &s, &f, &k), 0))
		goto out;
	f->corrupt = true;
	gt_check_int_equal(giong_stream_write_all(k, "hello", 5), 5);
	/* A record whose tag does not check: a TLS error, never the bytes. */
	r = giong_stream_read(s, buf, sizeof(buf));
	gt_check_true(r <= GIONG_ETLS && r > -4095);
	gt_check_true(*giong_tls_last_error(s) != '\0');
	/* After it the connection writes nothing more: an error, then -EPIPE. */
	r = giong_stream_write(s, "x", 1);
	gt_check_true(r < 0);
	gt_check_int_equal(giong_stream_write(s, "x", 1), -EPIPE);
	/* The peer is told (bad_record_mac) and never reads a clean end. */
	r = giong_stream_read(k, buf, sizeof(buf));
	gt_check_true(r < 0);
	giong_stream_close(s);
	giong_stream_close(k);
out:
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
}

static void test_corrupt_record(void **state)
{
	struct giong_config cfg = gt_config(1);

	(void)state;
	gt_run(&cfg, corrupt_main, NULL, NULL);
}

static void handshake_lower_fails_main(unsigned worker, void *arg)
{
	struct giong_tls_config *srv = tt_server("server", NULL);
	struct giong_stream *a, *b, *s = (struct giong_stream *)1;
	struct faulty *f;

	(void)worker;
	(void)arg;
	if (!gt_check_int_equal(giong_unix_pair(&a, &b), 0))
		goto out;
	f = faulty_over(a, &faulty_ops);
	f->recv_err = -ECONNRESET;
	gt_check_int_equal(giong_tls_accept(&f->base, srv, &s), -ECONNRESET);
	gt_check_null(s);
	gt_check_string_not_equal(giong_tls_last_error(NULL), "");
	giong_stream_close(&f->base); /* still the caller's: closes a too */
	giong_stream_close(b);
out:
	giong_tls_config_free(srv);
}

static void test_handshake_lower_fails(void **state)
{
	struct giong_config cfg = gt_config(1);
	int fds = gt_count_fds();

	(void)state;
	gt_run(&cfg, handshake_lower_fails_main, NULL, NULL);
	gt_assert_fds(fds);
}

/* A client that answers nothing but close_notify (a warning alert, in
 * plaintext as the first record): no handshake, and the lower stream is the
 * caller's again. */
static void close_notify_hs_main(unsigned worker, void *arg)
{
	struct giong_tls_config *srv = tt_server("server", NULL);
	struct giong_stream *a, *b, *s = (struct giong_stream *)1;
	int r;

	(void)worker;
	(void)arg;
	if (!gt_check_int_equal(giong_unix_pair(&a, &b), 0))
		goto out;
	gt_check_int_equal(giong_stream_write_all(b, "\x15\x03\x03\x00\x02\x01\x00", 7), 7);
	r = giong_tls_accept(a, srv, &s);
	gt_check_true(r <= GIONG_ETLS && r > -4095);
	gt_check_null(s);
	gt_check_string_not_equal(giong_tls_last_error(NULL), "");
	gt_check_int_equal(giong_stream_write(a, "x", 1), 1);
	giong_stream_close(a);
	giong_stream_close(b);
out:
	giong_tls_config_free(srv);
}

static void test_close_notify_in_handshake(void **state)
{
	struct giong_config cfg = gt_config(1);
	int fds = gt_count_fds();

	(void)state;
	gt_run(&cfg, close_notify_hs_main, NULL, NULL);
	gt_assert_fds(fds);
}

static void test_self_signed(void **state)
{
	/* A server certificate that signed itself: refused, and the reason told. */
	struct edge_case c = {.name = "localhost", .want = GIONG_ETLS_CERT, .want_resumed = -1};

	(void)state;
	assert_int_equal(giong_tls_config_new(tt_backend(), &c.srv), 0);
	assert_int_equal(
		giong_tls_config_add_cert_file(c.srv, tmp_path("self.pem"), tmp_path("self.key")),
		0);
	c.cli = tt_client(NULL);
	run_edge(&c);
}

static void test_not_yet_valid(void **state)
{
	struct edge_case c = {.name = "localhost",
			      .want = GIONG_ETLS_CERT,
			      .want_resumed = -1,
			      .why = "not yet valid"};

	(void)state;
	assert_int_equal(giong_tls_config_new(tt_backend(), &c.srv), 0);
	assert_int_equal(giong_tls_config_add_cert_file(c.srv, tmp_path("future.pem"),
							tmp_path("future.key")),
			 0);
	c.cli = tt_client(NULL);
	run_edge(&c);
}

static void test_bad_signature(void **state)
{
	/* The certificate's signature does not check against the CA's key. */
	struct edge_case c = {
		.name = "localhost", .want = GIONG_ETLS_CERT, .want_resumed = -1, .why = "sig"};

	(void)state;
	assert_int_equal(giong_tls_config_new(tt_backend(), &c.srv), 0);
	assert_int_equal(giong_tls_config_add_cert_file(c.srv, tmp_path("badsig.pem"),
							tt_path("server.key")),
			 0);
	c.cli = tt_client(NULL);
	run_edge(&c);
}

static void long_name_main(unsigned worker, void *arg)
{
	struct giong_tls_config *srv = tt_server("server", NULL);
	struct giong_tls_config *cli = tt_client(NULL);
	struct giong_stream *s, *k;
	char name[301];
	int r;

	(void)worker;
	(void)arg;
	/* 300 bytes: no DNS name is that long (253 at most). */
	memset(name, 'a', 300);
	name[300] = '\0';
	for (int i = 60; i < 300; i += 61)
		name[i] = '.';
	r = tt_pair(srv, cli, name, &s, &k, NULL);
	if (!strcmp(tt_backend()->name, "openssl"))
		gt_check_int_equal(r, GIONG_ETLS_CONFIG); /* refused before a byte is sent */
	else
		gt_check_int_equal(
			r, GIONG_ETLS_CERT); /* sent, and the certificate does not name it */
	gt_check_null(k);
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
}

static void test_name_too_long(void **state)
{
	struct giong_config cfg = gt_config(1);

	(void)state;
	gt_run(&cfg, long_name_main, NULL, NULL);
}

/* --- writes of many pieces, through the ops with GIONG_WRITE_ALL ----------------------------- */

struct drain {
	struct giong_stream *s;
	size_t len, got;
	int err;
};

static intptr_t drain_task(void *arg)
{
	struct drain *d = arg;
	unsigned char buf[8192];

	while (d->got < d->len) {
		ssize_t r = giong_stream_read(d->s, buf, sizeof(buf));

		if (r <= 0 || !tt_pattern_ok(buf, (size_t)r, d->got)) {
			d->err = r <= 0 ? (int)r : -EBADMSG;
			break;
		}
		d->got += (size_t)r;
	}
	return 0;
}

/* @n pieces of @each bytes of one pattern, in one writev that must send all:
 * more than one batch of records, every byte in order. */
static void pieces(struct giong_stream *s, struct giong_stream *k, int n, size_t each)
{
	unsigned char *buf = malloc((size_t)n * each);
	struct iovec *iov = calloc((size_t)n, sizeof(*iov));
	struct drain d = {.s = k, .len = (size_t)n * each};
	struct giong_task *t;

	tt_pattern(buf, d.len, 0);
	for (int i = 0; i < n; i++)
		iov[i] = (struct iovec){buf + (size_t)i * each, each};
	giong_spawn(drain_task, &d, &t);
	gt_check_int_equal(s->ops->writev(s, iov, n, GIONG_WRITE_ALL), (ssize_t)d.len);
	giong_join(t, NULL);
	gt_check_int_equal(d.err, 0);
	gt_check_int_equal(d.got, d.len);
	free(iov);
	free(buf);
}

static void pieces_main(unsigned worker, void *arg)
{
	struct giong_tls_config *srv = tt_server("server", NULL);
	struct giong_tls_config *cli = tt_client(NULL);
	struct giong_stream *s, *k;
	struct iovec huge[2] = {{"a", SIZE_MAX}, {"b", 2}};

	(void)worker;
	(void)arg;
	if (!gt_check_int_equal(tt_pair(srv, cli, "localhost", &s, &k, NULL), 0))
		goto out;
	pieces(s, k, 2, 40000); /* the second batch starts inside the second piece */
	pieces(s, k, 50, 1999); /* small pieces gathered, a batch ends inside a gather */
	pieces(s, k, 3, 30000);
	/* What the generic calls check first, the ops check too. */
	gt_check_int_equal(s->ops->writev(s, huge, 2, 0), -EINVAL); /* the sum overflows */
	gt_check_int_equal(s->ops->writev(s, huge, 0, 0), -EINVAL);
	gt_check_int_equal(talk(s, k), 0);
	giong_stream_close(s);
	giong_stream_close(k);
out:
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
}

static void test_writev_pieces(void **state)
{
	struct giong_config cfg = gt_config(1);

	(void)state;
	gt_run(&cfg, pieces_main, NULL, NULL);
}

/* --- bad arguments on a live stream -------------------------------------------------------- */

static void args_main(unsigned worker, void *arg)
{
	struct giong_tls_config *srv = tt_server("server", NULL);
	struct giong_tls_config *cli = tt_client(NULL);
	struct giong_stream *s, *k;
	struct tt_sent snd = {.req.done = tt_sent_done}, nodone = {0};
	struct iovec bad = {NULL, 5}, ok = {"x", 1};
	char buf[8];

	(void)worker;
	(void)arg;
	if (!gt_check_int_equal(tt_pair(srv, cli, "localhost", &s, &k, NULL), 0))
		goto out;
	gt_check_int_equal(giong_stream_read(s, buf, 0), -EINVAL);
	gt_check_int_equal(giong_stream_writev(s, &bad, 1), -EINVAL);
	gt_check_int_equal(giong_stream_writev(s, NULL, 1), -EINVAL);
	gt_check_int_equal(giong_stream_send_start(s, &nodone.req, &ok, 1), -EINVAL);
	gt_check_int_equal(giong_stream_send_start(s, &snd.req, &bad, 1), -EINVAL);
	gt_check_int_equal(giong_stream_shutdown(s, 7), -EINVAL);
	/* None of it harmed the stream. */
	gt_check_int_equal(talk(s, k), 0);
	gt_check_int_equal(giong_stream_shutdown(s, SHUT_RD), 0);
	giong_stream_close(s);
	giong_stream_close(k);
out:
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
}

static void test_bad_stream_arguments(void **state)
{
	struct giong_config cfg = gt_config(1);

	(void)state;
	gt_run(&cfg, args_main, NULL, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_setter_refusals),
		cmocka_unit_test(test_files_that_do_not_load),
		cmocka_unit_test(test_bad_chain),
		cmocka_unit_test(test_system_roots),
		cmocka_unit_test(test_sni_without_match),
		cmocka_unit_test(test_server_tickets_off),
		cmocka_unit_test(test_no_name_no_verify),
		cmocka_unit_test(test_ca_dir_without_ca),
		cmocka_unit_test(test_alpn_with_comma),
		cmocka_unit_test(test_client_presents_first_cert),
		cmocka_unit_test(test_session_cache_eviction),
		cmocka_unit_test(test_session_dropped_after_failure),
		cmocka_unit_test(test_wrong_worker),
		cmocka_unit_test(test_server_without_cert),
		cmocka_unit_test(test_deferred_readable),
		cmocka_unit_test(test_lower_fails),
		cmocka_unit_test(test_lower_without_send_start),
		cmocka_unit_test(test_corrupt_record),
		cmocka_unit_test(test_handshake_lower_fails),
		cmocka_unit_test(test_bad_stream_arguments),
		cmocka_unit_test(test_close_notify_in_handshake),
		cmocka_unit_test(test_self_signed),
		cmocka_unit_test(test_not_yet_valid),
		cmocka_unit_test(test_bad_signature),
		cmocka_unit_test(test_name_too_long),
		cmocka_unit_test(test_writev_pieces),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, setup, teardown);
}
