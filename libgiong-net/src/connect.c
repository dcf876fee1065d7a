/* SPDX-License-Identifier: MIT */
/*
 * connect.c - giong_tcp_connect() of a name: its addresses raced as RFC 8305
 * (Happy Eyeballs v2) says.
 *
 * The first address is tried at once; each next one when the last try
 * failed or 250 ms after it started, while the earlier ones go on. The first
 * to connect wins; the others are cancelled (a stream that connected anyway
 * is closed). Each try is a task of its own; what they share lives in a
 * heap record with a count of its users, because a try may still be ending
 * when the caller has returned (its deadline passed, it was cancelled).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include <giong/net.h>

#include "resolve.h"

/* At most this many addresses of a name are tried. */
#define CONNECT_ADDRS 8
/* RFC 8305 section 5: the recommended Connection Attempt Delay. */
#define CONNECT_DELAY_MS 250

struct race;

struct race_try {
	struct race *race;
	struct giong_addr addr;
	struct giong_task *task; /* the caller's handle: cancel and detach */
};

struct race {
	unsigned refs;    /* the caller and every try not ended */
	unsigned running; /* tries not ended */
	bool over;        /* the caller took its result: a later winner closes */
	int err;          /* the last try's error */
	struct giong_stream *won;
	struct giong_waitq wq; /* the caller, waiting for a try to end */
	struct race_try tries[CONNECT_ADDRS];
};

static void race_put(struct race *r)
{
	if (--r->refs == 0)
		free(r);
}

static intptr_t try_task(void *arg)
{
	struct race_try *t = arg;
	struct race *r = t->race;
	struct giong_stream *s = NULL;
	int e = giong_tcp_connect_addr(&t->addr, &s);

	r->running--;
	if (!e && (r->won || r->over))
		giong_stream_close(s); /* another try won first */
	else if (!e)
		r->won = s;
	else
		r->err = e;
	giong_waitq_wake_all(&r->wq, 0);
	race_put(r);
	return 0;
}

/* Put @a's families in turns, from the first (RFC 8305 section 4): if one
 * family is broken on this host, the next try is of the other. */
static void interleave(struct giong_addr *a, int n)
{
	struct giong_addr tmp[CONNECT_ADDRS];
	bool used[CONNECT_ADDRS] = {false};
	int fam = n ? a[0].ss.ss_family : 0;

	for (int k = 0; k < n; k++) {
		int i;

		/* the next unused one of the wanted family, else of any */
		for (i = 0; i < n && (used[i] || a[i].ss.ss_family != fam); i++)
			;
		if (i == n)
			for (i = 0; used[i]; i++)
				;
		used[i] = true;
		tmp[k] = a[i];
		fam = a[i].ss.ss_family == AF_INET ? AF_INET6 : AF_INET;
	}
	for (int k = 0; k < n; k++)
		a[k] = tmp[k];
}

/* Wait until a try ends or @delay_ms pass (-1: no limit besides the
 * caller's deadline). Returns 0, or the caller's -ETIMEDOUT / -ECANCELED. */
static int race_wait(struct race *r, int delay_ms)
{
	uint64_t saved = GIONG_NO_DEADLINE, mine = GIONG_NO_DEADLINE;
	int e;

	if (delay_ms >= 0) {
		mine = giong_now_ms() + (uint64_t)delay_ms;
		saved = giong_deadline_set(mine);
	}
	e = giong_waitq_wait(&r->wq, 0);
	if (delay_ms >= 0) {
		giong_deadline_restore(saved);
		if (e == -ETIMEDOUT && mine < saved)
			e = 0; /* our delay, not the caller's deadline */
	}
	return e;
}

/* Race the @n addresses @a; returns 0 and the winner in *@ret, or -errno. */
static int race(const struct giong_addr *a, int n, struct giong_stream **ret)
{
	struct race *r = calloc(1, sizeof(*r));
	int started = 0, e = 0;

	if (!r)
		return -ENOMEM;
	r->refs = 1;
	r->err = -EHOSTUNREACH;
	while (!r->won && !e && (started < n || r->running)) {
		if (started < n) {
			struct race_try *t = &r->tries[started++];

			t->race = r;
			t->addr = a[started - 1];
			if (giong_spawn(try_task, t, &t->task) == 0) {
				r->refs++;
				r->running++;
			} else {
				t->task = NULL;
				continue; /* no task: the next address */
			}
		}
		/* With addresses left, the next starts after the delay or
		 * once every try so far failed; else wait for the last ones. */
		if (!r->won && r->running)
			e = race_wait(r, started < n ? CONNECT_DELAY_MS : -1);
	}
	r->over = true;
	for (int i = 0; i < started; i++) {
		if (!r->tries[i].task)
			continue;
		giong_task_cancel(r->tries[i].task); /* a finished one keeps its value */
		giong_task_detach(r->tries[i].task);
	}
	*ret = r->won;
	if (!r->won)
		e = e ? e : r->err;
	else
		e = 0;
	race_put(r);
	return e;
}

int giong_tcp_connect(const char *text, struct giong_stream **ret)
{
	struct giong_addr a[CONNECT_ADDRS];
	char host[GIONG__HOST_MAX];
	unsigned port;
	int n, r;

	if (!ret)
		return -EINVAL;
	*ret = NULL;
	if (!text)
		return -EINVAL;
	r = giong__net_addr_split(text, host, sizeof(host), &port);
	if (r)
		return r;
	n = giong_resolve(host, port, AF_UNSPEC, a, CONNECT_ADDRS);
	if (n < 0)
		return n;
	if (n == 1)
		return giong_tcp_connect_addr(&a[0], ret); /* nothing to race */
	if (giong_task_current() == NULL)
		return GIONG_ENOTWORKER;
	interleave(a, n);
	return race(a, n, ret);
}
