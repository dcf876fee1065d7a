/* SPDX-License-Identifier: MIT */
/*
 * conn.c - a connection's life (see conn.h and giong/http/server.h): parked
 * with no task, a task when bytes arrive, every buffered request answered,
 * the batch of responses sent without waiting, parked again.
 *
 * Ownership of the batch: while batch->send is in flight (c->sending), the
 * kernel reads batch->out's bytes; nothing appends to the batch, frees it or
 * moves it until batch_sent() ran. Appends go through
 * giong__http_frame_reserve(), which waits for that first.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <giong/http/status.h>

#include "common/conn.h"

static intptr_t conn_task(void *arg);

static void conn_free(struct giong__http_conn *c)
{
	struct giong__http_worker *w = c->w;

	if (c->batch)
		giong__http_batch_put(w, c->batch);
	free(c->client);
	if (c->ended)
		giong__http_stream_ended(c->ended);
	w->stats.open--;
	free(c);
	giong__http_worker_conn_ended(w);
}

static void unpark(struct giong__http_conn *c)
{
	struct giong__http_worker *w = c->w;

	if (c->park == GIONG__HTTP_IDLE)
		giong__list_remove(&w->idle, &c->link);
	else if (c->park == GIONG__HTTP_DRAINING)
		giong__list_remove(&w->draining, &c->link);
	else
		return;
	c->park = GIONG__HTTP_ACTIVE;
	w->stats.idle--;
}

/* Close the stream; the connection goes now, or when its send ends. */
static void conn_close(struct giong__http_conn *c)
{
	unpark(c);
	if (c->s)
		giong_stream_close(c->s); /* cancels a send in flight */
	c->s = NULL;
	if (c->sending) {
		c->closing = true; /* batch_sent() frees it */
		return;
	}
	conn_free(c);
}

void giong__http_conn_close_parked(struct giong__http_conn *c)
{
	conn_close(c);
}

/* A parked connection has bytes (or its end): a task from the pool. */
static void conn_readable(struct giong_stream *s, void *ctx)
{
	struct giong__http_conn *c = ctx;

	(void)s;
	if (c->park == GIONG__HTTP_ACTIVE)
		return; /* its task will read them */
	unpark(c);
	if ((!c->batch && !(c->batch = giong__http_batch_get(c->w))) ||
	    giong_spawn(conn_task, c, NULL)) {
		conn_close(c);
		return;
	}
}

/* Park @c with no task: on the idle list, or the draining one while its
 * last batch is in flight. Returns 0, or -errno if the stream cannot call
 * back (then the task keeps waiting itself). */
static int conn_park(struct giong__http_conn *c)
{
	struct giong__http_worker *w = c->w;
	struct giong__list *l = c->sending ? &w->draining : &w->idle;
	int r;

	if (!c->sending && c->batch) {
		giong__http_batch_put(w, c->batch); /* an idle connection holds no buffer */
		c->batch = NULL;
	}
	c->park = c->sending ? GIONG__HTTP_DRAINING : GIONG__HTTP_IDLE;
	c->parked_at = giong_now_ms();
	/* The sweeper sleeps until the first expiry it knew of; one that comes
	 * sooner (the first idle one while it waits for a draining one's write
	 * deadline, say) wakes it. In the common case none does: entries of a
	 * list expire in the order they park. */
	if (c->parked_at + (c->sending ? w->srv->limits.write_timeout_ms
				       : w->srv->limits.idle_timeout_ms) <
	    w->sweep_at)
		giong_waitq_wake_all(&w->sweep_wait, 0);
	giong__list_push_back(l, &c->link);
	w->stats.idle++;
	r = giong_stream_on_readable(c->s, conn_readable, c);
	if (r) {
		unpark(c);
		if (!c->batch && !(c->batch = giong__http_batch_get(w)))
			return -ENOMEM;
	}
	return r;
}

/* The send of the batch is over (from its completion, outside any task). */
static void batch_sent(struct giong_stream_send *req, ssize_t res)
{
	struct giong__http_conn *c = req->data;
	struct giong__http_batch *b = c->batch;

	c->sending = false;
	if (res != (ssize_t)b->iov.iov_len)
		c->broken = true;
	giong__http_out_clear(&b->out);
	if (c->closing) {
		conn_free(c);
		return;
	}
	if (c->sent_wait) {
		giong_waitq_wake_all(c->sent_wait, 0);
		return;
	}
	if (c->park != GIONG__HTTP_DRAINING)
		return; /* a task runs on it and will see */
	/* Parked while sending: now idle, and it gives its batch back. */
	unpark(c);
	if (c->broken || c->last || c->w->shutting_down) {
		conn_close(c);
		return;
	}
	if (conn_park(c))
		conn_close(c);
}

