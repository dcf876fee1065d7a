/* SPDX-License-Identifier: MIT */
/*
 * test_proxy.c - the PROXY protocol header parser (src/common/proxy.h), v1 and v2:
 * what it accepts and the address it gives, that every prefix of a valid
 * header is "need more" (0), what it refuses (-EBADMSG), and random bytes
 * without a crash or an answer past the input; and end to end, a server
 * with proxy_protocol on: the client a header names is the request's, and a
 * connection without a valid header gets 400 and is closed.
 */
#include <errno.h>
#include <arpa/inet.h>

#include "http_test.h"

#include "common/proxy.h"

/* Parse @s[0..n) and check every prefix shorter than the header asks for
 * more, and every longer one gives the same length. */
static int parse_all(const char *s, size_t n, struct giong_addr *a, bool *has)
{
	int whole = giong__http_proxy_parse(s, n, a, has);

	for (size_t k = 0; k < n; k++) {
		int r = giong__http_proxy_parse(s, k, a, has);
		int want = whole > 0 && k >= (size_t)whole ? whole : 0;

		if (r != want) {
			print_message("prefix %zu of %zu gave %d\n", k, n, r);
			return -1000;
		}
	}
	return giong__http_proxy_parse(s, n, a, has);
}

static void check_addr(const struct giong_addr *a, const char *want)
{
	char text[GIONG_ADDR_STRLEN];

	assert_true(giong_addr_format(a, text, sizeof(text)) > 0);
	assert_string_equal(text, want);
}

static void test_v1_valid(void **state)
{
	static const char tcp4[] = "PROXY TCP4 192.0.2.1 198.51.100.7 56324 443\r\nGET /";
	static const char tcp6[] = "PROXY TCP6 2001:db8::1 2001:db8::2 65535 80\r\n";
	static const char unknown[] = "PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n";
	struct giong_addr a;
	bool has;

	(void)state;
	assert_int_equal(parse_all(tcp4, sizeof(tcp4) - 1, &a, &has), 45);
	assert_true(has);
	check_addr(&a, "192.0.2.1:56324");
	assert_int_equal(parse_all(tcp6, sizeof(tcp6) - 1, &a, &has), (int)sizeof(tcp6) - 1);
	assert_true(has);
	check_addr(&a, "[2001:db8::1]:65535");
	assert_int_equal(parse_all(unknown, sizeof(unknown) - 1, &a, &has),
			 (int)sizeof(unknown) - 1);
	assert_false(has);
	assert_int_equal(parse_all("PROXY UNKNOWN\r\n", 15, &a, &has), 15);
	assert_false(has);
}

static void test_v1_refused(void **state)
{
	static const char *const bad[] = {
		"PROXY TCP4 192.0.2.1 198.51.100.7 56324 443\n",    /* bare LF */
		"PROXY TCP4 192.0.2.1  198.51.100.7 56324 443\r\n", /* two SPs */
		"PROXY TCP4 192.0.2.1 198.51.100.7 56324 443 \r\n", /* a trailing SP */
		"PROXY TCP4 192.0.2.1 198.51.100.7 056324 443\r\n", /* a leading zero */
		"PROXY TCP4 192.0.2.1 198.51.100.7 65536 443\r\n",  /* a port too high */
		"PROXY TCP4 192.0.2.01 198.51.100.7 1 2\r\n",       /* not canonical */
		"PROXY TCP4 2001:db8::1 198.51.100.7 1 2\r\n",      /* the wrong family */
		"PROXY TCP6 ::FFFF:1.2.3.4 ::1 1 2\r\n",            /* not canonical (case) */
		"PROXY TCP5 192.0.2.1 198.51.100.7 1 2\r\n",        /* no such protocol */
		"PROXY TCP4 192.0.2.1 198.51.100.7 1\r\n",          /* a word missing */
		"PROXY TCP4 192.0.2.1 198.51.100.7 1 2 3\r\n",      /* a word too many */
		"PROXY \r\n",
		"PROXY  TCP4 192.0.2.1 198.51.100.7 1 2\r\n",
		"proxy TCP4 192.0.2.1 198.51.100.7 1 2\r\n", /* case matters */
		"PROXY TCP4 192.0.2.1 198.51.100.7 1 2\r\r",
		"GET / HTTP/1.1\r\n", /* no header at all */
		"PROXY TCP4 1.1.1.1 1.1.1.1 1 2\x01\r\n",
	};
	char longline[200];
	struct giong_addr a;
	bool has;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = giong__http_proxy_parse(bad[i], strlen(bad[i]), &a, &has);

		if (r != -EBADMSG)
			fail_msg("case %zu (%s) gave %d", i, bad[i], r);
	}
	/* A line past 107 bytes is refused before its end. */
	memset(longline, 'x', sizeof(longline));
	memcpy(longline, "PROXY UNKNOWN ", 14);
	assert_int_equal(giong__http_proxy_parse(longline, 106, &a, &has), 0);
	assert_int_equal(giong__http_proxy_parse(longline, 107, &a, &has), -EBADMSG);
	memcpy(longline + 105, "\r\n", 2);
	assert_int_equal(giong__http_proxy_parse(longline, 107, &a, &has), 107);
	assert_int_equal(giong__http_proxy_parse(NULL, 0, &a, &has), 0);
	assert_int_equal(giong__http_proxy_parse("P", 1, NULL, &has), -EINVAL);
}

