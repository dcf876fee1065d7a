/* SPDX-License-Identifier: MIT */
/*
 * conn.c - a connection's life, whatever its protocol (see conn.h and
 * giong/http/server.h): parked with no task, a task when bytes arrive (its
 * wrap first, then its protocol's serve()), the batch of responses sent
 * without waiting, parked again.
 *
 * Ownership of the batch: while batch->send is in flight (c->sending), the
 * kernel reads batch->out's bytes; nothing appends to the batch, frees it or
 * moves it until batch_sent() ran. A protocol waits for that
 * (giong__http_conn_wait_sent()) before its first append after a flush.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/sockios.h>

#include "common/conn.h"

static intptr_t conn_task(void *arg);

/* ------------------------------------------------------------ batches */

static struct giong__http_batch *batch_get(struct giong__http_worker *w)
{
	struct giong__http_batch *b = giong__list_entry(giong__list_pop_front(&w->batches),
							struct giong__http_batch, link);

	if (b) {
		w->nbatches--;
		return b;
	}
	b = calloc(1, sizeof(*b));
	if (b)
		giong__http_out_init(&b->out, GIONG__HTTP_BATCH_MAX + 128u * 1024);
	return b;
}

static void batch_put(struct giong__http_worker *w, struct giong__http_batch *b)
{
	giong__http_out_clear(&b->out);
	if (b->out.cap > GIONG__HTTP_BATCH_KEEP)
		giong__http_out_free(&b->out); /* a big one does not stay */
	if (w->nbatches >= GIONG__HTTP_BATCH_CACHE) {
		giong__http_out_free(&b->out);
		free(b);
		return;
	}
	giong__list_push_front(&w->batches, &b->link); /* the warmest first */
	w->nbatches++;
}

static void worker_conn_ended(struct giong__http_worker *w)
{
	giong_waitq_wake_all(&w->conns_wait, 0);
	if (!w->stats.open)
		giong_waitq_wake_all(&w->sweep_wait, 0);
}

static void stream_ended(struct giong__http_stream_wait *sw)
{
	sw->ended = true;
	sw->conn = NULL;
	giong_waitq_wake_all(&sw->wq, 0);
}

/* ------------------------------------------------------------ the connection */

void giong__http_conn_drop_handed(struct giong_http_conn *c)
{
	if (!c->handed)
		return;
	giong__http_input_release(c->handed);
	free(c->handed);
	c->handed = NULL;
}

static void conn_free(struct giong_http_conn *c)
{
	struct giong__http_worker *w = c->w;

	if (c->batch)
		batch_put(w, c->batch);
	if (c->pstate && c->proto && c->proto->conn_free)
		c->proto->conn_free(c->pstate);
	giong__http_conn_drop_handed(c);
	free(c->client);
	if (c->ended)
		stream_ended(c->ended);
	w->stats.open--;
	free(c);
	worker_conn_ended(w);
}

static void unpark(struct giong_http_conn *c)
{
	struct giong__http_worker *w = c->w;

	if (c->park == GIONG__HTTP_IDLE)
		giong__list_remove(&w->idle, &c->link);
	else if (c->park == GIONG__HTTP_DRAINING)
		giong__list_remove(&w->draining, &c->link);
	else if (c->park != GIONG__HTTP_WAITING)
		return;
	if (c->park != GIONG__HTTP_WAITING)
		w->stats.idle--;
	c->park = GIONG__HTTP_ACTIVE;
}

/* Close the stream; the connection goes now, or when its send ends. */
static void conn_close(struct giong_http_conn *c)
{
	if (c->lingering) {
		c->closing = true; /* its linger task, reading the stream, closes it now */
		return;
	}
	unpark(c);
	if (c->s)
		giong_stream_close(c->s); /* cancels a send in flight */
	c->s = NULL;
	if (c->sending || c->task) {
		/* batch_sent(), or the connection's task (spawned and not yet run, when a
		 * protocol's other task closes it), frees it. */
		c->closing = true;
		return;
	}
	conn_free(c);
}

/* Spawn the connection's task (it counts from now: a close meanwhile waits for it). */
static int spawn_task(struct giong_http_conn *c)
{
	int r;

	c->task = true;
	if ((r = giong_spawn(conn_task, c, NULL)))
		c->task = false;
	return r;
}

void giong__http_conn_close_parked(struct giong_http_conn *c)
{
	conn_close(c);
}

/* A parked connection has bytes (or its end): a task from the pool. */
static void conn_readable(struct giong_stream *s, void *ctx)
{
	struct giong_http_conn *c = ctx;

	(void)s;
	if (c->park == GIONG__HTTP_ACTIVE)
		return; /* its task will read them */
	unpark(c);
	if ((!c->batch && !(c->batch = batch_get(c->w))) || spawn_task(c)) {
		conn_close(c);
		return;
	}
}

