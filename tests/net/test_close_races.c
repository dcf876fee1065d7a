/* SPDX-License-Identifier: MIT */
/*
 * test_close_races.c - closing from inside callbacks and while woken tasks
 * have not run yet, calls from the wrong thread, and edge lengths:
 *  - a readable callback that closes its stream on the receive's final
 *    completion (end of stream, reset), and from the deferred first call
 *    made when data was already queued;
 *  - a listener closed after an accept error (EMFILE) woke an acceptor that
 *    has not run yet: the acceptor returns -EBADF, the listener is freed
 *    after it;
 *  - streams, listeners and UDP sockets refuse every call that touches them
 *    (the questions too: descriptor, addresses, any query, pending count;
 *    nodelay, UDP connect) from a plain thread (GIONG_ENOTWORKER) and from another worker
 *    (-EPERM), having done nothing, and each call still works on the owner;
 *  - lengths of 4 GiB and more are not cut to their low 32 bits;
 *  - giong_stream_write(s, NULL, 0), giong_udp_bind()'s *ret on failure,
 *    and the stale-socket probe of giong_unix_listen() on a live listener
 *    whose backlog is full (it must not block the worker).
 * White-box (INTERNAL) only to see a listener's and a stream's state, so
 * that the tests wait for the state they need instead of for time.
 */
#include <limits.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "net_test.h"

#include "listener.h"
#include "sock.h"

#define GUARD_MS 10000 /* bounds every wait: a failure, never a hang */

/* ------------------------------------------- closing from the callback */

struct rc {
	struct giong_waitq wq;
	int setup, on_ret, wait_ret;
	bool close_it; /* the callback closes the stream */
	int calls, close_ret;
	bool closed;
};

static void on_readable(struct giong_stream *s, void *ctx)
{
	struct rc *rc = ctx;

	rc->calls++;
	if (rc->close_it) {
		rc->close_ret = giong_stream_close(s);
		rc->closed = true;
	}
	giong_waitq_wake_one(&rc->wq, 0);
}

/* Park until @done(@arg), bounded; the callback wakes us on every call. */
static int wait_until(struct rc *rc, bool (*done)(const void *arg), const void *arg)
{
	uint64_t saved = giong_deadline_in(GUARD_MS);
	int r = 0;

	while (!done(arg) && r >= 0)
		r = giong_waitq_wait(&rc->wq, 0);
	giong_deadline_restore(saved);
	return done(arg) ? 0 : r;
}

static bool is_set(const void *flag)
{
	return *(const bool *)flag;
}

/* The receive queue @q has seen the end of its stream (a bit-field). */
static bool at_eof(const void *q)
{
	return ((const struct giong__rxq *)q)->eof;
}

/* The callback closes the stream from inside the end-of-stream completion,
 * the last one of the multishot receive: the receive queue would be freed
 * by the close and again when the completion handler went on. */
static void close_at_eof_main(unsigned w, void *arg)
{
	struct rc *rc = arg;
	struct giong_stream *a, *b;

	(void)w;
	giong_waitq_init(&rc->wq);
	rc->close_it = true;
	if ((rc->setup = giong_unix_pair(&a, &b)))
		return;
	rc->on_ret = giong_stream_on_readable(b, on_readable, rc);
	giong_stream_close(a);
	rc->wait_ret = wait_until(rc, is_set, &rc->closed);
	giong_yield(); /* a tick more with b gone */
}

static void check_closed_once(struct rc *rc)
{
	assert_int_equal(rc->setup, 0);
	assert_int_equal(rc->on_ret, 0);
	assert_int_equal(rc->wait_ret, 0);
	assert_int_equal(rc->calls, 1);
	assert_int_equal(rc->close_ret, 0);
}

static void test_readable_closes_at_eof(void **state)
{
	struct giong_config c = gt_config(1);
	struct rc rc;
	int fds = gt_count_fds();

	(void)state;
	memset(&rc, 0, sizeof(rc));
	gt_run(&c, close_at_eof_main, &rc, NULL);
	check_closed_once(&rc);
	gt_assert_fds(fds);
}

