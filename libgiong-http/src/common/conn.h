/* SPDX-License-Identifier: MIT */
/*
 * conn.h - the server's connections and the per-worker state they share.
 * Internal to libgiong-http.
 *
 * Three kinds of memory, by how long they live:
 *  - struct giong__http_conn: the whole life of a connection, and all an
 *    idle one holds in user space (a few dozen bytes besides the stream);
 *  - struct giong__http_batch: the output batch and the send that carries
 *    it, held while a task runs on the connection or a send is in flight,
 *    else back in the worker's cache;
 *  - struct giong__http_frame: the input side (the pool buffer or heap copy
 *    holding the bytes, the parser's state, the request and response lent to
 *    handlers), on the connection task's stack: it ends with the task, which
 *    never ends with a request half read.
 */
#ifndef GIONG_HTTP_CONN_H
#define GIONG_HTTP_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include <giong/core.h>
#include <giong/http/response.h>
#include <giong/http/server.h>

#include "h1/chunked.h"
#include "common/input.h"
#include "giong_private.h"
#include "common/out.h"
#include "common/request.h"
#include "common/slots.h"

/* The most bytes queued in one batch before it is written out mid-way. */
#define GIONG__HTTP_BATCH_MAX (256u * 1024)
/* A response body at most this long is copied into the batch; a longer one
 * is written from the handler's memory, after the batch. */
#define GIONG__HTTP_COPY_MAX (16u * 1024)

/* At shutdown, how long a connection accepted but without a request yet is kept for its
 * first one (at most the head timeout): its client connected before the listener stopped
 * and is sending, closing it would fail a request that a restart must not fail. */
#define GIONG__HTTP_FRESH_MS 1000u
/* Batches kept per worker for reuse, and the largest buffer kept. */
#define GIONG__HTTP_BATCH_CACHE 64u
#define GIONG__HTTP_BATCH_KEEP (64u * 1024)
/* Unread body bytes that are read and dropped after the handler; past this
 * the connection is closed instead. */
#define GIONG__HTTP_DISCARD_MAX (256u * 1024)
/* Fields parsed on the task's stack; a larger limit allocates. */
#define GIONG__HTTP_STACK_FIELDS 128u

struct giong__http_worker;

/* giong_http_serve_stream()'s wait for its one connection. */
struct giong__http_stream_wait {
	struct giong_waitq wq;
	struct giong__http_conn *conn; /* until it ended */
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
};

struct giong__http_conn {
	struct giong_stream *s;
	struct giong__http_worker *w;
	struct giong__http_batch *batch;       /* while active or sending, else NULL */
	struct giong_waitq *sent_wait;         /* the task's, while it waits for a send */
	struct giong__list_node link;          /* on w->idle or w->draining */
	uint64_t parked_at;                    /* giong_now_ms() when parked */
	struct giong__http_stream_wait *ended; /* giong_http_serve_stream()'s, or NULL */
	struct giong_addr *client; /* from a PROXY header, or the peer once asked; or NULL */
	uint8_t park;              /* enum giong__http_park */
	bool wrap_pending;         /* the options' wrap is still to run */
	bool sending;              /* batch->send is in flight */
	bool closing;              /* the stream is closed; freed when the send ends */
	bool broken;               /* a send failed: close at the next chance */
	bool last;                 /* close once the queued responses are out */
	bool fresh;                /* no request yet: shutdown waits a little for one */
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
	/* Per worker, each made by its worker on its first serve; the table is
	 * made once (compare-and-swap) with giong_worker_count() entries. */
	_Atomic(struct giong__http_slots *) workers;
};

/* The body being read: framing and what is left. */
struct giong__http_body_state {
	uint64_t left;        /* Content-Length bytes not yet taken */
	bool chunked, done;   /* done: the body's end was reached */
	bool continue_sent;   /* 100 Continue went out */
	bool whole, streamed; /* giong_http_request_body() / _read() used */
	int error;            /* sticky: the first failure */
	struct giong__http_chunked dec;
	uint64_t deadline; /* body_timeout_ms from the end of the head */
	char *copy;        /* the whole body, when it had to be copied */
	size_t copy_len;
	const char *whole_data; /* what giong_http_request_body() returned */
	size_t whole_len;
};

