/* SPDX-License-Identifier: MIT */
/*
 * stream.c - the TLS stream: struct giong_stream_ops over @lower (the handshake
 * and the questions about a connection are handshake.c's).
 *
 * Every call runs the backend (which never suspends) until it says
 * GIONG_TLS_WANT_READ, then parks in lower's receive (io.c) and runs it
 * again: a timeout or a cancellation while parked takes nothing, so
 * nothing is lost (a record half received stays in the library or in
 * s->held). Records the library pushes leave in one write of lower per
 * call, under the write lock.
 *
 * Lifetime: close marks the stream closed and frees it once no task is
 * inside one of its calls (busy) and nothing it lent is in flight (a
 * send_start's batch, a deferred readable notice).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "giong_faults.h"
#include "tls_int.h"

#include <giong/net/ktls.h>
#include <giong/tls/stream.h>

#define ERRTEXT_LEN GIONG__TLS_ERRTEXT
/* Plaintext pieces below this are gathered into one record, not one each. */
#define GATHER_BELOW 4096u

static void send_done(struct giong_stream_send *lreq, ssize_t res);

static struct giong_tls_stream *to_tls(struct giong_stream *st)
{
	return (struct giong_tls_stream *)st;
}

void giong__tls_free_stream(struct giong_tls_stream *s)
{
	giong__tls_held_release(s);
	if (s->conn && s->be->conn_free)
		s->be->conn_free(s->conn);
	giong_tls_config_free(s->cfg);
	free(s->out);
	free(s->flying);
	free(s->stage);
	free(s->errtext);
	free(s->server_name);
	free(s->kept_alpn);
	free(s);
}

static void maybe_free(struct giong_tls_stream *s)
{
	if (s->closed && !s->busy && !s->inflight)
		giong__tls_free_stream(s);
}

/* Enter a call: the owner worker only, not after close. */
/* Whether the calling thread may use @s: its worker's, and @s not closed. */
static int owned(const struct giong_tls_stream *s)
{
	int w = giong_worker_index();

	if (w < 0)
		return GIONG_ENOTWORKER;
	if (w != s->worker)
		return -EPERM;
	return s->closed ? -EBADF : 0;
}

static int enter(struct giong_tls_stream *s)
{
	int r = owned(s);

	if (r == 0)
		s->busy++;
	return r;
}

static void leave(struct giong_tls_stream *s)
{
	s->busy--;
	if (s->closed)
		maybe_free(s);
	else
		giong__tls_held_settle(s);
}

/* Keep the backend's words for @err (its error queue does not last). */
int giong__tls_failed(struct giong_tls_stream *s, int err)
{
	if (err == GIONG_TLS_WANT_READ)
		err = GIONG_ETLS; /* a backend that wants to read in write: a bug */
	if (s->conn && s->be->error_text && (s->errtext || (s->errtext = malloc(ERRTEXT_LEN)))) {
		s->errtext[0] = '\0';
		s->be->error_text(s->conn, err, s->errtext, ERRTEXT_LEN);
		s->errtext[ERRTEXT_LEN - 1] = '\0';
	}
	return err;
}

/* Take the read lock: 0, or -errno (the stream may be closed then). */
static int read_lock(struct giong_tls_stream *s)
{
	while (s->reading) {
		int r = giong_waitq_wait(&s->read_q, 0);

		if (r < 0)
			return r;
		if (s->closed)
			return -EBADF;
	}
	s->reading = true;
	return 0;
}

static void read_unlock(struct giong_tls_stream *s)
{
	s->reading = false;
	giong_waitq_wake_one(&s->read_q, 0);
}

/* Under kernel TLS receive: lower's plaintext as it is, into @buf or (@ret) a buffer. */
static ssize_t ktls_read_plain(struct giong_tls_stream *s, void *buf, size_t len,
			       struct giong_recvbuf **ret)
{
	ssize_t r;

	if ((r = read_lock(s)))
		return r;
	r = giong__tls_ktls_read(s, buf, len, ret);
	if (s->closed) {
		if (ret) {
			giong_recvbuf_release(*ret);
			*ret = NULL;
		}
		return -EBADF;
	}
	read_unlock(s);
	return r;
}