/* A connection with no task holds no output buffer: back to the worker's cache,
 * unless its send is in flight (the kernel reads it until batch_sent()) or it holds
 * bytes (HTTP/2: a writer task of the protocol's writes them, as it splices a DATA
 * payload after its header or as TLS takes them, while the connection parks). */
static void give_back_batch(struct giong_http_conn *c)
{
	if (!c->sending && c->batch && !c->batch->out.len) {
		batch_put(c->w, c->batch);
		c->batch = NULL;
	}
}

/* On the idle list, or the draining one while its last batch is in flight. */
int giong__http_conn_park(struct giong_http_conn *c)
{
	struct giong__http_worker *w = c->w;
	struct giong__list *l = c->sending ? &w->draining : &w->idle;
	int r;

	unpark(c); /* parked already (HTTP/2: waiting, its last exchange just ended) */
	give_back_batch(c);
	c->park = c->sending ? GIONG__HTTP_DRAINING : GIONG__HTTP_IDLE;
	c->parked_at = giong_now_ms();
	/* The sweeper sleeps until the first expiry it knew of; one that comes
	 * sooner (the first idle one while it waits for a draining one's write
	 * deadline, say) wakes it. In the common case none does: entries of a
	 * list expire in the order they park. */
	if (c->parked_at + (c->sending ? w->srv->limits.write_timeout_ms
				       : w->srv->limits.idle_timeout_ms) <
	    w->sweep_at)
		giong_waitq_wake_all(&w->sweep_wait, 0);
	giong__list_push_back(l, &c->link);
	w->stats.idle++;
	r = giong_stream_on_readable(c->s, conn_readable, c);
	if (r) {
		unpark(c);
		/* No batch to answer with: its own code, as the stream's errors (an
		 * allocation of its notice among them) leave the task waiting itself
		 * and the batch in flight untouched. */
		if (!c->batch && !(c->batch = batch_get(w)))
			return -ENOBUFS;
	}
	return r;
}

int giong__http_conn_wait_bytes(struct giong_http_conn *c)
{
	int r;

	give_back_batch(c);
	c->park = GIONG__HTTP_WAITING;
	r = giong_stream_on_readable(c->s, conn_readable, c);
	if (r)
		c->park = GIONG__HTTP_ACTIVE;
	return r;
}

int giong__http_conn_make_idle(struct giong_http_conn *c)
{
	if (c->park != GIONG__HTTP_WAITING)
		return -EAGAIN; /* a task runs on it, or was spawned for it: it parks itself */
	return giong__http_conn_park(c);
}

struct giong__http_batch *giong__http_conn_batch(struct giong_http_conn *c)
{
	if (!c->batch)
		c->batch = batch_get(c->w);
	return c->batch;
}

/* The send of the batch is over (from its completion, outside any task). */
static void batch_sent(struct giong_stream_send *req, ssize_t res)
{
	struct giong_http_conn *c = req->data;
	struct giong__http_batch *b = c->batch;

	c->sending = false;
	if (res != (ssize_t)b->iov.iov_len)
		c->broken = true;
	giong__http_out_clear(&b->out);
	if (c->closing) {
		if (c->lingering && c->sent_wait)
			giong_waitq_wake_all(c->sent_wait, 0); /* the linger task frees it */
		else if (!c->task && !c->lingering)
			conn_free(c);
		return;
	}
	if (c->sent_wait) {
		giong_waitq_wake_all(c->sent_wait, 0);
		return;
	}
	if (c->proto && c->proto->sent) {
		/* Parked while its batch left: idle from now (its idle timeout, not the
		 * write timeout). The protocol drives its own sends. */
		if (c->park == GIONG__HTTP_DRAINING && giong__http_conn_park(c)) {
			conn_close(c);
			return;
		}
		c->proto->sent(c, c->broken);
		return;
	}
	if (c->park != GIONG__HTTP_DRAINING)
		return; /* a task runs on it and will see */
	/* Parked while sending: now idle, and it gives its batch back. */
	unpark(c);
	if (c->broken || c->last || c->w->shutting_down) {
		conn_close(c);
		return;
	}
	if (giong__http_conn_park(c))
		conn_close(c);
}

void giong__http_conn_close(struct giong_http_conn *c)
{
	conn_close(c);
}

/* Bytes written to @c's socket that its peer has not acknowledged yet (0 when the
 * socket cannot tell). */
static int unacked(struct giong_http_conn *c)
{
	int fd = giong_stream_fd(c->s), n = 0;

	if (fd < 0 || ioctl(fd, SIOCOUTQ, &n) < 0)
		return 0;
	return n;
}

