/* SPDX-License-Identifier: MIT */
/*
 * request.h - the protocol-neutral exchange: struct giong_http_request (a
 * request head as data, the router's captures, what the body API keeps) and
 * struct giong_http_response (status, flags, body counters). Neither holds a
 * byte of wire format: each points to its protocol's operations (proto.h)
 * and to that protocol's state of the exchange (HTTP/1.1: h1/h1.h's frame,
 * with the batch offsets and the body's framing). Internal to libgiong-http.
 *
 * A protocol fills the head (HTTP/1.1: giong__http_parse_head(); HTTP/2 would
 * from its pseudo-header and header fields), then calls giong__http_dispatch()
 * (dispatch.c), which runs the router and the handler on these objects.
 */
#ifndef GIONG_HTTP_REQUEST_INTERNAL_H
#define GIONG_HTTP_REQUEST_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <giong/http/request.h>
#include <giong/http/response.h>
#include <giong/http/protocol.h>
#include <giong/http/router.h>

struct giong_http_conn;
struct giong_http_protocol;

enum giong__http_body {
	GIONG__HTTP_BODY_NONE,    /* neither Content-Length nor Transfer-Encoding */
	GIONG__HTTP_BODY_LENGTH,  /* Content-Length: content_length bytes (maybe 0) */
	GIONG__HTTP_BODY_CHUNKED, /* Transfer-Encoding: chunked (chunked.h decodes it) */
};

enum giong__http_target_form {
	GIONG__HTTP_ORIGIN_FORM,    /* /path?query */
	GIONG__HTTP_ABSOLUTE_FORM,  /* http://host/path?query (host taken from it) */
	GIONG__HTTP_AUTHORITY_FORM, /* CONNECT host:port */
	GIONG__HTTP_ASTERISK_FORM,  /* OPTIONS * */
};

struct giong__http_head {
	const char *method; /* the token as sent */
	uint32_t method_len;
	int method_id; /* enum giong_http_method */
	const char *target;
	uint32_t target_len;
	enum giong__http_target_form form;
	/* Origin and absolute form: the path ("/" when an absolute target has none: then
	 * a static string, not the buffer) and the query without its '?' (NULL, 0 when
	 * there is none). Authority and asterisk form: both NULL, 0. */
	const char *path, *query;
	uint32_t path_len, query_len;
	uint8_t version_major, version_minor; /* 1.0 or 1.1: nothing else is accepted */
	struct giong_http_field *fields;      /* the caller's array, in the order sent */
	uint32_t nfields;
	/* The authority: the absolute-form target's (RFC 9112 3.2.2: it wins over Host),
	 * or Host's value; NULL, 0 for an HTTP/1.0 request without either. */
	const char *host;
	uint32_t host_len;
	enum giong__http_body body;
	uint64_t content_length; /* GIONG__HTTP_BODY_LENGTH: the length; else 0 */
	/* RFC 9112 9.3: HTTP/1.1 persists unless a Connection "close" token; HTTP/1.0 only
	 * with a "keep-alive" token and no "close". Every accepted framing is one that can
	 * be trusted (the doubtful ones are refused), so nothing else obliges a close. */
	bool keep_alive;
	bool expect_continue; /* HTTP/1.1 with Expect: 100-continue (ignored in 1.0) */
	bool upgrade;         /* an Upgrade field was sent (not acted on here) */
};

/* What the body API (request.c) keeps of the body being read, whatever frames it. */
struct giong__http_body_read {
	bool done;            /* its end was reached (the protocol sets it) */
	bool continue_sent;   /* the interim 100 went out */
	bool whole, streamed; /* giong_http_request_body() / _read() used */
	int error;            /* sticky: the first failure */
	char *copy;           /* the whole body, when it had to be copied */
	size_t copy_len;
	const char *whole_data; /* what giong_http_request_body() returned */
	size_t whole_len;
};

struct giong_http_request {
	struct giong__http_head head; /* head.fields points at the protocol's array */
	struct giong_http_route_match route;
	struct giong__http_body_read body;
	const struct giong_http_protocol *ops;
	void *px; /* the protocol's state of this exchange, while it is answered; else NULL */
	struct giong_http_conn *c;
	struct giong_http_response *res;
};

struct giong_http_response {
	const struct giong_http_protocol *ops;
	void *px; /* as the request's */
	struct giong_http_request *req;
	struct giong_http_conn *c;
	int status;
	uint64_t body_bytes;
	bool started;   /* the head was begun (the status can no longer change) */
	bool ended;     /* the body ended: nothing more may be written */
	bool streaming; /* a streamed body (write/end) was begun */
	bool close;     /* the connection closes after this response */
	bool sent_some; /* part of it was written: it can no longer be taken back */
};

/* method.c */
/* The enum giong_http_method of the method token @m[0..len) (GIONG_HTTP_OTHER). */
int giong__http_method_id(const char *m, size_t len);

/* request.c */
/* Ready @req and @res for the next exchange on @c (the head is the protocol's to fill). */
void giong__http_exchange_begin(struct giong_http_request *req, struct giong_http_response *res,
				const struct giong_http_protocol *ops, void *px,
				struct giong_http_conn *c);
/* The exchange is over: what the body API held is freed, the handler's pointer dead. */
void giong__http_exchange_end(struct giong_http_request *req);

/* response.c */
/* Queue a response of the library's own (an error, 404, 405): @status with an
 * empty body (or @text), and @allow for 405. */
int giong__http_response_simple(struct giong_http_response *res, int status, const char *allow,
				const char *text);
/* After the handler: end what it left open, or answer its error. 0, or
 * -errno (close). */
int giong__http_response_finish(struct giong_http_response *res, int handler_ret);

/* dispatch.c */
/* Answer @req, whose head was just received: the router, the body limit,
 * 413, 404 and 405, the handler, and what it left open (the protocol sends
 * what was queued). 0, or -errno (close now). */
int giong__http_dispatch(struct giong_http_request *req, struct giong_http_response *res);
/* Give the server's log (if any) @res's line. */
void giong__http_log(const struct giong_http_request *req, const struct giong_http_response *res);

#endif /* GIONG_HTTP_REQUEST_INTERNAL_H */
