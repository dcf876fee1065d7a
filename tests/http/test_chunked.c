/* SPDX-License-Identifier: MIT */
/*
 * test_chunked.c - the chunked-body decoder (src/h1/chunked.c): valid bodies give their
 * data and end where they end, whole, split at every byte, and byte by byte; each
 * refusal of docs/http.md's chunked rules, at the same byte however the input is split.
 */
#include "giong_test.h"

#include <giong/http.h>

#include "h1/chunked.h"

struct run {
	int result; /* DONE, MORE, or the refusal */
	size_t end; /* with DONE: the body's length */
	char data[4096];
	size_t data_len;
};

/* Decodes in[0..len) fed in pieces of @step bytes (0: whole; SIZE_MAX: split once at
 * @split), each piece in a buffer of its exact size. */
static void decode(const char *in, size_t len, size_t step, size_t split,
		   const struct giong_http_limits *lim, struct run *out)
{
	struct giong__http_chunked c;
	size_t pos = 0;

	memset(out, 0, sizeof(*out));
	assert_int_equal(giong__http_chunked_init(&c, lim), 0);
	out->result = GIONG__HTTP_CHUNKED_MORE;
	while (pos < len || out->result == GIONG__HTTP_CHUNKED_DATA) {
		size_t n = step == 0          ? len - pos
			   : step == SIZE_MAX ? (pos < split ? split - pos : len - pos)
					      : step;
		size_t used, off, dlen;
		char *piece;
		int r;

		if (n > len - pos)
			n = len - pos;
		piece = malloc(n ? n : 1);
		memcpy(piece, in + pos, n);
		r = giong__http_chunked_feed(&c, piece, n, &used, &off, &dlen);
		if (r == -EBADMSG)
			r = -c.error; /* the tables below say a refusal as minus its status */
		if (r == GIONG__HTTP_CHUNKED_DATA) {
			assert_true(off + dlen <= used && used <= n && dlen > 0);
			assert_true(out->data_len + dlen <= sizeof(out->data));
			memcpy(out->data + out->data_len, piece + off, dlen);
			out->data_len += dlen;
		} else if (r >= 0) {
			assert_int_equal(off, 0);
			assert_int_equal(dlen, 0);
		}
		free(piece);
		pos += used;
		out->result = r;
		if (r < 0 || r == GIONG__HTTP_CHUNKED_DONE)
			break;
		if (r == GIONG__HTTP_CHUNKED_MORE)
			assert_int_equal(used, n);
	}
	out->end = pos;
}

/* Every way of splitting must agree with the whole. */
static int check(const char *in, size_t len, const struct giong_http_limits *lim, struct run *whole)
{
	struct run *r = malloc(sizeof(*r));

	decode(in, len, 0, 0, lim, whole);
	decode(in, len, 1, 0, lim, r);
	assert_int_equal(r->result, whole->result);
	if (whole->result == GIONG__HTTP_CHUNKED_DONE)
		assert_int_equal(r->end, whole->end);
	assert_int_equal(r->data_len, whole->data_len);
	assert_memory_equal(r->data, whole->data, whole->data_len);
	for (size_t s = 1; s < len; s++) {
		decode(in, len, SIZE_MAX, s, lim, r);
		assert_int_equal(r->result, whole->result);
		assert_int_equal(r->data_len, whole->data_len);
		assert_memory_equal(r->data, whole->data, whole->data_len);
	}
	free(r);
	return whole->result;
}

static struct run w;

#define OK(s, body)                                                                                \
	do {                                                                                       \
		assert_int_equal(check(s, strlen(s), NULL, &w), GIONG__HTTP_CHUNKED_DONE);         \
		assert_int_equal(w.end, strlen(s));                                                \
		assert_int_equal(w.data_len, strlen(body));                                        \
		assert_memory_equal(w.data, body, strlen(body));                                   \
	} while (0)
#define BAD(status, s) assert_int_equal(check(s, strlen(s), NULL, &w), -(status))
#define MORE(s) assert_int_equal(check(s, strlen(s), NULL, &w), GIONG__HTTP_CHUNKED_MORE)

