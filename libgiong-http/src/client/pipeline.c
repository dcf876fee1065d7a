/* SPDX-License-Identifier: MIT */
/*
 * pipeline.c - pipelined exchanges (giong/http/client.h, RFC 9112 9.3.2):
 * the requests of several exchanges to one origin written on one connection
 * in one writev, their responses read back in the same order by the
 * exchange code itself, one exchange at a time.
 *
 * Staying in step: only one exchange is handed back at a time, and the next
 * head is parsed only after the previous exchange ended with its body read
 * to the end (so nothing points into the input any more when the next head
 * is read, and no byte of one response is taken for another's). Anything
 * else (a failed response, a body left unread, a Connection: close) closes
 * the connection and fails every exchange after it with one error: none is
 * lost, none is answered by another's response.
 *
 * Ownership for the kernel: the write lends the exchanges' request heads,
 * the callers' bodies and pl->iov to the kernel for the duration of
 * giong__http_writev_all() only; receives are the exchanges' (input.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"

/* The errors of a connection the server closed: what may be sent again. */
static bool closed_by_server(int r)
{
	return r == -ECONNRESET || r == -EPIPE || r == -ENOTCONN || r == GIONG_ETLS_TRUNCATED;
}

static struct giong_http_pipeline *pl_get(struct giong__http_cworker *w)
{
	struct giong_http_pipeline *pl = giong__list_entry(giong__list_pop_front(&w->pipelines),
							   struct giong_http_pipeline, link);

	if (pl) {
		w->npipelines--;
		return pl;
	}
	return calloc(1, sizeof(*pl));
}

static void pl_free(struct giong_http_pipeline *pl)
{
	free(pl->ex);
	free(pl->iov);
	free(pl);
}

/* Back to @w's cache with its arrays (freed past it). */
static void pl_put(struct giong__http_cworker *w, struct giong_http_pipeline *pl)
{
	struct giong_http_exchange **ex = pl->ex;
	struct iovec *iov = pl->iov;
	unsigned cap = pl->cap;

	if (w->npipelines >= GIONG__HTTP_CLIENT_PIPELINE_CACHE) {
		pl_free(pl);
		return;
	}
	memset(pl, 0, sizeof(*pl));
	pl->ex = ex;
	pl->iov = iov;
	pl->cap = cap;
	giong__list_push_front(&w->pipelines, &pl->link);
	w->npipelines++;
}

/* An upcall from client.c (client.h says why it is allowed). */
void giong__http_pipeline_cache_free(struct giong__http_cworker *w)
{
	struct giong_http_pipeline *pl;

	while ((pl = giong__list_entry(giong__list_pop_front(&w->pipelines),
				       struct giong_http_pipeline, link)))
		pl_free(pl);
	w->npipelines = 0;
}

/* Close the connection; every exchange not yet handed back fails with @err. On a
 * shared connection (pl->mux) only their streams end. */
static void pl_fail(struct giong_http_pipeline *pl, int err)
{
	if (!pl->error)
		pl->error = err;
	if (pl->mux) {
		for (unsigned i = pl->next; i < pl->n; i++)
			if (pl->ex[i]->conn)
				(void)giong__http_mux_release(pl->ex[i]);
	} else {
		giong__http_cconn_close(pl->conn);
	}
	pl->conn = NULL;
}

int giong_http_pipeline_begin(struct giong_http_client *cli, unsigned flags,
			      struct giong_http_pipeline **ret)
{
	struct giong__http_cworker *w;
	struct giong_http_pipeline *pl;
	int err;

	if (!ret)
		return -EINVAL;
	*ret = NULL;
	if (!cli || (flags & ~(unsigned)GIONG_HTTP_PIPELINE_ANY_METHOD))
		return -EINVAL;
	if (!(w = giong__http_cworker_get(cli, &err)))
		return err;
	if (!(pl = pl_get(w)))
		return -ENOMEM;
	pl->w = w;
	pl->flags = flags;
	w->stats.pipelines++;
	*ret = pl;
	return 0;
}

int giong_http_pipeline_add(struct giong_http_pipeline *pl, struct giong_http_exchange *ex,
			    const void *body, size_t len)
{
	if (!pl || !ex || (!body && len))
		return -EINVAL;
	if (ex->w != pl->w || ex->pl || ex->state != GIONG__HTTP_EX_BEGUN || ex->streamed ||
	    ex->expect_ms)
		return -EINVAL; /* no body of a pipeline waits for a go-ahead */
	if (!ex->idempotent && !(pl->flags & GIONG_HTTP_PIPELINE_ANY_METHOD))
		return -EINVAL; /* RFC 9112 9.3.2 */
	if (pl->sent)
		return -EALREADY;
	if (pl->origin && pl->origin != ex->origin)
		return -EXDEV;
	if (pl->n == GIONG_HTTP_PIPELINE_MAX)
		return -E2BIG;
	if (pl->n == pl->cap) {
		unsigned cap = pl->cap ? pl->cap * 2 : 8;
		struct giong_http_exchange **e;
		struct iovec *iov;

		if (cap > GIONG_HTTP_PIPELINE_MAX)
			cap = GIONG_HTTP_PIPELINE_MAX;
		if (!(e = realloc(pl->ex, cap * sizeof(*e))))
			return -ENOMEM;
		pl->ex = e;
		if (!(iov = realloc(pl->iov, 2 * cap * sizeof(*iov))))
			return -ENOMEM;
		pl->iov = iov;
		pl->cap = cap;
	}
	if (!pl->origin) {
		pl->origin = ex->origin;
		pl->origin->refs++;
	}
	ex->pl = pl;
	ex->body = body;
	ex->body_len = len;
	pl->unsafe |= !ex->idempotent;
	pl->ex[pl->n++] = ex;
	return 0;
}

