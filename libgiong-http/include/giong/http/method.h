/* SPDX-License-Identifier: MIT */
/*
 * giong/http/method.h - the request methods the server tells apart by number.
 *
 * A request's method is always available as its token (the bytes the client
 * sent, case-sensitive: "get" is not GET); the number is a shortcut for the
 * methods RFC 9110 and RFC 5789 define. GIONG_HTTP_OTHER is a method the
 * parser knows but that has no number here (WebDAV's PROPFIND, ...): compare
 * its token. A well-formed method the parser does not know is refused with
 * 501 before any handler sees it.
 */
#ifndef GIONG_HTTP_METHOD_H
#define GIONG_HTTP_METHOD_H

#include <giong/core/api.h>

GIONG_BEGIN_DECLS

enum giong_http_method {
	GIONG_HTTP_OTHER = 0, /* known to the parser, no number of its own */
	GIONG_HTTP_GET,
	GIONG_HTTP_HEAD,
	GIONG_HTTP_POST,
	GIONG_HTTP_PUT,
	GIONG_HTTP_DELETE,
	GIONG_HTTP_CONNECT,
	GIONG_HTTP_OPTIONS,
	GIONG_HTTP_TRACE,
	GIONG_HTTP_PATCH,
};

GIONG_END_DECLS

#endif /* GIONG_HTTP_METHOD_H */
