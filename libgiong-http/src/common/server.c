/* SPDX-License-Identifier: MIT */
/*
 * server.c - the server (giong/http/server.h): its settings, each worker's
 * share of it, the accept loop, and the sweeper that ends idle connections.
 *
 * Keep-alive expiry is two lists per worker, not a timer per connection: a
 * connection parks at the tail of the idle list (or the draining one, while
 * its last batch is in flight), every entry of one list has the same
 * timeout, so each list is in expiry order and the sweeper only ever looks
 * at their heads. Parking and unparking cost two pointer writes and no
 * timer; the sweeper is one task per worker, asleep until the first expiry.
 */
#include <errno.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/conn.h"
#include "h1/h1.h"

/*
 * The one dispatch step: the protocol a connection speaks, chosen once, after
 * its wrap (a TLS handshake has settled ALPN by then) and before its first
 * request: the protocol of the server's list that ALPN named, else HTTP/1.1
 * (which hands a plain connection over to the prior-knowledge protocol when
 * the client starts with its preface: h1/conn.c). A connection refused before
 * its wrap (a bad PROXY header) is answered in HTTP/1.1.
 */
static const struct giong_http_protocol *choose_protocol(struct giong_http_conn *c)
{
	const struct giong_http_protocol *const *p =
		(const struct giong_http_protocol *const *)c->w->srv->protocols;
	const char *name;
	size_t len;

	if (c->refuse || !p || giong_stream_alpn(c->s, &name, &len) != 0)
		return &giong__http1_ops;
	for (; *p; p++)
		if (strlen((*p)->name) == len && !memcmp((*p)->name, name, len))
			return *p;
	return &giong__http1_ops;
}

/* A protocol table this build can serve: its layout (the client's calls may be left
 * out), a name, every required call. */
static bool protocol_usable(const struct giong_http_protocol *p)
{
	return p->abi == GIONG_HTTP_PROTOCOL_ABI &&
	       p->size >= offsetof(struct giong_http_protocol, client_open) && p->name &&
	       *p->name && p->serve && p->body_begin && p->body_next && p->interim &&
	       p->head_start && p->head_field && p->head_end && p->body && p->body_write &&
	       p->body_end && p->sendfile && p->head_cancel &&
	       (!(p->caps & GIONG_HTTP_PROTOCOL_PRIOR_KNOWLEDGE) ||
		(p->preface && p->preface_len >= 16));
}

