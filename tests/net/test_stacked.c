/* SPDX-License-Identifier: MIT */
/*
 * test_stacked.c - streams stacked on streams (the contract TLS is written
 * to, see Stacking in <giong/net/stream.h>), with a toy "cipher" defined
 * here: an XOR stream over another stream that hands out heap recvbufs
 * (giong_recvbuf_alloc/tail/commit) and holds read-ahead ciphertext in a
 * pool buffer it gives back when the pool runs dry (giong_bufpool_dry).
 *  - bytes go through the stack both ways, decrypted into heap buffers;
 *  - closing the upper closes the lower (the descriptor really goes, the
 *    peer reads end of stream), three levels deep too;
 *  - giong_stream_keep_lower() leaves the lower open and usable, also from
 *    the middle of a stack;
 *  - fd, peer and local address and TCP_NODELAY through the upper reach the
 *    socket;
 *  - a dry pool calls the stream's holder, which copies its ciphertext off;
 *  - bad arguments and bad stacks give -EINVAL/-ENOTSUP/-ELOOP, never a
 *    crash, and a failing close leaves the stack as it was;
 *  - giong_recvbuf_alloc/tail/commit at their edges;
 *  - giong_stream_query() down a stack: a layer that answers (ALPN, a
 *    question of its own), one that passes down on purpose (the splice
 *    descriptor) or by silence (the socket), one that answers "none", a
 *    silent layer that may change bytes (no splice descriptor through it),
 *    a table from before query (fd), bad arguments and loops.
 * Results are recorded inside tasks and asserted after the runtime returns.
 */
#include "net_test.h"

/* ------------------------------------------------------ the XOR stream */

struct xs {
	struct giong_stream base; /* first */
	unsigned char key;
	struct giong_recvbuf *ahead; /* ciphertext read ahead (a pool buffer, as TLS holds) */
	struct giong_recvbuf *plain; /* plaintext left over by read() */
	struct giong_bufpool_dry dry;
	int dry_calls;
	int *closes; /* counts this stream's closes for the test */
};

static void xs_dry(struct giong_bufpool_dry *d)
{
	struct xs *x = (struct xs *)(void *)((char *)d - offsetof(struct xs, dry));

	x->dry_calls++;
	if (x->ahead && giong_bufpool_is_pooled(x->ahead))
		giong_recvbuf_copy(&x->ahead); /* keeps the pool buffer on -ENOMEM */
}

static struct xs *to_xs(struct giong_stream *s)
{
	return (struct xs *)(void *)s;
}

/* Decrypt @b (owned, released here) into a new heap buffer. */
static ssize_t xs_decrypt(struct xs *x, struct giong_recvbuf *b, struct giong_recvbuf **ret)
{
	size_t len = giong_recvbuf_len(b), room;
	const unsigned char *in = giong_recvbuf_data(b);
	struct giong_recvbuf *out;
	unsigned char *p;
	int r;

	r = giong_recvbuf_alloc(len, &out);
	if (r) {
		giong_recvbuf_release(b);
		return r;
	}
	p = giong_recvbuf_tail(out, &room);
	if (!p || room != len) {
		giong_recvbuf_release(out);
		giong_recvbuf_release(b);
		return -EIO;
	}
	for (size_t i = 0; i < len; i++)
		p[i] = in[i] ^ x->key;
	giong_recvbuf_release(b);
	if (giong_recvbuf_commit(out, len) != (long)len) {
		giong_recvbuf_release(out);
		return -EIO;
	}
	*ret = out;
	return (ssize_t)len;
}

static ssize_t xs_recv(struct giong_stream *s, struct giong_recvbuf **ret)
{
	struct xs *x = to_xs(s);
	struct giong_recvbuf *b;
	ssize_t n;

	*ret = NULL;
	if (x->plain) {
		*ret = x->plain;
		x->plain = NULL;
		return (ssize_t)giong_recvbuf_len(*ret);
	}
	b = x->ahead;
	x->ahead = NULL;
	if (!b) {
		n = giong_stream_recv(s->lower, &b);
		if (n <= 0)
			return n;
	}
	return xs_decrypt(x, b, ret);
}

static ssize_t xs_read(struct giong_stream *s, void *buf, size_t len)
{
	struct xs *x = to_xs(s);
	struct giong_recvbuf *b;
	ssize_t n = xs_recv(s, &b);
	size_t take;

	if (n <= 0)
		return n;
	take = (size_t)n < len ? (size_t)n : len;
	memcpy(buf, giong_recvbuf_data(b), take);
	if (giong_recvbuf_consume(b, take) > 0)
		x->plain = b;
	else
		giong_recvbuf_release(b);
	return (ssize_t)take;
}

static ssize_t xs_writev(struct giong_stream *s, const struct iovec *iov, int n, unsigned flags)
{
	struct xs *x = to_xs(s);
	size_t total = 0, off = 0;
	unsigned char *tmp;
	ssize_t r;

	for (int i = 0; i < n; i++)
		total += iov[i].iov_len;
	tmp = malloc(total ? total : 1);
	if (!tmp)
		return -ENOMEM;
	for (int i = 0; i < n; i++)
		for (size_t k = 0; k < iov[i].iov_len; k++)
			tmp[off++] = ((const unsigned char *)iov[i].iov_base)[k] ^ x->key;
	r = (flags & GIONG_WRITE_ALL) ? giong_stream_write_all(s->lower, tmp, total)
				      : giong_stream_write(s->lower, tmp, total);
	free(tmp);
	return r;
}

static int xs_shutdown(struct giong_stream *s, int how)
{
	return giong_stream_shutdown(s->lower, how);
}

