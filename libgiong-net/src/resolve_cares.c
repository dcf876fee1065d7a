/* SPDX-License-Identifier: MIT */
/*
 * resolve_cares.c - the asynchronous resolver: one c-ares channel per
 * worker, its sockets waited on with giong_poll().
 *
 * Who owns what, and until when:
 * - struct resolver belongs to its worker (thread-local). It is made on the
 *   first lookup or giong_resolver_configure() and freed by the worker's
 *   atexit hook, once every task of the worker has ended.
 * - struct rquery is one lookup, on the heap (c-ares never sees the asking
 *   task's stack). The task that asked owns it while it waits. If it gives
 *   up first (its deadline, a cancel) it marks the lookup abandoned and
 *   returns: from then on the record belongs to c-ares's callback, which
 *   frees it whenever c-ares ends the lookup (an answer, c-ares's own
 *   timeout, ares_cancel(), ares_destroy()). 1.18 cannot cancel one lookup,
 *   so abandoned lookups go on while other tasks of the worker wait; once
 *   none waits, ares_cancel() ends them all, so that no watcher task keeps
 *   the worker alive for a lookup nobody wants.
 * - struct rsock is one socket of c-ares's and the tasks waiting on it, one
 *   per direction. c-ares says when it opens and closes one (the socket
 *   state callback); the record goes once c-ares has closed the socket
 *   *and* its tasks have ended, whichever comes last. A task never touches
 *   the descriptor after c-ares closed it: the close cancels the task
 *   (which ends its poll in the kernel; the poll holds its own reference to
 *   the file, so a number c-ares reuses at once is not confused with it).
 *
 * Timeouts: c-ares's (a server that does not answer, a retry) run in the
 * tasks that wait for a lookup, which sleep at most until ares_timeout()
 * and then let c-ares process them; the caller's deadline ends only that
 * caller's wait.
 */
#include <ares.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <giong/net.h>

#include "giong_private.h"
#include "resolve.h"

struct resolver;
struct rsock;

/* One direction of one c-ares socket, and the task that waits on it. */
struct rwatch {
	struct rsock *s;
	short events;            /* POLLIN or POLLOUT */
	bool want;               /* c-ares wants to hear of it */
	bool spawned;            /* its task was spawned and has not ended */
	struct giong_task *task; /* that task once it runs: borrowed, valid until it ends */
};

struct rsock {
	struct giong__list_node link; /* in resolver.socks while c-ares has it open */
	struct resolver *r;
	int fd;
	bool closed;          /* c-ares closed it: the number is no longer ours */
	struct rwatch dir[2]; /* reading, writing */
};

struct rquery {
	struct resolver *r;
	struct giong_waitq wq; /* the asking task, while it waits */
	bool done;
	bool abandoned; /* the task gave up: the callback frees the record */
	int status;
	struct ares_addrinfo *ai;
};

struct resolver {
	ares_channel ch;                    /* NULL until the next lookup makes it */
	struct giong_resolver_options opts; /* strings owned */
	struct giong__list socks;
	struct giong_resolver_stats st;
	uint32_t waiting; /* lookups whose task still waits */
	uint32_t orphans; /* abandoned lookups c-ares has not ended */
	bool dns;         /* the channel's lookups include DNS ('b') */
	bool exiting;     /* the worker ends: no new watcher task */
};

static __thread struct resolver *tls_resolver;

static pthread_once_t lib_once = PTHREAD_ONCE_INIT;
static int lib_status = ARES_ENOTINITIALIZED;

/* ares_library_init() is not thread-safe: once per process, never undone
 * (another runtime may start later). */
static void lib_init(void)
{
	lib_status = ares_library_init(ARES_LIB_INIT_ALL);
}

/* --------------------------------------------------------------- sockets */

static intptr_t watch_task(void *arg);

static void rsock_put(struct rsock *s)
{
	if (s->closed && !s->dir[0].spawned && !s->dir[1].spawned)
		free(s);
}

/* Start the task of @wt if c-ares wants that direction and none runs. */
static void watch(struct rwatch *wt)
{
	struct resolver *r = wt->s->r;

	if (!wt->want || wt->spawned || wt->s->closed || r->exiting)
		return;
	/* On failure the socket goes unwatched: c-ares's timeouts, run by the
	 * waiting tasks, still end its lookups. */
	if (giong_spawn(watch_task, wt, NULL) == 0) {
		wt->spawned = true;
		r->st.watchers++;
	}
}

