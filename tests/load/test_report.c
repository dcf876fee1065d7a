/* SPDX-License-Identifier: MIT */
/* test_report.c - giong-load's summary: the human report and the JSON object byte for byte
 * for known figures, units at their boundaries, an empty run, the largest figures, strings
 * escaped (quotes, controls, UTF-8 kept, ill-formed bytes replaced), every JSON output checked
 * by a small RFC 8259 validator of the test's own, and buffers of every small size: nothing
 * written past @cap, always NUL-terminated, the full length returned. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report.h"

static struct load_hist h;
static struct load_totals t, t2;
static char out[1 << 17], out2[1 << 17];

/* ---- a JSON validator (RFC 8259), independent of report.c's writer --------------------- */

struct jp {
	const unsigned char *s;
	size_t n, i;
};

static void jws(struct jp *p)
{
	while (p->i < p->n && strchr(" \t\r\n", p->s[p->i]) && p->s[p->i])
		p->i++;
}

static bool jlit(struct jp *p, const char *lit)
{
	size_t l = strlen(lit);

	if (p->n - p->i < l || memcmp(p->s + p->i, lit, l))
		return false;
	p->i += l;
	return true;
}

static bool jdigits(struct jp *p)
{
	size_t start = p->i;

	while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
		p->i++;
	return p->i > start;
}

static bool jnumber(struct jp *p)
{
	if (p->i < p->n && p->s[p->i] == '-')
		p->i++;
	if (p->i < p->n && p->s[p->i] == '0')
		p->i++;
	else if (!(p->i < p->n && p->s[p->i] >= '1' && p->s[p->i] <= '9') || !jdigits(p))
		return false;
	if (p->i < p->n && p->s[p->i] == '.') {
		p->i++;
		if (!jdigits(p))
			return false;
	}
	if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
		p->i++;
		if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-'))
			p->i++;
		if (!jdigits(p))
			return false;
	}
	return true;
}

/* One UTF-8 character by its code point: no overlong form, no surrogate, <= U+10FFFF. */
static bool jutf8(struct jp *p)
{
	unsigned c = p->s[p->i], n, cp;
	static const unsigned min[5] = {0, 0, 0x80, 0x800, 0x10000};

	n = c >= 0xf0 && c < 0xf8 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 && c < 0xe0 ? 2 : 0;
	if (!n || p->n - p->i < n)
		return false;
	cp = c & (0x7f >> n);
	for (unsigned k = 1; k < n; k++) {
		if ((p->s[p->i + k] & 0xc0) != 0x80)
			return false;
		cp = cp << 6 | (p->s[p->i + k] & 0x3f);
	}
	if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return false;
	p->i += n;
	return true;
}

static bool jstring(struct jp *p)
{
	if (!jlit(p, "\""))
		return false;
	while (p->i < p->n) {
		unsigned char c = p->s[p->i];

		if (c == '"') {
			p->i++;
			return true;
		}
		if (c < 0x20)
			return false;
		if (c == '\\') {
			p->i++;
			if (p->i >= p->n)
				return false;
			c = p->s[p->i++];
			if (c == 'u') {
				for (int k = 0; k < 4; k++, p->i++)
					if (p->i >= p->n ||
					    !strchr("0123456789abcdefABCDEF", p->s[p->i]) ||
					    !p->s[p->i])
						return false;
			} else if (!strchr("\"\\/bfnrt", c) || !c) {
				return false;
			}
		} else if (c < 0x80) {
			p->i++;
		} else if (!jutf8(p)) {
			return false;
		}
	}
	return false;
}

static bool jvalue(struct jp *p, int depth);

static bool jcontainer(struct jp *p, int depth, char open, char close, bool keys)
{
	p->i++; /* the opening bracket */
	jws(p);
	if (p->i < p->n && p->s[p->i] == close) {
		p->i++;
		return true;
	}
	while (1) {
		if (keys) {
			if (!jstring(p))
				return false;
			jws(p);
			if (!jlit(p, ":"))
				return false;
		}
		if (!jvalue(p, depth + 1))
			return false;
		jws(p);
		if (p->i < p->n && p->s[p->i] == ',') {
			p->i++;
			jws(p);
			continue;
		}
		(void)open;
		return p->i < p->n && p->s[p->i++] == close;
	}
}