static int xs_close(struct giong_stream *s)
{
	struct xs *x = to_xs(s);

	giong_bufpool_dry_remove(&x->dry);
	giong_recvbuf_release(x->ahead);
	giong_recvbuf_release(x->plain);
	if (x->closes)
		(*x->closes)++;
	free(x);
	return 0; /* s->lower is giong_stream_close()'s to close */
}

/* No fd and no on_readable: giong_stream_fd() and friends go to lower. */
static const struct giong_stream_ops xs_ops = {
	.name = "xor",
	.recv = xs_recv,
	.read = xs_read,
	.writev = xs_writev,
	.shutdown = xs_shutdown,
	.close = xs_close,
};

static struct xs *xs_new(struct giong_stream *lower, unsigned char key, int *closes)
{
	struct xs *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	x->base.ops = &xs_ops;
	x->base.lower = lower;
	x->key = key;
	x->closes = closes;
	x->dry.fn = xs_dry;
	if (giong_bufpool_dry_add(&x->dry)) {
		free(x);
		return NULL;
	}
	return x;
}

/* Take ciphertext from lower and hold it (a TLS record read ahead). */
static ssize_t xs_read_ahead(struct xs *x)
{
	return x->ahead ? 0 : giong_stream_recv(x->base.lower, &x->ahead);
}

static void xor_buf(unsigned char *p, size_t n, unsigned char key)
{
	for (size_t i = 0; i < n; i++)
		p[i] ^= key;
}

/* A read of @c that gives up after 2 s (a lower left open never ends). */
static ssize_t read_end(struct giong_stream *c)
{
	uint64_t saved = giong_deadline_in(2000);
	char tmp[8];
	ssize_t n = giong_stream_read(c, tmp, sizeof(tmp));

	giong_deadline_restore(saved);
	return n;
}

static int nodelay_of(int fd)
{
	int v = -1;
	socklen_t l = sizeof(v);

	if (getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &l))
		return -errno;
	return v != 0;
}

/* ------------------------------- (a) through the stack, and close of it */

#define MSG 3000

struct thru {
	int setup;
	ssize_t got, wrote, back;
	long long bad, bad_back;
	int pooled_seen, read_ret;
	char read_buf[8];
	const char *kind;
	int fd_x, fd_s, fd_x2;
	int peer_x, peer_c_local, local_x, local_s_port, peer_fam;
	int nd_off, nd_off_seen, nd_on, nd_on_seen;
	int fds_open, fds_closed, close_ret, closes;
	ssize_t eof;
	int close3_ret, closes3;
	ssize_t eof3;
};

static void thru_main(unsigned w, void *arg)
{
	struct thru *t = arg;
	struct giong_stream *c, *s;
	struct giong_recvbuf *b;
	struct giong_addr a;
	unsigned char *buf = malloc(MSG), tmp[8];
	struct xs *x, *x2;
	size_t done = 0;

	(void)w;
	t->bad = t->bad_back = -1;
	/* Regular: the descriptor and the peer are asked through the stack. */
	if (!buf || nt_tcp_pair_as(&c, &s, true) || !(x = xs_new(s, 0x5a, &t->closes))) {
		t->setup = 1;
		free(buf);
		return;
	}
	/* The client speaks ciphertext on the raw socket. */
	nt_fill(7, 0, buf, MSG);
	xor_buf(buf, MSG, 0x5a);
	giong_stream_write_all(c, buf, MSG);
	while (done < MSG) {
		ssize_t n = giong_stream_recv(&x->base, &b);

		if (n <= 0) {
			t->got = n;
			break;
		}
		t->pooled_seen |= giong_bufpool_is_pooled(b);
		if (t->bad < 0)
			t->bad = nt_check(7, done, giong_recvbuf_data(b), (size_t)n);
		done += (size_t)n;
		giong_recvbuf_release(b);
	}
	if (done == MSG)
		t->got = (ssize_t)done;
	/* read() through the stack, in small pieces. */
	memcpy(tmp, "stacked!", 8);
	xor_buf(tmp, 8, 0x5a);
	giong_stream_write_all(c, tmp, 8);
	t->read_ret = (int)nt_stream_read_exact(&x->base, t->read_buf, 8);
	/* Back the other way. */
	nt_fill(8, 0, buf, MSG);
	t->wrote = giong_stream_write_all(&x->base, buf, MSG);
	t->back = nt_stream_read_exact(c, buf, MSG);
	if (t->back == MSG) {
		xor_buf(buf, MSG, 0x5a);
		t->bad_back = nt_check(8, 0, buf, MSG);
	}
	/* Questions about the connection reach the socket. */
	t->kind = giong_stream_kind(&x->base);
	t->fd_x = giong_stream_fd(&x->base);
	t->fd_s = giong_stream_fd(s);
	t->peer_x = giong_stream_peer_addr(&x->base, &a) ? -1 : giong_addr_port(&a);
	t->peer_fam = a.ss.ss_family;
	t->peer_c_local = giong_stream_local_addr(c, &a) ? -2 : giong_addr_port(&a);
	t->local_x = giong_stream_local_addr(&x->base, &a) ? -1 : giong_addr_port(&a);
	t->local_s_port = giong_stream_local_addr(s, &a) ? -2 : giong_addr_port(&a);
	t->nd_off = giong_tcp_set_nodelay(&x->base, false);
	t->nd_off_seen = nodelay_of(t->fd_s);
	t->nd_on = giong_tcp_set_nodelay(&x->base, true);
	t->nd_on_seen = nodelay_of(t->fd_s);
	/* Close the upper: the lower goes too, descriptor and all. */
	t->fds_open = gt_count_fds();
	t->close_ret = giong_stream_close(&x->base);
	t->eof = read_end(c);
	t->fds_closed = gt_count_fds();
	giong_stream_close(c);

	/* Three deep: xor over xor over TCP, closed from the top. */
	if (nt_tcp_pair(&c, &s) || !(x = xs_new(s, 0x11, &t->closes3)) ||
	    !(x2 = xs_new(&x->base, 0x22, &t->closes3))) {
		t->setup = 2;
		free(buf);
		return;
	}
	t->fd_x2 = giong_stream_fd(&x2->base) == giong_stream_fd(s);
	t->close3_ret = giong_stream_close(&x2->base);
	t->eof3 = read_end(c);
	giong_stream_close(c);
	free(buf);
}

