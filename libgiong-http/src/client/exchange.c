/* SPDX-License-Identifier: MIT */
/*
 * exchange.c - one request and its response (giong/http/client.h): the head
 * built in the exchange's own buffer, written with the body in one writev,
 * the response head parsed in place in the receive buffers (reply.h), the
 * body de-framed from them without a copy unless it is asked for whole and
 * came in pieces; the one retry; the end, back to the pool or closed.
 *
 * Ownership for the kernel: a write lends the request head (ex->req), the
 * caller's body and the small chunk lines on this task's stack to the kernel
 * only for the duration of giong_stream_writev(); receives fill pool buffers
 * that the connection's input (input.h) holds until the exchange is done.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <giong/http/method.h>

#include "client/client.h"
#include "common/token.h"

static const struct {
	const char *name;
	int id;
	bool idempotent, bodiless; /* RFC 9110 9.2.2; no body unless one is given */
} methods[] = {
	{"GET", GIONG_HTTP_GET, true, true},          {"HEAD", GIONG_HTTP_HEAD, true, true},
	{"POST", GIONG_HTTP_POST, false, false},      {"PUT", GIONG_HTTP_PUT, true, false},
	{"DELETE", GIONG_HTTP_DELETE, true, true},    {"OPTIONS", GIONG_HTTP_OPTIONS, true, true},
	{"TRACE", GIONG_HTTP_TRACE, true, true},      {"PATCH", GIONG_HTTP_PATCH, false, false},
	{"CONNECT", GIONG_HTTP_CONNECT, false, true},
};

/* Fields the client writes itself, or that would change the framing. */
static const char *const reserved[] = {
	"host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade",
	"te",   "trailer",
};

static struct giong_http_exchange *ex_get(struct giong__http_cworker *w)
{
	struct giong_http_exchange *ex = giong__list_entry(giong__list_pop_front(&w->exchanges),
							   struct giong_http_exchange, link);

	if (ex) {
		w->nexchanges--;
		return ex;
	}
	if (!(ex = calloc(1, sizeof(*ex))))
		return NULL;
	if (!(ex->fields = calloc(w->cli->o.fields_max, sizeof(*ex->fields)))) {
		free(ex);
		return NULL;
	}
	giong__http_out_init(&ex->req, GIONG__HTTP_CLIENT_HEAD_MAX + 64);
	return ex;
}

void giong__http_ex_put(struct giong__http_cworker *w, struct giong_http_exchange *ex)
{
	struct giong__http_out req = ex->req;
	struct giong_http_field *fields = ex->fields;
	char *copy = ex->copy;
	size_t cap = ex->copy_cap;

	if (w->nexchanges >= GIONG__HTTP_CLIENT_CACHE) {
		giong__http_out_free(&req);
		free(fields);
		free(copy);
		free(ex);
		return;
	}
	if (cap > GIONG__HTTP_CLIENT_COPY_KEEP) {
		free(copy);
		copy = NULL;
		cap = 0;
	}
	giong__http_out_clear(&req);
	memset(ex, 0, sizeof(*ex));
	ex->req = req;
	ex->fields = fields;
	ex->copy = copy;
	ex->copy_cap = cap;
	giong__list_push_front(&w->exchanges, &ex->link); /* the warmest first */
	w->nexchanges++;
}

static int fail(struct giong_http_exchange *ex, int err)
{
	/* A stream the server refused unprocessed that could not go again (streamed,
	 * or refused twice): for the caller, the server ended it. -EAGAIN is "not yet"
	 * in this API. */
	if (err == -EAGAIN)
		err = -ECONNRESET;
	if (ex->state != GIONG__HTTP_EX_FAILED) {
		ex->state = GIONG__HTTP_EX_FAILED;
		ex->error = err;
		if (err == -ETIMEDOUT)
			ex->w->stats.timeouts++;
		else if (err == -EBADMSG || err == -EMSGSIZE)
			ex->w->stats.bad_responses++;
	}
	return ex->error;
}