/* The same at a reset: the error completion is the last one too. */
static void close_at_reset_main(unsigned w, void *arg)
{
	struct rc *rc = arg;
	struct giong_listener *l;
	struct giong_stream *s;
	int fd;

	(void)w;
	giong_waitq_init(&rc->wq);
	rc->close_it = true;
	if ((rc->setup = giong_tcp_listen("127.0.0.1:0", NULL, &l)))
		return;
	fd = nt_plain_connect(nt_listener_port(l), 0);
	rc->setup = fd < 0 ? fd : giong_listener_accept(l, &s);
	giong_listener_close(l);
	if (rc->setup) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rc->on_ret = giong_stream_on_readable(s, on_readable, rc);
	gt_close_rst(fd);
	rc->wait_ret = wait_until(rc, is_set, &rc->closed);
	giong_yield();
}

static void test_readable_closes_at_reset(void **state)
{
	struct giong_config c = gt_config(1);
	struct rc rc;
	int fds = gt_count_fds();

	(void)state;
	memset(&rc, 0, sizeof(rc));
	gt_run(&c, close_at_reset_main, &rc, NULL);
	check_closed_once(&rc);
	gt_assert_fds(fds);
}

/* Data and end of stream are queued and the receive is over when the
 * callback is set: it is called from a deferred no-op, and closes there. */
static void close_deferred_main(unsigned w, void *arg)
{
	struct rc *rc = arg;
	struct giong_stream *a, *b;
	struct giong__sock *sb;

	(void)w;
	giong_waitq_init(&rc->wq);
	if ((rc->setup = giong_unix_pair(&a, &b)))
		return;
	sb = giong__net_sock_of(b);
	/* A callback that only counts keeps the receive armed meanwhile. */
	rc->on_ret = giong_stream_on_readable(b, on_readable, rc);
	giong_stream_write_all(a, "hi", 2);
	giong_stream_close(a);
	rc->wait_ret = wait_until(rc, at_eof, &sb->rxq);
	if (rc->wait_ret || rc->on_ret || sb->rxq.armed) {
		rc->setup = -EPROTO; /* not the state this test is about */
		giong_stream_close(b);
		return;
	}
	rc->calls = 0;
	rc->close_it = true;
	rc->on_ret = giong_stream_on_readable(b, on_readable, rc);
	rc->wait_ret = wait_until(rc, is_set, &rc->closed);
	giong_yield();
}

static void test_deferred_readable_closes(void **state)
{
	struct giong_config c = gt_config(1);
	struct rc rc;
	int fds = gt_count_fds();

	(void)state;
	memset(&rc, 0, sizeof(rc));
	gt_run(&c, close_deferred_main, &rc, NULL);
	check_closed_once(&rc);
	gt_assert_fds(fds);
}

/* ----------------------------- a listener closed under a woken acceptor */

struct ae {
	struct giong_listener *l;
	int setup, accept_ret, saw_err, close_ret, parked;
	int dups;
};

static intptr_t acceptor(void *arg)
{
	struct ae *ae = arg;
	struct giong_stream *s = NULL;

	ae->accept_ret = giong_listener_accept(ae->l, &s);
	if (!ae->accept_ret)
		giong_stream_close(s);
	return 0;
}

