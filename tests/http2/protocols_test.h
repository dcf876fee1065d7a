/* SPDX-License-Identifier: MIT */
/*
 * protocols_test.h - the fixture of test_protocols.c: one server of
 * libgiong-http with HTTP/2 beside HTTP/1.1 on one listener, and
 * libgiong-http's own client, both in the one worker of a runtime made for
 * each test case (a serve task, the case in the main task), the client
 * speaking the protocol of the variant the program was started for:
 *
 *   h1   plain http://, a client with no protocols: HTTP/1.1;
 *   h2c  plain http://, a client with giong_http2() and prior knowledge;
 *   h2   https:// (built with PT_TLS, once per TLS backend: TT_BACKEND), both
 *        sides offering ALPN "h2" then "http/1.1".
 *
 * After each case pt_check_protocol() asserts the protocol really spoken, by
 * the client's counters (requests sent as streams), HTTP/2's own counters on
 * the server and the version each handler saw: an h2 variant that fell back
 * to HTTP/1.1 fails, as does an h1 one that did not.
 */
#ifndef GIONG_PROTOCOLS_TEST_H
#define GIONG_PROTOCOLS_TEST_H

#include <stdio.h>
#include <string.h>

#ifdef PT_TLS
#include "tls_test.h" /* TT_BACKEND's configurations, the certificates of tls.certs */
#else
#include "giong_test.h"
#endif

#include <giong/http.h>
#include <giong/http2.h>

enum pt_variant { PT_H1, PT_H2C, PT_H2 };

struct pt_env {
	enum pt_variant variant;
	const char *name; /* "h1", "h2c", "h2" */
	struct giong_http_router *router;
	struct giong_http_server *srv;
	struct giong_http_client *cli;
	struct giong_tls_config *srv_tls, *cli_tls;
	struct giong_listener *l;
	char url[64]; /* "http://127.0.0.1:<port>" or https:// */
	void (*scenario)(struct pt_env *e);
	/* What the handlers saw of their requests' versions (one worker: no
	 * atomics needed), and the HTTP/2 counters when the case began. */
	unsigned seen_h1, seen_h2, seen_other;
	struct giong_http2_stats h2_before;
};

static struct pt_env pt_env;

/* The protocol the handler's request came in (counted for pt_check_protocol()). */
static inline void pt_note(const struct giong_http_request *req)
{
	int v = giong_http_request_version(req);

	if (v == 11)
		pt_env.seen_h1++;
	else if (v == 20)
		pt_env.seen_h2++;
	else
		pt_env.seen_other++;
}

#ifdef PT_TLS
/* libgiong-http's connector, giong_tls_connect()'s work: the URL's host (an IP
 * address the certificate names) is the name checked. */
static int pt_tls_connector(struct giong_stream *tcp, const char *host, void *ctx,
			    struct giong_stream **out)
{
	return giong_tls_connect(tcp, ctx, host, out);
}
#endif

/* The server's limits in every case: a small head (431 is in reach of the
 * client, whose own head limit is 64 KiB) and room for the 1 MiB body. */
static inline void pt_limits(struct giong_http_limits *lim)
{
	giong_http_limits_init(lim);
	lim->request_line = 4096;
	lim->head = 8192;
	lim->body = 2u << 20;
}

/* The variant @name ("h1", "h2c", "h2") into pt_env. Returns 0, or -EINVAL
 * for a variant this build does not run. */
static inline int pt_variant_init(const char *name)
{
#ifdef PT_TLS
	if (strcmp(name, "h2"))
		return -EINVAL;
	pt_env.variant = PT_H2;
#else
	if (!strcmp(name, "h1"))
		pt_env.variant = PT_H1;
	else if (!strcmp(name, "h2c"))
		pt_env.variant = PT_H2C;
	else
		return -EINVAL;
#endif
	pt_env.name = name;
	return 0;
}

/* The TLS configurations of the h2 variant (in the group's setup: they
 * assert), both sides offering "h2" then "http/1.1". */
