/* SPDX-License-Identifier: MIT */
/*
 * test_fault_sweep.c - every failure point of a TLS connection's life, one
 * at a time, with one backend (a GIONG_FAULTS=ON build only: the plan's
 * "kind=@N", private/giong_faults.h).
 *
 * The scenario: a server configuration with two certificates (SNI), ALPN
 * and cipher lists, a client trusting a CA file, a CA directory and the
 * system's roots; the contexts
 * built on the first handshake; a handshake, a request and a reply, a
 * close_notify; a second connection that resumes the first one's session.
 * Run once with the Nth allocation of giong's libraries failing (alloc=@N),
 * and once with the Nth TLS library call or step failing (tls=@N), for N =
 * 1, 2, ... until a run makes fewer than N decisions of that kind: each
 * failure point of the scenario, in the order the scenario reaches them.
 *
 * Before them, the two configurations are built with their Nth allocation
 * failing: each call gives 0 or -ENOMEM, and what was made is freed.
 *
 * Each run must end cleanly: every call that fails returns -ENOMEM, a
 * GIONG_ETLS* code or the error a broken peer gives (-EPIPE,
 * -ECONNRESET), a failed connect leaves words for giong_tls_last_error(NULL),
 * nothing crashes, no descriptor is left open (and, in the
 * ASan build scripts/check faults uses, nothing leaks). Then, with no fault,
 * the same two configurations must serve the whole scenario: a failure
 * that was the allocator's or the library's passing trouble must not stay
 * in a configuration for good. (A library call that refuses a setting,
 * GIONG_ETLS_CONFIG, is the configuration's: that one must stay.)
 */
#include <errno.h>
#include <string.h>

#include "tls_test.h"

#ifndef GIONG_FAULTS
#error "test_fault_sweep.c is built only with GIONG_FAULTS=ON (tests/tls/CMakeLists.txt)"
#endif

/* More decisions than any run of the scenario makes (a run that reaches it
 * fails the test: the sweep would not end). */
#define SWEEP_MAX 4000

/* Cipher lists of both libraries' syntax (the scenario sets them). */
#define CIPHERS12 "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-CHACHA20-POLY1305"
#define CIPHERS13 "TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256"

struct scenario {
	struct giong_tls_config *srv, *cli;
	int err;           /* the first error, 0: every step done */
	const char *where; /* the step that gave it */
	int resumed;       /* the second connection resumed the first one's session */
};

static bool step(struct scenario *sc, const char *where, ssize_t r)
{
	if (r >= 0)
		return true;
	if (!sc->err) {
		sc->err = (int)r;
		sc->where = where;
	}
	return false;
}

/* One connection: handshakes (tt_pair), "ping" and "pong", the client's
 * close_notify read by the server as the end. Every stream closed. */
static void connection(struct scenario *sc, bool second)
{
	struct giong_stream *s = NULL, *c = NULL;
	char buf[16];
	ssize_t n;
	int serr = 0, r;

	tt_connect_error[0] = '\0';
	r = tt_pair(sc->srv, sc->cli, "localhost", &s, &c, &serr);
	if (tt_connect_result < 0 && !tt_connect_error[0]) {
		/* The client's connect failed: it must say why, whatever failed. */
		step(sc, "giong_tls_last_error(NULL) after a failed connect (empty)", -EBADMSG);
		goto out;
	}
	if (!step(sc, "handshake", r) || !step(sc, "server handshake", serr))
		goto out;
	if (second)
		sc->resumed = giong_tls_resumed(c);
	if (!step(sc, "client write", giong_stream_write_all(c, "ping", 4)))
		goto out;
	n = giong_stream_read(s, buf, sizeof(buf));
	if (!step(sc, "server read", n))
		goto out;
	if (n != 4 || memcmp(buf, "ping", 4)) {
		step(sc, "server read (the bytes)", -EBADMSG);
		goto out;
	}
	if (!step(sc, "server write", giong_stream_write_all(s, "pong", 4)))
		goto out;
	/* The first read also takes the server's session ticket (TLS 1.3). */
	n = giong_stream_read(c, buf, sizeof(buf));
	if (!step(sc, "client read", n))
		goto out;
	if (n != 4 || memcmp(buf, "pong", 4)) {
		step(sc, "client read (the bytes)", -EBADMSG);
		goto out;
	}
	if (!step(sc, "client shutdown", giong_stream_shutdown(c, SHUT_WR)))
		goto out;
	n = giong_stream_read(s, buf, sizeof(buf));
	if (!step(sc, "server read (the end)", n))
		goto out;
	if (n != 0)
		step(sc, "server read (the end)", -EBADMSG);
out:
	if (s)
		giong_stream_close(s);
	if (c)
		giong_stream_close(c);
}

