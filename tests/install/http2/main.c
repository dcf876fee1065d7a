// SPDX-License-Identifier: MIT
/*
 * Uses libgiong-http2 through the installed headers and libraries: a server
 * given HTTP/2 beside HTTP/1.1 (the default table, and one made with
 * settings), built and freed. No runtime and no socket: what this checks is
 * that the headers compile outside the tree, that the program links and
 * loads libgiong-http2 (and, through it only, libnghttp2), and that the server
 * takes the protocol list.
 */
#include <stdio.h>

#include <giong/core/version.h>
#include <giong/http.h>
#include <giong/http2.h>

static int hello(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	(void)req;
	(void)ctx;
	return giong_http_response_send(res, "hello", 5);
}

/* A server through @router speaking @h2 and HTTP/1.1, made and freed. 0 or -errno. */
static int server_with(const struct giong_http_router *router, const struct giong_http_protocol *h2)
{
	struct giong_http_server_options o = {
		.protocols = (const struct giong_http_protocol *[]){h2, NULL},
	};
	struct giong_http_server *srv;
	int r;

	r = giong_http_server_new(router, &o, &srv);
	if (r)
		return r;
	return giong_http_server_free(srv);
}

int main(void)
{
	const struct giong_http_protocol *mine;
	struct giong_http2_options h2o;
	struct giong_http_router *router;
	int r;

	if (giong_http_router_new(&router) ||
	    giong_http_router_add(router, "GET", "/hello", hello, NULL)) {
		fprintf(stderr, "consumer: could not make the router\n");
		return 1;
	}
	r = server_with(router, giong_http2());
	if (r) {
		fprintf(stderr, "consumer: a server with giong_http2(): %d\n", r);
		return 1;
	}
	if (giong_http2_options_init(&h2o) != 0) {
		fprintf(stderr, "consumer: giong_http2_options_init() failed\n");
		return 1;
	}
	h2o.max_concurrent_streams = 8;
	r = giong_http2_new(&h2o, &mine);
	if (r || (r = server_with(router, mine)) || (r = giong_http2_free(mine))) {
		fprintf(stderr, "consumer: a server with giong_http2_new(): %d\n", r);
		return 1;
	}
	giong_http_router_free(router);
	printf("consumer: giong %s, a server with %s and HTTP/1.1 made and freed\n",
	       giong_version(), giong_http2()->name);
	return 0;
}
