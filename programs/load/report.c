/* SPDX-License-Identifier: MIT */
/*
 * report.c - giong-load's summary: the human report and the JSON object, written through
 * one small sink that is either a bounded buffer (snprintf's contract) or a FILE.
 */
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

static const char *const err_names[LOAD_ERR_COUNT] = {
	[LOAD_ERR_CONNECT] = "connect", [LOAD_ERR_READ] = "read",     [LOAD_ERR_WRITE] = "write",
	[LOAD_ERR_TIMEOUT] = "timeout", [LOAD_ERR_STATUS] = "status", [LOAD_ERR_LENGTH] = "length",
};

/* The percentiles both reports show, and their JSON names. */
static const struct {
	double p;
	const char *label; /* human */
	const char *key;   /* JSON */
} pcts[] = {
	{50, "50%", "p50"},
	{90, "90%", "p90"},
	{99, "99%", "p99"},
	{99.9, "99.9%", "p99.9"},
};

const char *load_err_name(enum load_err e)
{
	return (unsigned)e < LOAD_ERR_COUNT ? err_names[e] : "?";
}

void load_totals_add(struct load_totals *dst, const struct load_totals *src)
{
	if (src->duration_ns > dst->duration_ns)
		dst->duration_ns = src->duration_ns;
	dst->requests += src->requests;
	dst->bytes += src->bytes;
	for (unsigned i = 0; i < LOAD_STATUS_COUNT; i++)
		dst->status[i] += src->status[i];
	for (unsigned i = 0; i < LOAD_ERR_COUNT; i++)
		dst->errors[i] += src->errors[i];
}

/*
 * Where a report goes: @f when set, else @buf (@cap bytes). @len counts every byte the report
 * has, also those that did not fit, as snprintf() does.
 */
struct sink {
	char *buf;
	size_t cap;
	size_t len;
	FILE *f;
	bool err;
};

static void put_bytes(struct sink *o, const char *s, size_t n)
{
	if (o->f) {
		if (fwrite(s, 1, n, o->f) != n)
			o->err = true;
	} else if (o->len + 1 < o->cap) {
		size_t room = o->cap - 1 - o->len;
		size_t k = n < room ? n : room;

		memcpy(o->buf + o->len, s, k);
		o->buf[o->len + k] = '\0';
	}
	o->len += n;
}

__attribute__((format(printf, 2, 3))) static void put(struct sink *o, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	/* Every format here is short (numbers and fixed words); strings go through put_bytes(). */
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		o->err = true;
		return;
	}
	put_bytes(o, tmp, (size_t)n);
}

static void put_str(struct sink *o, const char *s)
{
	put_bytes(o, s, strlen(s));
}

/* @ns as "123ns", "12.34us", "1.23ms" or "1.23s", the unit chosen after rounding. */
static void fmt_time(char *out, size_t cap, double ns)
{
	if (ns < 999.5)
		snprintf(out, cap, "%.0fns", ns);
	else if (ns < 999995.0)
		snprintf(out, cap, "%.2fus", ns / 1e3);
	else if (ns < 999995000.0)
		snprintf(out, cap, "%.2fms", ns / 1e6);
	else
		snprintf(out, cap, "%.2fs", ns / 1e9);
}

/* @b bytes as "512B", "1.50KB", "2.25MB"... in powers of 1024 (wrk's units). */
static void fmt_bytes(char *out, size_t cap, double b)
{
	static const char *const unit[] = {"KB", "MB", "GB", "TB"};
	unsigned u = 0;

	if (b < 1023.5) {
		snprintf(out, cap, "%.0fB", b);
		return;
	}
	b /= 1024;
	while (b >= 1023.995 && u < 3)
		b /= 1024, u++;
	snprintf(out, cap, "%.2f%s", b, unit[u]);
}

static double per_sec(uint64_t n, uint64_t ns)
{
	return ns ? (double)n * 1e9 / (double)ns : 0;
}

static bool any_errors(const struct load_totals *t)
{
	for (unsigned i = 0; i < LOAD_ERR_COUNT; i++)
		if (t->errors[i])
			return true;
	return false;
}

