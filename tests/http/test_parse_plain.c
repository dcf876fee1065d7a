/* SPDX-License-Identifier: MIT */
/*
 * test_parse_plain.c - the plain heads on which the server skips http-parser's second
 * opinion (giong__http_head_plain(), issue 28), at each edge of that grammar: a head
 * just inside it and one just outside, each parsed with the shortcut and with
 * http-parser forced (giong__http_parse_head_full()), which must answer alike, and
 * each head the parser accepts read by http-parser itself, with no callback, which
 * must take it whole. The rules' own answers are test_parse.c's; here only where the
 * shortcut applies and that it changes none of them.
 */
#include "giong_test.h"

#include <http_parser.h>

#include <giong/http.h>

#include "http_parse_test.h"

static struct giong_http_field fields[HT_FIELDS_MAX], fields_full[HT_FIELDS_MAX];

static int headers_complete(http_parser *p)
{
	(void)p;
	return 1; /* no body, as in head.c */
}

/* http-parser alone over head[0..len): true if it takes the whole head, no error. */
static bool http_parser_takes(const char *head, size_t len)
{
	static const http_parser_settings settings = {.on_headers_complete = headers_complete};
	http_parser p;
	size_t n;

	http_parser_init(&p, HTTP_REQUEST);
	n = http_parser_execute(&p, &settings, head, len);
	return HTTP_PARSER_ERRNO(&p) == HPE_OK && n == len;
}

/*
 * Parses @in both ways and checks they agree; @want_plain: whether the head, when it is
 * accepted, must be plain. Returns the answer (the length, or minus the status).
 */
static int both_ways(const char *in, size_t len, bool want_plain)
{
	struct giong__http_head h, hf;
	int st = 0, stf = 0, r, rf;
	size_t head_len;

	r = giong__http_parse_head(in, len, NULL, NULL, &h, fields, &st);
	rf = giong__http_parse_head_full(in, len, NULL, NULL, &hf, fields_full, &stf,
					 GIONG__HTTP_PARSE_SECOND_ALWAYS);
	assert_int_equal(r, rf);
	if (r == -EBADMSG) {
		assert_int_equal(st, stf);
		assert_false(want_plain); /* every plain case below is accepted */
		return -st;
	}
	assert_true(r > 0);
	head_len = (size_t)r - (size_t)(h.method - in);
	assert_int_equal(giong__http_head_plain(&h, head_len), want_plain);
	assert_int_equal(hf.nfields, h.nfields);
	assert_true(http_parser_takes(h.method, head_len));
	return r;
}

static int plain(const char *s)
{
	return both_ways(s, strlen(s), true);
}

static int not_plain(const char *s)
{
	return both_ways(s, strlen(s), false);
}

#define PLAIN(s) assert_int_equal(plain(s), (int)strlen(s))
#define NOT_PLAIN(s) assert_int_equal(not_plain(s), (int)strlen(s))
#define NOT_PLAIN_REFUSED(status, s) assert_int_equal(not_plain(s), -(status))

static void test_request_line(void **state)
{
	static const char *const methods[] = {"GET",    "HEAD",    "POST",  "PUT",
					      "DELETE", "OPTIONS", "TRACE", "PATCH"};
	char buf[128];

	(void)state;
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		snprintf(buf, sizeof(buf), "%s /json HTTP/1.1\r\nHost: h\r\n\r\n", methods[i]);
		PLAIN(buf);
	}
	NOT_PLAIN("PROPFIND /json HTTP/1.1\r\nHost: h\r\n\r\n"); /* known, no number */
	NOT_PLAIN("M-SEARCH /x HTTP/1.1\r\nHost: h\r\n\r\n");
	NOT_PLAIN("CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n");
	NOT_PLAIN_REFUSED(501, "FOO /json HTTP/1.1\r\nHost: h\r\n\r\n");
	PLAIN("GET /json HTTP/1.1\r\nHost: h\r\n\r\n");
	NOT_PLAIN("GET /json HTTP/1.0\r\n\r\n");
	NOT_PLAIN("GET /json HTTP/1.0\r\nHost: h\r\n\r\n");
	/* leading empty lines are skipped before the plain head starts */
	PLAIN("\r\n\r\nGET /json HTTP/1.1\r\nHost: h\r\n\r\n");
}

static void test_target(void **state)
{
	static const char inside[] = "-._~!$&'()*+,;=:@/?%";
	char buf[128];

	(void)state;
	PLAIN("GET / HTTP/1.1\r\nHost: h\r\n\r\n");
	PLAIN("GET /a-._~!$&'()*+,;=:@/b?c=%20d/?e HTTP/1.1\r\nHost: h\r\n\r\n");
	PLAIN("GET /AZaz09 HTTP/1.1\r\nHost: h\r\n\r\n");
	/* every other visible byte: the scanner takes it, the shortcut does not */
	for (int c = 0x21; c < 0x7f; c++) {
		bool in = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || strchr(inside, c);

		snprintf(buf, sizeof(buf), "GET /a%cb HTTP/1.1\r\nHost: h\r\n\r\n", c);
		if (in)
			PLAIN(buf);
		else if (c == '#')
			NOT_PLAIN_REFUSED(400, buf); /* a fragment */
		else
			(void)not_plain(buf); /* some refused by http-parser: alike both ways */
	}
	NOT_PLAIN("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n");
	NOT_PLAIN("GET http://h/json HTTP/1.1\r\nHost: h\r\n\r\n");
	NOT_PLAIN_REFUSED(400, "GET /a\x80 HTTP/1.1\r\nHost: h\r\n\r\n");
}