static inline void pt_variant_tls(void)
{
#ifdef PT_TLS
	static const char *const alpn[] = {"h2", "http/1.1", NULL};

	pt_env.srv_tls = tt_server("server", alpn);
	pt_env.cli_tls = tt_client(alpn);
#endif
}

static inline void pt_variant_fini(void)
{
#ifdef PT_TLS
	giong_tls_config_free(pt_env.srv_tls);
	giong_tls_config_free(pt_env.cli_tls);
#endif
}

static intptr_t pt_serve_task(void *arg)
{
	struct pt_env *e = arg;

	gt_check_int_equal(giong_http_serve(e->srv, e->l), 0);
	return 0;
}

/* The calling worker's client counters. */
static inline struct giong_http_client_stats pt_client_stats(struct pt_env *e)
{
	struct giong_http_client_stats s = {0};

	gt_check_int_equal(giong_http_client_stats(e->cli, 0, &s), 0);
	return s;
}

/* The calling worker's server counters. */
static inline struct giong_http_stats pt_server_stats(struct pt_env *e)
{
	struct giong_http_stats s = {0};

	gt_check_int_equal(giong_http_server_stats(e->srv, 0, &s), 0);
	return s;
}

/* After a case: the protocol spoken was the variant's, every request of it. */
static inline void pt_check_protocol(struct pt_env *e)
{
	struct giong_http_client_stats cs = pt_client_stats(e);
	struct giong_http2_stats h2 = {0};
	uint64_t h2_conns, h2_streams;

	gt_check_int_equal(giong_http2_stats(&h2), 0);
	h2_conns = h2.connections - e->h2_before.connections;
	h2_streams = h2.streams - e->h2_before.streams;
	gt_check_int_equal(e->seen_other, 0);
	if (e->variant == PT_H1) {
		gt_check_int_equal(cs.streams, 0);
		gt_check_int_equal(cs.multiplexed, 0);
		gt_check_int_equal(h2_conns, 0);
		gt_check_int_equal(e->seen_h2, 0);
		gt_check_true(e->seen_h1 > 0);
		return;
	}
	/* Every exchange of a case sends its request: each one a stream. */
	gt_check_int_equal(cs.streams, cs.exchanges);
	gt_check_true(h2_conns > 0);
	gt_check_true(h2_streams >= e->seen_h2);
	gt_check_int_equal(e->seen_h1, 0);
	gt_check_true(e->seen_h2 > 0);
}

static void pt_main(unsigned worker, void *arg)
{
	struct pt_env *e = arg;
	struct giong_task *t;
	struct giong_addr a;

	(void)worker;
	if (!gt_check_int_equal(giong_tcp_listen("127.0.0.1:0", NULL, &e->l), 0))
		return;
	giong_listener_addr(e->l, &a);
	snprintf(e->url, sizeof(e->url), "%s://127.0.0.1:%d",
		 e->variant == PT_H2 ? "https" : "http", giong_addr_port(&a));
	gt_check_int_equal(giong_http2_stats(&e->h2_before), 0);
	if (gt_check_int_equal(giong_spawn(pt_serve_task, e, &t), 0)) {
		e->scenario(e);
		pt_check_protocol(e);
		giong_shutdown();
		giong_join(t, NULL);
	}
	giong_listener_close(e->l);
}

/* The runtime's shutdown grace in every case (pt_run()). */
#define PT_GRACE_MS 10000

/* Run @scenario(pt_env) in a runtime of its own, against a new server and
 * client of the variant; every descriptor given back after. */