/* One read of decrypted bytes into @buf; the common part of recv and read. */
static ssize_t read_plain(struct giong_tls_stream *s, void *buf, size_t len)
{
	ssize_t r;

	if (s->broken)
		return -EPIPE;
	if (s->ktls_rx)
		return ktls_read_plain(s, buf, len, NULL);
	if (s->peer_closed)
		return 0;
	if ((r = read_lock(s)))
		return r;
	if (s->ktls_rx) { /* handed over while we waited for the lock */
		read_unlock(s);
		return ktls_read_plain(s, buf, len, NULL);
	}
	RUN_BACKEND(s, r, TLS_STEP(GIONG_ETLS, s->be->read(s->conn, buf, len)));
	/* At a record boundary with nothing held, the receive may go to the
	 * kernel (after the send direction): tried after each read until it does. */
	if (r > 0 && s->ktls_tx && !s->ktls_rx && !s->closed)
		giong__tls_ktls_rx(s);
	if (s->closed)
		return -EBADF;
	read_unlock(s);
	if (r == 0) {
		s->peer_closed = true;
		return 0;
	}
	if (giong__tls_error(r))
		giong__tls_failed(s, (int)r);
	/* Records the read produced (a KeyUpdate answer, an alert) leave now. */
	if (s->out_len && r != -ETIMEDOUT && r != -ECANCELED)
		giong__tls_flush(s);
	return r;
}

/* The buffer a recv decrypts into: as big as the next record, when its
 * header is in what lower gave us (a ciphertext record is never shorter than
 * its plaintext), else a whole record's worth. A small request then costs a
 * small allocation, which malloc serves from its per-thread cache. */
static size_t recv_size(struct giong_tls_stream *s)
{
	const unsigned char *h;

	if (s->held && giong_recvbuf_len(s->held) >= 5 &&
	    !(s->be->pending && s->be->pending(s->conn))) {
		h = giong_recvbuf_data(s->held);
		if (h[0] == 23) { /* application_data */
			size_t len = (size_t)h[3] << 8 | h[4];

			return len && len < GIONG__TLS_RECORD ? len : GIONG__TLS_RECORD;
		}
	}
	return GIONG__TLS_RECORD;
}

static ssize_t tls_recv(struct giong_stream *st, struct giong_recvbuf **ret)
{
	struct giong_tls_stream *s = to_tls(st);
	struct giong_recvbuf *b;
	size_t room;
	ssize_t r;

	if (!ret)
		return -EINVAL;
	*ret = NULL;
	if ((r = enter(s)))
		return r;
	if (s->ktls_rx) { /* the kernel's plaintext buffer, as lower gave it */
		r = s->broken ? -EPIPE : ktls_read_plain(s, NULL, 0, ret);
		leave(s);
		return r;
	}
	if ((r = giong_recvbuf_alloc(recv_size(s), &b)) == 0) {
		void *tail = giong_recvbuf_tail(b, &room);

		r = read_plain(s, tail, room);
		if (r > 0) {
			giong_recvbuf_commit(b, (size_t)r);
			*ret = b;
		} else {
			giong_recvbuf_release(b);
		}
	}
	leave(s);
	return r;
}

static ssize_t tls_read(struct giong_stream *st, void *buf, size_t len)
{
	struct giong_tls_stream *s = to_tls(st);
	ssize_t r;

	if (!buf || !len)
		return -EINVAL;
	if (len > INT_MAX)
		len = INT_MAX;
	if ((r = enter(s)))
		return r;
	r = read_plain(s, buf, len);
	leave(s);
	return r;
}

/* Encrypt from @iov, starting @skip bytes in, up to @max plaintext bytes.
 * Small pieces are gathered into one record. Returns the plaintext count
 * taken (> 0) or an error (the stream is then broken). */