static void text_latency(struct sink *o, const struct load_run *run, const struct load_hist *h)
{
	char a[32], s[32], m[32];

	if (!h || !load_hist_count(h)) {
		put_str(o, "  Latency: no responses\n");
		return;
	}
	fmt_time(a, sizeof(a), load_hist_mean(h));
	fmt_time(s, sizeof(s), load_hist_stdev(h));
	fmt_time(m, sizeof(m), (double)load_hist_max(h));
	put(o, "  %-9s %10s %10s %10s\n", "", "Avg", "Stdev", "Max");
	put(o, "  %-9s %10s %10s %10s\n", "Latency", a, s, m);
	if (run->latency) {
		put_str(o, "  Latency Distribution\n");
		for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++) {
			fmt_time(a, sizeof(a), (double)load_hist_percentile(h, pcts[i].p));
			put(o, "  %7s %10s\n", pcts[i].label, a);
		}
		put(o, "  %7s %10s\n", "max", m);
	}
	if (load_hist_clamped(h)) {
		fmt_time(a, sizeof(a), (double)LOAD_HIST_MAX);
		put(o, "  %" PRIu64 " latencies above %s counted as %s\n", load_hist_clamped(h), a,
		    a);
	}
	if (run->rate)
		put(o,
		    "  Paced at %" PRIu64
		    " requests/s: latency counts from each request's due time\n",
		    run->rate);
}

static void text(struct sink *o, const struct load_run *run, const struct load_totals *t,
		 const struct load_hist *h)
{
	char d[32], b[32];
	bool first = true;

	put_str(o, "  Protocol: ");
	put_str(o, run->protocol ? run->protocol : "http/1.1");
	if (run->protocol && strcmp(run->protocol, "http/1.1"))
		put(o, ", %" PRIu32 " stream%s per connection", run->streams ? run->streams : 1,
		    run->streams > 1 ? "s" : "");
	put_str(o, "\n");
	text_latency(o, run, h);
	fmt_time(d, sizeof(d), (double)t->duration_ns);
	fmt_bytes(b, sizeof(b), (double)t->bytes);
	put(o, "  %" PRIu64 " requests in %s, %s read\n", t->requests, d, b);
	for (unsigned i = 0; i < LOAD_STATUS_COUNT; i++) {
		if (!t->status[i])
			continue;
		put(o, "%s%u %" PRIu64, first ? "  Status codes: " : ", ", i + LOAD_STATUS_MIN,
		    t->status[i]);
		first = false;
	}
	if (!first)
		put_str(o, "\n");
	if (any_errors(t)) {
		put_str(o, "  Errors:");
		for (unsigned i = 0; i < LOAD_ERR_COUNT; i++)
			put(o, "%s %s %" PRIu64, i ? "," : "", err_names[i], t->errors[i]);
		put_str(o, "\n");
	}
	fmt_bytes(b, sizeof(b), per_sec(t->bytes, t->duration_ns));
	put(o, "Requests/sec: %12.2f\n", per_sec(t->requests, t->duration_ns));
	put(o, "Transfer/sec: %12s\n", b);
}

/*
 * The length of the well-formed UTF-8 sequence at @s (@left bytes), or 0 when there is none
 * (Unicode's table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF).
 */
