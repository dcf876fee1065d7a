/* SPDX-License-Identifier: MIT */
/*
 * conn.h - the server's connections and the per-worker state they share,
 * whatever protocol they speak. Internal to libgiong-http.
 *
 * Two kinds of memory, by how long they live:
 *  - struct giong_http_conn: the whole life of a connection, and all an
 *    idle one holds in user space (a few dozen bytes besides the stream);
 *  - struct giong__http_batch: the output batch and the send that carries
 *    it, held while a task runs on the connection or a send is in flight,
 *    else back in the worker's cache.
 * A protocol keeps the rest (its input, its parser's state, the request and
 * response lent to handlers) on its task's stack (h1/h1.h: the frame).
 *
 * Only the connection writes (conn.c): a protocol appends to c->batch->out
 * while no send of it is in flight (giong__http_conn_wait_sent() before its
 * first append after a flush), and asks the connection to write it out.
 */
#ifndef GIONG_HTTP_CONN_H
#define GIONG_HTTP_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include <giong/core.h>
#include <giong/http/response.h>
#include <giong/http/server.h>

#include "common/input.h"
#include "common/out.h"
#include "common/proto.h"
#include "common/slots.h"
#include "giong_private.h"

/* The most bytes queued in one batch before the connection writes it out mid-way (checked
 * after each response: a batch may pass it by one response's copied head and body). */
#define GIONG__HTTP_BATCH_MAX (256u * 1024)

/* At shutdown, how long a connection accepted but without a request yet is kept for its
 * first one (at most the head timeout): its client connected before the listener stopped
 * and is sending, closing it would fail a request that a restart must not fail. */
#define GIONG__HTTP_FRESH_MS 1000u
/* Batches kept per worker for reuse, and the largest buffer kept. */
#define GIONG__HTTP_BATCH_CACHE 64u
#define GIONG__HTTP_BATCH_KEEP (64u * 1024)
/* Unread bytes that are read and dropped (a body the handler left, the input
 * after a last response); past this the connection is closed instead. */
#define GIONG__HTTP_DISCARD_MAX (256u * 1024)
/* How long a closing connection waits for its peer to close too, once the peer
 * acknowledged everything and went quiet (its late bytes would make the kernel reset the
 * connection, and a reset destroys what the peer has not read yet); and how often it
 * looks whether the peer acknowledged it all. */
#define GIONG__HTTP_LINGER_MS 1000u
#define GIONG__HTTP_LINGER_TICK_MS 100u

struct giong__http_worker;

/* giong_http_serve_stream()'s wait for its one connection. */
struct giong__http_stream_wait {
	struct giong_waitq wq;
	struct giong_http_conn *conn; /* until it ended */
	bool ended;
};

struct giong__http_batch {
	struct giong__http_out out;
	struct giong_stream_send send; /* send.data: the connection */
	struct iovec iov;
	struct giong__list_node link; /* in the worker's cache */
};

/* Where an idle connection waits (struct giong__http_worker lists). */
enum giong__http_park {
	GIONG__HTTP_ACTIVE = 0, /* a task runs on it */
	GIONG__HTTP_IDLE,       /* no task, nothing in flight: idle timeout */
	GIONG__HTTP_DRAINING,   /* no task, its last batch still in flight: write timeout */
	GIONG__HTTP_WAITING,    /* no task, exchanges open (HTTP/2): on no list, no timeout */
};

struct giong_http_conn {
	struct giong_stream *s;
	struct giong__http_worker *w;
	const struct giong_http_protocol *proto; /* chosen after the wrap; NULL before */
	struct giong__http_batch *batch;         /* while active or sending, else NULL */
	struct giong_waitq *sent_wait;           /* the task's, while it waits for a send */
	struct giong__list_node link;            /* on w->idle or w->draining */
	uint64_t parked_at;                      /* giong_now_ms() when parked */
	struct giong__http_stream_wait *ended;   /* giong_http_serve_stream()'s, or NULL */
	struct giong_addr *client;        /* from a PROXY header, or the peer once asked; or NULL */
	void *pstate;                     /* a protocol's own (giong_http_conn_set_state()) */
	struct giong__http_input *handed; /* what HTTP/1.1 read before a handover, or NULL */
	uint16_t refuse;   /* a status to answer at once and close (a bad PROXY header) */
	uint8_t park;      /* enum giong__http_park */
	bool wrap_pending; /* the options' wrap is still to run */
	bool sending;      /* batch->send is in flight */
	bool closing;      /* the stream is closed; freed when the send and the task end */
	bool task;         /* its task is spawned or runs (conn_task()) */
	bool broken;       /* a send failed: close at the next chance */
	bool last;         /* close once the queued responses are out */
	bool fresh;        /* no request yet: shutdown waits a little for one */
	bool lingering;    /* its linger task runs (giong__http_conn_linger()): it frees it */
};

/* A worker's share of one server: its connections, counters and caches. */
struct giong__http_worker {
	const struct giong_http_server *srv;
	struct giong_http_stats stats;
	struct giong__list idle;       /* parked_at order (idle_timeout_ms) */
	struct giong__list draining;   /* parked_at order (write_timeout_ms) */
	struct giong__list batches;    /* cached, with their buffers */
	unsigned nbatches;             /* on the cache */
	unsigned serving;              /* giong_http_serve*() calls running */
	bool sweeper;                  /* its sweeper task runs */
	uint64_t sweep_at;             /* when the sweeper wakes next (giong_now_ms() clock) */
	bool shutting_down;            /* idle connections were closed for shutdown */
	struct giong_waitq conns_wait; /* a connection ended (limit, last one) */
	struct giong_waitq sweep_wait; /* the sweeper: something parked, or shutdown */
	/* Splice pipes kept for sendfile (empty ones: GIONG__HTTP_PIPES at most, enough for
	 * the connections that splice at once on a busy worker; more are made and closed). */
	struct giong__http_pipe {
		int fd[2];
		unsigned size; /* its capacity: what one splice into it moves */
	} pipes[32];
	unsigned npipes;
};