static void accept_error_main(unsigned w, void *arg)
{
	struct ae *ae = arg;
	struct sockaddr_in sa = {.sin_family = AF_INET};
	struct giong_listen_options lo = {.regular_fds = true};
	struct giong_task *t;
	struct rlimit old, low;
	int fds[256], cfd, n = 0;
	uint64_t end;

	(void)w;
	/* A low descriptor limit, in force before the listener arms its
	 * accept: the kernel takes the limit when the accept is prepared. */
	getrlimit(RLIMIT_NOFILE, &old);
	low = old;
	low.rlim_cur = (rlim_t)gt_count_fds() + 16;
	if (low.rlim_cur > old.rlim_cur)
		low.rlim_cur = old.rlim_cur;
	setrlimit(RLIMIT_NOFILE, &low);
	cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	/* Regular descriptors: a direct accept takes none, and would not fail. */
	ae->setup = cfd < 0 ? -errno : giong_tcp_listen("127.0.0.1:0", &lo, &ae->l);
	if (!ae->setup)
		ae->setup = giong_spawn(acceptor, ae, &t);
	if (ae->setup) {
		setrlimit(RLIMIT_NOFILE, &old);
		return;
	}
	sa.sin_port = htons((uint16_t)nt_listener_port(ae->l));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	end = giong_now_ms() + GUARD_MS;
	while (giong_waitq_empty(&ae->l->waiters) && giong_now_ms() < end)
		giong_yield();
	ae->parked = !giong_waitq_empty(&ae->l->waiters);

	/* Fill the descriptor table: the kernel cannot accept (EMFILE), which
	 * ends the multishot accept and wakes the acceptor with the error. */
	while (n < 256 && (fds[n] = dup(cfd)) >= 0)
		n++;
	ae->dups = n;
	connect(cfd, (struct sockaddr *)&sa, sizeof(sa));

	/* Yield until the error completion was handled: this task was queued
	 * (by the yield) before the acceptor was woken (by that completion),
	 * so it runs first, and closes the listener under the woken
	 * acceptor, before the acceptor looks at it again. */
	while (!ae->l->err && giong_now_ms() < end)
		giong_yield();
	ae->saw_err = ae->l->err;
	ae->close_ret = giong_listener_close(ae->l);
	giong_join(t, NULL);

	while (n > 0)
		close(fds[--n]);
	setrlimit(RLIMIT_NOFILE, &old);
	close(cfd);
}

static void test_listener_closed_under_woken_acceptor(void **state)
{
	struct giong_config c = gt_config(1);
	struct ae ae;
	int fds = gt_count_fds();

	(void)state;
	if (RUNNING_ON_VALGRIND) {
		/* valgrind keeps its own descriptor limit: filling the table it
		 * shows the program does not make the kernel's accept fail. */
		print_message("skipped under valgrind: it virtualises RLIMIT_NOFILE\n");
		skip();
	}
	memset(&ae, 0, sizeof(ae));
	gt_run(&c, accept_error_main, &ae, NULL);
	assert_int_equal(ae.setup, 0);
	assert_true(ae.parked);
	assert_true(ae.dups > 0 && ae.dups < 256);
	assert_int_equal(ae.saw_err, -EMFILE);
	assert_int_equal(ae.close_ret, 0);
	assert_int_equal(ae.accept_ret, -EBADF); /* what tcp.h promises */
	gt_assert_fds(fds);
}

/* ----------------------------------------- calls from the wrong thread */

/* What a caller on the wrong thread got from each entry point, and whether
 * it was handed anything through an out-argument (it must not be). */
struct wrong {
	int s_close, s_recv, s_read, s_write, s_writev, s_write_all, s_send, s_shut, s_onr;
	int s_fd, s_peer, s_local, t_nodelay, s_splice, s_alpn, s_query;
	int l_accept, l_stop, l_close, l_addr, l_pending;
	int u_recv, u_read, u_send_to, u_send, u_connect, u_local, u_close;
	int sent_done; /* the refused send_start's callback ran (never) */
	bool addr_out; /* an address helper wrote into the caller's struct */
};

/* What the same calls give on the owner afterwards: each one still works,
 * and shows that the refused calls changed nothing. */
struct own {
	int nodelay_before, nodelay_ret, nodelay_after; /* TCP_NODELAY as made, set off, read */
	int s_fd, s_peer, s_local, peer_family, local_family;
	int l_addr, l_port, l_pending_before, l_pending_after, l_accept;
	int u_send_before, u_local, u_port, u_connect, u_send_after;
};