static intptr_t watch_task(void *arg)
{
	struct rwatch *wt = arg;
	struct rsock *s = wt->s;
	struct resolver *r = s->r;
	bool rd = wt == &s->dir[0];

	wt->task = giong_task_current();
	giong_task_set_name("giong-resolver");
	while (wt->want && !s->closed) {
		int ev = giong_poll(s->fd, wt->events, -1);

		/* < 0: cancelled by the close below, or by the worker ending. */
		if (ev < 0 || s->closed || (ev & POLLNVAL))
			break;
		/* May end lookups, close this socket (then s->closed is set and
		 * this task cancelled), and open others. */
		ares_process_fd(r->ch, rd ? s->fd : ARES_SOCKET_BAD, rd ? ARES_SOCKET_BAD : s->fd);
	}
	wt->task = NULL;
	wt->spawned = false;
	r->st.watchers--;
	rsock_put(s);
	return 0;
}

static struct rsock *rsock_find(struct resolver *r, int fd)
{
	struct giong__list_node *n, *tmp;

	giong__list_for_each_safe(n, tmp, &r->socks) {
		struct rsock *s = giong__list_entry(n, struct rsock, link);

		if (s->fd == fd)
			return s;
	}
	return NULL;
}

/* c-ares's socket state callback: @fd opened, changed interest, or (both 0)
 * is about to be closed. Runs inside whatever c-ares call made the change. */
static void sock_state(void *data, ares_socket_t fd, int readable, int writable)
{
	struct resolver *r = data;
	struct rsock *s = rsock_find(r, fd);

	if (!readable && !writable) {
		if (!s)
			return;
		giong__list_remove(&r->socks, &s->link);
		r->st.sockets--;
		s->closed = true;
		for (int i = 0; i < 2; i++)
			if (s->dir[i].task)
				giong_task_cancel(s->dir[i].task);
		rsock_put(s); /* a task spawned but not started sees closed */
		return;
	}
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return; /* unwatched, as when a spawn fails */
		s->r = r;
		s->fd = fd;
		s->dir[0] = (struct rwatch){.s = s, .events = POLLIN};
		s->dir[1] = (struct rwatch){.s = s, .events = POLLOUT};
		giong__list_push_back(&r->socks, &s->link);
		r->st.sockets++;
	}
	s->dir[0].want = readable;
	s->dir[1].want = writable;
	watch(&s->dir[0]);
	watch(&s->dir[1]);
}

/* Give a watcher again to sockets whose task ended early (no SQE, say). */
static void rewatch(struct resolver *r)
{
	struct giong__list_node *n, *tmp;

	giong__list_for_each_safe(n, tmp, &r->socks) {
		struct rsock *s = giong__list_entry(n, struct rsock, link);

		watch(&s->dir[0]);
		watch(&s->dir[1]);
	}
}

/* --------------------------------------------------------------- channel */

static void opts_free(struct giong_resolver_options *o)
{
	free((char *)o->resolv_conf);
	free((char *)o->servers);
	free((char *)o->lookups);
	memset(o, 0, sizeof(*o));
}

static int opts_copy(struct giong_resolver_options *dst, const struct giong_resolver_options *src)
{
	memset(dst, 0, sizeof(*dst));
	if (!src)
		return 0;
	dst->timeout_ms = src->timeout_ms;
	dst->tries = src->tries;
	if ((src->resolv_conf && !(dst->resolv_conf = strdup(src->resolv_conf))) ||
	    (src->servers && !(dst->servers = strdup(src->servers))) ||
	    (src->lookups && !(dst->lookups = strdup(src->lookups)))) {
		opts_free(dst);
		return -ENOMEM;
	}
	return 0;
}

static bool lookups_ok(const char *l)
{
	size_t n = strlen(l);

	if (n < 1 || n > 2 || strspn(l, "fb") != n)
		return false;
	return n == 1 || l[0] != l[1];
}

/* A channel for @r with @o. Returns 0 and it in *@ret, or -errno. */
static int channel_new(struct resolver *r, const struct giong_resolver_options *o,
		       ares_channel *ret)
{
	struct ares_options ao;
	int mask = ARES_OPT_SOCK_STATE_CB, e;

	if (o->lookups && !lookups_ok(o->lookups))
		return -EINVAL;
	if (o->timeout_ms > INT32_MAX || o->tries > INT32_MAX)
		return -EINVAL;
	pthread_once(&lib_once, lib_init);
	if (lib_status != ARES_SUCCESS)
		return lib_status == ARES_ENOMEM ? -ENOMEM : -EIO;
	memset(&ao, 0, sizeof(ao));
	ao.sock_state_cb = sock_state;
	ao.sock_state_cb_data = r;
	if (o->resolv_conf) {
		ao.resolvconf_path = (char *)o->resolv_conf; /* copied by c-ares */
		mask |= ARES_OPT_RESOLVCONF;
	}
	if (o->lookups) {
		ao.lookups = (char *)o->lookups; /* copied by c-ares */
		mask |= ARES_OPT_LOOKUPS;
	}
	if (o->timeout_ms) {
		ao.timeout = (int)o->timeout_ms;
		mask |= ARES_OPT_TIMEOUTMS;
	}
	if (o->tries) {
		ao.tries = (int)o->tries;
		mask |= ARES_OPT_TRIES;
	}
	e = ares_init_options(ret, &ao, mask);
	if (e != ARES_SUCCESS)
		return e == ARES_ENOMEM ? -ENOMEM : -EINVAL;
	if (o->servers && (e = ares_set_servers_ports_csv(*ret, o->servers)) != ARES_SUCCESS) {
		ares_destroy(*ret);
		return e == ARES_ENOMEM ? -ENOMEM : -EINVAL;
	}
	return 0;
}

