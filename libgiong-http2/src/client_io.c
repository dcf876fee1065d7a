/* SPDX-License-Identifier: MIT */
/*
 * client_io.c - an HTTP/2 client session's reading, writing and waiting
 * (client.h says who does which), and nghttp2's callbacks that turn what
 * arrives into each stream's head, body and end.
 *
 * Ownership for the kernel: a read fills h->rbuf (the session's) and a write
 * lends h->out (the session's) for the duration of giong_stream_read() and
 * giong_stream_write_all() only; the session outlives both, as client_close()
 * runs only once no stream, and so no task in here, is left.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "h2.h"

/* ------------------------------------------------------------ waiting */

static void waiter_remove(struct h2c_stream *st)
{
	if (!st->waiting)
		return;
	giong__list_remove(&st->h->waiters, &st->wlink);
	st->waiting = false;
}

void h2c_wake(struct h2c_stream *st)
{
	if (!st || !st->waiting)
		return;
	/* Off the list at once: a woken task is no longer one to hand reading to. */
	waiter_remove(st);
	giong_waitq_wake_one(&st->wait, 0);
}

/* The reader leaves: the oldest task still waiting reads next (if it still needs to). */
static void handover(struct h2c_session *h)
{
	if (!h->reading)
		h2c_wake(giong__list_entry(h->waiters.first, struct h2c_stream, wlink));
}

void h2c_fail(struct h2c_session *h, int err)
{
	if (!h->error)
		h->error = err;
	for (struct giong__list_node *n = h->streams.first; n; n = n->next)
		h2c_wake(giong__container_of(n, struct h2c_stream, link));
}

/* Append what nghttp2 wants to send to h->out, up to H2C_WRITE_MAX: 0 or -errno. */
static int drain(struct h2c_session *h)
{
	const uint8_t *p;
	ssize_t n;

	h->out_len = 0;
	while (h->out_len < H2C_WRITE_MAX && (n = nghttp2_session_mem_send(h->s, &p)) > 0) {
		if (h->out_len + (size_t)n > h->out_cap) {
			size_t cap = h->out_len + (size_t)n + H2C_WRITE_MAX;
			char *b = realloc(h->out, cap);

			if (!b)
				return -ENOMEM;
			h->out = b;
			h->out_cap = cap;
		}
		memcpy(h->out + h->out_len, p, (size_t)n);
		h->out_len += (size_t)n;
	}
	return n < 0 ? -EPROTO : 0;
}

int h2c_flush(struct h2c_session *h)
{
	ssize_t w;
	int r;

	if (h->error)
		return h->error;
	if (h->writing) {
		h->write_again = true; /* the writer loops until nghttp2 has nothing */
		return 0;
	}
	h->writing = true;
	do {
		h->write_again = false;
		for (;;) {
			if ((r = drain(h))) {
				h2c_fail(h, r);
				break;
			}
			if (!h->out_len)
				break;
			/* Other tasks may queue frames meanwhile: nghttp2 is not in use. */
			if ((w = giong_stream_write_all(h->st, h->out, h->out_len)) < 0) {
				/* Part of a frame may have left: the connection cannot go on.
				 * This task's own deadline or cancellation is its error; the
				 * other exchanges see the connection aborted. */
				r = (int)w;
				h2c_fail(h, r == -ETIMEDOUT || r == -ECANCELED ? -ECONNABORTED : r);
				h->writing = false;
				giong_waitq_wake_all(&h->drained, 0);
				return r;
			}
		}
	} while (!h->error && h->write_again);
	h->writing = false;
	giong_waitq_wake_all(&h->drained, 0); /* what was queued when they looked has left */
	return h->error;
}

/* Read once from the connection (as its reader: h->reading is set) and feed nghttp2,
 * then give the reading up (another task may read while this one writes) and write
 * what nghttp2 answers. 0, or -errno (the connection's failure, or the calling task's
 * deadline or cancellation). */