static void test_valid(void **state)
{
	(void)state;
	OK("0\r\n\r\n", "");
	OK("5\r\nhello\r\n0\r\n\r\n", "hello");
	OK("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", "hello world");
	OK("A\r\n0123456789\r\n0\r\n\r\n", "0123456789");
	OK("a\r\n0123456789\r\n000\r\n\r\n", "0123456789");
	OK("0005\r\n\r\n\r\n\r\r\n0\r\n\r\n", "\r\n\r\n\r"); /* data is data */
	/* Extensions, with BWS before the ';', skipped. */
	OK("5;a=b;c=\"d e\"\r\nhello\r\n0;last\r\n\r\n", "hello");
	OK("5 ;x\r\nhello\r\n0\t; y\r\n\r\n", "hello");
	OK("5;\x80\xff\r\nhello\r\n0\r\n\r\n", "hello");
	/* Trailers, read and dropped. */
	OK("5\r\nhello\r\n0\r\nX-Sum: abc\r\nY:\r\n\r\n", "hello");
	/* Whatever follows the body is not its: DONE stops at the end. */
	const char *two = "1\r\na\r\n0\r\n\r\nGET / HTTP/1.1\r\n";
	assert_int_equal(check(two, strlen(two), NULL, &w), GIONG__HTTP_CHUNKED_DONE);
	assert_int_equal(w.end, 11);
}

static void test_incomplete_never_done(void **state)
{
	(void)state;
	MORE("");
	MORE("5\r\nhel");
	MORE("5\r\nhello");
	MORE("5\r\nhello\r\n");
	MORE("5\r\nhello\r\n0\r\n");
	MORE("5\r\nhello\r\n0\r\nX: y\r\n");
	MORE("5\r\nhello\r\n0\r\n\r");
}

static void test_size_syntax(void **state)
{
	(void)state;
	BAD(400, "0x3\r\nabc\r\n0\r\n\r\n");
	BAD(400, "x3\r\nabc\r\n0\r\n\r\n");
	BAD(400, "+3\r\nabc\r\n0\r\n\r\n");
	BAD(400, "-3\r\nabc\r\n0\r\n\r\n");
	BAD(400, " 3\r\nabc\r\n0\r\n\r\n");
	BAD(400, "3 \r\nabc\r\n0\r\n\r\n"); /* BWS only before an extension */
	BAD(400, "3 xyz\r\nabc\r\n0\r\n\r\n");
	BAD(400, "3g\r\nabc\r\n0\r\n\r\n");
	BAD(400, "\r\n3\r\nabc\r\n0\r\n\r\n");
	BAD(400, "10000000000000000\r\n"); /* 2^64: overflow */
	/* 2^64 - 1 fits, and the body limit refuses it. */
	BAD(413, "ffffffffffffffff\r\n");
}

static void test_line_endings(void **state)
{
	(void)state;
	BAD(400, "3\nabc\r\n0\r\n\r\n");
	BAD(400, "3\rabc\r\n0\r\n\r\n");
	BAD(400, "3;ext\nabc\r\n0\r\n\r\n");
	BAD(400, "3;e\rx\r\nabc\r\n0\r\n\r\n");
	BAD(400, "3;e\x01\r\nabc\r\n0\r\n\r\n");
	BAD(400, "3;e\x7f\r\nabc\r\n0\r\n\r\n");
	BAD(400, "3\r\nabc\n0\r\n\r\n");
	BAD(400, "3\r\nabc\r0\r\n\r\n");
	BAD(400, "3\r\nabcd\r\n0\r\n\r\n"); /* data then garbage */
	BAD(400, "3\r\nabc0\r\n\r\n");
	BAD(400, "0\r\n\n");
	BAD(400, "0\r\n\rx");
	BAD(400, "0\r\nX: y\n\r\n");
}

static void test_trailers(void **state)
{
	(void)state;
	BAD(400, "0\r\n X: y\r\n\r\n");
	BAD(400, "0\r\nX: y\r\n z\r\n\r\n"); /* obs-fold */
	BAD(400, "0\r\nX : y\r\n\r\n");
	BAD(400, "0\r\n: y\r\n\r\n");
	BAD(400, "0\r\nnocolon\r\n\r\n");
	BAD(400, "0\r\nX: a\x01\r\n\r\n");
	struct giong_http_limits lim;
	const char *t = "0\r\nX: 0123456789\r\n\r\n"; /* a trailer section of 17 bytes */
	giong_http_limits_init(&lim);
	lim.head = 17;
	assert_int_equal(check(t, strlen(t), &lim, &w), GIONG__HTTP_CHUNKED_DONE);
	lim.head = 16;
	assert_int_equal(check(t, strlen(t), &lim, &w), -431);
}

