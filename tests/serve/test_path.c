/* SPDX-License-Identifier: MIT */
/* test_path.c - giong-serve's request-path decoder (traversal refused, not resolved; the
 * bounds of @out, exactly), and the HTML and URL escapes of directory listings. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "path.h"

/* Decodes the NUL-terminated @t into a heap buffer of exactly @cap bytes (ASan sees any
 * write past it) with a copy of @t of exactly its length (and any read past it). */
static int dec(const char *t, size_t cap, char *got, size_t *got_len)
{
	size_t n = strlen(t), len = (size_t)-1;
	char *in = malloc(n ? n : 1), *out = malloc(cap ? cap : 1);
	int r;

	memcpy(in, t, n);
	r = serve_path_decode(in, n, out, cap, &len);
	if (r >= 0) {
		assert_true(len < cap);
		assert_int_equal(out[len], '\0');
		assert_int_equal(strlen(out), len);
		memcpy(got, out, len + 1);
		if (got_len)
			*got_len = len;
	} else {
		assert_int_equal(len, (size_t)-1); /* untouched on errors */
	}
	free(in);
	free(out);
	return r;
}

#define OK(target, want, dir)                                                                      \
	do {                                                                                       \
		char got_[512];                                                                    \
		assert_int_equal(dec(target, 512, got_, NULL), dir);                               \
		assert_string_equal(got_, want);                                                   \
	} while (0)

#define BAD(target, err)                                                                           \
	do {                                                                                       \
		char got_[512];                                                                    \
		assert_int_equal(dec(target, 512, got_, NULL), -(err));                            \
	} while (0)

static void test_plain(void **state)
{
	(void)state;
	OK("/", "", SERVE_PATH_DIR);
	OK("/index.html", "index.html", 0);
	OK("/a/b/c.txt", "a/b/c.txt", 0);
	OK("/a/b/", "a/b", SERVE_PATH_DIR);
	OK("/a/b", "a/b", 0);
	OK("/...", "...", 0); /* three dots is a name */
	OK("/..a/a..", "..a/a..", 0);
	OK("/.hidden", ".hidden", 0);
	OK("/a b", "a b", 0);
	OK("/\xc3\xa9t\xc3\xa9", "\xc3\xa9t\xc3\xa9", 0);
	OK("/\xff\xfe", "\xff\xfe", 0); /* not UTF-8: still a file name */
}

static void test_normalise(void **state)
{
	(void)state;
	OK("//etc/passwd", "etc/passwd", 0); /* stays under the root */
	OK("/./a//b/", "a/b", SERVE_PATH_DIR);
	OK("///", "", SERVE_PATH_DIR);
	OK("/.", "", SERVE_PATH_DIR);
	OK("/./", "", SERVE_PATH_DIR);
	OK("/a/.", "a", SERVE_PATH_DIR);
	OK("/a/./b", "a/b", 0);
	OK("/a/%2e/b", "a/b", 0); /* a decoded "." is dropped too */
	OK("/a/%2E", "a", SERVE_PATH_DIR);
	OK("/a//", "a", SERVE_PATH_DIR);
	OK("/a/b/.//./", "a/b", SERVE_PATH_DIR);
}

static void test_query_fragment(void **state)
{
	(void)state;
	OK("/a?b=c", "a", 0);
	OK("/a/?x/../../y", "a", SERVE_PATH_DIR);
	OK("/a#frag/..", "a", 0);
	OK("/?", "", SERVE_PATH_DIR);
	OK("/a%3Fb", "a?b", 0); /* an encoded '?' is part of the name */
	OK("/a%23b", "a#b", 0);
	BAD("?/a", EINVAL);
	BAD("#", EINVAL);
	/* A bad escape in the query does not matter: it is not read. */
	OK("/a?%zz", "a", 0);
}

