/* SPDX-License-Identifier: MIT */
/*
 * test_stream.c - struct giong_stream beyond plain echo:
 *  - the vtable: kind, fd, writev, shutdown, peer and local addresses;
 *  - cancel safety: recv() and read() under short deadlines while data
 *    trickles in lose no byte; accept() under deadlines loses no
 *    connection; a one-shot read() with a deadline returns the data or
 *    -ETIMEDOUT with nothing taken;
 *  - closing a stream or listener while tasks are parked in it;
 *  - teardown with every kind of operation in flight: the runtime ends,
 *    nothing is leaked, every descriptor is closed.
 * Connections with no fiber on them are in test_idle.c.
 */
#include <semaphore.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "net_test.h"

/* --------------------------------------------------------------- vtable */

struct vt {
	int pair_ret;
	const char *kind_c, *kind_s;
	int fd_c, fd_s;
	int cport_local, sport_peer;
	ssize_t wv, got;
	char buf[32];
	int shut_rd;
	ssize_t eof;
	int onr_remove;
};

static void vt_main(unsigned w, void *arg)
{
	struct vt *v = arg;
	struct giong_stream *c, *s;
	struct giong_addr a;
	struct iovec iov[4] = {{"one ", 4}, {"", 0}, {"two ", 4}, {"three", 5}};

	(void)w;
	v->pair_ret = nt_tcp_pair_as(&c, &s, true); /* descriptors and addresses asked */
	if (v->pair_ret)
		return;
	v->kind_c = giong_stream_kind(c);
	v->kind_s = giong_stream_kind(s);
	v->fd_c = giong_stream_fd(c);
	v->fd_s = giong_stream_fd(s);
	giong_stream_local_addr(c, &a);
	v->cport_local = giong_addr_port(&a);
	giong_stream_peer_addr(s, &a);
	v->sport_peer = giong_addr_port(&a);
	v->wv = giong_stream_writev(c, iov, 4);
	v->got = nt_stream_read_exact(s, v->buf, 13);
	v->onr_remove = giong_stream_on_readable(s, NULL, NULL);
	v->shut_rd = giong_stream_shutdown(c, SHUT_WR);
	v->eof = giong_stream_read(s, v->buf + 13, 4);
	giong_stream_close(c);
	giong_stream_close(s);
}

static void test_vtable(void **state)
{
	struct giong_config c = gt_config(1);
	struct vt v;
	int fds = gt_count_fds();

	(void)state;
	memset(&v, 0, sizeof(v));
	gt_run(&c, vt_main, &v, NULL);
	assert_int_equal(v.pair_ret, 0);
	assert_string_equal(v.kind_c, "tcp");
	assert_string_equal(v.kind_s, "tcp");
	assert_true(v.fd_c >= 0 && v.fd_s >= 0 && v.fd_c != v.fd_s);
	assert_int_equal(v.cport_local, v.sport_peer);
	assert_int_equal(v.wv, 13);
	assert_int_equal(v.got, 13);
	assert_memory_equal(v.buf, "one two three", 13);
	assert_int_equal(v.onr_remove, 0);
	assert_int_equal(v.shut_rd, 0);
	assert_int_equal(v.eof, 0);
	gt_assert_fds(fds);
}

/* ---------------------------------- recv/read under deadlines lose nothing */

#define TRICKLE_BYTES (200u << 10)

struct trickle {
	sem_t ready;
	int port;
	long long sent;
	/* receiver */
	int accept_ret;
	long long got, bad;
	ssize_t end;
	int timeouts, recvs, reads;
	int other_err;
};

/* A plain thread sending a numbered stream in odd-sized pieces at odd
 * moments, so data lands before, during and after the receiver's timeouts. */
static void *trickle_sender(void *arg)
{
	struct trickle *t = arg;
	char buf[5000];
	unsigned seed = 12345;
	int fd;

	sem_wait(&t->ready);
	if (t->port <= 0)
		return NULL;
	fd = nt_plain_connect(t->port, 0);
	if (fd < 0)
		return NULL;
	while (t->sent < TRICKLE_BYTES) {
		size_t n = 1 + rand_r(&seed) % sizeof(buf);

		if (n > TRICKLE_BYTES - (size_t)t->sent)
			n = TRICKLE_BYTES - (size_t)t->sent;
		nt_fill(21, (uint64_t)t->sent, buf, n);
		if (gt_write_all(fd, buf, n) != (ssize_t)n)
			break;
		t->sent += (long long)n;
		usleep(rand_r(&seed) % 6000);
	}
	close(fd);
	return NULL;
}

