/* SPDX-License-Identifier: MIT */
/*
 * router.c - routes tried in the order they were added, each pattern split
 * into segments once, when added. A lookup walks the path's segments beside
 * the pattern's, without copying or allocating: a few routes of a few
 * segments each are what a server has, and a linear scan of them costs less
 * than the request's parsing.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <giong/http/router.h>

#include "common/options.h"
#include "common/token.h"

#define PATTERN_MAX 4096

enum seg_kind { SEG_LITERAL, SEG_PARAM, SEG_REST };

struct segment {
	enum seg_kind kind;
	const char *text; /* literal bytes, or the capture's name (after ':') */
	uint32_t len;
};

struct route {
	char *method; /* NULL: any method */
	size_t method_len;
	char *pattern; /* owned copy; segments point into it */
	struct segment *segs;
	unsigned nsegs;
	giong_http_handler_fn fn;
	void *ctx;
	uint64_t body_limit; /* 0: the server's */
};

struct giong_http_router {
	struct route *routes;
	unsigned n, cap;
};

int giong_http_router_new(struct giong_http_router **ret)
{
	if (!ret)
		return -EINVAL;
	*ret = calloc(1, sizeof(**ret));
	return *ret ? 0 : -ENOMEM;
}

void giong_http_router_free(struct giong_http_router *r)
{
	if (!r)
		return;
	for (unsigned i = 0; i < r->n; i++) {
		free(r->routes[i].method);
		free(r->routes[i].pattern);
		free(r->routes[i].segs);
	}
	free(r->routes);
	free(r);
}

/* Split @pattern (a copy, starting with '/') into @rt's segments. */
static int split_pattern(struct route *rt)
{
	const char *p = rt->pattern + 1, *end = rt->pattern + strlen(rt->pattern);
	unsigned n = 1, params = 0;

	for (const char *c = p; c < end; c++)
		n += *c == '/';
	rt->segs = calloc(n, sizeof(*rt->segs));
	if (!rt->segs)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		const char *q = memchr(p, '/', (size_t)(end - p));
		struct segment *s = &rt->segs[i];

		if (!q)
			q = end;
		s->text = p;
		s->len = (uint32_t)(q - p);
		s->kind = SEG_LITERAL;
		if (s->len && p[0] == ':') {
			if (s->len == 1)
				return -EINVAL; /* ":" with no name */
			s->kind = SEG_PARAM;
			s->text++;
			s->len--;
			params++;
		} else if (s->len == 1 && p[0] == '*') {
			if (i != n - 1)
				return -EINVAL; /* "*" only as the last segment */
			s->kind = SEG_REST;
			params++;
		} else if (memchr(p, '*', s->len)) {
			return -EINVAL; /* "*" only alone */
		}
		p = q + 1;
	}
	if (params > GIONG_HTTP_MAX_PARAMS)
		return -EINVAL;
	rt->nsegs = n;
	return 0;
}

int giong_http_router_add(struct giong_http_router *r, const char *method, const char *pattern,
			  giong_http_handler_fn fn, void *ctx)
{
	return giong_http_router_add_opts(r, method, pattern, fn, ctx, NULL);
}

int giong_http_router_add_opts(struct giong_http_router *r, const char *method, const char *pattern,
			       giong_http_handler_fn fn, void *ctx,
			       const struct giong_http_route_options *opts)
{
	struct route rt = {0};
	size_t plen;
	int err;

	if (!r || !fn || !pattern || pattern[0] != '/')
		return -EINVAL;
	plen = strnlen(pattern, PATTERN_MAX + 1);
	if (plen > PATTERN_MAX)
		return -EINVAL;
	if (method) {
		if (!*method)
			return -EINVAL;
		for (const char *c = method; *c; c++)
			if (!giong__http_is_tchar((unsigned char)*c))
				return -EINVAL;
	}
	for (unsigned i = 0; i < r->n; i++) {
		const struct route *o = &r->routes[i];

		if (!strcmp(o->pattern, pattern) &&
		    (o->method == method || (o->method && method && !strcmp(o->method, method))))
			return -EEXIST;
	}
	rt.pattern = strdup(pattern);
	rt.method = method ? strdup(method) : NULL;
	rt.method_len = method ? strlen(method) : 0;
	rt.fn = fn;
	rt.ctx = ctx;
	rt.body_limit = opts ? opts->body_limit : 0;
	err = !rt.pattern || (method && !rt.method) ? -ENOMEM : split_pattern(&rt);
	if (!err && r->n == r->cap) {
		unsigned cap = r->cap ? r->cap * 2 : 8;
		struct route *n = realloc(r->routes, cap * sizeof(*n));

		if (n) {
			r->routes = n;
			r->cap = cap;
		} else {
			err = -ENOMEM;
		}
	}
	if (err) {
		free(rt.pattern);
		free(rt.method);
		free(rt.segs);
		return err;
	}
	r->routes[r->n++] = rt;
	return 0;
}

