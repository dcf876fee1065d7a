/* SPDX-License-Identifier: MIT */
/*
 * test_request_line.c - four rules of the request head, each crossed both ways:
 *  - Host's value and the authority of an absolute-form or authority-form target
 *    must be `uri-host [ ":" port ]` (RFC 9112 3.2, RFC 3986 3.2.2): the grammar
 *    (src/common/authority.c) against its own cases and every byte, the parser's answer, and
 *    the server's 400 and close;
 *  - CONNECT is refused with 405 and a close (no route names an authority);
 *  - `OPTIONS *` is answered by the library (RFC 9110 9.3.7): 200, Content-Length: 0,
 *    Allow with the router's methods and OPTIONS, on a router with routes, with none,
 *    and with a route for every method; the connection is kept; `GET *` is 400;
 *  - a request line without a version (`GET /json`, HTTP/0.9's form) is 400 and
 *    close, while other versions stay 505.
 */
#include "http_test.h"

#include "common/authority.h"
#include "http_parse_test.h"

/* ------------------------------------------------------------ the grammar */

static bool valid(const char *s)
{
	return giong__http_authority_valid(s, strlen(s));
}

static void test_authority_grammar(void **state)
{
	static const char *const good[] = {
		"h",
		"example.com",
		"example.com:8080",
		"example.com:",  /* RFC 3986 3.2.3: an empty port */
		"example.com:0", /* the lowest */
		"h:65535",       /* the highest */
		"127.0.0.1",
		"127.0.0.1:80",
		"999.1.1.1", /* no IPv4address, so a reg-name */
		"a%20b",
		"%C3%A9t%c3%a9.example",
		"a-b_c~d.e",
		"!$&'()*+,;=",
		"[::1]",
		"[::1]:8080",
		"[::1]:",
		"[::]",
		"[1::]",
		"[2001:db8::1]",
		"[2001:DB8:0:0:8:800:200C:417A]",
		"[1:2:3:4:5:6:7:8]:1",
		"[1::2:3:4:5:6:7]",
		"[::ffff:192.0.2.1]",
		"[1:2:3:4:5:6:1.2.3.4]",
		"[v1.x]",
		"[vF.a:b]",
	};
	static const char *const bad[] = {
		"",
		":",
		":80",
		"a b",
		"a\tb",
		"a@b",
		"u@example.com",
		"a/b",
		"a?b",
		"a#b",
		"a\"b",
		"a<b",
		"a\\b",
		"a{b",
		"a|b",
		"a^b",
		"a`b",
		"a\x7f",
		"a\x80",
		"a\x01",
		"h:a",
		"h:80a",
		"h:-1",
		"h:65536",
		"h:100000",
		"h:1:2",
		"h::",
		"a%2",
		"a%zz",
		"%",
		"[::1",
		"::1]",
		"[::1]]",
		"[]",
		"[::1]x",
		"[::1]:a",
		"[:1]",
		"[1:]",
		"[1:2]",
		"[1:::2]",
		"[1::2::3]",
		"[12345::1]",
		"[g::1]",
		"[1:2:3:4:5:6:7:8:9]",
		"[1:2:3:4:5:6:7::8]",
		"[::1.2.3]",
		"[::1.2.3.256]",
		"[::01.2.3.4]",
		"[::1.2.3.4:5]",
		"[fe80::1%25eth0]",
		"[v.x]",
		"[v1.]",
		"[v1x]",
		"[v1.a b]",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (!valid(good[i]))
			fail_msg("refused: \"%s\"", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (valid(bad[i]))
			fail_msg("accepted: \"%s\"", bad[i]);
	/* The length is the caller's: "[::1]:80" cut after 4 bytes is an unbalanced bracket. */
	assert_true(giong__http_authority_valid("[::1]:80", 8));
	assert_false(giong__http_authority_valid("[::1]:80", 4));
	assert_false(giong__http_authority_valid(NULL, 3));
}

/* Every byte in a reg-name, against a list written apart from the code's table. */
static void test_authority_bytes(void **state)
{
	static const char regname[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				      "0123456789-._~!$&'()*+,;=";

	(void)state;
	for (unsigned c = 0; c < 256; c++) {
		char s[3] = {'a', (char)c, 'b'};
		bool want = c && strchr(regname, (int)c);

		if (giong__http_authority_valid(s, 3) != want)
			fail_msg("byte 0x%02x: %s", c, want ? "refused" : "accepted");
		s[1] = ':';
		s[2] = (char)c; /* after a ':', only digits */
		if (giong__http_authority_valid(s, 3) != (c >= '0' && c <= '9'))
			fail_msg("port byte 0x%02x", c);
	}
}

/* ------------------------------------------------------------- the parser */

static struct giong_http_field fields[HT_FIELDS_MAX];
static struct giong__http_head head;

static int parse(const char *s)
{
	return ht_parse_all(s, strlen(s), NULL, &head, fields, true);
}

/* One request with @host as Host's value (after "Host: "). */
static int parse_host(const char *host)
{
	char r[256];

	snprintf(r, sizeof(r), "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", host);
	return parse(r);
}

static void test_parse(void **state)
{
	(void)state;
	assert_true(parse_host("example.com:8080") > 0);
	assert_true(parse_host("[::1]:8080") > 0);
	assert_true(parse_host("a%2Fb") > 0);
	/* OWS around the value is not part of it. */
	assert_true(parse("GET / HTTP/1.1\r\nHost: \t h:1 \t\r\n\r\n") > 0);
	/* An empty Host is kept as it was (RFC 9112 3.2, 3.3: the server's call). */
	assert_true(parse("GET / HTTP/1.1\r\nHost:\r\n\r\n") > 0);
	assert_int_equal(head.host_len, 0);
	assert_int_equal(parse_host("a b"), -400);
	assert_int_equal(parse_host("u@h"), -400);
	assert_int_equal(parse_host("h/x"), -400);
	assert_int_equal(parse_host("h:a"), -400);
	assert_int_equal(parse_host(":"), -400);
	assert_int_equal(parse_host("[::1"), -400);
	assert_int_equal(parse_host("h\x80"), -400); /* obs-text: a field value may, a host not */
	/* HTTP/1.0 with an invalid Host: RFC 9112 3.2's MUST is for any request. */
	assert_int_equal(parse("GET / HTTP/1.0\r\nHost: a b\r\n\r\n"), -400);
	/* The absolute-form's authority, even with a valid Host: http-parser takes "[1:2]"
	 * and a zone identifier, the grammar refuses them (and the others, whoever first). */
	assert_int_equal(parse("GET http://[1:2]/ HTTP/1.1\r\nHost: h\r\n\r\n"), -400);
	assert_int_equal(parse("GET http://[fe80::1%25eth0]/ HTTP/1.1\r\nHost: h\r\n\r\n"), -400);
	assert_int_equal(parse("GET http://[::1]x/ HTTP/1.1\r\nHost: h\r\n\r\n"), -400);
	assert_int_equal(parse("GET http://h:99999/ HTTP/1.1\r\nHost: h\r\n\r\n"), -400);
	assert_true(parse("GET http://[::1]:8/p HTTP/1.1\r\nHost: h\r\n\r\n") > 0);
	/* The authority-form's: CONNECT. */
	assert_true(parse("CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n") > 0);
	assert_int_equal(parse("CONNECT [1:2]:443 HTTP/1.1\r\nHost: h\r\n\r\n"), -400);
	/* No version: malformed, refused at the line's CR; other versions stay 505. */
	assert_int_equal(parse("GET /json\r\n"), -400);
	assert_int_equal(parse("GET /json\r\n\r\n"), -400);
	assert_int_equal(parse("GET /json\r"), -400);
	assert_int_equal(parse("GET /json"), 0);
	assert_int_equal(parse("GET /json HTTP/2.0\r\nHost: h\r\n\r\n"), -505);
	assert_int_equal(parse("GET /json HTTP/3.0\r\nHost: h\r\n\r\n"), -505);
	/* Asterisk form: OPTIONS only. */
	assert_true(parse("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n") > 0);
	assert_int_equal(head.form, GIONG__HTTP_ASTERISK_FORM);
	assert_int_equal(parse("GET * HTTP/1.1\r\nHost: h\r\n\r\n"), -400);
}

/* ------------------------------------------------------------- end to end */

static int json(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	(void)req;
	(void)ctx;
	return giong_http_response_send(res, "{}", 2);
}

static bool has_header(const struct ht_resp *r, const char *name, const char *value)
{
	char v[256];

	return ht_header(r, name, v, sizeof(v)) && !strcmp(v, value);
}

/* @req alone on a new connection: answered @status, then closed (@closes) or not. */
static void one(const struct ht *h, const char *req, int status, bool closes)
{
	struct ht_resp r;
	int n = ht_exchange(h, req, strlen(req), &r, false);

	if (!gt_check_int_equal(n, closes ? 1 : 0) || !gt_check_int_equal(r.status, status))
		gt_check_fail_msg("request: %s", req);
	ht_resp_free(&r);
}

static const char *const good_hosts[] = {
	"example.com", "example.com:8080", "127.0.0.1", "127.0.0.1:80", "[::1]:8080", "a%2Db",
};

static const char *const bad_hosts[] = {
	"a b", "u@example.com", "h/x", "h:a", ":", "h\x01", "[::1", "h:65536", "a\"b",
};

static void host_client(struct ht *h)
{
	struct ht_conn c;
	char req[256];

	/* The valid ones on one connection, which they keep. */
	if (!ht_open(h, &c))
		return;
	for (size_t i = 0; i < sizeof(good_hosts) / sizeof(good_hosts[0]); i++) {
		snprintf(req, sizeof(req), "GET /json HTTP/1.1\r\nHost: %s\r\n\r\n", good_hosts[i]);
		if (!ht_expect(&c, req, 200, "{}"))
			gt_check_fail_msg("refused: Host: %s", good_hosts[i]);
	}
	ht_expect(&c, "GET http://[::1]:8080/json HTTP/1.1\r\nHost: h\r\n\r\n", 200, "{}");
	ht_expect(&c, "GET /json HTTP/1.1\r\nHost:\r\n\r\n", 200, "{}"); /* empty: kept */
	gt_check_int_equal(ht_closed_within(&c, 100), 0);
	ht_conn_close(&c);
	/* Each invalid one: 400, then the close. */
	for (size_t i = 0; i < sizeof(bad_hosts) / sizeof(bad_hosts[0]); i++) {
		snprintf(req, sizeof(req), "GET /json HTTP/1.1\r\nHost: %s\r\n\r\n", bad_hosts[i]);
		one(h, req, 400, true);
	}
	one(h, "GET http://[1:2]/json HTTP/1.1\r\nHost: h\r\n\r\n", 400, true);
	one(h, "GET http://h:99999/json HTTP/1.1\r\nHost: h\r\n\r\n", 400, true);
}

/* A server with GET /json, @client its scenario. */
static void run_json(struct ht *h, ht_client_fn client)
{
	ht_init(h);
	assert_int_equal(giong_http_router_add(h->router, "GET", "/json", json, NULL), 0);
	ht_run(h, client);
}

static void test_host(void **state)
{
	size_t nbad = sizeof(bad_hosts) / sizeof(bad_hosts[0]) + 2;
	struct ht h;

	(void)state;
	run_json(&h, host_client);
	assert_int_equal(h.stats.refused, nbad);
	assert_int_equal(h.stats.responses[3], nbad);
}

/* OPTIONS * on one connection: 200, Content-Length: 0, Allow @allow; kept, and a body
 * sent with it does not become a request. */
static void options_client(struct ht *h)
{
	const char *allow = h->arg;
	struct ht_resp r;
	struct ht_conn c;

	if (!ht_open(h, &c))
		return;
	gt_check_int_equal(ht_request(&c, "OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n", &r, false), 0);
	gt_check_int_equal(r.status, 200);
	gt_check_true(has_header(&r, "Content-Length", "0"));
	if (!gt_check_true(has_header(&r, "Allow", allow)))
		gt_check_fail_msg("Allow: want \"%s\" in\n%s", allow, r.head);
	gt_check_int_equal(r.body_len, 0);
	ht_resp_free(&r);
	gt_check_int_equal(ht_request(&c,
				      "OPTIONS * HTTP/1.1\r\nHost: h\r\nContent-Length: 25\r\n\r\n"
				      "GET /nowhere HTTP/1.1\r\n\r\n",
				      &r, false),
			   0);
	gt_check_int_equal(r.status, 200);
	ht_resp_free(&r);
	/* HTTP/1.0, no Host: answered too, and kept with keep-alive. */
	gt_check_int_equal(
		ht_request(&c, "OPTIONS * HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", &r, false),
		0);
	gt_check_int_equal(r.status, 200);
	ht_resp_free(&r);
	gt_check_int_equal(ht_closed_within(&c, 100), 0);
	ht_conn_close(&c);
	one(h, "GET * HTTP/1.1\r\nHost: h\r\n\r\n", 400, true);
	one(h, "HEAD * HTTP/1.1\r\nHost: h\r\n\r\n", 400, true);
}

static int any(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	(void)req;
	(void)ctx;
	return giong_http_response_send(res, "any", 3);
}

enum routes { ROUTES_SOME, ROUTES_NONE, ROUTES_ANY, ROUTES_OPTIONS };

static void run_options(enum routes which, const char *allow)
{
	struct ht h;

	ht_init(&h);
	h.arg = (void *)allow;
	switch (which) {
	case ROUTES_SOME:
		assert_int_equal(giong_http_router_add(h.router, "GET", "/json", json, NULL), 0);
		assert_int_equal(giong_http_router_add(h.router, "POST", "/json", json, NULL), 0);
		assert_int_equal(giong_http_router_add(h.router, "GET", "/other", json, NULL), 0);
		assert_int_equal(giong_http_router_add(h.router, "PROPFIND", "/dav", json, NULL),
				 0);
		break;
	case ROUTES_NONE:
		break;
	case ROUTES_ANY:
		assert_int_equal(giong_http_router_add(h.router, "DELETE", "/x", json, NULL), 0);
		assert_int_equal(giong_http_router_add(h.router, NULL, "/*", any, NULL), 0);
		break;
	case ROUTES_OPTIONS:
		assert_int_equal(giong_http_router_add(h.router, "OPTIONS", "/x", json, NULL), 0);
		assert_int_equal(giong_http_router_add(h.router, "PUT", "/x", json, NULL), 0);
		break;
	}
	ht_run(&h, options_client);
	assert_int_equal(h.stats.responses[1], 3);
	assert_int_equal(h.stats.refused, 2);
}

static void test_options_some(void **state)
{
	(void)state;
	run_options(ROUTES_SOME, "GET, HEAD, POST, PROPFIND, OPTIONS");
}

static void test_options_none(void **state)
{
	(void)state;
	run_options(ROUTES_NONE, "OPTIONS");
}

static void test_options_any(void **state)
{
	(void)state;
	run_options(ROUTES_ANY, "DELETE, GET, HEAD, POST, PUT, OPTIONS, TRACE, PATCH");
}

static void test_options_listed(void **state)
{
	(void)state;
	run_options(ROUTES_OPTIONS, "OPTIONS, PUT"); /* OPTIONS once */
}

/* CONNECT (authority form): no route can name it, the library tunnels nothing: 405 with
 * the server's Allow, and a close, the bytes after the head never read as a request
 * (a client may send the tunnel's first bytes before the answer). */
static void connect_client(struct ht *h)
{
	static const char req[] = "CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n"
				  "GET /json HTTP/1.1\r\nHost: h\r\n\r\n";
	struct ht_resp r;

	gt_check_int_equal(ht_exchange(h, req, sizeof(req) - 1, &r, false), 1);
	gt_check_int_equal(r.status, 405);
	if (!gt_check_true(has_header(&r, "Allow", "GET, HEAD, POST, PROPFIND, OPTIONS")))
		gt_check_fail_msg("Allow in\n%s", r.head);
	ht_resp_free(&r);
	one(h, "CONNECT [::1]:443 HTTP/1.1\r\nHost: [::1]:443\r\n\r\n", 405, true);
	one(h, "GET /json HTTP/1.1\r\nHost: h\r\n\r\n", 200, false);
}

static void test_connect(void **state)
{
	struct ht h;

	(void)state;
	ht_init(&h);
	assert_int_equal(giong_http_router_add(h.router, "GET", "/json", json, NULL), 0);
	assert_int_equal(giong_http_router_add(h.router, "POST", "/json", json, NULL), 0);
	assert_int_equal(giong_http_router_add(h.router, "PROPFIND", "/dav", json, NULL), 0);
	ht_run(&h, connect_client);
	assert_int_equal(h.stats.responses[3], 2); /* the two 405s */
	assert_int_equal(h.stats.responses[1], 1);
}

/* No version: 400 and close, nothing after it read; 505 for the others. */
static void version_client(struct ht *h)
{
	one(h, "GET /json\r\n", 400, true);
	one(h, "GET /json\r\n\r\nGET /json HTTP/1.1\r\nHost: h\r\n\r\n", 400, true);
	one(h, "GET /json HTTP/2.0\r\nHost: h\r\n\r\n", 505, true);
	one(h, "GET /json HTTP/3.0\r\nHost: h\r\n\r\n", 505, true);
	one(h, "GET /json HTTP/1.1\r\nHost: h\r\n\r\n", 200, false);
}

static void test_no_version(void **state)
{
	struct ht h;

	(void)state;
	run_json(&h, version_client);
	assert_int_equal(h.stats.refused, 4);
	assert_int_equal(h.stats.responses[3], 2);
	assert_int_equal(h.stats.responses[4], 2);
	assert_int_equal(h.stats.responses[1], 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_authority_grammar),
		cmocka_unit_test(test_authority_bytes),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_host),
		cmocka_unit_test(test_options_some),
		cmocka_unit_test(test_options_none),
		cmocka_unit_test(test_options_any),
		cmocka_unit_test(test_options_listed),
		cmocka_unit_test(test_connect),
		cmocka_unit_test(test_no_version),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