static void trickle_main(unsigned w, void *arg)
{
	struct trickle *t = arg;
	struct giong_listener *l;
	struct giong_stream *s;
	char buf[3000];
	unsigned i = 0;

	(void)w;
	t->bad = -1;
	if (giong_tcp_listen("127.0.0.1:0", NULL, &l)) {
		t->accept_ret = -999;
		sem_post(&t->ready);
		return;
	}
	t->port = nt_listener_port(l);
	sem_post(&t->ready);
	t->accept_ret = giong_tcp_accept(l, &s);
	giong_listener_close(l);
	if (t->accept_ret)
		return;
	for (;; i++) {
		uint64_t saved = giong_deadline_in(1 + i % 2);
		struct giong_recvbuf *b = NULL;
		const void *data = buf;
		ssize_t n;

		/* Mix recv() and read() (a read on an armed stream takes from
		 * the same queue). */
		if (i % 3 == 2) {
			n = giong_stream_read(s, buf, 1 + i % sizeof(buf));
			t->reads++;
		} else {
			n = giong_stream_recv(s, &b);
			data = giong_recvbuf_data(b);
			t->recvs++;
		}
		giong_deadline_restore(saved);
		if (n == -ETIMEDOUT) {
			t->timeouts++;
			continue;
		}
		if (n <= 0) {
			t->end = n;
			if (n < 0)
				t->other_err = (int)n;
			break;
		}
		if (t->bad < 0)
			t->bad = nt_check(21, (uint64_t)t->got, data, (size_t)n);
		t->got += n;
		giong_recvbuf_release(b);
	}
	giong_stream_close(s);
}

static void test_recv_deadline_loses_nothing(void **state)
{
	struct giong_config c = gt_config(1);
	struct trickle t;
	pthread_t th;
	int fds = gt_count_fds();

	(void)state;
	memset(&t, 0, sizeof(t));
	sem_init(&t.ready, 0, 0);
	pthread_create(&th, NULL, trickle_sender, &t);
	gt_run(&c, trickle_main, &t, NULL);
	pthread_join(th, NULL);
	sem_destroy(&t.ready);
	print_message("%lld bytes, %d timeouts in %d recv and %d read calls\n", t.got, t.timeouts,
		      t.recvs, t.reads);
	assert_int_equal(t.accept_ret, 0);
	assert_int_equal(t.sent, TRICKLE_BYTES);
	assert_int_equal(t.other_err, 0);
	assert_int_equal(t.end, 0);
	assert_int_equal(t.got, TRICKLE_BYTES); /* every byte once */
	assert_int_equal(t.bad, -1);            /* and in order */
	assert_true(t.timeouts >= 20);          /* around many timeouts */
	gt_assert_fds(fds);
}

/* ------------------------------------------ accept under deadlines */

#define ACC_CLIENTS 60

struct accdl {
	sem_t ready, done;
	int port;
	int fds[ACC_CLIENTS];
	int connect_err;
	int accepted, ids_ok, timeouts, other_err;
	unsigned char seen[ACC_CLIENTS];
};

static void *accdl_clients(void *arg)
{
	struct accdl *a = arg;
	unsigned seed = 777;

	sem_wait(&a->ready);
	for (int i = 0; i < ACC_CLIENTS; i++) {
		unsigned char id = (unsigned char)i;

		a->fds[i] = a->port > 0 ? nt_plain_connect(a->port, 0) : -1;
		if (a->fds[i] < 0 || write(a->fds[i], &id, 1) != 1)
			a->connect_err++;
		usleep(rand_r(&seed) % 3000);
		if (i % 10 == 9)
			usleep(15000); /* a lull: the acceptor surely times out */
	}
	sem_wait(&a->done); /* keep them open until the acceptor is through */
	for (int i = 0; i < ACC_CLIENTS; i++)
		if (a->fds[i] >= 0)
			close(a->fds[i]);
	return NULL;
}

