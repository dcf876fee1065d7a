/* SPDX-License-Identifier: MIT */
/*
 * conn.c - an HTTP/2 connection (h2.h): the protocol table, the task that
 * feeds received bytes to nghttp2 and parks the connection again with no
 * task, the pump that drains nghttp2's output into one send per turn, and
 * the connection's end (GOAWAY, then close once no stream task runs).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "h2.h"

static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/* Close the connection once no task of it runs; with nothing left to send. */
static void linger_over(struct giong_timer *t, void *ctx);

static void end(struct h2_conn *h)
{
	h->dead = true;
	if (h->tasks || h->reading) {
		/* Handlers waiting for their bytes to leave or for body bytes see it
		 * now (-ECONNRESET), not at their deadline; the last of them comes
		 * back here. */
		for (struct h2_stream *st = h->streams; st; st = st->next)
			if (st->task)
				h2_stream_wake(st);
		return;
	}
	if (h->pump_queued) {
		giong_soon_cancel(&h->soon);
		h->pump_queued = false;
	}
	/* Its last frames (a GOAWAY) are leaving: closed once they left (sent() comes
	 * back here), or after H2_LINGER_MS for a peer that does not read (a flood of
	 * PINGs whose ACKs it never reads). A close now would cancel the send. */
	if (giong_http_conn_sending(h->c) && !h->draining &&
	    giong_timer_start_in(&h->linger, H2_LINGER_MS, linger_over, h) == 0) {
		h->draining = true;
		if (giong_http_conn_park(h->c, true) == 0)
			return;
		giong_timer_stop(&h->linger);
	}
	giong_timer_stop(&h->linger);
	/* Not a plain close while the client may still read: a client reading the last
	 * DATA sends WINDOW_UPDATEs, and a close with those unread (or before they come)
	 * resets the connection, destroying what it had not read yet (a download cut at
	 * shutdown). conn_free() frees @h once the client closed too, or the linger is
	 * over; at once for a client that closed already, or one whose last send is still
	 * stuck after H2_LINGER_MS (it reads nothing: a flood of PINGs whose ACKs it never
	 * reads; the linger would wait for that send until the write timeout). */
	if (h->peer_closed || (h->draining && giong_http_conn_sending(h->c)))
		giong_http_conn_close(h->c); /* it closed, or reads nothing: no linger */
	else
		giong_http_conn_linger(h->c);
}

static void linger_over(struct giong_timer *t, void *ctx)
{
	struct h2_conn *h = ctx;

	(void)t;
	if (h->tasks || h->reading)
		return; /* a task (woken for bytes) ends it */
	giong_http_conn_close(h->c);
}

static intptr_t writer_task(void *arg);

/* Drain nghttp2's output into the batch, up to its bound or a DATA frame whose payload
 * is to be spliced after it (h->splice_st). */
static void fill(struct h2_conn *h)
{
	struct giong_http_conn *c = h->c;

	if (h->broken)
		return;    /* not a protocol error: nothing could leave */
	h->pumping = true; /* parking now would take the batch being filled */
	while (!h->splice_st && giong_http_conn_queued(c) < H2_BATCH_MAX) {
		const uint8_t *p;
		ssize_t n = nghttp2_session_mem_send(h->s, &p);

		if (n < 0) {
			h2_worker_stats()->protocol_errors++;
			h->dead = true; /* NGHTTP2_ERR_NOMEM, or a flood: nothing more is sent */
			break;
		}
		if (n == 0)
			break;
		if (giong_http_conn_append(c, p, (size_t)n)) {
			h->dead = true;
			break;
		}
	}
	h->pumping = false;
}

/* A connection that ends drops its pending splice: the stream's task, waiting for
 * it, sees the end. */
static void splice_drop(struct h2_conn *h)
{
	struct h2_stream *st = h->splice_st;

	if (!st)
		return;
	h->splice_st = NULL;
	h2_file_drop(st);
	h2_stream_wake(st);
	h2_stream_maybe_free(st);
}