static void test_decode(void **state)
{
	(void)state;
	OK("/a%20b", "a b", 0);
	OK("/%41%62%7e", "Ab~", 0);
	OK("/%e2%82%ac", "\xe2\x82\xac", 0);
	OK("/%FF", "\xff", 0);
	OK("/%25", "%", 0);
	OK("/%2541", "%41", 0); /* decoded once, not twice */
	OK("/%252e%252e/x", "%2e%2e/x", 0);
	OK("/%2e%2e%2e", "...", 0);
	BAD("/%ZZ", EINVAL);
	BAD("/%4", EINVAL);
	BAD("/%", EINVAL);
	BAD("/a%4?", EINVAL); /* the '?' ends the path: "%4" lacks a digit */
	BAD("/%g0", EINVAL);
	BAD("/%0g", EINVAL);
	BAD("/%+1", EINVAL);
}

static void test_traversal(void **state)
{
	(void)state;
	BAD("/..", EACCES);
	BAD("/../", EACCES);
	BAD("/../etc/passwd", EACCES);
	BAD("/a/../b", EACCES); /* refused, not resolved */
	BAD("/a/b/..", EACCES);
	BAD("/a/..?x", EACCES);
	BAD("/%2e%2e/", EACCES);
	BAD("/%2E%2e%2f", EACCES);
	BAD("/.%2e/x", EACCES);
	BAD("/%2e./x", EACCES);
	BAD("/a/..%2fb", EACCES);
	BAD("/a%2fb", EACCES); /* an encoded '/' never separates */
	BAD("/a%2Fb", EACCES);
	BAD("/..%5cwin", EACCES);
	BAD("/a%5cb", EACCES);
	BAD("/a\\b", EACCES);
	BAD("/a%00b", EACCES);
	BAD("/%00", EACCES);
	BAD("/a%0ab", EACCES);
	BAD("/a%0d%0aSet-Cookie:x", EACCES);
	BAD("/a%1f", EACCES);
	BAD("/a%7f", EACCES);
	BAD("/a\tb", EACCES);
	BAD("/a\x7f", EACCES);
	BAD("//..//", EACCES);
	BAD("/./../", EACCES);
}

static void test_malformed(void **state)
{
	char out[8];
	size_t len = 7;

	(void)state;
	BAD("", EINVAL);
	BAD("a/b", EINVAL);
	BAD("*", EINVAL);
	BAD("http://host/a", EINVAL);
	BAD("%2fa", EINVAL);
	/* A NUL inside @len: a control byte, refused. */
	assert_int_equal(serve_path_decode("/a\0b", 4, out, sizeof(out), &len), -EACCES);
	assert_int_equal(len, 7);
	assert_int_equal(serve_path_decode(NULL, 0, out, sizeof(out), &len), -EINVAL);
	assert_int_equal(serve_path_decode("/", 1, NULL, 8, &len), -EINVAL);
	assert_int_equal(serve_path_decode("/", 1, out, 0, &len), -ENAMETOOLONG);
	/* @out_len may be NULL. */
	assert_int_equal(serve_path_decode("/ab", 3, out, sizeof(out), NULL), 0);
	assert_string_equal(out, "ab");
}

/* @len is a bound: bytes past it are never looked at. */
static void test_len_bound(void **state)
{
	char out[32];
	size_t len;

	(void)state;
	assert_int_equal(serve_path_decode("/abc/../x", 4, out, sizeof(out), &len), 0);
	assert_string_equal(out, "abc");
	assert_int_equal(serve_path_decode("/abc/", 5, out, sizeof(out), &len), SERVE_PATH_DIR);
	assert_string_equal(out, "abc");
	/* "%4" cut by @len: malformed, even though "%41" follows in memory. */
	assert_int_equal(serve_path_decode("/a%41", 4, out, sizeof(out), &len), -EINVAL);
	assert_int_equal(serve_path_decode("/a%41", 5, out, sizeof(out), &len), 0);
	assert_string_equal(out, "aA");
	assert_int_equal(serve_path_decode("/", 0, out, sizeof(out), &len), -EINVAL);
}

