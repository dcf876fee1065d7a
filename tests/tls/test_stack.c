/* SPDX-License-Identifier: MIT */
/*
 * test_stack.c - how deep a handshake goes into a fiber's stack, for the
 * server and the client, with an ECDSA P-256 and an RSA 2048 certificate,
 * TLS 1.3 and 1.2: each side runs in a task that first paints the stack
 * below it, and counts afterwards how much of the paint was overwritten.
 * Asserts that the backend's declared need (stack_need, which accept and
 * connect check against the stack left) covers what was measured, and that
 * core's default 128 KiB fiber stack holds it with room for the callers'
 * frames; prints the figures docs/tls.md quotes. Tasks here get a 256 KiB
 * stack so that a deep backend is measured, not crashed. Then a task whose
 * stack is too small is refused with GIONG_ESTACK instead of overflowing.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tls_test.h"

#define PAINT_BYTES (192u * 1024) /* painted below the task's frame */
#define PAINT 0x5a
#define DEFAULT_STACK (128u * 1024) /* core's giong_config.stack_size default */

struct side {
	struct giong_tls_config *cfg;
	struct giong_stream *lower;
	bool server;
	int err;
	size_t depth;
};

/* Paint the unused stack below our caller's frame. Not inlined, so that its
 * own frame is not counted as the handshake's. */
static __attribute__((noinline)) void paint(char *top)
{
	volatile char *p = top - PAINT_BYTES;

	for (size_t i = 0; i < PAINT_BYTES - 512; i++)
		p[i] = PAINT;
}

static __attribute__((noinline)) size_t painted_depth(char *top)
{
	const char *p = top - PAINT_BYTES;
	size_t i = 0;

	while (i < PAINT_BYTES - 512 && p[i] == PAINT)
		i++;
	return PAINT_BYTES - i;
}

static intptr_t side_task(void *arg)
{
	struct side *s = arg;
	char *top = __builtin_frame_address(0);
	struct giong_stream *tls = NULL;
	char buf[64];

	paint(top);
	s->err = s->server ? giong_tls_accept(s->lower, s->cfg, &tls)
			   : giong_tls_connect(s->lower, s->cfg, "localhost", &tls);
	if (s->err == 0) {
		/* A little traffic each way too: reads process the tickets. */
		if (s->server) {
			giong_stream_write_all(tls, "ping", 4);
			giong_stream_read(tls, buf, sizeof(buf));
		} else {
			giong_stream_read(tls, buf, sizeof(buf));
			giong_stream_write_all(tls, "pong", 4);
		}
		s->lower = NULL; /* closed with tls */
		giong_stream_close(tls);
	}
	s->depth = painted_depth(top);
	return 0;
}

struct stack_case {
	const char *cert;
	enum giong_tls_version version;
	size_t depth[2]; /* server, client */
};

static void stack_main(unsigned worker, void *arg)
{
	struct stack_case *c = arg;
	struct giong_tls_config *srv = tt_server(c->cert, NULL);
	struct giong_tls_config *cli = tt_client(NULL);
	struct side sides[2] = {{.cfg = srv, .server = true}, {.cfg = cli}};
	struct giong_task *t[2];

	(void)worker;
	gt_check_int_equal(giong_tls_config_versions(cli, c->version, c->version), 0);
	if (!gt_check_int_equal(giong_unix_pair(&sides[0].lower, &sides[1].lower), 0))
		goto out;
	for (int i = 0; i < 2; i++)
		gt_check_int_equal(giong_spawn(side_task, &sides[i], &t[i]), 0);
	for (int i = 0; i < 2; i++) {
		giong_join(t[i], NULL);
		gt_check_int_equal(sides[i].err, 0);
		if (sides[i].lower)
			giong_stream_close(sides[i].lower);
		c->depth[i] = sides[i].depth;
	}
out:
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
}

static void test_handshake_stack_depth(void **state)
{
	struct stack_case cases[] = {
		{"server", GIONG_TLS_1_3, {0}},
		{"server", GIONG_TLS_1_2, {0}},
		{"server-rsa", GIONG_TLS_1_3, {0}},
		{"server-rsa", GIONG_TLS_1_2, {0}},
	};
	struct giong_config cfg = gt_config(1);

	(void)state;
	cfg.stack_size = 256u * 1024;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct stack_case *c = &cases[i];

		gt_run(&cfg, stack_main, c, NULL);
		printf("stack: %s %s %s: server %zu bytes, client %zu bytes (of %u)\n",
		       tt_backend()->name, c->cert,
		       c->version == GIONG_TLS_1_3 ? "TLSv1.3" : "TLSv1.2", c->depth[0],
		       c->depth[1], DEFAULT_STACK);
		/* The paint was really overwritten (the measurement works)... */
		assert_true(c->depth[0] > 1024 && c->depth[1] > 1024);
		/* ...the declared need covers it... */
		assert_true(c->depth[0] <= tt_backend()->stack_need);
		assert_true(c->depth[1] <= tt_backend()->stack_need);
	}
	/* ...and the default stack holds it with the margin accept checks
	 * (8 KiB) and 32 KiB for the frames of the callers (HTTP's). */
	assert_true(tt_backend()->stack_need + 8192 + 32768 <= DEFAULT_STACK);
}

static void small_main(unsigned worker, void *arg)
{
	struct giong_tls_config *srv = tt_server("server-rsa", NULL);
	struct giong_stream *a, *b, *s = NULL;

	(void)worker;
	(void)arg;
	if (gt_check_int_equal(giong_unix_pair(&a, &b), 0)) {
		gt_check_int_equal(giong_tls_accept(a, srv, &s), GIONG_ESTACK);
		gt_check_null(s);
		gt_check_true(strstr(giong_tls_last_error(NULL), "stack") != NULL);
		giong_stream_close(a);
		giong_stream_close(b);
	}
	giong_tls_config_free(srv);
}

static void test_small_stack_refused(void **state)
{
	struct giong_config cfg = gt_config(1);

	(void)state;
	cfg.stack_size = 16u * 1024; /* the least core allows; every backend needs more */
	gt_run(&cfg, small_main, NULL, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handshake_stack_depth),
		cmocka_unit_test(test_small_stack_refused),
	};

#if defined(GIONG_ASAN) || defined(__SANITIZE_ADDRESS__)
	/* ASan's frames are larger and its shadow objects to writes below sp. */
	fprintf(stderr, "SKIP: stack depth is measured without AddressSanitizer\n");
	return GT_SKIP;
#endif
	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