static void pump(struct h2_conn *h)
{
	struct giong_http_conn *c = h->c;
	int r;

	if (h->writer)
		return; /* the writer pumps again */
	if (giong_http_conn_sending(c)) {
		if (h->dead && !h->draining)
			end(h); /* parks it under the linger timer: the send may never end */
		return;         /* sent() pumps again */
	}
	fill(h);
	if (h->dead)
		splice_drop(h);
	/* A payload to splice: the writer task writes the batch, then splices. */
	r = h->splice_st ? -EAGAIN : giong_http_conn_flush(c);
	if (r == -EAGAIN) { /* a stream that only writes with waiting: a task writes */
		h->writer = true;
		h->tasks++; /* counted from now: nothing parks or frees @h under it */
		if ((r = giong_spawn(writer_task, h, NULL))) {
			h->writer = false;
			h->tasks--;
		}
	}
	if (r < 0) {
		h->dead = true;
		splice_drop(h);
	}
	if (h->dead)
		end(h); /* closes now, or once what was flushed left */
	else if (!nghttp2_session_want_read(h->s) && !nghttp2_session_want_write(h->s) &&
		 !giong_http_conn_sending(c) && !giong_http_conn_queued(c) && !h->writer)
		end(h); /* GOAWAY sent and every stream done */
	else
		h2_maybe_idle(h); /* its last stream may have closed in this pump */
}

static intptr_t writer_task(void *arg)
{
	struct h2_conn *h = arg;

	/* h->tasks counts this task from its spawn (pump()). A file's frames follow
	 * one another in this task: the batch with a frame's header, its payload
	 * spliced, then the next frames nghttp2 has. */
	while (!h->dead) {
		if (h->splice_st ? h2_splice_pending(h) : giong_http_conn_write(h->c)) {
			h->dead = h->broken = true;
			break;
		}
		fill(h);
		if (!h->splice_st)
			break; /* the rest is the pump's, sent without waiting */
	}
	splice_drop(h);
	h->writer = false;
	h->tasks--;
	pump(h); /* what nghttp2 queued meanwhile (a GOAWAY), then the end if dead */
	return 0;
}

static void pump_soon(struct giong_soon *s, void *ctx)
{
	struct h2_conn *h = ctx;

	(void)s;
	h->pump_queued = false;
	pump(h);
}

void h2_want_write(struct h2_conn *h)
{
	if (h->pump_queued)
		return;
	if (giong_call_soon(&h->soon, pump_soon, h) == 0)
		h->pump_queued = true;
}

void h2_conn_fail(struct h2_conn *h, uint32_t error_code)
{
	if (!h->goaway)
		nghttp2_session_terminate_session(h->s, error_code);
	h->goaway = true;
	h2_want_write(h);
}

/* Shutdown: GOAWAY with the last stream processed, once. Streams begun go on to
 * their end (nghttp2 refuses newer ones); with none left and the GOAWAY out,
 * nghttp2 wants neither to read nor to write, and the pump ends the connection.
 * (Not nghttp2_session_terminate_session(): it drops the DATA still queued.) */
static void maybe_goaway(struct h2_conn *h)
{
	if (h->goaway || !giong_http_conn_shutting_down(h->c))
		return;
	h->goaway = true;
	nghttp2_submit_goaway(h->s, NGHTTP2_FLAG_NONE,
			      nghttp2_session_get_last_proc_stream_id(h->s), NGHTTP2_NO_ERROR, NULL,
			      0);
	h2_want_write(h);
}

void h2_task_ended(struct h2_conn *h)
{
	h->tasks--;
	if (h->dead) {
		end(h);
		return;
	}
	maybe_goaway(h);
	h2_maybe_idle(h);
}

/* Idle with nothing nghttp2 still has to send: its frame buffer's pages go back
 * (they hold no frame between frames). */
static void idle_memory(struct h2_conn *h)
{
	if (!nghttp2_session_want_write(h->s))
		h2_mem_idle(h);
}

void h2_maybe_idle(struct h2_conn *h)
{
	int r;

	if (h->tasks || h->reading || h->pumping || !h->waiting || h->dead)
		return;
	if (giong_http_conn_shutting_down(h->c)) {
		maybe_goaway(h); /* the grace period bounds what is still leaving */
		return;
	}
	/* Parked for bytes while handlers ran: idle now, the idle timeout applies. Not
	 * when a task was just spawned for bytes that came (-EAGAIN): it parks itself,
	 * and parking here too would give the connection two tasks. */
	r = giong_http_conn_idle(h->c);
	if (r == -EAGAIN)
		return;
	h->waiting = false;
	if (r)
		end(h);
	else
		idle_memory(h);
}

