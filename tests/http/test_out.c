/* SPDX-License-Identifier: MIT */
/* test_out.c - the output batch: exact bytes of status lines and fields, the
 * checks that keep a handler from splitting a response, and the size bound. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "giong_test.h"

#include "common/date.h"
#include "common/out.h"
#include "h1/serialize.h"
#include "common/token.h"

#define OUT_EQ(o, s)                                                                               \
	do {                                                                                       \
		assert_int_equal((o)->len, strlen(s));                                             \
		assert_memory_equal((o)->data, (s), strlen(s));                                    \
	} while (0)

static void test_status_and_fields(void **state)
{
	struct giong__http_out o;

	(void)state;
	giong__http_out_init(&o, 1 << 20);
	assert_int_equal(giong__http_out_status(&o, 200), 0);
	assert_int_equal(giong__http_out_header(&o, "Content-Type", 12, "application/json", 16), 0);
	assert_int_equal(giong__http_out_content_length(&o, 27), 0);
	assert_int_equal(giong__http_out_append(&o, "\r\n", 2), 0);
	OUT_EQ(&o,
	       "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 27\r\n\r\n");
	giong__http_out_clear(&o);
	assert_int_equal(giong__http_out_status(&o, 599), 0); /* unnamed: empty reason */
	OUT_EQ(&o, "HTTP/1.1 599 \r\n");
	giong__http_out_clear(&o);
	assert_int_equal(giong__http_out_content_length(&o, 0), 0);
	assert_int_equal(giong__http_out_content_length(&o, UINT64_MAX), 0);
	OUT_EQ(&o, "Content-Length: 0\r\nContent-Length: 18446744073709551615\r\n");
	giong__http_out_clear(&o);
	assert_int_equal(giong__http_out_header(&o, "X-Empty", 7, NULL, 0), 0);
	assert_int_equal(giong__http_out_header(&o, "X-Tab", 5, "a\tb c", 5), 0);
	assert_int_equal(giong__http_out_header(&o, "X-Obs", 5, "caf\xc3\xa9", 5), 0);
	OUT_EQ(&o, "X-Empty: \r\nX-Tab: a\tb c\r\nX-Obs: caf\xc3\xa9\r\n");
	giong__http_out_free(&o);
}

static void test_date_field(void **state)
{
	struct giong__http_out o;

	(void)state;
	giong__http_out_init(&o, 1024);
	assert_int_equal(giong__http_out_date(&o), 0);
	assert_int_equal(o.len, 6 + GIONG__HTTP_DATE_LEN + 2);
	assert_memory_equal(o.data, "Date: ", 6);
	assert_memory_equal(o.data + 6 + GIONG__HTTP_DATE_LEN - 4, " GMT\r\n", 6);
	giong__http_out_free(&o);
}

static void test_no_splitting(void **state)
{
	static const char *const bad_values[] = {
		"a\r\nSet-Cookie: x=1",
		"a\nb",
		"a\rb",
		"a\0b",
		"\x01",
		"a\x7f",
		" lead",
		"trail ",
		"\tlead",
	};
	static const size_t bad_value_lens[] = {19, 3, 3, 3, 1, 2, 5, 6, 5};
	static const char *const bad_names[] = {
		"", "Bad Name", "Bad:Name", "X\r\nY", "caf\xc3\xa9", "(x)", "a/b", "a@b"};
	struct giong__http_out o;

	(void)state;
	giong__http_out_init(&o, 1024);
	for (size_t i = 0; i < sizeof(bad_values) / sizeof(bad_values[0]); i++)
		assert_int_equal(
			giong__http_out_header(&o, "X", 1, bad_values[i], bad_value_lens[i]),
			-EINVAL);
	for (size_t i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++)
		assert_int_equal(
			giong__http_out_header(&o, bad_names[i], strlen(bad_names[i]), "v", 1),
			-EINVAL);
	assert_int_equal(giong__http_out_header(&o, NULL, 3, "v", 1), -EINVAL);
	assert_int_equal(giong__http_out_status(&o, 99), -EINVAL);
	assert_int_equal(giong__http_out_status(&o, 600), -EINVAL);
	assert_int_equal(giong__http_out_status(&o, -200), -EINVAL);
	assert_int_equal(o.len, 0); /* nothing appended by a refusal */
	assert_true(giong__http_is_token("!#$%&'*+-.^_`|~09azAZ", 21));
	assert_false(giong__http_is_token("a,b", 3));
	giong__http_out_free(&o);
}

