/* SPDX-License-Identifier: MIT */
/*
 * fuzz_serve_path.c - libFuzzer target: giong-serve's pure parsers (programs/serve/path.c and
 * cond.c, compiled in), which see the request's bytes before anything else of the server.
 *
 * Input: a mode byte, a parameter byte, then the value. Mode 0: a request target through
 * serve_path_decode() into a heap buffer of exactly 1 + parameter bytes (or 4096 when the
 * parameter is 255): an accepted path must fit, have no leading '/', no "", "." or ".."
 * segment, no NUL, control byte or backslash; the same target with a larger buffer must give
 * the same answer; and "/" + serve_url_encode(path) must decode to the same path. Mode 1: a
 * Range value against a file size drawn from the value's first 8 bytes (or a small size): a
 * satisfiable answer must have start <= end < size, and the escapes must stay in bounds.
 * Mode 2: HTTP-dates, If-None-Match and If-Range: an accepted date formats back to a date
 * that parses to the same instant. Mode 3 (parameter unused): an Accept-Encoding value
 * against "gzip", "br" and "identity": each answer is 0 or 1, and the same when bytes that
 * would change it follow the value in a larger buffer; appending ",gzip;q=0" (or
 * ",x-gzip;q=0", or putting "gzip;q=0," first) makes gzip unacceptable whatever the value
 * (a malformed one stays malformed) and leaves br and identity as they were, ",br;q=0"
 * likewise; appending ",identity;q=0" refuses identity exactly when the value is
 * well-formed, and a malformed value accepts identity and nothing else; upper-casing the
 * value or padding it with spaces and tabs changes no answer. A broken promise traps; ASan
 * and UBSan catch the rest.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cond.h"
#include "path.h"

#define check(x)                                                                                   \
	do {                                                                                       \
		if (!(x))                                                                          \
			__builtin_trap();                                                          \
	} while (0)

static void check_path(const char *p, size_t n)
{
	size_t s = 0;

	check(strlen(p) == n);
	if (!n)
		return;
	check(p[0] != '/' && p[n - 1] != '/');
	for (size_t i = 0; i <= n; i++) {
		if (i < n) {
			unsigned char c = (unsigned char)p[i];

			check(c >= 0x20 && c != 0x7f && c != '\\');
			if (c != '/')
				continue;
		}
		/* The segment p[s, i). */
		check(i > s);
		check(!(i - s == 1 && p[s] == '.'));
		check(!(i - s == 2 && p[s] == '.' && p[s + 1] == '.'));
		s = i + 1;
	}
}

static void fuzz_path(const uint8_t *d, size_t n, unsigned param)
{
	size_t cap = param == 255 ? 4096 : 1 + param, len = 0, len2 = 0, elen;
	char *out = malloc(cap), *big = malloc(8192), *enc, *t2;
	int r = serve_path_decode((const char *)d, n, out, cap, &len), r2;

	check(r == 0 || r == SERVE_PATH_DIR || r == -EINVAL || r == -EACCES || r == -ENAMETOOLONG);
	r2 = serve_path_decode((const char *)d, n, big, 8192, &len2);
	if (r >= 0) {
		check(len < cap && out[len] == '\0');
		check_path(out, len);
		/* A larger buffer changes nothing. */
		check(r2 == r && len2 == len && !memcmp(out, big, len));
		/* Re-encoded, it decodes to itself (and is no directory unless the root). */
		elen = serve_url_encode(out, len, NULL, 0);
		check(elen >= len && elen <= 3 * len);
		t2 = malloc(elen + 1);
		enc = malloc(elen + 1);
		check(serve_url_encode(out, len, enc, elen + 1) == elen);
		check(strlen(enc) == elen);
		t2[0] = '/';
		memcpy(t2 + 1, enc, elen);
		r2 = serve_path_decode(t2, elen + 1, big, 8192, &len2);
		check(r2 == (len ? 0 : SERVE_PATH_DIR) && len2 == len && !memcmp(big, out, len));
		free(t2);
		free(enc);
	} else if (r != -ENAMETOOLONG) {
		check(r2 == r); /* malformed or refused whatever the room */
	} else {
		check(r2 != -ENAMETOOLONG || n > 8192);
	}
	free(out);
	free(big);
}

static void fuzz_escapes(const uint8_t *d, size_t n, unsigned param)
{
	size_t cap = param % 64, full, got;
	char *out = malloc(cap ? cap : 1), *all;

	full = serve_html_escape((const char *)d, n, NULL, 0);
	check(full >= n && full <= 8 * n);
	got = serve_html_escape((const char *)d, n, cap ? out : NULL, cap);
	check(got == full);
	if (cap) {
		size_t o = strlen(out);

		check(o < cap && o <= full);
		all = malloc(full + 1);
		serve_html_escape((const char *)d, n, all, full + 1);
		check(!memcmp(all, out, o)); /* a prefix of the whole */
		for (size_t i = 0; i < full; i++)
			check(all[i] != '<' && all[i] != '>' && all[i] != '"' && all[i] != '\'');
		free(all);
	}
	got = serve_url_encode((const char *)d, n, cap ? out : NULL, cap);
	check(got >= n && got <= 3 * n);
	if (cap)
		check(strlen(out) < cap);
	free(out);
}

