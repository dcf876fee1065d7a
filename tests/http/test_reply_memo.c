/* SPDX-License-Identifier: MIT */
/*
 * test_reply_memo.c - the memo of the last verified response head (src/reply_memo.c):
 * a head with the same bytes is answered from it, exactly as the parser answers, with the
 * spans in the new buffer; any other byte, another HEAD flag, a prefix, a refused head, a
 * head too large to keep all go to the parser.
 */
#include "giong_test.h"

#include <giong/http.h>

#include "client/reply_memo.h"

#define FIELDS 128

static const char H1[] = "HTTP/1.1 200 OK\r\n"
			 "Server: t\r\n"
			 "Date: Tue, 01 Dec 2026 20:00:00 GMT\r\n"
			 "Content-Type: application/json\r\n"
			 "Content-Length: 27\r\n"
			 "\r\n";

static struct giong_http_limits lim;
static struct giong_http_field fa[FIELDS], fb[FIELDS];

/* A heap copy of s[0..len) of its exact size, so ASan sees any read past it. */
static char *copy(const char *s, size_t len)
{
	char *p = malloc(len ? len : 1);

	assert_non_null(p);
	memcpy(p, s, len);
	return p;
}

/* The memo's answer for buf must be the parser's, spans at the same offsets of buf. */
static void same(const struct giong__http_reply *a, const char *abuf,
		 const struct giong__http_reply *b, const char *bbuf)
{
	assert_int_equal(a->status, b->status);
	assert_int_equal(a->version_minor, b->version_minor);
	assert_int_equal(a->reason - abuf, b->reason - bbuf);
	assert_int_equal(a->reason_len, b->reason_len);
	assert_int_equal(a->nfields, b->nfields);
	for (uint32_t i = 0; i < a->nfields; i++) {
		assert_int_equal(a->fields[i].name - abuf, b->fields[i].name - bbuf);
		assert_int_equal(a->fields[i].name_len, b->fields[i].name_len);
		assert_int_equal(a->fields[i].value - abuf, b->fields[i].value - bbuf);
		assert_int_equal(a->fields[i].value_len, b->fields[i].value_len);
	}
	assert_int_equal(a->body, b->body);
	assert_int_equal(a->content_length, b->content_length);
	assert_int_equal(a->keep_alive, b->keep_alive);
}

static void test_hit(void **state)
{
	struct giong__http_reply_memo m = {0};
	struct giong__http_reply ra, rb;
	size_t len = sizeof(H1) - 1;
	char *a = copy(H1, len), *b;
	int n;

	(void)state;
	giong_http_limits_init(&lim);
	assert_int_equal(giong__http_parse_reply_memo(&m, a, len, &lim, false, NULL, &ra, fa),
			 (int)len);
	assert_int_equal(m.hits, 0);
	assert_int_equal(m.len, len);
	/* the same head, a body after it, another buffer */
	b = malloc(len + 27);
	memcpy(b, H1, len);
	memset(b + len, 'x', 27);
	n = giong__http_parse_reply_memo(&m, b, len + 27, &lim, false, NULL, &rb, fb);
	assert_int_equal(n, (int)len);
	assert_int_equal(m.hits, 1);
	same(&ra, a, &rb, b);
	assert_ptr_equal(rb.fields, fb);
	assert_memory_equal(rb.fields[3].value, "27", 2);
	free(a);
	/* the memo holds its own copy: the first buffer is gone, the answer still right */
	memset(fb, 0, sizeof(fb));
	assert_int_equal(giong__http_parse_reply_memo(&m, b, len, &lim, false, NULL, &rb, fb),
			 (int)len);
	assert_int_equal(m.hits, 2);
	assert_int_equal(rb.status, 200);
	assert_ptr_equal(rb.fields[0].name, b + 17);
	free(b);
}

/* One head of a different kind after H1; @want its parser's answer. */
static void miss(const char *head, size_t len, bool head_request, int want)
{
	struct giong__http_reply_memo m = {0};
	struct giong__http_reply r, plain;
	char *h1 = copy(H1, sizeof(H1) - 1), *h = copy(head, len);

	giong_http_limits_init(&lim);
	assert_true(giong__http_parse_reply_memo(&m, h1, sizeof(H1) - 1, &lim, false, NULL, &r,
						 fa) > 0);
	free(h1);
	assert_int_equal(giong__http_parse_reply(h, len, &lim, head_request, NULL, &plain, fb),
			 want);
	assert_int_equal(giong__http_parse_reply_memo(&m, h, len, &lim, head_request, NULL, &r, fa),
			 want);
	assert_int_equal(m.hits, 0);
	if (want > 0)
		same(&plain, h, &r, h);
	free(h);
}