/* On a connection of another protocol: each request a stream of it, sent at once;
 * the responses are handed back in order all the same, each failing alone. */
static int pl_streams(struct giong_http_pipeline *pl)
{
	uint64_t saved = giong_deadline_in(pl->w->cli->o.head_timeout_ms);
	int r = 0;

	pl->mux = true;
	giong__http_mux_share(pl->conn, pl->origin);
	for (unsigned i = 0; i < pl->n && !r; i++) {
		struct giong_http_exchange *ex = pl->ex[i];

		ex->conn = pl->conn;
		pl->conn->users++;
		r = giong__http_mux_send(ex, false);
	}
	giong_deadline_restore(saved);
	return r;
}

/* Write every request on a connection: the origin's shared one, the pool's newest,
 * or a new one. */
static int pl_write(struct giong_http_pipeline *pl)
{
	struct giong__http_cworker *w = pl->w;
	uint64_t saved;
	int k = 0, r;

	/* An exchange to the origin connecting may bring a connection to share: wait
	 * for it, as an exchange does (exchange.c's take_conn()). */
	while (!pl->conn && !pl->origin->mux && pl->origin->opening) {
		saved = giong_deadline_in(w->cli->o.connect_timeout_ms);
		r = giong_waitq_wait(&pl->origin->opened, 0);
		giong_deadline_restore(saved);
		if (r < 0)
			return r;
	}
	if (!pl->conn && pl->origin->mux && giong__http_mux_usable(pl->origin->mux)) {
		pl->conn = pl->origin->mux;
		pl->reused = true;
		w->stats.reused += pl->n;
	}
	if (!pl->conn) {
		if ((pl->conn = giong__http_pool_take(w, pl->origin))) {
			pl->reused = true;
			w->stats.reused += pl->n;
		} else {
			pl->reused = false;
			if ((r = giong__http_cconn_open(w, pl->origin, &pl->conn)))
				return r;
		}
	}
	pl->conn->uses += pl->n;
	if (pl->conn->session)
		return pl_streams(pl);
	for (unsigned i = 0; i < pl->n; i++) {
		struct giong_http_exchange *ex = pl->ex[i];

		pl->iov[k++] = (struct iovec){ex->req.data, ex->req.len};
		if (ex->body_len) /* no empty piece: TLS gathers from each base */
			pl->iov[k++] = (struct iovec){(void *)ex->body, ex->body_len};
	}
	saved = giong_deadline_in(w->cli->o.head_timeout_ms);
	r = giong__http_writev_all(pl->conn->s, pl->iov, k);
	giong_deadline_restore(saved);
	return r;
}

/* Whether failure @r of the pipeline on its connection may be sent again,
 * and if so get ready to: the pooled connection was closed meanwhile. */
static bool pl_retry(struct giong_http_pipeline *pl, int r)
{
	if (pl->mux || !pl->reused || pl->retried || pl->unsafe || !closed_by_server(r))
		return false; /* a stream the server refused is sent again by its exchange */
	giong__http_cconn_close(pl->conn);
	pl->conn = NULL;
	pl->retried = true;
	pl->w->stats.retries += pl->n;
	return true;
}

int giong_http_pipeline_send(struct giong_http_pipeline *pl)
{
	int r = 0;

	if (!pl)
		return -EINVAL;
	if (pl->sent)
		return pl->error ? pl->error : -EALREADY;
	if (!pl->n)
		return -ENOENT;
	pl->sent = true;
	for (unsigned i = 0; i < pl->n && !r; i++) {
		struct giong_http_exchange *ex = pl->ex[i];

		if (!(r = giong__http_ex_frame(ex, ex->body_len))) {
			ex->state = GIONG__HTTP_EX_SENT;
			ex->written = true;
		}
	}
	while (!r && (r = pl_write(pl)) && pl_retry(pl, r))
		r = 0;
	if (r)
		pl_fail(pl, r);
	else
		pl->w->stats.pipelined += pl->n;
	return r;
}