static inline void pt_run(void (*scenario)(struct pt_env *e))
{
	static const struct giong_http_protocol *h2[2];
	struct giong_http_server_options so = {0};
	struct giong_http_client_options co = {0};
	struct giong_config cfg = gt_config(1);
	struct giong_http_limits lim;
	struct pt_env *e = &pt_env;
	struct giong_runtime *rt;
	int fds = gt_count_fds(), run, cli_free, srv_free;

	/* A grace period no loaded machine runs out of: the shutdown case checks that the
	 * response in progress comes whole before it ends, not how fast (2 s, gt_config()'s,
	 * ran out under a loaded parallel ctest about once in 8 runs, and the server's task
	 * was cancelled). No case waits it out when it passes. */
	cfg.shutdown_grace_ms = PT_GRACE_MS;
	h2[0] = giong_http2();
	pt_limits(&lim);
	so.limits = &lim;
	so.protocols = h2;
	cfg.recv_buffers = 256; /* 50 connections each way in the case of many */
	if (e->variant != PT_H1) {
		co.protocols = h2;
		co.prior_knowledge = e->variant == PT_H2C;
	}
	if (e->variant == PT_H2) {
#ifdef PT_TLS
		so.wrap = giong_tls_wrap_accept;
		so.wrap_ctx = e->srv_tls;
		co.connect = pt_tls_connector;
		co.connect_ctx = e->cli_tls;
		/* Not what is tested: room for the first handshakes under valgrind. */
		co.connect_timeout_ms = 15000;
#endif
	}
	e->scenario = scenario;
	e->seen_h1 = e->seen_h2 = e->seen_other = 0;
	assert_int_equal(giong_http_server_new(e->router, &so, &e->srv), 0);
	assert_int_equal(giong_http_client_new(&co, &e->cli), 0);
	/* gt_run()'s work, with the server and client freed before anything is
	 * asserted: a failed case leaks nothing that memcheck would add to it. */
	assert_int_equal(giong_runtime_new(&cfg, &rt), 0);
	run = giong_runtime_run(rt, pt_main, e);
	assert_int_equal(giong_runtime_free(rt), 0);
	cli_free = giong_http_client_free(e->cli);
	srv_free = giong_http_server_free(e->srv);
	e->cli = NULL;
	e->srv = NULL;
	gt_checks_assert();
	assert_int_equal(run, 0);
	assert_int_equal(cli_free, 0);
	assert_int_equal(srv_free, 0);
	gt_assert_fds(fds);
}

/* ------------------------------------------------------- the client's side */

/*
 * pt_ask() - an exchange of @method on the server's @path, with the field
 * @name: @value when @name, sending @body[0..@len) from memory when @body,
 * its response head read. Returns the status or -errno; the exchange in
 * *@ex (NULL when none could be begun) for the caller to read and end.
 */
static inline int pt_ask(struct pt_env *e, const char *method, const char *path, const char *name,
			 const char *value, const void *body, size_t len,
			 struct giong_http_exchange **ex)
{
	char url[128];
	int r;

	snprintf(url, sizeof(url), "%s%s", e->url, path);
	if ((r = giong_http_exchange_begin(e->cli, method, url, ex))) {
		*ex = NULL;
		return r;
	}
	if (name && (r = giong_http_exchange_header(*ex, name, value)))
		return r;
	if (body && (r = giong_http_exchange_send(*ex, body, len)) < 0)
		return r;
	return giong_http_exchange_response(*ex);
}

/* pt_ask() without a field, its body read whole and dropped, the exchange
 * ended: the status or -errno; the body's length in *@len if @len. */
static inline int pt_fetch(struct pt_env *e, const char *method, const char *path, const void *body,
			   size_t len, ssize_t *got)
{
	struct giong_http_exchange *ex;
	const void *data;
	int r = pt_ask(e, method, path, NULL, NULL, body, len, &ex);
	ssize_t n = r > 0 ? giong_http_exchange_body(ex, &data) : 0;

	if (got)
		*got = n;
	if (n < 0)
		r = (int)n;
	giong_http_exchange_end(ex);
	return r;
}

/* Whether the response field @name of @ex is @want exactly. */
static inline bool pt_field_is(const struct giong_http_exchange *ex, const char *name,
			       const char *want)
{
	size_t len = 0;
	const char *v = giong_http_exchange_field(ex, name, &len);

	return v && len == strlen(want) && !memcmp(v, want, len);
}

#endif /* GIONG_PROTOCOLS_TEST_H */