static void scenario_main(unsigned worker, void *arg)
{
	struct scenario *sc = arg;

	(void)worker;
	connection(sc, false);
	if (!sc->err)
		connection(sc, true);
}

/* The scenario on a runtime of one worker. The runtime's own result goes
 * to sc->err (where = "runtime") if no step failed before. */
static void run_scenario(struct scenario *sc)
{
	struct giong_config cfg = gt_config(1);
	struct giong_runtime *rt;
	int r;

	sc->err = 0;
	sc->where = NULL;
	sc->resumed = -1;
	if (!step(sc, "giong_runtime_new", giong_runtime_new(&cfg, &rt)))
		return;
	r = giong_runtime_run(rt, scenario_main, sc);
	step(sc, "giong_runtime_run", r);
	step(sc, "giong_runtime_free", giong_runtime_free(rt));
	gt_checks_assert();
}

static void configs(struct scenario *sc);

static void plan(const char *spec)
{
	char err[160];

	if (giong__faults_configure(spec, err, sizeof(err)))
		fail_msg("plan '%s' refused: %s", spec, err);
}

/* The errors a failure point may give: the allocator's, the TLS layer's,
 * and a peer's that broke in the middle. */
static bool clean_error(int err)
{
	return err == -ENOMEM || (err <= GIONG_ETLS && err >= GIONG_ETLS_CONFIG) || err == -EPIPE ||
	       err == -ECONNRESET;
}

static void sweep(const char *kind, enum giong__fault_kind k)
{
	unsigned n, failed_runs = 0, refused_for_good = 0;
	int fds = gt_count_fds();
	char spec[64];

	for (n = 1; n <= SWEEP_MAX; n++) {
		struct scenario sc;

		configs(&sc);
		snprintf(spec, sizeof(spec), "workers=1,%s=@%u", kind, n);
		plan(spec);
		run_scenario(&sc);
		uint64_t injected = giong__faults_injected(k);
		plan("");
		if (!injected) {
			/* Past the scenario's last decision: a run with no fault. */
			if (sc.err)
				fail_msg("%s: no fault injected, yet %s: %s", spec, sc.where,
					 giong_strerror(sc.err));
			assert_int_equal(sc.resumed, 1);
			giong_tls_config_free(sc.srv);
			giong_tls_config_free(sc.cli);
			break;
		}
		if (sc.err) {
			failed_runs++;
			if (!clean_error(sc.err))
				fail_msg("%s: %s: %s (%d), not a clean failure", spec, sc.where,
					 giong_strerror(sc.err), sc.err);
		}
		/* The same configurations, no fault: everything works; except
		 * after a library call's refusal to take a setting while the
		 * context was built, which is the configuration's for good
		 * (config.c: giong_tls_config_check() says so), and stays. */
		bool for_good = giong_tls_config_check(sc.srv, NULL, 0) == GIONG_ETLS_CONFIG ||
				giong_tls_config_check(sc.cli, NULL, 0) == GIONG_ETLS_CONFIG;

		run_scenario(&sc);
		if (for_good) {
			refused_for_good++;
			if (!sc.err)
				fail_msg("%s, then no fault: served by a configuration refused",
					 spec);
		} else {
			if (sc.err)
				fail_msg("%s, then no fault: %s: %s (the failure stayed)", spec,
					 sc.where, giong_strerror(sc.err));
			assert_int_equal(sc.resumed, 1);
		}
		giong_tls_config_free(sc.srv);
		giong_tls_config_free(sc.cli);
		if (gt_count_fds() != fds)
			fail_msg("%s: %d descriptors open, %d before", spec, gt_count_fds(), fds);
	}
	if (n > SWEEP_MAX)
		fail_msg("%s: still deciding after %u decisions", kind, SWEEP_MAX);
	print_message("%s: %u failure points, %u of them failed the scenario (cleanly), %u "
		      "as a configuration refused\n",
		      kind, n - 1, failed_runs, refused_for_good);
	/* A scenario of one handshake pair makes more decisions than this. */
	assert_true(n - 1 >= 10);
}

