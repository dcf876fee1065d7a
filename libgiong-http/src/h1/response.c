/* SPDX-License-Identifier: MIT */
/*
 * response.c - HTTP/1.1's response operations (common/proto.h): the head
 * appended to the connection's batch line by line as the handler goes, the
 * body queued behind it or, where it must leave now, written through the
 * connection. Append only, except at the write points h1.h names.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "h1/h1.h"
#include "h1/serialize.h"

/* The most bytes of one response head (status line and fields). */
#define HEAD_MAX (64u * 1024)

static struct giong__http_frame *frame_of(struct giong_http_response *res)
{
	return res->px;
}

static struct giong__http_out *batch_of(struct giong_http_response *res)
{
	return &res->c->batch->out;
}

int giong__http1_write(struct giong__http_frame *f, const struct iovec *iov, int n)
{
	int r;

	if (f->res.started && f->c->batch->out.len > f->head_start)
		f->res.sent_some = true; /* part of the current response leaves */
	r = giong__http_conn_write(f->c, &f->wait, iov, n);
	f->head_start = 0;
	return r;
}

/* The status line, Date and Server. */
int giong__http1_head_start(struct giong_http_response *res)
{
	const struct giong_http_server *srv = res->c->w->srv;
	struct giong__http_out *o = batch_of(res);
	struct giong__http_frame *f = frame_of(res);
	int r;

	f->head_start = o->len;
	if ((r = giong__http_out_status(o, res->status)) || (r = giong__http_out_date(o)) ||
	    (srv->server_name && (r = giong__http_out_header(o, "Server", 6, srv->server_name,
							     srv->server_name_len)))) {
		o->len = f->head_start;
		return r;
	}
	return 0;
}

int giong__http1_head_field(struct giong_http_response *res, const char *name, size_t name_len,
			    const char *value, size_t value_len)
{
	struct giong__http_out *o = batch_of(res);
	char *p;
	int r;

	if (o->len - frame_of(res)->head_start + name_len + value_len + 4 > HEAD_MAX)
		return -E2BIG;
	/* Checked by the caller: one copy, "<name>: <value>\r\n". */
	if ((r = giong__http_out_grow(o, name_len + value_len + 4, &p)))
		return r;
	memcpy(p, name, name_len);
	p += name_len;
	*p++ = ':';
	*p++ = ' ';
	if (value_len)
		memcpy(p, value, value_len);
	p += value_len;
	*p++ = '\r';
	*p = '\n';
	o->len += name_len + value_len + 4;
	return 0;
}

/* The framing fields and the empty line. @length < 0: chunked (HTTP/1.1)
 * or close-delimited (HTTP/1.0); @length >= 0: Content-Length, left out
 * where the status forbids one (1xx, 204) or it is not the body's (304). */
int giong__http1_head_end(struct giong_http_response *res, int64_t length)
{
	struct giong__http_frame *f = frame_of(res);
	struct giong__http_out *o = batch_of(res);
	bool v10 = f->req.head.version_minor == 0;
	int r = 0;

	if (giong__http1_body_left_unread(f) || f->c->w->shutting_down)
		res->close = true;
	if (length < 0 && v10)
		res->close = true; /* no chunked coding in HTTP/1.0 */
	f->chunked = length < 0 && !v10;
	if (length >= 0 && res->status != 204 && res->status != 304)
		r = giong__http_out_content_length(o, (uint64_t)length);
	else if (f->chunked)
		r = giong__http_out_append(o, "Transfer-Encoding: chunked\r\n", 28);
	if (!r && res->close)
		r = giong__http_out_append(o, "Connection: close\r\n", 19);
	else if (!r && v10)
		r = giong__http_out_append(o, "Connection: keep-alive\r\n", 24);
	if (!r)
		r = giong__http_out_append(o, "\r\n", 2);
	return r;
}

int giong__http1_body(struct giong_http_response *res, const void *p, size_t len)
{
	if (len <= GIONG__HTTP_COPY_MAX)
		return giong__http_out_append(batch_of(res), p, len);
	/* The handler's memory is lent to the kernel until this returns. */
	struct iovec iov = {(void *)p, len};
	return giong__http1_write(frame_of(res), &iov, 1);
}

int giong__http1_body_write(struct giong_http_response *res, const void *buf, size_t len)
{
	struct giong__http_frame *f = frame_of(res);
	char size_line[20];
	int n;

	/* Written now, not batched: a stream's reader expects each piece when
	 * it is written. The handler's memory is lent until this returns. */
	if (!f->chunked) {
		struct iovec iov = {(void *)buf, len};
		return giong__http1_write(f, &iov, 1);
	}
	n = snprintf(size_line, sizeof(size_line), "%zx\r\n", len);
	struct iovec iov[3] = {{size_line, (size_t)n}, {(void *)buf, len}, {(void *)"\r\n", 2}};
	return giong__http1_write(f, iov, 3);
}

int giong__http1_body_end(struct giong_http_response *res)
{
	if (!frame_of(res)->chunked)
		return 0; /* HTTP/1.0: the close ends it */
	return giong__http_out_append(batch_of(res), "0\r\n\r\n", 5);
}

void giong__http1_head_cancel(struct giong_http_response *res)
{
	batch_of(res)->len = frame_of(res)->head_start;
}