/* The batch's send ended: pump what nghttp2 has more (from the completion). */
static void sent(struct giong_http_conn *c, bool broken)
{
	struct h2_conn *h = giong_http_conn_state(c);

	if (!h)
		return;
	if (broken) {
		h->dead = true; /* nothing more can be sent */
		end(h);
		return;
	}
	if (h->dead) {
		pump(h); /* what nghttp2 queued meanwhile (a GOAWAY), then the end */
		return;
	}
	/* More of nghttp2's output, next turn: a handler waiting for its bytes to leave
	 * is woken as the pump takes them (h2_data_send()). */
	h2_want_write(h);
}

static void conn_free(void *state)
{
	struct h2_conn *h = state;

	if (h->pump_queued)
		giong_soon_cancel(&h->soon);
	giong_timer_stop(&h->linger);
	h->dead = true;      /* nothing parks or pumps from here */
	h->splice_st = NULL; /* its writer ended: nothing splices */
	/* Streams left are nghttp2's only (their tasks ended): its deletion frees them. */
	while (h->streams) {
		h->streams->closed = true;
		h->streams->task = false;
		h2_stream_maybe_free(h->streams);
	}
	nghttp2_session_del(h->s);
	free(h);
}

static struct h2_conn *conn_new(struct giong_http_conn *c, const struct h2_proto *p)
{
	struct h2_conn *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->c = c;
	h->p = p;
	h->preface_left = sizeof(preface) - 1; /* nghttp2 reads it too (no option says not) */
	if (h2_session_new(h)) {
		free(h);
		return NULL;
	}
	giong_http_conn_set_state(c, h);
	h2_worker_stats()->connections++;
	return h;
}

/*
 * Follow the client's frames over the @n bytes at @p fed to nghttp2: whether a header
 * block is open, for the head timeout. Open from a HEADERS frame's 9-byte header (its
 * payload may then stop anywhere) until the payload of the HEADERS or CONTINUATION
 * frame with END_HEADERS is all in; blocks do not interleave (RFC 9113 6.10: the
 * CONTINUATIONs come next), so this is the connection's state. The frame headers
 * themselves, not nghttp2's callbacks: on_begin_frame (1.52) comes for a HEADERS frame
 * only once its padding and priority fields are in, and a block nghttp2 ignores (a
 * refused stream's, one past GOAWAY) ends without a callback (no on_frame_recv), which
 * would leave an idle connection under the head timeout. A frame nghttp2 rejects ends
 * the connection: nothing here needs to agree with it past that.
 */
static void follow(struct h2_conn *h, const uint8_t *p, size_t n)
{
	while (n) {
		size_t k;

		if (h->preface_left || h->payload_left) {
			uint32_t *left = h->preface_left ? &h->preface_left : &h->payload_left;

			k = n < *left ? n : *left;
			*left -= (uint32_t)k;
			p += k;
			n -= k;
			if (left == &h->payload_left && !*left && h->block_ends)
				h->head_open = false;
			continue;
		}
		h->hd[h->hd_len++] = *p++;
		n--;
		if (h->hd_len < sizeof(h->hd))
			continue;
		h->hd_len = 0;
		h->payload_left = (uint32_t)h->hd[0] << 16 | (uint32_t)h->hd[1] << 8 | h->hd[2];
		h->block_ends = false;
		if (h->hd[3] != NGHTTP2_HEADERS && h->hd[3] != NGHTTP2_CONTINUATION)
			continue;
		if (h->hd[3] == NGHTTP2_HEADERS && !h->head_open) {
			h->head_open = true;
			h->head_at = giong_now_ms();
		}
		h->block_ends = h->hd[4] & NGHTTP2_FLAG_END_HEADERS;
		if (h->block_ends && !h->payload_left)
			h->head_open = false;
	}
}