/* Wait until the batch is not in flight, under the write deadline. */
static int wait_sent(struct giong__http_frame *f)
{
	struct giong__http_conn *c = f->c;
	uint64_t saved;
	int r = 0;

	if (c->sending && !c->broken) {
		saved = giong_deadline_in(c->w->srv->limits.write_timeout_ms);
		c->sent_wait = &f->wait;
		while (c->sending && r >= 0)
			r = giong_waitq_wait(&f->wait, 0);
		c->sent_wait = NULL;
		giong_deadline_restore(saved);
		if (r == -ETIMEDOUT)
			c->w->stats.write_timeouts++;
		if (r < 0) {
			/* The send is still in flight: only a close ends it, and
			 * nothing more is to be tried on the connection. */
			c->broken = true;
			return r;
		}
	}
	return c->broken ? -EPIPE : 0;
}

/* Write @iov[0..n) whole from the task, under the write deadline. @iov is
 * changed. */
static int write_all(struct giong__http_frame *f, struct iovec *iov, int n)
{
	uint64_t saved = giong_deadline_in(f->c->w->srv->limits.write_timeout_ms);
	int r = giong__http_writev_all(f->c->s, iov, n);

	giong_deadline_restore(saved);
	if (r == -ETIMEDOUT)
		f->c->w->stats.write_timeouts++;
	if (r)
		f->c->broken = true;
	return r;
}

int giong__http_frame_write(struct giong__http_frame *f, const struct iovec *extra, int n)
{
	struct giong__http_out *o = &f->c->batch->out;
	struct iovec iov[8];
	int r, k = 0;

	if ((r = wait_sent(f)))
		return r;
	if (n > 7)
		return -EINVAL;
	if (f->res.started && o->len > f->res.head_start)
		f->res.sent_some = true; /* part of the current response leaves */
	if (o->len)
		iov[k++] = (struct iovec){o->data, o->len};
	for (int i = 0; i < n; i++)
		iov[k++] = extra[i];
	/* The batch and @extra are lent to the kernel inside write_all only. */
	r = write_all(f, iov, k);
	giong__http_out_clear(o);
	f->res.head_start = 0;
	return r;
}

int giong__http_frame_reserve(struct giong__http_frame *f, size_t n)
{
	struct giong__http_out *o = &f->c->batch->out;
	int r;

	if ((r = wait_sent(f)))
		return r;
	if (o->len + n <= GIONG__HTTP_BATCH_MAX)
		return 0;
	return giong__http_frame_write(f, NULL, 0);
}

/* Send what the batch holds, without waiting for it (see the top). */
static int flush_async(struct giong__http_frame *f)
{
	struct giong__http_conn *c = f->c;
	struct giong__http_batch *b = c->batch;
	int r;

	if (c->sending || !b->out.len)
		return c->broken ? -EPIPE : 0;
	if (c->broken)
		return -EPIPE;
	b->iov = (struct iovec){b->out.data, b->out.len};
	b->send.done = batch_sent;
	b->send.data = c;
	/* b->out's bytes, b->iov and b->send are lent to the kernel until
	 * batch_sent() (c->sending says so). */
	r = giong_stream_send_start(c->s, &b->send, &b->iov, 1);
	if (r == -ENOTSUP)
		return giong__http_frame_write(f, NULL, 0); /* a stream that cannot: wait */
	if (r)
		return r;
	c->sending = true;
	f->res.head_start = 0;
	return 0;
}

/* ------------------------------------------------------------ requests */

static void log_response(struct giong__http_frame *f)
{
	const struct giong_http_server *srv = f->c->w->srv;
	struct giong_http_log_entry e = {
		.req = &f->req,
		.status = f->res.status,
		.body_bytes = f->res.body_bytes,
		.stream = f->c->s,
	};

	if (srv->log)
		srv->log(&e, srv->log_ctx);
}

/* Answer the request whose head was just parsed. 0, or -errno (close now,
 * without a flush). */
