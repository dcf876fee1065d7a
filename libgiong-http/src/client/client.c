/* SPDX-License-Identifier: MIT */
/*
 * client.c - the client (giong/http/client.h): its settings, each worker's
 * share of it, the pool of idle connections per origin, connecting, URLs.
 *
 * The pool: a pooled connection is on its origin's list (taken newest first:
 * the one least likely to have been closed by the server meanwhile) and on
 * the worker's list in park order (oldest first: the idle timeout looks at
 * its head only). It waits on giong_stream_on_readable() with no task: if
 * the server closes it, or sends anything (nothing is asked of it), the
 * callback closes it at once. Expiry is one callback timer per worker
 * (giong_timer_start(), on core's timing wheel), armed for the oldest
 * connection while any is pooled: a callback, not a task, so that a pool
 * never keeps a worker from ending.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <giong/net/tcp.h>

#include "client/client.h"

static uint32_t or_default(uint32_t v, uint32_t d)
{
	return v ? v : d;
}

/* A protocol table whose client side this build can run. */
static bool client_protocol_usable(const struct giong_http_protocol *p)
{
	return p->abi == GIONG_HTTP_PROTOCOL_ABI && p->size >= sizeof(*p) && p->name && *p->name &&
	       p->client_open && p->client_usable && p->client_streams && p->client_close &&
	       p->client_request && p->client_body && p->client_response && p->client_next &&
	       p->client_end;
}

/* Copy the options' protocol list into @cli (o.protocols then points at the copy):
 * 0, or -EINVAL for a table without the client's calls, more than the list holds,
 * or prior knowledge with no protocol to speak. */
static int take_protocols(struct giong_http_client *cli)
{
	const struct giong_http_protocol *const *list = cli->o.protocols;
	size_t n = 0;

	cli->o.protocols = NULL;
	for (; list && list[n]; n++)
		if (n >= GIONG__HTTP_CLIENT_PROTOCOLS || !client_protocol_usable(list[n]))
			return -EINVAL;
	if (cli->o.prior_knowledge && !n)
		return -EINVAL;
	if (n) {
		memcpy(cli->protocols, list, n * sizeof(*list));
		cli->o.protocols = cli->protocols;
	}
	return 0;
}

int giong_http_client_new(const struct giong_http_client_options *opts,
			  struct giong_http_client **ret)
{
	struct giong_http_client *cli;

	if (!ret)
		return -EINVAL;
	*ret = NULL;
	if (!(cli = calloc(1, sizeof(*cli))))
		return -ENOMEM;
	if (opts)
		cli->o = *opts;
	cli->o.head_max = or_default(cli->o.head_max, GIONG_HTTP_CLIENT_HEAD);
	cli->o.fields_max = or_default(cli->o.fields_max, GIONG_HTTP_CLIENT_FIELDS);
	cli->o.body_max = cli->o.body_max ? cli->o.body_max : GIONG_HTTP_CLIENT_BODY;
	cli->o.connect_timeout_ms =
		or_default(cli->o.connect_timeout_ms, GIONG_HTTP_CLIENT_CONNECT_TIMEOUT_MS);
	cli->o.head_timeout_ms =
		or_default(cli->o.head_timeout_ms, GIONG_HTTP_CLIENT_HEAD_TIMEOUT_MS);
	cli->o.body_timeout_ms =
		or_default(cli->o.body_timeout_ms, GIONG_HTTP_CLIENT_BODY_TIMEOUT_MS);
	cli->o.pool_max = or_default(cli->o.pool_max, GIONG_HTTP_CLIENT_POOL);
	cli->o.idle_timeout_ms =
		or_default(cli->o.idle_timeout_ms, GIONG_HTTP_CLIENT_IDLE_TIMEOUT_MS);
	if (cli->o.head_max > 16u * 1024 * 1024 || cli->o.fields_max > 65535 ||
	    take_protocols(cli)) {
		free(cli);
		return -EINVAL; /* the parser's bounds (giong_http_limits_check()) */
	}
	giong_http_limits_init(&cli->lim);
	cli->lim.head = cli->o.head_max;
	cli->lim.request_line = cli->o.head_max < 8192 ? cli->o.head_max : 8192;
	cli->lim.fields = cli->o.fields_max;
	cli->lim.body = cli->o.body_max;
	*ret = cli;
	return 0;
}

int giong_http_client_free(struct giong_http_client *cli)
{
	struct giong__http_slots *ws;

	if (!cli)
		return 0;
	ws = atomic_load(&cli->workers);
	for (unsigned i = 0; ws && i < ws->n; i++)
		if (ws->w[i])
			return -EBUSY;
	free(ws);
	free(cli);
	return 0;
}

