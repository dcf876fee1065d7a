/* SPDX-License-Identifier: MIT */
/* test_cond.c - giong-serve's validators and conditional requests: ETag and IMF-fixdate
 * formatting, the three HTTP-date forms (round trips against gmtime_r, leap years, fields
 * out of range, garbage), If-None-Match lists, If-Modified-Since, If-Range, Range at its
 * edges (first and last byte, suffixes, past the end, overflow, empty files), and
 * Accept-Encoding (weights, "*", aliases, malformed values, every cut of a valid one). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "cond.h"

#define NOW2026 1767225600LL    /* 2026-01-01T00:00:00Z */
#define RFC_EXAMPLE 784111777LL /* Sun, 06 Nov 1994 08:49:37 GMT */

static void test_etag(void **state)
{
	char out[SERVE_ETAG_MAX + 1];

	(void)state;
	assert_int_equal(serve_etag(out, sizeof(out), 100, 1, 5, 0x10), 16);
	assert_string_equal(out, "\"64-3b9aca05-10\"");
	assert_int_equal(serve_etag(out, sizeof(out), 0, 0, 0, 0), 7);
	assert_string_equal(out, "\"0-0-0\"");
	assert_int_equal(serve_etag(out, sizeof(out), UINT64_MAX, -1, 999999999, UINT64_MAX),
			 SERVE_ETAG_MAX);
	assert_string_equal(out, "\"ffffffffffffffff-ffffffffffffffff-ffffffffffffffff\"");
	/* The nanoseconds tell two writes within one second apart. */
	serve_etag(out, sizeof(out), 1, 1700000000, 1, 1);
	char other[SERVE_ETAG_MAX + 1];
	serve_etag(other, sizeof(other), 1, 1700000000, 2, 1);
	assert_string_not_equal(out, other);
	/* Huge seconds wrap, never UB (UBSan would say). */
	assert_true(serve_etag(out, sizeof(out), 1, INT64_MAX, 0, 1) > 0);
	assert_string_equal(out, "\"1-ffffffffc4653600-1\"");
	/* Bounds: exactly n + 1 bytes; nothing written when short. */
	memset(out, 'x', sizeof(out));
	assert_int_equal(serve_etag(out, 7, 0, 0, 0, 0), -ENOSPC);
	assert_int_equal(out[0], 'x');
	assert_int_equal(serve_etag(out, 8, 0, 0, 0, 0), 7);
	assert_int_equal(serve_etag(NULL, 0, 0, 0, 0, 0), -ENOSPC);
}

static void date_is(int64_t t, const char *want)
{
	char out[SERVE_HTTP_DATE_LEN + 1];
	int64_t back = 0;

	assert_int_equal(serve_http_date(t, out, sizeof(out)), SERVE_HTTP_DATE_LEN);
	assert_string_equal(out, want);
	assert_int_equal(serve_http_date_parse(out, strlen(out), NOW2026, &back), 0);
	assert_int_equal(back, t);
}

static void test_date_format(void **state)
{
	char out[SERVE_HTTP_DATE_LEN + 1];

	(void)state;
	date_is(RFC_EXAMPLE, "Sun, 06 Nov 1994 08:49:37 GMT");
	date_is(0, "Thu, 01 Jan 1970 00:00:00 GMT");
	date_is(-1, "Wed, 31 Dec 1969 23:59:59 GMT");
	date_is(951782400, "Tue, 29 Feb 2000 00:00:00 GMT");
	date_is(1709164800, "Thu, 29 Feb 2024 00:00:00 GMT");
	date_is(-11670955200LL, "Tue, 29 Feb 1600 12:00:00 GMT");
	date_is(-62135596800LL, "Mon, 01 Jan 0001 00:00:00 GMT");
	date_is(253402300799LL, "Fri, 31 Dec 9999 23:59:59 GMT");
	date_is(1623233894, "Wed, 09 Jun 2021 10:18:14 GMT");
	assert_int_equal(serve_http_date(-62135596801LL, out, sizeof(out)), -ERANGE);
	assert_int_equal(serve_http_date(253402300800LL, out, sizeof(out)), -ERANGE);
	assert_int_equal(serve_http_date(INT64_MIN, out, sizeof(out)), -ERANGE);
	assert_int_equal(serve_http_date(INT64_MAX, out, sizeof(out)), -ERANGE);
	memset(out, 'x', sizeof(out));
	assert_int_equal(serve_http_date(0, out, SERVE_HTTP_DATE_LEN), -ENOSPC);
	assert_int_equal(out[0], 'x');
	assert_int_equal(serve_http_date(0, NULL, 0), -ENOSPC);
}

