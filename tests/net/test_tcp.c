/* SPDX-License-Identifier: MIT */
/*
 * test_tcp.c - TCP streams: 8 MB echoed each way without a wrong byte (giong
 * to giong, a plain blocking client to a giong server, a giong client to a
 * plain blocking server), end of stream as recv() == 0 and read() == 0,
 * IPv6, 500 and 1,300 connections open at once (bad input is in
 * test_tcp_errors.c). Every test checks that it leaves no descriptor open.
 */
#include <semaphore.h>

#include "net_test.h"

#define ECHO_BYTES (8u << 20)
#define CHUNK (256u << 10)

/* ------------------------------------------------ 8 MB echo, giong <-> giong */

struct echo8 {
	uint64_t seed;
	int port;
	/* server */
	int accept_ret;
	long long srv_bytes;
	ssize_t srv_end;   /* recv() at the end: 0 */
	int srv_recv_null; /* *ret was NULL with the 0 */
	int srv_shut;
	/* client */
	int connect_ret;
	ssize_t cli_write;
	int cli_shut;
	long long cli_bytes;
	long long cli_bad; /* first wrong offset, or -1 */
	ssize_t cli_end;   /* read() at the end: 0 */
	ssize_t cli_after; /* read() again after the end: 0 */
	char kind[8];
};

/* Echo everything with recv(); at the end, shut down writing and close. */
static void echo_serve(struct giong_stream *s, long long *bytes, ssize_t *end, int *null_ret,
		       int *shut)
{
	struct giong_recvbuf *b = (void *)1;
	ssize_t n;

	while ((n = giong_stream_recv(s, &b)) > 0) {
		ssize_t w = giong_stream_write_all(s, giong_recvbuf_data(b), (size_t)n);

		giong_recvbuf_release(b);
		if (w != n) {
			n = w < 0 ? w : -EIO;
			break;
		}
		*bytes += n;
	}
	*end = n;
	if (null_ret)
		*null_ret = n == 0 && b == NULL;
	*shut = giong_stream_shutdown(s, SHUT_WR);
	giong_stream_close(s);
}

struct echo8_srv {
	struct echo8 *e;
	struct giong_listener *l;
};

static intptr_t echo8_server(void *arg)
{
	struct echo8_srv *sv = arg;
	struct echo8 *e = sv->e;
	struct giong_stream *s;

	e->accept_ret = giong_tcp_accept(sv->l, &s);
	if (e->accept_ret)
		return 0;
	echo_serve(s, &e->srv_bytes, &e->srv_end, &e->srv_recv_null, &e->srv_shut);
	return 0;
}

struct duplex {
	struct giong_stream *s;
	uint64_t seed;
	size_t total;
	ssize_t write_ret;
	int shut_ret;
	long long bytes, bad;
	ssize_t end, after;
	bool use_recv;
	const char *kind;
};

/* Write @total bytes of the pattern in chunks, then SHUT_WR. */
static intptr_t duplex_writer(void *arg)
{
	struct duplex *d = arg;
	char *buf = malloc(CHUNK);
	size_t off = 0;

	d->write_ret = -ENOMEM;
	if (!buf)
		return 0;
	while (off < d->total) {
		size_t n = d->total - off < CHUNK ? d->total - off : CHUNK;
		ssize_t w;

		nt_fill(d->seed, off, buf, n);
		w = giong_stream_write_all(d->s, buf, n);
		if (w != (ssize_t)n) {
			d->write_ret = w < 0 ? w : -EIO;
			free(buf);
			return 0;
		}
		off += n;
	}
	d->write_ret = (ssize_t)off;
	d->shut_ret = giong_stream_shutdown(d->s, SHUT_WR);
	free(buf);
	return 0;
}

/* Read until the end of stream (read() or recv()), checking every byte. */
static intptr_t duplex_reader(void *arg)
{
	struct duplex *d = arg;
	char *buf = malloc(65536);
	ssize_t n;

	d->bad = -1;
	d->end = -ENOMEM;
	if (!buf)
		return 0;
	for (;;) {
		struct giong_recvbuf *b = NULL;
		const void *data = buf;

		if (d->use_recv) {
			n = giong_stream_recv(d->s, &b);
			data = giong_recvbuf_data(b);
		} else {
			n = giong_stream_read(d->s, buf, 65536);
		}
		if (n <= 0)
			break;
		if (d->bad < 0)
			d->bad = nt_check(d->seed, (uint64_t)d->bytes, data, (size_t)n);
		d->bytes += n;
		giong_recvbuf_release(b);
	}
	d->end = n;
	if (d->use_recv) {
		struct giong_recvbuf *b;

		d->after = giong_stream_recv(d->s, &b);
	} else {
		d->after = giong_stream_read(d->s, buf, 16);
	}
	free(buf);
	return 0;
}