/* Fail @ex (handed back) with @err without reading anything. */
static int ex_fail(struct giong_http_exchange *ex, int err)
{
	ex->state = GIONG__HTTP_EX_FAILED;
	ex->error = err;
	ex->conn = NULL;
	return err;
}

/* Read the first response, sending the pipeline again once if its pooled
 * connection turns out closed before any byte of it came. */
static int first_response(struct giong_http_pipeline *pl, struct giong_http_exchange *ex)
{
	int r;

	for (;;) {
		if (!pl->mux)
			ex->conn = pl->conn; /* a stream has its own (a refused one moves) */
		r = giong_http_exchange_response(ex);
		if (r >= 0 || ex->got_bytes || !pl_retry(pl, r))
			break;
		ex->state = GIONG__HTTP_EX_SENT;
		ex->error = 0;
		ex->interim = 0;
		memset(&ex->scan, 0, sizeof(ex->scan));
		if ((r = pl_write(pl))) {
			pl_fail(pl, r);
			return ex_fail(ex, r);
		}
	}
	for (unsigned i = 0; i < pl->n; i++)
		pl->ex[i]->body = NULL; /* the callers' again */
	return r;
}

int giong_http_pipeline_next(struct giong_http_pipeline *pl, struct giong_http_exchange **ret)
{
	struct giong_http_exchange *ex;
	int r;

	if (!ret)
		return -EINVAL;
	*ret = NULL;
	if (!pl)
		return -EINVAL;
	if (pl->out)
		return -EBUSY;
	if (!pl->sent && pl->n)
		giong_http_pipeline_send(pl); /* a failure is in pl->error */
	if (pl->next == pl->n)
		return 0;
	ex = pl->ex[pl->next++];
	pl->out = ex;
	*ret = ex;
	if (pl->error || !pl->conn)
		return ex_fail(ex, pl->error ? pl->error : -ECONNABORTED);
	if (pl->next == 1) {
		r = first_response(pl, ex);
	} else {
		if (!pl->mux)
			ex->conn = pl->conn;
		r = giong_http_exchange_response(ex);
	}
	if (r < 0 && !pl->mux) {
		/* This one says why; the rest say only that they cannot be read. */
		ex->conn = NULL;
		pl_fail(pl, closed_by_server(r) ? -ECONNRESET : -ECONNABORTED);
	}
	return r;
}

int giong__http_pipeline_ex_end(struct giong_http_exchange *ex)
{
	struct giong_http_pipeline *pl = ex->pl;
	struct giong__http_cconn *c = ex->conn;
	int kept;

	ex->pl = NULL;
	pl->out = NULL;
	if (pl->mux) {
		/* Its stream ends; the others go on whatever became of it. A refused
		 * stream sent again may have found a connection of HTTP/1.1 (ALPN):
		 * closed, not pooled out of step. */
		if (c && !c->session) {
			giong__http_cconn_close(c);
			ex->conn = NULL;
			c = NULL;
		}
		kept = c ? giong__http_mux_release(ex) : 0;
		if (pl->next == pl->n) {
			pl->conn = NULL;
			pl->pooled = kept;
		}
		return kept;
	}
	ex->conn = NULL;
	if (!c)
		return 0; /* it failed: so did the pipeline */
	if (ex->state != GIONG__HTTP_EX_HEAD || !ex->body_done || ex->body_error) {
		/* The rest of this body is where the next response would start. */
		pl_fail(pl, closed_by_server(ex->body_error) ? -ECONNRESET : -ECONNABORTED);
		return 0;
	}
	giong__http_input_message_done(&c->in);
	if (!ex->reply.keep_alive || pl->w->cli->o.no_keep_alive) {
		pl_fail(pl, -ECONNRESET); /* the server closes after this one */
		return 0;
	}
	if (pl->next < pl->n)
		return 1; /* on to the next response */
	pl->conn = NULL;
	if (!c->in.len && !c->in.blen && !c->in.eof) {
		pl->pooled = giong__http_pool_put(c, pl->origin);
		return pl->pooled;
	}
	giong__http_cconn_close(c); /* bytes no request asked for */
	return 0;
}

int giong_http_pipeline_end(struct giong_http_pipeline *pl)
{
	struct giong__http_cworker *w;
	int pooled;

	if (!pl)
		return 0;
	if (pl->out)
		return -EBUSY;
	w = pl->w;
	for (unsigned i = pl->next; i < pl->n; i++) {
		struct giong_http_exchange *ex = pl->ex[i];

		ex->pl = NULL;
		if (pl->mux && ex->conn)
			(void)giong__http_mux_release(ex); /* its stream is reset */
		giong__http_origin_put(w, ex->origin);
		giong__http_ex_put(w, ex);
	}
	if (!pl->mux)
		giong__http_cconn_close(pl->conn); /* responses left unread */
	pooled = pl->pooled;
	giong__http_origin_put(w, pl->origin);
	pl_put(w, pl);
	return pooled;
}