/* 200,000 instants from 0001 to 9999 against gmtime_r with English names, both ways. */
static void test_date_random(void **state)
{
	static const char *wd[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
	static const char *mo[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
				   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
	uint64_t x = 0x9e3779b97f4a7c15u;

	(void)state;
	for (int i = 0; i < 200000; i++) {
		char got[SERVE_HTTP_DATE_LEN + 1], want[64];
		int64_t span = 253402300799LL + 62135596800LL + 1, t, back;
		time_t tt;
		struct tm tm;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		t = -62135596800LL + (int64_t)(x % (uint64_t)span);
		if (i % 4 == 0) /* and many near now */
			t = NOW2026 - (int64_t)(x % (100LL * 365 * 86400));
		tt = (time_t)t;
		assert_non_null(gmtime_r(&tt, &tm));
		snprintf(want, sizeof(want), "%s, %02d %s %04d %02d:%02d:%02d GMT", wd[tm.tm_wday],
			 tm.tm_mday, mo[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
			 tm.tm_sec);
		assert_int_equal(serve_http_date(t, got, sizeof(got)), SERVE_HTTP_DATE_LEN);
		if (strcmp(got, want))
			fail_msg("%lld: got \"%s\", want \"%s\"", (long long)t, got, want);
		assert_int_equal(serve_http_date_parse(got, SERVE_HTTP_DATE_LEN, NOW2026, &back),
				 0);
		assert_int_equal(back, t);
	}
}

static int64_t parse(const char *s)
{
	int64_t t = 12345;
	int r = serve_http_date_parse(s, strlen(s), NOW2026, &t);

	if (r < 0) {
		assert_int_equal(r, -EINVAL);
		assert_int_equal(t, 12345); /* untouched */
		return INT64_MIN;
	}
	return t;
}

static void test_date_forms(void **state)
{
	(void)state;
	/* RFC 9110 5.6.7's three examples, one instant. */
	assert_int_equal(parse("Sun, 06 Nov 1994 08:49:37 GMT"), RFC_EXAMPLE);
	assert_int_equal(parse("Sunday, 06-Nov-94 08:49:37 GMT"), RFC_EXAMPLE);
	assert_int_equal(parse("Sun Nov  6 08:49:37 1994"), RFC_EXAMPLE);
	assert_int_equal(parse("Sun Nov 06 08:49:37 1994"), RFC_EXAMPLE);
	/* Surrounding spaces are not part of the value. */
	assert_int_equal(parse("  Sun, 06 Nov 1994 08:49:37 GMT\t"), RFC_EXAMPLE);
	/* The day name is checked for being one, not against the date. */
	assert_int_equal(parse("Mon, 06 Nov 1994 08:49:37 GMT"), RFC_EXAMPLE);
	assert_int_equal(parse("Wednesday, 06-Nov-94 08:49:37 GMT"), RFC_EXAMPLE);
	/* RFC 850 years: at most 50 years after now's (2026), else the century before. */
	assert_int_equal(parse("Thursday, 01-Jan-26 00:00:00 GMT"), NOW2026);
	assert_int_equal(parse("Saturday, 01-Jan-00 00:00:00 GMT"), 946684800);
	assert_int_equal(parse("Friday, 06-Nov-76 00:00:00 GMT"), 3371846400LL);   /* 2076 */
	assert_int_equal(parse("Sunday, 06-Nov-77 00:00:00 GMT"), 247622400);      /* 1977 */
	assert_int_equal(parse("Thursday, 01-Jan-70 00:00:00 GMT"), 3155760000LL); /* 2070 */
	{
		int64_t t;
		/* The same text seen in 1990: 1970. */
		assert_int_equal(serve_http_date_parse("Thursday, 01-Jan-70 00:00:00 GMT", 32,
						       631152000, &t),
				 0);
		assert_int_equal(t, 0);
	}
	/* A leap second is the next minute's first. */
	assert_int_equal(parse("Sun, 06 Nov 1994 08:49:60 GMT"), RFC_EXAMPLE + 23);
}

static void test_date_bad(void **state)
{
	static const char *bad[] = {
		"",
		"garbage",
		"Sun, 06 Nov 1994 08:49:37 UTC",
		"Sun, 06 Nov 1994 08:49:37 gmt",
		"sun, 06 Nov 1994 08:49:37 GMT",
		"Sun, 06 nov 1994 08:49:37 GMT",
		"Sun, 06 Foo 1994 08:49:37 GMT",
		"Xyz, 06 Nov 1994 08:49:37 GMT",
		"Sun, 6 Nov 1994 08:49:37 GMT",
		"Sun,  6 Nov 1994 08:49:37 GMT",
		"Sun, 06 Nov 94 08:49:37 GMT",
		"Sun, 06 Nov 1994 8:49:37 GMT",
		"Sun, 06 Nov 1994 08:49:37 GMT ", /* trailing space is trimmed: see below */
		"Sun, 06 Nov 1994 08:49:37",
		"Sun, 06 Nov 1994 08-49-37 GMT",
		"Sun, 06 Nov 1994 08:49:37 GMTX",
		"Sun,_06 Nov 1994 08:49:37 GMT",
		"Sun, 00 Nov 1994 08:49:37 GMT", /* fields out of range */
		"Sun, 31 Nov 1994 08:49:37 GMT",
		"Sun, 32 Jan 1994 08:49:37 GMT",
		"Sun, 29 Feb 1994 08:49:37 GMT",
		"Sun, 29 Feb 1900 08:49:37 GMT", /* divisible by 100, not 400 */
		"Sun, 29 Feb 2100 08:49:37 GMT",
		"Sun, 06 Nov 0000 08:49:37 GMT",
		"Sun, 06 Nov 1994 24:00:00 GMT",
		"Sun, 06 Nov 1994 08:60:00 GMT",
		"Sun, 06 Nov 1994 08:49:61 GMT",
		"Sun, 06 Nov 1994 08:49:99 GMT",
		"Sun, 06 Nov 1994 -8:49:37 GMT",
		"Sun, +6 Nov 1994 08:49:37 GMT",
		"Sun, 06 Nov 199x 08:49:37 GMT",
		"Sunday, 06-Nov-1994 08:49:37 GMT",
		"Sunday, 06 Nov 94 08:49:37 GMT",
		"Sunday, 06-Nov-94 08:49:37",
		"Sunday, 31-Apr-94 08:49:37 GMT",
		"Sundy, 06-Nov-94 08:49:37 GMT",
		"Sun, 06-Nov-94 08:49:37 GMT",
		"Sun Nov  6 08:49:37 94",
		"Sun Nov 6 08:49:37 1994",
		"Sun Nov  6 08:49:37 1994 GMT",
		"Sun Nov    08:49:37 1994",
		"Sun Nov  0 08:49:37 1994",
		"Sun Feb 29 08:49:37 1999",
		"Sun Foo  6 08:49:37 1994",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int64_t t = parse(bad[i]);

		if (i == 12) { /* the trimmed one parses */
			assert_int_equal(t, RFC_EXAMPLE);
			continue;
		}
		if (t != INT64_MIN)
			fail_msg("\"%s\" parsed as %lld", bad[i], (long long)t);
	}
	/* Bytes past @len are not read: a cut date is not a date. */
	{
		int64_t t;
		assert_int_equal(
			serve_http_date_parse("Sun, 06 Nov 1994 08:49:37 GMT", 28, NOW2026, &t),
			-EINVAL);
		assert_int_equal(serve_http_date_parse(NULL, 0, NOW2026, &t), -EINVAL);
	}
	/* Leap days that exist. */
	assert_int_equal(parse("Tue, 29 Feb 2000 00:00:00 GMT"), 951782400);
	assert_int_equal(parse("Thu Feb 29 00:00:00 2024"), 1709164800);
}

#define ETAG "\"64-3b9aca05-10\""

static int inm(const char *v)
{
	return serve_if_none_match(v, strlen(v), ETAG, strlen(ETAG));
}

static void test_if_none_match(void **state)
{
	(void)state;
	assert_int_equal(inm(ETAG), 1);
	assert_int_equal(inm("W/" ETAG), 1); /* weak comparison */
	assert_int_equal(inm("*"), 1);
	assert_int_equal(inm("  *  "), 1);
	assert_int_equal(inm("\"x\", " ETAG), 1);
	assert_int_equal(inm("\"x\",W/" ETAG ", \"y\""), 1);
	assert_int_equal(inm("\"x\" ,\t, ," ETAG), 1); /* empty elements */
	assert_int_equal(inm(" " ETAG " "), 1);
	assert_int_equal(inm("\"x\""), 0);
	assert_int_equal(inm("\"x\", W/\"y\""), 0);
	assert_int_equal(inm("\"64-3B9ACA05-10\""), 0); /* opaque: case matters */
	assert_int_equal(inm("\"64-3b9aca05-1\""), 0);
	assert_int_equal(inm("\"\""), 0);
	assert_int_equal(inm("w/" ETAG), -EINVAL);
	assert_int_equal(inm("64-3b9aca05-10"), -EINVAL);
	assert_int_equal(inm("\"x"), -EINVAL);
	assert_int_equal(inm("\"x\" \"y\""), -EINVAL);
	assert_int_equal(inm("\"x\"y"), -EINVAL);
	assert_int_equal(inm("\"a b\""), -EINVAL); /* no spaces inside */
	assert_int_equal(inm("*, " ETAG), -EINVAL);
	assert_int_equal(inm(""), -EINVAL);
	assert_int_equal(inm(" , ,"), -EINVAL);
	assert_int_equal(inm("W/"), -EINVAL);
	assert_int_equal(serve_if_none_match(NULL, 0, ETAG, strlen(ETAG)), -EINVAL);
	/* Our own tag weak: still the weak comparison. */
	assert_int_equal(serve_if_none_match(ETAG, strlen(ETAG), "W/" ETAG, strlen(ETAG) + 2), 1);
	/* @len bounds the value: the match after it is not seen. */
	assert_int_equal(serve_if_none_match("\"x\", " ETAG, 5, ETAG, strlen(ETAG)), 0);
	/* obs-text inside a tag is allowed. */
	assert_int_equal(serve_if_none_match("\"\xff\"", 3, "\"\xff\"", 3), 1);
}

static void test_if_modified_since(void **state)
{
	const char *d = "Sun, 06 Nov 1994 08:49:37 GMT";
	size_t n = strlen(d);

	(void)state;
	assert_int_equal(serve_if_modified_since(d, n, RFC_EXAMPLE, NOW2026), 1);
	assert_int_equal(serve_if_modified_since(d, n, RFC_EXAMPLE - 100, NOW2026), 1);
	assert_int_equal(serve_if_modified_since(d, n, RFC_EXAMPLE + 1, NOW2026), 0);
	assert_int_equal(
		serve_if_modified_since("Sun Nov  6 08:49:37 1994", 24, RFC_EXAMPLE, NOW2026), 1);
	/* Ignored: not a date, a date after now. */
	assert_int_equal(serve_if_modified_since("yesterday", 9, RFC_EXAMPLE, NOW2026), 0);
	assert_int_equal(serve_if_modified_since(d, n, RFC_EXAMPLE, RFC_EXAMPLE - 1), 0);
	assert_int_equal(serve_if_modified_since(d, n, RFC_EXAMPLE, RFC_EXAMPLE), 1);
	assert_int_equal(serve_if_modified_since(NULL, 0, RFC_EXAMPLE, NOW2026), 0);
}

static void test_not_modified(void **state)
{
	const char *d = "Sun, 06 Nov 1994 08:49:37 GMT";
	size_t n = strlen(d), e = strlen(ETAG);

	(void)state;
	/* If-None-Match alone. */
	assert_int_equal(serve_not_modified(ETAG, e, NULL, 0, ETAG, e, RFC_EXAMPLE, NOW2026), 1);
	assert_int_equal(serve_not_modified("\"x\"", 3, NULL, 0, ETAG, e, RFC_EXAMPLE, NOW2026), 0);
	/* If-Modified-Since alone. */
	assert_int_equal(serve_not_modified(NULL, 0, d, n, ETAG, e, RFC_EXAMPLE, NOW2026), 1);
	assert_int_equal(serve_not_modified(NULL, 0, d, n, ETAG, e, RFC_EXAMPLE + 1, NOW2026), 0);
	/* Both: If-Modified-Since is ignored, whichever way it would go. */
	assert_int_equal(serve_not_modified("\"x\"", 3, d, n, ETAG, e, RFC_EXAMPLE, NOW2026), 0);
	assert_int_equal(serve_not_modified(ETAG, e, d, n, ETAG, e, RFC_EXAMPLE + 1, NOW2026), 1);
	/* A malformed If-None-Match counts as absent. */
	assert_int_equal(serve_not_modified("bad", 3, d, n, ETAG, e, RFC_EXAMPLE, NOW2026), 1);
	assert_int_equal(serve_not_modified(NULL, 0, NULL, 0, ETAG, e, RFC_EXAMPLE, NOW2026), 0);
}

static int im(const char *v)
{
	return serve_if_match(v, strlen(v), ETAG, strlen(ETAG));
}

static void test_if_match(void **state)
{
	(void)state;
	assert_int_equal(im(ETAG), 1);
	assert_int_equal(im("*"), 1);
	assert_int_equal(im(" * "), 1);
	assert_int_equal(im("\"x\", " ETAG), 1);
	assert_int_equal(im("\"x\" ,\t, ," ETAG), 1); /* empty elements */
	assert_int_equal(im("W/" ETAG), 0);           /* the strong comparison */
	assert_int_equal(im("\"x\""), 0);
	assert_int_equal(im("\"64-3B9ACA05-10\""), 0); /* opaque: case matters */
	assert_int_equal(im("w/" ETAG), -EINVAL);
	assert_int_equal(im("64-3b9aca05-10"), -EINVAL);
	assert_int_equal(im("\"x\" \"y\""), -EINVAL);
	assert_int_equal(im("*, " ETAG), -EINVAL);
	assert_int_equal(im(""), -EINVAL);
	assert_int_equal(serve_if_match(NULL, 0, ETAG, strlen(ETAG)), -EINVAL);
	/* Our own tag weak: nothing matches it strongly. */
	assert_int_equal(serve_if_match(ETAG, strlen(ETAG), "W/" ETAG, strlen(ETAG) + 2), 0);
	/* @len bounds the value. */
	assert_int_equal(serve_if_match("\"x\", " ETAG, 5, ETAG, strlen(ETAG)), 0);
}

static void test_if_unmodified_since(void **state)
{
	const char *d = "Sun, 06 Nov 1994 08:49:37 GMT";
	size_t n = strlen(d);

	(void)state;
	assert_int_equal(serve_if_unmodified_since(d, n, RFC_EXAMPLE, NOW2026), 1);
	assert_int_equal(serve_if_unmodified_since(d, n, RFC_EXAMPLE - 100, NOW2026), 1);
	assert_int_equal(serve_if_unmodified_since(d, n, RFC_EXAMPLE + 1, NOW2026), 0);
	assert_int_equal(
		serve_if_unmodified_since("Sun Nov  6 08:49:37 1994", 24, RFC_EXAMPLE + 1, NOW2026),
		0);
	/* A date after now still counts (unlike If-Modified-Since): the file is older. */
	assert_int_equal(serve_if_unmodified_since(d, n, RFC_EXAMPLE, RFC_EXAMPLE - 1), 1);
	assert_int_equal(serve_if_unmodified_since("yesterday", 9, RFC_EXAMPLE, NOW2026), -EINVAL);
	assert_int_equal(serve_if_unmodified_since(NULL, 0, RFC_EXAMPLE, NOW2026), -EINVAL);
}

static void test_precondition_failed(void **state)
{
	const char *d = "Sun, 06 Nov 1994 08:49:37 GMT";
	size_t n = strlen(d), e = strlen(ETAG);

	(void)state;
	/* If-Match alone. */
	assert_int_equal(serve_precondition_failed(ETAG, e, NULL, 0, ETAG, e, RFC_EXAMPLE, NOW2026),
			 0);
	assert_int_equal(
		serve_precondition_failed("\"x\"", 3, NULL, 0, ETAG, e, RFC_EXAMPLE, NOW2026), 1);
	/* If-Unmodified-Since alone. */
	assert_int_equal(serve_precondition_failed(NULL, 0, d, n, ETAG, e, RFC_EXAMPLE, NOW2026),
			 0);
	assert_int_equal(
		serve_precondition_failed(NULL, 0, d, n, ETAG, e, RFC_EXAMPLE + 1, NOW2026), 1);
	/* Both: If-Unmodified-Since is ignored, whichever way it would go. */
	assert_int_equal(
		serve_precondition_failed(ETAG, e, d, n, ETAG, e, RFC_EXAMPLE + 1, NOW2026), 0);
	assert_int_equal(serve_precondition_failed("\"x\"", 3, d, n, ETAG, e, RFC_EXAMPLE, NOW2026),
			 1);
	/* Malformed values count as absent; a malformed If-Match leaves If-Unmodified-Since
	 * ignored too (the field was there). */
	assert_int_equal(
		serve_precondition_failed("bad", 3, NULL, 0, ETAG, e, RFC_EXAMPLE, NOW2026), 0);
	assert_int_equal(
		serve_precondition_failed(NULL, 0, "bad", 3, ETAG, e, RFC_EXAMPLE + 1, NOW2026), 0);
	assert_int_equal(
		serve_precondition_failed("bad", 3, d, n, ETAG, e, RFC_EXAMPLE + 1, NOW2026), 0);
	assert_int_equal(
		serve_precondition_failed(NULL, 0, NULL, 0, ETAG, e, RFC_EXAMPLE + 1, NOW2026), 0);
}

static int rng(const char *v, uint64_t size, struct serve_range *r)
{
	r->start = 0xdead;
	r->end = 0xbeef;
	int res = serve_range_parse(v, strlen(v), size, r);

	if (res != SERVE_RANGE_OK) { /* untouched */
		assert_int_equal(r->start, 0xdead);
		assert_int_equal(r->end, 0xbeef);
	} else {
		assert_true(r->start <= r->end);
		assert_true(r->end < size);
	}
	return res;
}

#define RANGE_OK(v, size, s, e)                                                                    \
	do {                                                                                       \
		struct serve_range r_;                                                             \
		assert_int_equal(rng(v, size, &r_), SERVE_RANGE_OK);                               \
		assert_int_equal(r_.start, s);                                                     \
		assert_int_equal(r_.end, e);                                                       \
	} while (0)
#define RANGE_IS(v, size, want)                                                                    \
	do {                                                                                       \
		struct serve_range r_;                                                             \
		assert_int_equal(rng(v, size, &r_), want);                                         \
	} while (0)

static void test_range(void **state)
{
	(void)state;
	RANGE_OK("bytes=0-0", 100, 0, 0);     /* the first byte */
	RANGE_OK("bytes=99-99", 100, 99, 99); /* the last */
	RANGE_OK("bytes=99-", 100, 99, 99);
	RANGE_OK("bytes=-1", 100, 99, 99);
	RANGE_OK("bytes=0-99", 100, 0, 99);
	RANGE_OK("bytes=0-", 100, 0, 99);
	RANGE_OK("bytes=10-20", 100, 10, 20);
	RANGE_OK("bytes=-100", 100, 0, 99);
	RANGE_OK("bytes=-101", 100, 0, 99); /* a suffix longer than the file: all of it */
	RANGE_OK("bytes=-30", 100, 70, 99);
	RANGE_OK("bytes=50-1000", 100, 50, 99); /* end past the size: clamped */
	RANGE_OK("BYTES=1-2", 100, 1, 2);       /* the unit is case-insensitive */
	RANGE_OK("Bytes=1-2", 100, 1, 2);
	RANGE_OK("bytes=007-008", 100, 7, 8);
	RANGE_OK("  bytes=1-2  ", 100, 1, 2);
	RANGE_OK("bytes=1-2,", 100, 1, 2); /* empty list elements */
	RANGE_OK("bytes=, 1-2 ,", 100, 1, 2);
	RANGE_OK("bytes=5-5", 6, 5, 5);
	RANGE_IS("bytes=-0", 100, SERVE_RANGE_UNSATISFIABLE);
	RANGE_IS("bytes=-000", 100, SERVE_RANGE_UNSATISFIABLE);
	RANGE_IS("bytes=100-", 100, SERVE_RANGE_UNSATISFIABLE); /* past the end: 416 */
	RANGE_IS("bytes=100-200", 100, SERVE_RANGE_UNSATISFIABLE);
	RANGE_IS("bytes=1000-", 100, SERVE_RANGE_UNSATISFIABLE);
	/* Ignored: answer 200 with the whole file. */
	RANGE_IS("bytes=5-2", 100, SERVE_RANGE_IGNORE);
	RANGE_IS("bytes=0-1,2-3", 100, SERVE_RANGE_IGNORE);
	RANGE_IS("bytes=0-1, -5", 100, SERVE_RANGE_IGNORE);
	RANGE_IS("bytes=200-300,0-1", 100, SERVE_RANGE_IGNORE);
	RANGE_IS("bytes=", 100, SERVE_RANGE_IGNORE);
	RANGE_IS("bytes=,", 100, SERVE_RANGE_IGNORE);
	RANGE_IS("bytes=-", 100, SERVE_RANGE_IGNORE);
	RANGE_IS("bytes=--1", 100, SERVE_RANGE_IGNORE);
	RANGE_IS("bytes=1", 100, SERVE_RANGE_IGNORE);
	RANGE_IS("bytes=a-b", 100, SERVE_RANGE_IGNORE);
	RANGE_IS("bytes=1-2x", 100, SERVE_RANGE_IGNORE);
	RANGE_IS("bytes=1-x", 100, SERVE_RANGE_IGNORE);
	RANGE_IS("bytes=+1-2", 100, SERVE_RANGE_IGNORE);
	RANGE_IS("bytes=1--2", 100, SERVE_RANGE_IGNORE);
	RANGE_IS("bytes = 1-2", 100, SERVE_RANGE_IGNORE); /* whitespace inside */
	RANGE_IS("bytes= 1 -2", 100, SERVE_RANGE_IGNORE);
	RANGE_IS("bytes=1- 2", 100, SERVE_RANGE_IGNORE);
	RANGE_IS("bytes=1-2 3", 100, SERVE_RANGE_IGNORE);
	RANGE_IS("bytes 1-2", 100, SERVE_RANGE_IGNORE);
	RANGE_IS("items=1-2", 100, SERVE_RANGE_IGNORE);
	RANGE_IS("bytesx=1-2", 100, SERVE_RANGE_IGNORE);
	RANGE_IS("", 100, SERVE_RANGE_IGNORE);
	RANGE_IS("byte", 100, SERVE_RANGE_IGNORE);
	{
		struct serve_range r;
		assert_int_equal(serve_range_parse(NULL, 0, 100, &r), SERVE_RANGE_IGNORE);
		assert_int_equal(serve_range_parse("bytes=0-0", 9, 100, NULL), SERVE_RANGE_IGNORE);
		/* @len bounds the value: "bytes=1-2" of "bytes=1-2,5-6". */
		assert_int_equal(serve_range_parse("bytes=1-2,5-6", 9, 100, &r), SERVE_RANGE_OK);
		assert_int_equal(r.end, 2);
		assert_int_equal(serve_range_parse("bytes=1-23", 9, 100, &r), SERVE_RANGE_OK);
		assert_int_equal(r.end, 2);
	}
}

static void test_range_edges(void **state)
{
	(void)state;
	/* An empty file: nothing is satisfiable; a suffix is ignored (no byte to send). */
	RANGE_IS("bytes=0-0", 0, SERVE_RANGE_UNSATISFIABLE);
	RANGE_IS("bytes=0-", 0, SERVE_RANGE_UNSATISFIABLE);
	RANGE_IS("bytes=-0", 0, SERVE_RANGE_UNSATISFIABLE);
	RANGE_IS("bytes=-5", 0, SERVE_RANGE_IGNORE);
	RANGE_IS("bytes=5-1", 0, SERVE_RANGE_IGNORE);
	/* A one-byte file. */
	RANGE_OK("bytes=0-0", 1, 0, 0);
	RANGE_OK("bytes=-1", 1, 0, 0);
	RANGE_OK("bytes=-2", 1, 0, 0);
	RANGE_IS("bytes=1-", 1, SERVE_RANGE_UNSATISFIABLE);
	/* 64-bit sizes and numbers past 2^64 - 1 (they saturate, never wrap). */
	RANGE_OK("bytes=18446744073709551614-", UINT64_MAX, UINT64_MAX - 1, UINT64_MAX - 1);
	RANGE_OK("bytes=0-18446744073709551615", UINT64_MAX, 0, UINT64_MAX - 1);
	RANGE_OK("bytes=0-18446744073709551616", 100, 0, 99);
	RANGE_OK("bytes=0-99999999999999999999999999999999", 100, 0, 99);
	RANGE_OK("bytes=-18446744073709551616", 100, 0, 99);
	RANGE_OK("bytes=-18446744073709551615", UINT64_MAX, 0, UINT64_MAX - 1);
	RANGE_OK("bytes=-1", UINT64_MAX, UINT64_MAX - 1, UINT64_MAX - 1);
	RANGE_IS("bytes=18446744073709551615-", UINT64_MAX, SERVE_RANGE_UNSATISFIABLE);
	RANGE_IS("bytes=18446744073709551616-", UINT64_MAX, SERVE_RANGE_UNSATISFIABLE);
	RANGE_IS("bytes=18446744073709551616-0", 100, SERVE_RANGE_IGNORE); /* last < first */
	RANGE_IS("bytes=4294967296-4294967295", 1ull << 40, SERVE_RANGE_IGNORE);
	RANGE_OK("bytes=4294967296-4294967296", 1ull << 40, 1ull << 32, 1ull << 32);
	RANGE_OK("bytes=-4294967297", 1ull << 32, 0, (1ull << 32) - 1);
}

static void test_content_range(void **state)
{
	char out[SERVE_CONTENT_RANGE_MAX + 1];
	struct serve_range r = {0, 0};

	(void)state;
	assert_int_equal(serve_content_range(out, sizeof(out), &r, 100), 13);
	assert_string_equal(out, "bytes 0-0/100");
	assert_int_equal(serve_content_range(out, sizeof(out), NULL, 100), 11);
	assert_string_equal(out, "bytes */100");
	assert_int_equal(serve_content_range(out, sizeof(out), NULL, 0), 9);
	assert_string_equal(out, "bytes */0");
	r.start = UINT64_MAX;
	r.end = UINT64_MAX;
	assert_int_equal(serve_content_range(out, sizeof(out), &r, UINT64_MAX),
			 SERVE_CONTENT_RANGE_MAX);
	assert_string_equal(out, "bytes 18446744073709551615-18446744073709551615/"
				 "18446744073709551615");
	memset(out, 'x', sizeof(out));
	assert_int_equal(serve_content_range(out, SERVE_CONTENT_RANGE_MAX, &r, UINT64_MAX),
			 -ENOSPC);
	assert_int_equal(out[0], 'x');
	assert_int_equal(serve_content_range(NULL, 0, NULL, 1), -ENOSPC);
}

static int ifr(const char *v, int64_t mtime, int64_t now)
{
	return serve_if_range(v, strlen(v), ETAG, strlen(ETAG), mtime, now);
}

static void test_if_range(void **state)
{
	const char *d = "Sun, 06 Nov 1994 08:49:37 GMT";

	(void)state;
	assert_int_equal(ifr(ETAG, RFC_EXAMPLE, NOW2026), 1);
	assert_int_equal(ifr(" " ETAG " ", RFC_EXAMPLE, NOW2026), 1);
	assert_int_equal(ifr("W/" ETAG, RFC_EXAMPLE, NOW2026), 0); /* strong comparison */
	assert_int_equal(ifr("\"other\"", RFC_EXAMPLE, NOW2026), 0);
	assert_int_equal(ifr("\"x\", " ETAG, RFC_EXAMPLE, NOW2026), 0); /* one tag, not a list */
	assert_int_equal(ifr("*", RFC_EXAMPLE, NOW2026), 0);
	assert_int_equal(ifr("", RFC_EXAMPLE, NOW2026), 0);
	assert_int_equal(ifr("\"unterminated", RFC_EXAMPLE, NOW2026), 0);
	/* Our own tag weak: never a strong match. */
	assert_int_equal(serve_if_range(ETAG, strlen(ETAG), "W/" ETAG, strlen(ETAG) + 2,
					RFC_EXAMPLE, NOW2026),
			 0);
	/* A date: exactly the modification time, which must be in a past second. */
	assert_int_equal(ifr(d, RFC_EXAMPLE, NOW2026), 1);
	assert_int_equal(ifr("Sunday, 06-Nov-94 08:49:37 GMT", RFC_EXAMPLE, NOW2026), 1);
	assert_int_equal(ifr(d, RFC_EXAMPLE + 1, NOW2026), 0);
	assert_int_equal(ifr(d, RFC_EXAMPLE - 1, NOW2026), 0); /* older is not equal either */
	assert_int_equal(ifr(d, RFC_EXAMPLE, RFC_EXAMPLE), 0); /* modified this second: weak */
	assert_int_equal(ifr(d, RFC_EXAMPLE, RFC_EXAMPLE + 1), 1);
	/* A date on a Wednesday starts with 'W' and is still a date. */
	assert_int_equal(ifr("Wed, 09 Jun 2021 10:18:14 GMT", 1623233894, NOW2026), 1);
	assert_int_equal(ifr("Wednesday, 09-Jun-21 10:18:14 GMT", 1623233894, NOW2026), 1);
	assert_int_equal(ifr("not a date", RFC_EXAMPLE, NOW2026), 0);
	assert_int_equal(serve_if_range(NULL, 0, ETAG, strlen(ETAG), RFC_EXAMPLE, NOW2026), 0);
}

/* @n bytes of @v through serve_accept_encoding() from a heap copy of exactly @n bytes, so
 * that ASan sees a read past the value. */
static int ae_n(const char *v, size_t n, const char *coding)
{
	char *copy = malloc(n ? n : 1);
	int r;

	assert_non_null(copy);
	memcpy(copy, v, n);
	r = serve_accept_encoding(copy, n, coding);
	free(copy);
	assert_true(r == 0 || r == 1);
	return r;
}

static int ae(const char *v, const char *coding)
{
	return ae_n(v, strlen(v), coding);
}

static void test_accept_encoding(void **state)
{
	(void)state;
	/* A plain list. */
	assert_int_equal(ae("gzip, deflate, br", "gzip"), 1);
	assert_int_equal(ae("gzip, deflate, br", "br"), 1);
	assert_int_equal(ae("gzip, deflate, br", "deflate"), 1);
	assert_int_equal(ae("gzip, deflate, br", "zstd"), 0);
	assert_int_equal(ae("gzip", "br"), 0);
	assert_int_equal(ae("br", "gzip"), 0);
	/* Names without regard to case, the parameter's name too. */
	assert_int_equal(ae("GZIP", "gzip"), 1);
	assert_int_equal(ae("Br", "br"), 1);
	assert_int_equal(ae("gzip", "GZip"), 1);
	assert_int_equal(ae("gzip;Q=0", "gzip"), 0);
	assert_int_equal(ae("gzip;Q=0.5", "gzip"), 1);
	/* Spaces and tabs around the value, commas and semicolons; none around "=". */
	assert_int_equal(ae("  gzip  ", "gzip"), 1);
	assert_int_equal(ae("\tbr\t,\tgzip\t", "gzip"), 1);
	assert_int_equal(ae("gzip ; q=0.5", "gzip"), 1);
	assert_int_equal(ae("gzip;\t q=0 , br", "gzip"), 0);
	assert_int_equal(ae("gzip;\t q=0 , br", "br"), 1);
	assert_int_equal(ae("gzip;q=0.5 ,br", "br"), 1);
	assert_int_equal(ae("gzip;q =0.5", "gzip"), 0);
	assert_int_equal(ae("gzip;q= 0.5", "gzip"), 0);
	assert_int_equal(ae("gzip; q = 1", "gzip"), 0);
	assert_int_equal(ae("gzip br", "gzip"), 0); /* no comma between them */
	/* q=0 refuses; any weight above it accepts. */
	assert_int_equal(ae("gzip;q=0", "gzip"), 0);
	assert_int_equal(ae("gzip;q=0.", "gzip"), 0);
	assert_int_equal(ae("gzip;q=0.000", "gzip"), 0);
	assert_int_equal(ae("br, gzip;q=0", "gzip"), 0);
	assert_int_equal(ae("br, gzip;q=0", "br"), 1);
	assert_int_equal(ae("gzip;q=0.001", "gzip"), 1);
	assert_int_equal(ae("gzip;q=0.01", "gzip"), 1);
	assert_int_equal(ae("gzip;q=0.5", "gzip"), 1);
	assert_int_equal(ae("gzip;q=0.999", "gzip"), 1);
	assert_int_equal(ae("gzip;q=0.909", "gzip"), 1);
	assert_int_equal(ae("gzip;q=0.009", "gzip"), 1);
	assert_int_equal(ae("gzip;q=1", "gzip"), 1);
	assert_int_equal(ae("gzip;q=1.", "gzip"), 1);
	assert_int_equal(ae("gzip;q=1.000", "gzip"), 1);
	/* "*": every coding not listed; an entry of the coding's own overrides it. */
	assert_int_equal(ae("*", "gzip"), 1);
	assert_int_equal(ae("*", "br"), 1);
	assert_int_equal(ae("*;q=0.1", "br"), 1);
	assert_int_equal(ae("*;q=0", "gzip"), 0);
	assert_int_equal(ae("*, gzip;q=0", "gzip"), 0);
	assert_int_equal(ae("*, gzip;q=0", "br"), 1);
	assert_int_equal(ae("gzip;q=0, *", "gzip"), 0); /* order does not matter */
	assert_int_equal(ae("*;q=0, gzip", "gzip"), 1);
	assert_int_equal(ae("*;q=0, gzip", "br"), 0);
	assert_int_equal(ae("gzip;q=0.001, *;q=0", "gzip"), 1);
	/* x-gzip is gzip (and x-compress compress), on either side; no other "x-" is. */
	assert_int_equal(ae("x-gzip", "gzip"), 1);
	assert_int_equal(ae("X-GZip;q=0.5", "gzip"), 1);
	assert_int_equal(ae("x-gzip;q=0, *", "gzip"), 0);
	assert_int_equal(ae("x-gzip", "br"), 0);
	assert_int_equal(ae("gzip", "x-gzip"), 1);
	assert_int_equal(ae("x-compress", "compress"), 1);
	assert_int_equal(ae("x-br", "br"), 0);
	assert_int_equal(ae("x-gzipx", "gzip"), 0);
	/* Listed twice: a refusal wins, whichever comes first. */
	assert_int_equal(ae("gzip, gzip;q=0", "gzip"), 0);
	assert_int_equal(ae("gzip;q=0, gzip;q=1", "gzip"), 0);
	assert_int_equal(ae("gzip, x-gzip;q=0", "gzip"), 0);
	assert_int_equal(ae("*, *;q=0", "br"), 0);
	assert_int_equal(ae("br;q=0.5, br", "br"), 1);
	/* A coding that is a prefix of another, or has one: different names. */
	assert_int_equal(ae("gz", "gzip"), 0);
	assert_int_equal(ae("gzipx", "gzip"), 0);
	assert_int_equal(ae("gzip-x, gzip2", "gzip"), 0);
	assert_int_equal(ae("gzip", "gz"), 0);
	assert_int_equal(ae("b, brotli", "br"), 0);
	assert_int_equal(ae("gz, gzip", "gzip"), 1);
	/* Empty elements. */
	assert_int_equal(ae(",gzip", "gzip"), 1);
	assert_int_equal(ae("gzip,", "gzip"), 1);
	assert_int_equal(ae(" , ,gzip , ,", "gzip"), 1);
	assert_int_equal(ae("br,,gzip;q=0.5", "gzip"), 1);
	assert_int_equal(ae(" , , ", "gzip"), 0);
	assert_int_equal(ae(",", "br"), 0);
	/* An empty value: nothing but identity. */
	assert_int_equal(ae("", "gzip"), 0);
	assert_int_equal(ae("", "br"), 0);
	assert_int_equal(ae("   ", "gzip"), 0);
	/* NULLs and an empty coding. */
	assert_int_equal(serve_accept_encoding(NULL, 0, "gzip"), 0);
	assert_int_equal(serve_accept_encoding(NULL, 4, "gzip"), 0);
	assert_int_equal(serve_accept_encoding("gzip", 4, NULL), 0);
	assert_int_equal(serve_accept_encoding("*", 1, ""), 0);
	/* @len bounds the value. */
	assert_int_equal(serve_accept_encoding("br, gzip", 2, "gzip"), 0);
	assert_int_equal(serve_accept_encoding("gzip;q=0", 4, "gzip"), 1);
	assert_int_equal(serve_accept_encoding("gzip", 2, "gzip"), 0);
	assert_int_equal(serve_accept_encoding("gzip;q=0.5", 9, "gzip"), 0); /* "q=0." */
}

static void test_accept_encoding_bad(void **state)
{
	static const char *bad[] = {
		"gzip;q=2",
		"gzip;q=0.1234",
		"gzip;q=abc",
		"gzip;q=",
		"gzip;q",
		"gzip;",
		"gzip; ",
		"gzip;=1",
		"gzip;q=1.001",
		"gzip;q=1.5",
		"gzip;q=1.010",
		"gzip;q=1.0000",
		"gzip;q=.5",
		"gzip;q=-0.5",
		"gzip;q=+1",
		"gzip;q=01",
		"gzip;q=0.5x",
		"gzip;q=0,5",
		"gzip;q=\"1\"",
		"gzip;qq=1",
		"gzip;level=9", /* the grammar has no other parameter */
		"gzip;q=1;level=9",
		"gzip;q=0.5;q=1", /* one weight */
		"gzip;;q=1",
		";q=1, gzip",
		"\"gzip\"",
		"gzip/1",
		"(gzip)",
		"gzip\x01",
		"gzip\xff",
		"gzip, br;q=2", /* the error after gzip still spoils the whole value */
		"gzip, br x",
		"gzip\r\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (ae(bad[i], "gzip") || ae(bad[i], "br"))
			fail_msg("\"%s\" accepted", bad[i]);
		/* Identity stays acceptable: the server's answer to a value it cannot read. */
		if (!ae(bad[i], "identity"))
			fail_msg("\"%s\" refused identity", bad[i]);
	}
	/* The same errors in the "*" element. */
	assert_int_equal(ae("*;q=2", "gzip"), 0);
	assert_int_equal(ae("*;q=", "br"), 0);
	assert_int_equal(ae("*;q=0.0001", "br"), 0);
}

static void test_accept_encoding_identity(void **state)
{
	(void)state;
	/* Acceptable unless refused by name, or by "*;q=0" without an entry of its own. */
	assert_int_equal(ae("", "identity"), 1);
	assert_int_equal(ae("gzip", "identity"), 1);
	assert_int_equal(ae("identity;q=0", "identity"), 0);
	assert_int_equal(ae("IDENTITY;q=0", "identity"), 0);
	assert_int_equal(ae("*;q=0", "identity"), 0);
	assert_int_equal(ae("*;q=0, identity", "identity"), 1);
	assert_int_equal(ae("identity;q=0, *", "identity"), 0);
	assert_int_equal(ae("identity;q=0.5", "identity"), 1);
	assert_int_equal(serve_accept_encoding(NULL, 0, "identity"), 1);
	/* Listed, identity is an entry like another for the other codings. */
	assert_int_equal(ae("identity", "gzip"), 0);
}

/* Every cut of valid values, each from a buffer of exactly its size. */
static void test_accept_encoding_cuts(void **state)
{
	/* "gzip;q=0.5, br" cut at 0 to 14 bytes: gzip's answers, br's. */
	static const char v[] = "gzip;q=0.5, br";
	static const char want_gzip[] = "000010000011111";
	static const char want_br[] = "000000000000001";
	static const char *valid[] = {
		"gzip, deflate, br, zstd",
		" X-GZIP ; Q=1.000 ,\t*;q=0.001 , br;q=0",
		"br;q=1.,gzip;q=0.,*;q=0.999,,identity;q=0",
		"*;q=0, gzip;q=0.01",
	};

	(void)state;
	assert_int_equal(sizeof(want_gzip), sizeof(v) + 1); /* one answer a cut, 0 to 14 */
	assert_int_equal(sizeof(want_br), sizeof(v) + 1);
	for (size_t n = 0; n < sizeof(v); n++) {
		if (ae_n(v, n, "gzip") != want_gzip[n] - '0')
			fail_msg("gzip, \"%.*s\": %d", (int)n, v, want_gzip[n] - '0');
		if (ae_n(v, n, "br") != want_br[n] - '0')
			fail_msg("br, \"%.*s\": %d", (int)n, v, want_br[n] - '0');
	}
	for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
		size_t len = strlen(valid[i]);

		for (size_t n = 0; n <= len; n++) {
			static const char *const codings[] = {"gzip", "br", "identity", "zstd"};

			for (size_t c = 0; c < 4; c++) /* the bytes past the cut change nothing */
				assert_int_equal(ae_n(valid[i], n, codings[c]),
						 serve_accept_encoding(valid[i], n, codings[c]));
		}
	}
	assert_int_equal(ae(valid[1], "gzip"), 1);
	assert_int_equal(ae(valid[1], "br"), 0);
	assert_int_equal(ae(valid[1], "zstd"), 1);
	assert_int_equal(ae(valid[2], "gzip"), 0);
	assert_int_equal(ae(valid[2], "br"), 1);
	assert_int_equal(ae(valid[2], "zstd"), 1);
	assert_int_equal(ae(valid[2], "identity"), 0);
	assert_int_equal(ae(valid[3], "gzip"), 1);
	assert_int_equal(ae(valid[3], "br"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_etag),
		cmocka_unit_test(test_date_format),
		cmocka_unit_test(test_date_random),
		cmocka_unit_test(test_date_forms),
		cmocka_unit_test(test_date_bad),
		cmocka_unit_test(test_if_none_match),
		cmocka_unit_test(test_if_modified_since),
		cmocka_unit_test(test_not_modified),
		cmocka_unit_test(test_if_match),
		cmocka_unit_test(test_if_unmodified_since),
		cmocka_unit_test(test_precondition_failed),
		cmocka_unit_test(test_range),
		cmocka_unit_test(test_range_edges),
		cmocka_unit_test(test_content_range),
		cmocka_unit_test(test_if_range),
		cmocka_unit_test(test_accept_encoding),
		cmocka_unit_test(test_accept_encoding_bad),
		cmocka_unit_test(test_accept_encoding_identity),
		cmocka_unit_test(test_accept_encoding_cuts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
