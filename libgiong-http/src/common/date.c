/* SPDX-License-Identifier: MIT */
/*
 * date.c - IMF-fixdate without strftime (whose output follows the locale)
 * and without gmtime_r per request: the civil date comes from the day count
 * by Howard Hinnant's days-to-civil algorithm, and each thread keeps the
 * value of its current second.
 */
#include <stdint.h>
#include <string.h>

#include <giong/core/time.h>

#include "common/date.h"

static void put2(char *p, unsigned v)
{
	p[0] = (char)('0' + v / 10 % 10);
	p[1] = (char)('0' + v % 10);
}

void giong__http_date_format(time_t t, char out[GIONG__HTTP_DATE_LEN])
{
	static const char wday[7][4] = {"Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"};
	static const char mon[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
					"Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
	int64_t s = (int64_t)t, days = s / 86400, secs = s % 86400;

	if (secs < 0) {
		secs += 86400;
		days--;
	}
	/* 1970-01-01 was a Thursday. */
	unsigned wd = (unsigned)(((days % 7) + 7) % 7);
	/* days to civil (proleptic Gregorian), eras of 400 years from 0000-03-01 */
	int64_t z = days + 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t y = (int64_t)yoe + era * 400;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	unsigned d = doy - (153 * mp + 2) / 5 + 1;
	unsigned m = mp < 10 ? mp + 3 : mp - 9;

	if (m <= 2)
		y++;
	if (y < 0 || y > 9999)
		y = y < 0 ? 0 : 9999; /* IMF-fixdate has four digits; clamp, never overflow */
	memcpy(out, wday[wd], 3);
	out[3] = ',';
	out[4] = ' ';
	put2(out + 5, d);
	out[7] = ' ';
	memcpy(out + 8, mon[m - 1], 3);
	out[11] = ' ';
	put2(out + 12, (unsigned)(y / 100));
	put2(out + 14, (unsigned)(y % 100));
	out[16] = ' ';
	put2(out + 17, (unsigned)(secs / 3600));
	out[19] = ':';
	put2(out + 20, (unsigned)(secs / 60 % 60));
	out[22] = ':';
	put2(out + 23, (unsigned)(secs % 60));
	memcpy(out + 25, " GMT", 4);
}

/* The calling thread's Date: its second, and the field line holding the
 * value (one thread-local object: one TLS lookup). */
struct date_cache {
	time_t second;
	uint64_t tick; /* giong_now_ms() when last checked */
	char line[GIONG__HTTP_DATE_LINE_LEN];
};

static __thread struct date_cache date_cache = {.second = -1};

static struct date_cache *date_fresh(void)
{
	struct date_cache *d = &date_cache;
	uint64_t tick = giong_now_ms();
	struct timespec ts;

	/* Within one tick of the worker (giong_now_ms() is cached per tick),
	 * the second is the one already read: the many responses of a tick
	 * read no clock at all. */
	if (tick == d->tick && d->second >= 0)
		return d;
	d->tick = tick;
	/* CLOCK_REALTIME_COARSE: a vDSO read of the last tick, no system call;
	 * its few-millisecond lag is far inside the header's one-second grain. */
	clock_gettime(CLOCK_REALTIME_COARSE, &ts);
	if (ts.tv_sec != d->second) {
		memcpy(d->line, "Date: ", 6);
		giong__http_date_format(ts.tv_sec, d->line + 6);
		memcpy(d->line + 6 + GIONG__HTTP_DATE_LEN, "\r\n", 2);
		d->second = ts.tv_sec;
	}
	return d;
}

const char *giong__http_date_now(void)
{
	return date_fresh()->line + 6;
}

const char *giong__http_date_line(void)
{
	return date_fresh()->line;
}