static void test_through_and_close(void **state)
{
	struct giong_config cfg = gt_config(1);
	struct thru t;
	int fds = gt_count_fds();

	(void)state;
	memset(&t, 0, sizeof(t));
	gt_run(&cfg, thru_main, &t, NULL);
	assert_int_equal(t.setup, 0);
	assert_int_equal(t.got, MSG);
	assert_int_equal(t.bad, -1);
	assert_int_equal(t.pooled_seen, 0); /* the upper hands out heap buffers */
	assert_int_equal(t.read_ret, 8);
	assert_memory_equal(t.read_buf, "stacked!", 8);
	assert_int_equal(t.wrote, MSG);
	assert_int_equal(t.back, MSG);
	assert_int_equal(t.bad_back, -1);
	assert_string_equal(t.kind, "xor");
	assert_true(t.fd_s >= 0);
	assert_int_equal(t.fd_x, t.fd_s);
	assert_int_equal(t.peer_fam, AF_INET);
	assert_true(t.peer_x > 0);
	assert_int_equal(t.peer_x, t.peer_c_local); /* the client's address */
	assert_true(t.local_x > 0);
	assert_int_equal(t.local_x, t.local_s_port);
	assert_int_equal(t.nd_off, 0);
	assert_int_equal(t.nd_off_seen, 0);
	assert_int_equal(t.nd_on, 0);
	assert_int_equal(t.nd_on_seen, 1);
	assert_int_equal(t.close_ret, 0);
	assert_int_equal(t.closes, 1);
	assert_int_equal(t.eof, 0);                     /* the peer saw the end */
	assert_int_equal(t.fds_closed, t.fds_open - 1); /* the socket is gone */
	assert_int_equal(t.fd_x2, 1);
	assert_int_equal(t.close3_ret, 0);
	assert_int_equal(t.closes3, 2);
	assert_int_equal(t.eof3, 0);
	gt_assert_fds(fds);
}

/* ------------------------------------------------ (b) keeping the lower */

struct keep {
	int setup;
	int keep_ret, keep_same, keep_again;
	int fds_before, fds_after;
	int close_ret, closes;
	ssize_t raw_in, raw_out;
	char raw[8], raw_back[8];
	/* top over mid (kept) over s */
	int mid_keep, top_close, closes2;
	char mid_buf[4];
	int mid_close, lower_alive;
	ssize_t eof;
};

static void keep_main(unsigned w, void *arg)
{
	struct keep *k = arg;
	struct giong_stream *c, *s, *low = NULL;
	struct xs *x, *mid, *top;

	(void)w;
	if (nt_tcp_pair(&c, &s) || !(x = xs_new(s, 0x33, &k->closes))) {
		k->setup = 1;
		return;
	}
	k->keep_ret = giong_stream_keep_lower(&x->base, &low);
	k->keep_same = low == s;
	k->keep_again = giong_stream_keep_lower(&x->base, NULL);
	k->fds_before = gt_count_fds();
	k->close_ret = giong_stream_close(&x->base);
	k->fds_after = gt_count_fds();
	/* The lower is the caller's again, open and usable, without XOR. */
	giong_stream_write_all(c, "raw!", 4);
	k->raw_in = nt_stream_read_exact(s, k->raw, 4);
	giong_stream_write_all(s, "back", 4);
	k->raw_out = nt_stream_read_exact(c, k->raw_back, 4);

	/* From the middle: top closes mid, mid (kept) leaves s open. */
	if (!(mid = xs_new(s, 0x44, &k->closes2)) ||
	    !(top = xs_new(&mid->base, 0x55, &k->closes2))) {
		k->setup = 2;
		return;
	}
	k->mid_keep = giong_stream_keep_lower(&mid->base, NULL);
	k->top_close = giong_stream_close(&top->base);
	k->lower_alive = giong_stream_write_all(s, "abc", 3) == 3 &&
			 nt_stream_read_exact(c, k->mid_buf, 3) == 3 &&
			 !memcmp(k->mid_buf, "abc", 3);
	k->mid_close = giong_stream_close(s);
	k->eof = read_end(c);
	giong_stream_close(c);
}

static void test_keep_lower(void **state)
{
	struct giong_config cfg = gt_config(1);
	struct keep k;
	int fds = gt_count_fds();

	(void)state;
	memset(&k, 0, sizeof(k));
	gt_run(&cfg, keep_main, &k, NULL);
	assert_int_equal(k.setup, 0);
	assert_int_equal(k.keep_ret, 0);
	assert_true(k.keep_same);
	assert_int_equal(k.keep_again, 0);
	assert_int_equal(k.close_ret, 0);
	assert_int_equal(k.closes, 1);
	assert_int_equal(k.fds_after, k.fds_before); /* the socket stays */
	assert_int_equal(k.raw_in, 4);
	assert_memory_equal(k.raw, "raw!", 4);
	assert_int_equal(k.raw_out, 4);
	assert_memory_equal(k.raw_back, "back", 4);
	assert_int_equal(k.mid_keep, 0);
	assert_int_equal(k.top_close, 0);
	assert_int_equal(k.closes2, 2); /* top and mid */
	assert_true(k.lower_alive);
	assert_int_equal(k.mid_close, 0);
	assert_int_equal(k.eof, 0);
	gt_assert_fds(fds);
}