/* Connect (giong), write and read at once from two tasks, close. */
static void giong_duplex_client(const char *addr, struct duplex *d, int *connect_ret)
{
	struct giong_task *tw, *tr;

	*connect_ret = giong_tcp_connect(addr, &d->s);
	if (*connect_ret)
		return;
	d->kind = giong_stream_kind(d->s);
	giong_spawn(duplex_writer, d, &tw);
	giong_spawn(duplex_reader, d, &tr);
	giong_join(tw, NULL);
	giong_join(tr, NULL);
	giong_stream_close(d->s);
}

static void copy_duplex(struct echo8 *e, const struct duplex *d)
{
	e->cli_write = d->write_ret;
	e->cli_shut = d->shut_ret;
	e->cli_bytes = d->bytes;
	e->cli_bad = d->bad;
	e->cli_end = d->end;
	e->cli_after = d->after;
}

static void echo8_main(unsigned w, void *arg)
{
	struct echo8 *e = arg;
	struct echo8_srv sv = {e, NULL};
	struct duplex d = {.seed = e->seed, .total = ECHO_BYTES};
	struct giong_task *ts;
	char addr[64];

	(void)w;
	if (giong_tcp_listen("127.0.0.1:0", NULL, &sv.l)) {
		e->accept_ret = -999;
		return;
	}
	e->port = nt_listener_port(sv.l);
	giong_spawn(echo8_server, &sv, &ts);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", e->port);
	giong_duplex_client(addr, &d, &e->connect_ret);
	snprintf(e->kind, sizeof(e->kind), "%s", d.kind ? d.kind : "none");
	copy_duplex(e, &d);
	giong_join(ts, NULL);
	giong_listener_close(sv.l);
}

static void assert_echo8_client(const struct echo8 *e)
{
	assert_int_equal(e->connect_ret, 0);
	assert_int_equal(e->cli_write, ECHO_BYTES);
	assert_int_equal(e->cli_shut, 0);
	assert_int_equal(e->cli_bytes, ECHO_BYTES);
	assert_int_equal(e->cli_bad, -1);
	assert_int_equal(e->cli_end, 0);   /* end of stream */
	assert_int_equal(e->cli_after, 0); /* and it stays ended */
}

static void test_echo_8mb_giong_giong(void **state)
{
	struct giong_config c = gt_config(1);
	struct echo8 e;
	int fds = gt_count_fds();

	(void)state;
	memset(&e, 0, sizeof(e));
	e.seed = 1;
	gt_run(&c, echo8_main, &e, NULL);
	assert_int_equal(e.accept_ret, 0);
	assert_echo8_client(&e);
	assert_int_equal(e.srv_bytes, ECHO_BYTES);
	assert_int_equal(e.srv_end, 0);
	assert_true(e.srv_recv_null);
	assert_int_equal(e.srv_shut, 0);
	assert_string_equal(e.kind, "tcp");
	gt_assert_fds(fds);
}

/* ----------------------------------- 8 MB echo, plain client -> giong server */

struct plain_cli {
	sem_t ready;
	int port;
	uint64_t seed;
	int fd;
	ssize_t write_ret;
	long long bytes, bad;
	ssize_t end;
};

static void *plain_writer(void *arg)
{
	struct plain_cli *p = arg;
	char *buf = malloc(CHUNK);
	size_t off = 0;

	p->write_ret = -ENOMEM;
	if (!buf)
		return NULL;
	while (off < ECHO_BYTES) {
		nt_fill(p->seed, off, buf, CHUNK);
		if (gt_write_all(p->fd, buf, CHUNK) != CHUNK) {
			p->write_ret = -EIO;
			free(buf);
			return NULL;
		}
		off += CHUNK;
	}
	p->write_ret = (ssize_t)off;
	shutdown(p->fd, SHUT_WR);
	free(buf);
	return NULL;
}

