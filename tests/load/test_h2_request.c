/* SPDX-License-Identifier: MIT */
/* test_h2_request.c - giong-load --h2's request (h2_request.c): the URL split into the address
 * to connect to, the SNI name, :authority and :path (IPv6 brackets, default ports, a query
 * without a path, no fragment); URLs refused; the -H fields lowercased, Host as :authority,
 * connection-specific fields refused (RFC 9113 8.2.2), content-length for a body. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "h2_request.h"

/* The run's state for @url and @nf fields "Name: value" of @f (their lengths computed). */
static int make(const char *url, const char *const (*f)[2], unsigned nf, const char *body,
		struct load_h2 **h)
{
	size_t len[8][2];
	struct load_h2_args a = {.url = url,
				 .fields = f,
				 .field_len = (const size_t(*)[2])len,
				 .nfields = nf,
				 .body = body,
				 .body_len = body ? strlen(body) : 0,
				 .streams = 1,
				 .timeout_ms = 1000};

	for (unsigned i = 0; i < nf; i++)
		len[i][0] = strlen(f[i][0]), len[i][1] = strlen(f[i][1]);
	return load_h2_new(&a, h);
}

/* The value of field @name in @h's template, NUL-terminated into a static buffer. */
static const char *field(const struct load_h2 *h, const char *name)
{
	static char v[512];

	for (size_t i = 0; i < h->nvlen; i++)
		if (h->nv[i].namelen == strlen(name) &&
		    !memcmp(h->nv[i].name, name, strlen(name))) {
			memcpy(v, h->nv[i].value, h->nv[i].valuelen);
			v[h->nv[i].valuelen] = '\0';
			return v;
		}
	return NULL;
}

static void test_urls(void **state)
{
	static const struct {
		const char *url, *addr, *host, *authority, *path, *scheme;
	} ok[] = {
		{"http://h", "h:80", "h", "h", "/", "http"},
		{"http://h:8080/p?q=1#frag", "h:8080", "h", "h:8080", "/p?q=1", "http"},
		{"http://h?x", "h:80", "h", "h", "/?x", "http"},
		{"https://[::1]:8443/a/b", "[::1]:8443", "::1", "[::1]:8443", "/a/b", "https"},
		{"https://[::1]", "[::1]:443", "::1", "[::1]", "/", "https"},
	};
	static const char *const bad[] = {"ftp://h/",     "http://",        "http:///p",
					  "http://u@h/",  "http://h:/",     "http://h:x/",
					  "http://[::1/", "http://[::1]x/", "h:80"};
	struct load_h2 *h;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(make(ok[i].url, NULL, 0, NULL, &h), 0);
		assert_string_equal(h->addr, ok[i].addr);
		assert_string_equal(h->host, ok[i].host);
		assert_string_equal(field(h, ":authority"), ok[i].authority);
		assert_string_equal(field(h, ":path"), ok[i].path);
		assert_string_equal(field(h, ":scheme"), ok[i].scheme);
		assert_string_equal(field(h, ":method"), "GET");
		assert_string_equal(load_h2_protocol(h), h->tls ? "h2" : "h2c");
		assert_null(field(h, "content-length"));
		load_h2_free(h);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (make(bad[i], NULL, 0, NULL, &h) != -EINVAL)
			fail_msg("accepted: %s", bad[i]);
}

static void test_fields(void **state)
{
	static const char *const f[][2] = {
		{"X-Test", "1"}, {"HOST", "other:81"}, {"Accept", "*/*"}};
	static const char *const conn[][2] = {{"X-A", "b"}, {"Connection", "close"}};
	static const char *const te[][2] = {{"Transfer-Encoding", "chunked"}};
	static const char *const clen[][2] = {{"Content-Length", "3"}};
	struct load_h2 *h;

	(void)state;
	assert_int_equal(make("http://h:8080/", f, 3, "body", &h), 0);
	assert_string_equal(field(h, "x-test"), "1");
	assert_string_equal(field(h, "accept"), "*/*");
	assert_null(field(h, "host")); /* it is :authority in HTTP/2 */
	assert_string_equal(field(h, ":authority"), "other:81");
	assert_string_equal(field(h, "content-length"), "4");
	assert_int_equal(h->nvlen, 7);
	load_h2_free(h);
	assert_int_equal(make("http://h/", conn, 2, NULL, &h), -EINVAL);
	assert_int_equal(make("http://h/", te, 1, NULL, &h), -EINVAL);
	/* The caller's content-length, not a second one. */
	assert_int_equal(make("http://h/", clen, 1, "body", &h), 0);
	assert_int_equal(h->nvlen, 5);
	assert_string_equal(field(h, "content-length"), "3");
	load_h2_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_urls),
		cmocka_unit_test(test_fields),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