static void fuzz_range(const uint8_t *d, size_t n, unsigned param)
{
	uint64_t size = param;
	struct serve_range r = {0, 0};
	char cr[SERVE_CONTENT_RANGE_MAX + 1];
	int res;

	if (param >= 128 && n >= 8) { /* any 64-bit size */
		memcpy(&size, d, 8);
		d += 8;
		n -= 8;
	}
	res = serve_range_parse((const char *)d, n, size, &r);
	check(res == SERVE_RANGE_IGNORE || res == SERVE_RANGE_OK ||
	      res == SERVE_RANGE_UNSATISFIABLE);
	if (res == SERVE_RANGE_OK) {
		check(r.start <= r.end && r.end < size);
		check(serve_content_range(cr, sizeof(cr), &r, size) > 0);
	} else {
		check(size > 0 || res != SERVE_RANGE_OK);
		check(serve_content_range(cr, sizeof(cr), NULL, size) > 0);
	}
	fuzz_escapes(d, n, param);
}

static void fuzz_dates(const uint8_t *d, size_t n, unsigned param)
{
	static const char etag[] = "\"64-3b9aca05-10\"";
	int64_t now = 1767225600 + (int64_t)param * 86400 * 365, t, back;
	char buf[SERVE_HTTP_DATE_LEN + 1];
	int r;

	if (serve_http_date_parse((const char *)d, n, now, &t) == 0) {
		r = serve_http_date(t, buf, sizeof(buf));
		/* A leap second on 9999-12-31 is the only instant past the format's range. */
		check(r == SERVE_HTTP_DATE_LEN || (r == -ERANGE && t == 253402300800LL));
		if (r > 0) {
			check(serve_http_date_parse(buf, (size_t)r, now, &back) == 0 && back == t);
			check(serve_if_modified_since(buf, (size_t)r, t, now) == (t <= now));
		}
	}
	r = serve_if_none_match((const char *)d, n, etag, sizeof(etag) - 1);
	check(r == 0 || r == 1 || r == -EINVAL);
	r = serve_if_range((const char *)d, n, etag, sizeof(etag) - 1, 784111777, now);
	check(r == 0 || r == 1);
	r = serve_not_modified((const char *)d, n, (const char *)d, n, etag, sizeof(etag) - 1,
			       784111777, now);
	check(r == 0 || r == 1);
}

/* serve_accept_encoding()'s answer, which must be 0 or 1. */
static int accepts(const char *v, size_t n, const char *coding)
{
	int r = serve_accept_encoding(v, n, coding);

	check(r == 0 || r == 1);
	return r;
}

/* The three answers for the value @v (@n bytes), in the order of codings[] below. */
static void answers(const char *v, size_t n, int r[3])
{
	r[0] = accepts(v, n, "gzip");
	r[1] = accepts(v, n, "br");
	r[2] = accepts(v, n, "identity");
}

static void fuzz_accept_encoding(const uint8_t *d, size_t n, unsigned param)
{
	/* What a read past the value would see: every coding accepted. */
	static const char past[] = ",gzip,br,*,identity";
	const char *v = (const char *)d;
	char *big = malloc(n + 32);
	int r[3], a[3];
	bool valid;

	(void)param;
	answers(v, n, r);
	memcpy(big, v, n);
	memcpy(big + n, past, sizeof(past) - 1);
	answers(big, n, a);
	check(!memcmp(a, r, sizeof(r)));

	/* A refusal appended (the value's last element, if any, ends at the comma). */
	memcpy(big + n, ",gzip;q=0", 9);
	answers(big, n + 9, a);
	check(a[0] == 0 && a[1] == r[1] && a[2] == r[2]);
	memcpy(big + n, ",x-gzip;q=0", 11);
	answers(big, n + 11, a);
	check(a[0] == 0 && a[1] == r[1] && a[2] == r[2]);
	memcpy(big + n, ",br;q=0", 7);
	answers(big, n + 7, a);
	check(a[0] == r[0] && a[1] == 0 && a[2] == r[2]);
	/* ... or put first: a refusal wins over any acceptance of the same coding. */
	memcpy(big, "gzip;q=0,", 9);
	memcpy(big + 9, v, n);
	answers(big, n + 9, a);
	check(a[0] == 0 && a[1] == r[1] && a[2] == r[2]);
	/* ",identity;q=0" refuses identity exactly when the value is well-formed: a malformed
	 * one accepts identity and nothing else. */
	memcpy(big, v, n);
	memcpy(big + n, ",identity;q=0", 13);
	valid = accepts(big, n + 13, "identity") == 0;
	check(valid || (r[0] == 0 && r[1] == 0 && r[2] == 1));

	/* Case and padding are not meaning. */
	big[0] = ' ';
	big[1] = '\t';
	for (size_t i = 0; i < n; i++)
		big[2 + i] = v[i] >= 'a' && v[i] <= 'z' ? (char)(v[i] - ('a' - 'A')) : v[i];
	big[2 + n] = ' ';
	answers(big + 2, n, a);
	check(!memcmp(a, r, sizeof(r)));
	answers(big, n + 3, a);
	check(!memcmp(a, r, sizeof(r)));
	free(big);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;

	if (size < 2)
		return 0;
	/* The value in a buffer of its exact size: a read past it is ASan's. */
	copy = malloc(size - 2 ? size - 2 : 1);
	memcpy(copy, data + 2, size - 2);
	switch (data[0] % 4) {
	case 0:
		fuzz_path(copy, size - 2, data[1]);
		break;
	case 1:
		fuzz_range(copy, size - 2, data[1]);
		break;
	case 2:
		fuzz_dates(copy, size - 2, data[1]);
		break;
	default:
		fuzz_accept_encoding(copy, size - 2, data[1]);
		break;
	}
	free(copy);
	return 0;
}
