/* SPDX-License-Identifier: MIT */
/* test_request.c - the request accessors over a real parse and route. */
#include <errno.h>
#include <string.h>

#include "giong_test.h"

#include <giong/http.h>

#include "common/request.h"
#include "h1/parse.h"

struct parsed {
	char buf[2048];
	struct giong_http_field fields[GIONG_HTTP_LIMIT_FIELDS];
	struct giong_http_request req;
};

static int h(struct giong_http_request *q, struct giong_http_response *s, void *c)
{
	(void)q, (void)s, (void)c;
	return 0;
}

/* Parse @text as a whole head into @p; route it when @r is non-NULL. */
static void parse(struct parsed *p, const char *text, struct giong_http_router *r)
{
	size_t n = strlen(text);
	int got;

	memset(p, 0, sizeof(*p));
	assert_true(n < sizeof(p->buf));
	memcpy(p->buf, text, n);
	got = giong__http_parse_head(p->buf, n, NULL, NULL, &p->req.head, p->fields, NULL);
	assert_int_equal(got, (int)n);
	if (r) {
		const struct giong__http_head *hd = &p->req.head;

		assert_int_equal(giong_http_router_match(r, hd->method, hd->method_len, hd->path,
							 hd->path_len, &p->req.route),
				 0);
	}
}

#define SPAN_EQ(p, n, s)                                                                           \
	do {                                                                                       \
		assert_int_equal((n), strlen(s));                                                  \
		assert_memory_equal((p), (s), strlen(s));                                          \
	} while (0)

static void test_accessors(void **state)
{
	static struct parsed p;
	struct giong_http_router *r;
	const char *v, *name;
	size_t n, nn;

	(void)state;
	assert_int_equal(giong_http_router_new(&r), 0);
	assert_int_equal(giong_http_router_add(r, "POST", "/users/:id/*", h, NULL), 0);
	parse(&p,
	      "POST /users/42/avatar/big?size=3&x HTTP/1.1\r\n"
	      "Host: example.com:8080\r\n"
	      "content-TYPE:  text/plain \r\n"
	      "X-Twice: a\r\n"
	      "X-Twice: b\r\n"
	      "Content-Length: 0\r\n"
	      "\r\n",
	      r);
	const struct giong_http_request *q = &p.req;

	assert_int_equal(giong_http_request_method(q), GIONG_HTTP_POST);
	v = giong_http_request_method_name(q, &n);
	SPAN_EQ(v, n, "POST");
	v = giong_http_request_target(q, &n);
	SPAN_EQ(v, n, "/users/42/avatar/big?size=3&x");
	v = giong_http_request_path(q, &n);
	SPAN_EQ(v, n, "/users/42/avatar/big");
	v = giong_http_request_query(q, &n);
	SPAN_EQ(v, n, "size=3&x");
	v = giong_http_request_host(q, &n);
	SPAN_EQ(v, n, "example.com:8080");
	assert_int_equal(giong_http_request_version(q), 11);
	/* Fields: any case, no whitespace around the value, the first of two. */
	v = giong_http_request_header(q, "Content-Type", &n);
	SPAN_EQ(v, n, "text/plain");
	v = giong_http_request_header(q, "x-twice", &n);
	SPAN_EQ(v, n, "a");
	assert_null(giong_http_request_header(q, "X-Missing", &n));
	assert_int_equal(n, 0);
	assert_null(giong_http_request_header(q, "Content-Typ", NULL)); /* whole names only */
	assert_int_equal(giong_http_request_header_count(q), 5);
	assert_int_equal(giong_http_request_header_at(q, 3, &name, &nn, &v, &n), 0);
	SPAN_EQ(name, nn, "X-Twice");
	SPAN_EQ(v, n, "b");
	assert_int_equal(giong_http_request_header_at(q, 1, &name, &nn, NULL, NULL), 0);
	SPAN_EQ(name, nn, "content-TYPE"); /* as sent */
	assert_int_equal(giong_http_request_header_at(q, 5, &name, &nn, &v, &n), -EINVAL);
	assert_null(name);
	assert_null(v);
	assert_int_equal(nn + n, 0);
	/* The router's captures. */
	v = giong_http_request_param(q, "id", &n);
	SPAN_EQ(v, n, "42");
	v = giong_http_request_param(q, "*", &n);
	SPAN_EQ(v, n, "avatar/big");
	assert_null(giong_http_request_param(q, "ID", &n));
	assert_null(giong_http_request_param(q, NULL, &n));
	giong_http_router_free(r);
}

static void test_forms_and_versions(void **state)
{
	static struct parsed p;
	const char *v;
	size_t n;

	(void)state;
	parse(&p, "GET /a? HTTP/1.1\r\nHost: h\r\n\r\n", NULL);
	v = giong_http_request_query(&p.req, &n);
	assert_non_null(v); /* an empty query is not no query */
	assert_int_equal(n, 0);
	parse(&p, "GET /a HTTP/1.1\r\nHost: h\r\n\r\n", NULL);
	assert_null(giong_http_request_query(&p.req, &n));
	assert_int_equal(n, 0);
	parse(&p, "GET http://other.example/x/y?q HTTP/1.1\r\nHost: h\r\n\r\n", NULL);
	v = giong_http_request_host(&p.req, &n);
	SPAN_EQ(v, n, "other.example"); /* the absolute target's authority wins */
	v = giong_http_request_path(&p.req, &n);
	SPAN_EQ(v, n, "/x/y");
	parse(&p, "OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n", NULL);
	v = giong_http_request_path(&p.req, &n);
	SPAN_EQ(v, n, "");
	v = giong_http_request_target(&p.req, &n);
	SPAN_EQ(v, n, "*");
	assert_int_equal(giong_http_request_method(&p.req), GIONG_HTTP_OPTIONS);
	parse(&p, "GET / HTTP/1.0\r\n\r\n", NULL);
	assert_int_equal(giong_http_request_version(&p.req), 10);
	assert_null(giong_http_request_host(&p.req, &n));
	assert_int_equal(n, 0);
	assert_int_equal(giong_http_request_header_count(&p.req), 0);
}

static void test_null_request(void **state)
{
	const char *name = "x", *value = "y";
	size_t n = 9, nn = 9;

	(void)state;
	assert_int_equal(giong_http_request_method(NULL), GIONG_HTTP_OTHER);
	assert_string_equal(giong_http_request_method_name(NULL, &n), "");
	assert_int_equal(n, 0);
	assert_string_equal(giong_http_request_target(NULL, NULL), "");
	assert_string_equal(giong_http_request_path(NULL, NULL), "");
	assert_null(giong_http_request_query(NULL, &n));
	assert_null(giong_http_request_host(NULL, &n));
	assert_int_equal(giong_http_request_version(NULL), 0);
	assert_null(giong_http_request_header(NULL, "Host", &n));
	assert_int_equal(giong_http_request_header_count(NULL), 0);
	assert_int_equal(giong_http_request_header_at(NULL, 0, &name, &nn, &value, &n), -EINVAL);
	assert_null(name);
	assert_null(value);
	assert_null(giong_http_request_param(NULL, "id", &n));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accessors),
		cmocka_unit_test(test_forms_and_versions),
		cmocka_unit_test(test_null_request),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
