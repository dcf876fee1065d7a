/* SPDX-License-Identifier: MIT */
/*
 * body.c - HTTP/1.1's request body operations (common/proto.h): the body's
 * bytes by its framing (Content-Length or chunked, de-chunked), bounded by
 * the body limit, under the body deadline; 100 Continue as an interim
 * response; what the handler left, read and dropped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "h1/h1.h"

static const char continue_line[] = "HTTP/1.1 100 Continue\r\n\r\n";

void giong__http1_body_begin(struct giong_http_request *req, uint64_t limit)
{
	struct giong__http_frame *f = req->px;
	struct giong__http1_body *b = &f->body;
	const struct giong__http_head *h = &req->head;

	memset(b, 0, sizeof(*b));
	b->deadline = giong_now_ms() + f->c->w->srv->limits.body_timeout_ms;
	if (h->body == GIONG__HTTP_BODY_CHUNKED) {
		b->chunked = true;
		giong__http_chunked_init(&b->dec, &f->c->w->srv->limits);
		b->dec.body_max = limit; /* the route's, or the server's */
	} else if (h->body == GIONG__HTTP_BODY_LENGTH && h->content_length) {
		b->left = h->content_length;
	} else {
		req->body.done = true;
	}
}

/* Write what the batch holds before this request's response (the answers to
 * earlier pipelined requests), then @line[0..@len) if given, and keep what
 * was begun of this response (moved to the batch's start). */
static int write_earlier(struct giong__http_frame *f, const char *line, size_t len)
{
	struct giong_http_conn *c = f->c;
	struct giong__http_out *o;
	size_t hs, rest;
	struct iovec iov[2];
	char *save;
	int r, n = 0;

	if (!len &&
	    (!c->batch || c->sending || !(f->res.started ? f->head_start : c->batch->out.len)))
		return 0; /* nothing earlier waits in the batch, or it is on its way */
	if ((r = giong__http_conn_wait_sent(c, &f->wait)))
		return r;
	o = &c->batch->out;
	hs = f->res.started ? f->head_start : o->len;
	if (hs)
		iov[n++] = (struct iovec){o->data, hs};
	if (len)
		iov[n++] = (struct iovec){(void *)line, len};
	if (!n)
		return 0;
	rest = o->len - hs;
	save = rest ? malloc(rest) : NULL;
	if (rest && !save)
		return -ENOMEM;
	if (rest)
		memcpy(save, o->data + hs, rest);
	giong__http_out_clear(o);
	/* iov's bytes (the batch's buffer, kept by the clear, and @line) are lent
	 * to the kernel inside giong__http_conn_write() only: it returns once
	 * they are sent, before the begun part is appended back over them. */
	r = giong__http_conn_write(c, &f->wait, iov, n);
	if (r == 0 && rest)
		r = giong__http_out_append(o, save, rest);
	free(save);
	f->head_start = 0;
	return r;
}

/* The client waits for "100 Continue" before it sends the body: it goes out
 * now, ahead of this request's response if that was begun in the batch. */
int giong__http1_interim(struct giong_http_request *req, int status)
{
	(void)status; /* 100: the only one the server sends */
	return write_earlier(req->px, continue_line, sizeof(continue_line) - 1);
}

/* The next span of body bytes (into the input, valid while the request is
 * answered): its length, 0 at the end, or -errno (sticky). */
ssize_t giong__http1_body_next(struct giong_http_request *req, const char **data, size_t max)
{
	struct giong__http_frame *f = req->px;
	struct giong__http1_body *b = &f->body;
	struct giong__http_body_read *nb = &req->body;
	uint64_t saved;
	ssize_t ret = 0;

	if (nb->done || nb->error)
		return nb->error;
	saved = giong_deadline_set(b->deadline);
	for (;;) {
		const char *p;
		ssize_t n;

		/* About to wait for body bytes: the answers to earlier pipelined
		 * requests go first, as a client may wait for them before it sends
		 * the rest of this body. */
		if (!f->in.len && !f->in.blen && !f->in.eof && (n = write_earlier(f, NULL, 0))) {
			nb->error = (int)n;
			ret = n;
			break;
		}
		n = giong__http_frame_peek(f, &p);

		if (n <= 0) {
			ret = n == 0 || n == -ECANCELED ? (n ? n : -ECONNRESET) : n;
			if (ret == -ETIMEDOUT)
				f->c->w->stats.body_timeouts++;
			nb->error = (int)ret;
			break;
		}
		if (!b->chunked) {
			size_t k = (uint64_t)n < b->left ? (size_t)n : (size_t)b->left;

			if (k > max)
				k = max;
			*data = p;
			giong__http_frame_consume(f, k);
			b->left -= k;
			nb->done = b->left == 0;
			ret = (ssize_t)k;
			break;
		}
		size_t used, off, len;
		int d = giong__http_chunked_feed(&b->dec, p, (size_t)n < max ? (size_t)n : max,
						 &used, &off, &len);

		giong__http_frame_consume(f, used);
		if (d == GIONG__HTTP_CHUNKED_DATA) {
			*data = p + off;
			ret = (ssize_t)len;
			break;
		}
		if (d == GIONG__HTTP_CHUNKED_DONE) {
			nb->done = true;
			break;
		}
		if (d < 0) {
			bool too_large = d == -EBADMSG && b->dec.error == 413;

			nb->error = too_large ? -EMSGSIZE : -EBADMSG;
			if (too_large)
				f->c->w->stats.body_too_large++;
			ret = nb->error;
			break;
		}
		/* MORE: everything given was framing; read on */
	}
	giong_deadline_restore(saved);
	return ret;
}

int giong__http1_body_finish(struct giong__http_frame *f)
{
	size_t dropped = 0;
	const char *p;
	ssize_t n;

	if (f->req.body.done)
		return 0;
	if (giong__http1_body_left_unread(f)) {
		/* The client may never send it, or it costs more than a new
		 * connection: close after the response instead. */
		f->res.close = true;
		return 0;
	}
	while ((n = giong__http1_body_next(&f->req, &p, SIZE_MAX)) > 0) {
		dropped += (size_t)n;
		if (dropped > GIONG__HTTP_DISCARD_MAX) {
			f->res.close = true;
			return 0;
		}
	}
	if (n < 0)
		f->res.close = true; /* the response still goes: closes after */
	return 0;
}