/* A v2 header: signature, version/command, family, length, then @body. */
static size_t v2(unsigned char *out, unsigned vc, unsigned fam, const void *body, size_t n)
{
	memcpy(out, "\r\n\r\n\0\r\nQUIT\n", 12);
	out[12] = (unsigned char)vc;
	out[13] = (unsigned char)fam;
	out[14] = (unsigned char)(n >> 8);
	out[15] = (unsigned char)n;
	memcpy(out + 16, body, n);
	return 16 + n;
}

static void test_v2(void **state)
{
	unsigned char h[2048], body[1100] = {0};
	struct giong_addr a;
	bool has;
	size_t n;

	(void)state;
	/* TCP over IPv4 with a TLV after the addresses. */
	inet_pton(AF_INET, "203.0.113.9", body);
	inet_pton(AF_INET, "192.0.2.2", body + 4);
	body[8] = 0x1f, body[9] = 0x90; /* 8080 */
	body[10] = 0x01, body[11] = 0xbb;
	body[12] = 0x04, body[13] = 0, body[14] = 1, body[15] = 'x'; /* a NOOP TLV */
	n = v2(h, 0x21, 0x11, body, 16);
	assert_int_equal(parse_all((char *)h, n, &a, &has), (int)n);
	assert_true(has);
	check_addr(&a, "203.0.113.9:8080");
	/* IPv6. */
	memset(body, 0, sizeof(body));
	inet_pton(AF_INET6, "2001:db8::7", body);
	body[32] = 0x00, body[33] = 0x50;
	n = v2(h, 0x21, 0x21, body, 36);
	assert_int_equal(parse_all((char *)h, n, &a, &has), (int)n);
	assert_true(has);
	check_addr(&a, "[2001:db8::7]:80");
	/* LOCAL (a health check of the balancer's own) and UNSPEC. */
	n = v2(h, 0x20, 0x00, body, 0);
	assert_int_equal(parse_all((char *)h, n, &a, &has), 16);
	assert_false(has);
	n = v2(h, 0x21, 0x00, body, 4);
	assert_int_equal(parse_all((char *)h, n, &a, &has), 20);
	assert_false(has);
	/* Refused: version 1 in a v2 frame, command 2, UDP, Unix, addresses
	 * longer than the length, a length past the bound. */
	n = v2(h, 0x11, 0x11, body, 12);
	assert_int_equal(giong__http_proxy_parse((char *)h, n, &a, &has), -EBADMSG);
	n = v2(h, 0x22, 0x11, body, 12);
	assert_int_equal(giong__http_proxy_parse((char *)h, n, &a, &has), -EBADMSG);
	n = v2(h, 0x21, 0x12, body, 12);
	assert_int_equal(giong__http_proxy_parse((char *)h, n, &a, &has), -EBADMSG);
	n = v2(h, 0x21, 0x31, body, 216);
	assert_int_equal(giong__http_proxy_parse((char *)h, n, &a, &has), -EBADMSG);
	n = v2(h, 0x21, 0x21, body, 12);
	assert_int_equal(giong__http_proxy_parse((char *)h, n, &a, &has), -EBADMSG);
	n = v2(h, 0x21, 0x11, body, 1020);
	assert_int_equal(giong__http_proxy_parse((char *)h, 16, &a, &has), -EBADMSG);
}