/* Whether @ch's lookups (ours, or the system's) include DNS. */
static bool channel_dns(ares_channel ch)
{
	struct ares_options ao;
	int mask = 0;
	bool dns = true;

	if (ares_save_options(ch, &ao, &mask) != ARES_SUCCESS)
		return true;
	if ((mask & ARES_OPT_LOOKUPS) && ao.lookups)
		dns = strchr(ao.lookups, 'b') != NULL;
	ares_destroy_options(&ao);
	return dns;
}

static void channel_set(struct resolver *r, ares_channel ch)
{
	if (r->ch)
		ares_destroy(r->ch); /* nothing in flight: no callback runs */
	r->ch = ch;
	r->dns = channel_dns(ch);
}

/* The worker ends: every task is gone, so every lookup left is abandoned
 * and every socket unwatched. ares_destroy() ends them through the
 * callbacks, which free what they own. */
static void resolver_exit(void *ctx)
{
	struct resolver *r = ctx;
	struct giong__list_node *n;

	r->exiting = true;
	if (r->ch)
		ares_destroy(r->ch);
	/* Records of sockets c-ares did not report closed: none is watched. */
	while ((n = giong__list_pop_front(&r->socks))) {
		struct rsock *s = giong__list_entry(n, struct rsock, link);

		s->closed = true;
		rsock_put(s);
	}
	opts_free(&r->opts);
	if (tls_resolver == r)
		tls_resolver = NULL;
	free(r);
}

/* The calling worker's resolver, made on first use. */
static int resolver_get(struct resolver **ret)
{
	struct resolver *r = tls_resolver;
	int e;

	if (!r) {
		if (giong_worker_index() < 0)
			return GIONG_ENOTWORKER;
		r = calloc(1, sizeof(*r));
		if (!r)
			return -ENOMEM;
		e = giong_worker_atexit(resolver_exit, r);
		if (e) {
			free(r);
			return e == -ENOSPC ? -ENOMEM : e;
		}
		tls_resolver = r;
	}
	*ret = r;
	return 0;
}

int giong_resolver_configure(const struct giong_resolver_options *opts)
{
	struct giong_resolver_options copy;
	struct resolver *r;
	ares_channel ch;
	int e;

	e = resolver_get(&r);
	if (e)
		return e;
	if (r->st.in_flight)
		return -EBUSY;
	e = opts_copy(&copy, opts);
	if (e)
		return e;
	e = channel_new(r, &copy, &ch);
	if (e) {
		opts_free(&copy);
		return e;
	}
	channel_set(r, ch);
	opts_free(&r->opts);
	r->opts = copy;
	return 0;
}

int giong_resolver_stats(struct giong_resolver_stats *out)
{
	if (!out)
		return -EINVAL;
	if (giong_worker_index() < 0)
		return GIONG_ENOTWORKER;
	if (tls_resolver)
		*out = tls_resolver->st;
	else
		memset(out, 0, sizeof(*out));
	return 0;
}

/* --------------------------------------------------------------- lookups */

/* c-ares ended a lookup. Runs inside a c-ares call of any task. */
static void query_done(void *arg, int status, int timeouts, struct ares_addrinfo *ai)
{
	struct rquery *q = arg;
	struct resolver *r = q->r;

	(void)timeouts;
	r->st.in_flight--;
	if (q->abandoned) {
		r->orphans--;
		if (ai)
			ares_freeaddrinfo(ai);
		free(q);
		return;
	}
	r->waiting--;
	q->status = status;
	q->ai = ai;
	q->done = true;
	giong_waitq_wake_all(&q->wq, 0);
}

