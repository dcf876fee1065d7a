/* SPDX-License-Identifier: MIT */
/*
 * response.c - the response API (giong/http/response.h): the head written
 * into the connection's batch as the handler goes, the body queued behind it
 * or written through it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <giong/http/status.h>

#include "common/conn.h"
#include "common/token.h"

/* The most bytes of one response head (status line and fields). */
#define HEAD_MAX (64u * 1024)

static struct giong__http_out *batch_of(struct giong_http_response *res)
{
	return &res->f->c->batch->out;
}

void giong__http_response_begin(struct giong__http_frame *f)
{
	memset(&f->res, 0, sizeof(f->res));
	f->res.f = f;
	f->res.status = 200;
}

bool giong_http_response_started(const struct giong_http_response *res)
{
	return res && res->started;
}

int giong_http_response_close(struct giong_http_response *res)
{
	if (!res)
		return -EINVAL;
	res->close = true;
	return 0;
}

int giong_http_response_status(struct giong_http_response *res, int status)
{
	if (!res || status < 200 || status > 599)
		return -EINVAL;
	if (res->started)
		return -EALREADY;
	res->status = status;
	return 0;
}

/* The status line, Date and Server, once. */
static int start_head(struct giong_http_response *res)
{
	const struct giong_http_server *srv = res->f->c->w->srv;
	struct giong__http_out *o;
	int r;

	if (res->started)
		return 0;
	if ((r = giong__http_frame_reserve(res->f, HEAD_MAX)))
		return r;
	o = batch_of(res);
	res->head_start = o->len;
	if ((r = giong__http_out_status(o, res->status)) || (r = giong__http_out_date(o)) ||
	    (srv->server_name && (r = giong__http_out_header(o, "Server", 6, srv->server_name,
							     srv->server_name_len)))) {
		o->len = res->head_start;
		return r;
	}
	res->started = true;
	return 0;
}

static bool is_framing(const char *name, size_t len)
{
	/* By length first: this runs for every field a handler adds. */
	switch (len) {
	case 4:
		return giong__http_token_eq(name, len, "date");
	case 6:
		return giong__http_token_eq(name, len, "server");
	case 7:
		return giong__http_token_eq(name, len, "upgrade") ||
		       giong__http_token_eq(name, len, "trailer");
	case 10:
		return giong__http_token_eq(name, len, "connection") ||
		       giong__http_token_eq(name, len, "keep-alive");
	case 14:
		return giong__http_token_eq(name, len, "content-length");
	case 17:
		return giong__http_token_eq(name, len, "transfer-encoding");
	default:
		return false;
	}
}

int giong_http_response_header_n(struct giong_http_response *res, const char *name, size_t name_len,
				 const char *value, size_t value_len)
{
	struct giong__http_out *o;
	int r;

	if (!res || !name || (!value && value_len) || is_framing(name, name_len))
		return -EINVAL;
	if (res->ended || res->streaming)
		return -EALREADY;
	if (!giong__http_is_token(name, name_len) || !giong__http_is_field_value(value, value_len))
		return -EINVAL;
	if ((r = start_head(res)))
		return r;
	o = batch_of(res);
	if (o->len - res->head_start + name_len + value_len + 4 > HEAD_MAX)
		return -E2BIG;
	return giong__http_out_header(o, name, name_len, value, value_len);
}

int giong_http_response_header(struct giong_http_response *res, const char *name, const char *value)
{
	if (!name || !value)
		return -EINVAL;
	return giong_http_response_header_n(res, name, strlen(name), value, strlen(value));
}

/* Whether the rest of this request's body will not be read after the
 * handler (giong__http_body_finish()'s rule): then the head says close. */
static bool body_left_unread(const struct giong__http_frame *f)
{
	const struct giong__http_body_state *b = &f->body;

	return !b->done && (b->error || (f->req.head.expect_continue && !b->continue_sent) ||
			    (!b->chunked && b->left > GIONG__HTTP_DISCARD_MAX));
}

/* The framing fields and the empty line. @length < 0: chunked (HTTP/1.1)
 * or close-delimited (HTTP/1.0); @length >= 0: Content-Length, left out
 * where the status forbids one (1xx, 204) or it is not the body's (304). */
static int end_head(struct giong_http_response *res, int64_t length)
{
	struct giong__http_frame *f = res->f;
	struct giong__http_out *o = batch_of(res);
	bool v10 = f->req.head.version_minor == 0;
	int r = 0;

	if (body_left_unread(f) || f->c->w->shutting_down)
		res->close = true;
	if (length < 0 && v10)
		res->close = true; /* no chunked coding in HTTP/1.0 */
	if (length >= 0 && res->status != 204 && res->status != 304)
		r = giong__http_out_content_length(o, (uint64_t)length);
	else if (length < 0 && !v10)
		r = giong__http_out_append(o, "Transfer-Encoding: chunked\r\n", 28);
	if (!r && res->close)
		r = giong__http_out_append(o, "Connection: close\r\n", 19);
	else if (!r && v10)
		r = giong__http_out_append(o, "Connection: keep-alive\r\n", 24);
	if (!r)
		r = giong__http_out_append(o, "\r\n", 2);
	if (!r)
		giong__http_count_status(f->c->w, res->status);
	return r;
}

static bool is_head(const struct giong_http_response *res)
{
	return res->f->req.head.method_id == GIONG_HTTP_HEAD;
}

/* The head of a response whose body has @len bytes (send and sendfile),
 * which ends it. Returns 1 when the body's bytes are to be written, 0 when
 * none are (HEAD, an empty body), or -errno. */