struct giong_http_server {
	const struct giong_http_router *router;
	struct giong_http_limits limits;
	char *server_name; /* NULL: no Server field */
	size_t server_name_len;
	giong_http_wrap_fn wrap;
	void *wrap_ctx;
	giong_http_log_fn log;
	void *log_ctx;
	bool proxy_protocol;
	/* The protocols besides HTTP/1.1 (NULL-terminated copy of the options'), and the
	 * one a plain connection may switch to by its preface (or NULL). */
	const struct giong_http_protocol **protocols;
	const struct giong_http_protocol *prior;
	/* The protocol of a connection, once wrapped (server.c's choose_protocol()). */
	const struct giong_http_protocol *(*choose)(struct giong_http_conn *c);
	/* Per worker, each made by its worker on its first serve; the table is
	 * made once (compare-and-swap) with giong_worker_count() entries. */
	_Atomic(struct giong__http_slots *) workers;
};

/* conn.c */
/* Take @s (owned from now on) as a new connection of @w: a task for its wrap,
 * or parked. 0, or -errno with @s closed. */
int giong__http_conn_start(struct giong__http_worker *w, struct giong_stream *s,
			   struct giong__http_stream_wait *ended);
/* Close an idle or draining connection (no task on it): shutdown, timeouts. */
void giong__http_conn_close_parked(struct giong_http_conn *c);
/* Park @c with no task (its task is about to end): 0; -ENOBUFS if it could not
 * park and no batch is left to answer with (close it); or another -errno if the
 * stream cannot call back (the task then keeps waiting itself). */
int giong__http_conn_park(struct giong_http_conn *c);
/* Wait until the batch is not in flight, under the write deadline (@wq: the
 * task's). 0, or -errno: nothing more is to be tried on the connection. */
int giong__http_conn_wait_sent(struct giong_http_conn *c, struct giong_waitq *wq);
/* Write the batch and then @extra[0..n) (lent to the kernel for the call only,
 * n <= 7) before returning; the batch is empty after. May suspend. */
int giong__http_conn_write(struct giong_http_conn *c, struct giong_waitq *wq,
			   const struct iovec *extra, int n);
/* Write the batch (after its send in flight), then @len bytes of @fd at @off: spliced
 * to a plain socket through a pipe of the worker's, read through a buffer and written to
 * any other stream (TLS); under the write deadline, from a task. 0 or -errno (the
 * connection is broken then: part of the bytes may have left). May suspend. */
int giong__http_conn_splice(struct giong_http_conn *c, struct giong_waitq *wq, int fd, uint64_t off,
			    uint64_t len);
/* Read @len bytes of @fd at @off into @buf through the ring (lent to the kernel until
 * it returns). The count, or -errno. May suspend. */
int giong__http_file_read(int fd, void *buf, size_t len, uint64_t off);
/* Send what the batch holds without waiting for it (the send owns the batch's
 * bytes until it ends: c->sending). 0 or -errno. */
int giong__http_conn_flush(struct giong_http_conn *c, struct giong_waitq *wq);
/* The same without waiting ever: -EAGAIN when the stream can only carry the batch
 * with a waited write (giong__http_conn_write(), from a task). */
int giong__http_conn_send_start(struct giong_http_conn *c);
/* The end of a connection's task that is to close: with @flush, what is
 * queued goes first, the write side is shut and @in drained a moment; then
 * @in is released and the connection closed. */
void giong__http_conn_finish(struct giong_http_conn *c, struct giong_waitq *wq,
			     struct giong__http_input *in, bool flush);
/* Close @c now, from its task. */
void giong__http_conn_close(struct giong_http_conn *c);
/* Close @c once its peer read what was sent (protocol.c's giong_http_conn_linger()):
 * from a task of its own, the write side shut and the peer's bytes read and dropped
 * until it closes too, for at most GIONG__HTTP_LINGER_MS of silence. Closes at once
 * when the connection broke or no task can be had. */
void giong__http_conn_linger(struct giong_http_conn *c);

/* A connection parked waiting for bytes moves under the idle timeout: 0, -EAGAIN when
 * it is not parked waiting, or giong__http_conn_park()'s error. */
int giong__http_conn_make_idle(struct giong_http_conn *c);
/* @c's batch, taken from the worker's cache if it holds none: NULL for no memory. */
struct giong__http_batch *giong__http_conn_batch(struct giong_http_conn *c);
/* Give back what HTTP/1.1 handed over and the protocol did not take (protocol.c). */
void giong__http_conn_drop_handed(struct giong_http_conn *c);
/* Park @c with no task and no timeout while its protocol has exchanges open
 * (protocol.c's giong_http_conn_park(c, false)): 0 or -errno. */
int giong__http_conn_wait_bytes(struct giong_http_conn *c);

/* proxy.c: the PROXY header from the socket (c->client set when it names
 * one): 0, -EBADMSG missing or malformed, or -errno. */
int giong__http_read_proxy_header(struct giong_http_conn *c);

/* Shutdown began: the runtime's, or this server's on @c's worker. */
static inline bool giong__http_shutting_down(const struct giong_http_conn *c)
{
	return c->w->shutting_down || giong_is_shutting_down();
}

/* Count a response of @status on @w. */
static inline void giong__http_count_status(struct giong__http_worker *w, int status)
{
	if (status >= 100 && status <= 599)
		w->stats.responses[status / 100 - 1]++;
}

#endif /* GIONG_HTTP_CONN_H */