static ssize_t encrypt_iov(struct giong_tls_stream *s, const struct iovec *iov, int n, size_t skip,
			   size_t max)
{
	unsigned char local[2048];
	size_t done = 0;
	int i = 0;

	while (i < n && skip >= iov[i].iov_len)
		skip -= iov[i++].iov_len;
	while (i < n && done < max) {
		const unsigned char *p = (const unsigned char *)iov[i].iov_base + skip;
		size_t len = iov[i].iov_len - skip;
		ssize_t r;

		if (len == 0) {
			i++;
			skip = 0;
			continue;
		}
		if (len < GATHER_BELOW && i + 1 < n) {
			/* Gather this and the following pieces into one record. */
			size_t g = 0, cap = sizeof(local), want = 0;
			unsigned char *stage = local;

			/* On the stack when the pieces are small (an HTTP head and
			 * a small body): no allocation per response. */
			for (int j = i; j < n && want <= sizeof(local); j++)
				want += iov[j].iov_len - (j == i ? skip : 0);
			if (want > sizeof(local)) {
				if (!s->stage && !(s->stage = malloc(GIONG__TLS_RECORD)))
					return done ? (ssize_t)done : -ENOMEM;
				stage = s->stage;
				cap = GIONG__TLS_RECORD;
			}
			while (i < n && g < cap && done + g < max) {
				size_t take = iov[i].iov_len - skip;

				if (take > cap - g)
					take = cap - g;
				if (take > max - done - g)
					take = max - done - g;
				if (take) /* an empty piece may have a NULL base */
					memcpy(stage + g,
					       (const unsigned char *)iov[i].iov_base + skip, take);
				g += take;
				skip += take;
				if (skip == iov[i].iov_len) {
					i++;
					skip = 0;
				}
			}
			p = stage;
			len = g;
		} else {
			if (len > max - done)
				len = max - done;
			if (len > GIONG__TLS_RECORD)
				len = GIONG__TLS_RECORD; /* one record per call of the backend */
			skip += len;
			if (skip == iov[i].iov_len) {
				i++;
				skip = 0;
			}
		}
		r = TLS_STEP(GIONG_ETLS, s->be->write(s->conn, p, len));
		if (r < 0 || (size_t)r != len) {
			s->broken = -EPIPE;
			return giong__tls_failed(s, r < 0 ? (int)r : GIONG_ETLS);
		}
		done += len;
	}
	return (ssize_t)done;
}

static int check_iov(const struct iovec *iov, int n, size_t *total)
{
	size_t t = 0;

	if (!iov || n < 1 || n > IOV_MAX)
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		if (!iov[i].iov_base && iov[i].iov_len)
			return -EINVAL;
		t += iov[i].iov_len;
		if (t < iov[i].iov_len)
			return -EINVAL;
	}
	*total = t;
	return 0;
}

/* Under kernel TLS the plaintext goes to lower as it is, the kernel making the
 * records: all of it for GIONG_WRITE_ALL (lower may take less at a time), else
 * what one write of lower takes. The count sent in *@sent; the last result. */
static ssize_t ktls_writev(struct giong_tls_stream *s, const struct iovec *iov, int n,
			   unsigned flags, size_t *sent)
{
	ssize_t r = 0;

	if (!(flags & GIONG_WRITE_ALL)) {
		r = giong_stream_writev(s->base.lower, iov, n);
		*sent = r > 0 ? (size_t)r : 0;
		return r;
	}
	for (int i = 0; i < n && r >= 0; i++) {
		if (!iov[i].iov_len)
			continue;
		r = giong_stream_write_all(s->base.lower, iov[i].iov_base, iov[i].iov_len);
		if (r > 0)
			*sent += (size_t)r;
	}
	if (r < 0)
		s->broken = -EPIPE; /* a part may have left: nothing may follow it */
	return r;
}

static ssize_t tls_writev(struct giong_stream *st, const struct iovec *iov, int n, unsigned flags)
{
	struct giong_tls_stream *s = to_tls(st);
	size_t total, sent = 0;
	ssize_t r;

	if ((r = check_iov(iov, n, &total)))
		return r;
	if ((r = enter(s)))
		return r;
	if (s->broken || s->shut_wr) {
		r = -EPIPE;
		goto out;
	}
	if (total == 0)
		goto out;
	if ((r = giong__tls_write_lock(s)))
		goto out;
	if (s->broken || s->shut_wr) { /* while we waited for the lock */
		r = -EPIPE;
		giong__tls_write_unlock(s);
		goto out;
	}
	if (s->ktls_tx) {
		r = ktls_writev(s, iov, n, flags, &sent);
		goto unlock;
	}
	do {
		r = encrypt_iov(s, iov, n, sent, GIONG__TLS_WRITE_MAX);
		if (r > 0) {
			int fr = giong__tls_flush_locked(s);

			if (fr < 0)
				r = fr;
			else
				sent += (size_t)r;
		}
	} while (r > 0 && (flags & GIONG_WRITE_ALL) && sent < total);
unlock:
	if (!s->closed)
		giong__tls_write_unlock(s);
out:
	leave(s);
	return r < 0 ? r : (ssize_t)sent;
}