static void test_miss(void **state)
{
	char buf[sizeof(H1)];
	size_t len = sizeof(H1) - 1;

	(void)state;
	/* a prefix: need more, not the memo's answer */
	miss(H1, len - 1, false, 0);
	miss(H1, 20, false, 0);
	/* the same bytes answering a HEAD: no body */
	miss(H1, len, true, (int)len);
	/* one byte other: a bad field name is refused though the rest matches */
	memcpy(buf, H1, len);
	buf[18] = ' ';
	miss(buf, len, false, -EBADMSG);
	/* another Date: parsed, fine */
	memcpy(buf, H1, len);
	buf[40] = '2';
	miss(buf, len, false, (int)len);
	/* another length: framing read anew */
	memcpy(buf, H1, len);
	buf[len - 5] = '9';
	miss(buf, len, false, (int)len);
}

static void test_not_remembered(void **state)
{
	struct giong__http_reply_memo m = {0};
	struct giong__http_reply r;
	static const char bad[] =
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n";
	char big[GIONG__HTTP_MEMO_HEAD + 64], many[2048];
	size_t n = 0;

	(void)state;
	giong_http_limits_init(&lim);
	/* a refused head is never kept, and never answered from the memo */
	for (int i = 0; i < 2; i++)
		assert_int_equal(giong__http_parse_reply_memo(&m, bad, sizeof(bad) - 1, &lim, false,
							      NULL, &r, fa),
				 -EBADMSG);
	assert_int_equal(m.len, 0);
	/* a head over the memo's size parses every time */
	n = (size_t)snprintf(big, sizeof(big), "HTTP/1.1 204 No Content\r\nX: ");
	memset(big + n, 'a', sizeof(big) - n - 4);
	memcpy(big + sizeof(big) - 4, "\r\n\r\n", 4);
	for (int i = 0; i < 2; i++)
		assert_int_equal(giong__http_parse_reply_memo(&m, big, sizeof(big), &lim, false,
							      NULL, &r, fa),
				 (int)sizeof(big));
	assert_int_equal(m.len, 0);
	assert_int_equal(m.hits, 0);
	/* so does one with more fields than it keeps */
	n = (size_t)snprintf(many, sizeof(many), "HTTP/1.1 204 No Content\r\n");
	for (unsigned i = 0; i <= GIONG__HTTP_MEMO_FIELDS; i++)
		n += (size_t)snprintf(many + n, sizeof(many) - n, "X%u: y\r\n", i);
	n += (size_t)snprintf(many + n, sizeof(many) - n, "\r\n");
	for (int i = 0; i < 2; i++)
		assert_int_equal(
			giong__http_parse_reply_memo(&m, many, n, &lim, false, NULL, &r, fa),
			(int)n);
	assert_int_equal(m.len, 0);
	assert_int_equal(r.nfields, GIONG__HTTP_MEMO_FIELDS + 1);
	/* no memo at all, and bad arguments: the parser's answers */
	assert_int_equal(
		giong__http_parse_reply_memo(NULL, H1, sizeof(H1) - 1, &lim, false, NULL, &r, fa),
		(int)sizeof(H1) - 1);
	assert_int_equal(
		giong__http_parse_reply_memo(&m, H1, sizeof(H1) - 1, &lim, false, NULL, &r, fa),
		(int)sizeof(H1) - 1);
	assert_int_equal(
		giong__http_parse_reply_memo(&m, H1, sizeof(H1) - 1, &lim, false, NULL, NULL, fa),
		-EINVAL);
	assert_int_equal(
		giong__http_parse_reply_memo(&m, H1, sizeof(H1) - 1, &lim, false, NULL, &r, NULL),
		-EINVAL);
	assert_int_equal(m.hits, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hit),
		cmocka_unit_test(test_miss),
		cmocka_unit_test(test_not_remembered),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