/* ------------------------------------------------------ (c) a dry pool */

#define DRY_CONNS 4

struct dry {
	int setup;
	ssize_t ahead_n;
	int ahead_pooled_before, ahead_pooled_after;
	int dry_calls;
	uint32_t free_before, free_dry, total;
	int held;
	ssize_t got;
	long long bad;
	uint32_t free_end;
};

static void dry_main(unsigned w, void *arg)
{
	struct dry *d = arg;
	struct giong_stream *c[DRY_CONNS], *s[DRY_CONNS];
	struct giong_recvbuf *held[DRY_CONNS] = {0}, *b;
	struct giong_stats st;
	unsigned char msg[100];
	struct xs *x;
	int closes = 0;

	(void)w;
	d->bad = -1;
	for (int i = 0; i < DRY_CONNS; i++)
		if (nt_tcp_pair(&c[i], &s[i])) {
			d->setup = 1;
			return;
		}
	if (!(x = xs_new(s[0], 0x77, &closes))) {
		d->setup = 2;
		return;
	}
	/* The upper reads ahead: one pool buffer of ciphertext held. */
	nt_fill(9, 0, msg, sizeof(msg));
	xor_buf(msg, sizeof(msg), 0x77);
	giong_stream_write_all(c[0], msg, sizeof(msg));
	d->ahead_n = xs_read_ahead(x);
	d->ahead_pooled_before = giong_bufpool_is_pooled(x->ahead);
	giong_stats(&st);
	d->free_before = st.recvbufs_free;
	d->total = st.recvbufs_total;
	/* The task takes the other three buffers and keeps them: the last
	 * one runs the pool dry, and the upper's holder gives its buffer back. */
	for (int i = 1; i < DRY_CONNS; i++) {
		giong_stream_write_all(c[i], "x", 1);
		if (giong_stream_recv(s[i], &held[i]) == 1)
			d->held++;
	}
	d->dry_calls = x->dry_calls;
	d->ahead_pooled_after = giong_bufpool_is_pooled(x->ahead);
	giong_stats(&st);
	d->free_dry = st.recvbufs_free;
	for (int i = 1; i < DRY_CONNS; i++)
		giong_recvbuf_release(held[i]);
	/* The ciphertext held is intact. */
	d->got = giong_stream_recv(&x->base, &b);
	if (d->got > 0) {
		d->bad = nt_check(9, 0, giong_recvbuf_data(b), (size_t)d->got);
		giong_recvbuf_release(b);
	}
	giong_stream_close(&x->base);
	for (int i = 0; i < DRY_CONNS; i++) {
		giong_stream_close(c[i]);
		if (i)
			giong_stream_close(s[i]);
	}
	giong_sleep_ms(2);
	giong_stats(&st);
	d->free_end = st.recvbufs_free;
}

static void test_dry_pool_calls_upper(void **state)
{
	struct giong_config cfg = gt_config(1);
	struct dry d;
	int fds = gt_count_fds();

	(void)state;
	memset(&d, 0, sizeof(d));
	cfg.recv_buffers = 4;
	cfg.recv_buffer_size = 4096;
	gt_run(&cfg, dry_main, &d, NULL);
	print_message("pool: %u free before, %u after it ran dry, %d dry calls\n", d.free_before,
		      d.free_dry, d.dry_calls);
	assert_int_equal(d.setup, 0);
	assert_int_equal(d.total, 4);
	assert_int_equal(d.ahead_n, 100);
	assert_int_equal(d.ahead_pooled_before, 1);
	assert_int_equal(d.free_before, 3);
	assert_int_equal(d.held, 3);
	assert_true(d.dry_calls >= 1);
	assert_int_equal(d.ahead_pooled_after, 0); /* copied off the pool */
	assert_int_equal(d.free_dry, 1);           /* its buffer is back */
	assert_int_equal(d.got, 100);
	assert_int_equal(d.bad, -1);
	assert_int_equal(d.free_end, 4);
	gt_assert_fds(fds);
}

/* ---------------------------------------- (d) bad arguments, bad stacks */

static int fail_close(struct giong_stream *s)
{
	(void)s;
	return -EPERM; /* as a socket stream's close off its worker: nothing done */
}

static const struct giong_stream_ops bare_ops = {.name = "bare"};
static const struct giong_stream_ops fail_ops = {.name = "fail", .close = fail_close};

struct bad {
	int setup;
	/* NULL */
	int fd_null, peer_null, local_null, nd_null, keep_null, close_null;
	/* no table */
	int fd_noops, peer_noops, nd_noops, close_noops;
	struct giong_stream *keep_out;
	/* a table with nothing, no lower */
	int fd_bare, peer_bare, local_bare, nd_bare, keep_bare, close_bare, onr_bare;
	ssize_t recv_bare, read_bare, write_bare, writev_bare, write_all_bare;
	int shut_bare, recv_ret_null;
	const char *kind_bare;
	/* NULL out */
	int peer_nullout, local_nullout;
	/* a stream that is its own lower */
	int fd_loop, nd_loop, close_loop, peer_loop;
	/* a lower without close: refused untouched */
	int close_nolowerclose, closes_nolowerclose;
	/* the upper's close fails: nothing done */
	int close_fail, lower_alive;
	/* over a Unix stream */
	int nd_unix, fd_unix_ok, peer_unix_fam, onr_xs;
	int closes;
};