/* Hand what the library pushed to lower as one batch, lent until send_done.
 * The write lock is held (s->writing) until then. */
static int start_batch(struct giong_tls_stream *s)
{
	int r;

	giong__tls_take_out(s);
	s->flying_iov.iov_base = s->flying;
	s->flying_iov.iov_len = s->flying_len;
	s->lower_send.done = send_done;
	r = giong_stream_send_start(s->base.lower, &s->lower_send, &s->flying_iov, 1);
	if (r < 0) {
		s->flying_len = 0;
		return r;
	}
	s->writing = true;
	s->inflight++;
	return 0;
}

/* The batch of a send_start left (or failed): report to the caller. */
static void send_done(struct giong_stream_send *lreq, ssize_t res)
{
	struct giong_tls_stream *s = giong__container_of(lreq, struct giong_tls_stream, lower_send);
	struct giong_stream_send *req = s->user_send;
	ssize_t plain = (ssize_t)s->user_send_len;
	bool all = res >= 0 && (size_t)res == s->flying_len;

	s->user_send = NULL;
	s->flying_len = 0;
	s->inflight--;
	s->writing = false;
	if (!all) {
		s->broken = -EPIPE;
		s->out_len = 0; /* nothing may follow a cut record */
	}
	if (s->flying_cap > GIONG__TLS_WRITE_MAX) { /* a big response's batch: not kept */
		free(s->flying);
		s->flying = NULL;
		s->flying_cap = 0;
	}
	if (s->closed) {
		maybe_free(s);
	} else if (s->out_len && !s->broken) {
		/* A reader's records (a KeyUpdate answer) queued behind the batch:
		 * they leave now, still under the lock. */
		if (start_batch(s) < 0) {
			s->broken = -EPIPE;
			giong_waitq_wake_one(&s->write_q, 0);
		}
	} else {
		giong_waitq_wake_one(&s->write_q, 0);
	}
	/* Last: the callback may close the stream (and so free it). */
	if (req)
		req->done(req, all ? plain : res < 0 ? res : -EPIPE);
}

/* A send under kernel TLS (ktls_send_start) is over: report it as is. */
static void ktls_send_done(struct giong_stream_send *lreq, ssize_t res)
{
	struct giong_tls_stream *s = giong__container_of(lreq, struct giong_tls_stream, lower_send);
	struct giong_stream_send *req = s->user_send;

	s->user_send = NULL;
	s->inflight--;
	s->writing = false;
	if (res < 0 || (size_t)res != s->user_send_len)
		s->broken = -EPIPE;
	if (s->closed)
		maybe_free(s);
	else
		giong_waitq_wake_one(&s->write_q, 0);
	/* Last: the callback may close the stream (and so free it). */
	if (req)
		req->done(req, res);
}

/* Under kernel TLS a send is lower's: the caller's @iov and bytes are lent to
 * lower's send until ktls_send_done, as they were to us. */
static int ktls_send_start(struct giong_tls_stream *s, struct giong_stream_send *req,
			   const struct iovec *iov, int n, size_t total)
{
	int r;

	s->user_send = req;
	s->user_send_len = total;
	req->_stream = &s->base;
	s->lower_send.done = ktls_send_done;
	if ((r = giong_stream_send_start(s->base.lower, &s->lower_send, iov, n)) < 0) {
		s->user_send = NULL;
		return r;
	}
	s->writing = true;
	s->inflight++;
	return 0;
}

static int tls_send_start(struct giong_stream *st, struct giong_stream_send *req,
			  const struct iovec *iov, int n)
{
	struct giong_tls_stream *s = to_tls(st);
	size_t total;
	ssize_t r;

	if (!req || !req->done || (r = check_iov(iov, n, &total)))
		return -EINVAL;
	/* The records of a batch must fit lower's INT_MAX: TLS adds at most
	 * 256 bytes per 16 KiB record. */
	if (total > INT_MAX / 2)
		return -EINVAL;
	if ((r = enter(s)))
		return (int)r;
	if (!st->lower->ops->send_start) {
		r = -ENOTSUP; /* before any record is made: nothing to undo */
		goto out;
	}
	if (s->broken || s->shut_wr) {
		r = -EPIPE;
		goto out;
	}
	if (s->writing || s->flying_len) {
		r = -EBUSY;
		goto out;
	}
	if (s->ktls_tx) {
		r = ktls_send_start(s, req, iov, n, total);
		goto out;
	}
	if (total && (r = encrypt_iov(s, iov, n, 0, total)) < 0)
		goto out;
	s->user_send = req;
	s->user_send_len = total;
	req->_stream = st;
	r = start_batch(s); /* an empty one too: it completes through done */
	if (r < 0) {
		s->user_send = NULL;
		if (total)
			s->broken = -EPIPE; /* the records were made and are lost */
	}
out:
	leave(s);
	return (int)r;
}

