/* SPDX-License-Identifier: MIT */
/*
 * conn.c - HTTP/1.1 on a connection (h1.h): every complete request buffered
 * parsed and answered through the common dispatch, the responses appended
 * to the batch, the batch sent without waiting once nothing complete is left
 * (common/conn.c), then the connection parked again.
 *
 * The write points are here and in response.c, body.c and sendfile.c: the
 * serializer only appends. Before a response is appended after a flush, the
 * send in flight is waited for (the kernel reads the batch until then).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "h1/h1.h"

/* The batch is the task's to append to: no send of it in flight. */
static int batch_quiet(struct giong__http_frame *f)
{
	return f->c->sending ? giong__http_conn_wait_sent(f->c, &f->wait) : 0;
}

/* Answer the request whose head was just parsed. 0, or -errno (close now,
 * without a flush). */
static int answer(struct giong__http_frame *f)
{
	struct giong_http_conn *c = f->c;
	int r;

	if ((r = batch_quiet(f)))
		return r;
	giong__http_exchange_begin(&f->req, &f->res, &giong__http1_ops, f, c);
	r = giong__http_dispatch(&f->req, &f->res);
	if (r == 0 && !f->res.close && !f->req.body.done) {
		/* The response goes now: the client may be waiting for it before
		 * it sends the rest of a body the handler did not want. */
		r = giong__http_conn_flush(c, &f->wait);
		f->head_start = 0;
		if (r == 0)
			r = giong__http1_body_finish(f);
	}
	giong__http_exchange_end(&f->req);
	giong__http_input_message_done(&f->in);
	if (f->res.close)
		c->last = true;
	return r;
}

/* Refuse a head with @status, then close (parse.h: every refusal closes). */
static void refuse(struct giong__http_frame *f, int status)
{
	if (batch_quiet(f))
		return; /* the connection is broken: nothing more goes */
	/* The head was not parsed: what the request holds is the previous one's,
	 * whose spans may point into input given back since. The log sees an
	 * empty request. */
	memset(&f->req.head, 0, sizeof(f->req.head));
	memset(&f->req.route, 0, sizeof(f->req.route));
	giong__http_exchange_begin(&f->req, &f->res, &giong__http1_ops, f, f->c);
	f->req.body.done = true; /* no body to read: the framing is unknown */
	f->res.close = true;
	f->c->last = true;
	if (status == 408)
		f->c->w->stats.head_timeouts++;
	else
		f->c->w->stats.refused++;
	if (giong__http_response_simple(&f->res, status, NULL, NULL) == 0)
		giong__http_log(&f->req, &f->res);
	f->req.px = NULL;
}

/*
 * A first request line "PRI * HTTP/2.0" (505 to HTTP/1.1 alone) is the
 * preface of a protocol the server speaks by prior knowledge: the connection
 * is that protocol's from its first byte, and what was read goes with it
 * (giong_http_conn_handed_input()). True when handed over.
 */
static bool hand_over(struct giong__http_frame *f)
{
	const struct giong_http_protocol *p = f->c->w->srv->prior;
	struct giong__http_input *in;

	if (!p || !f->c->fresh || f->c->handed || f->in.len < 16 ||
	    memcmp(f->in.data, p->preface, f->in.len < p->preface_len ? f->in.len : p->preface_len))
		return false;
	if (!(in = malloc(sizeof(*in))))
		return false;
	f->c->w->stats.requests--; /* a preface, not a request */
	*in = f->in;               /* the buffers go with it */
	memset(&f->in, 0, sizeof(f->in));
	f->c->handed = in;
	f->c->proto = p;
	return true;
}

/*
 * Answer every complete request buffered. Returns 1 when a head is begun
 * and incomplete, 0 when nothing is left (or the connection is to close
 * once the batch is out: c->last), 2 when the connection was handed over to
 * another protocol, -errno to close at once.
 */
static int answer_buffered(struct giong__http_frame *f)
{
	const struct giong_http_limits *lim = &f->c->w->srv->limits;
	int n, r, status = 0;

	while (f->in.len && !f->c->last) {
		if (!f->head_started) {
			f->head_started = true;
			f->head_deadline = giong_now_ms() + lim->head_timeout_ms;
			memset(&f->scan, 0, sizeof(f->scan));
		}
		n = giong__http_parse_head(f->in.data, f->in.len, lim, &f->scan, &f->req.head,
					   f->fields, &status);
		if (n == 0)
			return 1;
		f->c->w->stats.requests++;
		f->head_started = false;
		if (n < 0 && status == 505 && hand_over(f))
			return 2;
		if (n < 0) {
			refuse(f,
			       n == -EBADMSG ? status : 500); /* -EINVAL: ours, not the client's */
			return 0;
		}
		f->in.data += n;
		f->in.len -= (size_t)n;
		if ((r = answer(f)))
			return r;
		/* The connection's write step: a batch past its bound goes now
		 * (without waiting: the next response waits for it). */
		if (f->c->batch->out.len > GIONG__HTTP_BATCH_MAX &&
		    (r = giong__http_conn_flush(f->c, &f->wait)))
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
	int r = giong__http_input_more(&f->in, f->c->s);

	giong_deadline_restore(saved);
	return r;
}

/* The connection's task (common/conn.c's conn_task()), from its first bytes
 * (or its wrap) until it parks or closes. */
static void serve(struct giong_http_conn *c)
{
	int refuse_status = c->refuse;
	const struct giong_http_server *srv = c->w->srv;
	struct giong_http_field stack_fields[GIONG__HTTP_STACK_FIELDS];
	struct giong__http_frame f;
	bool flush = true;
	int r;

	memset(&f, 0, sizeof(f));
	f.c = c;
	giong_waitq_init(&f.wait);
	f.fields = stack_fields;
	if (srv->limits.fields > GIONG__HTTP_STACK_FIELDS &&
	    !(f.fields = malloc(sizeof(*f.fields) * srv->limits.fields))) {
		giong__http_conn_close(c);
		return;
	}
	if (refuse_status) {
		refuse(&f, refuse_status); /* on the plain socket: before any wrap */
		goto out;
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
		if (r == 2) { /* the connection is another protocol's from here */
			if (f.fields != stack_fields)
				free(f.fields);
			c->proto->serve(c);
			return;
		}
		if (c->last)
			break;
		/* Answers to earlier requests go meanwhile. */
		if (giong__http_conn_flush(c, &f.wait) < 0) {
			flush = false;
			break;
		}
		f.head_start = 0;
		if (r == 0) { /* nothing left buffered */
			giong__http_input_release(&f.in);
			if (giong__http_shutting_down(c))
				break; /* shutdown: what is answered closes, nothing parks */
			r = giong__http_conn_park(c);
			if (r == 0)
				goto parked; /* the task ends; bytes start a new one */
			if (r == -ENOBUFS) {
				flush = false; /* no batch to answer with */
				break;
			}
		}
	}
out:
	giong__http_conn_finish(c, &f.wait, &f.in, flush);
parked:
	if (f.fields != stack_fields)
		free(f.fields);
}

const struct giong_http_protocol giong__http1_ops = {
	.name = "http/1.1",
	.serve = serve,
	.body_begin = giong__http1_body_begin,
	.body_next = giong__http1_body_next,
	.interim = giong__http1_interim,
	.head_start = giong__http1_head_start,
	.head_field = giong__http1_head_field,
	.head_end = giong__http1_head_end,
	.body = giong__http1_body,
	.body_write = giong__http1_body_write,
	.body_end = giong__http1_body_end,
	.sendfile = giong__http1_sendfile,
	.head_cancel = giong__http1_head_cancel,
};
