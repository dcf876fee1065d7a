/* SPDX-License-Identifier: MIT */
/*
 * h2_request.h - giong-load --h2, inside: what every stream of the run sends (h2_request.c
 * makes it from the URL and the options; h2.c's connections read it). Only with libnghttp2.
 */
#ifndef GIONG_LOAD_H2_REQUEST_H
#define GIONG_LOAD_H2_REQUEST_H

#ifdef GIONG_LOAD_HAVE_H2

#include <nghttp2/nghttp2.h>

#include "h2.h"

struct load_h2 {
	bool tls, head;
	char host[256];      /* the SNI name: the URL's host, no brackets */
	char addr[300];      /* host:port, for giong_tcp_connect() */
	char authority[300]; /* :authority: the URL's, or -H Host's */
	char clen[24];
	char *path;     /* :path: the URL's path and query ("/" when it has none) */
	nghttp2_nv *nv; /* the request's fields, the same for every stream */
	size_t nvlen;
	const char *body;
	size_t body_len;
	uint32_t streams;
	uint64_t timeout_ms;
	giong_http_connect_fn connect;
	void *connect_ctx;
};

#endif /* GIONG_LOAD_HAVE_H2 */

#endif /* GIONG_LOAD_H2_REQUEST_H */