/* The peer's bytes read and dropped until it closes, or until everything sent was
 * acknowledged and it then kept quiet for GIONG__HTTP_LINGER_MS; at most
 * GIONG__HTTP_DISCARD_MAX bytes; or a close asked meanwhile (c->closing). A peer that
 * reads slowly is quiet while it reads (a client with a large window sends nothing
 * then): what it has not acknowledged is looked at every GIONG__HTTP_LINGER_TICK_MS. */
static void linger_drain(struct giong_http_conn *c)
{
	uint64_t quiet_since = giong_now_ms();
	size_t drained = 0;

	while (!c->closing && drained < GIONG__HTTP_DISCARD_MAX) {
		struct giong_recvbuf *rb;
		uint64_t saved = giong_deadline_in(GIONG__HTTP_LINGER_TICK_MS);
		ssize_t n = giong_stream_recv(c->s, &rb);

		giong_deadline_restore(saved);
		if (n > 0) {
			drained += (size_t)n;
			giong_recvbuf_release(rb);
			quiet_since = giong_now_ms();
		} else if (n != -ETIMEDOUT || giong_deadline() <= giong_now_ms()) {
			break; /* its end, an error, or the linger's own deadline */
		} else if (unacked(c)) {
			quiet_since = giong_now_ms(); /* still leaving (the write timeout) */
		} else if (giong_now_ms() - quiet_since >= GIONG__HTTP_LINGER_MS) {
			break;
		}
	}
}

/* A protocol's lingering close (giong__http_conn_linger()). A peer still reading what
 * was sent keeps sending too (HTTP/2's WINDOW_UPDATEs); a close while its bytes are
 * unread, or when they arrive after it, resets the connection, and the reset destroys
 * what the peer had not read yet. So: what is in flight leaves, the write side is shut
 * (the peer reads the end after the last byte), and the peer's bytes are dropped until
 * it closes too; all of it within the write timeout. */
static intptr_t linger_task(void *arg)
{
	struct giong_http_conn *c = arg;
	uint64_t saved = giong_deadline_in(c->w->srv->limits.write_timeout_ms);
	struct giong_waitq wq;

	giong_waitq_init(&wq);
	if (!c->closing && giong__http_conn_wait_sent(c, &wq) == 0 && !c->closing &&
	    giong_stream_shutdown(c->s, SHUT_WR) == 0)
		linger_drain(c);
	giong_deadline_restore(saved);
	c->lingering = false;
	conn_close(c);
	return 0;
}

void giong__http_conn_linger(struct giong_http_conn *c)
{
	if (c->lingering || c->closing)
		return; /* lingering, or closed already */
	if (c->broken || !c->s) {
		conn_close(c);
		return;
	}
	unpark(c); /* its own task reads from now: no other starts for bytes */
	c->lingering = true;
	if (giong_spawn(linger_task, c, NULL)) {
		c->lingering = false;
		conn_close(c);
	}
}

int giong__http_conn_wait_sent(struct giong_http_conn *c, struct giong_waitq *wq)
{
	uint64_t saved;
	int r = 0;

	if (c->sending && !c->broken) {
		saved = giong_deadline_in(c->w->srv->limits.write_timeout_ms);
		c->sent_wait = wq;
		while (c->sending && r >= 0)
			r = giong_waitq_wait(wq, 0);
		c->sent_wait = NULL;
		giong_deadline_restore(saved);
		if (r == -ETIMEDOUT)
			c->w->stats.write_timeouts++;
		if (r < 0) {
			/* The send is still in flight: only a close ends it, and
			 * nothing more is to be tried on the connection. */
			c->broken = true;
			return r;
		}
	}
	return c->broken ? -EPIPE : 0;
}

/* Write @iov[0..n) whole from the task, under the write deadline. @iov is
 * changed. */
static int write_all(struct giong_http_conn *c, struct iovec *iov, int n)
{
	uint64_t saved = giong_deadline_in(c->w->srv->limits.write_timeout_ms);
	int r = giong__http_writev_all(c->s, iov, n);

	giong_deadline_restore(saved);
	if (r == -ETIMEDOUT)
		c->w->stats.write_timeouts++;
	if (r)
		c->broken = true;
	return r;
}

int giong__http_conn_write(struct giong_http_conn *c, struct giong_waitq *wq,
			   const struct iovec *extra, int n)
{
	struct giong__http_out *o = &c->batch->out;
	struct iovec iov[8];
	int r, k = 0;

	if ((r = giong__http_conn_wait_sent(c, wq)))
		return r;
	if (n > 7)
		return -EINVAL;
	if (o->len)
		iov[k++] = (struct iovec){o->data, o->len};
	for (int i = 0; i < n; i++)
		iov[k++] = extra[i];
	/* The batch and @extra are lent to the kernel inside write_all only. */
	r = write_all(c, iov, k);
	giong__http_out_clear(o);
	return r;
}