/*
 * "METHOD target HTTP/1.1\r\nHost: host[:port]\r\n" (and "Connection: close"
 * with no_keep_alive) into the empty ex->req: one grow and plain copies, as
 * this runs for every request (no printf, no append per piece).
 */
static int request_line(struct giong_http_exchange *ex, const char *method, size_t ml,
			const struct giong__http_url *u)
{
	bool slash = u->target[0] == '?', close = ex->w->cli->o.no_keep_alive;
	char port[8], *p;
	size_t pl = 0, n;
	int r;

	if (u->port_given) {
		char d[5];
		unsigned v = u->port, k = 0;

		do
			d[k++] = (char)('0' + v % 10);
		while ((v /= 10));
		port[pl++] = ':';
		while (k)
			port[pl++] = d[--k];
	}
	n = ml + 1 + slash + u->target_len + 17 + u->host_len + pl + 2 + (close ? 19 : 0);
	if ((r = giong__http_out_grow(&ex->req, n, &p)))
		return r;
	memcpy(p, method, ml);
	p += ml;
	*p++ = ' ';
	if (slash)
		*p++ = '/'; /* "http://h?q" asks for "/?q" */
	memcpy(p, u->target, u->target_len);
	p += u->target_len;
	memcpy(p, " HTTP/1.1\r\nHost: ", 17);
	p += 17;
	memcpy(p, u->host, u->host_len);
	p += u->host_len;
	memcpy(p, port, pl);
	p += pl;
	memcpy(p, "\r\n", 2);
	if (close)
		memcpy(p + 2, "Connection: close\r\n", 19);
	ex->req.len += n;
	return 0;
}

int giong_http_exchange_begin(struct giong_http_client *cli, const char *method, const char *url,
			      struct giong_http_exchange **ret)
{
	struct giong__http_cworker *w;
	struct giong_http_exchange *ex;
	struct giong__http_url u;
	size_t ml;
	int r, err, id = GIONG_HTTP_OTHER;
	bool idem = false, bodiless = false;

	if (!ret)
		return -EINVAL;
	*ret = NULL;
	if (!cli || !method || !url || !giong__http_is_token(method, ml = strlen(method)))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (!strcmp(method, methods[i].name)) {
			id = methods[i].id;
			idem = methods[i].idempotent;
			bodiless = methods[i].bodiless;
			break;
		}
	if (id == GIONG_HTTP_CONNECT)
		return -EINVAL; /* a tunnel is no exchange */
	if ((r = giong__http_url_parse(url, &u)))
		return r;
	if (u.tls && !cli->o.connect)
		return -EPROTONOSUPPORT;
	if (!(w = giong__http_cworker_get(cli, &err)))
		return err;
	if (!(ex = ex_get(w)))
		return -ENOMEM;
	ex->w = w;
	ex->head_request = id == GIONG_HTTP_HEAD;
	ex->idempotent = idem;
	ex->bodiless_method = bodiless;
	if (!(ex->origin = giong__http_origin_get(w, u.tls, u.host, u.host_len, u.port))) {
		giong__http_ex_put(w, ex);
		return -ENOMEM;
	}
	if ((r = request_line(ex, method, ml, &u))) {
		giong__http_origin_put(w, ex->origin);
		giong__http_ex_put(w, ex);
		return r == -E2BIG ? -EINVAL : r;
	}
	w->stats.exchanges++;
	*ret = ex;
	return 0;
}

int giong_http_exchange_header_n(struct giong_http_exchange *ex, const char *name, size_t name_len,
				 const char *value, size_t value_len)
{
	if (!ex || !name || (!value && value_len))
		return -EINVAL;
	if (giong__http_ex_queued(ex))
		return -EBUSY;
	if (ex->state != GIONG__HTTP_EX_BEGUN)
		return -EALREADY;
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (giong__http_token_eq(name, name_len, reserved[i]))
			return -EINVAL;
	if (ex->req.len + name_len + value_len + 4 > GIONG__HTTP_CLIENT_HEAD_MAX)
		return -E2BIG;
	return giong__http_out_header(&ex->req, name, name_len, value, value_len);
}