static int sized_body(struct giong_http_response *res, uint64_t len)
{
	int r;

	if (res->ended || res->streaming)
		return -EALREADY;
	if (len && (res->status == 204 || res->status == 304))
		return -EINVAL;
	if ((r = start_head(res)) || (r = end_head(res, (int64_t)len)))
		return r;
	res->ended = true;
	if (is_head(res) || !len)
		return 0;
	res->body_bytes = len;
	return 1;
}

int giong_http_response_send(struct giong_http_response *res, const void *body, size_t len)
{
	int r;

	if (!res || (!body && len))
		return -EINVAL;
	if ((r = sized_body(res, len)) <= 0)
		return r;
	if (len <= GIONG__HTTP_COPY_MAX) {
		if ((r = giong__http_frame_reserve(res->f, len)))
			return r;
		return giong__http_out_append(batch_of(res), body, len);
	}
	/* The handler's memory is lent to the kernel until this returns. */
	struct iovec iov = {(void *)body, len};
	return giong__http_frame_write(res->f, &iov, 1);
}

/* Begin a streamed body: the head, chunked or close-delimited. */
static int start_stream(struct giong_http_response *res)
{
	int r;

	if (res->streaming)
		return 0;
	if (res->status == 204 || res->status == 304)
		return -EINVAL;
	if ((r = start_head(res)) || (r = end_head(res, -1)))
		return r;
	res->streaming = true;
	res->chunked = res->f->req.head.version_minor != 0;
	return 0;
}

int giong_http_response_write(struct giong_http_response *res, const void *buf, size_t len)
{
	char size_line[20];
	int r, n;

	if (!res || (!buf && len))
		return -EINVAL;
	if (res->ended)
		return -EALREADY;
	if ((r = start_stream(res)))
		return r;
	if (!len || is_head(res))
		return 0;
	res->body_bytes += len;
	/* Written now, not batched: a stream's reader expects each piece when
	 * it is written. The handler's memory is lent until this returns. */
	if (!res->chunked) {
		struct iovec iov = {(void *)buf, len};
		return giong__http_frame_write(res->f, &iov, 1);
	}
	n = snprintf(size_line, sizeof(size_line), "%zx\r\n", len);
	struct iovec iov[3] = {{size_line, (size_t)n}, {(void *)buf, len}, {(void *)"\r\n", 2}};
	return giong__http_frame_write(res->f, iov, 3);
}

int giong_http_response_end(struct giong_http_response *res)
{
	int r;

	if (!res)
		return -EINVAL;
	if (res->ended)
		return -EALREADY;
	if ((r = start_stream(res)))
		return r;
	res->ended = true;
	if (!res->chunked || is_head(res))
		return 0; /* HTTP/1.0: the close ends it */
	if ((r = giong__http_frame_reserve(res->f, 5)))
		return r;
	return giong__http_out_append(batch_of(res), "0\r\n\r\n", 5);
}

int giong_http_response_sendfile(struct giong_http_response *res, int fd, off_t offset,
				 uint64_t len)
{
	int r;

	if (!res || fd < 0 || offset < 0 || len > INT64_MAX)
		return -EINVAL;
	if ((r = sized_body(res, len)) <= 0)
		return r;
	return giong__http_sendfile(res->f, fd, offset, len);
}

int giong__http_response_simple(struct giong_http_response *res, int status, const char *allow,
				const char *text)
{
	struct giong__http_out *o;
	size_t len = text ? strlen(text) : 0;
	int r;

	res->status = status;
	if ((r = start_head(res)))
		return r;
	o = batch_of(res);
	if (allow && (r = giong__http_out_header(o, "Allow", 5, allow, strlen(allow))))
		return r;
	if (text && (r = giong__http_out_append(o, "Content-Type: text/plain\r\n", 26)))
		return r;
	if ((r = end_head(res, (int64_t)len)))
		return r;
	res->ended = true;
	if (text && !is_head(res) && (r = giong__http_out_append(o, text, len)))
		return r;
	return 0;
}

/* The status a handler's error gets, before anything was sent. */
static int error_status(int err)
{
	switch (err) {
	case -EMSGSIZE:
		return 413;
	case -ETIMEDOUT:
		return 408;
	case -EBADMSG:
	case -ECONNRESET:          /* the body ended early: the request is incomplete */
	case GIONG_ETLS_TRUNCATED: /* the same over TLS, without close_notify */
		return 400;
	default:
		return 500;
	}
}

int giong__http_response_finish(struct giong_http_response *res, int hr)
{
	struct giong__http_out *o = batch_of(res);
	int r;

	if (hr < 0 && res->f->c->broken)
		return hr; /* the connection failed under the handler */
	if (hr < 0 && res->ended) {
		/* The response was whole: it stands, but a failed handler's
		 * connection is closed after it (router.h). */
		res->close = true;
		return 0;
	}
	if (hr < 0 && res->started && !res->sent_some) {
		/* Nothing of it left yet: take the begun head back, answer 500. */
		o->len = res->head_start;
		res->started = res->ended = res->streaming = false;
	}
	if (hr < 0 && res->started) {
		/* Half a response went: what follows cannot be trusted; close. */
		res->close = true;
		res->ended = true;
		return hr;
	}
	if (hr < 0 || !res->started) {
		int status = hr < 0 ? error_status(hr) : 500;

		if (status != 500)
			res->close = true; /* the body was not read to its end */
		return giong__http_response_simple(res, status, NULL, NULL);
	}
	if (!res->ended && (r = giong_http_response_end(res)))
		return r;
	return 0;
}
