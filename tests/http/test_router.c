/* SPDX-License-Identifier: MIT */
/* test_router.c - patterns, captures, order, HEAD from GET, 404 against 405
 * and its Allow list, and every refused pattern. */
#include <errno.h>
#include <string.h>

#include "giong_test.h"

#include <giong/http.h>

static int h_a(struct giong_http_request *q, struct giong_http_response *s, void *c)
{
	(void)q, (void)s, (void)c;
	return 0;
}

static int h_b(struct giong_http_request *q, struct giong_http_response *s, void *c)
{
	(void)q, (void)s, (void)c;
	return 1;
}

static int match(struct giong_http_router *r, const char *method, const char *path,
		 struct giong_http_route_match *m)
{
	return giong_http_router_match(r, method, strlen(method), path, strlen(path), m);
}

static void assert_param(const struct giong_http_route_match *m, unsigned i, const char *name,
			 const char *value)
{
	assert_true(i < m->nparams);
	assert_int_equal(m->params[i].name_len, strlen(name));
	assert_memory_equal(m->params[i].name, name, strlen(name));
	assert_int_equal(m->params[i].value_len, strlen(value));
	assert_memory_equal(m->params[i].value, value, strlen(value));
}

static void test_literals_and_captures(void **state)
{
	struct giong_http_router *r;
	struct giong_http_route_match m;
	int tag = 7;

	(void)state;
	assert_int_equal(giong_http_router_new(&r), 0);
	assert_int_equal(giong_http_router_add(r, "GET", "/", h_a, NULL), 0);
	assert_int_equal(giong_http_router_add(r, "GET", "/json", h_a, &tag), 0);
	assert_int_equal(giong_http_router_add(r, "GET", "/users/:id", h_b, NULL), 0);
	assert_int_equal(giong_http_router_add(r, "GET", "/users/:id/posts/:post", h_a, NULL), 0);
	assert_int_equal(giong_http_router_add(r, "GET", "/static/*", h_b, NULL), 0);

	assert_int_equal(match(r, "GET", "/", &m), 0);
	assert_string_equal(m.pattern, "/");
	assert_int_equal(m.nparams, 0);
	assert_int_equal(match(r, "GET", "/json", &m), 0);
	assert_ptr_equal(m.fn, h_a);
	assert_ptr_equal(m.ctx, &tag);
	assert_int_equal(match(r, "GET", "/users/42", &m), 0);
	assert_ptr_equal(m.fn, h_b);
	assert_int_equal(m.nparams, 1);
	assert_param(&m, 0, "id", "42");
	assert_int_equal(match(r, "GET", "/users/42/posts/x-1", &m), 0);
	assert_int_equal(m.nparams, 2);
	assert_param(&m, 0, "id", "42");
	assert_param(&m, 1, "post", "x-1");
	assert_int_equal(match(r, "GET", "/static/css/a.css", &m), 0);
	assert_param(&m, 0, "*", "css/a.css");
	assert_int_equal(match(r, "GET", "/static/", &m), 0);
	assert_param(&m, 0, "*", "");

	/* Not matched: a capture needs a non-empty segment, the path may not
	 * go on past the pattern or stop short, literals are exact and case
	 * sensitive, no percent-decoding. */
	assert_int_equal(match(r, "GET", "/users/", &m), -ENOENT);
	assert_int_equal(match(r, "GET", "/users", &m), -ENOENT);
	assert_int_equal(match(r, "GET", "/users/42/posts", &m), -ENOENT);
	assert_int_equal(match(r, "GET", "/json/", &m), -ENOENT);
	assert_int_equal(match(r, "GET", "/JSON", &m), -ENOENT);
	assert_int_equal(match(r, "GET", "/%6Ason", &m), -ENOENT);
	assert_int_equal(match(r, "GET", "/static", &m), -ENOENT);
	assert_int_equal(match(r, "GET", "", &m), -ENOENT);
	assert_int_equal(match(r, "OPTIONS", "*", &m), -ENOENT);
	assert_int_equal(match(r, "GET", "json", &m), -ENOENT);
	giong_http_router_free(r);
}

