/* SPDX-License-Identifier: MIT */
/*
 * dispatch.c - one request answered, whatever protocol brought it: the
 * router, the body limit, the library's own refusals (413, 404, 405), the
 * handler, what it left open, and the access log. HTTP/1.1's connection
 * loop calls giong__http_dispatch() for each request it parses; an HTTP/2
 * stream calls the same once its head is in.
 */
#include <errno.h>

#include "common/conn.h"
#include "common/options.h"
#include "common/request.h"

void giong__http_log(const struct giong_http_request *req, const struct giong_http_response *res)
{
	const struct giong_http_server *srv = req->c->w->srv;
	struct giong_http_log_entry e = {
		.req = req,
		.status = res->status,
		.body_bytes = res->body_bytes,
		.stream = req->c->s,
	};

	if (srv->log)
		srv->log(&e, srv->log_ctx);
}

int giong__http_dispatch(struct giong_http_request *req, struct giong_http_response *res)
{
	struct giong_http_conn *c = req->c;
	const struct giong_http_server *srv = c->w->srv;
	const struct giong__http_head *h = &req->head;
	struct giong_http_route_match *m = &req->route;
	uint64_t limit;
	int r, hr;

	c->fresh = false;
	if (!h->keep_alive || giong__http_shutting_down(c))
		res->close = true;
	r = giong_http_router_match(srv->router, h->method, h->method_len, h->path, h->path_len, m);
	limit = r == 0 && m->body_limit ? m->body_limit : srv->limits.body;
	req->ops->body_begin(req, limit);
	if (h->body == GIONG__HTTP_BODY_LENGTH && h->content_length > limit) {
		/* Refused before 100 Continue, and before any of the body is read. */
		c->w->stats.body_too_large++;
		res->close = true;
		r = giong__http_response_simple(res, 413, NULL, NULL);
	} else if (h->form == GIONG__HTTP_ASTERISK_FORM) { /* no route can name "*" */
		r = giong__http_options_asterisk(req, res, srv->router);
	} else if (h->form == GIONG__HTTP_AUTHORITY_FORM) { /* CONNECT: no tunnels here */
		r = giong__http_refuse_connect(req, res, srv->router);
	} else if (r == -ENOENT) {
		r = giong__http_response_simple(res, 404, NULL, NULL);
	} else if (r == -EPERM) {
		r = giong__http_response_simple(res, 405, m->allow, NULL);
	} else if (r == 0) {
		hr = m->fn(req, res, m->ctx);
		if (hr < 0)
			c->w->stats.handler_errors++;
		if (giong__http_shutting_down(c))
			res->close = true; /* shutdown began while the handler ran */
		r = giong__http_response_finish(res, hr);
	}
	if (r == 0 && res->ended)
		giong__http_log(req, res);
	return r;
}
