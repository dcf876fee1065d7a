/* SPDX-License-Identifier: MIT */
/*
 * sock.c - the socket stream: TCP and Unix streams share it; only the
 * operation table's name differs.
 *
 * Lifetime: the stream is freed when its owner has closed it, no task is
 * inside one of its calls (busy == 0), and the kernel has confirmed the end
 * of its multishot receive (rx_done). Close cancels every operation on the
 * descriptor first (ASYNC_CANCEL by fd), so none of these waits long.
 */
#include <errno.h>
#include <limits.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "giong_faults.h"
#include "giong_private.h"
#include "sock.h"

/* The socket stream whose base is @st (a socket stream's table only). */
static inline struct giong__sock *to_sock(struct giong_stream *st)
{
	return giong__container_of(st, struct giong__sock, base);
}

static void ignore_cqe(void *ctx, int res, unsigned flags)
{
	(void)ctx;
	(void)res;
	(void)flags;
}

static void sock_free_if_done(struct giong__sock *s)
{
	if (s->closing && s->rx_done && !s->busy)
		free(s);
}

static void rx_freed(struct giong__rxq *q)
{
	struct giong__sock *s = giong__container_of(q, struct giong__sock, rxq);

	s->rx_done = true;
	sock_free_if_done(s);
}

/* Data or the end arrived, no task waits: call the readable callback, if
 * one is set (on the receive's completion, or from deferred_ready). */
static void rx_ready(struct giong__rxq *q)
{
	struct giong__sock *s = giong__container_of(q, struct giong__sock, rxq);

	if (s->readable_fn)
		s->readable_fn(&s->base, s->readable_ctx);
}

static const struct giong__rxq_ops sock_rxq_ops = {
	.on_ready = rx_ready,
	.on_free = rx_freed,
	/* Pause a stream nobody reads at 16 buffers or 256 KiB queued. */
	.max_items = 16,
	.max_bytes = 256 * 1024,
};

struct giong__sock *giong__net_sock_of(const struct giong_stream *st)
{
	if (!st || (st->ops != &giong__net_tcp_ops && st->ops != &giong__net_unix_ops))
		return NULL;
	return to_sock((struct giong_stream *)st);
}

/* Close @fd, a slot of the worker's table if @fixed, without waiting. */
void giong__net_close_nowait(int fd, bool fixed)
{
	if (fixed)
		giong_close_direct_nowait((unsigned)fd);
	else
		giong_close_nowait(fd);
}

int giong__net_sock_new(int fd, bool fixed, const struct giong_stream_ops *ops,
			struct giong_stream **ret)
{
	struct giong__sock *s = calloc(1, sizeof(*s));

	if (!s) {
		giong__net_close_nowait(fd, fixed);
		return -ENOMEM;
	}
	s->base.ops = ops;
	s->owner = giong__owner_self();
	giong_waitq_init(&s->write_wait);
	giong__net_rxq_init(&s->rxq, fd, &sock_rxq_ops);
	s->rxq.fixed = fixed;
	*ret = &s->base;
	return 0;
}

/* Enter a call that parks: the stream may not be freed until it is left.
 * Off the owner worker nothing is touched. */
static int sock_enter(struct giong__sock *s)
{
	int r = giong__owner_check(s->owner);

	if (r)
		return r;
	if (s->closing)
		return -EBADF;
	s->busy++;
	return 0;
}

/* The ring's receive and send take a 32-bit length: a longer one would be
 * cut to its low bits (4 GiB + 2 would send 2 bytes, 4 GiB none). A short
 * count is legal for both; write_all loops. */
static unsigned io_len(size_t len)
{
	return len > INT_MAX ? INT_MAX : (unsigned)len;
}

/* GIONG_FAULTS: @len, or less when the plan cuts this send or receive
 * short (at least 1 byte: a short count, never a false end of stream). */
static size_t fault_len(size_t len)
{
	uint64_t v = len > 1 ? giong__fault(GIONG__FAULT_SHORT) : 0;

	return GIONG__UNLIKELY(v) ? 1 + (size_t)(v % (len - 1)) : len;
}

#define FAULT_IOV 8