struct ot {
	struct giong_stream *a, *b;
	struct giong_stream *tc, *ts; /* a TCP pair, for nodelay and addresses */
	struct giong_listener *l;
	struct giong_udp *u;
	struct giong_addr uaddr;
	char utext[GIONG_ADDR_STRLEN];
	struct giong_chan *ch;
	int setup, parked;
	struct wrong thread, worker;
	struct own own;
	ssize_t parked_recv;
	char parked_byte;
	int close_b, close_l, close_u;
	int workers_seen;
};

static void nop_readable(struct giong_stream *s, void *ctx)
{
	(void)s;
	(void)ctx;
}

static void count_done(struct giong_stream_send *req, ssize_t res)
{
	(void)res;
	(*(int *)req->data)++;
}

/* An address no call may write: any byte changed shows. */
static bool addr_untouched(const struct giong_addr *a)
{
	const unsigned char *p = (const unsigned char *)a;

	for (size_t i = 0; i < sizeof(*a); i++)
		if (p[i] != 0xa5)
			return false;
	return true;
}

/* Every entry point of @o's objects that touches them. */
static void call_all(struct ot *o, struct wrong *r)
{
	struct giong_stream_send req = {.done = count_done, .data = &r->sent_done};
	struct giong_recvbuf *rb = NULL;
	struct giong_stream *s = NULL;
	struct giong_addr a;
	const char *name;
	size_t len;
	char c = 'x';
	struct iovec iov = {&c, 1};

	memset(&a, 0xa5, sizeof(a));
	r->s_close = giong_stream_close(o->b);
	r->s_recv = (int)giong_stream_recv(o->b, &rb);
	r->s_read = (int)giong_stream_read(o->b, &c, 1);
	r->s_write = (int)giong_stream_write(o->b, &c, 1);
	r->s_writev = (int)giong_stream_writev(o->b, &iov, 1);
	r->s_write_all = (int)giong_stream_write_all(o->b, &c, 1);
	r->s_send = giong_stream_send_start(o->b, &req, &iov, 1);
	r->s_shut = giong_stream_shutdown(o->b, SHUT_WR);
	r->s_onr = giong_stream_on_readable(o->b, nop_readable, NULL);
	r->s_fd = giong_stream_fd(o->b);
	r->s_splice = giong_stream_splice_fd(o->b);
	r->s_alpn = giong_stream_alpn(o->b, &name, &len); /* none, but not told off the owner */
	r->s_query = giong_stream_query(o->b, 1000, &c, NULL);
	r->s_peer = giong_stream_peer_addr(o->tc, &a);
	r->s_local = giong_stream_local_addr(o->tc, &a);
	r->t_nodelay = giong_tcp_set_nodelay(o->tc, false);
	r->l_accept = giong_listener_accept(o->l, &s);
	r->l_stop = giong_listener_stop(o->l);
	r->l_close = giong_listener_close(o->l);
	r->l_addr = giong_listener_addr(o->l, &a);
	r->l_pending = giong_listener_pending(o->l);
	r->u_recv = (int)giong_udp_recv(o->u, &rb, NULL);
	r->u_read = (int)giong_udp_read(o->u, &c, 1, NULL);
	r->u_send_to = (int)giong_udp_send_to(o->u, &c, 1, &o->uaddr);
	r->u_send = (int)giong_udp_send(o->u, &c, 1);
	r->u_connect = giong_udp_connect(o->u, o->utext);
	r->u_local = giong_udp_local_addr(o->u, &a);
	r->u_close = giong_udp_close(o->u);
	r->addr_out = !addr_untouched(&a);
}