static void test_methods_and_allow(void **state)
{
	struct giong_http_router *r;
	struct giong_http_route_match m;

	(void)state;
	assert_int_equal(giong_http_router_new(&r), 0);
	assert_int_equal(giong_http_router_add(r, "GET", "/items", h_a, NULL), 0);
	assert_int_equal(giong_http_router_add(r, "POST", "/items", h_b, NULL), 0);
	assert_int_equal(giong_http_router_add(r, "DELETE", "/items/:id", h_a, NULL), 0);
	assert_int_equal(giong_http_router_add(r, NULL, "/any", h_b, NULL), 0);

	assert_int_equal(match(r, "GET", "/items", &m), 0);
	assert_ptr_equal(m.fn, h_a);
	assert_int_equal(match(r, "POST", "/items", &m), 0);
	assert_ptr_equal(m.fn, h_b);
	assert_int_equal(match(r, "HEAD", "/items", &m), 0); /* from GET */
	assert_ptr_equal(m.fn, h_a);
	assert_int_equal(match(r, "PUT", "/items", &m), -EPERM);
	assert_string_equal(m.allow, "GET, HEAD, POST");
	assert_int_equal(match(r, "GET", "/items/3", &m), -EPERM);
	assert_string_equal(m.allow, "DELETE");
	assert_int_equal(match(r, "get", "/items", &m), -EPERM); /* methods are case sensitive */
	assert_int_equal(match(r, "BREW", "/any", &m), 0);
	assert_int_equal(match(r, "GET", "/any", &m), 0);
	assert_int_equal(match(r, "GET", "/nothing", &m), -ENOENT);
	giong_http_router_free(r);
}

static void test_order_first_wins(void **state)
{
	struct giong_http_router *r;
	struct giong_http_route_match m;

	(void)state;
	assert_int_equal(giong_http_router_new(&r), 0);
	assert_int_equal(giong_http_router_add(r, "GET", "/users/me", h_a, NULL), 0);
	assert_int_equal(giong_http_router_add(r, "GET", "/users/:id", h_b, NULL), 0);
	assert_int_equal(giong_http_router_add(r, "GET", "/*", h_a, NULL), 0);
	assert_int_equal(match(r, "GET", "/users/me", &m), 0);
	assert_ptr_equal(m.fn, h_a);
	assert_int_equal(m.nparams, 0);
	assert_int_equal(match(r, "GET", "/users/you", &m), 0);
	assert_ptr_equal(m.fn, h_b);
	assert_int_equal(match(r, "GET", "/elsewhere/deep", &m), 0); /* the catch-all */
	assert_string_equal(m.pattern, "/*");
	assert_param(&m, 0, "*", "elsewhere/deep");
	giong_http_router_free(r);
}