/* GIONG_FAULTS: 0, or the plan cuts a gathered send short: the count of
 * buffers copied into @out (at most FAULT_IOV), holding a prefix of @iov's
 * bytes that is at least 1 byte and shorter than the whole. */
static int fault_iov(const struct iovec *iov, int niov, struct iovec *out)
{
	uint64_t v = giong__fault(GIONG__FAULT_SHORT);
	size_t total = 0, cut, got = 0;
	int k = 0;

	if (GIONG__LIKELY(!v))
		return 0;
	for (int i = 0; i < niov; i++)
		total += iov[i].iov_len;
	if (total < 2)
		return 0;
	cut = 1 + (size_t)(v % (total - 1));
	for (int i = 0; i < niov && k < FAULT_IOV && got < cut; i++) {
		out[k] = iov[i];
		if (out[k].iov_len > cut - got)
			out[k].iov_len = cut - got;
		got += out[k++].iov_len;
	}
	return got ? k : 0;
}

static void sock_leave(struct giong__sock *s)
{
	s->busy--;
	sock_free_if_done(s);
}

int giong__net_sock_enter(struct giong__sock *s)
{
	return sock_enter(s);
}

void giong__net_sock_leave(struct giong__sock *s)
{
	sock_leave(s);
}

static ssize_t sock_recv(struct giong_stream *st, struct giong_recvbuf **ret)
{
	struct giong__sock *s = to_sock(st);
	ssize_t n;
	int r;

	*ret = NULL;
	if ((r = sock_enter(s)))
		return r;
	r = giong__net_rxq_wait(&s->rxq, 0);
	if (r == 1) {
		*ret = giong__net_rxq_pop(&s->rxq);
		n = (ssize_t)giong_recvbuf_len(*ret);
	} else {
		n = r; /* 0: end of stream, or -errno */
	}
	sock_leave(s);
	return n;
}

/* One-shot receive straight into @buf: used while no multishot is armed. */
static ssize_t recv_oneshot(struct giong__sock *s, void *buf, size_t len)
{
	struct io_uring_sqe *sqe = giong_sqe();

	if (!sqe)
		return -EBUSY;
	/* @buf is the caller's, lent to the kernel until giong_io returns. */
	io_uring_prep_recv(sqe, s->rxq.fd, buf, io_len(len), 0);
	return giong_io(giong__net_on_sock(s, sqe));
}

static ssize_t sock_read(struct giong_stream *st, void *buf, size_t len)
{
	struct giong__sock *s = to_sock(st);
	struct giong__rxq *q = &s->rxq;
	ssize_t n;
	int r;

	if ((r = sock_enter(s)))
		return r;
	len = fault_len(len);
	if (!q->armed && !q->count && !q->paused && !q->wait_pool && !q->eof && !q->err &&
	    !q->ctrl && !q->hold && !s->readable_fn) {
		n = recv_oneshot(s, buf, len);
		if (n == -EIO && q->ktls)
			q->ctrl = 1; /* kernel TLS: a record of another type is next */
		if (s->closing && n >= 0)
			n = -EBADF; /* closed while parked: the stream is going away */
	} else {
		r = giong__net_rxq_wait(q, 0);
		if (r == 1) {
			struct giong_recvbuf *b = giong__net_rxq_front(q);
			size_t avail = giong_recvbuf_len(b);

			n = (ssize_t)(avail < len ? avail : len);
			memcpy(buf, giong_recvbuf_data(b), (size_t)n);
			giong_recvbuf_consume(b, (size_t)n);
			giong__net_rxq_consumed(q, (size_t)n);
			if (!giong_recvbuf_len(b))
				giong_recvbuf_release(giong__net_rxq_pop(q));
		} else {
			n = r;
		}
	}
	sock_leave(s);
	return n;
}

/* Enter a write (writev, splice): after the stream's write in flight, if
 * any. 0, or -errno having left the stream. */
int giong__net_write_begin(struct giong__sock *s)
{
	int r;

	if ((r = sock_enter(s)))
		return r;
	while (s->writing) {
		r = giong_waitq_wait(&s->write_wait, 0);
		if (r < 0 || s->closing) {
			sock_leave(s);
			return r < 0 ? r : -EBADF;
		}
	}
	s->writing = true;
	return 0;
}