/* c-ares's status as giong_resolve() returns it. */
static int ares_to_errno(const struct resolver *r, int status)
{
	switch (status) {
	case ARES_ECONNREFUSED:
		/* 1.18 ends a lookup that asked no server (lookups "f") with
		 * its initial status, ECONNREFUSED: the hosts file lacked it. */
		return r->dns ? -ECONNREFUSED : -EHOSTUNREACH;
	case ARES_ENODATA:
	case ARES_ENOTFOUND:
	case ARES_ENONAME:
		return -EHOSTUNREACH;
	case ARES_ETIMEOUT:
		return -ETIMEDOUT;
	case ARES_ENOMEM:
		return -ENOMEM;
	case ARES_ECANCELLED:
	case ARES_EDESTRUCTION:
		return -ECANCELED;
	case ARES_EBADNAME:
	case ARES_EBADFAMILY:
	case ARES_EBADFLAGS:
	case ARES_EBADHINTS:
		return -EINVAL;
	default:
		return -EIO;
	}
}

/* Wait once for @q: until it ends, c-ares's next timeout (then let c-ares
 * act on it), or @deadline. Returns 0 to go on waiting, or the wait's
 * error (-ETIMEDOUT for @deadline, -ECANCELED, ...). */
static int wait_once(struct resolver *r, struct rquery *q, uint64_t deadline)
{
	struct timeval tv, *t;
	uint64_t when = deadline, saved;
	int ret;

	rewatch(r);
	t = ares_timeout(r->ch, NULL, &tv);
	if (t) {
		/* Rounded up, and one more: the wheel's clock is the tick's, so
		 * waking a little late lets c-ares find the timeout due. */
		uint64_t ms = (uint64_t)t->tv_sec * 1000 + ((uint64_t)t->tv_usec + 999) / 1000 + 1;

		if (giong_now_ms() + ms < when)
			when = giong_now_ms() + ms;
	}
	saved = giong_deadline_set(when);
	ret = giong_waitq_wait(&q->wq, 0);
	giong_deadline_restore(saved);
	if (ret == -ETIMEDOUT && when < deadline) {
		/* c-ares's timer, not the caller's deadline: retry or give up. */
		ares_process_fd(r->ch, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
		return 0;
	}
	return ret;
}

/* Nobody waits for the lookups left: end them, and with them the sockets
 * and watcher tasks they keep. Never from inside a c-ares callback. */
static void reap(struct resolver *r)
{
	if (!r->waiting && r->orphans && r->ch)
		ares_cancel(r->ch);
}

/* Copy c-ares's answer, in its order (RFC 6724), with @port. */
static int copy_out(const struct ares_addrinfo *ai, unsigned port, struct giong_addr *out,
		    size_t max)
{
	const struct ares_addrinfo_node *n;
	size_t k = 0;

	for (n = ai ? ai->nodes : NULL; n && k < max; n = n->ai_next)
		if (!giong__net_addr_put(&out[k], n->ai_addr, n->ai_addrlen, port))
			k++;
	return k ? (int)k : -EHOSTUNREACH;
}

int giong__net_cares_resolve(const char *host, unsigned port, int family, struct giong_addr *out,
			     size_t max)
{
	/* ENVHOSTS: c-ares's CARES_HOSTS names another hosts file. */
	struct ares_addrinfo_hints hints = {
		.ai_flags = ARES_AI_ENVHOSTS,
		.ai_family = family,
		.ai_socktype = SOCK_STREAM,
	};
	uint64_t deadline = giong_deadline();
	struct resolver *r;
	struct rquery *q;
	int ret;

	if (giong_task_cancelled())
		return -ECANCELED;
	if (deadline != GIONG_NO_DEADLINE && giong_now_ms() >= deadline)
		return -ETIMEDOUT;
	ret = resolver_get(&r);
	if (!ret && !r->ch) {
		ares_channel ch;

		ret = channel_new(r, &r->opts, &ch);
		if (!ret)
			channel_set(r, ch);
	}
	if (ret)
		return ret;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->r = r;
	r->st.lookups++;
	r->st.in_flight++;
	r->waiting++;
	/* May end at once (the hosts file), through query_done(). */
	ares_getaddrinfo(r->ch, host, NULL, &hints, query_done, q);
	ret = 0;
	while (!q->done && ret == 0)
		ret = wait_once(r, q, deadline);
	if (!q->done) {
		/* From here q is query_done()'s to free. */
		q->abandoned = true;
		r->waiting--;
		r->orphans++;
		r->st.abandoned++;
		reap(r);
		return ret;
	}
	ret = q->status == ARES_SUCCESS ? copy_out(q->ai, port, out, max)
					: ares_to_errno(r, q->status);
	if (q->ai)
		ares_freeaddrinfo(q->ai);
	free(q);
	reap(r);
	return ret;
}