/* The blocking client: connect once the server says its port, write from a
 * second thread, read and check here until read() returns 0. */
static void *plain_client(void *arg)
{
	struct plain_cli *p = arg;
	char *buf = malloc(65536);
	pthread_t tw;
	ssize_t n;

	p->bad = -1;
	p->end = -99;
	sem_wait(&p->ready);
	if (!buf || p->port <= 0)
		goto out;
	p->fd = nt_plain_connect(p->port, 0);
	if (p->fd < 0)
		goto out;
	pthread_create(&tw, NULL, plain_writer, p);
	while ((n = read(p->fd, buf, 65536)) > 0) {
		if (p->bad < 0)
			p->bad = nt_check(p->seed, (uint64_t)p->bytes, buf, (size_t)n);
		p->bytes += n;
	}
	p->end = n < 0 ? -errno : 0;
	pthread_join(tw, NULL);
	close(p->fd);
out:
	free(buf);
	return NULL;
}

struct plain_srv_run {
	struct plain_cli *p;
	int accept_ret;
	long long srv_bytes;
	ssize_t srv_end;
	int srv_null, srv_shut;
};

static void plain_cli_main(unsigned w, void *arg)
{
	struct plain_srv_run *r = arg;
	struct giong_listener *l;
	struct giong_stream *s;

	(void)w;
	if (giong_tcp_listen("127.0.0.1:0", NULL, &l)) {
		r->accept_ret = -999;
		sem_post(&r->p->ready);
		return;
	}
	r->p->port = nt_listener_port(l);
	sem_post(&r->p->ready);
	r->accept_ret = giong_tcp_accept(l, &s);
	if (!r->accept_ret)
		echo_serve(s, &r->srv_bytes, &r->srv_end, &r->srv_null, &r->srv_shut);
	giong_listener_close(l);
}

static void test_echo_8mb_plain_client(void **state)
{
	struct giong_config c = gt_config(1);
	struct plain_cli p;
	struct plain_srv_run r;
	pthread_t t;
	int fds = gt_count_fds();

	(void)state;
	memset(&p, 0, sizeof(p));
	memset(&r, 0, sizeof(r));
	p.seed = 2;
	r.p = &p;
	sem_init(&p.ready, 0, 0);
	pthread_create(&t, NULL, plain_client, &p);
	gt_run(&c, plain_cli_main, &r, NULL);
	pthread_join(t, NULL);
	sem_destroy(&p.ready);
	assert_int_equal(r.accept_ret, 0);
	assert_int_equal(r.srv_bytes, ECHO_BYTES);
	assert_int_equal(r.srv_end, 0);
	assert_true(r.srv_null);
	assert_int_equal(p.write_ret, ECHO_BYTES);
	assert_int_equal(p.bytes, ECHO_BYTES);
	assert_int_equal(p.bad, -1);
	assert_int_equal(p.end, 0); /* the giong server's SHUT_WR reached us */
	gt_assert_fds(fds);
}

/* ----------------------------------- 8 MB echo, giong client -> plain server */

struct plain_srv {
	int lfd;
	long long bytes;
	int end;
};

/* A blocking echo server for one connection. */
static void *plain_server(void *arg)
{
	struct plain_srv *p = arg;
	char *buf = malloc(65536);
	int fd = accept(p->lfd, NULL, NULL);
	ssize_t n;

	p->end = -99;
	if (fd < 0 || !buf) {
		free(buf);
		return NULL;
	}
	while ((n = read(fd, buf, 65536)) > 0) {
		if (gt_write_all(fd, buf, (size_t)n) != n)
			break;
		p->bytes += n;
	}
	p->end = n < 0 ? -errno : (int)n;
	shutdown(fd, SHUT_WR);
	close(fd);
	free(buf);
	return NULL;
}

struct giong_cli_run {
	int port;
	int connect_ret;
	struct duplex d;
	char local[GIONG_ADDR_STRLEN], peer[GIONG_ADDR_STRLEN];
	int nodelay;
};