/* Leave a write that returned @n; what the caller returns. */
ssize_t giong__net_write_end(struct giong__sock *s, ssize_t n)
{
	s->writing = false;
	/* Closed by another task while we were parked: say so, even after a
	 * partial send, so that no caller (giong_stream_write_all() loops on
	 * short counts) comes back to a stream that sock_leave() frees. */
	if (s->closing && n >= 0)
		n = -EBADF;
	giong_waitq_wake_one(&s->write_wait, 0);
	sock_leave(s);
	return n;
}

static ssize_t sock_writev(struct giong_stream *st, const struct iovec *iov, int niov,
			   unsigned flags)
{
	struct giong__sock *s = to_sock(st);
	struct io_uring_sqe *sqe;
	struct msghdr mh;
	struct iovec short_iov[FAULT_IOV];
	/* Kernel TLS refuses MSG_WAITALL (EOPNOTSUPP): there a short count comes
	 * back, which every caller of writev takes (write_all loops). */
	int sflags = MSG_NOSIGNAL | ((flags & GIONG_WRITE_ALL) && !s->ktls_tx ? MSG_WAITALL : 0);
	ssize_t n;
	int r;

	if ((r = giong__net_write_begin(s)))
		return r;
	sqe = giong_sqe();
	if (!sqe) {
		n = -EBUSY;
	} else if (niov == 1) {
		/* The caller's bytes are lent to the kernel until giong_io returns. */
		io_uring_prep_send(sqe, s->rxq.fd, iov[0].iov_base,
				   io_len(fault_len(iov[0].iov_len)), sflags);
		n = giong_io(giong__net_on_sock(s, sqe));
	} else {
		/* GIONG_FAULTS: the plan may cut the send short, to a prefix of
		 * @iov copied into short_iov. mh and short_iov live in this frame,
		 * iov and its bytes are the caller's: all lent to the kernel until
		 * giong_io returns. */
		int k = fault_iov(iov, niov, short_iov);

		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = k ? short_iov : (struct iovec *)iov;
		mh.msg_iovlen = (size_t)(k ? k : niov);
		io_uring_prep_sendmsg(sqe, s->rxq.fd, &mh, (unsigned)sflags);
		n = giong_io(giong__net_on_sock(s, sqe));
	}
	return giong__net_write_end(s, n);
}

static void send_done(void *ctx, int res, unsigned flags);

/* Under kernel TLS (no MSG_WAITALL): submit what is left of @req's buffers
 * after the req->_sent bytes that went. 0, or -errno having submitted nothing. */
static int send_rest(struct giong__sock *s, struct giong_stream_send *req)
{
	size_t skip = req->_sent;
	struct io_uring_sqe *sqe;
	int k = 0;

	while (k < req->_niov && skip >= req->_iov[k].iov_len)
		skip -= req->_iov[k++].iov_len;
	if (!(sqe = giong_sqe()))
		return -EBUSY;
	if (skip) {
		/* The rest of a buffer the last send cut: alone, the caller's bytes
		 * lent to the kernel until send_done. */
		io_uring_prep_send(sqe, s->rxq.fd, (const char *)req->_iov[k].iov_base + skip,
				   (unsigned)(req->_iov[k].iov_len - skip), MSG_NOSIGNAL);
	} else {
		/* req->_mh and the caller's iov array from @k: lent until send_done. */
		req->_mh.msg_iov = (struct iovec *)req->_iov + k;
		req->_mh.msg_iovlen = (size_t)(req->_niov - k);
		io_uring_prep_sendmsg(sqe, s->rxq.fd, &req->_mh, MSG_NOSIGNAL);
	}
	return giong_op_start(giong__net_on_sock(s, sqe), send_done, req, NULL);
}