static void check_all(const struct wrong *r, int want)
{
	assert_int_equal(r->s_close, want);
	assert_int_equal(r->s_recv, want);
	assert_int_equal(r->s_read, want);
	assert_int_equal(r->s_write, want);
	assert_int_equal(r->s_writev, want);
	assert_int_equal(r->s_write_all, want);
	assert_int_equal(r->s_send, want);
	assert_int_equal(r->s_shut, want);
	assert_int_equal(r->s_onr, want);
	assert_int_equal(r->s_fd, want);
	assert_int_equal(r->s_splice, want);
	assert_int_equal(r->s_alpn, want);
	assert_int_equal(r->s_query, want);
	assert_int_equal(r->s_peer, want);
	assert_int_equal(r->s_local, want);
	assert_int_equal(r->t_nodelay, want);
	assert_int_equal(r->l_accept, want);
	assert_int_equal(r->l_stop, want);
	assert_int_equal(r->l_close, want);
	assert_int_equal(r->l_addr, want);
	assert_int_equal(r->l_pending, want);
	assert_int_equal(r->u_recv, want);
	assert_int_equal(r->u_read, want);
	assert_int_equal(r->u_send_to, want);
	assert_int_equal(r->u_send, want);
	assert_int_equal(r->u_connect, want);
	assert_int_equal(r->u_local, want);
	assert_int_equal(r->u_close, want);
	assert_int_equal(r->sent_done, 0);
	assert_false(r->addr_out);
}

static int nodelay_of(struct giong_stream *s)
{
	int v = -1;
	socklen_t len = sizeof(v);

	if (getsockopt(giong_stream_fd(s), IPPROTO_TCP, TCP_NODELAY, &v, &len))
		return -errno;
	return v;
}

/* On the owner, after the refused calls: each works, and nothing changed. */
static void owner_calls(struct ot *o)
{
	struct own *w = &o->own;
	struct giong_stream *s = NULL;
	struct giong_addr a;
	uint64_t end;
	int fd;

	memset(&a, 0, sizeof(a));
	/* As made (connect sets it), not as the foreign call asked. */
	w->nodelay_before = nodelay_of(o->tc);
	w->nodelay_ret = giong_tcp_set_nodelay(o->tc, false);
	w->nodelay_after = nodelay_of(o->tc);
	w->s_fd = giong_stream_fd(o->b);
	w->s_peer = giong_stream_peer_addr(o->tc, &a);
	w->peer_family = a.ss.ss_family;
	w->s_local = giong_stream_local_addr(o->tc, &a);
	w->local_family = a.ss.ss_family;
	w->l_addr = giong_listener_addr(o->l, &a);
	w->l_port = giong_addr_port(&a);
	/* Not stopped: a connection comes in, is counted, and is accepted. */
	w->l_pending_before = giong_listener_pending(o->l);
	fd = nt_plain_connect(w->l_port, 0);
	end = giong_now_ms() + GUARD_MS;
	while (giong_listener_pending(o->l) == 0 && giong_now_ms() < end)
		giong_yield();
	w->l_pending_after = giong_listener_pending(o->l);
	w->l_accept = giong_listener_accept(o->l, &s);
	if (!w->l_accept)
		giong_stream_close(s);
	if (fd >= 0)
		close(fd);
	/* Not connected by the refused connect: a plain send has no peer. */
	w->u_send_before = (int)giong_udp_send(o->u, "x", 1);
	w->u_local = giong_udp_local_addr(o->u, &a);
	w->u_port = giong_addr_port(&a);
	w->u_connect = giong_udp_connect(o->u, o->utext); /* to itself */
	w->u_send_after = (int)giong_udp_send(o->u, "x", 1);
}

static void check_own(const struct ot *o)
{
	const struct own *w = &o->own;

	assert_int_equal(w->nodelay_before, 1);
	assert_int_equal(w->nodelay_ret, 0);
	assert_int_equal(w->nodelay_after, 0);
	assert_true(w->s_fd >= 0);
	assert_int_equal(w->s_peer, 0);
	assert_int_equal(w->peer_family, AF_INET);
	assert_int_equal(w->s_local, 0);
	assert_int_equal(w->local_family, AF_INET);
	assert_int_equal(w->l_addr, 0);
	assert_true(w->l_port > 0);
	assert_int_equal(w->l_pending_before, 0);
	assert_int_equal(w->l_pending_after, 1);
	assert_int_equal(w->l_accept, 0);
	assert_int_equal(w->u_send_before, -EDESTADDRREQ);
	assert_int_equal(w->u_local, 0);
	assert_int_equal(w->u_port, giong_addr_port(&o->uaddr));
	assert_int_equal(w->u_connect, 0);
	assert_int_equal(w->u_send_after, 1);
}

