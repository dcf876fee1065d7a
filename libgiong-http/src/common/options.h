/* SPDX-License-Identifier: MIT */
/*
 * options.h - `OPTIONS *` (RFC 9110 9.3.7): a request about the server itself,
 * not about any resource, and CONNECT, whose target is an authority: no route can
 * name either (a pattern starts with '/').
 * The library answers it for every server built on it: 200, Content-Length: 0,
 * and Allow listing the methods the router has a route for, OPTIONS included.
 * Protocol-neutral: the request and the response are the common objects, so
 * HTTP/2 answers its `:path *` the same way. Internal to libgiong-http.
 */
#ifndef GIONG_HTTP_OPTIONS_H
#define GIONG_HTTP_OPTIONS_H

#include <stddef.h>

struct giong_http_request;
struct giong_http_response;
struct giong_http_router;

/* Room for the Allow list of `OPTIONS *`: the eight methods of method.h a route for
 * any method stands for, and a few of a server's own; a longer list is cut at a whole
 * method (router.c's bound), never overflowed. */
#define GIONG__HTTP_OPTIONS_ALLOW_MAX 160u

/*
 * giong__http_router_methods() - the methods @r has any route for into @allow
 * (NUL-terminated, "GET, HEAD, POST", in the order the routes were added, each once):
 * a GET route adds HEAD too (it answers HEAD), and a route for every method (NULL)
 * adds the methods of <giong/http/method.h> that can reach a route (CONNECT cannot:
 * its target is no path). Cut at a whole method when @cap is short. Nothing for a
 * NULL @r; nothing at all for a NULL @allow or a zero @cap. Defined in router.c,
 * which alone sees the routes.
 */
void giong__http_router_methods(const struct giong_http_router *r, char *allow, size_t cap);

/*
 * giong__http_options_asterisk() - answer @req, an `OPTIONS *` request, on @res:
 * 200 with Allow (giong__http_router_methods() of @r, and OPTIONS, which the server
 * itself answers) and an empty body (Content-Length: 0: RFC 9110 9.3.7 asks for it
 * when no content is sent). Clears @req's route match (no route ran; the log sees
 * none). Returns 0, or -errno from queueing the response (close the connection);
 * -EINVAL for NULL @req or @res.
 */
int giong__http_options_asterisk(struct giong_http_request *req, struct giong_http_response *res,
				 const struct giong_http_router *r);

/*
 * giong__http_refuse_connect() - answer @req, a CONNECT (authority-form target, which
 * no route can name: the library is an origin server, not a tunnel), on @res: 405 with
 * the same Allow as `OPTIONS *`, and Connection: close (bytes after the head may be the
 * tunnel's, never a request). Clears @req's route match. Returns 0, or -errno from
 * queueing the response; -EINVAL for NULL @req or @res.
 */
int giong__http_refuse_connect(struct giong_http_request *req, struct giong_http_response *res,
			       const struct giong_http_router *r);

#endif /* GIONG_HTTP_OPTIONS_H */