/* The end of a send started by sock_send_start(), from its completion. */
static void send_done(void *ctx, int res, unsigned flags)
{
	struct giong_stream_send *req = ctx;
	struct giong__sock *s = to_sock(req->_stream);

	(void)flags;
	if (s->ktls_tx && res >= 0) {
		/* A send without MSG_WAITALL may stop short: send the rest
		 * (stream.h promises all of it, or an error). */
		req->_sent += (size_t)res;
		if (res > 0 && req->_sent < req->_total && !s->closing && send_rest(s, req) == 0)
			return; /* still writing, still busy */
		res = (int)req->_sent;
	}
	s->writing = false;
	req->_stream = NULL;
	giong_waitq_wake_one(&s->write_wait, 0);
	/* Still busy through the callback: it may close the stream, which must
	 * then not be freed until we are done with it. */
	req->done(req, res);
	sock_leave(s);
}

static int sock_send_start(struct giong_stream *st, struct giong_stream_send *req,
			   const struct iovec *iov, int niov)
{
	struct giong__sock *s = to_sock(st);
	struct io_uring_sqe *sqe;
	int r;

	if ((r = giong__owner_check(s->owner)))
		return r;
	if (s->closing)
		return -EBADF;
	if (s->writing)
		return -EBUSY;
	if (!(sqe = giong_sqe()))
		return -EBUSY;
	req->_stream = st;
	if (s->ktls_tx) {
		/* Sent in as many pieces as kernel TLS takes (send_rest). */
		req->_iov = iov;
		req->_niov = niov;
		req->_sent = req->_total = 0;
		for (int i = 0; i < niov; i++)
			req->_total += iov[i].iov_len;
		memset(&req->_mh, 0, sizeof(req->_mh));
		if ((r = send_rest(s, req))) {
			req->_stream = NULL;
			return r;
		}
		s->writing = true;
		s->busy++;
		return 0;
	}
	if (niov == 1) {
		/* The caller's bytes are lent to the kernel until send_done. */
		io_uring_prep_send(sqe, s->rxq.fd, iov[0].iov_base, (unsigned)iov[0].iov_len,
				   MSG_NOSIGNAL | MSG_WAITALL);
	} else {
		/* req->_mh, the caller's iov array and its bytes are lent to the
		 * kernel until send_done (the caller's promise, stream.h). */
		memset(&req->_mh, 0, sizeof(req->_mh));
		req->_mh.msg_iov = (struct iovec *)iov;
		req->_mh.msg_iovlen = (size_t)niov;
		io_uring_prep_sendmsg(sqe, s->rxq.fd, &req->_mh, MSG_NOSIGNAL | MSG_WAITALL);
	}
	if ((r = giong_op_start(giong__net_on_sock(s, sqe), send_done, req, NULL))) {
		req->_stream = NULL;
		return r; /* the SQE was discarded: nothing started */
	}
	s->writing = true;
	s->busy++;
	return 0;
}

static int sock_shutdown(struct giong_stream *st, int how)
{
	struct giong__sock *s = to_sock(st);
	struct io_uring_sqe *sqe;
	int r;

	if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR)
		return -EINVAL;
	if ((r = sock_enter(s)))
		return r;
	sqe = giong_sqe();
	if (sqe) {
		io_uring_prep_shutdown(sqe, s->rxq.fd, how);
		r = giong_io(giong__net_on_sock(s, sqe));
	} else {
		r = -EBUSY;
	}
	sock_leave(s);
	return r;
}

static int sock_close(struct giong_stream *st)
{
	struct giong__sock *s = to_sock(st);
	struct io_uring_sqe *sqe;
	bool fixed;
	int fd, r;

	/* Off the owner worker a close could neither cancel (no ring, or
	 * another worker's) nor wake anything safely: refuse it. */
	if ((r = giong__owner_check(s->owner)))
		return r;
	if (s->closing)
		return -EBADF;
	fd = s->rxq.fd; /* s may be freed by giong__net_rxq_close() below */
	fixed = s->rxq.fixed;
	s->closing = true;
	s->readable_fn = NULL;
	/* Cancel everything in the kernel on this descriptor or slot (the
	 * multishot receive, parked reads and writes); each completes with its
	 * own CQE, and the stream's memory waits for all of them. A slot is
	 * looked up when the cancel is issued, before the close below. */
	sqe = giong_sqe();
	if (sqe) {
		io_uring_prep_cancel_fd(sqe, s->rxq.fd,
					IORING_ASYNC_CANCEL_ALL |
						(fixed ? IORING_ASYNC_CANCEL_FD_FIXED : 0));
		/* Fails only while the worker drains, which cancels all anyway. */
		(void)giong_op_start(sqe, ignore_cqe, NULL, NULL);
	}
	giong_waitq_wake_all(&s->write_wait, -EBADF);
	giong__net_rxq_close(&s->rxq); /* may free s via rx_freed: s is gone */
	/* Batched with the tick, after the cancel; never left open. A slot is
	 * the stream's until this close_direct completes: nothing is submitted
	 * on it after, and operations in flight hold the file, not the slot. */
	giong__net_close_nowait(fd, fixed);
	return 0;
}