/* ------------------------------------------------------------ the pool */

static void idle_unlink(struct giong__http_cconn *c)
{
	struct giong__http_cworker *w = c->w;
	struct giong__http_origin *o = c->origin;

	giong__list_remove(&o->idle, &c->olink);
	giong__list_remove(&w->idle, &c->wlink);
	o->nidle--;
	w->stats.idle--;
	c->pooled = false;
	c->origin = NULL;
	giong__http_origin_put(w, o);
}

/* A pooled connection is readable: the server closed it (or sent what no
 * request asked for). Outside any task; may close the stream here. */
static void idle_readable(struct giong_stream *s, void *ctx)
{
	struct giong__http_cconn *c = ctx;

	(void)s;
	if (!c->pooled)
		return;
	idle_unlink(c);
	c->w->stats.idle_closed++;
	giong__http_cconn_close(c);
}

/* Close the pooled connections parked at or before @before. */
static void expire(struct giong__http_cworker *w, uint64_t before)
{
	struct giong__http_cconn *c;

	while ((c = giong__list_entry(w->idle.first, struct giong__http_cconn, wlink)) &&
	       c->parked_at <= before) {
		idle_unlink(c);
		w->stats.idle_closed++;
		giong__http_cconn_close(c);
	}
}

static void arm_timer(struct giong__http_cworker *w);

static void idle_timer(struct giong_timer *timer, void *ctx)
{
	struct giong__http_cworker *w = ctx;
	uint64_t now = giong_now_ms(), t = w->cli->o.idle_timeout_ms;

	(void)timer;
	if (w->ending)
		return; /* the atexit hook closes what is left */
	if (now >= t)
		expire(w, now - t);
	arm_timer(w);
}

/* Arm the timer for the oldest pooled connection, if any and not armed: at
 * the time expire() closes it (the wheel never fires early). If it cannot be
 * armed (the worker's loop has ended), the next pool operation expires what
 * is due. */
static void arm_timer(struct giong__http_cworker *w)
{
	struct giong__http_cconn *c =
		giong__list_entry(w->idle.first, struct giong__http_cconn, wlink);

	if (giong_timer_armed(&w->timer) || w->ending || !c)
		return;
	(void)giong_timer_start(&w->timer, c->parked_at + w->cli->o.idle_timeout_ms, idle_timer, w);
}

struct giong__http_cconn *giong__http_pool_take(struct giong__http_cworker *w,
						struct giong__http_origin *o)
{
	uint64_t now = giong_now_ms(), t = w->cli->o.idle_timeout_ms;
	struct giong__http_cconn *c;

	if (now >= t)
		expire(w, now - t); /* in case the timer could not be armed */
	c = giong__list_entry(o->idle.last, struct giong__http_cconn, olink);
	if (!c)
		return NULL;
	giong_stream_on_readable(c->s, NULL, NULL);
	idle_unlink(c);
	return c;
}

int giong__http_pool_put(struct giong__http_cconn *c, struct giong__http_origin *o)
{
	struct giong__http_cworker *w = c->w;

	if (o->nidle >= w->cli->o.pool_max || w->ending || giong_is_shutting_down()) {
		giong__http_cconn_close(c);
		return 0;
	}
	giong__http_input_release(&c->in); /* an idle connection holds no buffer */
	c->parked_at = giong_now_ms();
	c->origin = o;
	o->refs++;
	c->pooled = true;
	giong__list_push_back(&o->idle, &c->olink);
	giong__list_push_back(&w->idle, &c->wlink);
	o->nidle++;
	w->stats.idle++;
	/* A stream that cannot call back is pooled all the same: a server's
	 * close then shows at its next use, which the retry covers. */
	giong_stream_on_readable(c->s, idle_readable, c);
	arm_timer(w);
	return 1;
}

int giong_http_client_close_idle(struct giong_http_client *cli)
{
	struct giong__http_cworker *w;
	struct giong__http_cconn *c;
	int err, n = 0;

	if (!cli)
		return -EINVAL;
	if (!(w = giong__http_cworker_get(cli, &err)))
		return err;
	while ((c = giong__list_entry(w->idle.first, struct giong__http_cconn, wlink))) {
		idle_unlink(c);
		giong__http_cconn_close(c);
		n++;
	}
	return n;
}

/* ------------------------------------------------------------ origins */