/* Copy the options' NULL-terminated list into @srv: 0, -EINVAL, -ENOMEM. */
static int take_protocols(struct giong_http_server *srv,
			  const struct giong_http_protocol *const *list)
{
	size_t n = 0;

	if (!list)
		return 0;
	while (list[n]) {
		if (!protocol_usable(list[n]) || n >= 8)
			return -EINVAL;
		n++;
	}
	if (!n)
		return 0;
	if (!(srv->protocols = calloc(n + 1, sizeof(*srv->protocols))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		srv->protocols[i] = list[i];
		if (!srv->prior && (list[i]->caps & GIONG_HTTP_PROTOCOL_PRIOR_KNOWLEDGE))
			srv->prior = list[i];
	}
	return 0;
}

int giong_http_server_new(const struct giong_http_router *router,
			  const struct giong_http_server_options *opts,
			  struct giong_http_server **ret)
{
	struct giong_http_server *srv;
	int r;

	if (!router || !ret)
		return -EINVAL;
	*ret = NULL;
	srv = calloc(1, sizeof(*srv));
	if (!srv)
		return -ENOMEM;
	srv->router = router;
	srv->choose = choose_protocol;
	giong_http_limits_init(&srv->limits);
	if (opts && opts->limits)
		srv->limits = *opts->limits;
	if (giong_http_limits_check(&srv->limits)) {
		free(srv);
		return -EINVAL;
	}
	if (opts && opts->server_name) {
		size_t n = strlen(opts->server_name);

		if (!n || !giong__http_is_field_value(opts->server_name, n) ||
		    !(srv->server_name = strdup(opts->server_name))) {
			free(srv);
			return n && giong__http_is_field_value(opts->server_name, n) ? -ENOMEM
										     : -EINVAL;
		}
		srv->server_name_len = n;
	}
	if (opts) {
		srv->wrap = opts->wrap;
		srv->wrap_ctx = opts->wrap_ctx;
		srv->log = opts->log;
		srv->log_ctx = opts->log_ctx;
		srv->proxy_protocol = opts->proxy_protocol;
		if ((r = take_protocols(srv, opts->protocols))) {
			free(srv->server_name);
			free(srv);
			return r;
		}
	}
	*ret = srv;
	return 0;
}

static void worker_free(struct giong__http_worker *w)
{
	struct giong__http_batch *b;

	while ((b = giong__list_entry(giong__list_pop_front(&w->batches), struct giong__http_batch,
				      link))) {
		giong__http_out_free(&b->out);
		free(b);
	}
	for (unsigned i = 0; i < w->npipes; i++) {
		close(w->pipes[i].fd[0]);
		close(w->pipes[i].fd[1]);
	}
	free(w);
}

int giong_http_server_free(struct giong_http_server *srv)
{
	struct giong__http_slots *ws;
	struct giong__http_worker *w;

	if (!srv)
		return 0;
	ws = atomic_load(&srv->workers);
	for (unsigned i = 0; ws && i < ws->n; i++)
		if ((w = ws->w[i]) && (w->stats.open || w->serving || w->sweeper))
			return -EBUSY;
	for (unsigned i = 0; ws && i < ws->n; i++)
		if (ws->w[i])
			worker_free(ws->w[i]);
	free(ws);
	free(srv->server_name);
	free(srv->protocols);
	free(srv);
	return 0;
}

/* The calling worker's share of @srv, made on its first call; NULL with
 * *@err set. */
static struct giong__http_worker *worker_of(struct giong_http_server *srv, int *err)
{
	void **slot = giong__http_worker_slot(&srv->workers, err);
	struct giong__http_worker *w;

	if (!slot)
		return NULL;
	if (!(w = *slot)) {
		w = calloc(1, sizeof(*w));
		if (!w) {
			*err = -ENOMEM;
			return NULL;
		}
		w->srv = srv;
		giong_waitq_init(&w->conns_wait);
		giong_waitq_init(&w->sweep_wait);
		*slot = w;
	}
	return w;
}

int giong_http_server_stats(const struct giong_http_server *srv, unsigned worker,
			    struct giong_http_stats *out)
{
	const struct giong__http_worker *w;

	if (!srv || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	w = giong__http_slot_at(atomic_load(&((struct giong_http_server *)srv)->workers), worker);
	if (w)
		*out = w->stats;
	return 0;
}

/* ------------------------------------------------------------ sweeper */

/* Close the heads of @l parked at or before @before; count them in *@count. */
static void expire(struct giong__list *l, uint64_t before, uint64_t *count)
{
	struct giong_http_conn *c;

	while ((c = giong__list_entry(l->first, struct giong_http_conn, link)) &&
	       c->parked_at <= before) {
		(*count)++;
		giong__http_conn_close_parked(c);
	}
}

/* Shutdown: idle connections close now, draining ones once their last batch is out
 * (batch_sent() sees shutting_down), fresh ones (accepted, no request yet) after at most
 * fresh_ms(), unless their request comes (the sweeper expires them). */
static void close_idle(struct giong__http_worker *w)
{
	struct giong__list_node *n = w->idle.first;

	w->shutting_down = true;
	while (n) {
		struct giong_http_conn *c = giong__list_entry(n, struct giong_http_conn, link);

		n = n->next;
		if (!c->fresh)
			giong__http_conn_close_parked(c);
	}
}

static uint32_t fresh_ms(const struct giong_http_limits *lim)
{
	return lim->head_timeout_ms < GIONG__HTTP_FRESH_MS ? lim->head_timeout_ms
							   : GIONG__HTTP_FRESH_MS;
}

static uint64_t first_expiry(const struct giong__list *l, uint32_t timeout)
{
	const struct giong_http_conn *c = giong__list_entry(l->first, struct giong_http_conn, link);

	return c ? c->parked_at + timeout : GIONG_NO_DEADLINE;
}

static intptr_t sweeper(void *arg)
{
	struct giong__http_worker *w = arg;
	const struct giong_http_limits *lim = &w->srv->limits;

	giong_task_set_name("http-sweeper");
	while (w->serving || w->stats.open) {
		uint64_t now = giong_now_ms(), next, saved;
		uint32_t idle_ms;
		int r;

		if (!w->shutting_down && giong_is_shutting_down())
			close_idle(w);
		/* Shutting down, only fresh connections are idle (nothing else parks). */
		idle_ms = w->shutting_down ? fresh_ms(lim) : lim->idle_timeout_ms;
		if (now >= idle_ms)
			expire(&w->idle, now - idle_ms, &w->stats.idle_timeouts);
		if (now >= lim->write_timeout_ms)
			expire(&w->draining, now - lim->write_timeout_ms, &w->stats.write_timeouts);
		next = first_expiry(&w->idle, idle_ms);
		if (first_expiry(&w->draining, lim->write_timeout_ms) < next)
			next = first_expiry(&w->draining, lim->write_timeout_ms);
		if (next == GIONG_NO_DEADLINE) /* what parks from now expires later */
			next = now + (lim->idle_timeout_ms < lim->write_timeout_ms
					      ? lim->idle_timeout_ms
					      : lim->write_timeout_ms);
		w->sweep_at = next;
		saved = giong_deadline_set(next);
		r = giong_waitq_wait(&w->sweep_wait, w->shutting_down ? 0 : GIONG_WAIT_SHUTDOWN);
		giong_deadline_restore(saved);
		if (r == -ECANCELED)
			break; /* the grace period is over: the runtime cancels the rest */
	}
	w->sweeper = false;
	return 0;
}

static int serve_begin(struct giong__http_worker *w)
{
	if (!w->sweeper) {
		int r = giong_spawn(sweeper, w, NULL);

		if (r)
			return r;
		w->sweeper = true;
	}
	w->serving++;
	return 0;
}

static void serve_end(struct giong__http_worker *w)
{
	w->serving--;
	giong_waitq_wake_all(&w->sweep_wait, 0);
}

/* ------------------------------------------------------------ serving */

int giong_http_serve(struct giong_http_server *srv, struct giong_listener *l)
{
	struct giong__http_worker *w;
	struct giong_stream *s;
	int r, err;

	if (!srv || !l)
		return -EINVAL;
	if (!(w = worker_of(srv, &err)))
		return err;
	if ((r = serve_begin(w)))
		return r;
	for (;;) {
		while (w->stats.open >= w->srv->limits.connections) {
			w->stats.limit_pauses++;
			r = giong_waitq_wait(&w->conns_wait, GIONG_WAIT_SHUTDOWN);
			if (r < 0)
				goto stop;
		}
		r = giong_listener_accept(l, &s);
		if (r == 0) {
			giong__http_conn_start(w, s, NULL);
		} else if (r == -EMFILE || r == -ENFILE || r == -ENOMEM || r == -ENOBUFS) {
			/* The next accept would fail the same way at once. */
			if ((r = giong_sleep_ms(10)) == -ECANCELED)
				goto stop;
		} else if (r != -EINTR && r != -ECONNABORTED && r != -EAGAIN) {
			goto stop;
		}
	}
stop:
	if (r == GIONG_ESHUTDOWN) {
		/* Accept nothing more: the kernel sends new connections to the port's
		 * other listeners (the next process, in a restart). The ones accepted
		 * already are served as any fresh one. Then wake the sweeper to close
		 * the idle ones, and wait for the connections in progress. */
		giong_listener_stop(l);
		while (giong_listener_accept(l, &s) == 0)
			giong__http_conn_start(w, s, NULL);
		giong_waitq_wake_all(&w->sweep_wait, 0);
		while (w->stats.open && (r = giong_waitq_wait(&w->conns_wait, 0)) == 0)
			;
		r = r == -ECANCELED ? r : 0;
	}
	serve_end(w);
	return r;
}

int giong_http_serve_stream(struct giong_http_server *srv, struct giong_stream *s)
{
	struct giong__http_stream_wait sw = {0};
	struct giong__http_worker *w;
	int r, err;

	if (!srv || !s) {
		if (s)
			giong_stream_close(s);
		return -EINVAL;
	}
	if (!(w = worker_of(srv, &err)))
		return err;
	if ((r = serve_begin(w))) {
		giong_stream_close(s);
		return r;
	}
	giong_waitq_init(&sw.wq);
	r = giong__http_conn_start(w, s, &sw);
	while (r == 0 && !sw.ended)
		if (giong_waitq_wait(&sw.wq, 0) == -ECANCELED)
			break;
	if (r == 0 && !sw.ended) {
		/* Cancelled: the connection goes on alone and must not wake us. */
		sw.conn->ended = NULL;
		r = -ECANCELED;
	}
	serve_end(w);
	return r;
}