int giong_http_exchange_header(struct giong_http_exchange *ex, const char *name, const char *value)
{
	if (!name || !value)
		return -EINVAL;
	return giong_http_exchange_header_n(ex, name, strlen(name), value, strlen(value));
}

/* ------------------------------------------------------------ sending */

/* Write all of @iov[0..n) (changed) under the head timeout per call. */
static int write_iov(struct giong_http_exchange *ex, struct iovec *iov, int n)
{
	uint64_t saved = giong_deadline_in(ex->w->cli->o.head_timeout_ms);
	int r = giong__http_writev_all(ex->conn->s, iov, n);

	giong_deadline_restore(saved);
	return r;
}

/* Use @c, whose session takes streams, for @ex. */
static void use_shared(struct giong_http_exchange *ex, struct giong__http_cconn *c)
{
	ex->conn = c;
	c->users++;
	giong__http_mux_share(c, ex->origin);
}

/*
 * A connection for the exchange: the one its origin's exchanges share as
 * streams, else the pool's newest for its origin, else a new one. While an
 * exchange connects with protocols to offer, the others to its origin wait for
 * that connection (it may be one to share) rather than each open their own.
 */
static int take_conn(struct giong_http_exchange *ex)
{
	struct giong__http_cworker *w = ex->w;
	struct giong__http_origin *o = ex->origin;
	struct giong__http_cconn *c;
	int r;

	if (ex->conn)
		return 0;
	ex->got_bytes = false;
	for (;;) {
		if (o->mux && giong__http_mux_usable(o->mux)) {
			ex->reused = true;
			w->stats.reused++;
			use_shared(ex, o->mux);
			return 0;
		}
		if (!o->opening)
			break;
		uint64_t saved = giong_deadline_in(w->cli->o.connect_timeout_ms);

		r = giong_waitq_wait(&o->opened, 0);
		giong_deadline_restore(saved);
		if (r < 0)
			return r;
	}
	if ((c = giong__http_pool_take(w, o))) {
		ex->reused = true;
		w->stats.reused++;
		if (c->session)
			use_shared(ex, c);
		else
			ex->conn = c;
		return 0;
	}
	ex->reused = false;
	/* Only a connection that may speak another protocol can be shared. */
	o->opening = w->cli->o.protocols && (o->tls || w->cli->o.prior_knowledge);
	r = giong__http_cconn_open(w, o, &c);
	if (o->opening) {
		o->opening = false;
		giong_waitq_wake_all(&o->opened, 0);
	}
	if (r)
		return r;
	if (c->session)
		use_shared(ex, c);
	else
		ex->conn = c;
	return 0;
}

/* Whether @ex runs as a stream of another protocol's connection. */
static bool on_mux(const struct giong_http_exchange *ex)
{
	return ex->conn && ex->conn->session;
}

/* On such a connection, under the head timeout as write_iov(): with @open the
 * request's stream (its head, and a body from memory unless streamed), else
 * @buf[0..@len) of a streamed body (@last: its end). 0 or -errno. */
static int mux_timed(struct giong_http_exchange *ex, bool open, const void *buf, size_t len,
		     bool last)
{
	uint64_t saved = giong_deadline_in(ex->w->cli->o.head_timeout_ms);
	int r = open ? giong__http_mux_send(ex, ex->streamed)
		     : giong__http_mux_write(ex, buf, len, last);

	giong_deadline_restore(saved);
	return r;
}