/* Whether @rt's pattern matches @path (starting with '/'); captures into @m. */
static bool path_matches(const struct route *rt, const char *path, size_t len,
			 struct giong_http_route_match *m)
{
	const char *p = path + 1, *end = path + len;
	bool more = true; /* a segment of the path is left at p (an empty one included) */
	unsigned np = 0;

	for (unsigned i = 0; i < rt->nsegs; i++) {
		const struct segment *s = &rt->segs[i];
		const char *q;

		if (!more)
			return false;
		if (s->kind == SEG_REST) {
			m->params[np].name = "*";
			m->params[np].name_len = 1;
			m->params[np].value = p;
			m->params[np].value_len = (size_t)(end - p);
			np++;
			m->nparams = np;
			return true;
		}
		q = memchr(p, '/', (size_t)(end - p));
		if (!q)
			q = end;
		if (s->kind == SEG_LITERAL) {
			if ((size_t)(q - p) != s->len || memcmp(p, s->text, s->len))
				return false;
		} else { /* SEG_PARAM: any non-empty segment */
			if (q == p)
				return false;
			m->params[np].name = s->text;
			m->params[np].name_len = s->len;
			m->params[np].value = p;
			m->params[np].value_len = (size_t)(q - p);
			np++;
		}
		more = q < end;
		p = q + 1;
	}
	if (more)
		return false; /* the path goes on past the pattern */
	m->nparams = np;
	return true;
}

static bool method_matches(const struct route *rt, const char *method, size_t len)
{
	if (!rt->method)
		return true;
	if (rt->method_len == len && !memcmp(rt->method, method, len))
		return true;
	/* A GET route answers HEAD (RFC 9110 9.3.2). */
	return len == 4 && !memcmp(method, "HEAD", 4) && !strcmp(rt->method, "GET");
}

/* Add @name to the Allow list in @allow (bounded; no duplicates). */
static void allow_add(char *allow, size_t cap, const char *name)
{
	size_t used = strlen(allow), n = strlen(name);
	const char *hit = strstr(allow, name);

	/* A whole item already there (items are separated by ", "). */
	while (hit) {
		if ((hit == allow || hit[-1] == ' ') && (hit[n] == ',' || hit[n] == '\0'))
			return;
		hit = strstr(hit + 1, name);
	}
	if (used + (used ? 2 : 0) + n + 1 > cap)
		return; /* full: a long list is cut, never overflowed */
	if (used) {
		memcpy(allow + used, ", ", 2);
		used += 2;
	}
	memcpy(allow + used, name, n + 1);
}

int giong_http_router_match(const struct giong_http_router *r, const char *method,
			    size_t method_len, const char *path, size_t path_len,
			    struct giong_http_route_match *m)
{
	bool path_known = false;

	if (!r || !method || !path || !m)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	if (!path_len || path[0] != '/')
		return -ENOENT; /* "*" (OPTIONS), or nothing a route can name */
	for (unsigned i = 0; i < r->n; i++) {
		const struct route *rt = &r->routes[i];

		/* Captures go straight into @m (a failed try leaves stale ones,
		 * which the next try overwrites); the Allow list is apart. */
		if (!path_matches(rt, path, path_len, m))
			continue;
		if (method_matches(rt, method, method_len)) {
			m->fn = rt->fn;
			m->ctx = rt->ctx;
			m->body_limit = rt->body_limit;
			m->pattern = rt->pattern;
			return 0;
		}
		path_known = true;
		allow_add(m->allow, sizeof(m->allow), rt->method);
		if (!strcmp(rt->method, "GET"))
			allow_add(m->allow, sizeof(m->allow), "HEAD");
	}
	return path_known ? -EPERM : -ENOENT;
}

void giong__http_router_methods(const struct giong_http_router *r, char *allow, size_t cap)
{
	/* What a route for every method stands for: method.h's methods but CONNECT. */
	static const char *const any[] = {"GET",    "HEAD",    "POST",  "PUT",
					  "DELETE", "OPTIONS", "TRACE", "PATCH"};

	if (!allow || !cap)
		return;
	allow[0] = '\0';
	for (unsigned i = 0; r && i < r->n; i++) {
		const char *m = r->routes[i].method;

		if (!m) {
			for (size_t k = 0; k < sizeof(any) / sizeof(any[0]); k++)
				allow_add(allow, cap, any[k]);
			continue;
		}
		allow_add(allow, cap, m);
		if (!strcmp(m, "GET"))
			allow_add(allow, cap, "HEAD");
	}
}