static int answer(struct giong__http_frame *f)
{
	struct giong__http_conn *c = f->c;
	const struct giong_http_server *srv = c->w->srv;
	struct giong__http_head *h = &f->req.head;
	struct giong_http_route_match *m = &f->req.route;
	uint64_t limit;
	int r, hr;

	c->fresh = false;
	giong__http_response_begin(f);
	if (!h->keep_alive || c->w->shutting_down || giong_is_shutting_down())
		f->res.close = true;
	r = giong_http_router_match(srv->router, h->method, h->method_len, h->path, h->path_len, m);
	limit = r == 0 && m->body_limit ? m->body_limit : srv->limits.body;
	giong__http_body_begin(f, limit);
	if (h->body == GIONG__HTTP_BODY_LENGTH && h->content_length > limit) {
		/* Refused before 100 Continue, and before any of the body is read. */
		c->w->stats.body_too_large++;
		f->res.close = true;
		r = giong__http_response_simple(&f->res, 413, NULL, NULL);
	} else if (r == -ENOENT) {
		r = giong__http_response_simple(&f->res, 404, NULL, NULL);
	} else if (r == -EPERM) {
		r = giong__http_response_simple(&f->res, 405, m->allow, NULL);
	} else if (r == 0) {
		hr = m->fn(&f->req, &f->res, m->ctx);
		if (hr < 0)
			c->w->stats.handler_errors++;
		if (c->w->shutting_down || giong_is_shutting_down())
			f->res.close = true; /* shutdown began while the handler ran */
		r = giong__http_response_finish(&f->res, hr);
	}
	if (r == 0 && f->res.ended)
		log_response(f);
	if (r == 0 && !f->res.close && !f->body.done) {
		/* The response goes now: the client may be waiting for it before
		 * it sends the rest of a body the handler did not want. */
		r = flush_async(f);
		if (r == 0)
			r = giong__http_body_finish(f);
	}
	giong__http_body_end(f);
	giong__http_frame_request_done(f);
	if (f->res.close)
		c->last = true;
	return r;
}

/* Refuse a head with @status, then close (parse.h: every refusal closes). */
static void refuse(struct giong__http_frame *f, int status)
{
	/* The head was not parsed: what the request holds is the previous one's,
	 * whose spans may point into input given back since. The log sees an
	 * empty request. */
	memset(&f->req.head, 0, sizeof(f->req.head));
	memset(&f->req.route, 0, sizeof(f->req.route));
	giong__http_response_begin(f);
	f->res.close = true;
	f->c->last = true;
	if (status == 408)
		f->c->w->stats.head_timeouts++;
	else
		f->c->w->stats.refused++;
	if (giong__http_response_simple(&f->res, status, NULL, NULL) == 0)
		log_response(f);
}

/*
 * Answer every complete request buffered. Returns 1 when a head is begun
 * and incomplete, 0 when nothing is left (or the connection is to close
 * once the batch is out: c->last), -errno to close at once.
 */
static int answer_buffered(struct giong__http_frame *f)
{
	const struct giong_http_limits *lim = &f->c->w->srv->limits;
	int n, r;

	while (f->in.len && !f->c->last) {
		if (!f->head_started) {
			f->head_started = true;
			f->head_deadline = giong_now_ms() + lim->head_timeout_ms;
			memset(&f->scan, 0, sizeof(f->scan));
		}
		n = giong__http_parse_head(f->in.data, f->in.len, lim, &f->scan, &f->req.head,
					   f->fields);
		if (n == 0)
			return 1;
		f->c->w->stats.requests++;
		f->head_started = false;
		if (n < 0) {
			refuse(f, -n);
			return 0;
		}
		f->in.data += n;
		f->in.len -= (size_t)n;
		if ((r = answer(f)))
			return r;
	}
	return 0;
}

/* Wait for more input in the task: the rest of a head (head deadline) or,
 * when the stream cannot park, the next request (idle deadline). */
static int wait_input(struct giong__http_frame *f)
{
	const struct giong_http_limits *lim = &f->c->w->srv->limits;
	uint64_t saved = f->head_started ? giong_deadline_set(f->head_deadline)
					 : giong_deadline_in(lim->idle_timeout_ms);
	int r = giong__http_frame_more(f);

	giong_deadline_restore(saved);
	return r;
}

/* The end of a connection that is to close: what is queued goes out first
 * (its last response says Connection: close), then the write side is shut
 * and the client's remaining bytes drained for a moment, so that a reset
 * does not destroy the response before the client read it. */