static void bad_main(unsigned w, void *arg)
{
	struct bad *r = arg;
	struct giong_stream noops = {0}, bare = {.ops = &bare_ops}, loop = {.ops = &xs_ops};
	struct giong_stream fail = {.ops = &fail_ops};
	struct giong_stream *c, *s, *u1, *u2, *k = &bare;
	struct giong_recvbuf *b = (void *)&bare;
	struct iovec iov = {"x", 1};
	struct giong_addr a;
	struct xs *x;
	char buf[4];

	(void)w;
	r->fd_null = giong_stream_fd(NULL);
	r->peer_null = giong_stream_peer_addr(NULL, &a);
	r->local_null = giong_stream_local_addr(NULL, &a);
	r->nd_null = giong_tcp_set_nodelay(NULL, true);
	r->keep_null = giong_stream_keep_lower(NULL, &k);
	r->keep_out = k;
	r->close_null = giong_stream_close(NULL);

	r->fd_noops = giong_stream_fd(&noops);
	r->peer_noops = giong_stream_peer_addr(&noops, &a);
	r->nd_noops = giong_tcp_set_nodelay(&noops, true);
	r->close_noops = giong_stream_close(&noops);

	r->fd_bare = giong_stream_fd(&bare);
	r->peer_bare = giong_stream_peer_addr(&bare, &a);
	r->local_bare = giong_stream_local_addr(&bare, &a);
	r->nd_bare = giong_tcp_set_nodelay(&bare, false);
	r->keep_bare = giong_stream_keep_lower(&bare, NULL);
	r->close_bare = giong_stream_close(&bare);
	r->onr_bare = giong_stream_on_readable(&bare, NULL, NULL);
	r->recv_bare = giong_stream_recv(&bare, &b);
	r->recv_ret_null = b == NULL;
	r->read_bare = giong_stream_read(&bare, buf, sizeof(buf));
	r->write_bare = giong_stream_write(&bare, "x", 1);
	r->writev_bare = giong_stream_writev(&bare, &iov, 1);
	r->write_all_bare = giong_stream_write_all(&bare, "x", 1);
	r->shut_bare = giong_stream_shutdown(&bare, SHUT_WR);
	r->kind_bare = giong_stream_kind(&bare);

	loop.lower = &loop; /* a close would call xs_close on a stack object */
	r->fd_loop = giong_stream_fd(&loop);
	r->nd_loop = giong_tcp_set_nodelay(&loop, true);
	r->peer_loop = giong_stream_peer_addr(&loop, &a);
	r->close_loop = giong_stream_close(&loop);

	if (nt_tcp_pair(&c, &s)) {
		r->setup = 1;
		return;
	}
	r->peer_nullout = giong_stream_peer_addr(s, NULL);
	r->local_nullout = giong_stream_local_addr(s, NULL);

	/* xs over a lower with no close: the stack is refused, xs not closed. */
	if (!(x = xs_new(&bare, 1, &r->closes_nolowerclose))) {
		r->setup = 2;
		return;
	}
	r->close_nolowerclose = giong_stream_close(&x->base);
	x->base.lower = NULL;
	giong_stream_close(&x->base);
	r->closes_nolowerclose--; /* that one was ours */

	/* An upper whose close fails: the lower stays open. */
	fail.lower = s;
	r->close_fail = giong_stream_close(&fail);
	r->lower_alive = giong_stream_write_all(s, "ok", 2) == 2 &&
			 nt_stream_read_exact(c, buf, 2) == 2 && !memcmp(buf, "ok", 2);
	giong_stream_close(s);
	giong_stream_close(c);

	/* Over a Unix stream: no TCP_NODELAY, but fd and addresses reach it. */
	if (giong_unix_pair(&u1, &u2) || !(x = xs_new(u1, 2, &r->closes))) {
		r->setup = 3;
		return;
	}
	r->nd_unix = giong_tcp_set_nodelay(&x->base, true);
	r->fd_unix_ok = giong_stream_fd(&x->base) == giong_stream_fd(u1);
	r->peer_unix_fam = giong_stream_local_addr(&x->base, &a) ? -1 : a.ss.ss_family;
	r->onr_xs = giong_stream_on_readable(&x->base, NULL, NULL); /* never passed down */
	giong_stream_close(&x->base);
	giong_stream_close(u2);
}

