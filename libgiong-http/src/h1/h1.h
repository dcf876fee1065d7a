/* SPDX-License-Identifier: MIT */
/*
 * h1.h - HTTP/1.1 on a server connection: the connection loop (conn.c), the
 * response serializer (response.c), the request body's framing (body.c) and
 * file bodies (sendfile.c). Internal to libgiong-http.
 *
 * struct giong__http_frame is the state of one task's run on a connection:
 * the input (the pool buffer or heap copy holding the bytes), the head
 * scanner's state, the batch offsets of the response being written, and the
 * request and response lent to handlers (the protocol-neutral objects of
 * common/request.h, whose px points back here). It lives on the connection
 * task's stack and ends with the task, which never ends with a request half
 * read.
 *
 * The serializer only appends to the connection's batch (c->batch->out); the
 * writes are the connection's (common/conn.c), at the points this layer
 * names: a streamed piece, a body too large to copy, a file, 100 Continue,
 * the end of the buffered requests, and a batch past GIONG__HTTP_BATCH_MAX
 * (checked after each response).
 */
#ifndef GIONG_HTTP_H1_H
#define GIONG_HTTP_H1_H

#include <stdbool.h>
#include <stdint.h>

#include "common/conn.h"
#include "common/request.h"
#include "h1/chunked.h"
#include "h1/parse.h"

/* A response body at most this long is copied into the batch; a longer one
 * is written from the handler's memory, after the batch. */
#define GIONG__HTTP_COPY_MAX (16u * 1024)
/* Fields parsed on the task's stack; a larger limit allocates. */
#define GIONG__HTTP_STACK_FIELDS 128u

/* HTTP/1.1's framing of the request body being read. */
struct giong__http1_body {
	uint64_t left; /* Content-Length bytes not yet taken */
	bool chunked;
	struct giong__http_chunked dec;
	uint64_t deadline; /* body_timeout_ms from the end of the head */
};

/* One task's run on a connection (see the top). */
struct giong__http_frame {
	struct giong_http_conn *c;
	struct giong_waitq wait;
	struct giong__http_input in;
	bool head_started;      /* a head's first byte is in; head_deadline runs */
	uint64_t head_deadline; /* from the head's first byte */
	struct giong__http_scan scan;
	struct giong_http_field *fields;
	/* The response being written: where its status line starts in the batch,
	 * and its body's coding. */
	size_t head_start;
	bool chunked;
	struct giong__http1_body body;
	struct giong_http_request req;
	struct giong_http_response res;
};

/* Whether the rest of the request body will not be read after the handler
 * (giong__http1_body_finish()'s rule): then the response head says close. */
static inline bool giong__http1_body_left_unread(const struct giong__http_frame *f)
{
	const struct giong__http_body_read *b = &f->req.body;

	return !b->done && (b->error || (f->req.head.expect_continue && !b->continue_sent) ||
			    (!f->body.chunked && f->body.left > GIONG__HTTP_DISCARD_MAX));
}

/* The input of the frame's connection (common/input.h says what each does). */
static inline ssize_t giong__http_frame_peek(struct giong__http_frame *f, const char **p)
{
	return giong__http_input_peek(&f->in, f->c->s, p);
}
static inline void giong__http_frame_consume(struct giong__http_frame *f, size_t n)
{
	giong__http_input_consume(&f->in, n);
}

/* The HTTP/1.1 operations (conn.c). */
extern const struct giong_http_protocol giong__http1_ops;

/* response.c */
int giong__http1_head_start(struct giong_http_response *res);
int giong__http1_head_field(struct giong_http_response *res, const char *name, size_t name_len,
			    const char *value, size_t value_len);
int giong__http1_head_end(struct giong_http_response *res, int64_t length);
int giong__http1_body(struct giong_http_response *res, const void *p, size_t len);
int giong__http1_body_write(struct giong_http_response *res, const void *p, size_t len);
int giong__http1_body_end(struct giong_http_response *res);
void giong__http1_head_cancel(struct giong_http_response *res);
/* A write point: the batch, then @iov[0..n) (handler memory, lent for the
 * call), before returning; the current response is then partly sent. */
int giong__http1_write(struct giong__http_frame *f, const struct iovec *iov, int n);

/* body.c */
void giong__http1_body_begin(struct giong_http_request *req, uint64_t limit);
ssize_t giong__http1_body_next(struct giong_http_request *req, const char **data, size_t max);
int giong__http1_interim(struct giong_http_request *req, int status);
/* After the handler: read and drop what it left of the body, or mark the
 * response to close. 0, or -errno (close). */
int giong__http1_body_finish(struct giong__http_frame *f);

/* sendfile.c */
int giong__http1_sendfile(struct giong_http_response *res, int fd, off_t off, uint64_t len);

#endif /* GIONG_HTTP_H1_H */
