/* SPDX-License-Identifier: MIT */
/* test_date.c - the Date value: IMF-fixdate against gmtime_r + the C locale's
 * names, over known dates and 200,000 random instants; the per-second cache. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "giong_test.h"

#include "common/date.h"

/* The reference: gmtime_r and fixed English names (strftime follows the locale). */
static void reference(time_t t, char out[GIONG__HTTP_DATE_LEN + 1])
{
	char tmp[64];
	static const char *wday[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
	static const char *mon[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
				    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
	struct tm tm;

	gmtime_r(&t, &tm);
	snprintf(tmp, sizeof(tmp), "%s, %02d %s %04d %02d:%02d:%02d GMT", wday[tm.tm_wday],
		 tm.tm_mday, mon[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
	memcpy(out, tmp, GIONG__HTTP_DATE_LEN);
	out[GIONG__HTTP_DATE_LEN] = '\0';
}

static void check_one(time_t t)
{
	char got[GIONG__HTTP_DATE_LEN + 1] = {0}, want[GIONG__HTTP_DATE_LEN + 1];

	giong__http_date_format(t, got);
	reference(t, want);
	if (strcmp(got, want) != 0)
		fail_msg("%lld: got \"%s\", want \"%s\"", (long long)t, got, want);
}

static void test_known_dates(void **state)
{
	char got[GIONG__HTTP_DATE_LEN + 1] = {0};

	(void)state;
	giong__http_date_format(784111777, got); /* RFC 9110's example */
	assert_string_equal(got, "Sun, 06 Nov 1994 08:49:37 GMT");
	giong__http_date_format(0, got);
	assert_string_equal(got, "Thu, 01 Jan 1970 00:00:00 GMT");
	giong__http_date_format(951782400, got); /* a leap day of a year divisible by 400 */
	assert_string_equal(got, "Tue, 29 Feb 2000 00:00:00 GMT");
	giong__http_date_format(4102444799, got);
	assert_string_equal(got, "Thu, 31 Dec 2099 23:59:59 GMT");
	giong__http_date_format(-1, got);
	assert_string_equal(got, "Wed, 31 Dec 1969 23:59:59 GMT");
	check_one(2147483647);
	check_one(253402300799); /* 9999-12-31 23:59:59 */
}

static void test_random_instants(void **state)
{
	unsigned seed = 20261201;

	(void)state;
	srand(seed);
	for (int i = 0; i < 200000; i++) {
		/* 1900 .. 9999 */
		int64_t t = -2208988800LL + (int64_t)(((uint64_t)rand() << 31 | (uint64_t)rand()) %
						      (253402300799ULL + 2208988800ULL));

		check_one((time_t)t);
	}
}

static void test_cached_per_second(void **state)
{
	char a[GIONG__HTTP_DATE_LEN + 1] = {0}, want[GIONG__HTTP_DATE_LEN + 1];
	const char *p, *q;
	time_t before, after;

	(void)state;
	before = time(NULL);
	p = giong__http_date_now();
	memcpy(a, p, GIONG__HTTP_DATE_LEN);
	q = giong__http_date_now();
	after = time(NULL);
	assert_ptr_equal(p, q); /* one thread-local value */
	/* It is the value of a second between the two reads of the clock
	 * (COARSE may lag REALTIME by a tick: one second's slack below). */
	int matched = 0;
	for (time_t t = before - 1; t <= after; t++) {
		reference(t, want);
		matched |= strcmp(a, want) == 0;
	}
	assert_true(matched);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_dates),
		cmocka_unit_test(test_random_instants),
		cmocka_unit_test(test_cached_per_second),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