/* The framing field and the empty line, once. */
static int frame(struct giong_http_exchange *ex, bool chunked, size_t len)
{
	int r = 0;

	if (ex->framed)
		return 0;
	if (chunked)
		r = giong__http_out_append(&ex->req, "Transfer-Encoding: chunked\r\n", 28);
	else if (len || !ex->bodiless_method)
		r = giong__http_out_content_length(&ex->req, len);
	if (!r && ex->expect_ms && (chunked || len)) {
		/* RFC 9110 10.1.1: never without a body. */
		r = giong__http_out_append(&ex->req, "Expect: 100-continue\r\n", 22);
		ex->expecting = r == 0;
	}
	if (!r)
		r = giong__http_out_append(&ex->req, "\r\n", 2);
	ex->framed = r == 0;
	return r;
}

int giong__http_ex_frame(struct giong_http_exchange *ex, size_t len)
{
	return frame(ex, false, len);
}

int giong_http_exchange_expect_continue(struct giong_http_exchange *ex, uint32_t timeout_ms)
{
	if (!ex)
		return -EINVAL;
	if (giong__http_ex_queued(ex))
		return -EBUSY;
	if (ex->state != GIONG__HTTP_EX_BEGUN)
		return -EALREADY;
	ex->expect_ms = timeout_ms ? timeout_ms : GIONG_HTTP_CLIENT_EXPECT_TIMEOUT_MS;
	return 0;
}

/* Parse the response head at the start of the connection's input (reply.h),
 * through @memo if given (reply_memo.h): its length, 0 for need more, or the
 * parser's refusal. */
static int parse_head(struct giong_http_exchange *ex, struct giong__http_reply_memo *memo)
{
	struct giong__http_input *in = &ex->conn->in;

	ex->got_bytes = true;
	return giong__http_parse_reply_memo(memo, in->data, in->len, &ex->w->cli->lim,
					    ex->head_request, &ex->scan, &ex->reply, ex->fields);
}

/*
 * After a head with Expect: 100-continue, wait up to expect_ms for the
 * server's go-ahead. 0: send the body (a 100 came, interim responses before
 * it skipped, or the wait passed); 1: the server answered first (a final
 * response, a 101 or bytes that are no interim response: left in the input,
 * unconsumed, for read_head() to parse and judge); or -errno (the task's own
 * deadline included). Only interim heads are consumed here; the parse is
 * read_head()'s own call, on the same scan state, so a head cut by the end of
 * the wait is taken up where it stopped.
 */
static int await_continue(struct giong_http_exchange *ex)
{
	struct giong__http_cconn *c = ex->conn;
	struct giong__http_input *in = &c->in;
	uint64_t saved = giong_deadline_in(ex->expect_ms);
	int r;

	for (;;) {
		if (in->len) {
			/* no memo: a 100 would replace the final heads it keeps */
			r = parse_head(ex, NULL);
			if (r > 0 && ex->reply.status < 200 && ex->reply.status != 101) {
				in->data += r;
				in->len -= (size_t)r;
				memset(&ex->scan, 0, sizeof(ex->scan));
				if (ex->reply.status == 100) {
					r = 0;
					break;
				}
				if (++ex->interim > GIONG__HTTP_CLIENT_INTERIM_MAX) {
					r = -EBADMSG;
					break;
				}
				continue; /* 103 Early Hints and the like */
			}
			if (r != 0) {
				memset(&ex->scan, 0, sizeof(ex->scan)); /* parsed again */
				r = 1;
				break;
			}
		}
		r = giong__http_input_more(in, c->s);
		if (r == 0)
			r = -ECONNRESET;
		if (r == -ETIMEDOUT && giong_now_ms() < saved) {
			r = 0; /* our wait, not the task's deadline: the body goes */
			break;
		}
		if (r < 0)
			break;
	}
	giong_deadline_restore(saved);
	return r;
}

/* Write the head and the body from memory (all of the request) on a connection;
 * with expect-continue the head, the wait, then the body or not (withheld). */