static void test_bad_arguments(void **state)
{
	struct giong_config cfg = gt_config(1);
	struct bad r;
	int fds = gt_count_fds();

	(void)state;
	memset(&r, 0, sizeof(r));
	gt_run(&cfg, bad_main, &r, NULL);
	assert_int_equal(r.setup, 0);
	assert_int_equal(r.fd_null, -EINVAL);
	assert_int_equal(r.peer_null, -EINVAL);
	assert_int_equal(r.local_null, -EINVAL);
	assert_int_equal(r.nd_null, -EINVAL);
	assert_int_equal(r.keep_null, -EINVAL);
	assert_null(r.keep_out);
	assert_int_equal(r.close_null, -EINVAL);

	assert_int_equal(r.fd_noops, -EINVAL);
	assert_int_equal(r.peer_noops, -EINVAL);
	assert_int_equal(r.nd_noops, -EINVAL);
	assert_int_equal(r.close_noops, -EINVAL);

	assert_int_equal(r.fd_bare, -ENOTSUP);
	assert_int_equal(r.peer_bare, -ENOTSUP);
	assert_int_equal(r.local_bare, -ENOTSUP);
	assert_int_equal(r.nd_bare, -ENOTSUP);
	assert_int_equal(r.keep_bare, -ENOTSUP);
	assert_int_equal(r.close_bare, -ENOTSUP);
	assert_int_equal(r.onr_bare, -ENOTSUP);
	assert_int_equal(r.recv_bare, -ENOTSUP);
	assert_true(r.recv_ret_null);
	assert_int_equal(r.read_bare, -ENOTSUP);
	assert_int_equal(r.write_bare, -ENOTSUP);
	assert_int_equal(r.writev_bare, -ENOTSUP);
	assert_int_equal(r.write_all_bare, -ENOTSUP);
	assert_int_equal(r.shut_bare, -ENOTSUP);
	assert_string_equal(r.kind_bare, "bare");

	assert_int_equal(r.fd_loop, -ELOOP);
	assert_int_equal(r.nd_loop, -ELOOP);
	assert_int_equal(r.peer_loop, -ELOOP);
	assert_int_equal(r.close_loop, -ELOOP);

	assert_int_equal(r.peer_nullout, -EINVAL);
	assert_int_equal(r.local_nullout, -EINVAL);

	assert_int_equal(r.close_nolowerclose, -ENOTSUP);
	assert_int_equal(r.closes_nolowerclose, 0); /* refused before closing anything */

	assert_int_equal(r.close_fail, -EPERM);
	assert_true(r.lower_alive);

	assert_int_equal(r.nd_unix, -ENOTSUP);
	assert_true(r.fd_unix_ok);
	assert_int_equal(r.peer_unix_fam, AF_UNIX);
	assert_int_equal(r.onr_xs, -ENOTSUP);
	assert_int_equal(r.closes, 1);
	gt_assert_fds(fds);
}

/* ------------------------------ (e) heap recvbufs: alloc, tail, commit */

struct hb {
	int a0, anull, abig, a0_null;
	int a16;
	size_t len0, room0, room_after10, room_after_consume, room_full, room_copy;
	long c17, c10, cons4, c6, c1, c0, cons_all, c0_after;
	int data_ok, tail_null_ok, commit_null;
	int pool_setup;
	int pool_tail_null;
	size_t pool_room;
	long pool_commit0, pool_commit1;
	int copy_ret, copy_pooled;
	long copy_commit1;
};

static void hb_main(unsigned w, void *arg)
{
	struct hb *h = arg;
	struct giong_recvbuf *b = (void *)h, *pb;
	struct giong_stream *c, *s;
	size_t room = 99;
	char *p;

	(void)w;
	h->a0 = giong_recvbuf_alloc(0, &b);
	h->a0_null = b == NULL;
	h->anull = giong_recvbuf_alloc(16, NULL);
	h->abig = giong_recvbuf_alloc((size_t)UINT32_MAX + 1, &b);
	h->a16 = giong_recvbuf_alloc(16, &b);
	if (h->a16)
		return;
	h->len0 = giong_recvbuf_len(b);
	p = giong_recvbuf_tail(b, &h->room0);
	h->c17 = giong_recvbuf_commit(b, 17); /* past the room */
	memcpy(p, "0123456789", 10);
	h->c10 = giong_recvbuf_commit(b, 10);
	giong_recvbuf_tail(b, &h->room_after10);
	h->cons4 = giong_recvbuf_consume(b, 4);
	/* Consumed bytes are not room: the tail stays where it was. */
	p = giong_recvbuf_tail(b, &h->room_after_consume);
	memcpy(p, "ABCDEF", 6);
	h->c6 = giong_recvbuf_commit(b, 6);
	h->c1 = giong_recvbuf_commit(b, 1);
	h->data_ok =
		giong_recvbuf_len(b) == 12 && !memcmp(giong_recvbuf_data(b), "456789ABCDEF", 12);
	h->tail_null_ok = giong_recvbuf_tail(b, &h->room_full) != NULL;
	h->c0 = giong_recvbuf_commit(b, 0);
	h->cons_all = giong_recvbuf_consume(b, 12);
	h->c0_after = giong_recvbuf_commit(b, 0);
	giong_recvbuf_release(b);
	h->tail_null_ok &= giong_recvbuf_tail(NULL, &room) == NULL && room == 0;
	h->commit_null = (int)giong_recvbuf_commit(NULL, 1);

	/* A pool buffer is the kernel's to fill. */
	if (nt_tcp_pair(&c, &s)) {
		h->pool_setup = 1;
		return;
	}
	giong_stream_write_all(c, "pool", 4);
	if (giong_stream_recv(s, &pb) != 4) {
		h->pool_setup = 2;
	} else {
		room = 99;
		h->pool_tail_null = giong_recvbuf_tail(pb, &room) == NULL;
		h->pool_room = room;
		h->pool_commit0 = giong_recvbuf_commit(pb, 0);
		h->pool_commit1 = giong_recvbuf_commit(pb, 1);
		/* A copy is heap memory with no room left. */
		h->copy_ret = giong_recvbuf_copy(&pb);
		h->copy_pooled = giong_bufpool_is_pooled(pb);
		giong_recvbuf_tail(pb, &h->room_copy);
		h->copy_commit1 = giong_recvbuf_commit(pb, 1);
		giong_recvbuf_release(pb);
	}
	giong_stream_close(c);
	giong_stream_close(s);
}