static int read_once(struct h2c_session *h)
{
	ssize_t n = giong_stream_read(h->st, h->rbuf, sizeof(h->rbuf));
	bool failed = false;

	if (n == 0)
		n = -ECONNRESET; /* the server closed: streams not ended are cut */
	if (n > 0)
		failed = nghttp2_session_mem_recv(h->s, (const uint8_t *)h->rbuf, (size_t)n) < 0;
	h->reading = false;
	handover(h);
	if (n < 0) {
		if (n != -ETIMEDOUT && n != -ECANCELED)
			h2c_fail(h, (int)n);
		return (int)n;
	}
	/* Acknowledgements, window updates; after a failure, the GOAWAY nghttp2 queued. */
	(void)h2c_flush(h);
	/* A connection error nghttp2 handled itself ends the session without failing the
	 * call: nothing more to read or write. */
	if (failed || (!nghttp2_session_want_read(h->s) && !nghttp2_session_want_write(h->s)))
		h2c_fail(h, h->goaway && !failed ? -ECONNRESET : -EPROTO);
	return h->error;
}

int h2c_wait(struct h2c_stream *st, bool (*ready)(const struct h2c_stream *), bool drains)
{
	struct h2c_session *h = st->h;
	int r = 0;

	for (;;) {
		if (ready(st))
			break;
		if (h->error) {
			r = h->error;
			break;
		}
		if (drains && h->writing && h->write_again) {
			/* Our frames wait for the task writing: it takes them in its next
			 * round, then says so. A read would wait for the server instead. */
			if ((r = giong_waitq_wait(&h->drained, 0)) < 0)
				break;
			continue;
		}
		if (!h->reading) {
			h->reading = true;
			r = read_once(h); /* gives the reading up itself */
			if (r < 0 && ready(st))
				r = 0; /* what it waited for came before the failure */
			if (r < 0)
				break;
			continue;
		}
		st->waiting = true;
		giong__list_push_back(&h->waiters, &st->wlink);
		r = giong_waitq_wait(&st->wait, 0);
		waiter_remove(st); /* a timeout leaves it on the list */
		if (r < 0)
			break;
	}
	handover(h);
	return r;
}

/* ------------------------------------------------------------ nghttp2's callbacks */

static struct h2c_stream *stream_of(nghttp2_session *s, int32_t id)
{
	return nghttp2_session_get_stream_user_data(s, id);
}

/* Keep a field of the head (names come lowercase from nghttp2): offsets into hbuf
 * while it may move; 0, or -errno for a limit crossed. */
static int field_add(struct h2c_stream *st, const uint8_t *name, size_t nl, const uint8_t *value,
		     size_t vl)
{
	struct h2c_session *h = st->h;
	size_t need = st->hbuf_len + nl + vl;

	st->head_bytes += nl + vl + 32; /* RFC 9113 6.5.2's count */
	if (st->head_bytes > h->head_max || st->nfields >= h->fields_max)
		return -EMSGSIZE;
	if (h2_fields_reserve(&st->fields, st->nfields, &st->fields_cap))
		return -ENOMEM;
	if (need > st->hbuf_cap) {
		size_t cap = need < 1024 ? 1024 : need * 2;
		char *b = realloc(st->hbuf, cap);

		if (!b)
			return -ENOMEM;
		st->hbuf = b;
		st->hbuf_cap = cap;
	}
	memcpy(st->hbuf + st->hbuf_len, name, nl);
	memcpy(st->hbuf + st->hbuf_len + nl, value, vl);
	/* Offsets for now (the buffer may move): pointers once the head is whole. */
	st->fields[st->nfields++] = (struct giong_http_field){
		.name = (const char *)(uintptr_t)st->hbuf_len,
		.value = (const char *)(uintptr_t)(st->hbuf_len + nl),
		.name_len = (uint32_t)nl,
		.value_len = (uint32_t)vl,
	};
	st->hbuf_len = need;
	return 0;
}

