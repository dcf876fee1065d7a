/* SPDX-License-Identifier: MIT */
/*
 * body.c - the request body (giong/http/request.h): whole or in pieces,
 * de-chunked, bounded by the body limit, under the body deadline; 100
 * Continue at the first read; what the handler left, read and dropped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/conn.h"

static const char continue_line[] = "HTTP/1.1 100 Continue\r\n\r\n";

void giong__http_body_begin(struct giong__http_frame *f, uint64_t limit)
{
	struct giong__http_body_state *b = &f->body;
	const struct giong__http_head *h = &f->req.head;

	memset(b, 0, sizeof(*b));
	f->req.frame = f;
	b->deadline = giong_now_ms() + f->c->w->srv->limits.body_timeout_ms;
	if (h->body == GIONG__HTTP_BODY_CHUNKED) {
		b->chunked = true;
		giong__http_chunked_init(&b->dec, &f->c->w->srv->limits);
		b->dec.body_max = limit; /* the route's, or the server's */
	} else if (h->body == GIONG__HTTP_BODY_LENGTH && h->content_length) {
		b->left = h->content_length;
	} else {
		b->done = true;
	}
}

void giong__http_body_end(struct giong__http_frame *f)
{
	free(f->body.copy);
	f->body.copy = NULL;
	f->req.frame = NULL;
}

/* Write what the batch holds before this request's response (the answers to
 * earlier pipelined requests), then @line[0..@len) if given, and keep what
 * was begun of this response (moved to the batch's start). */
static int write_earlier(struct giong__http_frame *f, const char *line, size_t len)
{
	struct giong__http_conn *c = f->c;
	struct giong__http_out *o;
	size_t hs, rest;
	struct iovec iov[2];
	char *save;
	int r, n = 0;

	if (!len &&
	    (!c->batch || c->sending || !(f->res.started ? f->res.head_start : c->batch->out.len)))
		return 0; /* nothing earlier waits in the batch, or it is on its way */
	if ((r = giong__http_frame_reserve(f, 0)))
		return r;
	o = &c->batch->out;
	hs = f->res.started ? f->res.head_start : o->len;
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
	 * to the kernel inside giong__http_frame_write() only: it returns once
	 * they are sent, before the begun part is appended back over them. */
	r = giong__http_frame_write(f, iov, n);
	if (r == 0 && rest)
		r = giong__http_out_append(o, save, rest);
	free(save);
	f->res.head_start = 0;
	return r;
}

/* The client waits for "100 Continue" before it sends the body: it goes out
 * now, ahead of this request's response if that was begun in the batch. */
static int send_continue(struct giong__http_frame *f)
{
	int r;

	f->body.continue_sent = true;
	r = write_earlier(f, continue_line, sizeof(continue_line) - 1);
	giong__http_count_status(f->c->w, 100);
	return r;
}

/* Whether the body may be read now: 100 Continue first if it is owed. */
static int body_ready(struct giong__http_frame *f)
{
	struct giong__http_body_state *b = &f->body;

	if (b->error)
		return b->error;
	if (!b->done && f->req.head.expect_continue && !b->continue_sent)
		return b->error = send_continue(f);
	return 0;
}

/* The next span of body bytes (into the input, valid while the request is
 * answered): its length, 0 at the end, or -errno (sticky). */
static ssize_t body_next(struct giong__http_frame *f, const char **data, size_t max)
{
	struct giong__http_body_state *b = &f->body;
	uint64_t saved;
	ssize_t ret = 0;

	if (b->done || b->error)
		return b->error;
	saved = giong_deadline_set(b->deadline);
	for (;;) {
		const char *p;
		ssize_t n;

		/* About to wait for body bytes: the answers to earlier pipelined
		 * requests go first, as a client may wait for them before it sends
		 * the rest of this body. */
		if (!f->in.len && !f->in.blen && !f->in.eof && (n = write_earlier(f, NULL, 0))) {
			b->error = (int)n;
			ret = n;
			break;
		}
		n = giong__http_frame_peek(f, &p);

		if (n <= 0) {
			ret = n == 0 || n == -ECANCELED ? (n ? n : -ECONNRESET) : n;
			if (ret == -ETIMEDOUT)
				f->c->w->stats.body_timeouts++;
			b->error = (int)ret;
			break;
		}
		if (!b->chunked) {
			size_t k = (uint64_t)n < b->left ? (size_t)n : (size_t)b->left;

			if (k > max)
				k = max;
			*data = p;
			giong__http_frame_consume(f, k);
			b->left -= k;
			b->done = b->left == 0;
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
			b->done = true;
			break;
		}
		if (d < 0) {
			b->error = d == -413 ? -EMSGSIZE : -EBADMSG;
			if (d == -413)
				f->c->w->stats.body_too_large++;
			ret = b->error;
			break;
		}
		/* MORE: everything given was framing; read on */
	}
	giong_deadline_restore(saved);
	return ret;
}