static void accdl_main(unsigned w, void *arg)
{
	struct accdl *a = arg;
	struct giong_listener *l;
	uint64_t end;

	(void)w;
	if (giong_tcp_listen("127.0.0.1:0", NULL, &l)) {
		a->other_err = -999;
		sem_post(&a->ready);
		sem_post(&a->done);
		return;
	}
	a->port = nt_listener_port(l);
	sem_post(&a->ready);
	end = giong_now_ms() + 10000;
	while (a->accepted < ACC_CLIENTS && giong_now_ms() < end) {
		struct giong_stream *s;
		uint64_t saved = giong_deadline_in(1);
		int r = giong_tcp_accept(l, &s);
		unsigned char id;

		giong_deadline_restore(saved);
		if (r == -ETIMEDOUT) {
			a->timeouts++;
			continue;
		}
		if (r) {
			a->other_err = r;
			break;
		}
		a->accepted++;
		saved = giong_deadline_in(2000);
		if (giong_stream_read(s, &id, 1) == 1 && id < ACC_CLIENTS && !a->seen[id]) {
			a->seen[id] = 1;
			a->ids_ok++;
		}
		giong_deadline_restore(saved);
		giong_stream_close(s);
	}
	giong_listener_close(l);
	sem_post(&a->done);
}

static void test_accept_deadline_loses_nothing(void **state)
{
	struct giong_config c = gt_config(1);
	struct accdl a;
	pthread_t th;
	int fds = gt_count_fds();

	(void)state;
	memset(&a, 0, sizeof(a));
	sem_init(&a.ready, 0, 0);
	sem_init(&a.done, 0, 0);
	pthread_create(&th, NULL, accdl_clients, &a);
	gt_run(&c, accdl_main, &a, NULL);
	pthread_join(th, NULL);
	sem_destroy(&a.ready);
	sem_destroy(&a.done);
	print_message("%d accepted around %d timeouts\n", a.accepted, a.timeouts);
	assert_int_equal(a.connect_err, 0);
	assert_int_equal(a.other_err, 0);
	assert_int_equal(a.accepted, ACC_CLIENTS);
	assert_int_equal(a.ids_ok, ACC_CLIENTS);
	assert_true(a.timeouts >= 10);
	gt_assert_fds(fds);
}

/* --------------------------------------- one-shot read() under deadlines */

#define ONESHOT_BYTES 300

struct oneshot {
	sem_t ready;
	int port;
	int sent;
	int accept_ret;
	ssize_t first_timeout, after_write;
	char after_buf[8];
	int got, bad, timeouts, other_err;
	ssize_t end;
	uint32_t free_min, total;
};

static void *oneshot_sender(void *arg)
{
	struct oneshot *o = arg;
	unsigned seed = 99;
	int fd;

	sem_wait(&o->ready);
	if (o->port <= 0)
		return NULL;
	fd = nt_plain_connect(o->port, 0);
	if (fd < 0)
		return NULL;
	/* First: nothing for a while (the reader times out), then "abc". */
	sem_wait(&o->ready);
	if (write(fd, "abc", 3) != 3)
		goto out;
	sem_wait(&o->ready);
	/* Then a byte at a time at odd moments. */
	for (; o->sent < ONESHOT_BYTES; o->sent++) {
		unsigned char b = nt_pat(31, (uint64_t)o->sent);

		if (write(fd, &b, 1) != 1)
			break;
		usleep(rand_r(&seed) % 4000);
	}
out:
	close(fd);
	return NULL;
}