struct giong__http_origin *giong__http_origin_get(struct giong__http_cworker *w, bool tls,
						  const char *host, size_t host_len, uint16_t port)
{
	struct giong__list_node *n;
	struct giong__http_origin *o;

	for (n = w->origins.first; n; n = n->next) {
		o = giong__list_entry(n, struct giong__http_origin, link);
		if (o->tls == tls && o->port == port && o->host_len == host_len &&
		    !strncasecmp(o->host, host, host_len)) {
			o->refs++;
			return o;
		}
	}
	if (!(o = calloc(1, sizeof(*o) + host_len + 1)))
		return NULL;
	o->tls = tls;
	o->port = port;
	o->host_len = host_len;
	for (size_t i = 0; i < host_len; i++)
		o->host[i] = (char)(host[i] >= 'A' && host[i] <= 'Z' ? host[i] + 32 : host[i]);
	o->refs = 1;
	giong__list_push_back(&w->origins, &o->link);
	return o;
}

void giong__http_origin_put(struct giong__http_cworker *w, struct giong__http_origin *o)
{
	if (o && --o->refs == 0) {
		giong__list_remove(&w->origins, &o->link);
		free(o);
	}
}

/* ------------------------------------------------------------ connections */

/* The protocol a new connection over @s speaks, NULL for HTTP/1.1: over TLS the one
 * ALPN agreed on, if the client offers it; else the first with prior knowledge. */
static const struct giong_http_protocol *protocol_of(const struct giong_http_client_options *opt,
						     struct giong_stream *s, bool tls)
{
	const struct giong_http_protocol *const *p = opt->protocols;
	const char *name;
	size_t len;

	if (!p)
		return NULL;
	if (!tls)
		return opt->prior_knowledge ? p[0] : NULL;
	if (giong_stream_alpn(s, &name, &len) != 0)
		return NULL;
	for (; *p; p++)
		if (strlen((*p)->name) == len && !memcmp((*p)->name, name, len))
			return *p;
	return NULL;
}

int giong__http_cconn_open(struct giong__http_cworker *w, struct giong__http_origin *o,
			   struct giong__http_cconn **ret)
{
	const struct giong_http_client_options *opt = &w->cli->o;
	struct giong_stream *tcp = NULL, *s = NULL;
	struct giong__http_cconn *c;
	char addr[300], name[260];
	uint64_t saved;
	int r;

	*ret = NULL;
	if (o->host_len > 255)
		return -EINVAL;
	snprintf(addr, sizeof(addr), "%s:%u", o->host, (unsigned)o->port);
	if (!(c = calloc(1, sizeof(*c))))
		return -ENOMEM;
	saved = giong_deadline_in(opt->connect_timeout_ms);
	r = giong_tcp_connect(addr, &tcp);
	if (r == 0) {
		giong_tcp_set_nodelay(tcp, true); /* a request is one write: send it now */
		s = tcp;
	}
	if (r == 0 && o->tls) {
		/* The connector gets the host without an IPv6 literal's brackets. */
		bool v6 = o->host[0] == '[';

		snprintf(name, sizeof(name), "%.*s", (int)(o->host_len - (v6 ? 2 : 0)),
			 o->host + v6);
		r = opt->connect(tcp, name, opt->connect_ctx, &s);
		if (!r && !s)
			r = -EINVAL;
		if (r)
			giong_stream_close(tcp); /* a failed connector leaves it to us */
	}
	if (r == 0 && (c->proto = protocol_of(opt, s, o->tls)) &&
	    (r = c->proto->client_open(s, opt, &c->session)))
		giong_stream_close(s);
	giong_deadline_restore(saved);
	if (r) {
		free(c);
		return r;
	}
	c->s = s;
	c->w = w;
	w->stats.connects++;
	*ret = c;
	return 0;
}

void giong__http_cconn_close(struct giong__http_cconn *c)
{
	if (!c)
		return;
	giong__http_input_release(&c->in);
	if (c->session)
		c->proto->client_close(c->session);
	if (c->s)
		giong_stream_close(c->s);
	free(c);
}

/* ------------------------------------------------------------ workers */

static void cworker_free(struct giong__http_cworker *w)
{
	struct giong_http_exchange *ex;
	struct giong__http_origin *o;

	while ((ex = giong__list_entry(giong__list_pop_front(&w->exchanges),
				       struct giong_http_exchange, link))) {
		giong__http_out_free(&ex->req);
		free(ex->fields);
		free(ex->copy);
		free(ex);
	}
	giong__http_pipeline_cache_free(w);
	/* Origins an exchange that was never ended still points to go too: the
	 * worker, and with it that exchange, is gone. */
	while ((o = giong__list_entry(giong__list_pop_front(&w->origins), struct giong__http_origin,
				      link)))
		free(o);
	/* Disarmed already when the worker's loop ended; stopped for clarity:
	 * the wheel must hold no pointer into w. */
	giong_timer_stop(&w->timer);
	free(w);
}