/* A head of exactly @len bytes: one field padded with 'x' to the length. */
static char *head_of(size_t len)
{
	static const char start[] = "GET /json HTTP/1.1\r\nHost: h\r\nX: ", end[] = "\r\n\r\n";
	size_t pad = len - (sizeof(start) - 1) - (sizeof(end) - 1);
	char *s = malloc(len + 1);

	assert_non_null(s);
	memcpy(s, start, sizeof(start) - 1);
	memset(s + sizeof(start) - 1, 'x', pad);
	memcpy(s + len - (sizeof(end) - 1), end, sizeof(end));
	return s;
}

static void test_length_and_bytes(void **state)
{
	char *s;

	(void)state;
	s = head_of(GIONG__HTTP_PLAIN_HEAD_MAX);
	PLAIN(s);
	free(s);
	s = head_of(GIONG__HTTP_PLAIN_HEAD_MAX + 1);
	NOT_PLAIN(s);
	free(s);
	PLAIN("GET /json HTTP/1.1\r\nHost: h\r\nX: a\tb ~ !\r\n\r\n");
	PLAIN("GET /json HTTP/1.1\r\nHost: h\r\nX: \x7e\r\n\r\n");
	NOT_PLAIN("GET /json HTTP/1.1\r\nHost: h\r\nX: \x80\r\n\r\n");
	NOT_PLAIN("GET /json HTTP/1.1\r\nHost: h\r\nX: a\xff\r\n\r\n");
	PLAIN("GET /json HTTP/1.1\r\nHost: h\r\nX:\r\n\r\n"); /* an empty value */
	PLAIN("GET /json HTTP/1.1\r\nHost: h\r\nX: a  \r\n\r\n");
}

static void test_framing_fields(void **state)
{
	(void)state;
	/* Content-Length: up to 18 digits, nothing after them */
	PLAIN("POST /e HTTP/1.1\r\nHost: h\r\nContent-Length: 999999999999999999\r\n\r\n");
	PLAIN("POST /e HTTP/1.1\r\nHost: h\r\ncontent-length:\t0\r\n\r\n");
	NOT_PLAIN("POST /e HTTP/1.1\r\nHost: h\r\nContent-Length: 1000000000000000000\r\n\r\n");
	NOT_PLAIN_REFUSED(400, "POST /e HTTP/1.1\r\nHost: h\r\n"
			       "Content-Length: 18446744073709551615\r\n\r\n");
	NOT_PLAIN("POST /e HTTP/1.1\r\nHost: h\r\nContent-Length: 5 \r\n\r\n");
	/* Transfer-Encoding: exactly chunked */
	PLAIN("POST /e HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n");
	PLAIN("POST /e HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: CHUNKED\r\n\r\n");
	(void)not_plain("POST /e HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked \r\n\r\n");
	(void)not_plain("POST /e HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: , chunked\r\n\r\n");
	/* Connection: exactly close or keep-alive */
	PLAIN("GET /json HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
	PLAIN("GET /json HTTP/1.1\r\nHost: h\r\nConnection: Keep-Alive\r\n\r\n");
	NOT_PLAIN("GET /json HTTP/1.1\r\nHost: h\r\nConnection: close \r\n\r\n");
	NOT_PLAIN("GET /json HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, close\r\n\r\n");
	NOT_PLAIN("GET /json HTTP/1.1\r\nHost: h\r\nConnection: upgrade\r\n\r\n");
	/* the fields http-parser reads besides those */
	NOT_PLAIN("GET /json HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n\r\n");
	NOT_PLAIN("GET /json HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n");
	NOT_PLAIN("GET /json HTTP/1.1\r\nHost: h\r\nProxy-Connection: close\r\n\r\n");
	/* names that begin like them, or that they begin: http-parser acts on a
	 * whole match before the name ends (this pair was fuzz_http_request's find:
	 * the second name clears its chunked flag, so the head is 400) */
	NOT_PLAIN_REFUSED(400, "POST /e HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n"
			       "Transfer-Encodingx: y\r\n\r\n");
	NOT_PLAIN("POST /e HTTP/1.1\r\nHost: h\r\nTransfer-Encodingx: chunked\r\n\r\n");
	NOT_PLAIN("POST /e HTTP/1.1\r\nHost: h\r\nTransfer-Encodin: chunked\r\n\r\n");
	NOT_PLAIN("GET /json HTTP/1.1\r\nHost: h\r\nUpgrade-Insecure-Requests: 1\r\n\r\n");
	NOT_PLAIN("GET /json HTTP/1.1\r\nHost: h\r\nContent-Lengths: x y\r\n\r\n");
	NOT_PLAIN("GET /json HTTP/1.1\r\nHost: h\r\nContent-: x\r\n\r\n");
	NOT_PLAIN("GET /json HTTP/1.1\r\nHost: h\r\nConnectionx: upgrade\r\n\r\n");
	NOT_PLAIN("GET /json HTTP/1.1\r\nHost: h\r\nC: x\r\n\r\n");
	NOT_PLAIN("GET /json HTTP/1.1\r\nHost: h\r\nProxy-Connectio: x\r\n\r\n");
	/* names that part from them before their end: fields like any other */
	PLAIN("GET /json HTTP/1.1\r\nHost: h\r\nContent-Type: text/plain\r\n"
	      "Cookie: a=b\r\nCache-Control: no-cache\r\nTE: trailers\r\nUser-Agent: x\r\n"
	      "Upgradf: 1\r\nProxy-Authorization: x\r\nTransfer-Encodinh: x\r\n"
	      "X-Upgrade: h2c\r\nAccept: */*\r\n\r\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_line),
		cmocka_unit_test(test_target),
		cmocka_unit_test(test_length_and_bytes),
		cmocka_unit_test(test_framing_fields),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
