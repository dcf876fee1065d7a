/* SPDX-License-Identifier: MIT */
/* test_mime.c - giong-serve's Content-Type: the built-in table (every extension, any case,
 * names without one), and serve_mime_load() over good, bad and hostile mime.types files. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mime.h"

static const char *type(const char *name)
{
	size_t n = strlen(name);
	char *copy = malloc(n ? n : 1); /* exactly @len bytes: ASan sees reads past them */
	const char *t;

	memcpy(copy, name, n);
	t = serve_mime_type(copy, n);
	free(copy);
	assert_non_null(t);
	return t;
}

static void test_builtin(void **state)
{
	static const struct {
		const char *ext, *type;
	} want[] = {
		{"html", "text/html; charset=utf-8"},
		{"htm", "text/html; charset=utf-8"},
		{"css", "text/css; charset=utf-8"},
		{"js", "text/javascript; charset=utf-8"},
		{"mjs", "text/javascript; charset=utf-8"},
		{"json", "application/json; charset=utf-8"},
		{"txt", "text/plain; charset=utf-8"},
		{"md", "text/markdown; charset=utf-8"},
		{"xml", "application/xml"},
		{"svg", "image/svg+xml; charset=utf-8"},
		{"png", "image/png"},
		{"jpg", "image/jpeg"},
		{"jpeg", "image/jpeg"},
		{"gif", "image/gif"},
		{"webp", "image/webp"},
		{"ico", "image/vnd.microsoft.icon"},
		{"wasm", "application/wasm"},
		{"pdf", "application/pdf"},
		{"woff", "font/woff"},
		{"woff2", "font/woff2"},
		{"ttf", "font/ttf"},
		{"otf", "font/otf"},
		{"mp4", "video/mp4"},
		{"webm", "video/webm"},
		{"mp3", "audio/mpeg"},
		{"ogg", "audio/ogg"},
		{"zip", "application/zip"},
		{"gz", "application/gzip"},
		{"tar", "application/x-tar"},
		{"csv", "text/csv; charset=utf-8"},
		{"map", "application/json; charset=utf-8"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char name[64], upper[64];

		snprintf(name, sizeof(name), "file.%s", want[i].ext);
		assert_string_equal(type(name), want[i].type);
		for (size_t k = 0; name[k]; k++)
			upper[k] =
				(char)(name[k] >= 'a' && name[k] <= 'z' ? name[k] - 32 : name[k]);
		upper[strlen(name)] = '\0';
		assert_string_equal(type(upper), want[i].type); /* FILE.HTML */
		snprintf(name, sizeof(name), "a.b/c.d/x.%s", want[i].ext);
		assert_string_equal(type(name), want[i].type);
	}
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(type("index.HtMl"), "text/html; charset=utf-8");
	assert_string_equal(type("archive.tar.gz"), "application/gzip"); /* the last '.' */
	assert_string_equal(type("README"), SERVE_MIME_DEFAULT);
	assert_string_equal(type(""), SERVE_MIME_DEFAULT);
	assert_string_equal(type("file."), SERVE_MIME_DEFAULT);
	assert_string_equal(type(".html"), SERVE_MIME_DEFAULT); /* a dot file: no extension */
	assert_string_equal(type("dir/.css"), SERVE_MIME_DEFAULT);
	assert_string_equal(type("..html"), "text/html; charset=utf-8");
	assert_string_equal(type("dir.html/file"), SERVE_MIME_DEFAULT); /* a directory's dot */
	assert_string_equal(type("dir.html/"), SERVE_MIME_DEFAULT);
	assert_string_equal(type("file.unknownext"), SERVE_MIME_DEFAULT);
	assert_string_equal(type("file.htmlx"), SERVE_MIME_DEFAULT);
	assert_string_equal(type("file.htm"), "text/html; charset=utf-8");
	assert_string_equal(type("file.ht"), SERVE_MIME_DEFAULT);
	assert_string_equal(type("file.h\xc3\xa9"), SERVE_MIME_DEFAULT);
	assert_string_equal(serve_mime_type(NULL, 0), SERVE_MIME_DEFAULT);
	/* @len bounds the name: "a.css" of "a.cssx". */
	assert_string_equal(serve_mime_type("a.cssx", 5), "text/css; charset=utf-8");
	assert_string_equal(serve_mime_type("a.css", 4), SERVE_MIME_DEFAULT);
}

static char tmpname[64];

/* A file with @text; its name in tmpname. */
static const char *write_file(const char *text, size_t n)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	snprintf(tmpname, sizeof(tmpname), "%s/serve-mime-XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(tmpname);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, n), (ssize_t)n);
	close(fd);
	return tmpname;
}

static int load(const char *text)
{
	int r = serve_mime_load(write_file(text, strlen(text)));

	unlink(tmpname);
	return r;
}

static void test_load(void **state)
{
	(void)state;
	assert_int_equal(load("# a comment\n"
			      "application/x-foo\tfoo fooz\n"
			      "\n"
			      "text/x-bar bar # the rest is a comment: baz\n"
			      "application/vnd.only-type\n"
			      "image/X-Upper UPX\n"
			      "application/x-crlf crlf\r\n"
			      "application/x-last last"), /* no final newline */
			 6);
	assert_string_equal(type("a.foo"), "application/x-foo");
	assert_string_equal(type("a.FOOZ"), "application/x-foo");
	assert_string_equal(type("a.bar"), "text/x-bar; charset=utf-8"); /* a text type */
	assert_string_equal(type("a.baz"), SERVE_MIME_DEFAULT);
	assert_string_equal(type("a.upx"), "image/x-upper"); /* lower-cased */
	assert_string_equal(type("a.crlf"), "application/x-crlf");
	assert_string_equal(type("a.last"), "application/x-last");
	assert_string_equal(type("a.comment"), SERVE_MIME_DEFAULT);
	/* Loading again replaces the table. */
	assert_int_equal(load("application/x-other other\n"), 1);
	assert_string_equal(type("a.other"), "application/x-other");
	assert_string_equal(type("a.foo"), SERVE_MIME_DEFAULT);
	serve_mime_reset();
	assert_string_equal(type("a.other"), SERVE_MIME_DEFAULT);
	serve_mime_reset(); /* twice is fine */
}

static void test_load_override(void **state)
{
	(void)state;
	/* The built-in table wins; a repeated extension keeps its first type. */
	assert_int_equal(load("application/x-evil html css newext\n"
			      "application/x-second newext other\n"
			      "application/javascript js2\n"
			      "application/json j\n"
			      "image/svg+xml svgz\n"),
			 5);
	assert_string_equal(type("a.html"), "text/html; charset=utf-8");
	assert_string_equal(type("a.css"), "text/css; charset=utf-8");
	assert_string_equal(type("a.newext"), "application/x-evil");
	assert_string_equal(type("a.other"), "application/x-second");
	assert_string_equal(type("a.js2"), "application/javascript; charset=utf-8");
	assert_string_equal(type("a.j"), "application/json; charset=utf-8");
	assert_string_equal(type("a.svgz"), "image/svg+xml; charset=utf-8");
	serve_mime_reset();
}

static void test_load_bad_lines(void **state)
{
	char *big;
	size_t n = 0;

	(void)state;
	/* Every bad line is skipped whole; the good ones around them count. */
	assert_int_equal(load("notatype ext1\n"
			      "/x ext2\n"
			      "x/ ext3\n"
			      "a/b/c ext4\n"
			      "a(b)/c ext5\n"
			      "text/html; charset=x ext6\n"
			      "application/x-ok good1 bad.ext\n"
			      "application/x-ok good2 b@d\n"
			      "application/x-ok good3 0123456789012345678901234567890123\n"
			      "application/x-ok good4\n"),
			 1);
	assert_string_equal(type("a.good4"), "application/x-ok");
	for (int i = 1; i <= 6; i++) {
		char name[16];

		snprintf(name, sizeof(name), "a.ext%d", i);
		assert_string_equal(type(name), SERVE_MIME_DEFAULT);
	}
	assert_string_equal(type("a.good1"), SERVE_MIME_DEFAULT);
	assert_string_equal(type("a.good3"), SERVE_MIME_DEFAULT);

	/* A line of exactly SERVE_MIME_LINE_MAX bytes counts; one byte longer does not. */
	big = malloc(4 * SERVE_MIME_LINE_MAX);
	const char *head = "application/x-long";
	for (int pass = 0; pass < 2; pass++) {
		size_t len = SERVE_MIME_LINE_MAX + (size_t)pass;

		n = 0;
		memcpy(big, head, strlen(head));
		n = strlen(head);
		while (n < len - 5)
			big[n++] = ' ';
		memcpy(big + n, " long", 5);
		n += 5;
		assert_int_equal(n, len);
		memcpy(big + n, "\napplication/x-next next\n", 25);
		n += 25;
		int r = serve_mime_load(write_file(big, n));
		unlink(tmpname);
		assert_int_equal(r, pass ? 1 : 2);
		assert_string_equal(type("a.long"),
				    pass ? SERVE_MIME_DEFAULT : "application/x-long");
		assert_string_equal(type("a.next"), "application/x-next");
	}
	/* A NUL byte spoils its line only. */
	memcpy(big, "application/x-nul n\0l\napplication/x-fine fine\n", 46);
	assert_int_equal(serve_mime_load(write_file(big, 46)), 1);
	unlink(tmpname);
	assert_string_equal(type("a.fine"), "application/x-fine");
	assert_string_equal(type("a.n"), SERVE_MIME_DEFAULT);
	free(big);
	serve_mime_reset();
}

static void test_load_limits(void **state)
{
	size_t cap = 6000 * 24, n = 0;
	char *text = malloc(cap);

	(void)state;
	/* 5,000 extensions: the first 4,096 are kept. */
	for (int i = 0; i < 5000; i++)
		n += (size_t)snprintf(text + n, cap - n, "application/x-%d e%d\n", i, i);
	assert_int_equal(serve_mime_load(write_file(text, n)), SERVE_MIME_ENTRIES_MAX);
	unlink(tmpname);
	assert_string_equal(type("a.e0"), "application/x-0");
	assert_string_equal(type("a.E4095"), "application/x-4095");
	assert_string_equal(type("a.e4096"), SERVE_MIME_DEFAULT);
	assert_string_equal(type("a.e2048"), "application/x-2048");
	free(text);
	serve_mime_reset();
}

static void test_load_errors(void **state)
{
	(void)state;
	assert_int_equal(load("application/x-keep keep\n"), 1);
	/* An open error keeps the table there was. */
	assert_int_equal(serve_mime_load("/nonexistent/mime.types"), -ENOENT);
	assert_string_equal(type("a.keep"), "application/x-keep");
	assert_int_equal(serve_mime_load("/"), -EINVAL); /* a directory */
	assert_int_equal(serve_mime_load("/dev/zero"), -EINVAL);
	assert_int_equal(serve_mime_load(NULL), -EINVAL);
	assert_string_equal(type("a.keep"), "application/x-keep");
	/* An empty file and one of only junk: 0 entries, no error. */
	assert_int_equal(load(""), 0);
	assert_string_equal(type("a.keep"), SERVE_MIME_DEFAULT);
	assert_int_equal(load("\xff\xfe garbage\n###\n\t\t\n"), 0);
	serve_mime_reset();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtin),        cmocka_unit_test(test_names),
		cmocka_unit_test(test_load),           cmocka_unit_test(test_load_override),
		cmocka_unit_test(test_load_bad_lines), cmocka_unit_test(test_load_limits),
		cmocka_unit_test(test_load_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