static void giong_cli_main(unsigned w, void *arg)
{
	struct giong_cli_run *r = arg;
	struct giong_task *tw, *tr;
	struct giong_addr a;
	char addr[64];

	(void)w;
	snprintf(addr, sizeof(addr), "localhost:%d", r->port);
	r->connect_ret = giong_tcp_connect(addr, &r->d.s);
	if (r->connect_ret)
		return;
	r->nodelay = giong_tcp_set_nodelay(r->d.s, true);
	if (giong_stream_local_addr(r->d.s, &a) == 0)
		giong_addr_format(&a, r->local, sizeof(r->local));
	if (giong_stream_peer_addr(r->d.s, &a) == 0)
		giong_addr_format(&a, r->peer, sizeof(r->peer));
	giong_spawn(duplex_writer, &r->d, &tw);
	giong_spawn(duplex_reader, &r->d, &tr);
	giong_join(tw, NULL);
	giong_join(tr, NULL);
	giong_stream_close(r->d.s);
}

static void test_echo_8mb_plain_server(void **state)
{
	struct giong_config c = gt_config(1);
	struct plain_srv p;
	struct giong_cli_run r;
	pthread_t t;
	char want_peer[64];
	int fds = gt_count_fds(), hold = -EADDRINUSE;

	(void)state;
	memset(&p, 0, sizeof(p));
	memset(&r, 0, sizeof(r));
	/* The client connects to localhost: [::1] on the port held, so that it
	 * is refused there and 127.0.0.1 answers (another process's listener on
	 * [::1] would win); a port taken on ::1, another. */
	for (int tries = 0; hold == -EADDRINUSE && tries < 10; tries++) {
		if (tries)
			close(p.lfd);
		p.lfd = nt_plain_bind(0, 16, &r.port);
		assert_true(p.lfd >= 0);
		hold = gt_hold_v6_loopback(r.port);
	}
	assert_int_not_equal(hold, -EADDRINUSE);
	r.d.seed = 3;
	r.d.total = ECHO_BYTES;
	r.d.use_recv = true; /* end of stream as recv() == 0 */
	pthread_create(&t, NULL, plain_server, &p);
	gt_run(&c, giong_cli_main, &r, NULL);
	pthread_join(t, NULL);
	close(p.lfd);
	if (hold >= 0)
		close(hold);
	assert_int_equal(r.connect_ret, 0);
	assert_int_equal(r.nodelay, 0);
	snprintf(want_peer, sizeof(want_peer), "127.0.0.1:%d", r.port);
	assert_string_equal(r.peer, want_peer);
	assert_memory_equal(r.local, "127.0.0.1:", 10);
	assert_int_equal(r.d.write_ret, ECHO_BYTES);
	assert_int_equal(r.d.shut_ret, 0);
	assert_int_equal(r.d.bytes, ECHO_BYTES);
	assert_int_equal(r.d.bad, -1);
	assert_int_equal(r.d.end, 0);
	assert_int_equal(r.d.after, 0);
	assert_int_equal(p.bytes, ECHO_BYTES);
	assert_int_equal(p.end, 0);
	gt_assert_fds(fds);
}

/* ----------------------------------------------------------- IPv6, writev */

struct v6 {
	int listen_ret, accept_ret, connect_ret;
	ssize_t writev_ret, read_ret;
	char got[32];
	char laddr[GIONG_ADDR_STRLEN];
	int v4_on_v6only;
	int hold; /* 127.0.0.1 on the listener's port, bound only */
};

/* Accept @c's connection on @l: another process's connection to [::1] on this port
 * (a client trying "localhost" on its own 127.0.0.1 port, as Happy Eyeballs tries ::1
 * first) may come first; it is closed, and read from it would have waited for ever.
 * 0 or -errno, under a 10 s deadline. */
static int accept_from(struct giong_listener *l, struct giong_stream *c, struct giong_stream **out)
{
	uint64_t saved = giong_deadline_in(10000);
	struct giong_addr mine, peer;
	int r = giong_stream_local_addr(c, &mine);

	while (r == 0 && (r = giong_tcp_accept(l, out)) == 0) {
		if (giong_stream_peer_addr(*out, &peer) == 0 &&
		    giong_addr_port(&peer) == giong_addr_port(&mine))
			break;
		giong_stream_close(*out);
	}
	giong_deadline_restore(saved);
	return r;
}