/* Feed @n bytes at @p to nghttp2. 0, or -1 when the connection is to end. */
static int feed(struct h2_conn *h, const char *p, size_t n)
{
	ssize_t r;

	h->new_streams = 0;
	follow(h, (const uint8_t *)p, n);
	r = nghttp2_session_mem_recv(h->s, (const uint8_t *)p, n);
	if (r < 0) {
		/* A connection error (a bad preface, a flood, a broken frame): nghttp2
		 * has queued its GOAWAY where one is due. */
		h2_worker_stats()->protocol_errors++;
		return -1;
	}
	/* A client that talks but never acknowledges our SETTINGS (a silent one is
	 * the idle timeout's). */
	if (h->settings_at && giong_now_ms() - h->settings_at > H2_SETTINGS_TIMEOUT_MS) {
		h2_worker_stats()->protocol_errors++;
		h2_conn_fail(h, NGHTTP2_SETTINGS_TIMEOUT);
	}
	return 0;
}

/* The header block begun at h->head_at is not in within the head timeout: counted as
 * HTTP/1.1 counts a head not in, and the connection ends with GOAWAY PROTOCOL_ERROR,
 * nginx's for a client that timed out mid-frame (NO_ERROR would tell the client that
 * nothing was wrong with what it sent; the streams begun before get what the
 * connection's end gives them). Not peer_closed: the GOAWAY is to be read. */
static void head_timeout(struct h2_conn *h)
{
	giong_http_conn_stats(h->c)->head_timeouts++;
	h2_conn_fail(h, NGHTTP2_PROTOCOL_ERROR);
}

/* The connection's task: what arrived, to nghttp2, the answers pumped; then
 * parked with no task (an idle one under the idle timeout) until more comes. */
static void serve(struct giong_http_conn *c)
{
	struct h2_conn *h = giong_http_conn_state(c);
	bool first = !h;
	const char *p;
	size_t n;

	if (!h && !(h = conn_new(c, (const struct h2_proto *)giong_http_conn_protocol(c)))) {
		giong_http_conn_close(c);
		return;
	}
	h->reading = true;
	h->waiting = false;
	if (h->dead) { /* ending, parked while its GOAWAY left: bytes no longer matter */
		h->reading = false;
		end(h);
		return;
	}
	if ((n = giong_http_conn_handed_input(c, &p))) {
		if (feed(h, p, n))
			h->dead = true;
		giong_http_conn_handed_input_done(c);
	} else if (first) {
		first = false; /* by ALPN: the client's preface is to come */
	}
	while (!h->dead) {
		struct giong_recvbuf *rb;
		ssize_t got;
		bool idle;

		if (!first) {
			/* Bytes are there (the task began for them), or the wait is under
			 * the head timeout while a header block is open, under the idle
			 * timeout when the stream could not park. */
			const struct giong_http_limits *lim = giong_http_conn_limits(c);
			uint64_t saved =
				h->head_open ? giong_deadline_set(h->head_at + lim->head_timeout_ms)
					     : giong_deadline_in(lim->idle_timeout_ms);

			got = giong_stream_recv(giong_http_conn_stream(c), &rb);
			giong_deadline_restore(saved);
			if (got == -ETIMEDOUT && h->head_open) {
				head_timeout(h);
				break;
			}
			if (got <= 0) {
				h->peer_closed = true; /* its end, an error, the idle timeout */
				break;
			}
			if (feed(h, giong_recvbuf_data(rb), (size_t)got))
				h->dead = true;
			giong_recvbuf_release(rb);
		}
		first = false;
		pump(h);
		if (h->dead)
			break;
		maybe_goaway(h);
		/* A header block begun and not ended: not parked (a parked connection's
		 * bound is the idle timeout, or none while handlers run) but read on in
		 * this task under the head timeout, as HTTP/1.1 reads a head. */
		if (h->head_open)
			continue;
		/* With no handler running, the idle timeout applies, streams or not: a
		 * body never sent holds the connection no longer than an idle one (a
		 * response still leaving re-parks it with each send's end). At
		 * shutdown, a response still leaving is not idle: the grace period, not
		 * close_idle, ends it. */
		idle = !h->tasks && !(h->nstreams && giong_http_conn_shutting_down(c));
		if (giong_http_conn_park(c, idle) == 0) {
			h->waiting = !idle;
			h->reading = false;
			if (idle)
				idle_memory(h);
			return;
		}
	}
	/* The end, or an error: what nghttp2 queued (its GOAWAY) goes first. */
	h->reading = false;
	h->dead = true;
	pump(h); /* ends the connection, or the send's end (sent(), writer) does */
}

