/* SPDX-License-Identifier: MIT */
/* test_basics.c - the limits' defaults and checks, and the reason phrases. */
#include <errno.h>
#include <string.h>

#include "giong_test.h"

#include <giong/http.h>

static void test_limits_defaults(void **state)
{
	struct giong_http_limits l;

	(void)state;
	assert_int_equal(giong_http_limits_init(NULL), -EINVAL);
	memset(&l, 0xff, sizeof(l));
	assert_int_equal(giong_http_limits_init(&l), 0);
	assert_int_equal(l.request_line, 8 * 1024);
	assert_int_equal(l.head, 64 * 1024);
	assert_int_equal(l.fields, 100);
	assert_int_equal(l.body, 1024 * 1024);
	assert_int_equal(l.head_timeout_ms, 10000);
	assert_int_equal(l.idle_timeout_ms, 15000);
	assert_int_equal(l.body_timeout_ms, 30000);
	assert_int_equal(l.write_timeout_ms, 30000);
	assert_int_equal(l.connections, 10000);
	assert_int_equal(giong_http_limits_check(&l), 0);
}

static void test_limits_refused(void **state)
{
	struct giong_http_limits l, bad;

	(void)state;
	assert_int_equal(giong_http_limits_check(NULL), -EINVAL);
	giong_http_limits_init(&l);
	/* Each limit zeroed in turn: refused. */
	for (int field = 0; field < 9; field++) {
		bad = l;
		switch (field) {
		case 0:
			bad.request_line = 0;
			break;
		case 1:
			bad.head = 0;
			break;
		case 2:
			bad.fields = 0;
			break;
		case 3:
			bad.body = 0;
			break;
		case 4:
			bad.head_timeout_ms = 0;
			break;
		case 5:
			bad.idle_timeout_ms = 0;
			break;
		case 6:
			bad.body_timeout_ms = 0;
			break;
		case 7:
			bad.write_timeout_ms = 0;
			break;
		case 8:
			bad.connections = 0;
			break;
		}
		assert_int_equal(giong_http_limits_check(&bad), -EINVAL);
	}
	bad = l;
	bad.request_line = bad.head + 1;
	assert_int_equal(giong_http_limits_check(&bad), -EINVAL);
	bad = l;
	bad.head = 16u * 1024 * 1024 + 1;
	bad.request_line = 1024;
	assert_int_equal(giong_http_limits_check(&bad), -EINVAL);
	bad = l;
	bad.fields = 65536;
	assert_int_equal(giong_http_limits_check(&bad), -EINVAL);
	bad.fields = 65535;
	assert_int_equal(giong_http_limits_check(&bad), 0);
}

static void test_reasons(void **state)
{
	static const int named[] = {100, 200, 204, 206, 301, 304, 400, 404, 405, 408,
				    411, 413, 414, 417, 431, 500, 501, 503, 505};

	(void)state;
	assert_string_equal(giong_http_reason(200), "OK");
	assert_string_equal(giong_http_reason(404), "Not Found");
	assert_string_equal(giong_http_reason(413), "Content Too Large"); /* RFC 9110's name */
	assert_string_equal(giong_http_reason(431), "Request Header Fields Too Large");
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		assert_true(giong_http_reason(named[i])[0] != '\0');
	/* Unnamed and out of range: "", never NULL. */
	static const int unnamed[] = {0, -1, 99, 299, 499, 599, 600, 1000, -2147483647 - 1};
	for (size_t i = 0; i < sizeof(unnamed) / sizeof(unnamed[0]); i++) {
		assert_non_null(giong_http_reason(unnamed[i]));
		assert_string_equal(giong_http_reason(unnamed[i]), "");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limits_defaults),
		cmocka_unit_test(test_limits_refused),
		cmocka_unit_test(test_reasons),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