static void *plain_thread(void *arg)
{
	struct ot *o = arg;

	call_all(o, &o->thread);
	return NULL;
}

static intptr_t other_worker(void *arg)
{
	struct ot *o = arg;

	call_all(o, &o->worker);
	giong_chan_send(o->ch, o);
	return 0;
}

static intptr_t parked_reader(void *arg)
{
	struct ot *o = arg;
	struct giong_recvbuf *rb;

	o->parked_recv = giong_stream_recv(o->b, &rb);
	if (o->parked_recv > 0) {
		o->parked_byte = *(const char *)giong_recvbuf_data(rb);
		giong_recvbuf_release(rb);
	}
	return 0;
}

static void wrong_thread_main(unsigned w, void *arg)
{
	struct ot *o = arg;
	struct giong_task *t;
	pthread_t th;
	uint64_t end;
	void *m;

	if (w != 0)
		return; /* worker 1 only hosts other_worker() */
	o->workers_seen = giong_worker_count();
	if ((o->setup = giong_unix_pair(&o->a, &o->b)))
		return;
	if ((o->setup = giong_tcp_listen("127.0.0.1:0", NULL, &o->l)) ||
	    (o->setup = giong_udp_bind("127.0.0.1:0", NULL, &o->u)) ||
	    (o->setup = giong_udp_local_addr(o->u, &o->uaddr)) ||
	    (o->setup = giong_addr_format(&o->uaddr, o->utext, sizeof(o->utext))) < 0 ||
	    (o->setup = nt_tcp_pair(&o->tc, &o->ts)) || (o->setup = giong_chan_new(1, &o->ch)) ||
	    (o->setup = giong_spawn(parked_reader, o, &t)))
		return;
	end = giong_now_ms() + GUARD_MS;
	while (giong_waitq_empty(&giong__net_sock_of(o->b)->rxq.waiters) && giong_now_ms() < end)
		giong_yield();
	o->parked = !giong_waitq_empty(&giong__net_sock_of(o->b)->rxq.waiters);

	/* A plain thread, while this worker waits for it without running
	 * anything: whatever it did would show below. */
	if (pthread_create(&th, NULL, plain_thread, o) == 0)
		pthread_join(th, NULL);
	/* Another worker; this task parks until it is done. */
	if (giong_spawn_on(1, other_worker, o) == 0)
		giong_chan_recv(o->ch, &m);

	/* All still usable: the parked reader gets its byte, the rest each
	 * answer, closes work. */
	giong_stream_write_all(o->a, "z", 1);
	giong_join(t, NULL);
	owner_calls(o);
	giong_stream_close(o->tc);
	giong_stream_close(o->ts);
	o->close_b = giong_stream_close(o->b);
	o->close_l = giong_listener_close(o->l);
	o->close_u = giong_udp_close(o->u);
	giong_stream_close(o->a);
	giong_chan_free(o->ch);
}

static void test_wrong_thread_refused(void **state)
{
	struct giong_config c = gt_config(2);
	struct ot o;
	int fds = gt_count_fds();

	(void)state;
	memset(&o, 0, sizeof(o));
	gt_run(&c, wrong_thread_main, &o, NULL);
	assert_int_equal(o.setup, 0);
	assert_int_equal(o.workers_seen, 2);
	assert_true(o.parked);
	check_all(&o.thread, GIONG_ENOTWORKER);
	check_all(&o.worker, -EPERM);
	check_own(&o);
	assert_int_equal(o.parked_recv, 1);
	assert_int_equal(o.parked_byte, 'z');
	assert_int_equal(o.close_b, 0);
	assert_int_equal(o.close_l, 0);
	assert_int_equal(o.close_u, 0);
	gt_assert_fds(fds);
}

