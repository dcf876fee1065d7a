/* SPDX-License-Identifier: MIT */
/* h2.c - giong-load --h2 (h2.h): one nghttp2 client session per connection task. */
#include "h2.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2_request.h"

#define PROG "giong-load"

#ifdef GIONG_LOAD_HAVE_H2

#include <giong/core.h>
#include <giong/net.h>

/* h2load's windows (-w 30, -W 30): a response never waits for a WINDOW_UPDATE. */
#define WINDOW ((1 << 30) - 1)
#define OUT_CHUNK (64u << 10) /* written once this much is queued */

/* A stream in flight; slot i of its connection, found again through its user data. */
struct slot {
	int32_t id;           /* 0: free */
	int status;           /* the final :status; 0 before it */
	bool timed_out;       /* counted, and reset: its close counts nothing */
	uint64_t ref, sent;   /* latency from min(ref, sent) (pace.h) */
	uint64_t deadline_ms; /* giong_now_ms() clock */
	uint64_t bytes, body_off;
	int64_t want; /* content-length, -1: none */
};

struct conn {
	const struct load_h2 *h;
	const struct load_h2_sched *s;
	struct giong_stream *st;
	nghttp2_session *ng;
	struct slot *slots;
	uint32_t *free_idx, nfree, inflight;
	struct load_hist *hist;
	struct load_totals *t;
	uint64_t free_at; /* when a stream last closed on a full connection */
	unsigned char *out;
	size_t out_len, out_cap;
	/* the schedule's cursor, kept across reconnections */
	struct load_pace_conn pc;
	uint64_t next_due;
	bool ticket;   /* one request taken from the budget, not sent yet */
	bool sent_any; /* a stream was opened on this connection */
};

/* The end of stream @sl: counted as giong-load counts an HTTP/1.1 exchange (main.c). */
static void count_end(struct conn *c, struct slot *sl, bool failed)
{
	struct load_totals *t = c->t;
	int st = sl->status;

	if (sl->timed_out)
		return; /* counted when it timed out */
	if (failed || !st) {
		t->errors[LOAD_ERR_READ]++;
		return;
	}
	if (sl->want >= 0 && (uint64_t)sl->want != sl->bytes && !c->h->head && st != 204 &&
	    st != 304)
		t->errors[LOAD_ERR_LENGTH]++;
	if (st < 200 || st > 399)
		t->errors[LOAD_ERR_STATUS]++;
	if (st >= LOAD_STATUS_MIN && st < LOAD_STATUS_MIN + LOAD_STATUS_COUNT)
		t->status[st - LOAD_STATUS_MIN]++;
	t->requests++;
	t->bytes += sl->bytes;
	load_hist_record(c->hist, load_pace_latency(c->s->pace, sl->ref, sl->sent, load_now_ns()));
}

static void slot_free(struct conn *c, struct slot *sl)
{
	if (c->inflight == c->h->streams)
		c->free_at = load_now_ns();
	sl->id = 0;
	c->free_idx[c->nfree++] = (uint32_t)(sl - c->slots);
	c->inflight--;
}

static int on_header(nghttp2_session *ng, const nghttp2_frame *f, const uint8_t *name, size_t nl,
		     const uint8_t *value, size_t vl, uint8_t flags, void *user)
{
	struct slot *sl = f->hd.type == NGHTTP2_HEADERS
				  ? nghttp2_session_get_stream_user_data(ng, f->hd.stream_id)
				  : NULL;
	char num[24];

	(void)flags, (void)user;
	if (!sl || vl >= sizeof(num))
		return 0;
	memcpy(num, value, vl);
	num[vl] = '\0';
	/* nghttp2 checked both (a 1xx's :status comes first and is replaced by the final one) */
	if (nl == 7 && !memcmp(name, ":status", 7))
		sl->status = atoi(num);
	else if (nl == 14 && !memcmp(name, "content-length", 14))
		sl->want = strtoll(num, NULL, 10);
	return 0;
}