/* Why an accept timed out: what giong holds of the queue, and the kernel's
 * view of listeners on @port (ss: Recv-Q is a listener's accept queue; two
 * listeners mean another socket took the connection). It said "kernel 1,
 * giong 0" when a listener closed just before this one had left its accept
 * unsubmitted on the number this one reused (test_listener_stop.c's test_reopened). */
static void explain_accept_timeout(struct giong_listener *l, int port)
{
	char cmd[96];

	fprintf(stderr, "ipv6 accept timed out: giong queue %d; the kernel's listeners:\n",
		giong_listener_pending(l));
	snprintf(cmd, sizeof(cmd), "ss -ltnp '( sport = :%d )' >&2", port);
	if (system(cmd) != 0)
		fprintf(stderr, "(ss failed)\n");
}

static void v6_main(unsigned w, void *arg)
{
	struct v6 *v = arg;
	/* No SO_REUSEPORT: no other socket can join this port and take the connection.
	 * Regular descriptors: accept_from() asks the accepted stream its peer. */
	struct giong_listen_options o = {.v6only = true, .no_reuseport = true, .regular_fds = true};
	struct giong_listener *l;
	struct giong_stream *c, *s;
	struct giong_addr a;
	struct iovec iov[3] = {{"hello ", 6}, {"over ", 5}, {"ipv6", 4}};
	char addr[64];

	(void)w;
	/* 127.0.0.1 on the port held by a socket bound there, not listening:
	 * refused, whatever other processes do; taken, another port. */
	for (int tries = 0; tries < 10; tries++) {
		v->listen_ret = giong_tcp_listen("[::1]:0", &o, &l);
		if (v->listen_ret)
			return;
		giong_listener_addr(l, &a);
		v->hold = nt_plain_bind(giong_addr_port(&a), -1, NULL);
		if (v->hold != -EADDRINUSE)
			break;
		giong_listener_close(l);
	}
	if (v->hold < 0) {
		giong_listener_close(l);
		return;
	}
	giong_addr_format(&a, v->laddr, sizeof(v->laddr));
	snprintf(addr, sizeof(addr), "[::1]:%d", giong_addr_port(&a));
	v->connect_ret = giong_tcp_connect(addr, &c);
	if (!v->connect_ret) {
		v->accept_ret = accept_from(l, c, &s);
		if (v->accept_ret == -ETIMEDOUT)
			explain_accept_timeout(l, giong_addr_port(&a));
		v->writev_ret = giong_stream_writev(c, iov, 3);
		if (!v->accept_ret) {
			v->read_ret = nt_stream_read_exact(s, v->got, 15);
			giong_stream_close(s);
		}
		giong_stream_close(c);
	}
	/* The listener is IPv6 only: an IPv4 client is refused. */
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", giong_addr_port(&a));
	v->v4_on_v6only = giong_tcp_connect(addr, &c);
	if (!v->v4_on_v6only)
		giong_stream_close(c);
	close(v->hold);
	giong_listener_close(l);
}

static void test_ipv6_writev(void **state)
{
	struct giong_config c = gt_config(1);
	struct v6 v;
	int fds = gt_count_fds();

	(void)state;
	memset(&v, 0, sizeof(v));
	gt_run(&c, v6_main, &v, NULL);
	assert_int_equal(v.listen_ret, 0);
	assert_true(v.hold >= 0);
	assert_memory_equal(v.laddr, "[::1]:", 6);
	assert_int_equal(v.connect_ret, 0);
	assert_int_equal(v.accept_ret, 0);
	assert_int_equal(v.writev_ret, 15);
	assert_int_equal(v.read_ret, 15);
	assert_memory_equal(v.got, "hello over ipv6", 15);
	assert_int_equal(v.v4_on_v6only, -ECONNREFUSED);
	gt_assert_fds(fds);
}

/* ------------------------------------------- many connections open at once */

#define MSGS 3

struct many {
	unsigned n, workers;
	_Atomic int port;
	atomic_int connected;      /* clients whose connect returned */
	atomic_int echoed_once;    /* clients whose first echo came back */
	atomic_int clients_done;   /* per worker, main fibers done joining */
	atomic_int live, max_live; /* server handlers alive at once */
	atomic_int echo_ok, echo_bad, connect_fail, accept_err, handlers;
	atomic_int stop;
};