static int transmit(struct giong_http_exchange *ex)
{
	struct iovec iov[2];
	int r;

	if ((r = take_conn(ex)))
		return r;
	ex->conn->uses++;
	if (on_mux(ex)) {
		/* No wait for a 100 Continue: the body goes with the head (a server
		 * that answers first resets the stream, and what was sent is lost). */
		r = mux_timed(ex, true, NULL, 0, false);
		ex->written = r == 0;
		return r;
	}
	iov[0] = (struct iovec){ex->req.data, ex->req.len};
	iov[1] = (struct iovec){(void *)ex->body, ex->body_len};
	if (ex->expecting) {
		if (!(r = write_iov(ex, iov, 1)))
			r = await_continue(ex);
		if (r == 0) {
			r = write_iov(ex, iov + 1, 1);
		} else if (r == 1) {
			ex->withheld = true;
			r = 0;
		}
	} else {
		/* No empty piece: a stream may copy from each base (TLS gathers them). */
		r = write_iov(ex, iov, ex->body_len ? 2 : 1);
	}
	ex->written = r == 0;
	return r;
}

/* Whether failure @r of the request on a pooled connection may be retried; or of a
 * stream the server refused unprocessed (-EAGAIN: REFUSED_STREAM, past a GOAWAY),
 * whatever its method. */
static bool may_retry(const struct giong_http_exchange *ex, int r)
{
	if (r == -EAGAIN && on_mux(ex))
		return !ex->retried && !ex->streamed;
	return ex->reused && !ex->retried && ex->idempotent && !ex->streamed && !ex->got_bytes &&
	       (r == -ECONNRESET || r == -EPIPE || r == -ENOTCONN || r == GIONG_ETLS_TRUNCATED);
}

/* After a failure on a pooled connection, or a stream refused: the next try is on
 * another connection (a new one; for a stream, the origin's shared one if it still
 * takes streams). */
static void retry_reset(struct giong_http_exchange *ex)
{
	if (on_mux(ex))
		(void)giong__http_mux_release(ex); /* closed with its last exchange */
	else
		giong__http_cconn_close(ex->conn);
	ex->conn = NULL;
	ex->retried = true;
	ex->written = false;
	ex->withheld = false;
	ex->interim = 0;
	memset(&ex->scan, 0, sizeof(ex->scan));
	ex->w->stats.retries++;
}

int giong_http_exchange_send(struct giong_http_exchange *ex, const void *body, size_t len)
{
	int r;

	if (!ex || (!body && len))
		return -EINVAL;
	if (giong__http_ex_queued(ex))
		return -EBUSY;
	if (ex->state == GIONG__HTTP_EX_FAILED)
		return ex->error;
	if (ex->state != GIONG__HTTP_EX_BEGUN)
		return -EALREADY;
	if ((r = frame(ex, false, len)))
		return fail(ex, r);
	ex->body = body;
	ex->body_len = len;
	ex->state = GIONG__HTTP_EX_SENT;
	while ((r = transmit(ex)) && may_retry(ex, r))
		retry_reset(ex);
	return r ? fail(ex, r) : ex->withheld;
}