/* The byte rule the word-at-a-time check must keep: no control but HTAB, no DEL. */
static bool value_byte_ok(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

/* Each byte value at each place of values 1 to 24 bytes long (inside a word, at its
 * edges, in the tail), against the rule byte by byte; the borrow of one byte's test
 * must not reach another's (0x20 beside 0x1f, 0x80 beside 0x7f, ...). */
static void test_field_value_bytes(void **state)
{
	char v[24];

	(void)state;
	for (size_t len = 1; len <= sizeof(v); len++)
		for (size_t at = 0; at < len; at++)
			for (unsigned c = 0; c < 256; c++) {
				bool edge_ws =
					(at == 0 || at == len - 1) && (c == ' ' || c == '\t');

				memset(v, 'a', sizeof(v));
				v[at] = (char)c;
				if (at + 1 < len)
					v[at + 1] = (char)(c + 1); /* a neighbour one above */
				assert_int_equal(giong__http_is_field_value(v, len),
						 value_byte_ok((unsigned char)c) && !edge_ws &&
							 (at + 1 >= len ||
							  (value_byte_ok((unsigned char)(c + 1)) &&
							   !(at + 1 == len - 1 &&
							     ((unsigned char)(c + 1) == ' ' ||
							      (unsigned char)(c + 1) == '\t')))));
			}
	assert_true(giong__http_is_field_value("application/json", 16));
	assert_true(giong__http_is_field_value("a\tb c\x80\xff", 7));
	assert_false(giong__http_is_field_value("text/html; charset=utf-8\r\nX: y", 30));
	assert_false(giong__http_is_field_value("abcdefgh\x7f", 9));
	assert_true(giong__http_is_field_value(NULL, 0));
	assert_false(giong__http_is_field_value(NULL, 3));
}

static void test_bound(void **state)
{
	struct giong__http_out o;
	char chunk[100];

	(void)state;
	memset(chunk, 'x', sizeof(chunk));
	giong__http_out_init(&o, 1000);
	for (int i = 0; i < 10; i++)
		assert_int_equal(giong__http_out_append(&o, chunk, sizeof(chunk)), 0);
	assert_int_equal(o.len, 1000);
	assert_true(o.cap <= 1000);
	assert_int_equal(giong__http_out_append(&o, chunk, 1), -E2BIG);
	assert_int_equal(giong__http_out_header(&o, "X", 1, "v", 1), -E2BIG);
	assert_int_equal(o.len, 1000); /* all or nothing */
	giong__http_out_clear(&o);
	assert_int_equal(giong__http_out_append(&o, chunk, SIZE_MAX), -E2BIG);
	assert_int_equal(giong__http_out_append(&o, NULL, 0), 0);
	/* Growth keeps what was there. */
	for (int i = 0; i < 9; i++) {
		chunk[0] = (char)('0' + i);
		assert_int_equal(giong__http_out_append(&o, chunk, sizeof(chunk)), 0);
	}
	for (int i = 0; i < 9; i++)
		assert_int_equal(o.data[i * 100], '0' + i);
	giong__http_out_free(&o);
	assert_null(o.data);
	assert_int_equal(giong__http_out_append(&o, "ok", 2), 0); /* usable again */
	giong__http_out_free(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_and_fields), cmocka_unit_test(test_date_field),
		cmocka_unit_test(test_no_splitting),      cmocka_unit_test(test_bound),
		cmocka_unit_test(test_field_value_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
