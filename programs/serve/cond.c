/* SPDX-License-Identifier: MIT */
/*
 * cond.c - giong-serve: ETag and Last-Modified, If-None-Match, If-Modified-Since, Range,
 * If-Range and Accept-Encoding, as pure functions over field values.
 */
#include "cond.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const char wday_short[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
static const char *const wday_long[7] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
					 "Thursday", "Friday", "Saturday"};
static const char month[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
				  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

/* 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z. */
#define DATE_MIN (-62135596800LL)
#define DATE_MAX 253402300799LL

static bool ows(char c)
{
	return c == ' ' || c == '\t';
}

/* @s/@len without leading and trailing spaces and tabs. */
static void trim(const char **s, size_t *len)
{
	while (*len && ows(**s))
		(*s)++, (*len)--;
	while (*len && ows((*s)[*len - 1]))
		(*len)--;
}

/* Lower-case hex of @v, no leading zeros, at @p; returns the digits written. */
static size_t hex64(char *p, uint64_t v)
{
	char tmp[16];
	size_t n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	for (size_t i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

int serve_etag(char *out, size_t cap, uint64_t size, int64_t mtime_sec, long mtime_nsec,
	       uint64_t ino)
{
	char tmp[SERVE_ETAG_MAX + 1];
	uint64_t ns = (uint64_t)mtime_sec * 1000000000u + (uint64_t)mtime_nsec;
	size_t n = 0;

	tmp[n++] = '"';
	n += hex64(tmp + n, size);
	tmp[n++] = '-';
	n += hex64(tmp + n, ns);
	tmp[n++] = '-';
	n += hex64(tmp + n, ino);
	tmp[n++] = '"';
	if (!out || cap < n + 1)
		return -ENOSPC;
	memcpy(out, tmp, n);
	out[n] = '\0';
	return (int)n;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

	return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;

	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static bool leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static unsigned mdays(int64_t y, unsigned m)
{
	static const unsigned char n[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

	return m == 2 && leap(y) ? 29 : n[m - 1];
}

int serve_http_date(int64_t t, char *out, size_t cap)
{
	int64_t days, secs, y;
	unsigned m, d, wd;

	if (t < DATE_MIN || t > DATE_MAX)
		return -ERANGE;
	if (!out || cap < SERVE_HTTP_DATE_LEN + 1)
		return -ENOSPC;
	days = t >= 0 ? t / 86400 : -((-t + 86399) / 86400);
	secs = t - days * 86400;
	civil_from_days(days, &y, &m, &d);
	wd = (unsigned)(days >= -4 ? (days + 4) % 7 : (days + 5) % 7 + 6);
	snprintf(out, cap, "%s, %02u %s %04d %02u:%02u:%02u GMT", wday_short[wd], d, month[m - 1],
		 (int)y, (unsigned)(secs / 3600), (unsigned)(secs / 60 % 60),
		 (unsigned)(secs % 60));
	return SERVE_HTTP_DATE_LEN;
}

/* @n decimal digits at @s; -1 if one is not a digit. */
static int digits(const char *s, size_t n)
{
	int v = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

static int month_of(const char *s)
{
	for (int i = 0; i < 12; i++)
		if (!memcmp(s, month[i], 3))
			return i + 1;
	return -1;
}

static bool short_day(const char *s)
{
	for (int i = 0; i < 7; i++)
		if (!memcmp(s, wday_short[i], 3))
			return true;
	return false;
}

/* "HH:MM:SS" at @s into seconds of the day; -1 if malformed or out of range. */
static int64_t time_of_day(const char *s)
{
	int h, m, sec;

	if (s[2] != ':' || s[5] != ':')
		return -1;
	h = digits(s, 2);
	m = digits(s + 3, 2);
	sec = digits(s + 6, 2);
	if (h < 0 || m < 0 || sec < 0 || h > 23 || m > 59 || sec > 60)
		return -1;
	return (int64_t)h * 3600 + m * 60 + sec;
}

static int make_time(int64_t y, int m, int d, int64_t tod, int64_t *t)
{
	if (y < 1 || y > 9999 || m < 1 || d < 1 || (unsigned)d > mdays(y, (unsigned)m) || tod < 0)
		return -EINVAL;
	*t = days_from_civil(y, (unsigned)m, (unsigned)d) * 86400 + tod;
	return 0;
}

/* The proleptic Gregorian year of @t (for RFC 850's two-digit years). */
static int64_t year_of(int64_t t)
{
	int64_t days = t >= 0 ? t / 86400 : -((-t + 86399) / 86400), y;
	unsigned m, d;

	if (t < DATE_MIN)
		return 1;
	if (t > DATE_MAX)
		return 9999;
	civil_from_days(days, &y, &m, &d);
	return y;
}

int serve_http_date_parse(const char *s, size_t len, int64_t now, int64_t *t)
{
	int64_t tod, y;
	int m, d;

	if (!s || !t)
		return -EINVAL;
	trim(&s, &len);
	if (len == 29 && s[3] == ',') { /* Sun, 06 Nov 1994 08:49:37 GMT */
		if (!short_day(s) || s[4] != ' ' || s[7] != ' ' || s[11] != ' ' || s[16] != ' ' ||
		    s[25] != ' ' || memcmp(s + 26, "GMT", 3))
			return -EINVAL;
		d = digits(s + 5, 2);
		m = month_of(s + 8);
		y = digits(s + 12, 4);
		tod = time_of_day(s + 17);
		return d < 0 ? -EINVAL : make_time(y, m, d, tod, t);
	}
	if (len == 24 && s[3] == ' ') { /* Sun Nov  6 08:49:37 1994 */
		if (!short_day(s) || s[7] != ' ' || s[10] != ' ' || s[19] != ' ')
			return -EINVAL;
		m = month_of(s + 4);
		d = s[8] == ' ' ? digits(s + 9, 1) : digits(s + 8, 2);
		tod = time_of_day(s + 11);
		y = digits(s + 20, 4);
		return d < 0 || y < 0 ? -EINVAL : make_time(y, m, d, tod, t);
	}
	/* Sunday, 06-Nov-94 08:49:37 GMT */
	for (int i = 0; i < 7; i++) {
		size_t n = strlen(wday_long[i]);
		const char *p = s + n;
		int64_t ny, cand;
		int yy;

		if (len != n + 24 || memcmp(s, wday_long[i], n))
			continue;
		if (p[0] != ',' || p[1] != ' ' || p[4] != '-' || p[8] != '-' || p[11] != ' ' ||
		    p[20] != ' ' || memcmp(p + 21, "GMT", 3))
			return -EINVAL;
		d = digits(p + 2, 2);
		m = month_of(p + 5);
		yy = digits(p + 9, 2);
		tod = time_of_day(p + 12);
		if (d < 0 || yy < 0)
			return -EINVAL;
		ny = year_of(now);
		cand = ny - ny % 100 + yy;
		if (cand > ny + 50)
			cand -= 100;
		return make_time(cand, m, d, tod, t);
	}
	return -EINVAL;
}

/* An entity-tag at *@p (before @end): [W/] DQUOTE *etagc DQUOTE. Sets the opaque-tag
 * (quotes included) and whether it was weak; advances *@p. */
static bool entity_tag(const char **p, const char *end, const char **tag, size_t *tag_len,
		       bool *weak)
{
	const char *s = *p;

	*weak = false;
	if (end - s >= 2 && s[0] == 'W' && s[1] == '/') {
		*weak = true;
		s += 2;
	}
	if (s == end || *s != '"')
		return false;
	*tag = s++;
	while (s < end && *s != '"') {
		unsigned char c = (unsigned char)*s;

		if (c < 0x21 || c == 0x7f) /* etagc: %x21 / %x23-7E / obs-text */
			return false;
		s++;
	}
	if (s == end)
		return false;
	s++;
	*tag_len = (size_t)(s - *tag);
	*p = s;
	return true;
}

/* Compare @value's list against @etag; @strong: the strong comparison. 1, 0 or -EINVAL. */
static int match_list(const char *value, size_t len, const char *etag, size_t etag_len, bool strong)
{
	const char *p = value, *end = value + len, *mine, *e = etag, *tag;
	size_t mine_len, tag_len;
	bool mine_weak, weak, any = false;
	int found = 0;

	if (!etag || !entity_tag(&e, etag + etag_len, &mine, &mine_len, &mine_weak) ||
	    e != etag + etag_len)
		return -EINVAL;
	while (p < end) {
		while (p < end && (ows(*p) || *p == ','))
			p++;
		if (p == end)
			break;
		if (!entity_tag(&p, end, &tag, &tag_len, &weak))
			return -EINVAL;
		any = true;
		if (tag_len == mine_len && !memcmp(tag, mine, tag_len) &&
		    (!strong || (!weak && !mine_weak)))
			found = 1;
		while (p < end && ows(*p))
			p++;
		if (p < end && *p != ',')
			return -EINVAL;
	}
	return any ? found : -EINVAL;
}

int serve_if_none_match(const char *value, size_t len, const char *etag, size_t etag_len)
{
	if (!value)
		return -EINVAL;
	trim(&value, &len);
	if (len == 1 && value[0] == '*')
		return 1;
	return match_list(value, len, etag, etag_len, false);
}

int serve_if_modified_since(const char *value, size_t len, int64_t mtime, int64_t now)
{
	int64_t t;

	if (!value || serve_http_date_parse(value, len, now, &t) < 0 || t > now)
		return 0;
	return mtime <= t;
}

int serve_if_match(const char *value, size_t len, const char *etag, size_t etag_len)
{
	if (!value)
		return -EINVAL;
	trim(&value, &len);
	if (len == 1 && value[0] == '*')
		return 1;
	return match_list(value, len, etag, etag_len, true);
}

int serve_if_unmodified_since(const char *value, size_t len, int64_t mtime, int64_t now)
{
	int64_t t;

	if (!value || serve_http_date_parse(value, len, now, &t) < 0)
		return -EINVAL;
	return mtime <= t;
}

int serve_precondition_failed(const char *im, size_t im_len, const char *ius, size_t ius_len,
			      const char *etag, size_t etag_len, int64_t mtime, int64_t now)
{
	if (im) {
		int r = serve_if_match(im, im_len, etag, etag_len);

		if (r >= 0)
			return !r;
	}
	if (ius && !im) {
		int r = serve_if_unmodified_since(ius, ius_len, mtime, now);

		if (r >= 0)
			return !r;
	}
	return 0;
}

int serve_not_modified(const char *inm, size_t inm_len, const char *ims, size_t ims_len,
		       const char *etag, size_t etag_len, int64_t mtime, int64_t now)
{
	if (inm) {
		int r = serve_if_none_match(inm, inm_len, etag, etag_len);

		if (r >= 0)
			return r;
	}
	return ims ? serve_if_modified_since(ims, ims_len, mtime, now) : 0;
}

/* Decimal digits at *@p (at least one), saturating at UINT64_MAX. */
static bool number(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;

	*v = 0;
	while (s < end && *s >= '0' && *s <= '9') {
		unsigned dgt = (unsigned)(*s - '0');

		*v = *v > (UINT64_MAX - dgt) / 10 ? UINT64_MAX : *v * 10 + dgt;
		s++;
	}
	if (s == *p)
		return false;
	*p = s;
	return true;
}

int serve_range_parse(const char *value, size_t len, uint64_t size, struct serve_range *r)
{
	const char *p, *end;
	uint64_t first = 0, last = UINT64_MAX, suffix = 0;
	bool have = false, is_suffix = false;

	if (!value || !r)
		return SERVE_RANGE_IGNORE;
	trim(&value, &len);
	p = value;
	end = value + len;
	if (len < 6 || (p[0] | 0x20) != 'b' || (p[1] | 0x20) != 'y' || (p[2] | 0x20) != 't' ||
	    (p[3] | 0x20) != 'e' || (p[4] | 0x20) != 's' || p[5] != '=')
		return SERVE_RANGE_IGNORE;
	p += 6;
	while (p < end) {
		while (p < end && (ows(*p) || *p == ','))
			p++;
		if (p == end)
			break;
		if (have)
			return SERVE_RANGE_IGNORE; /* several ranges: the whole file */
		have = true;
		if (*p == '-') {
			p++;
			is_suffix = true;
			if (!number(&p, end, &suffix))
				return SERVE_RANGE_IGNORE;
		} else {
			if (!number(&p, end, &first) || p == end || *p != '-')
				return SERVE_RANGE_IGNORE;
			p++;
			if (p < end && *p >= '0' && *p <= '9') {
				number(&p, end, &last);
				if (last < first)
					return SERVE_RANGE_IGNORE;
			}
		}
		while (p < end && ows(*p))
			p++;
		if (p < end && *p != ',')
			return SERVE_RANGE_IGNORE;
	}
	if (!have)
		return SERVE_RANGE_IGNORE;
	if (is_suffix) {
		if (suffix == 0)
			return SERVE_RANGE_UNSATISFIABLE;
		if (size == 0)
			return SERVE_RANGE_IGNORE;
		r->start = suffix >= size ? 0 : size - suffix;
		r->end = size - 1;
		return SERVE_RANGE_OK;
	}
	if (first >= size)
		return SERVE_RANGE_UNSATISFIABLE;
	r->start = first;
	r->end = last >= size ? size - 1 : last;
	return SERVE_RANGE_OK;
}

int serve_if_range(const char *value, size_t len, const char *etag, size_t etag_len, int64_t mtime,
		   int64_t now)
{
	int64_t t;

	if (!value)
		return 0;
	trim(&value, &len);
	if (len && (value[0] == '"' || (len >= 2 && value[0] == 'W' && value[1] == '/'))) {
		const char *p = value, *tag;
		size_t tag_len;
		bool weak;

		/* One entity-tag, not a list. */
		if (!entity_tag(&p, value + len, &tag, &tag_len, &weak) || p != value + len || weak)
			return 0;
		return match_list(value, len, etag, etag_len, true) == 1;
	}
	if (serve_http_date_parse(value, len, now, &t) < 0)
		return 0;
	return t == mtime && mtime < now;
}

int serve_content_range(char *out, size_t cap, const struct serve_range *r, uint64_t size)
{
	char tmp[SERVE_CONTENT_RANGE_MAX + 1];
	int n;

	if (r)
		n = snprintf(tmp, sizeof(tmp), "bytes %llu-%llu/%llu", (unsigned long long)r->start,
			     (unsigned long long)r->end, (unsigned long long)size);
	else
		n = snprintf(tmp, sizeof(tmp), "bytes */%llu", (unsigned long long)size);
	if (!out || n < 0 || (size_t)n + 1 > cap)
		return -ENOSPC;
	memcpy(out, tmp, (size_t)n + 1);
	return n;
}

/* RFC 9110 5.6.2: tchar, what a token (a coding's name) is made of. */
static bool tchar(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c + ('a' - 'A')) : c;
}

/* Are @a (@an bytes) and @b (@bn bytes) the same name, ignoring ASCII case? */
static bool same_name(const char *a, size_t an, const char *b, size_t bn)
{
	if (an != bn)
		return false;
	for (size_t i = 0; i < an; i++)
		if (lower(a[i]) != lower(b[i]))
			return false;
	return true;
}

/* The two names RFC 9110 8.4.1 keeps as aliases, "x-gzip" and "x-compress", without "x-". */
static void coding_alias(const char **s, size_t *n)
{
	if (same_name(*s, *n, "x-gzip", 6) || same_name(*s, *n, "x-compress", 10)) {
		*s += 2;
		*n -= 2;
	}
}

/*
 * A qvalue (RFC 9110 12.4.2) at *@p, before @end: "0" ["." 0*3DIGIT] or "1" ["." 0*3"0"].
 * Advances *@p past it; returns 1 when it is above 0, 0 when it is 0, -1 when malformed. A
 * fourth decimal is left for the caller, to whom it is a byte where a comma belongs.
 */
static int qvalue(const char **p, const char *end)
{
	const char *s = *p;
	bool one, above = false;

	if (s == end || (*s != '0' && *s != '1'))
		return -1;
	one = *s++ == '1';
	if (s < end && *s == '.') {
		s++;
		for (int i = 0; i < 3 && s < end && *s >= '0' && *s <= '9'; i++, s++) {
			if (*s == '0')
				continue;
			if (one) /* 1.001 and over */
				return -1;
			above = true;
		}
	}
	*p = s;
	return one || above;
}

int serve_accept_encoding(const char *value, size_t len, const char *coding)
{
	const char *p, *end, *want = coding;
	size_t want_len;
	/* What the entries for @coding and for "*" said: -1 nothing yet, 0 refused, 1 accepted. */
	int mine = -1, star = -1, identity;

	if (!coding || !*coding)
		return 0;
	want_len = strlen(coding);
	coding_alias(&want, &want_len);
	/* What a value we cannot use, or that lists neither @coding nor "*", leaves. */
	identity = same_name(want, want_len, "identity", 8);
	if (!value)
		return identity;
	p = value;
	end = value + len;
	while (p < end) {
		const char *name;
		size_t n;
		int q = 1;

		while (p < end && (ows(*p) || *p == ','))
			p++;
		if (p == end)
			break;
		for (name = p; p < end && tchar(*p); p++)
			;
		n = (size_t)(p - name);
		if (!n)
			return identity;
		while (p < end && ows(*p))
			p++;
		if (p < end && *p == ';') {
			p++;
			while (p < end && ows(*p))
				p++;
			if (end - p < 2 || lower(p[0]) != 'q' || p[1] != '=')
				return identity;
			p += 2;
			q = qvalue(&p, end);
			if (q < 0)
				return identity;
			while (p < end && ows(*p))
				p++;
		}
		if (p < end && *p != ',')
			return identity;
		coding_alias(&name, &n);
		/* Listed twice: a refusal wins (the header says why). */
		if (n == 1 && name[0] == '*')
			star = star == 0 ? 0 : q;
		else if (same_name(name, n, want, want_len))
			mine = mine == 0 ? 0 : q;
	}
	if (mine >= 0)
		return mine;
	if (star >= 0)
		return star;
	return identity;
}