struct giong_http_response {
	struct giong__http_frame *f;
	int status;
	uint64_t body_bytes;
	bool started; /* the status line was queued */
	bool ended;   /* the body ended: nothing more may be written */
	bool streaming, chunked;
	bool close;        /* Connection: close */
	bool sent_some;    /* part of it was written: it can no longer be taken back */
	size_t head_start; /* batch offset of this response's status line */
};

/* The input side of one task's run on a connection (see the top). */
struct giong__http_frame {
	struct giong__http_conn *c;
	struct giong_waitq wait;
	struct giong__http_input in;
	bool head_started;      /* a head's first byte is in; head_deadline runs */
	uint64_t head_deadline; /* from the head's first byte */
	struct giong__http_scan scan;
	struct giong__http_field *fields;
	struct giong_http_request req;
	struct giong_http_response res;
	struct giong__http_body_state body;
};

/* conn.c */
/* Take @s (owned from now on) as a new connection of @w: wrap it (a task),
 * or park it. 0, or -errno with @s closed. */
int giong__http_conn_start(struct giong__http_worker *w, struct giong_stream *s,
			   struct giong__http_stream_wait *ended);
/* Close an idle or draining connection (no task on it): shutdown, timeouts. */
void giong__http_conn_close_parked(struct giong__http_conn *c);
/* Make room for @n more bytes in the batch: writes it out first if needed.
 * 0 or -errno (the connection is then to be closed). */
int giong__http_frame_reserve(struct giong__http_frame *f, size_t n);
/* Write the batch and then @iov (handler memory) before returning. */
int giong__http_frame_write(struct giong__http_frame *f, const struct iovec *iov, int n);
/* input.c, on the frame's connection (input.h says what each does). */
static inline ssize_t giong__http_frame_peek(struct giong__http_frame *f, const char **p)
{
	return giong__http_input_peek(&f->in, f->c->s, p);
}
static inline void giong__http_frame_consume(struct giong__http_frame *f, size_t n)
{
	giong__http_input_consume(&f->in, n);
}
static inline void giong__http_frame_release_input(struct giong__http_frame *f)
{
	giong__http_input_release(&f->in);
}
static inline int giong__http_frame_more(struct giong__http_frame *f)
{
	return giong__http_input_more(&f->in, f->c->s);
}
static inline void giong__http_frame_request_done(struct giong__http_frame *f)
{
	giong__http_input_message_done(&f->in);
}

/* The PROXY header from the socket (c->client set when it names one):
 * 0, -400 missing or malformed, or -errno. */
int giong__http_read_proxy_header(struct giong__http_frame *f);

/* body.c */
/* Ready the body of the request just parsed, bounded by @limit bytes. */
void giong__http_body_begin(struct giong__http_frame *f, uint64_t limit);
/* Read and drop what the handler left of the body: 0, or -errno (close). */
int giong__http_body_finish(struct giong__http_frame *f);
void giong__http_body_end(struct giong__http_frame *f);

/* response.c */
void giong__http_response_begin(struct giong__http_frame *f);
/* Queue a response of the library's own (an error, 100 Continue's cousin):
 * @status with an empty body (or @text), and @allow for 405. */
int giong__http_response_simple(struct giong_http_response *res, int status, const char *allow,
				const char *text);
/* After the handler: end what it left open. 0, or -errno (close). */
int giong__http_response_finish(struct giong_http_response *res, int handler_ret);

/* server.c */
/* Count a response of @status on @w. */
static inline void giong__http_count_status(struct giong__http_worker *w, int status)
{
	if (status >= 100 && status <= 599)
		w->stats.responses[status / 100 - 1]++;
}
/* A connection ended: wake whoever waits for one to. */
void giong__http_worker_conn_ended(struct giong__http_worker *w);
/* giong_http_serve_stream()'s connection ended. */
void giong__http_stream_ended(struct giong__http_stream_wait *sw);
/* A batch from the cache (or a new one), or NULL. */
struct giong__http_batch *giong__http_batch_get(struct giong__http_worker *w);
void giong__http_batch_put(struct giong__http_worker *w, struct giong__http_batch *b);

/* sendfile.c */
int giong__http_sendfile(struct giong__http_frame *f, int fd, off_t off, uint64_t len);

#endif /* GIONG_HTTP_CONN_H */
