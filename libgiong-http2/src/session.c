/* SPDX-License-Identifier: MIT */
/*
 * session.c - the nghttp2 server session of a connection: its options and
 * first SETTINGS, and the callbacks that turn frames into streams (h2.h).
 *
 * nghttp2 checks HTTP/2's messaging rules itself (RFC 9113 8.2 and 8.3:
 * uppercase names, connection-specific fields, TE other than "trailers",
 * pseudo-headers after regular ones or missing, Content-Length against the
 * DATA received) and resets the stream with PROTOCOL_ERROR; what it does not
 * do in 1.52 is done here: the decoded header list's size, counted as the
 * fields arrive; new streams per receive (Rapid Reset, beside Debian's
 * backported reset limit); the glitch bucket (MadeYouReset).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "h2.h"

bool h2_glitch(struct h2_conn *h)
{
	const struct giong_http2_options *o = &h->p->opt;
	uint64_t now = giong_now_ms();

	if (now > h->glitch_at) {
		uint64_t add = (now - h->glitch_at) * o->glitch_rate / 1000;

		if (add) {
			h->glitch_tokens = h->glitch_tokens + add > o->glitch_burst
						   ? o->glitch_burst
						   : h->glitch_tokens + add;
			h->glitch_at = now;
		}
	}
	if (!h->glitch_tokens)
		return false;
	h->glitch_tokens--;
	return true;
}

/* Too many: GOAWAY ENHANCE_YOUR_CALM, and nothing more is read. */
static int calm(struct h2_conn *h)
{
	h2_worker_stats()->goaway_calm++;
	h2_conn_fail(h, NGHTTP2_ENHANCE_YOUR_CALM);
	return 0;
}

static int on_begin_headers(nghttp2_session *s, const nghttp2_frame *frame, void *ud)
{
	struct h2_conn *h = ud;
	struct h2_stream *st;

	if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	if (++h->new_streams > h->p->opt.streams_per_read)
		return calm(h);
	/* Handlers still running count, whether or not nghttp2 still counts their
	 * streams (a client's reset, or one it provoked, closes them there: the
	 * MadeYouReset pattern): no more tasks than concurrent streams. */
	if (h->tasks >= h->p->opt.max_concurrent_streams) {
		nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, frame->hd.stream_id,
					  NGHTTP2_REFUSED_STREAM);
		return 0;
	}
	if (!(st = h2_stream_new(h, frame->hd.stream_id)))
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* the stream is reset */
	nghttp2_session_set_stream_user_data(s, frame->hd.stream_id, st);
	h2_worker_stats()->streams++;
	return 0;
}

static bool is(nghttp2_rcbuf *b, const char *lit, size_t n)
{
	nghttp2_vec v = nghttp2_rcbuf_get_buf(b);

	return v.len == n && !memcmp(v.base, lit, n);
}

