/* SPDX-License-Identifier: MIT */
/*
 * test_ciphers.c - a server's default cipher suites, with one backend on both sides (the
 * client told which suites to offer, giong_tls_config_ciphers()): TLS 1.2 offers ECDHE with
 * AEADs only, so a client offering only CBC suites (ECDSA and RSA certificates) is refused,
 * and the server's order decides: a client offering a CBC suite, then AES-256-GCM, then the
 * server's preferred suites, gets one of the latter (never the CBC suite, never AES-256-GCM,
 * which a server that followed the client would pick). TLS 1.3 too: a client offering
 * AES-256-GCM before AES-128-GCM gets AES-128-GCM, the servers' first of the two.
 * (A wolfSSL without CBC suites cannot be the refused client: tls.cross has an OpenSSL
 * client offer them to a wolfSSL server.)
 */
#include <string.h>

#include "tls_test.h"

struct cipher_case {
	const char *cert;    /* the server's: "server" (ECDSA) or "server-rsa" */
	const char *offer12; /* the client's TLS 1.2 suites, or NULL */
	const char *offer13; /* the client's TLS 1.3 suites (then 1.3 only), or NULL */
	bool refused;        /* the handshake must fail */
	const char *want[2]; /* the suite (IANA name) must be one of these */
	int client_err, server_err;
	char cipher[128]; /* what was negotiated */
};

static void cipher_main(unsigned worker, void *arg)
{
	struct cipher_case *c = arg;
	struct giong_tls_config *srv = tt_server(c->cert, NULL), *cli = tt_client(NULL);
	struct giong_stream *s = NULL, *k = NULL;
	enum giong_tls_version v = c->offer13 ? GIONG_TLS_1_3 : GIONG_TLS_1_2;

	(void)worker;
	/* Only the client is told anything: the server keeps the backend's defaults. */
	gt_check_int_equal(giong_tls_config_versions(cli, v, v), 0);
	gt_check_int_equal(giong_tls_config_ciphers(cli, c->offer12, c->offer13), 0);
	c->client_err = tt_pair(srv, cli, "localhost", &s, &k, &c->server_err);
	if (!c->client_err) {
		snprintf(c->cipher, sizeof(c->cipher), "%s", giong_tls_cipher(s));
		giong_stream_close(s);
		giong_stream_close(k);
	}
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
}

static void run_case(struct cipher_case *c)
{
	struct giong_config cfg = gt_config(1);

	gt_run(&cfg, cipher_main, c, NULL);
	if (c->refused && c->client_err == GIONG_ETLS_CONFIG &&
	    !strcmp(tt_backend()->name, "wolfssl")) {
		/* Debian's wolfSSL has no CBC suite to offer (a client that knows no name of the
		 * list fails at its set-up): tls.cross has an OpenSSL client offer them. */
		print_message("wolfssl: a client cannot offer %s here: skipped\n", c->offer12);
		skip();
	}
	if (c->refused) {
		if (c->client_err == 0)
			print_message("%s: the client offering %s got %s\n", tt_backend()->name,
				      c->offer12, c->cipher);
		assert_int_not_equal(c->client_err, 0);
		/* Refused for the suites (no common one), not for a suite the client's library
		 * does not know (that would be GIONG_ETLS_CONFIG, before anything was sent). */
		assert_int_not_equal(c->client_err, GIONG_ETLS_CONFIG);
		assert_int_equal(c->server_err, GIONG_ETLS_HANDSHAKE);
		return;
	}
	if (c->client_err)
		print_message("%s: %s / %s: client %s, server %s (%s)\n", tt_backend()->name,
			      c->cert, c->offer12 ? c->offer12 : c->offer13,
			      giong_strerror(c->client_err), giong_strerror(c->server_err),
			      tt_connect_error);
	assert_int_equal(c->client_err, 0);
	if (strcmp(c->cipher, c->want[0]) && (!c->want[1] || strcmp(c->cipher, c->want[1])))
		fail_msg("%s: got %s, not %s%s%s", tt_backend()->name, c->cipher, c->want[0],
			 c->want[1] ? " or " : "", c->want[1] ? c->want[1] : "");
}

static void test_cbc_only_refused(void **state)
{
	struct cipher_case ecdsa = {
		.cert = "server",
		.offer12 = "ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA:"
			   "ECDHE-ECDSA-AES128-SHA256:ECDHE-ECDSA-AES256-SHA384",
		.refused = true,
	};
	struct cipher_case rsa = {
		.cert = "server-rsa",
		.offer12 = "ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES256-SHA:ECDHE-RSA-AES128-SHA256:"
			   "AES128-SHA:AES256-SHA",
		.refused = true,
	};

	(void)state;
	run_case(&ecdsa);
	run_case(&rsa);
}

static void test_server_order_tls12(void **state)
{
	/* The OpenSSL backend puts AES-128-GCM first; the wolfSSL backend too, or
	 * ChaCha20-Poly1305 when its wolfSSL has no AES-NI (Debian's). */
	bool openssl = !strcmp(tt_backend()->name, "openssl");
	struct cipher_case ecdsa = {
		.cert = "server",
		.offer12 = "ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-AES256-GCM-SHA384:"
			   "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-CHACHA20-POLY1305",
		.want = {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
			 openssl ? NULL : "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"},
	};
	struct cipher_case rsa = {
		.cert = "server-rsa",
		.offer12 = "ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES256-GCM-SHA384:"
			   "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-CHACHA20-POLY1305",
		.want = {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
			 openssl ? NULL : "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"},
	};

	(void)state;
	run_case(&ecdsa);
	run_case(&rsa);
}

static void test_server_order_tls13(void **state)
{
	struct cipher_case c = {
		.cert = "server",
		.offer13 = "TLS_AES_256_GCM_SHA384:TLS_AES_128_GCM_SHA256",
		.want = {"TLS_AES_128_GCM_SHA256"},
	};

	(void)state;
	run_case(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cbc_only_refused),
		cmocka_unit_test(test_server_order_tls12),
		cmocka_unit_test(test_server_order_tls13),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