static void deferred_ready(struct giong_soon *soon, void *ctx)
{
	struct giong__sock *s = ctx;

	free(soon);
	s->deferred = 0;
	/* Still busy through the callback: it may close the stream, which
	 * must then not be freed until we are done with it. */
	if (!s->closing)
		rx_ready(&s->rxq);
	sock_leave(s);
}

/*
 * Call the readable callback from the worker's loop, outside any task, on
 * its next turn (giong_call_soon(): no SQE). The stream is held busy until
 * then; asked again meanwhile, it tells once. The struct giong_soon is
 * allocated per notice, owned by the worker's queue until deferred_ready()
 * frees it, rather than kept in the stream: an idle stream stays within
 * one 224-byte malloc chunk (net.idle_rss), and the path is rare (data
 * already queued when the callback is set).
 */
static int defer_ready(struct giong__sock *s)
{
	struct giong_soon *soon;
	int r;

	if (s->deferred)
		return 0;
	if (!(soon = calloc(1, sizeof(*soon))))
		return -ENOMEM;
	if ((r = giong_call_soon(soon, deferred_ready, s))) {
		free(soon);
		return r;
	}
	s->deferred = 1;
	s->busy++;
	return 0;
}

static int sock_on_readable(struct giong_stream *st, giong_stream_readable_fn fn, void *ctx)
{
	struct giong__sock *s = to_sock(st);
	int r;

	if ((r = giong__owner_check(s->owner)))
		return r;
	if (s->closing)
		return -EBADF;
	s->readable_fn = fn;
	s->readable_ctx = ctx;
	if (!fn)
		return 0;
	/* Data may already wait: tell as an arrival would, from the worker
	 * loop rather than from inside the caller's task. */
	if (s->rxq.count || s->rxq.eof || s->rxq.err || s->rxq.ctrl)
		return defer_ready(s);
	return giong__net_rxq_arm(&s->rxq);
}

/* A socket stream is the bottom of its stack and answers giong's questions
 * itself: bytes written reach its descriptor as they are, and nothing is
 * negotiated on it. Off the owner worker the descriptor is not handed out:
 * the owner may close it at any time, and a number reused by then would name
 * another file. The error ends giong_stream_fd()'s walk down the stack (it is
 * not -ENOTSUP), and with it giong_stream_peer_addr() and
 * giong_stream_local_addr(). A socket in the worker's direct table has no
 * descriptor (tcp.h, "Direct descriptors"): -EOPNOTSUPP, which is -ENOTSUP on
 * Linux ("none here"; nothing is beneath a socket), and no splice target
 * (-ENOENT: its bytes go through the stream). */
static int sock_query(const struct giong_stream *st, int what, void *out, size_t *len)
{
	const struct giong__sock *s = to_sock((struct giong_stream *)st);
	int fd, r = giong__owner_check(s->owner);

	(void)len;
	if (r)
		return r; /* off the owner: nothing answered, as for fd */
	fd = s->rxq.fixed ? -EOPNOTSUPP : s->rxq.fd;
	switch (what) {
	case GIONG_STREAM_QUERY_SOCKET:
		if (fd < 0)
			return fd; /* a direct socket: none (-EOPNOTSUPP == -ENOTSUP) */
		*(int *)out = fd;
		return 0;
	case GIONG_STREAM_QUERY_SPLICE_FD:
		if (fd < 0)
			return -ENOENT; /* a direct socket: written through the stream */
		*(int *)out = fd;
		return 0;
	case GIONG_STREAM_QUERY_ALPN:
		return -ENOENT;
	default:
		return -ENOTSUP;
	}
}