/* The bound on @out: a path of n bytes needs n + 1 (its NUL). */
static void test_cap(void **state)
{
	char got[4200], t[4200];
	size_t len;

	(void)state;
	assert_int_equal(dec("/abc", 4, got, &len), 0); /* exactly cap - 1 bytes + NUL */
	assert_string_equal(got, "abc");
	assert_int_equal(dec("/abc", 3, got, &len), -ENAMETOOLONG);
	assert_int_equal(dec("/abcd", 4, got, &len), -ENAMETOOLONG); /* exactly cap bytes */
	assert_int_equal(dec("/", 1, got, &len), SERVE_PATH_DIR);
	assert_string_equal(got, "");
	assert_int_equal(dec("/a", 1, got, &len), -ENAMETOOLONG);
	/* Separators count. */
	assert_int_equal(dec("/a/b", 4, got, &len), 0);
	assert_int_equal(dec("/a/b", 3, got, &len), -ENAMETOOLONG);
	assert_int_equal(dec("/ab/cd", 6, got, &len), 0);
	assert_int_equal(dec("/ab/cd", 5, got, &len), -ENAMETOOLONG);
	assert_int_equal(dec("/abc/def", 8, got, &len), 0);
	assert_int_equal(dec("/abc/def", 7, got, &len), -ENAMETOOLONG);
	/* A trailing "." or "/" needs no room; escapes count decoded. */
	assert_int_equal(dec("/abc/.", 4, got, &len), SERVE_PATH_DIR);
	assert_string_equal(got, "abc");
	assert_int_equal(dec("/abc///", 4, got, &len), SERVE_PATH_DIR);
	assert_int_equal(dec("/%41%42%43", 4, got, &len), 0);
	assert_string_equal(got, "ABC");
	assert_int_equal(dec("/%41%42%43%44", 4, got, &len), -ENAMETOOLONG);
	/* A ".." past the bound is still refused as what it is, or too long: never accepted. */
	assert_true(dec("/abc/..", 4, got, &len) < 0);

	/* Long paths: 4095 bytes in a 4096-byte buffer, one more over. */
	t[0] = '/';
	for (size_t i = 1; i <= 4096; i++)
		t[i] = (i % 8 == 0) ? '/' : 'a' + (char)(i % 26);
	t[4096] = 'z';
	t[4097] = '\0';
	assert_int_equal(dec(t, 4096, got, &len), -ENAMETOOLONG);
	t[4096] = '\0';
	assert_int_equal(dec(t, 4096, got, &len), 0);
	assert_int_equal(len, 4095);
	assert_memory_equal(got, t + 1, 4095);
	assert_int_equal(dec(t, 4095, got, &len), -ENAMETOOLONG);
}

static size_t esc(size_t (*f)(const char *, size_t, char *, size_t), const char *in, size_t n,
		  char *out, size_t cap)
{
	char *o = malloc(cap ? cap : 1);
	size_t r = f(in, n, cap ? o : NULL, cap);

	if (cap)
		memcpy(out, o, strlen(o) + 1);
	free(o);
	return r;
}

