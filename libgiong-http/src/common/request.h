/* SPDX-License-Identifier: MIT */
/*
 * request.h - struct giong_http_request: a parsed head, the fields it points
 * to, and the router's captures. The connection fills one per request from
 * giong__http_parse_head() and giong_http_router_match(); the public
 * accessors (request.c) only read it.
 */
#ifndef GIONG_HTTP_REQUEST_INTERNAL_H
#define GIONG_HTTP_REQUEST_INTERNAL_H

#include <giong/http/request.h>
#include <giong/http/router.h>

#include "h1/parse.h"

struct giong__http_frame;

struct giong_http_request {
	struct giong__http_head head; /* head.fields points at the connection's array */
	struct giong_http_route_match route;
	struct giong__http_frame *frame; /* the connection's, while a handler runs; else NULL */
};

#endif /* GIONG_HTTP_REQUEST_INTERNAL_H */
