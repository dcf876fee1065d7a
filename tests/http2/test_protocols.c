/* SPDX-License-Identifier: MIT */
/*
 * test_protocols.c - libgiong-http's handler-level cases, once per protocol:
 * the program's argument names the variant (h1, h2c; h2 in the builds per
 * TLS backend), protocols_test.h has the fixture. The handlers below use the
 * public request and response API only, the client is libgiong-http's own:
 *
 *  - a GET answered from memory (status, a field, the body);
 *  - a 1 MiB body sent whole and read whole (its length and checksum back);
 *  - a body streamed both ways in pieces;
 *  - a file of 300 KiB and some, whole and a byte range of it (206);
 *  - HEAD (Content-Length, no body), 204 and 304;
 *  - 413, 431, 404 and 405, each followed by a request that works;
 *  - a handler's error: 500, counted;
 *  - the server's counters, moved by the requests made;
 *  - 50 tasks doing 10 GETs each at once (HTTP/2: streams side by side);
 *  - a slow streamed response in progress at shutdown, finished whole.
 *
 * Each case then asserts the protocol spoken (pt_check_protocol()).
 */
#include <fcntl.h>
#include <stdlib.h>

#include "protocols_test.h"

#define HELLO "hello over every protocol\n"
#define BIG_LEN (1u << 20)
#define PIECE (16u * 1024)
#define ECHO_LEN (16u * PIECE + 1001u) /* not a multiple of any frame or buffer size */
#define ECHO_MAX (1u << 20)
#define FILE_LEN (300u * 1024 + 37u)
#define RANGE_FIRST 1000u
#define RANGE_LAST 101002u
#define SMALL_LIMIT 1024u
#define SLOW_PIECES 8
#define SLOW_MS 60
#define MANY_TASKS 50
#define MANY_GETS 10

static int file_fd = -1; /* /file's content: a temporary file, unlinked at once */

/* Byte @i of the bodies: a lost, doubled or moved piece shows. */
static inline unsigned char pattern(uint64_t i)
{
	return (unsigned char)((i * 0x9E3779B1u) >> 13 ^ i);
}

static void fill(unsigned char *p, size_t len, uint64_t off)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pattern(off + i);
}

/* @len bytes of the pattern from @off, malloc()ed; NULL (a failed check) when
 * there is no memory. */
static unsigned char *patterned(size_t len, uint64_t off)
{
	unsigned char *p = malloc(len);

	if (gt_check_non_null(p))
		fill(p, len, off);
	return p;
}