static void test_html_escape(void **state)
{
	char out[256];
	const char *hostile = "<script>alert('x')</script>";

	(void)state;
	assert_int_equal(esc(serve_html_escape, "plain.txt", 9, out, sizeof(out)), 9);
	assert_string_equal(out, "plain.txt");
	assert_int_equal(esc(serve_html_escape, hostile, strlen(hostile), out, sizeof(out)), 47);
	assert_string_equal(out, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;");
	esc(serve_html_escape, "a\"b&c d", 7, out, sizeof(out));
	assert_string_equal(out, "a&quot;b&amp;c d");
	esc(serve_html_escape, "\"><img src=x onerror=y>", 23, out, sizeof(out));
	assert_string_equal(out, "&quot;&gt;&lt;img src=x onerror=y&gt;");
	/* Non-UTF-8 bytes are copied; control bytes become U+FFFD. */
	esc(serve_html_escape, "\xff\xc3(", 3, out, sizeof(out));
	assert_string_equal(out, "\xff\xc3(");
	esc(serve_html_escape, "a\nb\x7f", 4, out, sizeof(out));
	assert_string_equal(out, "a&#xFFFD;b&#xFFFD;");
	assert_int_equal(esc(serve_html_escape, "", 0, out, sizeof(out)), 0);
	assert_string_equal(out, "");
	/* Bounds: whole escapes only, always a NUL, the full length returned. */
	assert_int_equal(esc(serve_html_escape, "a&b", 3, out, 7), 7);
	assert_string_equal(out, "a&amp;"); /* 6 bytes + NUL */
	assert_int_equal(esc(serve_html_escape, "a&b", 3, out, 8), 7);
	assert_string_equal(out, "a&amp;b");
	assert_int_equal(esc(serve_html_escape, "a&b", 3, out, 6), 7);
	assert_string_equal(out, "a"); /* "&amp;" does not fit whole */
	assert_int_equal(esc(serve_html_escape, "a&b", 3, out, 1), 7);
	assert_string_equal(out, "");
	assert_int_equal(esc(serve_html_escape, "a&b", 3, out, 0), 7);
	/* Once an escape did not fit, nothing after it is written (a prefix, not holes). */
	assert_int_equal(esc(serve_html_escape, "<ab", 3, out, 4), 6);
	assert_string_equal(out, "");
}

static void test_url_encode(void **state)
{
	char out[256];

	(void)state;
	assert_int_equal(esc(serve_url_encode, "a/b-c_d.e~f", 11, out, sizeof(out)), 11);
	assert_string_equal(out, "a/b-c_d.e~f");
	esc(serve_url_encode, "a b", 3, out, sizeof(out));
	assert_string_equal(out, "a%20b");
	esc(serve_url_encode, "100%?#&\"'<>", 11, out, sizeof(out));
	assert_string_equal(out, "100%25%3F%23%26%22%27%3C%3E");
	esc(serve_url_encode, "\xc3\xa9\xff\x80", 4, out, sizeof(out));
	assert_string_equal(out, "%C3%A9%FF%80");
	esc(serve_url_encode, "a\\b\x01", 4, out, sizeof(out));
	assert_string_equal(out, "a%5Cb%01");
	esc(serve_url_encode, "javascript:x", 12, out, sizeof(out));
	assert_string_equal(out, "javascript%3Ax"); /* ':' cannot make a scheme */
	/* Bounds: a "%XX" whole or not at all. */
	assert_int_equal(esc(serve_url_encode, "a b", 3, out, 4), 5);
	assert_string_equal(out, "a");
	assert_int_equal(esc(serve_url_encode, "a b", 3, out, 5), 5);
	assert_string_equal(out, "a%20");
	assert_int_equal(esc(serve_url_encode, "a b", 3, out, 6), 5);
	assert_string_equal(out, "a%20b");
	assert_int_equal(esc(serve_url_encode, "a b", 3, out, 0), 5);
}

/* Every byte value: encoding a name and decoding "/" + it gives the name back. */
static void test_round_trip(void **state)
{
	char name[4], enc[16], target[20], got[8];
	size_t len;

	(void)state;
	for (unsigned c = 0; c < 256; c++) {
		int r;

		name[0] = 'x';
		name[1] = (char)c;
		name[2] = 'y';
		name[3] = '\0';
		assert_true(serve_url_encode(name, 3, enc, sizeof(enc)) < sizeof(enc));
		target[0] = '/';
		strcpy(target + 1, enc);
		r = serve_path_decode(target, strlen(target), got, sizeof(got), &len);
		if (c < 0x20 || c == 0x7f || c == '\\') {
			assert_int_equal(r, -EACCES);
		} else if (c == '/') {
			assert_int_equal(r, 0);
			assert_string_equal(got, "x/y"); /* a separator in both */
		} else {
			assert_int_equal(r, 0);
			assert_int_equal(len, 3);
			assert_memory_equal(got, name, 3);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),          cmocka_unit_test(test_normalise),
		cmocka_unit_test(test_query_fragment), cmocka_unit_test(test_decode),
		cmocka_unit_test(test_traversal),      cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_len_bound),      cmocka_unit_test(test_cap),
		cmocka_unit_test(test_html_escape),    cmocka_unit_test(test_url_encode),
		cmocka_unit_test(test_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