/* The worker ends (its operations drained): close its pool, free its share. */
static void cworker_atexit(void *ctx)
{
	struct giong__http_cworker *w = ctx;
	struct giong__http_slots *ws = atomic_load(&w->cli->workers);

	w->ending = true;
	giong_http_client_close_idle(w->cli);
	ws->w[w->index] = NULL;
	cworker_free(w);
}

struct giong__http_cworker *giong__http_cworker_get(struct giong_http_client *cli, int *err)
{
	void **slot = giong__http_worker_slot(&cli->workers, err);
	struct giong__http_cworker *w;

	if (!slot)
		return NULL;
	if ((w = *slot))
		return w;
	if (!(w = calloc(1, sizeof(*w)))) {
		*err = -ENOMEM;
		return NULL;
	}
	w->cli = cli;
	w->index = (unsigned)giong_worker_index();
	if ((*err = giong_worker_atexit(cworker_atexit, w))) {
		free(w);
		return NULL;
	}
	*slot = w;
	return w;
}

int giong_http_client_stats(const struct giong_http_client *cli, unsigned worker,
			    struct giong_http_client_stats *out)
{
	const struct giong__http_cworker *w;

	if (!cli || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	w = giong__http_slot_at(atomic_load(&((struct giong_http_client *)cli)->workers), worker);
	if (w)
		*out = w->stats;
	return 0;
}

/* ------------------------------------------------------------ URLs */

static bool prefix(const char *s, const char *lower, size_t n)
{
	return !strncasecmp(s, lower, n);
}

int giong__http_url_parse(const char *url, struct giong__http_url *u)
{
	const char *p, *a, *end;
	size_t n;

	memset(u, 0, sizeof(*u));
	if (prefix(url, "http://", 7)) {
		p = url + 7;
	} else if (prefix(url, "https://", 8)) {
		p = url + 8;
		u->tls = true;
	} else {
		return strstr(url, "://") ? -EPROTONOSUPPORT : -EINVAL;
	}
	end = p + strcspn(p, "#"); /* a fragment is the client's own: never sent */
	a = p + strcspn(p, "/?#");
	if (memchr(p, '@', (size_t)(a - p)))
		return -EINVAL; /* no userinfo (RFC 9110 4.2.4) */
	u->host = p;
	if (*p == '[') {
		const char *rb = memchr(p, ']', (size_t)(a - p));

		if (!rb || rb == p + 1)
			return -EINVAL;
		for (const char *q = p + 1; q < rb; q++)
			if (!strchr("0123456789abcdefABCDEF:.", *q))
				return -EINVAL;
		u->host_len = (size_t)(rb + 1 - p);
		p = rb + 1;
	} else {
		while (p < a && *p != ':')
			p++;
		u->host_len = (size_t)(p - u->host);
		for (size_t i = 0; i < u->host_len; i++) {
			char c = u->host[i];

			if (!(c == '-' || c == '.' || c == '_' || (c >= '0' && c <= '9') ||
			      ((c | 32) >= 'a' && (c | 32) <= 'z')))
				return -EINVAL; /* a reg-name of the common kind only */
		}
	}
	if (!u->host_len)
		return -EINVAL;
	u->port = u->tls ? 443 : 80;
	if (p < a) {
		unsigned long port = 0;

		if (*p++ != ':' || p == a)
			return -EINVAL;
		for (n = 0; p + n < a; n++) {
			if (p[n] < '0' || p[n] > '9' || n > 5)
				return -EINVAL;
			port = port * 10 + (unsigned long)(p[n] - '0');
		}
		if (port == 0 || port > 65535)
			return -EINVAL;
		u->port = (uint16_t)port;
		u->port_given = true;
	}
	u->target = a;
	u->target_len = (size_t)(end - a);
	for (size_t i = 0; i < u->target_len; i++)
		if ((unsigned char)a[i] <= 0x20 || (unsigned char)a[i] >= 0x7f)
			return -EINVAL; /* a target is visible ASCII (RFC 9112 3.2) */
	if (!u->target_len) {
		u->target = "/"; /* "http://h" asks for "/" (and "http://h?q" for "/?q") */
		u->target_len = 1;
	}
	return 0;
}