/* FNV-1a, 64 bits: what /sum answers. */
static uint64_t fnv(const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* ----------------------------------------------------------------- handlers */

static int h_hello(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	int r;

	(void)ctx;
	pt_note(req);
	if ((r = giong_http_response_status(res, 203)) ||
	    (r = giong_http_response_header(res, "X-Protocols", "one handler, every protocol")))
		return r;
	return giong_http_response_send(res, HELLO, strlen(HELLO));
}

/* The body read whole: "<length> <fnv-1a as 16 hex digits>". */
static int h_sum(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	const void *body;
	ssize_t n = giong_http_request_body(req, &body);
	char out[64];
	int len;

	(void)ctx;
	pt_note(req);
	if (n < 0)
		return (int)n;
	len = snprintf(out, sizeof(out), "%zd %016llx", n,
		       (unsigned long long)fnv(body, (size_t)n));
	return giong_http_response_send(res, out, (size_t)len);
}

/* The body read in pieces of an odd size, then written back in pieces of another. */
static int h_echo(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	unsigned char *buf = malloc(ECHO_MAX);
	size_t len = 0;
	ssize_t n;
	int r = 0;

	(void)ctx;
	pt_note(req);
	if (!buf)
		return -ENOMEM;
	while (len < ECHO_MAX && (n = giong_http_request_read(req, buf + len, 7001)) > 0)
		len += (size_t)n;
	if (len == ECHO_MAX || n < 0) {
		free(buf);
		return len == ECHO_MAX ? -EMSGSIZE : (int)n;
	}
	for (size_t off = 0; !r && off < len; off += 10007)
		r = giong_http_response_write(res, buf + off,
					      len - off < 10007 ? len - off : 10007);
	free(buf);
	return r ? r : giong_http_response_end(res);
}

/* The file, from the page cache; "Range: bytes=A-B" (the one form the test
 * sends) is answered 206 with that part. */
static int h_file(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	unsigned long long first, last;
	size_t len = 0;
	const char *range = giong_http_request_header(req, "Range", &len);
	char buf[64];
	int r;

	(void)ctx;
	pt_note(req);
	if (range && len < sizeof(buf)) {
		memcpy(buf, range, len);
		buf[len] = '\0';
		if (sscanf(buf, "bytes=%llu-%llu", &first, &last) == 2 && first <= last &&
		    last < FILE_LEN) {
			snprintf(buf, sizeof(buf), "bytes %llu-%llu/%u", first, last, FILE_LEN);
			if ((r = giong_http_response_status(res, 206)) ||
			    (r = giong_http_response_header(res, "Content-Range", buf)))
				return r;
			return giong_http_response_sendfile(res, file_fd, (off_t)first,
							    last - first + 1);
		}
	}
	return giong_http_response_sendfile(res, file_fd, 0, FILE_LEN);
}

static int h_status(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	size_t len = 0;
	const char *v = giong_http_request_param(req, "code", &len);
	int code = v && len == 3 ? atoi(v) : 0, r;

	(void)ctx;
	pt_note(req);
	if ((r = giong_http_response_status(res, code)))
		return r;
	if (code == 204 || code == 304)
		return giong_http_response_send(res, NULL, 0);
	return giong_http_response_send(res, "status\n", 7);
}

static int h_fail(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	(void)res;
	(void)ctx;
	pt_note(req);
	return -EIO;
}

/* /small's body limit is SMALL_LIMIT: the server refuses more before this runs. */
static int h_small(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	const void *body;
	ssize_t n = giong_http_request_body(req, &body);

	(void)ctx;
	pt_note(req);
	return n < 0 ? (int)n : giong_http_response_send(res, "small\n", 6);
}

/* The slow stream of the shutdown case: SLOW_PIECES pieces, SLOW_MS apart. */
static int slow_started;

static int h_slow(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	char piece[16];
	int r = 0;

	(void)ctx;
	pt_note(req);
	slow_started = 1;
	for (int i = 0; !r && i < SLOW_PIECES; i++) {
		if (i)
			r = giong_sleep_ms(SLOW_MS);
		snprintf(piece, sizeof(piece), "piece %02d\n", i);
		if (!r)
			r = giong_http_response_write(res, piece, 9);
	}
	return r ? r : giong_http_response_end(res);
}

/* -------------------------------------------------------------------- cases */

static void s_get(struct pt_env *e)
{
	struct giong_http_exchange *ex;
	const void *data;

	gt_check_int_equal(pt_ask(e, "GET", "/hello", NULL, NULL, NULL, 0, &ex), 203);
	gt_check_true(pt_field_is(ex, "X-Protocols", "one handler, every protocol"));
	gt_check_true(pt_field_is(ex, "x-protocols", "one handler, every protocol"));
	gt_check_int_equal(giong_http_exchange_content_length(ex), strlen(HELLO));
	if (gt_check_int_equal(giong_http_exchange_body(ex, &data), strlen(HELLO)))
		gt_check_memory_equal(data, HELLO, strlen(HELLO));
	giong_http_exchange_end(ex);
}

static void s_body_whole(struct pt_env *e)
{
	unsigned char *big = patterned(BIG_LEN, 0);
	struct giong_http_exchange *ex;
	const void *data;
	char want[64];
	ssize_t n;

	if (!big)
		return;
	snprintf(want, sizeof(want), "%u %016llx", BIG_LEN, (unsigned long long)fnv(big, BIG_LEN));
	gt_check_int_equal(pt_ask(e, "POST", "/sum", NULL, NULL, big, BIG_LEN, &ex), 200);
	n = giong_http_exchange_body(ex, &data);
	if (gt_check_int_equal(n, strlen(want)))
		gt_check_memory_equal(data, want, strlen(want));
	giong_http_exchange_end(ex);
	free(big);
}

static void s_body_streamed(struct pt_env *e)
{
	unsigned char *out = patterned(ECHO_LEN, 7), *in = malloc(ECHO_LEN);
	struct giong_http_exchange *ex = NULL;
	char url[128];
	size_t got = 0;
	ssize_t n = 0;
	int r = 0;

	if (!out || !gt_check_non_null(in))
		goto out;
	snprintf(url, sizeof(url), "%s/echo", e->url);
	if (!gt_check_int_equal(giong_http_exchange_begin(e->cli, "POST", url, &ex), 0))
		goto out;
	for (size_t off = 0; !r && off < ECHO_LEN; off += PIECE)
		r = giong_http_exchange_write(ex, out + off,
					      ECHO_LEN - off < PIECE ? ECHO_LEN - off : PIECE);
	gt_check_int_equal(r, 0);
	gt_check_int_equal(giong_http_exchange_response(ex), 200);
	gt_check_int_equal(giong_http_exchange_content_length(ex), -1); /* streamed: no length */
	for (int i = 0; i < 10000; i++) {
		const void *data;

		if ((n = giong_http_exchange_next(ex, &data)) <= 0)
			break;
		if (!gt_check_true(got + (size_t)n <= ECHO_LEN))
			break;
		memcpy(in + got, data, (size_t)n);
		got += (size_t)n;
	}
	gt_check_int_equal(n, 0);
	if (gt_check_int_equal(got, ECHO_LEN))
		gt_check_memory_equal(in, out, ECHO_LEN);
out:
	giong_http_exchange_end(ex);
	free(out);
	free(in);
}

static void s_file(struct pt_env *e)
{
	unsigned char *want = patterned(FILE_LEN, 0);
	struct giong_http_exchange *ex;
	const void *data;
	char cl[32];

	if (!want)
		return;
	gt_check_int_equal(pt_ask(e, "GET", "/file", NULL, NULL, NULL, 0, &ex), 200);
	gt_check_int_equal(giong_http_exchange_content_length(ex), FILE_LEN);
	if (gt_check_int_equal(giong_http_exchange_body(ex, &data), FILE_LEN))
		gt_check_memory_equal(data, want, FILE_LEN);
	giong_http_exchange_end(ex);

	gt_check_int_equal(pt_ask(e, "GET", "/file", "Range", "bytes=1000-101002", NULL, 0, &ex),
			   206);
	snprintf(cl, sizeof(cl), "bytes %u-%u/%u", RANGE_FIRST, RANGE_LAST, FILE_LEN);
	gt_check_true(pt_field_is(ex, "Content-Range", cl));
	if (gt_check_int_equal(giong_http_exchange_body(ex, &data), RANGE_LAST - RANGE_FIRST + 1))
		gt_check_memory_equal(data, want + RANGE_FIRST, RANGE_LAST - RANGE_FIRST + 1);
	giong_http_exchange_end(ex);
	free(want);
}

static void s_no_body(struct pt_env *e)
{
	struct giong_http_exchange *ex;
	const void *data;
	char cl[16];

	/* HEAD: GET's fields, the length of the body it would have, no body. */
	snprintf(cl, sizeof(cl), "%zu", strlen(HELLO));
	gt_check_int_equal(pt_ask(e, "HEAD", "/hello", NULL, NULL, NULL, 0, &ex), 203);
	gt_check_true(pt_field_is(ex, "Content-Length", cl));
	gt_check_true(pt_field_is(ex, "X-Protocols", "one handler, every protocol"));
	gt_check_int_equal(giong_http_exchange_content_length(ex), 0);
	gt_check_int_equal(giong_http_exchange_body(ex, &data), 0);
	gt_check_int_equal(giong_http_exchange_end(ex), 1); /* kept: nothing left to read */
	snprintf(cl, sizeof(cl), "%u", FILE_LEN);
	gt_check_int_equal(pt_ask(e, "HEAD", "/file", NULL, NULL, NULL, 0, &ex), 200);
	gt_check_true(pt_field_is(ex, "Content-Length", cl));
	gt_check_int_equal(giong_http_exchange_body(ex, &data), 0);
	giong_http_exchange_end(ex);

	gt_check_int_equal(pt_ask(e, "GET", "/status/204", NULL, NULL, NULL, 0, &ex), 204);
	gt_check_null(giong_http_exchange_field(ex, "Content-Length", NULL));
	gt_check_int_equal(giong_http_exchange_body(ex, &data), 0);
	gt_check_int_equal(giong_http_exchange_end(ex), 1);
	gt_check_int_equal(pt_ask(e, "GET", "/status/304", NULL, NULL, NULL, 0, &ex), 304);
	gt_check_int_equal(giong_http_exchange_body(ex, &data), 0);
	gt_check_int_equal(giong_http_exchange_end(ex), 1);
	/* and the connection (or stream) after them answers as before */
	gt_check_int_equal(pt_fetch(e, "GET", "/hello", NULL, 0, NULL), 203);
}

static void s_limits(struct pt_env *e)
{
	static char body[4 * SMALL_LIMIT];
	struct giong_http_stats before = pt_server_stats(e), after;
	struct giong_http_exchange *ex;
	char *value = malloc(20000);

	if (!gt_check_non_null(value))
		return;
	memset(body, 'b', sizeof(body));
	gt_check_int_equal(pt_fetch(e, "POST", "/small", body, SMALL_LIMIT, NULL), 200);
	gt_check_int_equal(pt_fetch(e, "POST", "/small", body, sizeof(body), NULL), 413);
	/* A field past the head limit (8 KiB here), whatever the protocol: HTTP/2's
	 * header list budget is the server's limits->head by <giong/http2.h>. Then
	 * one past every default too (HTTP/2's own budget is 16 KiB). */
	memset(value, 'v', 20000);
	value[11999] = '\0';
	gt_check_int_equal(pt_ask(e, "GET", "/hello", "X-Big", value, NULL, 0, &ex), 431);
	giong_http_exchange_end(ex);
	value[11999] = 'v';
	value[19999] = '\0';
	gt_check_int_equal(pt_ask(e, "GET", "/hello", "X-Big", value, NULL, 0, &ex), 431);
	giong_http_exchange_end(ex);
	gt_check_int_equal(pt_fetch(e, "GET", "/nowhere", NULL, 0, NULL), 404);
	gt_check_int_equal(pt_ask(e, "DELETE", "/hello", NULL, NULL, NULL, 0, &ex), 405);
	gt_check_true(pt_field_is(ex, "Allow", "GET, HEAD"));
	giong_http_exchange_end(ex);
	gt_check_int_equal(pt_fetch(e, "GET", "/hello", NULL, 0, NULL), 203);
	after = pt_server_stats(e);
	gt_check_int_equal(after.body_too_large - before.body_too_large, 1);
	free(value);
}

static void s_handler_error(struct pt_env *e)
{
	struct giong_http_stats before = pt_server_stats(e), after;

	gt_check_int_equal(pt_fetch(e, "GET", "/fail", NULL, 0, NULL), 500);
	gt_check_int_equal(pt_fetch(e, "GET", "/fail", NULL, 0, NULL), 500);
	gt_check_int_equal(pt_fetch(e, "GET", "/hello", NULL, 0, NULL), 203);
	after = pt_server_stats(e);
	gt_check_int_equal(after.handler_errors - before.handler_errors, 2);
	gt_check_int_equal(after.responses[4] - before.responses[4], 2);
}

static void s_counters(struct pt_env *e)
{
	struct giong_http_client_stats cb = pt_client_stats(e), ca;
	struct giong_http_stats before = pt_server_stats(e), after;
	ssize_t n;

	for (int i = 0; i < 6; i++)
		gt_check_int_equal(pt_fetch(e, "GET", "/hello", NULL, 0, NULL), 203);
	gt_check_int_equal(pt_fetch(e, "POST", "/sum", "abc", 3, &n), 200);
	gt_check_int_equal(n, 1 + 1 + 16);
	gt_check_int_equal(pt_fetch(e, "GET", "/nowhere", NULL, 0, NULL), 404);
	after = pt_server_stats(e);
	ca = pt_client_stats(e);
	gt_check_int_equal(after.requests - before.requests, 8);
	gt_check_int_equal(after.responses[1] - before.responses[1], 7);
	gt_check_int_equal(after.responses[3] - before.responses[3], 1);
	gt_check_int_equal(after.handler_errors - before.handler_errors, 0);
	gt_check_int_equal(ca.exchanges - cb.exchanges, 8);
	/* one connection for all of them, kept alive (a stream each in HTTP/2) */
	gt_check_int_equal(ca.connects - cb.connects, 1);
	gt_check_int_equal(after.accepted - before.accepted, 1);
	if (e->variant != PT_H1)
		gt_check_int_equal(ca.streams - cb.streams, 8);
}

struct many {
	struct pt_env *e;
	int ok, failed;
	int first_error;
};

static intptr_t many_task(void *arg)
{
	struct many *m = arg;
	char url[128];

	snprintf(url, sizeof(url), "%s/hello", m->e->url);
	for (int i = 0; i < MANY_GETS; i++) {
		int status = 0;
		char *body = NULL;
		ssize_t n = giong_http_get(m->e->cli, url, &status, &body);

		if (n == (ssize_t)strlen(HELLO) && status == 203 && !strcmp(body, HELLO)) {
			m->ok++;
		} else {
			if (!m->failed++)
				m->first_error = n < 0 ? (int)n : status;
		}
		free(body);
	}
	return 0;
}

static void s_many(struct pt_env *e)
{
	struct giong_http_stats before = pt_server_stats(e), after;
	struct giong_task *t[MANY_TASKS];
	struct giong_http_client_stats cs;
	struct many m = {.e = e};
	int spawned = 0;

	for (int i = 0; i < MANY_TASKS; i++)
		if (gt_check_int_equal(giong_spawn(many_task, &m, &t[spawned]), 0))
			spawned++;
	for (int i = 0; i < spawned; i++)
		giong_join(t[i], NULL);
	gt_check_int_equal(m.ok, MANY_TASKS * MANY_GETS);
	gt_check_int_equal(m.first_error, 0);
	after = pt_server_stats(e);
	cs = pt_client_stats(e);
	gt_check_int_equal(after.requests - before.requests, MANY_TASKS * MANY_GETS);
	gt_check_true(after.accepted - before.accepted < MANY_TASKS * MANY_GETS);
	gt_check_true(after.accepted - before.accepted <= MANY_TASKS);
	if (e->variant != PT_H1) {
		gt_check_true(cs.multiplexed > 0);
		gt_check_int_equal(cs.streams, MANY_TASKS * MANY_GETS);
	}
}

struct slow {
	struct pt_env *e;
	int status, head_read;
	ssize_t last;
	size_t got;
	char body[SLOW_PIECES * 9 + 1];
};

static intptr_t slow_task(void *arg)
{
	struct slow *s = arg;
	struct giong_http_exchange *ex;
	const void *data;

	s->status = pt_ask(s->e, "GET", "/slow", NULL, NULL, NULL, 0, &ex);
	s->head_read = 1;
	for (int i = 0; s->status == 200 && i < 1000; i++) {
		if ((s->last = giong_http_exchange_next(ex, &data)) <= 0)
			break;
		if (s->got + (size_t)s->last > sizeof(s->body) - 1)
			break;
		memcpy(s->body + s->got, data, (size_t)s->last);
		s->got += (size_t)s->last;
	}
	giong_http_exchange_end(ex);
	return 0;
}

/* The shutdown begins once the handler wrote its first piece and the client
 * read the head; the response still comes whole, within the grace period. */
static void s_shutdown(struct pt_env *e)
{
	struct slow s = {.e = e, .last = -1};
	struct giong_task *t;
	char want[sizeof(s.body)];
	uint64_t t0;

	slow_started = 0;
	if (!gt_check_int_equal(giong_spawn(slow_task, &s, &t), 0))
		return;
	for (int i = 0; i < 1000 && !(slow_started && s.head_read); i++)
		giong_sleep_ms(5);
	gt_check_true(slow_started && s.head_read);
	t0 = giong_now_ms();
	gt_check_int_equal(giong_shutdown(), 0);
	giong_join(t, NULL);
	gt_check_true(giong_now_ms() - t0 < PT_GRACE_MS); /* within the grace period */
	gt_check_int_equal(s.status, 200);
	gt_check_int_equal(s.last, 0);
	for (int i = 0; i < SLOW_PIECES; i++)
		snprintf(want + 9 * i, sizeof(want) - 9 * (size_t)i, "piece %02d\n", i);
	if (gt_check_int_equal(s.got, SLOW_PIECES * 9))
		gt_check_memory_equal(s.body, want, SLOW_PIECES * 9);
}

/* Each case, a test of its own: a runtime, server and client of its own. */
#define PT_CASE(name)                                                                              \
	static void test_##name(void **state)                                                      \
	{                                                                                          \
		(void)state;                                                                       \
		pt_run(s_##name);                                                                  \
	}
PT_CASE(get)
PT_CASE(body_whole)
PT_CASE(body_streamed)
PT_CASE(file)
PT_CASE(no_body)
PT_CASE(limits)
PT_CASE(handler_error)
PT_CASE(counters)
PT_CASE(many)
PT_CASE(shutdown)

/* -------------------------------------------------------------------- setup */

static int make_file(void)
{
	char path[] = "/tmp/test_protocols.XXXXXX";
	unsigned char *buf = malloc(FILE_LEN);
	int fd = mkstemp(path);
	bool ok;

	if (fd >= 0)
		unlink(path);
	ok = fd >= 0 && buf;
	if (ok) {
		fill(buf, FILE_LEN, 0);
		ok = write(fd, buf, FILE_LEN) == (ssize_t)FILE_LEN;
	}
	free(buf);
	if (!ok && fd >= 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static int setup(void **state)
{
	struct giong_http_route_options small = {.body_limit = SMALL_LIMIT};
	struct giong_http_router *r;

	(void)state;
	pt_variant_tls();
	if ((file_fd = make_file()) < 0 || giong_http_router_new(&r))
		return -1;
	pt_env.router = r;
	if (giong_http_router_add(r, "GET", "/hello", h_hello, NULL) ||
	    giong_http_router_add(r, "POST", "/sum", h_sum, NULL) ||
	    giong_http_router_add(r, "POST", "/echo", h_echo, NULL) ||
	    giong_http_router_add(r, "GET", "/file", h_file, NULL) ||
	    giong_http_router_add(r, "GET", "/status/:code", h_status, NULL) ||
	    giong_http_router_add(r, "GET", "/fail", h_fail, NULL) ||
	    giong_http_router_add_opts(r, "POST", "/small", h_small, NULL, &small) ||
	    giong_http_router_add(r, "GET", "/slow", h_slow, NULL))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	giong_http_router_free(pt_env.router);
	pt_env.router = NULL;
	if (file_fd >= 0)
		close(file_fd);
	pt_variant_fini();
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get),           cmocka_unit_test(test_body_whole),
		cmocka_unit_test(test_body_streamed), cmocka_unit_test(test_file),
		cmocka_unit_test(test_no_body),       cmocka_unit_test(test_limits),
		cmocka_unit_test(test_handler_error), cmocka_unit_test(test_counters),
		cmocka_unit_test(test_many),          cmocka_unit_test(test_shutdown),
	};
	char group[32];

	if (argc != 2 || pt_variant_init(argv[1])) {
#ifdef PT_TLS
		fprintf(stderr, "usage: %s h2\n", argv[0]);
#else
		fprintf(stderr, "usage: %s h1|h2c\n", argv[0]);
#endif
		return 2;
	}
	gt_require_runtime();
	snprintf(group, sizeof(group), "handlers_%s", argv[1]);
	return cmocka_run_group_tests_name(group, tests, setup, teardown);
}