static size_t utf8_len(const unsigned char *s, size_t left)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t n;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (left < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* @s as a JSON string, quotes included (NULL as @dflt). */
static void json_str(struct sink *o, const char *s, const char *dflt)
{
	const unsigned char *p = (const unsigned char *)(s ? s : dflt);
	size_t left = strlen((const char *)p);

	put_str(o, "\"");
	while (left) {
		unsigned char c = *p;
		size_t n = 1;

		if (c == '"' || c == '\\') {
			put(o, "\\%c", c);
		} else if (c < 0x20) {
			put(o, "\\u%04x", c);
		} else if (c < 0x80) {
			put_bytes(o, (const char *)p, 1);
		} else if ((n = utf8_len(p, left))) {
			put_bytes(o, (const char *)p, n);
		} else {
			put_str(o, "\\ufffd");
			n = 1;
		}
		p += n;
		left -= n;
	}
	put_str(o, "\"");
}

static void json(struct sink *o, const struct load_run *run, const struct load_totals *t,
		 const struct load_hist *h)
{
	/* An empty histogram, as load_hist_init() makes one (static: 35 KiB is no stack's). */
	static const struct load_hist empty = {.min = UINT64_MAX};
	bool first = true;

	if (!h)
		h = &empty;
	put_str(o, "{\"url\":");
	json_str(o, run->url, "");
	put_str(o, ",\"method\":");
	json_str(o, run->method, "GET");
	put(o, ",\"connections\":%" PRIu32 ",\"workers\":%" PRIu32 ",\"depth\":%" PRIu32,
	    run->conns, run->workers, run->depth);
	put_str(o, ",\"protocol\":");
	json_str(o, run->protocol, "http/1.1");
	put(o, ",\"streams\":%" PRIu32 ",\"rate\":%" PRIu64, run->streams ? run->streams : 1,
	    run->rate);
	put(o, ",\"duration_ns\":%" PRIu64 ",\"requests\":%" PRIu64 ",\"bytes\":%" PRIu64,
	    t->duration_ns, t->requests, t->bytes);
	put(o, ",\"requests_per_sec\":%.3f,\"bytes_per_sec\":%.3f",
	    per_sec(t->requests, t->duration_ns), per_sec(t->bytes, t->duration_ns));
	put(o,
	    ",\"latency_ns\":{\"count\":%" PRIu64 ",\"min\":%" PRIu64 ",\"mean\":%" PRIu64
	    ",\"stdev\":%" PRIu64 ",\"max\":%" PRIu64,
	    load_hist_count(h), load_hist_min(h), (uint64_t)llround(load_hist_mean(h)),
	    (uint64_t)llround(load_hist_stdev(h)), load_hist_max(h));
	for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++)
		put(o, ",\"%s\":%" PRIu64, pcts[i].key, load_hist_percentile(h, pcts[i].p));
	put(o, ",\"clamped\":%" PRIu64 "},\"status\":{", load_hist_clamped(h));
	for (unsigned i = 0; i < LOAD_STATUS_COUNT; i++) {
		if (!t->status[i])
			continue;
		put(o, "%s\"%u\":%" PRIu64, first ? "" : ",", i + LOAD_STATUS_MIN, t->status[i]);
		first = false;
	}
	put_str(o, "},\"errors\":{");
	for (unsigned i = 0; i < LOAD_ERR_COUNT; i++)
		put(o, "%s\"%s\":%" PRIu64, i ? "," : "", err_names[i], t->errors[i]);
	put_str(o, "}}\n");
}

typedef void report_fn(struct sink *o, const struct load_run *run, const struct load_totals *t,
		       const struct load_hist *h);

static int to_buf(report_fn *fn, char *buf, size_t cap, const struct load_run *run,
		  const struct load_totals *t, const struct load_hist *h)
{
	struct sink o = {.buf = buf, .cap = buf ? cap : 0};

	if (o.cap)
		buf[0] = '\0';
	fn(&o, run, t, h);
	return o.err ? -EIO : (int)o.len;
}

static int to_file(report_fn *fn, FILE *f, const struct load_run *run, const struct load_totals *t,
		   const struct load_hist *h)
{
	struct sink o = {.f = f};

	fn(&o, run, t, h);
	return o.err || ferror(f) ? -EIO : (int)o.len;
}

int load_report_text(char *buf, size_t cap, const struct load_run *run, const struct load_totals *t,
		     const struct load_hist *h)
{
	return to_buf(text, buf, cap, run, t, h);
}

int load_report_json(char *buf, size_t cap, const struct load_run *run, const struct load_totals *t,
		     const struct load_hist *h)
{
	return to_buf(json, buf, cap, run, t, h);
}

int load_report_text_file(FILE *f, const struct load_run *run, const struct load_totals *t,
			  const struct load_hist *h)
{
	return to_file(text, f, run, t, h);
}

int load_report_json_file(FILE *f, const struct load_run *run, const struct load_totals *t,
			  const struct load_hist *h)
{
	return to_file(json, f, run, t, h);
}
