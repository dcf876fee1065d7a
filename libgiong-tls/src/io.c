/* SPDX-License-Identifier: MIT */
/*
 * io.c - the bytes between a TLS library and the stream beneath: what a
 * backend's I/O callbacks call (giong_tls_io_pull/push), and the generic
 * side of it: receiving ciphertext from lower (the only place a TLS stream
 * parks to read) and flushing what the library pushed (the only place it
 * parks to write).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tls_int.h"

/* The pool buffer we hold goes back the moment the library has all of it. */
static void drop_held(struct giong_tls_stream *s)
{
	giong_bufpool_dry_remove(&s->dry);
	giong_recvbuf_release(s->held);
	s->held = NULL;
}

ssize_t giong_tls_io_pull(struct giong_tls_stream *s, void *buf, size_t len)
{
	size_t have;

	if (!s || !buf)
		return -EINVAL;
	if (s->held) {
		have = giong_recvbuf_len(s->held);
		if (len > have)
			len = have;
		memcpy(buf, giong_recvbuf_data(s->held), len);
		if (len == have)
			drop_held(s);
		else
			giong_recvbuf_consume(s->held, len);
		return (ssize_t)len;
	}
	if (s->lower_err)
		return s->lower_err;
	if (s->lower_eof)
		return 0;
	return GIONG_TLS_WANT_READ;
}

ssize_t giong_tls_io_push(struct giong_tls_stream *s, const void *buf, size_t len)
{
	if (!s || (!buf && len))
		return -EINVAL;
	if (s->broken || s->closed)
		return -EPIPE;
	/* The kernel makes this side's records now: one of the library's (a
	 * KeyUpdate's answer, an alert) would carry keys and numbers that are
	 * no longer the connection's. */
	if (s->ktls_tx)
		return -EPIPE;
	if (len > s->out_cap - s->out_len) {
		/* 1000: a small response's records fit, and malloc's per-thread
		 * cache (up to 1032 bytes) serves it again after a park freed it. */
		size_t cap = s->out_cap ? s->out_cap : 1000;
		unsigned char *p;

		while (cap - s->out_len < len)
			cap *= 2;
		if (!(p = realloc(s->out, cap)))
			return -ENOMEM;
		s->out = p;
		s->out_cap = cap;
	}
	memcpy(s->out + s->out_len, buf, len);
	s->out_len += len;
	return (ssize_t)len;
}

int giong_tls_io_session(struct giong_tls_stream *s, const void *blob, size_t len)
{
	if (!s || !blob || !len)
		return -EINVAL;
	if (len > GIONG__TLS_SESSION_MAX)
		return -EMSGSIZE;
	s->ticket_seen = true; /* the receive may go to the kernel now (ktls.c) */
	if (!s->server_name || !s->cfg->tickets)
		return 0; /* a server, or a client that does not resume */
	return giong__tls_session_put(s->cfg, s->server_name, blob, len);
}

int giong_tls_io_error(const struct giong_tls_stream *s)
{
	if (!s)
		return 0;
	if (s->lower_err)
		return s->lower_err;
	if (s->lower_eof && !s->held)
		return GIONG_ETLS_TRUNCATED;
	return 0;
}

/* The pool ran dry: our unread ciphertext moves to the heap. */
static void held_off_pool(struct giong_bufpool_dry *d)
{
	struct giong_tls_stream *s = giong__container_of(d, struct giong_tls_stream, dry);

	giong_bufpool_dry_remove(d);
	if (s->held)
		giong_recvbuf_copy(&s->held); /* -ENOMEM: it stays pooled */
}

void giong__tls_held_settle(struct giong_tls_stream *s)
{
	if (s->held && giong_bufpool_is_pooled(s->held) && !s->dry._added) {
		s->dry.fn = held_off_pool;
		giong_bufpool_dry_add(&s->dry);
	}
}

void giong__tls_held_release(struct giong_tls_stream *s)
{
	if (s->held)
		drop_held(s);
}

/* Transient errors of a receive take nothing: the stream goes on after them. */
static bool transient(ssize_t r)
{
	return r == -ETIMEDOUT || r == -ECANCELED || r == -EINTR || r == -EBUSY ||
	       r == GIONG_ESHUTDOWN || r == GIONG_ENOTWORKER || r == -EPERM;
}

int giong__tls_fill(struct giong_tls_stream *s)
{
	struct giong_recvbuf *b = NULL;
	ssize_t n;

	if (s->held || s->lower_eof || s->lower_err)
		return 0; /* the library has something to pull already */
	n = giong_stream_recv(s->base.lower, &b);
	if (s->closed) {
		giong_recvbuf_release(b);
		return -EBADF;
	}
	if (n > 0) {
		s->held = b;
		return 0;
	}
	if (n == 0) {
		s->lower_eof = true;
		return 0;
	}
	if (!transient(n))
		s->lower_err = (int)n;
	return (int)n;
}

static int write_lock(struct giong_tls_stream *s)
{
	int r;

	while (s->writing) {
		r = giong_waitq_wait(&s->write_q, 0);
		if (r < 0)
			return r; /* s may be closed (and freed) now: touch nothing */
	}
	if (s->closed)
		return -EBADF;
	s->writing = true;
	return 0;
}

static void write_unlock(struct giong_tls_stream *s)
{
	s->writing = false;
	if (!s->closed)
		giong_waitq_wake_one(&s->write_q, 0);
}

void giong__tls_take_out(struct giong_tls_stream *s)
{
	unsigned char *p = s->out;
	size_t cap = s->out_cap;

	s->out = s->flying;
	s->out_cap = s->flying_cap;
	s->flying = p;
	s->flying_cap = cap;
	s->flying_len = s->out_len;
	s->out_len = 0;
}

/* Send what the library pushed, in order. Write lock held. A failure part
 * way leaves an unknown prefix of a record sent: the stream is broken. */
static int flush_locked(struct giong_tls_stream *s)
{
	if (s->broken) { /* after a cut record nothing more may follow */
		s->out_len = 0;
		return -EPIPE;
	}
	while (s->out_len) {
		ssize_t r;

		giong__tls_take_out(s);
		r = giong_stream_write_all(s->base.lower, s->flying, s->flying_len);
		if (s->closed)
			return -EBADF;
		s->flying_len = 0;
		if (r < 0) {
			s->broken = -EPIPE;
			s->out_len = 0;
			return (int)r;
		}
	}
	return 0;
}

int giong__tls_flush(struct giong_tls_stream *s)
{
	int r;

	if (!s->out_len)
		return 0;
	/* A writer holds the lock: what we pushed queues behind its batch, and
	 * its loop (or send_start's completion) sends it. Waiting for it here
	 * could wait for a peer that waits for us to read. */
	if (s->writing)
		return 0;
	giong__tls_held_settle(s); /* we may park holding a pool buffer */
	if ((r = write_lock(s)))
		return r;
	r = flush_locked(s);
	if (!s->closed)
		write_unlock(s);
	return r;
}

int giong__tls_write_lock(struct giong_tls_stream *s)
{
	return write_lock(s);
}

void giong__tls_write_unlock(struct giong_tls_stream *s)
{
	write_unlock(s);
}

int giong__tls_flush_locked(struct giong_tls_stream *s)
{
	return flush_locked(s);
}
