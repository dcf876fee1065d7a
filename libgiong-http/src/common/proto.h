/* SPDX-License-Identifier: MIT */
/*
 * proto.h - the one table through which the protocol-neutral layer reaches a
 * connection's protocol. Internal to libgiong-http.
 *
 * The request and the response (request.h) carry a pointer to the table and
 * to the protocol's state of the exchange (px); the public API in request.c
 * and response.c checks the handler's calls, keeps the neutral state (what
 * was started, ended, counted), and leaves the wire to these operations.
 * HTTP/1.1 (h1/) appends the bytes to the connection's batch as it goes: no
 * field is collected, nothing allocated per field. A second protocol may
 * collect the fields into an array and make frames at head_end().
 *
 * The calls are indirect only where a second protocol must differ, and a
 * handful per response (head_start, head_field per field, head_end, body),
 * never per byte.
 *
 * Not here, as they are the connection's whatever its protocol: the client's
 * address (request.c, from the PROXY header or the peer, kept on the
 * connection) and closing (res->close, read by the protocol at head_end and
 * after the exchange: HTTP/1.1 closes the connection, HTTP/2 would end only
 * the stream unless the connection must go).
 *
 * Which protocol a connection speaks is chosen once, by the server's
 * choose_protocol() (server.c), after the wrap (a TLS handshake) and before
 * its first request; see there for where HTTP/2 plugs in.
 */
#ifndef GIONG_HTTP_PROTO_H
#define GIONG_HTTP_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct giong__http_conn;
struct giong_http_request;
struct giong_http_response;

struct giong__http_proto_ops {
	const char *name; /* "http/1.1": the ALPN identifier */

	/* --- the connection ---------------------------------------------------------------
	 * Run @c from its task: answer what arrives, until it parks (the task ends, and
	 * bytes start a new one, which calls this again) or closes. @refuse: a status to
	 * answer at once and close (400 for a bad PROXY header), or 0. */
	void (*serve)(struct giong__http_conn *c, int refuse);

	/* --- the request body -------------------------------------------------------------
	 * Ready the body of the request just received, at most @limit bytes (the route's or
	 * the server's limit). */
	void (*body_begin)(struct giong_http_request *req, uint64_t limit);
	/* The next span of body bytes, at most @max, valid while the request is answered:
	 * its length, 0 at the end (req->body.done), or -errno (req->body.error, sticky). */
	ssize_t (*body_next)(struct giong_http_request *req, const char **data, size_t max);
	/* An interim response (100 Continue) before the final one: sent now. 0 or -errno. */
	int (*interim)(struct giong_http_request *req, int status);

	/* --- the response (res->status is final when head_start runs) ---------------------
	 * Begin the head: the status, and the fields the server adds (Date, Server). */
	int (*head_start)(struct giong_http_response *res);
	/* One field the handler added: name and value already checked (a token, a value
	 * without CR, LF, NUL; no framing field). */
	int (*head_field)(struct giong_http_response *res, const char *name, size_t name_len,
			  const char *value, size_t value_len);
	/* End the head: @length bytes of body follow (>= 0), or a streamed body (-1). The
	 * protocol may set res->close (a body it will not read, shutdown). */
	int (*head_end)(struct giong_http_response *res, int64_t length);
	/* A sized body's bytes (after head_end(len)): the handler's memory is lent until the
	 * call returns. */
	int (*body)(struct giong_http_response *res, const void *p, size_t len);
	/* A piece of a streamed body, sent now (its reader expects each piece when written). */
	int (*body_write)(struct giong_http_response *res, const void *p, size_t len);
	/* The end of a streamed body. */
	int (*body_end)(struct giong_http_response *res);
	/* A sized body's bytes from @fd at @off. */
	int (*sendfile)(struct giong_http_response *res, int fd, off_t off, uint64_t len);
	/* Take back a begun response none of which left (res->sent_some is false). */
	void (*head_cancel)(struct giong_http_response *res);
};

#endif /* GIONG_HTTP_PROTO_H */