int giong_http_exchange_write(struct giong_http_exchange *ex, const void *buf, size_t len)
{
	char line[24];
	struct iovec iov[4];
	int n = 0, r;
	bool first;

	if (!ex || (!buf && len))
		return -EINVAL;
	if (giong__http_ex_queued(ex))
		return -EBUSY;
	if (ex->state == GIONG__HTTP_EX_FAILED)
		return ex->error;
	if (ex->state != GIONG__HTTP_EX_BEGUN && ex->state != GIONG__HTTP_EX_STREAMING)
		return -EALREADY;
	if (ex->withheld)
		return 1; /* the server answered before the body: none of it goes */
	ex->streamed = true;
	first = ex->state == GIONG__HTTP_EX_BEGUN;
	if (first) {
		if ((r = frame(ex, true, 0)) || (r = take_conn(ex)))
			return fail(ex, r);
		ex->conn->uses++;
		ex->state = GIONG__HTTP_EX_STREAMING;
		ex->written = true; /* never sent again (no retry of a stream) */
		if (on_mux(ex) && (r = mux_timed(ex, true, NULL, 0, false)))
			return fail(ex, r);
	}
	if (on_mux(ex)) {
		/* The protocol frames the body: no chunk lines, no wait for a 100. */
		if (len && (r = mux_timed(ex, false, buf, len, false)))
			return fail(ex, r);
		return 0;
	}
	if (first) {
		iov[n++] = (struct iovec){ex->req.data, ex->req.len};
		if (ex->expecting) {
			/* The head alone first, then the wait. */
			if ((r = write_iov(ex, iov, n)) || (r = await_continue(ex)) < 0)
				return fail(ex, r);
			n = 0;
			if (r == 1) {
				ex->withheld = true;
				return 1;
			}
		}
	}
	if (len) {
		/* The line and the CRLF are on this stack, lent for write_iov() only. */
		iov[n++] =
			(struct iovec){line, (size_t)snprintf(line, sizeof(line), "%zx\r\n", len)};
		iov[n++] = (struct iovec){(void *)buf, len};
		iov[n++] = (struct iovec){(void *)"\r\n", 2};
	}
	if (n && (r = write_iov(ex, iov, n)))
		return fail(ex, r);
	return 0;
}

/* ------------------------------------------------------------ the response head */

/* Ready the body of the head just parsed. */
static void body_begin(struct giong_http_exchange *ex)
{
	const struct giong__http_reply *rp = &ex->reply;

	ex->body_deadline = giong_now_ms() + ex->w->cli->o.body_timeout_ms;
	switch (rp->body) {
	case GIONG__HTTP_REPLY_CHUNKED:
		ex->chunked = true;
		giong__http_chunked_init(&ex->dec, &ex->w->cli->lim);
		ex->dec.body_max = UINT64_MAX; /* body_max bounds the whole body only */
		break;
	case GIONG__HTTP_REPLY_LENGTH:
		ex->left = rp->content_length;
		ex->body_done = !ex->left;
		break;
	case GIONG__HTTP_REPLY_CLOSE:
		ex->to_close = true;
		break;
	default:
		ex->body_done = true;
		break;
	}
	if (on_mux(ex)) {
		/* The protocol frames the body and says where it ends (END_STREAM). */
		ex->chunked = ex->to_close = ex->body_done = false;
	}
}

/* Read the response head, interim ones skipped: the status, or -errno. */
static int read_head(struct giong_http_exchange *ex)
{
	struct giong__http_cconn *c = ex->conn;
	struct giong__http_input *in = &c->in;
	uint64_t saved = giong_deadline_in(ex->w->cli->o.head_timeout_ms);
	int r;

	if (on_mux(ex)) {
		r = giong__http_mux_head(ex);
		ex->got_bytes = r >= 0;
		giong_deadline_restore(saved);
		return r;
	}
	for (;;) {
		if (in->len) {
			r = parse_head(ex, &ex->w->memo);
			if (r < 0) {
				r = r == -EMSGSIZE ? r : -EBADMSG;
				break;
			}
			if (r > 0) {
				in->data += r;
				in->len -= (size_t)r;
				memset(&ex->scan, 0, sizeof(ex->scan));
				if (ex->reply.status == 101) {
					r = -EPROTO; /* no upgrade was asked for */
					break;
				}
				if (ex->reply.status >= 200) {
					r = ex->reply.status;
					break;
				}
				if (++ex->interim > GIONG__HTTP_CLIENT_INTERIM_MAX) {
					r = -EBADMSG;
					break;
				}
				continue; /* 100 Continue, 103 Early Hints: the final one follows */
			}
		}
		r = giong__http_input_more(in, c->s);
		if (r == 0)
			r = -ECONNRESET; /* the server closed first (mid-head or before it) */
		if (r < 0)
			break;
	}
	giong_deadline_restore(saved);
	return r;
}