static void test_refused(void **state)
{
	struct giong_http_router *r;
	struct giong_http_route_match m;
	char longp[4100];

	(void)state;
	assert_int_equal(giong_http_router_new(NULL), -EINVAL);
	giong_http_router_free(NULL);
	assert_int_equal(giong_http_router_new(&r), 0);
	assert_int_equal(giong_http_router_add(NULL, "GET", "/", h_a, NULL), -EINVAL);
	assert_int_equal(giong_http_router_add(r, "GET", "/", NULL, NULL), -EINVAL);
	assert_int_equal(giong_http_router_add(r, "GET", NULL, h_a, NULL), -EINVAL);
	assert_int_equal(giong_http_router_add(r, "GET", "", h_a, NULL), -EINVAL);
	assert_int_equal(giong_http_router_add(r, "GET", "json", h_a, NULL), -EINVAL);
	assert_int_equal(giong_http_router_add(r, "", "/", h_a, NULL), -EINVAL);
	assert_int_equal(giong_http_router_add(r, "G ET", "/", h_a, NULL), -EINVAL);
	assert_int_equal(giong_http_router_add(r, "GET\r\n", "/", h_a, NULL), -EINVAL);
	assert_int_equal(giong_http_router_add(r, "GET", "/a/:", h_a, NULL), -EINVAL);
	assert_int_equal(giong_http_router_add(r, "GET", "/*/a", h_a, NULL), -EINVAL);
	assert_int_equal(giong_http_router_add(r, "GET", "/a*", h_a, NULL), -EINVAL);
	assert_int_equal(giong_http_router_add(r, "GET", "/:a/:b/:c/:d/:e/:f/:g/:h/:i", h_a, NULL),
			 -EINVAL);
	assert_int_equal(giong_http_router_add(r, "GET", "/:a/:b/:c/:d/:e/:f/:g/:h", h_a, NULL), 0);
	memset(longp, 'a', sizeof(longp) - 1);
	longp[0] = '/';
	longp[sizeof(longp) - 1] = '\0';
	assert_int_equal(giong_http_router_add(r, "GET", longp, h_a, NULL), -EINVAL);
	assert_int_equal(giong_http_router_add(r, "GET", "/x", h_a, NULL), 0);
	assert_int_equal(giong_http_router_add(r, "GET", "/x", h_b, NULL), -EEXIST);
	assert_int_equal(giong_http_router_add(r, NULL, "/x", h_b, NULL), 0);
	assert_int_equal(giong_http_router_add(r, NULL, "/x", h_b, NULL), -EEXIST);
	assert_int_equal(giong_http_router_match(NULL, "GET", 3, "/", 1, &m), -EINVAL);
	assert_int_equal(giong_http_router_match(r, NULL, 3, "/", 1, &m), -EINVAL);
	assert_int_equal(giong_http_router_match(r, "GET", 3, NULL, 1, &m), -EINVAL);
	assert_int_equal(giong_http_router_match(r, "GET", 3, "/", 1, NULL), -EINVAL);
	giong_http_router_free(r);
}

static void test_long_allow_is_cut(void **state)
{
	struct giong_http_router *r;
	struct giong_http_route_match m;
	char method[32];

	(void)state;
	assert_int_equal(giong_http_router_new(&r), 0);
	for (int i = 0; i < 40; i++) {
		snprintf(method, sizeof(method), "METHOD%02d", i);
		assert_int_equal(giong_http_router_add(r, method, "/p", h_a, NULL), 0);
	}
	assert_int_equal(match(r, "GET", "/p", &m), -EPERM);
	assert_true(strlen(m.allow) < sizeof(m.allow));
	assert_memory_equal(m.allow, "METHOD00, METHOD01", 18);
	giong_http_router_free(r);
}

/* A route's own body limit comes with its match; others have 0 (the server's). */
static void test_route_options(void **state)
{
	struct giong_http_route_options big = {.body_limit = 64u << 20};
	struct giong_http_route_match m;
	struct giong_http_router *r;

	(void)state;
	assert_int_equal(giong_http_router_new(&r), 0);
	assert_int_equal(giong_http_router_add_opts(r, "PUT", "/upload", h_a, NULL, &big), 0);
	assert_int_equal(giong_http_router_add_opts(r, "GET", "/plain", h_b, NULL, NULL), 0);
	assert_int_equal(giong_http_router_add_opts(r, "PUT", "/upload", h_b, NULL, &big), -EEXIST);
	assert_int_equal(giong_http_router_add_opts(NULL, "PUT", "/x", h_a, NULL, &big), -EINVAL);
	assert_int_equal(giong_http_router_match(r, "PUT", 3, "/upload", 7, &m), 0);
	assert_ptr_equal(m.fn, h_a);
	assert_int_equal(m.body_limit, 64u << 20);
	assert_int_equal(giong_http_router_match(r, "GET", 3, "/plain", 6, &m), 0);
	assert_int_equal(m.body_limit, 0);
	giong_http_router_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_literals_and_captures),
		cmocka_unit_test(test_methods_and_allow),
		cmocka_unit_test(test_order_first_wins),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_long_allow_is_cut),
		cmocka_unit_test(test_route_options),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