static int on_data(nghttp2_session *ng, uint8_t flags, int32_t id, const uint8_t *data, size_t len,
		   void *user)
{
	struct slot *sl = nghttp2_session_get_stream_user_data(ng, id);

	(void)flags, (void)data, (void)user;
	if (sl)
		sl->bytes += len;
	return 0;
}

static int on_close(nghttp2_session *ng, int32_t id, uint32_t code, void *user)
{
	struct conn *c = user;
	struct slot *sl = nghttp2_session_get_stream_user_data(ng, id);

	if (sl && sl->id == id) {
		count_end(c, sl, code != NGHTTP2_NO_ERROR);
		slot_free(c, sl);
	}
	return 0;
}

/* A request nghttp2 did not send (GOAWAY came first): its stream never opened, so no close
 * callback will count it. */
static int on_not_sent(nghttp2_session *ng, const nghttp2_frame *f, int code, void *user)
{
	struct conn *c = user;

	(void)code;
	if (f->hd.type != NGHTTP2_HEADERS || nghttp2_session_find_stream(ng, f->hd.stream_id))
		return 0;
	for (uint32_t i = 0; i < c->h->streams; i++)
		if (c->slots[i].id == f->hd.stream_id) {
			count_end(c, &c->slots[i], true);
			slot_free(c, &c->slots[i]);
			break;
		}
	return 0;
}

