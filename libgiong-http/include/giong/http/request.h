/* SPDX-License-Identifier: MIT */
/*
 * giong/http/request.h - what a handler reads of its request.
 *
 * A request is lent to the handler: the pointers these functions return
 * point into memory the library owns (the connection's receive buffers),
 * valid until the handler returns. Strings are spans (pointer and length),
 * not NUL-terminated: they are the bytes the client sent, checked by the
 * parser (docs/http.md, "Strictness") but not decoded (no percent-decoding
 * of the path or query). Every function takes a NULL request and answers
 * as for an empty one.
 */
#ifndef GIONG_HTTP_REQUEST_H
#define GIONG_HTTP_REQUEST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <giong/core/api.h>
#include <giong/http/method.h>
#include <giong/net/addr.h>

GIONG_BEGIN_DECLS

struct giong_http_request;

/* giong_http_request_method() - the method's number (enum giong_http_method;
 * GIONG_HTTP_OTHER for one without a number, or a NULL @r). */
GIONG_API int giong_http_request_method(const struct giong_http_request *r);

/* giong_http_request_method_name() - the method token as sent ("GET"); its
 * length in *@len (if @len is non-NULL). "" for a NULL @r. */
GIONG_API const char *giong_http_request_method_name(const struct giong_http_request *r,
						     size_t *len);

/* giong_http_request_target() - the request target as sent ("/a/b?x=1",
 * "http://host/a", "host:443", "*"). */
GIONG_API const char *giong_http_request_target(const struct giong_http_request *r, size_t *len);

/* giong_http_request_path() - the target's path ("/a/b"; "/" for an
 * absolute target without one); "" for authority and asterisk forms. */
GIONG_API const char *giong_http_request_path(const struct giong_http_request *r, size_t *len);

/* giong_http_request_query() - the query after '?', without it; NULL (and
 * *@len 0) when the target has none, which an empty query ("/a?") is not. */
GIONG_API const char *giong_http_request_query(const struct giong_http_request *r, size_t *len);

/* giong_http_request_host() - the authority: an absolute target's, else the
 * Host field's value; NULL (and *@len 0) for an HTTP/1.0 request with none. */
GIONG_API const char *giong_http_request_host(const struct giong_http_request *r, size_t *len);

/* giong_http_request_version() - 11 for HTTP/1.1, 10 for HTTP/1.0, 20 for a
 * stream of HTTP/2 (libgiong-http2; nothing else is accepted); 0 for a NULL
 * @r. */
GIONG_API int giong_http_request_version(const struct giong_http_request *r);

/*
 * giong_http_request_header() - the value of the first field named @name
 * (compared without regard to ASCII case), without the whitespace around it;
 * NULL (and *@len 0) when there is none, or @r or @name is NULL. A field sent
 * twice is two fields: giong_http_request_header_at() sees both.
 */
GIONG_API const char *giong_http_request_header(const struct giong_http_request *r,
						const char *name, size_t *len);

/* giong_http_request_header_count() - the number of fields, in the order
 * sent; 0 for a NULL @r. */
GIONG_API unsigned giong_http_request_header_count(const struct giong_http_request *r);

/*
 * giong_http_request_header_at() - field @i (0-based, in the order sent):
 * its name as sent in *@name / *@name_len, its value in *@value / *@value_len
 * (any of the four may be NULL). Returns 0, or -EINVAL for a NULL @r or an
 * @i past the last field (the outputs are then NULL and 0).
 */
GIONG_API int giong_http_request_header_at(const struct giong_http_request *r, unsigned i,
					   const char **name, size_t *name_len, const char **value,
					   size_t *value_len);

/* giong_http_request_param() - the value the router captured for @name (a
 * route's ":name", or "*" for a trailing catch-all); NULL (and *@len 0) when
 * the route has no such capture. */
GIONG_API const char *giong_http_request_param(const struct giong_http_request *r, const char *name,
					       size_t *len);

/*
 * giong_http_request_client_addr() - the client's address into @out: the one
 * a PROXY protocol header named (when the server expects one), else the
 * connection's peer, asked once per connection. A TCP connection accepted
 * as a direct descriptor (<giong/net/tcp.h>) has no descriptor to ask: the
 * first call gives it one (giong_stream_fd_install(), which may suspend);
 * a listener whose every client is asked (an access log) saves that with
 * giong_listen_options.regular_fds. Returns 0, -EINVAL (NULL argument, or a
 * request not being answered), -ENOTSUP (no socket beneath the stream), the
 * -errno of giong_stream_fd_install() (-EMFILE), or the -errno of
 * getpeername(2). For the handler's task only.
 */
GIONG_API int giong_http_request_client_addr(const struct giong_http_request *r,
					     struct giong_addr *out);

/*
 * The body. Read it whole with giong_http_request_body(), or in pieces with
 * giong_http_request_read() (not both); either way it is de-chunked, bounded
 * by the body limit, and read under the body deadline (from the end of the
 * head). A client that sent "Expect: 100-continue" gets its 100 Continue at
 * the first of these calls, not before: a handler that answers without
 * reading saves the client the upload. A body the handler did not read is
 * read and dropped after it returns (or the connection closed, when that
 * would cost more than a response).
 *
 * Errors a handler may return as they are, and what the client then gets
 * (the connection is closed after each): -EMSGSIZE (the body limit: 413),
 * -ETIMEDOUT (the body deadline: 408), -EBADMSG (a malformed chunked body:
 * 400), -ECONNRESET (the stream ended before the body did: 400, for a client
 * that only half-closed), GIONG_ETLS_TRUNCATED (the same over TLS, the end
 * without close_notify: 400). Also -EPIPE (the client is gone), -EALREADY (read()
 * after body(), or the reverse), -ENOMEM, -EINVAL (NULL arguments).
 */

/*
 * giong_http_request_body() - the whole body: its length (0 for none) with
 * *@data pointing to it (memory the library owns until the handler
 * returns; *@data is non-NULL even for 0), or -errno (above). Calling it
 * again returns the same body. May suspend.
 */
GIONG_API ssize_t giong_http_request_body(struct giong_http_request *r, const void **data);

/*
 * giong_http_request_read() - up to @len next bytes of the body into @buf:
 * the count, 0 at the body's end (and on every later call), or -errno
 * (above). May suspend.
 */
GIONG_API ssize_t giong_http_request_read(struct giong_http_request *r, void *buf, size_t len);

/* giong_http_request_content_length() - the Content-Length sent (0 when
 * there is no body), or -1 for a chunked body (its length is known only at
 * its end); -EINVAL for NULL. */
GIONG_API int64_t giong_http_request_content_length(const struct giong_http_request *r);

GIONG_END_DECLS

#endif /* GIONG_HTTP_REQUEST_H */