/* The head is whole: its fields' offsets become pointers, its length is read. */
static int head_done(struct h2c_stream *st)
{
	st->content_length = -1;
	for (uint32_t i = 0; i < st->nfields; i++) {
		struct giong_http_field *f = &st->fields[i];

		f->name = st->hbuf + (uintptr_t)f->name;
		f->value = st->hbuf + (uintptr_t)f->value;
		if (f->name_len == 14 && !memcmp(f->name, "content-length", 14)) {
			int64_t v = 0;

			/* nghttp2 checked its syntax (digits only, one value) */
			for (uint32_t k = 0; k < f->value_len && v < INT64_MAX / 10 - 9; k++)
				v = v * 10 + (f->value[k] - '0');
			st->content_length = v;
		}
	}
	st->head_done = true;
	return 0;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *frame, const uint8_t *name, size_t nl,
		     const uint8_t *value, size_t vl, uint8_t flags, void *ud)
{
	struct h2c_stream *st = stream_of(s, frame->hd.stream_id);
	int r;

	(void)flags;
	(void)ud;
	if (!st || st->error || frame->hd.type != NGHTTP2_HEADERS || st->head_done)
		return 0; /* an exchange that ended, or trailers: not kept */
	if (nl == 7 && !memcmp(name, ":status", 7)) {
		st->status = 0;
		for (size_t i = 0; i < vl && i < 3; i++)
			st->status = st->status * 10 + (value[i] - '0');
		return 0;
	}
	if (nl && name[0] == ':')
		return 0; /* nghttp2 refuses any other pseudo-field in a response */
	if ((r = field_add(st, name, nl, value, vl))) {
		st->error = r;
		h2c_wake(st);
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* the stream is reset */
	}
	return 0;
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *frame, void *ud)
{
	struct h2c_session *h = ud;
	struct h2c_stream *st;

	if (frame->hd.type == NGHTTP2_GOAWAY) {
		h->goaway = true;
		return 0;
	}
	if (!(st = stream_of(s, frame->hd.stream_id)))
		return 0;
	if (frame->hd.type == NGHTTP2_HEADERS && !st->head_done && !st->error) {
		if (st->status >= 100 && st->status < 200 && st->status != 101) {
			/* 100 Continue, 103 Early Hints: the final head follows. */
			st->nfields = 0;
			st->hbuf_len = 0;
			st->head_bytes = 0;
			if (++st->interim > H2C_INTERIM_MAX) {
				st->error = -EBADMSG;
				nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, st->id,
							  NGHTTP2_PROTOCOL_ERROR);
			}
		} else if (st->status >= 200 && st->status <= 599) {
			head_done(st);
		} else {
			st->error = -EBADMSG;
			nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, st->id,
						  NGHTTP2_PROTOCOL_ERROR);
		}
		h2c_wake(st);
	}
	if ((frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) &&
	    (frame->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
		st->end_stream = true;
		h2c_wake(st);
	}
	return 0;
}

static int on_data_chunk(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data,
			 size_t len, void *ud)
{
	struct h2c_stream *st = stream_of(s, id);
	struct h2c_chunk *c;

	(void)flags;
	(void)ud;
	if (!st) {
		/* Its exchange ended: the bytes are dropped, the window given back. */
		nghttp2_session_consume_connection(s, len);
		return 0;
	}
	if (!(c = malloc(sizeof(*c) + len)))
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	c->next = NULL;
	c->len = len;
	memcpy(c->data, data, len);
	if (st->in_tail)
		st->in_tail->next = c;
	else
		st->in = c;
	st->in_tail = c;
	st->unconsumed += len;
	h2c_wake(st);
	return 0;
}

static int on_stream_close(nghttp2_session *s, int32_t id, uint32_t error_code, void *ud)
{
	struct h2c_stream *st = stream_of(s, id);

	(void)ud;
	if (st) {
		st->closed = true;
		st->reset = error_code;
		h2c_wake(st);
	}
	return 0;
}

int h2c_callbacks(nghttp2_session_callbacks **ret)
{
	nghttp2_session_callbacks *cb;

	if (nghttp2_session_callbacks_new(&cb))
		return -ENOMEM;
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data_chunk);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
	*ret = cb;
	return 0;
}