/* Random and mutated bytes: an answer never claims more than the input. */
static void test_random(void **state)
{
	static const char seed[] = "PROXY TCP4 192.0.2.1 198.51.100.7 56324 443\r\n";
	unsigned char buf[256];
	uint64_t x = 0x9E3779B97F4A7C15ull;
	struct giong_addr a;
	bool has;

	(void)state;
	for (int i = 0; i < 200000; i++) {
		size_t n = (x >> 33) % sizeof(buf);

		if (i & 1)
			memcpy(buf, seed, sizeof(seed) - 1);
		for (size_t k = (i & 1) ? sizeof(seed) - 1 : 0; k < sizeof(buf); k++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			buf[k] = (unsigned char)(x >> 56);
		}
		if (i & 1) { /* flip one byte of the valid header */
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			buf[(x >> 40) % (sizeof(seed) - 1)] ^=
				(unsigned char)(1u << ((x >> 20) % 8));
		}
		int r = giong__http_proxy_parse((char *)buf, n, &a, &has);

		if (r != 0 && r != -EBADMSG && (r < 0 || (size_t)r > n))
			fail_msg("input %d of %zu bytes gave %d", i, n, r);
	}
}

/* The client's address as the handler sees it, as the body. */
static int whoami(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	struct giong_addr a;
	char text[GIONG_ADDR_STRLEN];
	int r = giong_http_request_client_addr(req, &a);

	(void)ctx;
	if (r)
		return r;
	giong_addr_format(&a, text, sizeof(text));
	return giong_http_response_send(res, text, strlen(text));
}

static void proxy_client(struct ht *h)
{
	static const char v1[] = "PROXY TCP4 203.0.113.7 192.0.2.1 40001 80\r\n"
				 "GET /who HTTP/1.1\r\nHost: x\r\n\r\n"
				 "GET /who HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
	static const char local[] = "\r\n\r\n\0\r\nQUIT\n\x20\x00\x00\x00"
				    "GET /who HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
	static const char none[] = "GET /who HTTP/1.1\r\nHost: x\r\n\r\n";
	struct ht_resp r;
	struct ht_conn c;
	int fd;

	/* v1, two requests on one connection: both see the named client. */
	if (!gt_check_true((fd = ht_connect(h)) >= 0))
		return;
	ht_conn_init(&c, fd);
	gt_check_int_equal(ht_send(fd, v1, sizeof(v1) - 1), 0);
	for (int i = 0; i < 2; i++) {
		gt_check_int_equal(ht_read_response(&c, &r, false), 0);
		gt_check_int_equal(r.status, 200);
		gt_check_string_equal(r.body, "203.0.113.7:40001");
		ht_resp_free(&r);
	}
	ht_conn_close(&c);
	/* v2 LOCAL: the connection's own peer. */
	if (!gt_check_true((fd = ht_connect(h)) >= 0))
		return;
	ht_conn_init(&c, fd);
	gt_check_int_equal(ht_send(fd, local, sizeof(local) - 1), 0);
	gt_check_int_equal(ht_read_response(&c, &r, false), 0);
	gt_check_int_equal(r.status, 200);
	gt_check_true(!strncmp(r.body, "127.0.0.1:", 10));
	ht_resp_free(&r);
	ht_conn_close(&c);
	/* No header: 400, closed. */
	gt_check_int_equal(ht_exchange(h, none, sizeof(none) - 1, &r, false), 1);
	gt_check_int_equal(r.status, 400);
	ht_resp_free(&r);
}

static void test_server_with_proxy(void **state)
{
	int fds = gt_count_fds();

	(void)state;
	/* The LOCAL case answers the connection's own peer: a regular socket is
	 * asked; one accepted as a direct descriptor (a table asked for, where
	 * the kernel allows: libgiong-net's tcp.h) is given a descriptor by the
	 * first ask. */
	for (int regular = 0; regular < 2; regular++) {
		struct ht h;

		ht_init(&h);
		h.opts.proxy_protocol = true;
		h.regular_fds = regular;
		h.cfg.direct_files = -1;
		assert_int_equal(giong_http_router_add(h.router, "GET", "/who", whoami, NULL), 0);
		ht_run(&h, proxy_client);
		assert_int_equal(h.stats.refused, 1);
		assert_int_equal(h.stats.responses[1], 3);
		assert_int_equal(gt_count_fds(), fds);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v1_valid),
		cmocka_unit_test(test_v1_refused),
		cmocka_unit_test(test_v2),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_server_with_proxy),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