int giong_http_exchange_response(struct giong_http_exchange *ex)
{
	int r;

	if (!ex)
		return -EINVAL;
	if (giong__http_ex_queued(ex))
		return -EBUSY;
	if (ex->state == GIONG__HTTP_EX_FAILED)
		return ex->error;
	if (ex->state == GIONG__HTTP_EX_HEAD)
		return ex->reply.status;
	if (ex->state == GIONG__HTTP_EX_STREAMING) {
		struct iovec end = {(void *)"0\r\n\r\n", 5};

		if (on_mux(ex))
			r = mux_timed(ex, false, NULL, 0, true);
		else if (!ex->withheld)
			r = write_iov(ex, &end, 1);
		else
			r = 0;
		if (r)
			return fail(ex, r);
		ex->state = GIONG__HTTP_EX_SENT;
	} else if (ex->state == GIONG__HTTP_EX_BEGUN) {
		if ((r = giong_http_exchange_send(ex, NULL, 0)) < 0)
			return r;
	}
	for (;;) {
		r = ex->written ? 0 : transmit(ex);
		if (r == 0)
			r = read_head(ex);
		if (r >= 0 || !may_retry(ex, r))
			break;
		retry_reset(ex);
	}
	if (r < 0)
		return fail(ex, r);
	ex->state = GIONG__HTTP_EX_HEAD;
	ex->body = NULL; /* the caller's again */
	body_begin(ex);
	return r;
}

int giong_http_exchange_status(const struct giong_http_exchange *ex)
{
	if (!ex)
		return -EINVAL;
	if (ex->state == GIONG__HTTP_EX_FAILED)
		return ex->error;
	return ex->state == GIONG__HTTP_EX_HEAD ? ex->reply.status : -EAGAIN;
}

const char *giong_http_exchange_field(const struct giong_http_exchange *ex, const char *name,
				      size_t *len)
{
	if (len)
		*len = 0;
	if (!ex || !name || ex->state != GIONG__HTTP_EX_HEAD)
		return NULL;
	for (uint32_t i = 0; i < ex->reply.nfields; i++) {
		const struct giong_http_field *f = &ex->reply.fields[i];

		if (f->name_len == strlen(name) && !strncasecmp(f->name, name, f->name_len)) {
			if (len)
				*len = f->value_len;
			return f->value;
		}
	}
	return NULL;
}

int giong_http_exchange_field_count(const struct giong_http_exchange *ex)
{
	if (!ex)
		return -EINVAL;
	return ex->state == GIONG__HTTP_EX_HEAD ? (int)ex->reply.nfields : -EAGAIN;
}

int giong_http_exchange_field_at(const struct giong_http_exchange *ex, unsigned i,
				 const char **name, size_t *name_len, const char **value,
				 size_t *value_len)
{
	const struct giong_http_field *f;

	if (!ex || !name || !name_len || !value || !value_len)
		return -EINVAL;
	if (ex->state != GIONG__HTTP_EX_HEAD)
		return -EAGAIN;
	if (i >= ex->reply.nfields)
		return -ENOENT;
	f = &ex->reply.fields[i];
	*name = f->name;
	*name_len = f->name_len;
	*value = f->value;
	*value_len = f->value_len;
	return 0;
}

int64_t giong_http_exchange_content_length(const struct giong_http_exchange *ex)
{
	if (!ex)
		return -EINVAL;
	if (ex->state != GIONG__HTTP_EX_HEAD)
		return -EAGAIN;
	if (ex->reply.body == GIONG__HTTP_REPLY_NONE)
		return 0;
	return ex->reply.body == GIONG__HTTP_REPLY_LENGTH ? (int64_t)ex->reply.content_length : -1;
}