static void test_limits(void **state)
{
	struct giong_http_limits lim;
	char *line;

	(void)state;
	giong_http_limits_init(&lim);
	lim.body = 10;
	const char *ten = "5\r\nhello\r\n5\r\nworld\r\n0\r\n\r\n";
	assert_int_equal(check(ten, strlen(ten), &lim, &w), GIONG__HTTP_CHUNKED_DONE);
	lim.body = 9; /* refused at the second size line, before its data */
	assert_int_equal(check(ten, strlen(ten), &lim, &w), -413);
	assert_int_equal(w.data_len, 5);
	/* The size line: 4 KiB with its extensions, then 400. */
	line = malloc(GIONG__HTTP_CHUNK_LINE_MAX + 16);
	memset(line, 'x', GIONG__HTTP_CHUNK_LINE_MAX + 16);
	memcpy(line, "1;", 2);
	memcpy(line + GIONG__HTTP_CHUNK_LINE_MAX, "\r\na\r\n0\r\n\r\n", 10);
	assert_int_equal(check(line, GIONG__HTTP_CHUNK_LINE_MAX + 10, NULL, &w),
			 GIONG__HTTP_CHUNKED_DONE);
	memset(line, 'x', GIONG__HTTP_CHUNK_LINE_MAX + 16);
	memcpy(line, "1;", 2);
	memcpy(line + GIONG__HTTP_CHUNK_LINE_MAX + 1, "\r\na\r\n", 5);
	decode(line, GIONG__HTTP_CHUNK_LINE_MAX + 6, 0, 0, NULL, &w);
	assert_int_equal(w.result, -400);
	assert_int_equal(w.end, GIONG__HTTP_CHUNK_LINE_MAX);
	/* Leading zeros count in the line as well. */
	memset(line, '0', GIONG__HTTP_CHUNK_LINE_MAX + 1);
	decode(line, GIONG__HTTP_CHUNK_LINE_MAX + 1, 0, 0, NULL, &w);
	assert_int_equal(w.result, -400);
	free(line);
}

static void test_sticky_and_arguments(void **state)
{
	struct giong__http_chunked c;
	size_t used, off, len;

	(void)state;
	assert_int_equal(giong__http_chunked_init(NULL, NULL), -EINVAL);
	giong__http_chunked_init(&c, NULL);
	assert_int_equal(giong__http_chunked_feed(NULL, "0", 1, &used, &off, &len), -EINVAL);
	assert_int_equal(giong__http_chunked_feed(&c, NULL, 1, &used, &off, &len), -EINVAL);
	assert_int_equal(giong__http_chunked_feed(&c, "0", 1, NULL, &off, &len), -EINVAL);
	assert_int_equal(giong__http_chunked_feed(&c, NULL, 0, &used, &off, &len), 0);
	assert_int_equal(giong__http_chunked_feed(&c, "x", 1, &used, &off, &len), -EBADMSG);
	assert_int_equal(c.error, 400);
	assert_int_equal(giong__http_chunked_feed(&c, "0\r\n\r\n", 5, &used, &off, &len), -EBADMSG);
	assert_int_equal(c.error, 400);
	giong__http_chunked_init(&c, NULL);
	assert_int_equal(giong__http_chunked_feed(&c, "0\r\n\r\nxyz", 8, &used, &off, &len),
			 GIONG__HTTP_CHUNKED_DONE);
	assert_int_equal(used, 5);
	assert_int_equal(giong__http_chunked_feed(&c, "xyz", 3, &used, &off, &len),
			 GIONG__HTTP_CHUNKED_DONE);
	assert_int_equal(used, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_incomplete_never_done),
		cmocka_unit_test(test_size_syntax),
		cmocka_unit_test(test_line_endings),
		cmocka_unit_test(test_trailers),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_sticky_and_arguments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