/* --body as DATA frames, from the stream's offset into the run's one buffer. */
static ssize_t body_read(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
			 nghttp2_data_source *src, void *user)
{
	struct conn *c = user;
	struct slot *sl = nghttp2_session_get_stream_user_data(ng, id);
	size_t n = c->h->body_len - sl->body_off;

	(void)src;
	if (n > len)
		n = len;
	memcpy(buf, c->h->body + sl->body_off, n);
	sl->body_off += n;
	if (sl->body_off == c->h->body_len)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

/* Write what the session has to send. 0 or -errno (the connection is lost). */
static int flush(struct conn *c)
{
	for (;;) {
		const uint8_t *d;
		ssize_t n = nghttp2_session_mem_send(c->ng, &d);

		if (n < 0)
			return -EPROTO;
		if (n > 0 && c->out_len + (size_t)n > c->out_cap) {
			size_t cap = c->out_cap * 2 > c->out_len + (size_t)n
					     ? c->out_cap * 2
					     : c->out_len + (size_t)n;
			unsigned char *o = realloc(c->out, cap);

			if (!o)
				return -ENOMEM;
			c->out = o, c->out_cap = cap;
		}
		if (n > 0)
			memcpy(c->out + c->out_len, d, (size_t)n), c->out_len += (size_t)n;
		if (c->out_len && (n == 0 || c->out_len >= OUT_CHUNK)) {
			/* a server that stops reading loses the connection, in time */
			uint64_t saved = giong_deadline_in(c->h->timeout_ms);
			ssize_t w = giong_stream_write_all(c->st, c->out, c->out_len);

			giong_deadline_restore(saved);
			c->out_len = 0;
			if (w < 0)
				return (int)w;
		}
		if (n == 0)
			return 0;
	}
}

/*
 * Whether the connection's next request may start: 1 now, 0 not yet (paced: at c->next_due),
 * -1 never (the run's end, the budget spent, shutdown). Takes its ticket from the budget.
 */
static int may_start(struct conn *c)
{
	uint64_t now = load_now_ns();

	if (giong_is_shutting_down() || now >= c->s->end_ns ||
	    (c->s->pace->rate && c->next_due >= c->s->end_ns))
		return -1;
	if (!c->ticket && !(c->ticket = load_budget_take(c->s->budget, 1)))
		return -1;
	return c->s->pace->rate && c->next_due > now ? 0 : 1;
}

/* The request may_start() allowed is gone (sent, or failed): the next one is due. */
static uint64_t spend(struct conn *c)
{
	uint64_t due = c->next_due;

	c->ticket = false;
	c->next_due = load_pace_conn_next(&c->pc);
	/* Due while every stream was busy: the server's delay, from the due time (pace.h). */
	return c->s->pace->rate && due < c->free_at ? due : UINT64_MAX;
}

static int submit(struct conn *c)
{
	nghttp2_data_provider prd = {.read_callback = body_read};
	struct slot *sl = &c->slots[c->free_idx[c->nfree - 1]];
	int32_t id;

	*sl = (struct slot){.ref = spend(c), .sent = load_now_ns(), .want = -1};
	sl->deadline_ms = giong_now_ms() + c->h->timeout_ms;
	id = nghttp2_submit_request(c->ng, NULL, c->h->nv, c->h->nvlen, c->h->body ? &prd : NULL,
				    sl);
	if (id < 0) {
		c->t->errors[LOAD_ERR_WRITE]++;
		return -EPROTO; /* stream ids run out: a new connection */
	}
	sl->id = id;
	c->sent_any = true;
	c->nfree--;
	c->inflight++;
	return 0;
}

/* Streams past their deadline: counted as timeouts and reset (*@reset: how many; the
 * connection goes on). Returns the earliest deadline still ahead (GIONG_NO_DEADLINE: none). */
static uint64_t expire(struct conn *c, uint32_t *reset)
{
	uint64_t now = giong_now_ms(), next = GIONG_NO_DEADLINE;

	for (uint32_t i = 0; i < c->h->streams; i++) {
		struct slot *sl = &c->slots[i];

		if (!sl->id || sl->timed_out)
			continue;
		if (sl->deadline_ms <= now) {
			sl->timed_out = true;
			c->t->errors[LOAD_ERR_TIMEOUT]++;
			++*reset;
			nghttp2_submit_rst_stream(c->ng, NGHTTP2_FLAG_NONE, sl->id, NGHTTP2_CANCEL);
		} else if (sl->deadline_ms < next) {
			next = sl->deadline_ms;
		}
	}
	return next;
}

/* Streams still open when the connection is lost: each a read error. */
static void lose_all(struct conn *c)
{
	for (uint32_t i = 0; i < c->h->streams; i++)
		if (c->slots[i].id) {
			count_end(c, &c->slots[i], true);
			slot_free(c, &c->slots[i]);
		}
}

/* A new connection and its session: 0, or -errno (counted as a connect error by the caller). */
static int open_conn(struct conn *c, nghttp2_session_callbacks *cb)
{
	static const nghttp2_settings_entry iv[] = {
		{NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
		{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, WINDOW},
	};
	static int said;
	struct giong_stream *tcp, *st;
	uint64_t saved = giong_deadline_in(c->h->timeout_ms);
	const char *alpn = NULL;
	size_t alen = 0;
	int r = giong_tcp_connect(c->h->addr, &tcp);

	if (!r) {
		giong_tcp_set_nodelay(tcp, true); /* a turn's frames are one write: send it now */
		st = tcp;
		if (c->h->tls && (r = c->h->connect(tcp, c->h->host, c->h->connect_ctx, &st)))
			giong_stream_close(tcp);
	}
	giong_deadline_restore(saved);
	if (r)
		return r;
	if (c->h->tls &&
	    (giong_stream_alpn(st, &alpn, &alen) || alen != 2 || memcmp(alpn, "h2", 2))) {
		if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
			fprintf(stderr, PROG ": %s: the server did not agree to h2 (ALPN)\n",
				c->h->authority);
		giong_stream_close(st);
		return -EPROTONOSUPPORT;
	}
	if (nghttp2_session_client_new(&c->ng, cb, c) ||
	    nghttp2_submit_settings(c->ng, NGHTTP2_FLAG_NONE, iv, 2) ||
	    nghttp2_session_set_local_window_size(c->ng, NGHTTP2_FLAG_NONE, 0, WINDOW)) {
		nghttp2_session_del(c->ng);
		c->ng = NULL;
		giong_stream_close(st);
		return -ENOMEM;
	}
	c->st = st;
	c->sent_any = false;
	return 0;
}

static void close_conn(struct conn *c, bool polite)
{
	if (polite && !nghttp2_session_terminate_session(c->ng, NGHTTP2_NO_ERROR))
		flush(c); /* GOAWAY: a server that counts errors sees a clean end */
	lose_all(c);
	nghttp2_session_del(c->ng);
	giong_stream_close(c->st);
	c->ng = NULL;
	c->st = NULL;
	c->out_len = 0;
}

/*
 * One connection's session until it ends: 1 when the run is over for it (every stream
 * closed, none may start), 0 when it must reconnect (lost, or the server's GOAWAY).
 */
static int run_session(struct conn *c)
{
	for (;;) {
		struct giong_recvbuf *b;
		uint64_t wake, saved;
		ssize_t n;
		int go = 1;
		uint32_t reset = 0;
		bool allowed;

		while ((allowed = nghttp2_session_check_request_allowed(c->ng)) &&
		       c->inflight < c->h->streams && (go = may_start(c)) == 1)
			if (submit(c))
				return 0;
		if (go < 0 && !c->inflight)
			return 1;
		if (!allowed && !c->inflight)
			return 0; /* the server's GOAWAY, or stream ids spent: a new connection */
		if (flush(c))
			return 0;
		if (!nghttp2_session_want_read(c->ng) && !nghttp2_session_want_write(c->ng))
			return 0; /* GOAWAY, and nothing of ours left open */
		wake = expire(c, &reset);
		if (reset)
			continue; /* their RST_STREAM frames go first */
		if (go == 0 && c->inflight < c->h->streams && c->next_due / 1000000 + 1 < wake)
			wake = c->next_due / 1000000 + 1; /* the next request is due */
		saved = giong_deadline_set(wake);
		n = giong_stream_recv(c->st, &b);
		giong_deadline_restore(saved);
		if (n == -ETIMEDOUT)
			continue; /* a deadline or a due time: nothing was lost */
		if (n <= 0)
			return 0;
		n = nghttp2_session_mem_recv(c->ng, giong_recvbuf_data(b), (size_t)n);
		giong_recvbuf_release(b);
		if (n < 0)
			return 0; /* a protocol error: the streams open are lost */
	}
}

int load_h2_conn(const struct load_h2 *h, uint32_t k, const struct load_h2_sched *s,
		 struct load_hist *hist, struct load_totals *t)
{
	struct conn c = {.h = h, .s = s, .hist = hist, .t = t};
	nghttp2_session_callbacks *cb = NULL;
	int r = -ENOMEM;

	c.slots = calloc(h->streams, sizeof(*c.slots));
	c.free_idx = calloc(h->streams, sizeof(*c.free_idx));
	if (!c.slots || !c.free_idx || nghttp2_session_callbacks_new(&cb))
		goto out;
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
	nghttp2_session_callbacks_set_on_frame_not_send_callback(cb, on_not_sent);
	for (uint32_t i = 0; i < h->streams; i++)
		c.free_idx[c.nfree++] = h->streams - 1 - i;
	load_pace_conn_init(&c.pc, s->pace, k);
	c.next_due = load_pace_conn_next(&c.pc);
	for (;;) {
		if (may_start(&c) < 0)
			break;
		if ((r = open_conn(&c, cb))) {
			/* the request that was to go first fails: a dead server ends a -n run too */
			spend(&c);
			t->errors[LOAD_ERR_CONNECT]++;
			giong_sleep_ms(1); /* not a busy loop that starves the worker */
			continue;
		}
		r = run_session(&c);
		close_conn(&c, r == 1);
		if (r == 1)
			break;
		if (!c.sent_any && c.ticket) {
			/* lost before its first stream: as a failed connect, not a busy loop */
			spend(&c);
			t->errors[LOAD_ERR_CONNECT]++;
			giong_sleep_ms(1);
		}
	}
	r = 0;
out:
	nghttp2_session_callbacks_del(cb);
	free(c.slots);
	free(c.free_idx);
	free(c.out);
	return r;
}

#else /* !GIONG_LOAD_HAVE_H2 */

int load_h2_conn(const struct load_h2 *h, uint32_t k, const struct load_h2_sched *s,
		 struct load_hist *hist, struct load_totals *t)
{
	(void)h, (void)k, (void)s, (void)hist, (void)t;
	return -ENOTSUP;
}

#endif