static const struct giong_http_protocol default_table = {
	.abi = GIONG_HTTP_PROTOCOL_ABI,
	.size = sizeof(struct giong_http_protocol),
	.name = "h2",
	.caps = GIONG_HTTP_PROTOCOL_PRIOR_KNOWLEDGE,
	.preface = preface,
	.preface_len = sizeof(preface) - 1,
	.serve = serve,
	.conn_free = conn_free,
	.sent = sent,
	.body_begin = h2_body_begin,
	.body_next = h2_body_next,
	.interim = h2_interim,
	.head_start = h2_head_start,
	.head_field = h2_head_field,
	.head_end = h2_head_end,
	.body = h2_body,
	.body_write = h2_body_write,
	.body_end = h2_body_end,
	.sendfile = h2_sendfile,
	.head_cancel = h2_head_cancel,
	.client_open = h2c_open,
	.client_usable = h2c_usable,
	.client_streams = h2c_streams,
	.client_close = h2c_close,
	.client_request = h2c_request,
	.client_body = h2c_body,
	.client_response = h2c_response,
	.client_next = h2c_next,
	.client_end = h2c_end,
};

int giong_http2_options_init(struct giong_http2_options *o)
{
	if (!o)
		return -EINVAL;
	*o = (struct giong_http2_options){
		.max_concurrent_streams = 100,
		.stream_window = 65535,
		.header_list_max = 0, /* each server's limits->head (h2_session_new()) */
		.streams_per_read = 200,
		.glitch_burst = 10000,
		.glitch_rate = 330,
	};
	return 0;
}

/* @o's zero fields replaced by the defaults; false for a value out of range. */
static bool settle(struct giong_http2_options *o)
{
	struct giong_http2_options d;

	giong_http2_options_init(&d);
	if (o->stream_window > 0x7fffffffu)
		return false;
	if (!o->max_concurrent_streams)
		o->max_concurrent_streams = d.max_concurrent_streams;
	if (!o->stream_window)
		o->stream_window = d.stream_window;
	if (!o->streams_per_read)
		o->streams_per_read = o->max_concurrent_streams > UINT32_MAX / 2
					      ? UINT32_MAX
					      : 2 * o->max_concurrent_streams;
	if (!o->glitch_burst)
		o->glitch_burst = d.glitch_burst;
	if (!o->glitch_rate)
		o->glitch_rate = d.glitch_rate;
	return true;
}

static struct h2_proto builtin;
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

static void builtin_init(void)
{
	builtin.table = default_table; /* not a constant expression for a static's initializer */
	giong_http2_options_init(&builtin.opt);
}

const struct giong_http_protocol *giong_http2(void)
{
	pthread_once(&builtin_once, builtin_init);
	return &builtin.table;
}

int giong_http2_new(const struct giong_http2_options *o, const struct giong_http_protocol **ret)
{
	struct h2_proto *p;

	if (!ret)
		return -EINVAL;
	*ret = NULL;
	if (!(p = calloc(1, sizeof(*p))))
		return -ENOMEM;
	p->table = default_table;
	p->dynamic = true;
	if (o)
		p->opt = *o;
	if (!settle(&p->opt)) {
		free(p);
		return -EINVAL;
	}
	*ret = &p->table;
	return 0;
}

int giong_http2_free(const struct giong_http_protocol *t)
{
	struct h2_proto *p = (struct h2_proto *)t;

	if (!t)
		return 0;
	if (t == &builtin.table || t->serve != serve || !p->dynamic)
		return -EINVAL;
	free(p);
	return 0;
}

int giong_http2_stats(struct giong_http2_stats *out)
{
	if (!out)
		return -EINVAL;
	if (giong_worker_index() < 0)
		return GIONG_ENOTWORKER;
	*out = *h2_worker_stats();
	return 0;
}