/* ------------------------------------------------------- huge lengths */

#define HUGE_LEN (((size_t)1 << 32) + 8)

struct hl {
	int setup;
	ssize_t read_ret, write_ret;
	long long bad;
};

static void huge_main(unsigned w, void *arg)
{
	struct hl *h = arg;
	struct giong_stream *a, *b;
	unsigned char pat[100];
	char *m;

	(void)w;
	/* Address space only: pages never touched cost nothing, and those
	 * the kernel reads untouched are the zero page. */
	m = mmap(NULL, HUGE_LEN, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED) {
		h->setup = -errno;
		return;
	}
	if ((h->setup = giong_unix_pair(&a, &b))) {
		munmap(m, HUGE_LEN);
		return;
	}
	nt_fill(3, 0, pat, sizeof(pat));
	giong_stream_write_all(a, pat, sizeof(pat));
	/* One-shot receive into the caller's buffer: 4 GiB + 8 is not 8. */
	h->read_ret = giong_stream_read(b, m, HUGE_LEN);
	h->bad = nt_check(3, 0, m, h->read_ret > 0 ? (size_t)h->read_ret : 0);
	/* 4 GiB + 2 is not 2: a short count of what the socket takes. */
	h->write_ret = giong_stream_write(b, m, HUGE_LEN - 6);
	giong_stream_close(a);
	giong_stream_close(b);
	munmap(m, HUGE_LEN);
}

static void test_huge_lengths_not_cut(void **state)
{
	struct giong_config c = gt_config(1);
	struct hl h;
	int fds = gt_count_fds();

	(void)state;
	if (sizeof(size_t) < 8)
		skip();
	memset(&h, 0, sizeof(h));
	gt_run(&c, huge_main, &h, NULL);
	if (h.setup == -ENOMEM)
		skip(); /* no 4 GiB of address space here (ulimit -v) */
	assert_int_equal(h.setup, 0);
	assert_int_equal(h.read_ret, 100);
	assert_int_equal(h.bad, -1);
	assert_true(h.write_ret > 2);
	assert_true(h.write_ret <= INT_MAX);
	gt_assert_fds(fds);
}

/* ------------------------------------------------------ small promises */

struct sp {
	int setup;
	ssize_t w_null0, w_buf0, wa_null0, w_null1;
	int bind_bad, bind_busy;
	void *u_bad, *u_busy;
};

static void write_empty_main(unsigned w, void *arg)
{
	struct sp *p = arg;
	struct giong_stream *a, *b;

	(void)w;
	if ((p->setup = giong_unix_pair(&a, &b)))
		return;
	/* An empty write is done, whatever the buffer, as write_all says. */
	p->w_null0 = giong_stream_write(a, NULL, 0);
	p->w_buf0 = giong_stream_write(a, "x", 0);
	p->wa_null0 = giong_stream_write_all(a, NULL, 0);
	p->w_null1 = giong_stream_write(a, NULL, 1);
	giong_stream_close(a);
	giong_stream_close(b);
}

static void test_write_empty(void **state)
{
	struct giong_config c = gt_config(1);
	struct sp p;
	int fds = gt_count_fds();

	(void)state;
	memset(&p, 0, sizeof(p));
	gt_run(&c, write_empty_main, &p, NULL);
	assert_int_equal(p.setup, 0);
	assert_int_equal(p.w_null0, 0);
	assert_int_equal(p.w_buf0, 0);
	assert_int_equal(p.wa_null0, 0);
	assert_int_equal(p.w_null1, -EINVAL);
	gt_assert_fds(fds);
}

static void bind_fails_main(unsigned w, void *arg)
{
	struct sp *p = arg;
	struct giong_udp *u, *u2;
	struct giong_addr ua;
	char addr[GIONG_ADDR_STRLEN];

	(void)w;
	/* A failed bind leaves NULL, not what the caller's variable held. */
	u2 = (struct giong_udp *)p;
	p->bind_bad = giong_udp_bind("not an address", NULL, &u2);
	p->u_bad = u2;
	if ((p->setup = giong_udp_bind("127.0.0.1:0", NULL, &u)))
		return;
	giong_udp_local_addr(u, &ua);
	giong_addr_format(&ua, addr, sizeof(addr));
	u2 = (struct giong_udp *)p;
	p->bind_busy = giong_udp_bind(addr, NULL, &u2);
	p->u_busy = u2;
	giong_udp_close(u);
}

