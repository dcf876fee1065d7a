/* SPDX-License-Identifier: MIT */
/*
 * date.c - IMF-fixdate without strftime (whose output follows the locale)
 * and without gmtime_r per request: the civil date comes from the day count
 * by Howard Hinnant's days-to-civil algorithm, and each thread keeps the
 * value of its current second.
 */
#include <stdint.h>
#include <string.h>

#include "date.h"

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

const char *giong__http_date_now(void)
{
	static __thread char value[GIONG__HTTP_DATE_LEN];
	static __thread time_t second = -1;
	struct timespec ts;

	/* CLOCK_REALTIME_COARSE: a vDSO read of the last tick, no system call;
	 * its few-millisecond lag is far inside the header's one-second grain. */
	clock_gettime(CLOCK_REALTIME_COARSE, &ts);
	if (ts.tv_sec != second) {
		giong__http_date_format(ts.tv_sec, value);
		second = ts.tv_sec;
	}
	return value;
}