static bool jvalue(struct jp *p, int depth)
{
	jws(p);
	if (p->i >= p->n || depth > 64)
		return false;
	switch (p->s[p->i]) {
	case '{':
		return jcontainer(p, depth, '{', '}', true);
	case '[':
		return jcontainer(p, depth, '[', ']', false);
	case '"':
		return jstring(p);
	case 't':
		return jlit(p, "true");
	case 'f':
		return jlit(p, "false");
	case 'n':
		return jlit(p, "null");
	default:
		return jnumber(p);
	}
}

/* Is @s (@n bytes) one JSON object and nothing else but white space? */
static bool json_valid(const char *s, size_t n)
{
	struct jp p = {(const unsigned char *)s, n, 0};

	jws(&p);
	if (p.i >= n || s[p.i] != '{' || !jvalue(&p, 0))
		return false;
	jws(&p);
	return p.i == n;
}

static void test_validator(void **state)
{
	static const char *const good[] = {
		"{}",
		" {\"a\":[1,-0.5,2e10,true,false,null,\"\\u00e9\\n\"]}\n",
		"{\"\xc3\xa9\":{}}",
		"{\"a\":\"\xf0\x9f\x98\x80\"}",
	};
	static const char *const bad[] = {
		"",
		"[]",
		"{",
		"{\"a\":}",
		"{\"a\":01}",
		"{\"a\":1.}",
		"{\"a\":nan}",
		"{\"a\":inf}",
		"{\"a\":1,}",
		"{\"a\":\"\x01\"}",
		"{\"a\":\"\\x\"}",
		"{\"a\":\"\xff\"}",
		"{\"a\":\"\xc0\xaf\"}",
		"{\"a\":\"\xed\xa0\x80\"}",
		"{\"a\":\"\xf4\x90\x80\x80\"}",
		"{} {}",
		"{\"a\":\"\\u12\"}",
		"{a:1}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_true(json_valid(good[i], strlen(good[i])));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (json_valid(bad[i], strlen(bad[i])))
			fail_msg("accepted: %s", bad[i]);
}

/* ---- the reports ---------------------------------------------------------------------- */

static const struct load_run run = {
	.url = "http://127.0.0.1:8080/",
	.method = "GET",
	.conns = 100,
	.workers = 2,
	.depth = 1,
	.rate = 0,
	.latency = true,
};

/* 1000 latencies: 900 of 100 us, 90 of 1 ms, 9 of 10 ms, one of 100 ms; 10 s, 123456
 * responses (56 of them 404), 12345678 bytes. */
static void fixture(void)
{
	load_hist_init(&h);
	load_hist_record_n(&h, 100000, 900);
	load_hist_record_n(&h, 1000000, 90);
	load_hist_record_n(&h, 10000000, 9);
	load_hist_record(&h, 100000000);
	memset(&t, 0, sizeof(t));
	t.duration_ns = 10000000000ull;
	t.requests = 123456;
	t.bytes = 12345678;
	t.status[200 - LOAD_STATUS_MIN] = 123400;
	t.status[404 - LOAD_STATUS_MIN] = 56;
	t.errors[LOAD_ERR_STATUS] = 56;
}

static void test_text(void **state)
{
	/*
	 * p50 and p90: 100000's bucket is [99840, 100351]; p99: 1000000's is [999424, 1003519];
	 * p99.9: 10000000's is [9961472, 10027007]; max exact. The mean is of the buckets'
	 * middles, 370043.904 (exact: 370000).
	 */
	static const char want[] =
		"  Protocol: http/1.1\n"
		"                   Avg      Stdev        Max\n"
		"  Latency     370.04us     3.29ms   100.00ms\n"
		"  Latency Distribution\n"
		"      50%   100.35us\n"
		"      90%   100.35us\n"
		"      99%     1.00ms\n"
		"    99.9%    10.03ms\n"
		"      max   100.00ms\n"
		"  123456 requests in 10.00s, 11.77MB read\n"
		"  Status codes: 200 123400, 404 56\n"
		"  Errors: connect 0, read 0, write 0, timeout 0, status 56, length 0\n"
		"Requests/sec:     12345.60\n"
		"Transfer/sec:       1.18MB\n";
	struct load_run r = run;

	(void)state;
	fixture();
	assert_int_equal(load_report_text(out, sizeof(out), &run, &t, &h), strlen(want));
	assert_string_equal(out, want);
	/* Without --latency, no table; paced, a line that says where latency counts from. */
	r.latency = false;
	r.rate = 20000;
	load_report_text(out, sizeof(out), &r, &t, &h);
	assert_null(strstr(out, "Distribution"));
	assert_non_null(strstr(out, "  Latency     370.04us     3.29ms   100.00ms\n"
				    "  Paced at 20000 requests/s: latency counts from each "
				    "request's due time\n  123456 requests"));
	/* HTTP/2 (--h2): the protocol and its streams, first, in both reports. */
	r.protocol = "h2c";
	r.streams = 10;
	load_report_text(out, sizeof(out), &r, &t, &h);
	assert_memory_equal(
		out, "  Protocol: h2c, 10 streams per connection\n                   Avg", 65);
	load_report_json(out, sizeof(out), &r, &t, &h);
	assert_non_null(strstr(out, ",\"depth\":1,\"protocol\":\"h2c\",\"streams\":10,\"rate\":"));
	r.streams = 1;
	load_report_text(out, sizeof(out), &r, &t, &h);
	assert_memory_equal(out, "  Protocol: h2c, 1 stream per connection\n", 41);
}

static void test_json(void **state)
{
	static const char want[] =
		"{\"url\":\"http://127.0.0.1:8080/\",\"method\":\"GET\",\"connections\":100,"
		"\"workers\":2,\"depth\":1,\"protocol\":\"http/1.1\",\"streams\":1,\"rate\":0,"
		"\"duration_ns\":10000000000,"
		"\"requests\":123456,\"bytes\":12345678,\"requests_per_sec\":12345.600,"
		"\"bytes_per_sec\":1234567.800,\"latency_ns\":{\"count\":1000,\"min\":100000,"
		"\"mean\":370044,\"stdev\":3291915,\"max\":100000000,\"p50\":100351,"
		"\"p90\":100351,\"p99\":1003519,\"p99.9\":10027007,\"clamped\":0},"
		"\"status\":{\"200\":123400,\"404\":56},\"errors\":{\"connect\":0,\"read\":0,"
		"\"write\":0,\"timeout\":0,\"status\":56,\"length\":0}}\n";
	int n;

	(void)state;
	fixture();
	n = load_report_json(out, sizeof(out), &run, &t, &h);
	assert_int_equal(n, strlen(want));
	assert_string_equal(out, want);
	assert_true(json_valid(out, (size_t)n));
}

/* Nothing measured: no NaN from 0/0, no division by a zero duration, valid JSON. */
static void test_empty(void **state)
{
	static const char want_text[] = "  Protocol: http/1.1\n"
					"  Latency: no responses\n"
					"  0 requests in 0ns, 0B read\n"
					"Requests/sec:         0.00\n"
					"Transfer/sec:           0B\n";
	static const char want_json[] =
		"{\"url\":\"\",\"method\":\"GET\",\"connections\":0,\"workers\":0,\"depth\":0,"
		"\"protocol\":\"http/1.1\",\"streams\":1,\"rate\":0,\"duration_ns\":0,\"requests\":0,\"bytes\":0,\"requests_per_sec\":0.000,"
		"\"bytes_per_sec\":0.000,\"latency_ns\":{\"count\":0,\"min\":0,\"mean\":0,"
		"\"stdev\":0,\"max\":0,\"p50\":0,\"p90\":0,\"p99\":0,\"p99.9\":0,\"clamped\":0},"
		"\"status\":{},\"errors\":{\"connect\":0,\"read\":0,\"write\":0,\"timeout\":0,"
		"\"status\":0,\"length\":0}}\n";
	struct load_run r = {0};

	(void)state;
	memset(&t, 0, sizeof(t));
	load_hist_init(&h);
	r.latency = true;
	assert_int_equal(load_report_text(out, sizeof(out), &r, &t, &h), strlen(want_text));
	assert_string_equal(out, want_text);
	assert_int_equal(load_report_text(out, sizeof(out), &r, &t, NULL), strlen(want_text));
	assert_string_equal(out, want_text);
	assert_int_equal(load_report_json(out, sizeof(out), &r, &t, &h), strlen(want_json));
	assert_string_equal(out, want_json);
	assert_int_equal(load_report_json(out, sizeof(out), &r, &t, NULL), strlen(want_json));
	assert_string_equal(out, want_json);
}

/* The text after @prefix on the line that starts with it, up to its end. */
static const char *line_after(const char *s, const char *prefix, char *buf, size_t cap)
{
	const char *p = strstr(s, prefix), *e;

	assert_non_null(p);
	p += strlen(prefix);
	e = strchr(p, '\n');
	assert_non_null(e);
	assert_true((size_t)(e - p) < cap);
	memcpy(buf, p, (size_t)(e - p));
	buf[e - p] = '\0';
	return buf;
}

/* A latency of @v alone, as the report's Max column shows it. */
static void time_is(uint64_t v, const char *want)
{
	char line[128], avg[32], sd[32], max[32];

	load_hist_init(&h);
	load_hist_record(&h, v);
	memset(&t, 0, sizeof(t));
	load_report_text(out, sizeof(out), &run, &t, &h);
	assert_int_equal(sscanf(line_after(out, "  Latency ", line, sizeof(line)), "%31s %31s %31s",
				avg, sd, max),
			 3);
	assert_string_equal(avg, want); /* the mean of one value is the value */
	assert_string_equal(sd, "0ns");
	assert_string_equal(max, want);
}

/* @b bytes read, as the report shows them. */
static void bytes_is(uint64_t b, const char *want)
{
	char line[128], got[32];

	memset(&t, 0, sizeof(t));
	t.bytes = b;
	load_report_text(out, sizeof(out), &run, &t, NULL);
	assert_int_equal(
		sscanf(line_after(out, " requests in 0ns, ", line, sizeof(line)), "%31s", got), 1);
	assert_string_equal(got, want);
}

static void test_units(void **state)
{
	(void)state;
	time_is(0, "0ns");
	time_is(999, "999ns");
	time_is(1000, "1.00us");
	time_is(12345, "12.35us");
	time_is(999994, "999.99us");
	time_is(999995, "1.00ms");
	time_is(999994999, "999.99ms");
	time_is(999995000, "1.00s");
	time_is(LOAD_HIST_MAX, "1099.51s");
	bytes_is(0, "0B");
	bytes_is(1023, "1023B");
	bytes_is(1024, "1.00KB");
	bytes_is(1536, "1.50KB");
	bytes_is(1048570, "1023.99KB");
	bytes_is(1048571, "1.00MB");
	bytes_is(1073741824, "1.00GB");
	bytes_is(1099511627776ull, "1.00TB");
	bytes_is(UINT64_MAX, "16777216.00TB");
}

/* Strings in JSON: quotes, backslashes and controls escaped; UTF-8 kept; each byte of an
 * ill-formed sequence (a bad lead byte, an overlong form, a surrogate, past U+10FFFF, cut
 * short) replaced by U+FFFD. */
static void test_escape(void **state)
{
	struct load_run r = run;
	char want[512];
	int n;

	(void)state;
	fixture();
	r.url = "a\"b\\c\n\x01\x1f\x7f /\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 \xff \xc0\xaf "
		"\xed\xa0\x80 \xf4\x90\x80\x80 \xe2\x82";
	r.method = "P\tOST";
	n = load_report_json(out, sizeof(out), &r, &t, &h);
	assert_true(json_valid(out, (size_t)n));
	snprintf(want, sizeof(want), "%s",
		 "{\"url\":\"a\\\"b\\\\c\\u000a\\u0001\\u001f\x7f /\xc3\xa9\xe2\x82\xac"
		 "\xf0\x9f\x98\x80 \\ufffd \\ufffd\\ufffd \\ufffd\\ufffd\\ufffd "
		 "\\ufffd\\ufffd\\ufffd\\ufffd \\ufffd\\ufffd\",\"method\":\"P\\u0009OST\",");
	assert_memory_equal(out, want, strlen(want));
	/* Every byte value in a URL still gives valid JSON. */
	char url[256 * 3 + 1];
	size_t k = 0;

	for (unsigned c = 1; c < 256; c++) {
		url[k++] = (char)c;
		if (c >= 0x80) /* and after each high byte, a continuation: some pairs are valid */
			url[k++] = (char)(0x80 | (c & 0x3f));
	}
	url[k] = '\0';
	r.url = url;
	n = load_report_json(out, sizeof(out), &r, &t, &h);
	assert_true(json_valid(out, (size_t)n));
}

/* The largest figures: every status code, every counter at 2^64 - 1, clamped latencies, a
 * long URL. Still valid JSON, and the text and the buffer sizes hold. */
static void biggest(struct load_run *r, char *url, size_t len)
{
	for (size_t i = 0; i < len; i++)
		url[i] = (char)(1 + i % 255);
	url[len] = '\0';
	*r = run;
	r->url = url;
	r->rate = UINT64_MAX;
	r->conns = r->workers = r->depth = UINT32_MAX;
	load_hist_init(&h);
	load_hist_record_n(&h, UINT64_MAX, 3);
	load_hist_record(&h, 0);
	t.duration_ns = 1;
	t.requests = t.bytes = UINT64_MAX;
	for (unsigned i = 0; i < LOAD_STATUS_COUNT; i++)
		t.status[i] = UINT64_MAX;
	for (unsigned i = 0; i < LOAD_ERR_COUNT; i++)
		t.errors[i] = UINT64_MAX;
}

static void test_biggest(void **state)
{
	static char url[10001];
	struct load_run r;
	int n;

	(void)state;
	biggest(&r, url, sizeof(url) - 1);
	n = load_report_json(out, sizeof(out), &r, &t, &h);
	assert_true(n > 0 && (size_t)n < sizeof(out));
	assert_true(json_valid(out, (size_t)n));
	assert_non_null(strstr(out, "\"599\":18446744073709551615}"));
	assert_non_null(strstr(out, "\"clamped\":3}"));
	n = load_report_text(out, sizeof(out), &r, &t, &h);
	assert_true(n > 0 && (size_t)n < sizeof(out));
	assert_non_null(strstr(out, "3 latencies above 1099.51s counted as 1099.51s\n"));
	assert_non_null(strstr(out, ", 599 18446744073709551615\n"));
}

typedef int report_fn(char *buf, size_t cap, const struct load_run *run,
		      const struct load_totals *t, const struct load_hist *h);

/* Into a buffer of @cap bytes (with guard bytes after it): never past @cap, NUL-terminated,
 * the prefix of the whole report, and the whole length returned. */
static void bounded(report_fn *fn, const struct load_run *r, const char *full, size_t len,
		    size_t cap)
{
	char *buf = malloc(cap + 16);

	assert_non_null(buf);
	memset(buf, 0x5a, cap + 16);
	assert_int_equal(fn(buf, cap, r, &t, &h), len);
	for (size_t i = cap; i < cap + 16; i++)
		assert_int_equal((unsigned char)buf[i], 0x5a);
	if (cap) {
		size_t k = len < cap - 1 ? len : cap - 1;

		assert_int_equal(strlen(buf), k);
		assert_memory_equal(buf, full, k);
	}
	free(buf);
}

static void test_small_buffers(void **state)
{
	static char url[3001];
	report_fn *fns[] = {load_report_text, load_report_json};
	struct load_run r;

	(void)state;
	for (int big = 0; big < 2; big++) {
		if (big) {
			biggest(&r, url, sizeof(url) - 1);
		} else {
			r = run;
			fixture();
		}
		for (size_t f = 0; f < 2; f++) {
			size_t len = (size_t)fns[f](out, sizeof(out), &r, &t, &h);

			assert_true(len > 0 && len < sizeof(out));
			assert_int_equal(fns[f](NULL, 0, &r, &t, &h), len);
			assert_int_equal(fns[f](NULL, 100, &r, &t, &h), len); /* NULL: no room */
			for (size_t cap = 0; cap <= (big ? 600 : len + 2); cap++)
				bounded(fns[f], &r, out, len, cap);
			for (size_t cap = len - 3; cap <= len + 3; cap++)
				bounded(fns[f], &r, out, len, cap);
			for (size_t cap = 600; cap < len; cap += 997)
				bounded(fns[f], &r, out, len, cap);
		}
	}
}

/* The FILE variants write what the buffer ones do; a failing stream is -EIO. */
static void test_file(void **state)
{
	char *mem = NULL;
	size_t size = 0;
	FILE *f;
	int n, m;

	(void)state;
	fixture();
	for (int json = 0; json < 2; json++) {
		f = open_memstream(&mem, &size);
		assert_non_null(f);
		n = json ? load_report_json_file(f, &run, &t, &h)
			 : load_report_text_file(f, &run, &t, &h);
		assert_int_equal(fclose(f), 0);
		m = json ? load_report_json(out2, sizeof(out2), &run, &t, &h)
			 : load_report_text(out2, sizeof(out2), &run, &t, &h);
		assert_int_equal(n, m);
		assert_int_equal(size, (size_t)m);
		assert_memory_equal(mem, out2, size);
		free(mem);
		mem = NULL;
	}
	f = fopen("/dev/full", "w");
	if (f) {
		setvbuf(f, NULL, _IONBF, 0);
		assert_int_equal(load_report_text_file(f, &run, &t, &h), -EIO);
		assert_int_equal(load_report_json_file(f, &run, &t, &h), -EIO);
		fclose(f);
	}
}

static void test_totals(void **state)
{
	(void)state;
	memset(&t, 0, sizeof(t));
	memset(&t2, 0, sizeof(t2));
	t.duration_ns = 5;
	t.requests = 1;
	t.status[0] = 2;
	t.errors[LOAD_ERR_TIMEOUT] = 3;
	t2.duration_ns = 7;
	t2.requests = 10;
	t2.bytes = 100;
	t2.status[0] = 20;
	t2.status[LOAD_STATUS_COUNT - 1] = 4;
	t2.errors[LOAD_ERR_TIMEOUT] = 30;
	load_totals_add(&t, &t2);
	assert_int_equal(t.duration_ns, 7);
	assert_int_equal(t.requests, 11);
	assert_int_equal(t.bytes, 100);
	assert_int_equal(t.status[0], 22);
	assert_int_equal(t.status[LOAD_STATUS_COUNT - 1], 4);
	assert_int_equal(t.errors[LOAD_ERR_TIMEOUT], 33);
	assert_string_equal(load_err_name(LOAD_ERR_CONNECT), "connect");
	assert_string_equal(load_err_name(LOAD_ERR_LENGTH), "length");
	assert_string_equal(load_err_name(LOAD_ERR_COUNT), "?");
	assert_string_equal(load_err_name((enum load_err) - 1), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validator), cmocka_unit_test(test_text),
		cmocka_unit_test(test_json),      cmocka_unit_test(test_empty),
		cmocka_unit_test(test_units),     cmocka_unit_test(test_escape),
		cmocka_unit_test(test_biggest),   cmocka_unit_test(test_small_buffers),
		cmocka_unit_test(test_file),      cmocka_unit_test(test_totals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