static void conn_finish(struct giong__http_frame *f, bool flush)
{
	struct giong__http_conn *c = f->c;

	if (flush && giong__http_frame_write(f, NULL, 0) == 0 && !f->in.eof) {
		uint64_t saved = giong_deadline_in(1000);
		const char *p;
		ssize_t n;
		size_t drained = 0;

		giong_stream_shutdown(c->s, SHUT_WR);
		while (drained < GIONG__HTTP_DISCARD_MAX &&
		       (n = giong__http_frame_peek(f, &p)) > 0) {
			giong__http_frame_consume(f, (size_t)n);
			drained += (size_t)n;
		}
		giong_deadline_restore(saved);
	}
	giong__http_frame_release_input(f);
	conn_close(c);
}

static intptr_t conn_task(void *arg)
{
	struct giong__http_conn *c = arg;
	const struct giong_http_server *srv = c->w->srv;
	struct giong__http_field stack_fields[GIONG__HTTP_STACK_FIELDS];
	struct giong__http_frame f;
	bool flush = true;
	int r;

	memset(&f, 0, sizeof(f));
	f.c = c;
	giong_waitq_init(&f.wait);
	f.fields = stack_fields;
	if (srv->limits.fields > GIONG__HTTP_STACK_FIELDS &&
	    !(f.fields = malloc(sizeof(*f.fields) * srv->limits.fields))) {
		conn_close(c);
		return 0;
	}
	if (c->wrap_pending) {
		uint64_t saved = giong_deadline_in(srv->limits.head_timeout_ms);

		c->wrap_pending = false;
		r = srv->proxy_protocol ? giong__http_read_proxy_header(&f) : 0;
		if (r == -400) {
			refuse(&f, 400); /* on the plain socket: before any wrap */
			giong_deadline_restore(saved);
			goto out;
		}
		if (r == 0 && srv->wrap) {
			struct giong_stream *out = NULL;

			r = srv->wrap(c->s, srv->wrap_ctx, &out);
			if (!r && !out)
				r = -EINVAL;
			if (!r)
				c->s = out;
		}
		giong_deadline_restore(saved);
		if (r) {
			flush = false;
			goto out;
		}
	}
	for (;;) {
		/* The task starts because bytes arrived; later, a head is cut in
		 * two, or the stream cannot park. */
		r = wait_input(&f);
		if (r == -ETIMEDOUT && f.head_started) {
			refuse(&f, 408);
			break;
		}
		if (r == -ETIMEDOUT)
			c->w->stats.idle_timeouts++;
		if (r <= 0)
			break; /* the end, or an error: what is queued still goes */
		r = answer_buffered(&f);
		if (r < 0) {
			flush = false;
			break;
		}
		if (c->last)
			break;
		if (flush_async(&f) < 0) { /* answers to earlier requests go meanwhile */
			flush = false;
			break;
		}
		if (r == 0) { /* nothing left buffered */
			giong__http_frame_release_input(&f);
			if (c->w->shutting_down || giong_is_shutting_down())
				break; /* shutdown: what is answered closes, nothing parks */
			r = conn_park(c);
			if (r == 0)
				goto parked; /* the task ends; bytes start a new one */
			if (r == -ENOMEM) {
				flush = false; /* no batch to answer with */
				break;
			}
		}
	}
out:
	conn_finish(&f, flush);
parked:
	if (f.fields != stack_fields)
		free(f.fields);
	return 0;
}

int giong__http_conn_start(struct giong__http_worker *w, struct giong_stream *s,
			   struct giong__http_stream_wait *ended)
{
	struct giong__http_conn *c = calloc(1, sizeof(*c));
	int r;

	if (!c) {
		giong_stream_close(s);
		return -ENOMEM;
	}
	c->s = s;
	c->w = w;
	c->ended = ended;
	c->fresh = true;
	if (ended)
		ended->conn = c;
	w->stats.open++;
	w->stats.accepted++;
	if (w->srv->wrap || w->srv->proxy_protocol) {
		c->wrap_pending = true; /* a task from the start, for those */
	} else if (conn_park(c) == 0) {
		return 0; /* no task until the first bytes */
	}
	if ((!c->batch && !(c->batch = giong__http_batch_get(w))) ||
	    (r = giong_spawn(conn_task, c, NULL))) {
		conn_close(c);
		return -ENOMEM;
	}
	return 0;
}