struct many_worker {
	struct many *m;
	unsigned quota;
	int target_connected, target_echoed;
	struct giong_waitq all_connected, all_echoed;
	int phase; /* 0: waiting for connects, 1: for first echoes, 2: free */
	int handlers_live;
};

struct many_client {
	struct many_worker *mw;
	unsigned id;
};

static void atomic_max(atomic_int *m, int v)
{
	int cur = atomic_load(m);

	while (v > cur && !atomic_compare_exchange_weak(m, &cur, v))
		;
}

struct many_handler {
	struct many_worker *mw;
	struct giong_stream *s;
};

static intptr_t many_handler(void *arg)
{
	struct many_handler *h = arg;
	struct many *m = h->mw->m;
	long long bytes = 0;
	ssize_t end;
	int null_ret, shut;

	atomic_max(&m->max_live, atomic_fetch_add(&m->live, 1) + 1);
	echo_serve(h->s, &bytes, &end, &null_ret, &shut);
	atomic_fetch_sub(&m->live, 1);
	h->mw->handlers_live--;
	free(h);
	return 0;
}

static intptr_t many_acceptor(void *arg)
{
	struct many_worker *mw = arg;
	struct many *m = mw->m;
	struct giong_listen_options o = {.backlog = 4096};
	struct giong_listener *l;
	char addr[64];
	int r;

	snprintf(addr, sizeof(addr), "127.0.0.1:%d", atomic_load(&m->port));
	if (giong_tcp_listen(addr, &o, &l)) {
		atomic_fetch_add(&m->accept_err, 1);
		return 0;
	}
	if (!atomic_load(&m->port))
		atomic_store(&m->port, nt_listener_port(l));
	while (!atomic_load(&m->stop)) {
		struct giong_stream *s;
		uint64_t saved = giong_deadline_in(20);

		r = giong_tcp_accept(l, &s);
		giong_deadline_restore(saved);
		if (r == -ETIMEDOUT)
			continue;
		if (r) {
			atomic_fetch_add(&m->accept_err, 1);
			break;
		}
		struct many_handler *h = malloc(sizeof(*h));

		if (h) {
			h->mw = mw;
			h->s = s;
		}
		mw->handlers_live++;
		atomic_fetch_add(&m->handlers, 1);
		if (!h || giong_spawn(many_handler, h, NULL)) {
			/* No handler (no memory): the client sees the end. */
			free(h);
			giong_stream_close(s);
			mw->handlers_live--;
			atomic_fetch_add(&m->accept_err, 1);
		}
	}
	giong_listener_close(l);
	return 0;
}

static intptr_t many_client(void *arg)
{
	struct many_client *c = arg;
	struct many_worker *mw = c->mw;
	struct many *m = mw->m;
	struct giong_stream *s;
	char addr[64], msg[1500], got[1500];

	snprintf(addr, sizeof(addr), "127.0.0.1:%d", atomic_load(&m->port));
	if (giong_tcp_connect(addr, &s)) {
		atomic_fetch_add(&m->connect_fail, 1);
		atomic_fetch_add(&m->connected, 1);
		atomic_fetch_add(&m->echoed_once, 1);
		return 0;
	}
	atomic_fetch_add(&m->connected, 1);
	if (mw->phase == 0)
		giong_waitq_wait(&mw->all_connected, 0);
	for (int k = 0; k < MSGS; k++) {
		size_t len = 100 + (c->id * 7 + (unsigned)k * 331) % 1300;

		nt_fill(c->id * 16 + (unsigned)k, 0, msg, len);
		if (giong_stream_write_all(s, msg, len) != (ssize_t)len ||
		    nt_stream_read_exact(s, got, len) != (ssize_t)len || memcmp(msg, got, len))
			atomic_fetch_add(&m->echo_bad, 1);
		else
			atomic_fetch_add(&m->echo_ok, 1);
		if (k == 0) {
			/* Keep every connection open until all have echoed once. */
			atomic_fetch_add(&m->echoed_once, 1);
			if (mw->phase <= 1)
				giong_waitq_wait(&mw->all_echoed, 0);
		}
	}
	giong_stream_shutdown(s, SHUT_WR);
	/* The server's end of stream, then close. */
	if (giong_stream_read(s, got, 1) != 0)
		atomic_fetch_add(&m->echo_bad, 1);
	giong_stream_close(s);
	return 0;
}

