/* SPDX-License-Identifier: MIT */
/*
 * client.c - the client side of giong_http2()'s table (<giong/http/protocol.h>):
 * a session per connection, a stream per exchange; each request's head
 * submitted with its pseudo-fields, its body handed to nghttp2 as the
 * exchange gives it, the response's head and body handed back as they come,
 * the stream's receive window opened as the exchange reads.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"

/* ------------------------------------------------------------ the session */

int h2c_open(struct giong_stream *s, const struct giong_http_client_options *o, void **session)
{
	nghttp2_session_callbacks *cb;
	nghttp2_option *opt;
	struct h2c_session *h;
	int r;

	if (!s || !o || !session)
		return -EINVAL;
	*session = NULL;
	if (!(h = calloc(1, sizeof(*h))))
		return -ENOMEM;
	h->st = s;
	h->head_max = o->head_max ? o->head_max : GIONG_HTTP_CLIENT_HEAD;
	h->fields_max = o->fields_max ? o->fields_max : GIONG_HTTP_CLIENT_FIELDS;
	if ((r = h2c_callbacks(&cb))) {
		free(h);
		return r;
	}
	if (nghttp2_option_new(&opt)) {
		nghttp2_session_callbacks_del(cb);
		free(h);
		return -ENOMEM;
	}
	/* The windows open as the exchanges read (nghttp2_session_consume()): a
	 * response nobody reads holds at most its stream's window. */
	nghttp2_option_set_no_auto_window_update(opt, 1);
	nghttp2_option_set_max_outbound_ack(opt, 1000);
	nghttp2_option_set_max_settings(opt, 32);
	nghttp2_option_set_max_continuations(opt, 8);
	r = nghttp2_session_client_new2(&h->s, cb, h, opt);
	nghttp2_option_del(opt);
	nghttp2_session_callbacks_del(cb);
	if (r) {
		free(h);
		return -ENOMEM;
	}
	nghttp2_settings_entry iv[] = {
		{NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
		{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, H2C_STREAM_WINDOW},
		{NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, h->head_max},
	};
	if (nghttp2_submit_settings(h->s, NGHTTP2_FLAG_NONE, iv, sizeof(iv) / sizeof(iv[0])) ||
	    nghttp2_session_set_local_window_size(h->s, NGHTTP2_FLAG_NONE, 0, H2C_CONN_WINDOW)) {
		nghttp2_session_del(h->s);
		free(h);
		return -ENOMEM;
	}
	/* The preface and SETTINGS go with the first request's HEADERS (one write). */
	*session = h;
	return 0;
}

int h2c_usable(void *session)
{
	struct h2c_session *h = session;

	if (!h)
		return -EINVAL;
	if (h->error)
		return h->error;
	if (h->goaway || !nghttp2_session_want_read(h->s))
		return -ECONNRESET;
	if (nghttp2_session_get_next_stream_id(h->s) > (1u << 30))
		return -ENOSPC; /* near the last stream id: a new connection */
	return h->nstreams <
	       nghttp2_session_get_remote_settings(h->s, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
}

unsigned h2c_streams(void *session)
{
	struct h2c_session *h = session;

	if (!h)
		return 0;
	/* Frames queued and not written (the RST_STREAM of an exchange ended early,
	 * which client_end() cannot wait to write) count as one: not idle yet. */
	return h->nstreams + (!h->error && nghttp2_session_want_write(h->s) ? 1u : 0u);
}

void h2c_close(void *session)
{
	struct h2c_session *h = session;

	if (!h)
		return;
	nghttp2_session_del(h->s);
	free(h->out);
	free(h);
}

/* ------------------------------------------------------------ a request */

/* nghttp2's source of a request body: what client_body() lent, DEFERRED until then.
 * The stream is looked up by its id, not taken from the source: an exchange that ended
 * (its stream freed, nghttp2's reference cleared) with its DATA still queued gets the
 * stream reset here instead of its freed memory read. */
static ssize_t body_read(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
			 nghttp2_data_source *src, void *ud)
{
	struct h2c_stream *st = nghttp2_session_get_stream_user_data(s, id);
	size_t n;

	(void)src;
	(void)ud;
	if (!st || st->error)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	if (!st->body_len && !st->body_last) {
		st->deferred = true;
		return NGHTTP2_ERR_DEFERRED;
	}
	n = st->body_len < len ? st->body_len : len;
	if (n) {
		memcpy(buf, st->body, n);
		st->body += n; /* not for a body that is none: NULL + 0 */
		st->body_len -= n;
	}
	if (!st->body_len) {
		if (st->body_last) {
			*flags |= NGHTTP2_DATA_FLAG_EOF;
			st->eof_sent = true;
		}
		h2c_wake(st); /* its client_body() may return */
	}
	return (ssize_t)n;
}

static nghttp2_nv nv(const char *name, size_t nl, const char *value, size_t vl)
{
	return (nghttp2_nv){(uint8_t *)name, (uint8_t *)value, nl, vl, NGHTTP2_NV_FLAG_NONE};
}

int h2c_request(void *session, const struct giong_http_request_out *rq, void **ret)
{
	struct h2c_session *h = session;
	nghttp2_data_provider prd;
	struct h2c_stream *st;
	nghttp2_nv *nva;
	char cl[24];
	size_t n = 0;
	int32_t id;
	int r;

	if (!h || !rq || !ret)
		return -EINVAL;
	*ret = NULL;
	if ((r = h2c_usable(h)) < 0)
		return r == -ECONNRESET ? -EAGAIN : r; /* GOAWAY: another connection */
	if (!(st = calloc(1, sizeof(*st))))
		return -ENOMEM;
	if (!(nva = calloc(5 + (size_t)rq->nfields, sizeof(*nva)))) {
		free(st);
		return -ENOMEM;
	}
	st->h = h;
	nva[n++] = nv(":method", 7, rq->method, rq->method_len);
	nva[n++] = nv(":scheme", 7, rq->scheme, rq->scheme_len);
	nva[n++] = nv(":authority", 10, rq->authority, rq->authority_len);
	nva[n++] = nv(":path", 5, rq->path, rq->path_len);
	for (uint32_t i = 0; i < rq->nfields; i++)
		nva[n++] = nv(rq->fields[i].name, rq->fields[i].name_len, rq->fields[i].value,
			      rq->fields[i].value_len); /* nghttp2 lowercases the names */
	if (rq->content_length >= 0) {
		size_t k = 0;
		uint64_t v = (uint64_t)rq->content_length;
		char d[24];

		do
			d[k++] = (char)('0' + v % 10);
		while ((v /= 10));
		for (size_t i = 0; i < k; i++)
			cl[i] = d[k - 1 - i];
		nva[n++] = nv("content-length", 14, cl, k);
	}
	prd.source.ptr = NULL; /* body_read() finds the stream by its id */
	prd.read_callback = body_read;
	/* Past the server's limit of streams nghttp2 holds the HEADERS until one ends. */
	id = nghttp2_submit_request(h->s, NULL, nva, n, rq->has_body ? &prd : NULL, st);
	free(nva);
	if (id < 0) {
		free(st);
		return id == NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE ? -EAGAIN : -ENOMEM;
	}
	st->id = id;
	giong__list_push_back(&h->streams, &st->link);
	h->nstreams++;
	*ret = st;
	if (!rq->has_body && (r = h2c_flush(h)) < 0)
		return r; /* the stream is the caller's: client_end() frees it */
	return 0;
}

/* The body lent to client_body() is nghttp2's (or needed no more). */
static bool body_taken(const struct h2c_stream *st)
{
	return st->closed || st->error || (!st->body_len && (!st->body_last || st->eof_sent));
}

int h2c_body(void *stream, const void *p, size_t len, bool last)
{
	struct h2c_stream *st = stream;
	struct h2c_session *h;
	int r;

	if (!st || (!p && len))
		return -EINVAL;
	h = st->h;
	if (st->body_last)
		return -EALREADY;
	st->body = p;
	st->body_len = len;
	st->body_last = last;
	if (st->deferred) {
		st->deferred = false;
		nghttp2_session_resume_data(h->s, st->id);
	}
	r = h2c_flush(h);
	if (!r)
		r = h2c_wait(st, body_taken, true);
	if (r && !body_taken(st)) {
		/* Not all of it went: never an END_STREAM after a body cut short (the
		 * source resets the stream if nghttp2 asks again). */
		st->error = r;
	}
	st->body = NULL; /* the caller's again, whatever happened */
	st->body_len = 0;
	if (r)
		return r;
	if (st->error)
		return st->error;
	/* A stream the server ended: its response may have come (answered early). */
	if (st->closed && !st->head_done && st->reset != NGHTTP2_NO_ERROR)
		return st->reset == NGHTTP2_REFUSED_STREAM ? -EAGAIN : -ECONNRESET;
	return 0;
}

/* ------------------------------------------------------------ the response */

static bool head_ready(const struct h2c_stream *st)
{
	return st->head_done || st->closed || st->error;
}

/* Why a stream closed before what it waited for came, as an errno. */
static int closed_error(const struct h2c_stream *st)
{
	if (st->error)
		return st->error;
	switch (st->reset) {
	case NGHTTP2_REFUSED_STREAM:
		return -EAGAIN; /* not processed: the request may go again */
	case NGHTTP2_PROTOCOL_ERROR:
		return -EBADMSG;
	default:
		return -ECONNRESET;
	}
}

int h2c_response(void *stream, struct giong_http_reply_in *out)
{
	struct h2c_stream *st = stream;
	int r;

	if (!st || !out)
		return -EINVAL;
	if ((r = h2c_wait(st, head_ready, false)))
		return r == -EPROTO ? -EBADMSG : r;
	if (!st->head_done)
		return closed_error(st);
	out->status = st->status;
	out->fields = st->fields;
	out->nfields = st->nfields;
	out->content_length = st->content_length;
	return st->status;
}

/* Give back the window of what the exchange has read. 0 or -errno. */
static int consume(struct h2c_stream *st)
{
	struct h2c_chunk *c = st->lent;

	if (!c)
		return 0;
	st->lent = NULL;
	st->unconsumed -= c->len;
	if (!st->closed)
		nghttp2_session_consume(st->h->s, st->id, c->len);
	else
		nghttp2_session_consume_connection(st->h->s, c->len);
	free(c);
	/* The WINDOW_UPDATE. A failure is the connection's: what this stream holds
	 * already is still handed out first (body_ready()). */
	(void)h2c_flush(st->h);
	return 0;
}

static bool body_ready(const struct h2c_stream *st)
{
	return st->in || st->end_stream || st->closed || st->error;
}

ssize_t h2c_next(void *stream, const void **data)
{
	struct h2c_stream *st = stream;
	struct h2c_chunk *c;
	int r;

	if (!st || !data)
		return -EINVAL;
	*data = "";
	if ((r = consume(st)) || (r = h2c_wait(st, body_ready, false)))
		return r == -EPROTO ? -EBADMSG : r;
	if ((c = st->in)) {
		if (!(st->in = c->next))
			st->in_tail = NULL;
		st->lent = c;
		*data = c->data;
		return (ssize_t)c->len;
	}
	if (st->end_stream && !st->error)
		return 0;
	return closed_error(st);
}

int h2c_end(void *stream)
{
	struct h2c_stream *st = stream;
	struct h2c_session *h;
	struct h2c_chunk *c;
	bool whole;

	if (!st)
		return 0;
	h = st->h;
	whole = st->end_stream && !st->error && !st->in && (!st->closed || !st->reset) &&
		(!st->body_last || st->eof_sent || st->closed);
	if (!st->closed && !h->error)
		nghttp2_submit_rst_stream(h->s, NGHTTP2_FLAG_NONE, st->id,
					  whole ? NGHTTP2_NO_ERROR : NGHTTP2_CANCEL);
	/* Whatever it held, read or not, goes back to the connection's window (the
	 * stream's is gone with it). */
	if (st->unconsumed && !h->error)
		nghttp2_session_consume_connection(h->s, st->unconsumed);
	nghttp2_session_set_stream_user_data(h->s, st->id, NULL);
	free(st->lent);
	while ((c = st->in)) {
		st->in = c->next;
		free(c);
	}
	giong__list_remove(&h->streams, &st->link);
	h->nstreams--;
	free(st->fields);
	free(st->hbuf);
	free(st);
	return whole;
}