static void oneshot_main(unsigned w, void *arg)
{
	struct oneshot *o = arg;
	struct giong_listener *l;
	struct giong_stream *s;
	struct giong_stats st;
	unsigned char buf[16];
	uint64_t saved;
	unsigned i = 0;

	(void)w;
	if (giong_tcp_listen("127.0.0.1:0", NULL, &l)) {
		o->accept_ret = -999;
		for (int k = 0; k < 3; k++)
			sem_post(&o->ready);
		return;
	}
	o->port = nt_listener_port(l);
	sem_post(&o->ready);
	o->accept_ret = giong_tcp_accept(l, &s);
	giong_listener_close(l);
	if (o->accept_ret) {
		sem_post(&o->ready);
		sem_post(&o->ready);
		return;
	}
	giong_stats(&st);
	o->free_min = st.recvbufs_free;
	o->total = st.recvbufs_total;
	/* Nothing there: -ETIMEDOUT, and nothing taken... */
	saved = giong_deadline_in(5);
	o->first_timeout = giong_stream_read(s, buf, sizeof(buf));
	giong_deadline_restore(saved);
	sem_post(&o->ready);
	/* ...so the next read gets the bytes sent after it. */
	saved = giong_deadline_in(2000);
	o->after_write = nt_stream_read_exact(s, o->after_buf, 3);
	giong_deadline_restore(saved);
	sem_post(&o->ready);
	o->bad = -1;
	for (;; i++) {
		ssize_t n;

		saved = giong_deadline_in(1);
		n = giong_stream_read(s, buf, 1 + i % sizeof(buf));
		giong_deadline_restore(saved);
		giong_stats(&st);
		if (st.recvbufs_free < o->free_min)
			o->free_min = st.recvbufs_free;
		if (n == -ETIMEDOUT) {
			o->timeouts++;
			continue;
		}
		if (n <= 0) {
			o->end = n;
			if (n < 0)
				o->other_err = (int)n;
			break;
		}
		if (o->bad < 0 && nt_check(31, (uint64_t)o->got, buf, (size_t)n) >= 0)
			o->bad = o->got;
		o->got += (int)n;
	}
	giong_stream_close(s);
}

static void test_oneshot_read_deadline(void **state)
{
	struct giong_config c = gt_config(1);
	struct oneshot o;
	pthread_t th;
	int fds = gt_count_fds();

	(void)state;
	memset(&o, 0, sizeof(o));
	sem_init(&o.ready, 0, 0);
	pthread_create(&th, NULL, oneshot_sender, &o);
	gt_run(&c, oneshot_main, &o, NULL);
	pthread_join(th, NULL);
	sem_destroy(&o.ready);
	print_message("%d bytes one at a time around %d timeouts\n", o.got, o.timeouts);
	assert_int_equal(o.accept_ret, 0);
	assert_int_equal(o.first_timeout, -ETIMEDOUT);
	assert_int_equal(o.after_write, 3);
	assert_memory_equal(o.after_buf, "abc", 3);
	assert_int_equal(o.sent, ONESHOT_BYTES);
	assert_int_equal(o.other_err, 0);
	assert_int_equal(o.end, 0);
	assert_int_equal(o.got, ONESHOT_BYTES);
	assert_int_equal(o.bad, -1);
	assert_true(o.timeouts >= 20);
	/* A stream only ever read() never takes a pool buffer. */
	assert_int_equal(o.free_min, o.total);
	gt_assert_fds(fds);
}

/* ------------------------------------- closing what tasks are parked in */

struct parked {
	struct giong_stream *s;
	struct giong_listener *l;
	int kind; /* 0 recv, 1 read (one-shot), 2 write, 3 accept */
	ssize_t ret;
	int done;
};

static intptr_t parked_task(void *arg)
{
	struct parked *p = arg;
	struct giong_recvbuf *b = NULL;
	struct giong_stream *s;
	char buf[64];
	char *big;

	switch (p->kind) {
	case 0:
		p->ret = giong_stream_recv(p->s, &b);
		giong_recvbuf_release(b);
		break;
	case 1:
		p->ret = giong_stream_read(p->s, buf, sizeof(buf));
		break;
	case 2:
		big = malloc(32u << 20);
		if (big) {
			memset(big, 'w', 32u << 20);
			p->ret = giong_stream_write_all(p->s, big, 32u << 20);
			free(big);
		}
		break;
	case 3:
		p->ret = giong_listener_accept(p->l, &s);
		if (p->ret == 0)
			giong_stream_close(s);
		break;
	}
	p->done = 1;
	return 0;
}

struct closepark {
	int setup_err;
	struct parked p[4];
	int done_before_close;
};