int giong__http_conn_send_start(struct giong_http_conn *c)
{
	struct giong__http_batch *b = c->batch;
	int r;

	if (c->sending || !b || !b->out.len)
		return c->broken ? -EPIPE : 0;
	if (c->broken)
		return -EPIPE;
	b->iov = (struct iovec){b->out.data, b->out.len};
	b->send.done = batch_sent;
	b->send.data = c;
	/* b->out's bytes, b->iov and b->send are lent to the kernel until
	 * batch_sent() (c->sending says so). */
	r = giong_stream_send_start(c->s, &b->send, &b->iov, 1);
	if (r == -ENOTSUP || r == -EBUSY)
		return -EAGAIN;
	if (r)
		return r;
	c->sending = true;
	return 0;
}

int giong__http_conn_flush(struct giong_http_conn *c, struct giong_waitq *wq)
{
	int r = giong__http_conn_send_start(c);

	/* A stream that cannot, or one busy with a write of its own (TLS answering a
	 * KeyUpdate from its send_done, say): write and wait, never drop the batch. */
	if (r == -EAGAIN)
		return giong__http_conn_write(c, wq, NULL, 0);
	return r;
}

/* What is queued goes out first (its last response says Connection: close),
 * then the write side is shut and the client's remaining bytes drained for a
 * moment, so that a reset does not destroy the response before the client
 * read it. */
void giong__http_conn_finish(struct giong_http_conn *c, struct giong_waitq *wq,
			     struct giong__http_input *in, bool flush)
{
	if (flush && giong__http_conn_write(c, wq, NULL, 0) == 0 && !in->eof) {
		uint64_t saved = giong_deadline_in(1000);
		const char *p;
		ssize_t n;
		size_t drained = 0;

		giong_stream_shutdown(c->s, SHUT_WR);
		while (drained < GIONG__HTTP_DISCARD_MAX &&
		       (n = giong__http_input_peek(in, c->s, &p)) > 0) {
			giong__http_input_consume(in, (size_t)n);
			drained += (size_t)n;
		}
		giong_deadline_restore(saved);
	}
	giong__http_input_release(in);
	conn_close(c);
}

/* The PROXY header and the wrap, once, before the first request, under the
 * head deadline: 0, 400 (a bad PROXY header: the status to refuse with on the
 * plain socket, before any wrap), or -errno (close). */
static int conn_open(struct giong_http_conn *c)
{
	const struct giong_http_server *srv = c->w->srv;
	uint64_t saved = giong_deadline_in(srv->limits.head_timeout_ms);
	int r;

	c->wrap_pending = false;
	r = srv->proxy_protocol ? giong__http_read_proxy_header(c) : 0;
	if (r == -EBADMSG)
		r = 400;
	else if (r == 0 && srv->wrap) {
		struct giong_stream *out = NULL;

		r = srv->wrap(c->s, srv->wrap_ctx, &out);
		if (r > 0 || (!r && !out))
			r = -EINVAL; /* outside the contract: close, never a status */
		if (!r)
			c->s = out;
	}
	giong_deadline_restore(saved);
	return r;
}

/*
 * A connection's task: started when bytes arrive for a parked connection, or
 * at once for one to wrap. The one dispatch step: after the wrap (whose TLS
 * handshake settles ALPN), the server chooses the connection's protocol once,
 * and every task of it runs that protocol's serve().
 */
static intptr_t conn_task(void *arg)
{
	struct giong_http_conn *c = arg;
	int r = 0;

	/* Closed before it ran (by another task of its protocol): only the end is left. */
	if (c->closing)
		goto out;
	if (c->wrap_pending && (r = conn_open(c)) < 0) {
		conn_close(c);
		goto out;
	}
	c->refuse = (uint16_t)r;
	if (!c->proto)
		c->proto = c->w->srv->choose(c);
	c->proto->serve(c); /* parks @c, or closes it (freed below, not under serve's feet) */
out:
	c->task = false;
	if (c->closing && !c->sending && !c->lingering)
		conn_free(c);
	return 0;
}

int giong__http_conn_start(struct giong__http_worker *w, struct giong_stream *s,
			   struct giong__http_stream_wait *ended)
{
	struct giong_http_conn *c = calloc(1, sizeof(*c));
	int r;

	if (!c) {
		giong_stream_close(s);
		return -ENOMEM;
	}
	c->s = s;
	c->w = w;
	c->ended = ended;
	c->fresh = true;
	if (ended)
		ended->conn = c;
	w->stats.open++;
	w->stats.accepted++;
	if (w->srv->wrap || w->srv->proxy_protocol) {
		c->wrap_pending = true; /* a task from the start, for those */
	} else if (giong__http_conn_park(c) == 0) {
		return 0; /* no task until the first bytes */
	}
	if ((!c->batch && !(c->batch = batch_get(w))) || (r = spawn_task(c))) {
		conn_close(c);
		return -ENOMEM;
	}
	return 0;
}