static void test_heap_recvbufs(void **state)
{
	struct giong_config cfg = gt_config(1);
	struct hb h;

	(void)state;
	memset(&h, 0, sizeof(h));
	gt_run(&cfg, hb_main, &h, NULL);
	assert_int_equal(h.a0, -EINVAL);
	assert_true(h.a0_null);
	assert_int_equal(h.anull, -EINVAL);
	assert_int_equal(h.abig, -EINVAL);
	assert_int_equal(h.a16, 0);
	assert_int_equal(h.len0, 0);
	assert_int_equal(h.room0, 16);
	assert_int_equal(h.c17, -EINVAL);
	assert_int_equal(h.c10, 10);
	assert_int_equal(h.room_after10, 6);
	assert_int_equal(h.cons4, 6);
	assert_int_equal(h.room_after_consume, 6);
	assert_int_equal(h.c6, 12);
	assert_int_equal(h.c1, -EINVAL);
	assert_true(h.data_ok);
	assert_int_equal(h.room_full, 0);
	assert_true(h.tail_null_ok);
	assert_int_equal(h.c0, 12);
	assert_int_equal(h.cons_all, 0);
	assert_int_equal(h.c0_after, 0);
	assert_int_equal(h.commit_null, -EINVAL);
	assert_int_equal(h.pool_setup, 0);
	assert_true(h.pool_tail_null);
	assert_int_equal(h.pool_room, 0);
	assert_int_equal(h.pool_commit0, -EINVAL);
	assert_int_equal(h.pool_commit1, -EINVAL);
	assert_int_equal(h.copy_ret, 0);
	assert_int_equal(h.copy_pooled, 0);
	assert_int_equal(h.room_copy, 0);
	assert_int_equal(h.copy_commit1, -EINVAL);
}

/* ------------------------------------------ (f) questions down the stack */

#define Q_OWN (GIONG_STREAM_QUERY_USER + 1) /* this test's own: only tap knows it */

/* tap: passes bytes through unchanged and says so (GIONG_STREAM_QUERY_LOWER
 * for the splice question); answers ALPN itself when given a protocol, as
 * TLS would. On the caller's stack: never closed through the stack. */
struct tap {
	struct giong_stream base; /* first */
	const char *proto;        /* what it answers for ALPN, or NULL: not known here */
};

static ssize_t tap_recv(struct giong_stream *s, struct giong_recvbuf **ret)
{
	return giong_stream_recv(s->lower, ret);
}

static ssize_t tap_read(struct giong_stream *s, void *buf, size_t len)
{
	return giong_stream_read(s->lower, buf, len);
}

static ssize_t tap_writev(struct giong_stream *s, const struct iovec *iov, int n, unsigned flags)
{
	if ((flags & GIONG_WRITE_ALL) && n == 1)
		return giong_stream_write_all(s->lower, iov[0].iov_base, iov[0].iov_len);
	return giong_stream_writev(s->lower, iov, n);
}

static int tap_query(const struct giong_stream *s, int what, void *out, size_t *len)
{
	const struct tap *t = (const struct tap *)(const void *)s;

	switch (what) {
	case GIONG_STREAM_QUERY_ALPN:
		if (!t->proto)
			return -ENOTSUP;
		*(const char **)out = t->proto;
		*len = strlen(t->proto);
		return 0;
	case GIONG_STREAM_QUERY_SPLICE_FD:
		return GIONG_STREAM_QUERY_LOWER;
	case Q_OWN:
		*(int *)out = 42;
		return 0;
	default:
		return -ENOTSUP;
	}
}

/* seal: knows that nothing it is asked exists (a stream over memory would). */
static int seal_query(const struct giong_stream *s, int what, void *out, size_t *len)
{
	(void)s, (void)out, (void)len;
	return what == Q_OWN ? -ENOTSUP : -ENOENT;
}

/* old: a table from before query, answering the socket question with fd. */
static int old_fd(const struct giong_stream *s)
{
	(void)s;
	return 1234; /* a number no test uses as a descriptor */
}

/* odd: a positive return that means nothing (a table's bug). */
static int odd_query(const struct giong_stream *s, int what, void *out, size_t *len)
{
	(void)s, (void)what, (void)out, (void)len;
	return 7;
}

static const struct giong_stream_ops tap_ops = {.name = "tap",
						.recv = tap_recv,
						.read = tap_read,
						.writev = tap_writev,
						.query = tap_query};
static const struct giong_stream_ops seal_ops = {.name = "seal", .query = seal_query};
static const struct giong_stream_ops old_ops = {.name = "old", .fd = old_fd};
static const struct giong_stream_ops odd_ops = {.name = "odd", .query = odd_query};

/* The three questions of giong about @s: descriptors or -errno, ALPN as
 * its return, and the name it gave (untouched on failure). */
struct answers {
	int sock, splice, alpn, own;
	char name[16];
};

static void ask_all(const struct giong_stream *s, struct answers *a)
{
	const char *p = "untouched";
	size_t len = strlen(p);
	int v = -1;

	a->sock = giong_stream_query(s, GIONG_STREAM_QUERY_SOCKET, &v, NULL);
	a->sock = a->sock ? a->sock : v;
	a->splice = giong_stream_splice_fd(s);
	a->alpn = giong_stream_alpn(s, &p, &len);
	snprintf(a->name, sizeof(a->name), "%.*s", (int)len, p);
	v = -1;
	a->own = giong_stream_query(s, Q_OWN, &v, NULL);
	a->own = a->own ? a->own : v;
}

struct qs {
	int setup, fd_s;
	struct answers plain, tap, xs_tap, sealed, old, odd, bare;
	int fd_sealed, peer_sealed, fd_old, unknown;
	ssize_t via_tap, via_fd, got;
	char bytes[4];
	/* bad arguments */
	int null_s, null_out, what0, alpn_nolen, alpn_noname, noops, loop_tap, loop_xs;
};

