/* SPDX-License-Identifier: MIT */
/*
 * giong/http/response.h - what a handler sends.
 *
 * A response is lent to the handler with its request. In order: set the
 * status (200 if never set), add fields, then give the body one of four
 * ways, each of which ends the response:
 *  - giong_http_response_send(): a body from memory, with Content-Length;
 *  - giong_http_response_write() ... giong_http_response_end(): a body
 *    streamed in pieces (chunked in HTTP/1.1; in HTTP/1.0, where there is no
 *    chunked coding, ended by closing the connection);
 *  - giong_http_response_sendfile(): a body from an open file, which goes
 *    from the page cache to a plain socket without a copy through user space;
 *  - nothing: a handler that returns 0 having sent nothing gets a 500, as
 *    one that returns an error before sending does.
 * Small responses are queued in the connection's output batch and leave
 * with the responses to the other requests of the same receive, in one
 * write; large ones, streamed ones and files are written as they come
 * (after what is queued before them, so responses never reorder).
 *
 * The library writes the framing fields itself (Content-Length,
 * Transfer-Encoding, Connection, Date, and Server if configured): a handler
 * that adds one of those gets -EINVAL. A field name must be a token and a
 * value may hold no CR, LF, NUL or other control byte but HTAB (-EINVAL),
 * so no handler can split a response. HEAD gets the fields of GET and no
 * body (the body given is dropped). 204 and 304 never carry a body.
 *
 * Every function takes a NULL response and returns -EINVAL. They may suspend
 * (a write waits for the peer) and are for the handler's task only.
 */
#ifndef GIONG_HTTP_RESPONSE_H
#define GIONG_HTTP_RESPONSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <giong/core/api.h>

GIONG_BEGIN_DECLS

struct giong_http_response;

/*
 * giong_http_response_status() - the status to send: 200..599 (1xx is the
 * library's: 100 Continue is sent when the handler first reads a body that
 * the client said it would send on 100-continue). Returns 0, -EINVAL for a
 * status outside 200..599, -EALREADY once the status line was written (the
 * first field added, or the body begun).
 */
GIONG_API int giong_http_response_status(struct giong_http_response *res, int status);

/*
 * giong_http_response_header() - add the field @name: @value (NUL-terminated;
 * both copied). A name sent twice is two fields. Returns 0; -EINVAL (a NULL
 * or bad name or value, a framing field, see above); -EALREADY once the body
 * was begun; -E2BIG past the output limit of one response head (64 KiB);
 * -ENOMEM.
 */
GIONG_API int giong_http_response_header(struct giong_http_response *res, const char *name,
					 const char *value);

/* giong_http_response_header_n() - the same with spans (not NUL-terminated). */
GIONG_API int giong_http_response_header_n(struct giong_http_response *res, const char *name,
					   size_t name_len, const char *value, size_t value_len);

/*
 * giong_http_response_send() - the body @body[0..@len) with its
 * Content-Length, which ends the response. @body is borrowed until this
 * returns (copied into the batch, or written before returning). Returns 0;
 * -EINVAL (NULL @body with @len > 0; a body on a 204 or 304); -EALREADY (the
 * response was begun another way or ended); -EPIPE, -ECONNRESET, -ETIMEDOUT
 * (the write deadline) once the connection failed: return it, the connection
 * is closed. May suspend.
 */
GIONG_API int giong_http_response_send(struct giong_http_response *res, const void *body,
				       size_t len);

/*
 * giong_http_response_write() - the next piece of a streamed body (@len 0
 * writes nothing). The first call sends the head. Returns 0 or -errno as
 * giong_http_response_send() (-EALREADY after a send, a sendfile or an end).
 * May suspend.
 */
GIONG_API int giong_http_response_write(struct giong_http_response *res, const void *buf,
					size_t len);

/*
 * giong_http_response_end() - end a streamed body (the last chunk; for a
 * response with no write yet, an empty chunked body). Returns 0, -EALREADY
 * when the response already ended, or -errno of the write. May suspend.
 */
GIONG_API int giong_http_response_end(struct giong_http_response *res);

/*
 * giong_http_response_sendfile() - the body from @fd (a regular file, open
 * for reading), @len bytes from @offset, with Content-Length: spliced from
 * the page cache to the socket when the connection is a plain socket
 * (io_uring splice through a pipe of the worker's), read into a buffer and
 * written otherwise (TLS). @fd is borrowed until this returns: the caller
 * closes it. The file must not shrink meanwhile: a short read ends the
 * connection (the client sees a body cut short, never a wrong one). Returns
 * 0; -EINVAL (bad @fd, a negative @offset); -EALREADY; -EIO (the file was
 * shorter than @len); -errno of the read or the write. May suspend.
 */
GIONG_API int giong_http_response_sendfile(struct giong_http_response *res, int fd, off_t offset,
					   uint64_t len);

/* giong_http_response_started() - whether the status line was written (the
 * status can no longer change); false for NULL. */
GIONG_API bool giong_http_response_started(const struct giong_http_response *res);

/* giong_http_response_close() - close the connection after this response
 * (it says Connection: close when the head is still to be sent). Returns 0
 * or -EINVAL. */
GIONG_API int giong_http_response_close(struct giong_http_response *res);

GIONG_END_DECLS

#endif /* GIONG_HTTP_RESPONSE_H */