/*
 * The write side cannot end with a close_notify (the stream is broken: a
 * record may be cut, the library failed; or the close_notify itself could
 * not be made or sent): end the stream beneath instead, so that the peer
 * learns of the end now (as a truncation), not when this stream is closed,
 * and a peer reading until the end does not wait for bytes that will never
 * come. Returns @err: the TLS end was not clean.
 */
static int shut_lower_instead(struct giong_tls_stream *s, int how, int err)
{
	if (!s->closed && !s->shut_wr) {
		s->shut_wr = true;
		(void)giong_stream_shutdown(s->base.lower, how);
	}
	return err;
}

static int tls_shutdown(struct giong_stream *st, int how)
{
	struct giong_tls_stream *s = to_tls(st);
	int r;

	if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR)
		return -EINVAL;
	if ((r = enter(s)))
		return r;
	if (how != SHUT_RD && s->broken) { /* every time: the end was not clean */
		r = shut_lower_instead(s, how, -EPIPE);
		goto out;
	}
	if (how != SHUT_RD && !s->shut_wr) {
		if ((r = giong__tls_write_lock(s)))
			goto out;
		if (s->broken) {
			giong__tls_write_unlock(s);
			r = shut_lower_instead(s, how, -EPIPE);
			goto out;
		}
		if (s->ktls_tx) {
			/* close_notify through the kernel: the library writes no
			 * more (its sequence numbers stopped at the hand-over). */
			ssize_t k = giong_stream_ktls_send_record(st->lower, 21, "\x01\x00", 2);

			r = k < 0 ? (int)k : 0;
		} else {
			r = s->be->shutdown ? s->be->shutdown(s->conn) : 0;
			if (r < 0)
				giong__tls_failed(s, r);
			else
				r = giong__tls_flush_locked(s);
		}
		if (!s->closed)
			giong__tls_write_unlock(s);
		if (r < 0) {
			r = shut_lower_instead(s, how, r);
			goto out;
		}
		s->shut_wr = true;
	}
	r = s->closed ? -EBADF : giong_stream_shutdown(st->lower, how);
out:
	leave(s);
	return r;
}

/* The lower stream became readable: tell the TLS stream's reader. */
static void lower_readable(struct giong_stream *lower, void *ctx)
{
	struct giong_tls_stream *s = ctx;

	(void)lower;
	if (!s->closed && s->readable_fn)
		s->readable_fn(&s->base, s->readable_ctx);
}

/* Something can be read without waiting for lower. */
static bool ready(struct giong_tls_stream *s)
{
	return s->held || s->lower_eof || s->lower_err || s->peer_closed ||
	       (s->conn && s->be->pending && s->be->pending(s->conn));
}

static int park(struct giong_tls_stream *s);

static void deferred_ready(struct giong_soon *soon, void *ctx)
{
	struct giong_tls_stream *s = ctx;

	(void)soon;
	s->inflight--;
	s->readable_deferred = false;
	if (s->closed) {
		maybe_free(s);
		return;
	}
	if (!s->readable_fn)
		return;
	if (ready(s)) {
		s->busy++; /* the callback may close s */
		s->readable_fn(&s->base, s->readable_ctx);
		s->busy--;
		maybe_free(s);
	} else if (park(s) < 0) {
		/* Nobody would watch: let the reader find out what there is. */
		s->busy++;
		s->readable_fn(&s->base, s->readable_ctx);
		s->busy--;
		maybe_free(s);
	}
}