static void closepark_main(unsigned w, void *arg)
{
	struct closepark *cp = arg;
	struct giong_stream *c1, *s1, *c2, *s2, *c3, *s3;
	struct giong_listener *l;
	struct giong_task *t[4];

	(void)w;
	if (nt_tcp_pair(&c1, &s1) || nt_tcp_pair(&c2, &s2) || nt_tcp_pair(&c3, &s3) ||
	    giong_tcp_listen("127.0.0.1:0", NULL, &l)) {
		cp->setup_err = 1;
		return;
	}
	cp->p[0] = (struct parked){.s = s1, .kind = 0};
	cp->p[1] = (struct parked){.s = s2, .kind = 1};
	cp->p[2] = (struct parked){.s = c3, .kind = 2}; /* s3 never reads */
	cp->p[3] = (struct parked){.l = l, .kind = 3};
	for (int i = 0; i < 4; i++)
		giong_spawn(parked_task, &cp->p[i], &t[i]);
	giong_sleep_ms(30);
	for (int i = 0; i < 4; i++)
		cp->done_before_close += cp->p[i].done;
	/* Close everything under the parked tasks. */
	giong_stream_close(s1);
	giong_stream_close(s2);
	giong_stream_close(c3);
	giong_listener_close(l);
	for (int i = 0; i < 4; i++)
		giong_join(t[i], NULL);
	giong_stream_close(c1);
	giong_stream_close(c2);
	giong_stream_close(s3);
}

static void test_close_under_parked_tasks(void **state)
{
	struct giong_config c = gt_config(1);
	struct closepark cp;
	struct giong_stats st;
	int fds = gt_count_fds();

	(void)state;
	memset(&cp, 0, sizeof(cp));
	gt_run(&c, closepark_main, &cp, &st);
	assert_int_equal(cp.setup_err, 0);
	assert_int_equal(cp.done_before_close, 0); /* all four were parked */
	for (int i = 0; i < 4; i++) {
		print_message("kind %d returned %zd (%s)\n", cp.p[i].kind, cp.p[i].ret,
			      giong_err_name((int)cp.p[i].ret));
		assert_true(cp.p[i].done);
		assert_true(cp.p[i].ret == -EBADF || cp.p[i].ret == -ECANCELED);
	}
	assert_int_equal(st.ops_live, 0);
	assert_int_equal(st.ops_leaked, 0);
	gt_assert_fds(fds);
}

/* ----------------------------- teardown with every operation in flight */

struct teardown {
	int setup_err;
	int full_port;
	struct parked p[4];
	struct giong_stream *peer[4]; /* the other ends, closed by each task */
	struct giong_stream *shut_s, *shut_peer;
	ssize_t connect_ret, shutdown_ret, after_shutdown_ret;
	int connect_done, shutdown_done;
	int parked_before_end;
};

static intptr_t td_connect(void *arg)
{
	struct teardown *td = arg;
	struct giong_stream *s;
	char addr[64];

	snprintf(addr, sizeof(addr), "127.0.0.1:%d", td->full_port);
	td->connect_ret = giong_tcp_connect(addr, &s);
	if (td->connect_ret == 0)
		giong_stream_close(s);
	td->connect_done = 1;
	return 0;
}

static intptr_t td_shutdown(void *arg)
{
	struct teardown *td = arg;
	struct giong_recvbuf *b = NULL;

	td->shutdown_ret = giong_stream_shutdown(td->shut_s, SHUT_WR);
	td->after_shutdown_ret = giong_stream_recv(td->shut_s, &b); /* parks */
	giong_recvbuf_release(b);
	giong_stream_close(td->shut_s);
	giong_stream_close(td->shut_peer);
	td->shutdown_done = 1;
	return 0;
}

struct td_arg {
	struct parked *p;
	struct giong_stream *peer;
};

/* Like parked_task, but once woken the task closes what it used and its
 * peer (closing the peer earlier would end the parked calls with EOF). */
static intptr_t td_task(void *arg)
{
	struct td_arg *a = arg;

	parked_task(a->p);
	if (a->p->s)
		giong_stream_close(a->p->s);
	if (a->p->l)
		giong_listener_close(a->p->l);
	if (a->peer)
		giong_stream_close(a->peer);
	return 0;
}