/* Building the two configurations on the program's own thread with its
 * Nth allocation failing: each call returns 0 or -ENOMEM, the
 * configuration so far stays usable to free, nothing leaks. */
static int build_configs(struct giong_tls_config **srv, struct giong_tls_config **cli)
{
	static const char *const alpn[] = {"h2", "http/1.1"};
	int r;

	*srv = *cli = NULL;
	if ((r = giong_tls_config_new(tt_backend(), srv)) ||
	    (r = giong_tls_config_add_cert_file(*srv, tt_path("server.pem"),
						tt_path("server.key"))) ||
	    (r = giong_tls_config_add_cert_file(*srv, tt_path("sni.pem"), tt_path("sni.key"))) ||
	    (r = giong_tls_config_alpn(*srv, alpn, 2)) ||
	    (r = giong_tls_config_ciphers(*srv, CIPHERS12, CIPHERS13)))
		return r;
	if ((r = giong_tls_config_new(tt_backend(), cli)) ||
	    (r = giong_tls_config_ca_file(*cli, tt_path("ca.pem"))) ||
	    (r = giong_tls_config_ca_dir(*cli, tt_path("ca-dir"))) ||
	    (r = giong_tls_config_ca_system(*cli)) || (r = giong_tls_config_alpn(*cli, alpn, 2)) ||
	    (r = giong_tls_config_ciphers(*cli, CIPHERS12, CIPHERS13)))
		return r;
	return 0;
}

static void configs(struct scenario *sc)
{
	assert_int_equal(build_configs(&sc->srv, &sc->cli), 0);
	assert_int_equal(giong_tls_config_handshake_timeout(sc->srv, 5000), 0);
	assert_int_equal(giong_tls_config_handshake_timeout(sc->cli, 5000), 0);
}

static void test_config_alloc(void **state)
{
	unsigned n;
	char spec[64];

	(void)state;
	for (n = 1; n <= SWEEP_MAX; n++) {
		struct giong_tls_config *srv, *cli;
		int r;

		snprintf(spec, sizeof(spec), "alloc=@%u", n);
		plan(spec);
		r = build_configs(&srv, &cli);
		uint64_t injected = giong__faults_injected(GIONG__FAULT_ALLOC);
		plan("");
		giong_tls_config_free(srv); /* NULL, or what was made before the failure */
		giong_tls_config_free(cli);
		if (!injected) {
			assert_int_equal(r, 0);
			break;
		}
		if (r != -ENOMEM)
			fail_msg("%s: %s (%d), not -ENOMEM", spec, giong_strerror(r), r);
	}
	if (n > SWEEP_MAX)
		fail_msg("still deciding after %u decisions", SWEEP_MAX);
	print_message("configuration: %u allocations, each failed once\n", n - 1);
	assert_true(n - 1 >= 5);
}

static void test_alloc(void **state)
{
	(void)state;
	sweep("alloc", GIONG__FAULT_ALLOC);
}

static void test_tls(void **state)
{
	(void)state;
	sweep("tls", GIONG__FAULT_TLS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_alloc),
		cmocka_unit_test(test_alloc),
		cmocka_unit_test(test_tls),
	};

	/* No fault while checking for io_uring; each run sets its own plan
	 * (whatever GIONG_FAULTS the suite runs under). */
	plan("");
	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