ssize_t giong_http_request_body(struct giong_http_request *r, const void **data)
{
	struct giong__http_frame *f;
	struct giong__http_body_state *b;
	const char *p;
	ssize_t n;
	int e;

	if (!r || !data || !(f = r->frame))
		return -EINVAL;
	b = &f->body;
	*data = "";
	if (b->streamed)
		return -EALREADY;
	if (b->whole) {
		*data = b->whole_data;
		return b->error ? b->error : (ssize_t)b->whole_len;
	}
	b->whole = true;
	b->whole_data = "";
	if ((e = body_ready(f)))
		return e;
	/* A sized body already buffered in one piece is lent in place. */
	if (!b->chunked && !b->done && f->in.len >= b->left) {
		n = body_next(f, &p, (size_t)b->left);
		if (n < 0)
			return n;
		b->whole_data = p;
		b->whole_len = (size_t)n;
		*data = p;
		return n;
	}
	/* Grown as bytes come, not sized by the length the client claims: a
	 * client that declares the limit and sends one byte holds 64 KiB, not
	 * the limit. */
	size_t cap = b->chunked || b->left > 65536 ? 65536 : (size_t)b->left;

	while ((n = body_next(f, &p, SIZE_MAX)) > 0) {
		if (!b->copy || b->copy_len + (size_t)n > cap) {
			size_t want = b->copy_len + (size_t)n;
			char *c;

			if (want > cap)
				cap = want > cap * 2 ? want : cap * 2;
			if (!(c = realloc(b->copy, cap)))
				return b->error = -ENOMEM;
			b->copy = c;
		}
		memcpy(b->copy + b->copy_len, p, (size_t)n);
		b->copy_len += (size_t)n;
	}
	if (n < 0)
		return n;
	b->whole_data = b->copy ? b->copy : "";
	b->whole_len = b->copy_len;
	*data = b->whole_data;
	return (ssize_t)b->whole_len;
}

ssize_t giong_http_request_read(struct giong_http_request *r, void *buf, size_t len)
{
	struct giong__http_frame *f;
	struct giong__http_body_state *b;
	const char *p;
	ssize_t n;
	int e;

	if (!r || !(f = r->frame) || (!buf && len))
		return -EINVAL;
	b = &f->body;
	if (b->whole)
		return -EALREADY;
	b->streamed = true;
	if (!len)
		return 0;
	if ((e = body_ready(f)))
		return e;
	n = body_next(f, &p, len);
	if (n > 0)
		memcpy(buf, p, (size_t)n);
	return n;
}

int64_t giong_http_request_content_length(const struct giong_http_request *r)
{
	if (!r)
		return -EINVAL;
	if (r->head.body == GIONG__HTTP_BODY_CHUNKED)
		return -1;
	return r->head.body == GIONG__HTTP_BODY_LENGTH ? (int64_t)r->head.content_length : 0;
}

int giong__http_body_finish(struct giong__http_frame *f)
{
	struct giong__http_body_state *b = &f->body;
	size_t dropped = 0;
	const char *p;
	ssize_t n;

	if (b->done)
		return 0;
	if (b->error || (f->req.head.expect_continue && !b->continue_sent) ||
	    (!b->chunked && b->left > GIONG__HTTP_DISCARD_MAX)) {
		/* The client may never send it, or it costs more than a new
		 * connection: close after the response instead. */
		f->res.close = true;
		return 0;
	}
	while ((n = body_next(f, &p, SIZE_MAX)) > 0) {
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
