/* SPDX-License-Identifier: MIT */
/*
 * giong/http/router.h - handlers chosen by method and path.
 *
 * A pattern is a path whose segments are matched one by one: a literal
 * segment matches itself byte for byte (the path is matched as it was sent,
 * without percent-decoding; the query is not part of it), `:name` matches
 * any non-empty segment and captures it, and a last segment `*` matches the
 * rest of the path, empty included (the pattern /static/ followed by *
 * matches "/static/" and "/static/css/a.css"; capture name "*"). Routes are tried in the order they
 * were added; the first that matches wins, so add the specific before the
 * general. A GET route also answers HEAD.
 *
 * A router is built once, before serving, and then only read: lookups from
 * every worker at once are safe; adding while serving is not.
 */
#ifndef GIONG_HTTP_ROUTER_H
#define GIONG_HTTP_ROUTER_H

#include <stddef.h>
#include <stdint.h>

#include <giong/core/api.h>

GIONG_BEGIN_DECLS

struct giong_http_request;
struct giong_http_response;

/*
 * A handler: runs in the connection's task (it may suspend: read a body,
 * wait, write). Returns 0, or -errno: if nothing of the response was sent
 * yet the server answers 500 and the connection goes on; otherwise the
 * connection is closed.
 */
typedef int (*giong_http_handler_fn)(struct giong_http_request *req,
				     struct giong_http_response *res, void *ctx);

struct giong_http_router;

/* Most captures one route may have. */
#define GIONG_HTTP_MAX_PARAMS 8

/* What giong_http_router_match() found. Spans point into the pattern (names)
 * and into the matched path (values). */
struct giong_http_route_match {
	giong_http_handler_fn fn;
	void *ctx;
	const char *pattern; /* the route's pattern, as added */
	uint64_t body_limit; /* the route's body limit; 0: the server's */
	unsigned nparams;
	struct {
		const char *name, *value;
		size_t name_len, value_len;
	} params[GIONG_HTTP_MAX_PARAMS];
	char allow[96]; /* -EPERM: the methods the path has, "GET, HEAD, POST" */
};

/* giong_http_router_new() - an empty router in *@ret. Returns 0, -EINVAL,
 * -ENOMEM. */
GIONG_API int giong_http_router_new(struct giong_http_router **ret);

/* giong_http_router_free() - free @r (NULL: nothing). Not while serving. */
GIONG_API void giong_http_router_free(struct giong_http_router *r);

/*
 * giong_http_router_add() - route @method (a token such as "GET"; NULL for
 * every method) and @pattern (starting with '/') to @fn(req, res, @ctx).
 * Both strings are copied. Returns 0; -EINVAL (NULL @r or @fn, a method that
 * is not a token, a pattern not starting with '/', a `:` with no name, `*`
 * not alone in the last segment, more than GIONG_HTTP_MAX_PARAMS captures,
 * a pattern over 4 KiB); -EEXIST (the same method and pattern again);
 * -ENOMEM.
 */
GIONG_API int giong_http_router_add(struct giong_http_router *r, const char *method,
				    const char *pattern, giong_http_handler_fn fn, void *ctx);

/* Per-route settings of giong_http_router_add_opts(). Zero fields: the
 * server's. */
struct giong_http_route_options {
	/* The most body bytes this route takes (after de-chunking), in place of
	 * the server's limits.body: more for an upload route that streams its
	 * body with giong_http_request_read(), less for one that wants none. */
	uint64_t body_limit;
};

/* giong_http_router_add_opts() - giong_http_router_add() with @opts (may be
 * NULL: the same as giong_http_router_add()). Returns the same. */
GIONG_API int giong_http_router_add_opts(struct giong_http_router *r, const char *method,
					 const char *pattern, giong_http_handler_fn fn, void *ctx,
					 const struct giong_http_route_options *opts);

/*
 * giong_http_router_match() - the route for @method and @path (spans, not
 * NUL-terminated; the path without its query). Returns 0 with *@m filled;
 * -ENOENT when no route has this path (404); -EPERM when the path has routes
 * under other methods only (405: m->allow lists them for the Allow header);
 * -EINVAL for NULL arguments.
 */
GIONG_API int giong_http_router_match(const struct giong_http_router *r, const char *method,
				      size_t method_len, const char *path, size_t path_len,
				      struct giong_http_route_match *m);

GIONG_END_DECLS

#endif /* GIONG_HTTP_ROUTER_H */