static void many_main(unsigned w, void *arg)
{
	struct many *m = arg;
	struct many_worker mw = {.m = m};
	struct giong_task *ta, **tc;
	struct many_client *cs;

	mw.quota = m->n / m->workers + (w < m->n % m->workers);
	giong_waitq_init(&mw.all_connected);
	giong_waitq_init(&mw.all_echoed);
	/* Worker 0 picks the port; the others bind the same one (SO_REUSEPORT). */
	if (w != 0)
		while (!atomic_load(&m->port) && !atomic_load(&m->accept_err))
			giong_sleep_ms(1);
	if (giong_spawn(many_acceptor, &mw, &ta)) {
		ta = NULL;
		atomic_fetch_add(&m->accept_err, 1);
	}
	while (!atomic_load(&m->port) && !atomic_load(&m->accept_err))
		giong_sleep_ms(1);
	tc = calloc(mw.quota, sizeof(*tc));
	cs = calloc(mw.quota, sizeof(*cs));
	for (unsigned i = 0; i < mw.quota; i++) {
		cs[i].mw = &mw;
		cs[i].id = w * 100000 + i;
		if (giong_spawn(many_client, &cs[i], &tc[i])) {
			/* Counted as a client that could not connect. */
			tc[i] = NULL;
			atomic_fetch_add(&m->connect_fail, 1);
			atomic_fetch_add(&m->connected, 1);
			atomic_fetch_add(&m->echoed_once, 1);
		}
	}
	/* Release the clients once every one of all workers is connected, and
	 * again once every one has had its first echo. */
	while (atomic_load(&m->connected) < (int)m->n)
		giong_sleep_ms(1);
	mw.phase = 1;
	giong_waitq_wake_all(&mw.all_connected, 0);
	while (atomic_load(&m->echoed_once) < (int)m->n)
		giong_sleep_ms(1);
	mw.phase = 2;
	giong_waitq_wake_all(&mw.all_echoed, 0);
	for (unsigned i = 0; i < mw.quota; i++)
		if (tc[i])
			giong_join(tc[i], NULL);
	atomic_fetch_add(&m->clients_done, 1);
	while (atomic_load(&m->clients_done) < (int)m->workers)
		giong_sleep_ms(1);
	atomic_store(&m->stop, 1);
	if (ta)
		giong_join(ta, NULL);
	while (mw.handlers_live)
		giong_sleep_ms(1);
	free(tc);
	free(cs);
}

static void run_many(unsigned n, unsigned workers)
{
	struct giong_config c = gt_config(workers);
	struct many *m = calloc(1, sizeof(*m));
	int fds = gt_count_fds();

	m->n = n;
	m->workers = workers;
	c.ring_entries = 1024;
	c.recv_buffers = 1024;
	gt_run(&c, many_main, m, NULL);
	assert_int_equal(m->connect_fail, 0);
	assert_int_equal(m->accept_err, 0);
	assert_int_equal(m->handlers, n);
	assert_int_equal(m->echo_ok, n * MSGS);
	assert_int_equal(m->echo_bad, 0);
	assert_int_equal(m->max_live, n); /* all open at once */
	assert_int_equal(m->live, 0);
	gt_assert_fds(fds);
	free(m);
}

static void test_500_connections(void **state)
{
	(void)state;
	run_many(500, 1);
}

static void test_1300_connections_two_workers(void **state)
{
	(void)state;
	run_many(1300, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_echo_8mb_giong_giong),
		cmocka_unit_test(test_echo_8mb_plain_client),
		cmocka_unit_test(test_echo_8mb_plain_server),
		cmocka_unit_test(test_ipv6_writev),
		cmocka_unit_test(test_500_connections),
		cmocka_unit_test(test_1300_connections_two_workers),
	};

	gt_require_runtime();
	if (getenv("NT_FILTER")) /* run one test: NT_FILTER=test_ipv6_writev */
		cmocka_set_test_filter(getenv("NT_FILTER"));
	/* SIGPIPE stays fatal: giong must never raise it (the plain peers send
	 * with MSG_NOSIGNAL). */
	if (gt_raise_nofile(16384) < 4096) {
		fprintf(stderr, "cannot raise RLIMIT_NOFILE\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