const struct giong_stream_ops giong__net_tcp_ops = {
	.name = "tcp",
	.recv = sock_recv,
	.read = sock_read,
	.writev = sock_writev,
	.shutdown = sock_shutdown,
	.close = sock_close,
	.set_on_readable = sock_on_readable,
	.send_start = sock_send_start,
	.query = sock_query,
};

const struct giong_stream_ops giong__net_unix_ops = {
	.name = "unix",
	.recv = sock_recv,
	.read = sock_read,
	.writev = sock_writev,
	.shutdown = sock_shutdown,
	.close = sock_close,
	.set_on_readable = sock_on_readable,
	.send_start = sock_send_start,
	.query = sock_query,
};

int giong__net_sock_connect(int family, const struct sockaddr *sa, socklen_t len,
			    const struct giong_stream_ops *ops, struct giong_stream **ret)
{
	struct giong_addr copy;
	struct io_uring_sqe *sqe;
	int fd, r;

	fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* The address is copied to this frame: lent to the kernel until
	 * giong_io returns, whatever the caller does with its own. */
	r = giong_addr_from(sa, len, &copy);
	sqe = r ? NULL : giong_sqe();
	if (!r && !sqe)
		r = -EBUSY;
	if (!r) {
		io_uring_prep_connect(sqe, fd, (struct sockaddr *)&copy.ss, copy.len);
		r = giong_io(sqe);
	}
	if (r < 0) {
		close(fd);
		return r;
	}
	if (family != AF_UNIX) {
		int one = 1;

		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	return giong__net_sock_new(fd, false, ops, ret);
}

/*
 * The socket that bytes written to @st reach unchanged, walking down the
 * stack as giong_stream_query(GIONG_STREAM_QUERY_SPLICE_FD) does: a socket
 * stream of ours (returned), or another kind's own descriptor (*@fd, NULL
 * returned), or NULL with the error in *@err (-ENOENT: none, a stream in the
 * stack changes the bytes or does not say that it passes them through).
 */
static struct giong__sock *splice_target(const struct giong_stream *st, int *fd, int *err)
{
	*fd = -1;
	*err = 0;
	for (unsigned depth = 0; st; depth++, st = st->lower) {
		struct giong__sock *s;
		int r;

		if (depth == GIONG_STREAM_MAX_DEPTH) {
			*err = -ELOOP;
			return NULL;
		}
		if (!st->ops) {
			*err = -EINVAL;
			return NULL;
		}
		if ((s = giong__net_sock_of(st))) {
			*err = giong__owner_check(s->owner);
			return *err ? NULL : s;
		}
		r = st->ops->query ? st->ops->query(st, GIONG_STREAM_QUERY_SPLICE_FD, fd, NULL)
				   : -ENOTSUP;
		if (r == GIONG_STREAM_QUERY_LOWER)
			continue;
		*err = r == -ENOTSUP || r > 0 ? -ENOENT : r;
		return NULL;
	}
	*err = -ENOENT;
	return NULL;
}

int giong_stream_can_splice(const struct giong_stream *st)
{
	int fd, err;

	if (!st)
		return -EINVAL;
	return splice_target(st, &fd, &err) || !err ? 1 : err;
}

ssize_t giong_stream_splice(struct giong_stream *st, int pipe_fd, size_t len)
{
	struct io_uring_sqe *sqe;
	struct giong__sock *s;
	ssize_t n;
	int fd, r;

	if (!st || pipe_fd < 0 || !len)
		return -EINVAL;
	if (!(s = splice_target(st, &fd, &r))) {
		if (r)
			return r;
		/* Another kind's own descriptor: the caller keeps the order. */
		if (!(sqe = giong_sqe()))
			return -EBUSY;
		io_uring_prep_splice(sqe, pipe_fd, -1, fd, -1, io_len(len), 0);
		return giong_io(sqe);
	}
	/* After the stream's writes in flight, as a write would be. */
	if ((r = giong__net_write_begin(s)))
		return r;
	if (!(sqe = giong_sqe())) {
		n = -EBUSY;
	} else {
		/* No memory is lent. fd_in (the pipe) is a regular descriptor
		 * (no SPLICE_F_FD_IN_FIXED); fd_out is the socket, a slot of the
		 * worker's table if IOSQE_FIXED_FILE (on_sock), the stream's until
		 * its close_direct completes, which waits for this (busy). */
		io_uring_prep_splice(sqe, pipe_fd, -1, s->rxq.fd, -1, io_len(len), 0);
		n = giong_io(giong__net_on_sock(s, sqe));
	}
	return giong__net_write_end(s, n);
}

/* As the questions about the socket walk (giong_stream_fd()): sock.h. */
int giong__net_bottom_sock(struct giong_stream *st, struct giong__sock **ret)
{
	for (unsigned depth = 0; st; depth++, st = st->lower) {
		if (depth == GIONG_STREAM_MAX_DEPTH)
			return -ELOOP;
		if (!st->ops)
			return -EINVAL;
		if ((*ret = giong__net_sock_of(st)))
			return 0;
	}
	return -ENOTSUP;
}

ssize_t giong_stream_peek(struct giong_stream *st, void *buf, size_t len)
{
	struct io_uring_sqe *sqe;
	struct giong__sock *s = NULL;
	ssize_t n;
	int r;

	if (!st || !buf || !len)
		return -EINVAL;
	if ((r = giong__net_bottom_sock(st, &s)))
		return r;
	if ((r = sock_enter(s)))
		return r;
	/* What the multishot receive took is the stream's already: a peek at
	 * the socket would skip it. */
	if (s->rxq.armed || s->rxq.count) {
		n = -EBUSY;
	} else if (!(sqe = giong_sqe())) {
		n = -EBUSY;
	} else {
		/* @buf is the caller's, lent to the kernel until giong_io
		 * returns; a slot as in giong_stream_splice(). */
		io_uring_prep_recv(sqe, s->rxq.fd, buf, io_len(len), MSG_PEEK);
		n = giong_io(giong__net_on_sock(s, sqe));
		if (s->closing && n >= 0)
			n = -EBADF;
	}
	sock_leave(s);
	return n;
}

int giong_stream_fd_install(struct giong_stream *st)
{
	struct io_uring_sqe *sqe;
	struct giong__sock *s = NULL;
	int r, slot;

	if (!st)
		return -EINVAL;
	if ((r = giong__net_bottom_sock(st, &s)))
		return r;
	if ((r = sock_enter(s)))
		return r;
	if (!s->rxq.fixed) {
		r = s->rxq.fd; /* regular already */
		goto out;
	}
	if (giong_direct_can_install() != 1) {
		r = -EOPNOTSUPP; /* before Linux 6.8 */
		goto out;
	}
	if (!(sqe = giong_sqe())) {
		r = -EBUSY;
		goto out;
	}
	/* No memory is lent; the slot is the stream's (held busy) until the
	 * close_direct below. The descriptor is O_CLOEXEC (no flags). */
	io_uring_prep_rw(GIONG_OP_FIXED_FD_INSTALL, sqe, s->rxq.fd, NULL, 0, 0);
	r = giong_io(giong__net_on_sock(s, sqe));
	if (r < 0)
		goto out;
	if (s->closing || !s->rxq.fixed) {
		/* Closed, or made regular by another task, while we waited. */
		close(r);
		r = s->closing ? -EBADF : s->rxq.fd;
		goto out;
	}
	/* The descriptor names the same open file as the slot: operations in
	 * flight on the slot hold that file, and a cancel by the descriptor
	 * finds them (it matches files). From now on the stream is a regular
	 * one, and the slot is closed: queued after every SQE that named it. */
	slot = s->rxq.fd;
	s->rxq.fd = r;
	s->rxq.fixed = 0;
	giong_close_direct_nowait((unsigned)slot);
out:
	sock_leave(s);
	return r;
}