static void test_udp_bind_failure_clears_ret(void **state)
{
	struct giong_config c = gt_config(1);
	struct sp p;
	int fds = gt_count_fds();

	(void)state;
	memset(&p, 0, sizeof(p));
	gt_run(&c, bind_fails_main, &p, NULL);
	assert_int_equal(p.setup, 0);
	assert_int_equal(p.bind_bad, -EINVAL);
	assert_null(p.u_bad);
	assert_int_equal(p.bind_busy, -EADDRINUSE);
	assert_null(p.u_busy);
	gt_assert_fds(fds);
}

/* The probe for a stale socket file connects to it. A live listener whose
 * backlog is full would hold a blocking connect until it accepts, and the
 * worker with it: the watchdog turns that hang into a failure. */
static void watchdog(int sig)
{
	static const char msg[] = "giong_unix_listen() blocked on a live, full listener\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

struct st {
	char path[100];
	int listen_ret;
};

static void stale_main(unsigned w, void *arg)
{
	struct st *st = arg;
	struct giong_listener *l = NULL;

	(void)w;
	st->listen_ret = giong_unix_listen(st->path, NULL, &l);
	if (!st->listen_ret)
		giong_listener_close(l);
}

static void test_stale_probe_never_blocks(void **state)
{
	struct giong_config c = gt_config(1);
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	char dir[] = "/tmp/giong-stale-XXXXXX";
	struct st st;
	struct stat sb;
	int lfd, cfds[64], n = 0, fds = gt_count_fds();

	(void)state;
	assert_non_null(mkdtemp(dir));
	memset(&st, 0, sizeof(st));
	snprintf(st.path, sizeof(st.path), "%s/live.sock", dir);
	memcpy(un.sun_path, st.path, strlen(st.path) + 1);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&un, sizeof(un)), 0);
	assert_int_equal(listen(lfd, 0), 0);
	/* Fill its backlog: a further connect would wait (EAGAIN here). */
	for (; n < 64; n++) {
		cfds[n] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		assert_true(cfds[n] >= 0);
		if (connect(cfds[n], (struct sockaddr *)&un, sizeof(un))) {
			assert_int_equal(errno, EAGAIN);
			close(cfds[n]);
			break;
		}
	}
	assert_true(n < 64);

	signal(SIGALRM, watchdog);
	alarm(GUARD_MS / 1000);
	gt_run(&c, stale_main, &st, NULL);
	alarm(0);
	signal(SIGALRM, SIG_DFL);

	/* Alive, so in use: refused, and its file left alone. */
	assert_int_equal(st.listen_ret, -EADDRINUSE);
	assert_int_equal(lstat(st.path, &sb), 0);
	assert_true(S_ISSOCK(sb.st_mode));
	while (n > 0)
		close(cfds[--n]);
	close(lfd);
	unlink(st.path);
	rmdir(dir);
	gt_assert_fds(fds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_readable_closes_at_eof),
		cmocka_unit_test(test_readable_closes_at_reset),
		cmocka_unit_test(test_deferred_readable_closes),
		cmocka_unit_test(test_listener_closed_under_woken_acceptor),
		cmocka_unit_test(test_wrong_thread_refused),
		cmocka_unit_test(test_huge_lengths_not_cut),
		cmocka_unit_test(test_write_empty),
		cmocka_unit_test(test_udp_bind_failure_clears_ret),
		cmocka_unit_test(test_stale_probe_never_blocks),
	};

	gt_require_runtime();
	if (getenv("NT_FILTER"))
		cmocka_set_test_filter(getenv("NT_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