static void qs_main(unsigned w, void *arg)
{
	struct qs *q = arg;
	struct giong_stream *c, *s;
	struct giong_stream seal = {.ops = &seal_ops}, old = {.ops = &old_ops};
	struct giong_stream odd = {.ops = &odd_ops}, noops = {0}, bare = {.ops = &bare_ops};
	struct tap toy = {.base = {.ops = &tap_ops}, .proto = "toy/1"};
	struct tap dumb = {.base = {.ops = &tap_ops, .lower = &seal}};
	struct tap loop = {.base = {.ops = &tap_ops}};
	struct giong_addr a;
	const char *p;
	size_t len;
	struct xs *x;
	int v;

	(void)w;
	/* Regular: the questions about descriptors are answered with one. */
	if (nt_tcp_pair_as(&c, &s, true) || !(x = xs_new(&toy.base, 0x66, NULL))) {
		q->setup = 1;
		return;
	}
	toy.base.lower = seal.lower = old.lower = odd.lower = s;
	q->fd_s = giong_stream_fd(s);
	ask_all(s, &q->plain);           /* a socket answers itself */
	ask_all(&toy.base, &q->tap);     /* tap answers ALPN, passes the rest down */
	ask_all(&x->base, &q->xs_tap);   /* xs is silent: each question's default */
	ask_all(&dumb.base, &q->sealed); /* seal says "none" beneath tap */
	ask_all(&old, &q->old);          /* fd, not query */
	ask_all(&odd, &q->odd);          /* 7 is taken as "not known here" */
	ask_all(&bare, &q->bare);        /* nobody in the stack knows */
	q->fd_sealed = giong_stream_fd(&dumb.base);
	q->peer_sealed = giong_stream_peer_addr(&dumb.base, &a);
	q->fd_old = giong_stream_fd(&old);
	q->unknown = giong_stream_query(&x->base, 1000, &v, NULL);
	/* What the splice answer promises: bytes written to the descriptor
	 * follow those written through tap, unchanged. */
	q->via_tap = giong_stream_write_all(&toy.base, "ab", 2);
	q->via_fd = q->tap.splice >= 0 ? write(q->tap.splice, "cd", 2) : -1;
	q->got = nt_stream_read_exact(c, q->bytes, 4);

	q->null_s = giong_stream_query(NULL, GIONG_STREAM_QUERY_SOCKET, &v, NULL);
	q->null_out = giong_stream_query(s, GIONG_STREAM_QUERY_SOCKET, NULL, NULL);
	q->what0 = giong_stream_query(s, 0, &v, NULL);
	q->alpn_nolen = giong_stream_query(&toy.base, GIONG_STREAM_QUERY_ALPN, &p, NULL);
	q->alpn_noname = giong_stream_alpn(&toy.base, NULL, &len);
	q->noops = giong_stream_query(&noops, GIONG_STREAM_QUERY_SOCKET, &v, NULL);
	loop.base.lower = &loop.base; /* tap passes the splice question down, forever */
	q->loop_tap = giong_stream_splice_fd(&loop.base);
	x->base.lower = &x->base;
	q->loop_xs = giong_stream_fd(&x->base);
	x->base.lower = NULL;
	giong_stream_close(&x->base);
	giong_stream_close(s);
	giong_stream_close(c);
}

static void assert_answers(const struct answers *a, int sock, int splice, int alpn,
			   const char *name, int own)
{
	assert_int_equal(a->sock, sock);
	assert_int_equal(a->splice, splice);
	assert_int_equal(a->alpn, alpn);
	assert_string_equal(a->name, name);
	assert_int_equal(a->own, own);
}

static void test_query(void **state)
{
	struct giong_config cfg = gt_config(1);
	struct qs q;
	int fds = gt_count_fds(), fd;

	(void)state;
	memset(&q, 0, sizeof(q));
	gt_run(&cfg, qs_main, &q, NULL);
	assert_int_equal(q.setup, 0);
	fd = q.fd_s;
	assert_true(fd >= 0);
	/*                         socket    splice    ALPN     name         own */
	assert_answers(&q.plain, fd, fd, -ENOENT, "untouched", -ENOTSUP);
	assert_answers(&q.tap, fd, fd, 0, "toy/1", 42);
	assert_answers(&q.xs_tap, fd, -ENOENT, 0, "toy/1", 42);
	assert_answers(&q.sealed, -ENOENT, -ENOENT, -ENOENT, "untouched", 42);
	assert_answers(&q.old, 1234, -ENOENT, -ENOENT, "untouched", -ENOTSUP);
	assert_answers(&q.odd, fd, -ENOENT, -ENOENT, "untouched", -ENOTSUP);
	assert_answers(&q.bare, -ENOTSUP, -ENOENT, -ENOTSUP, "untouched", -ENOTSUP);
	assert_int_equal(q.fd_sealed, -ENOTSUP); /* giong_stream_fd() keeps its errors */
	assert_int_equal(q.peer_sealed, -ENOTSUP);
	assert_int_equal(q.fd_old, 1234);
	assert_int_equal(q.unknown, -ENOTSUP);
	assert_int_equal(q.via_tap, 2);
	assert_int_equal(q.via_fd, 2);
	assert_int_equal(q.got, 4);
	assert_memory_equal(q.bytes, "abcd", 4);

	assert_int_equal(q.null_s, -EINVAL);
	assert_int_equal(q.null_out, -EINVAL);
	assert_int_equal(q.what0, -EINVAL);
	assert_int_equal(q.alpn_nolen, -EINVAL);
	assert_int_equal(q.alpn_noname, -EINVAL);
	assert_int_equal(q.noops, -EINVAL);
	assert_int_equal(q.loop_tap, -ELOOP);
	assert_int_equal(q.loop_xs, -ELOOP);
	gt_assert_fds(fds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_through_and_close),    cmocka_unit_test(test_keep_lower),
		cmocka_unit_test(test_dry_pool_calls_upper), cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_heap_recvbufs),        cmocka_unit_test(test_query),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