static struct td_arg td_args[4];

static void teardown_main(unsigned w, void *arg)
{
	struct teardown *td = arg;
	struct giong_stream *c1, *s1, *c2, *s2, *c3, *s3, *c4, *s4;
	struct giong_listener *l;

	(void)w;
	if (nt_tcp_pair(&c1, &s1) || nt_tcp_pair(&c2, &s2) || nt_tcp_pair(&c3, &s3) ||
	    nt_tcp_pair(&c4, &s4) || giong_tcp_listen("127.0.0.1:0", NULL, &l)) {
		td->setup_err = 1;
		return;
	}
	td->p[0] = (struct parked){.s = s1, .kind = 0}; /* recv */
	td->p[1] = (struct parked){.s = s2, .kind = 1}; /* one-shot read */
	td->p[2] = (struct parked){.s = c3, .kind = 2}; /* write; s3 never reads */
	td->p[3] = (struct parked){.l = l, .kind = 3};  /* accept */
	td_args[0] = (struct td_arg){&td->p[0], c1};
	td_args[1] = (struct td_arg){&td->p[1], c2};
	td_args[2] = (struct td_arg){&td->p[2], s3};
	td_args[3] = (struct td_arg){&td->p[3], NULL};
	for (int i = 0; i < 4; i++)
		giong_spawn(td_task, &td_args[i], NULL);
	giong_spawn(td_connect, td, NULL); /* connect to a full backlog */
	td->shut_s = s4;
	td->shut_peer = c4;
	giong_spawn(td_shutdown, td, NULL); /* shutdown, then recv */
	giong_sleep_ms(50);
	td->parked_before_end = !td->connect_done + !td->shutdown_done;
	for (int i = 0; i < 4; i++)
		td->parked_before_end += !td->p[i].done;
	/* main returns with everything parked; the grace is short. */
}

static void test_teardown_everything_in_flight(void **state)
{
	struct giong_config c = gt_config(1);
	struct teardown td;
	struct giong_stats st;
	int full, fill[3], fds = gt_count_fds();

	(void)state;
	memset(&td, 0, sizeof(td));
	/* A listener nobody accepts on, its backlog full: connect parks (SYNs
	 * are dropped and retried) rather than failing. */
	full = nt_plain_bind(0, 0, &td.full_port);
	assert_true(full >= 0);
	for (int i = 0; i < 3; i++)
		fill[i] = nt_plain_connect(td.full_port, 1);
	usleep(20000);
	c.shutdown_grace_ms = 100;
	gt_run(&c, teardown_main, &td, &st);
	for (int i = 0; i < 3; i++)
		if (fill[i] >= 0)
			close(fill[i]);
	close(full);
	assert_int_equal(td.setup_err, 0);
	assert_int_equal(td.parked_before_end, 6); /* all six still parked */
	for (int i = 0; i < 4; i++) {
		print_message("kind %d returned %zd (%s)\n", td.p[i].kind, td.p[i].ret,
			      giong_err_name((int)td.p[i].ret));
		assert_true(td.p[i].done);
		assert_int_equal(td.p[i].ret, -ECANCELED);
	}
	assert_true(td.connect_done);
	assert_int_equal(td.connect_ret, -ECANCELED);
	assert_true(td.shutdown_done);
	assert_int_equal(td.shutdown_ret, 0);
	assert_int_equal(td.after_shutdown_ret, -ECANCELED);
	assert_int_equal(st.fibers_live, 0);
	assert_int_equal(st.ops_live, 0);
	assert_int_equal(st.ops_leaked, 0);
	gt_assert_fds(fds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vtable),
		cmocka_unit_test(test_recv_deadline_loses_nothing),
		cmocka_unit_test(test_accept_deadline_loses_nothing),
		cmocka_unit_test(test_oneshot_read_deadline),
		cmocka_unit_test(test_close_under_parked_tasks),
		cmocka_unit_test(test_teardown_everything_in_flight),
	};

	gt_require_runtime();
	if (getenv("NT_FILTER"))
		cmocka_set_test_filter(getenv("NT_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