/* Wait for lower with nothing held: release what idles, pass the wait down. */
static int park(struct giong_tls_stream *s)
{
	int r;

	if (ready(s)) {
		if (s->readable_deferred)
			return 0;
		/* Tell from the worker loop, not from inside the caller: on its
		 * next turn (giong_call_soon(), no SQE). s->ready_soon is queued,
		 * and s kept (inflight), until deferred_ready() runs. */
		if ((r = giong_call_soon(&s->ready_soon, deferred_ready, s)))
			return r;
		s->readable_deferred = true;
		s->inflight++;
		return 0;
	}
	if (!s->writing) {
		free(s->stage);
		s->stage = NULL;
		if (!s->out_len) {
			free(s->out);
			s->out = NULL;
			s->out_cap = 0;
		}
		if (!s->flying_len) {
			free(s->flying);
			s->flying = NULL;
			s->flying_cap = 0;
		}
	}
	if (s->conn && s->be->idle)
		s->be->idle(s->conn);
	giong__tls_held_release(s); /* nothing held (ready() said so); for clarity */
	r = giong_stream_on_readable(s->base.lower, lower_readable, s);
	s->lower_watched = r == 0;
	return r;
}

static int tls_on_readable(struct giong_stream *st, giong_stream_readable_fn fn, void *ctx)
{
	struct giong_tls_stream *s = to_tls(st);
	int r;

	if ((r = enter(s)))
		return r;
	s->readable_fn = fn;
	s->readable_ctx = ctx;
	if (fn) {
		r = park(s);
	} else {
		r = s->lower_watched ? giong_stream_on_readable(st->lower, NULL, NULL) : 0;
		s->lower_watched = false;
	}
	if (r < 0)
		s->readable_fn = NULL;
	leave(s);
	return r;
}

/* Best effort: close_notify leaves with the rest of the tick, unwaited. */
static void close_notify_nowait(struct giong_tls_stream *s)
{
	if (!s->handshaken || s->broken || s->shut_wr || s->writing || s->flying_len)
		return;
	if (s->ktls_tx) {
		/* the kernel's record, if the socket takes it at once */
		(void)giong_stream_ktls_send_record_nowait(s->base.lower, 21, "\x01\x00", 2);
		return;
	}
	if (!s->be->shutdown || !s->base.lower->ops->send_start)
		return;
	if (s->be->shutdown(s->conn) < 0 || !s->out_len)
		return;
	s->user_send = NULL;
	start_batch(s);
}

static int tls_close(struct giong_stream *st)
{
	struct giong_tls_stream *s = to_tls(st);
	int w = giong_worker_index();

	if (w < 0)
		return GIONG_ENOTWORKER;
	if (w != s->worker)
		return -EPERM;
	if (s->closed)
		return -EBADF;
	close_notify_nowait(s);
	/* lower may outlive us (giong_stream_keep_lower()): it must not call
	 * back into freed memory. */
	if (s->lower_watched)
		giong_stream_on_readable(s->base.lower, NULL, NULL);
	s->lower_watched = false;
	s->closed = true;
	s->readable_fn = NULL;
	giong_waitq_wake_all(&s->read_q, -EBADF);
	giong_waitq_wake_all(&s->write_q, -EBADF);
	giong__tls_held_release(s);
	maybe_free(s);
	return 0;
}

/* What TLS knows itself: the protocol agreed by ALPN, and that the bytes
 * written reach no descriptor as they are (records do), except under kernel
 * TLS, where the socket makes them. The socket is the lower's to tell. */
static int tls_query(const struct giong_stream *st, int what, void *out, size_t *len)
{
	const struct giong_tls_stream *s = giong__tls_of(st);
	const char *p;
	size_t l;
	int r;

	/* Its owner's question only, as every other operation: the backend's
	 * connection is not to be read from another thread, nor once closed. */
	if (!s)
		return -EINVAL;
	if ((r = owned(s)))
		return r;
	switch (what) {
	case GIONG_STREAM_QUERY_ALPN:
		if (!(p = giong_tls_alpn(st, &l)))
			return -ENOENT;
		*(const char **)out = p;
		*len = l;
		return 0;
	case GIONG_STREAM_QUERY_SPLICE_FD:
		/* Under kernel TLS the socket makes the records: what is spliced
		 * into it is encrypted on the way, as what is written is. */
		return s->ktls_tx ? GIONG_STREAM_QUERY_LOWER : -ENOENT;
	default:
		return -ENOTSUP; /* GIONG_STREAM_QUERY_SOCKET: asks lower */
	}
}

const struct giong_stream_ops giong__tls_ops = {
	.name = "tls",
	.recv = tls_recv,
	.read = tls_read,
	.writev = tls_writev,
	.shutdown = tls_shutdown,
	.close = tls_close,
	.set_on_readable = tls_on_readable,
	.send_start = tls_send_start,
	.query = tls_query,
};