/* Keep @b (a reference) for the stream's life: its bytes are the head's. */
static int keep(struct h2_stream *st, nghttp2_rcbuf *b)
{
	if (st->nrefs == st->refs_cap) {
		uint32_t cap = st->refs_cap ? st->refs_cap * 2 : 16;
		nghttp2_rcbuf **n = realloc(st->refs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		st->refs = n;
		st->refs_cap = cap;
	}
	nghttp2_rcbuf_incref(b);
	st->refs[st->nrefs++] = b;
	return 0;
}

int h2_fields_reserve(struct giong_http_field **fields, uint32_t n, uint32_t *cap)
{
	if (n == *cap) {
		uint32_t c = *cap ? *cap * 2 : 16;
		struct giong_http_field *f = realloc(*fields, c * sizeof(*f));

		if (!f)
			return -ENOMEM;
		*fields = f;
		*cap = c;
	}
	return 0;
}

static int add_field(struct h2_stream *st, nghttp2_vec n, nghttp2_vec v)
{
	if (h2_fields_reserve(&st->fields, st->nfields, &st->fields_cap))
		return -ENOMEM;
	st->fields[st->nfields++] = (struct giong_http_field){
		.name = (const char *)n.base,
		.value = (const char *)v.base,
		.name_len = (uint32_t)n.len,
		.value_len = (uint32_t)v.len,
	};
	return 0;
}

/* Content-Length's digits (nghttp2 has checked its form and the DATA against it). */
static int64_t parse_length(nghttp2_vec v)
{
	int64_t n = 0;

	for (size_t i = 0; i < v.len; i++) {
		if (v.base[i] < '0' || v.base[i] > '9' || n > (INT64_MAX - 9) / 10)
			return -1;
		n = n * 10 + (v.base[i] - '0');
	}
	return v.len ? n : -1;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *frame, nghttp2_rcbuf *name,
		     nghttp2_rcbuf *value, uint8_t flags, void *ud)
{
	struct h2_stream *st = nghttp2_session_get_stream_user_data(s, frame->hd.stream_id);
	nghttp2_vec n = nghttp2_rcbuf_get_buf(name), v = nghttp2_rcbuf_get_buf(value);
	struct giong_http_head_in *hd;

	(void)flags;
	(void)ud;
	if (!st || frame->hd.type != NGHTTP2_HEADERS || st->req)
		return 0; /* trailers: not given to handlers (their fields are checked by nghttp2) */
	/* Counted as RFC 9113 6.5.2 counts; past the budget nothing more is kept. */
	if (st->refuse)
		return 0;
	st->header_bytes += n.len + v.len + 32;
	if (st->header_bytes > st->h->header_max) {
		st->refuse = 431;
		return 0;
	}
	hd = &st->head;
	if (n.len && n.base[0] == ':') {
		const char **where = NULL;
		size_t *len = NULL;

		if (is(name, ":method", 7))
			where = &hd->method, len = &hd->method_len;
		else if (is(name, ":path", 5))
			where = &hd->path, len = &hd->path_len;
		else if (is(name, ":authority", 10))
			where = &hd->authority, len = &hd->authority_len;
		if (!where)
			return 0; /* :scheme: nghttp2 checked it is there */
		if (keep(st, value))
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
		*where = (const char *)v.base;
		*len = v.len;
		return 0;
	}
	if (keep(st, name) || keep(st, value) || add_field(st, n, v))
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	if (is(name, "content-length", 14))
		hd->content_length = parse_length(v);
	else if (is(name, "host", 4) && !hd->authority)
		hd->authority = (const char *)v.base, hd->authority_len = v.len;
	return 0;
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *frame, void *ud)
{
	struct h2_stream *st = nghttp2_session_get_stream_user_data(s, frame->hd.stream_id);

	switch (frame->hd.type) {
	case NGHTTP2_HEADERS:
		if (st && st->req && (frame->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
			st->end_stream = true; /* trailers end the body */
			h2_stream_wake(st);
			break;
		}
		if (!st || st->req || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
			break;
		if (frame->hd.flags & NGHTTP2_FLAG_END_STREAM)
			st->end_stream = true;
		st->head.has_body = !st->end_stream;
		if (h2_stream_start(st))
			nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, st->id,
						  NGHTTP2_INTERNAL_ERROR);
		break;
	case NGHTTP2_DATA:
		if (st && (frame->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
			st->end_stream = true;
			h2_stream_wake(st);
		}
		break;
	case NGHTTP2_RST_STREAM:
		h2_worker_stats()->resets_received++;
		break;
	case NGHTTP2_SETTINGS:
		if (frame->hd.flags & NGHTTP2_FLAG_ACK)
			((struct h2_conn *)ud)->settings_at = 0;
		break;
	default:
		break;
	}
	return 0;
}

static int on_data_chunk(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data,
			 size_t len, void *ud)
{
	struct h2_stream *st = nghttp2_session_get_stream_user_data(s, id);

	(void)flags;
	(void)ud;
	if (!st || !st->task) {
		nghttp2_session_consume(s, id, len); /* nobody reads it: the window reopens */
		return 0;
	}
	if (h2_stream_data(st, data, len))
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	return 0;
}

static int on_stream_close(nghttp2_session *s, int32_t id, uint32_t error_code, void *ud)
{
	struct h2_stream *st = nghttp2_session_get_stream_user_data(s, id);

	(void)ud;
	if (!st)
		return 0;
	/* Never a fatal return here (CVE-2023-35945: a leak in 1.52). */
	nghttp2_session_set_stream_user_data(s, id, NULL);
	st->closed = true;
	st->reset = error_code;
	h2_stream_wake(st);
	h2_stream_maybe_free(st);
	return 0;
}

/* Invalid frames, and frames that make the server reset a stream, take glitch tokens. */
static int on_invalid_frame(nghttp2_session *s, const nghttp2_frame *frame, int lib_error, void *ud)
{
	(void)s;
	(void)frame;
	(void)lib_error;
	return h2_glitch(ud) ? 0 : calm(ud);
}

static int on_frame_send(nghttp2_session *s, const nghttp2_frame *frame, void *ud)
{
	struct h2_stream *st;

	if (frame->hd.type == NGHTTP2_RST_STREAM) {
		if (frame->rst_stream.error_code == NGHTTP2_REFUSED_STREAM)
			h2_worker_stats()->refused_streams++;
		if (!h2_glitch(ud))
			return calm(ud);
	}
	/* The response ended before the request did: RFC 9113 8.1 lets the server say
	 * with RST_STREAM NO_ERROR that it wants no more of it. */
	if ((frame->hd.type == NGHTTP2_DATA || frame->hd.type == NGHTTP2_HEADERS) &&
	    (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) &&
	    (st = nghttp2_session_get_stream_user_data(s, frame->hd.stream_id)) && !st->end_stream)
		nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_NO_ERROR);
	return 0;
}

int h2_session_new(struct h2_conn *h)
{
	const struct giong_http2_options *o = &h->p->opt;
	nghttp2_session_callbacks *cb;
	nghttp2_option *opt;
	nghttp2_mem mem;
	int r;

	/* Unset, the budget is the one HTTP/1.1 has on the same server: its head limit. */
	h->header_max =
		o->header_list_max ? o->header_list_max : giong_http_conn_limits(h->c)->head;
	nghttp2_settings_entry set[] = {
		{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, o->max_concurrent_streams},
		{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, o->stream_window},
		{NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, h->header_max},
		{NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES, 1},
	};

	if (nghttp2_session_callbacks_new(&cb))
		return -ENOMEM;
	if (nghttp2_option_new(&opt)) {
		nghttp2_session_callbacks_del(cb);
		return -ENOMEM;
	}
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback2(cb, on_header);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data_chunk);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
	nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(cb, on_invalid_frame);
	nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_frame_send);
	nghttp2_session_callbacks_set_send_data_callback(cb, h2_data_send);
	nghttp2_session_callbacks_set_data_source_read_length_callback(cb, h2_data_length);
	/* A stream's window opens as its handler reads (nghttp2_session_consume_stream()),
	 * not as bytes come; the connection's as bytes come (stream.c). */
	nghttp2_option_set_no_auto_window_update(opt, 1);
	nghttp2_option_set_no_closed_streams(opt, 1);
	nghttp2_option_set_max_outbound_ack(opt, 1000);
	nghttp2_option_set_max_settings(opt, 32);
	/* Debian's backports (1.52.0-1+deb12u1, u2): Rapid Reset and CONTINUATION floods. */
	nghttp2_option_set_stream_reset_rate_limit(opt, 1000, 33);
	nghttp2_option_set_max_continuations(opt, 8);
	h2_mem_init(&mem, h);
	r = nghttp2_session_server_new3(&h->s, cb, h, opt, &mem);
	nghttp2_option_del(opt);
	nghttp2_session_callbacks_del(cb);
	if (r)
		return -ENOMEM;
	if (nghttp2_submit_settings(h->s, NGHTTP2_FLAG_NONE, set, sizeof(set) / sizeof(set[0]))) {
		nghttp2_session_del(h->s);
		h->s = NULL;
		return -ENOMEM;
	}
	h->settings_at = giong_now_ms();
	h->glitch_tokens = o->glitch_burst;
	h->glitch_at = giong_now_ms();
	return 0;
}
