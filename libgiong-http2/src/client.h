/* SPDX-License-Identifier: MIT */
/*
 * client.h - HTTP/2 for libgiong-http's client (the client side of the protocol
 * table, <giong/http/protocol.h>), on libnghttp2's memory API. Internal to
 * libgiong-http2.
 *
 * One session per connection, shared by the exchanges to its origin; each
 * exchange's request is a stream of it. Nothing here has a task of its own:
 *  - Reading: a task that waits for its stream (a response head, body bytes,
 *    window for its request body) reads the connection itself when no other
 *    task does (h->reading), feeds nghttp2_session_mem_recv(), whose callbacks
 *    wake the streams that got something; when it has what it waited for, it
 *    hands the reading over to a task still waiting (h2c_handover()). So a
 *    connection with no exchange waiting holds no task and reads nothing.
 *  - Writing: whoever queued frames drains nghttp2_session_mem_send() into
 *    h->out and writes it (h2c_flush()); while one task writes, others only
 *    mark h->write_again, and the writer loops until nghttp2 has nothing more.
 * nghttp2 is never entered while another task is inside it: no call into it
 * suspends, and a task suspends only between calls.
 *
 * Memory: a stream is the exchange's from client_request() to client_end(),
 * which frees it at once (nghttp2's reference to it is cleared, a stream still
 * open is reset). The session is the client's connection's, freed by
 * client_close() once no stream is left.
 */
#ifndef GIONG_HTTP2_CLIENT_H
#define GIONG_HTTP2_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nghttp2/nghttp2.h>

#include <giong/core.h>
#include <giong/http/client.h>
#include <giong/http/protocol.h>

#include "giong_private.h"

/* Each stream's receive window: the response bytes the server may send ahead of
 * the exchange's reading (what a stream can hold); the connection's is larger. */
#define H2C_STREAM_WINDOW (256u * 1024)
#define H2C_CONN_WINDOW (16u * 1024 * 1024)
/* Bytes read from the connection at once, and written at most in one write. */
#define H2C_READ_LEN (16u * 1024)
#define H2C_WRITE_MAX (64u * 1024)
/* Interim (1xx) heads skipped before a final one (libgiong-http's bound too). */
#define H2C_INTERIM_MAX 16u

struct h2c_session;

/* A piece of response body, copied out of nghttp2's callback. */
struct h2c_chunk {
	struct h2c_chunk *next;
	size_t len;
	char data[];
};

struct h2c_stream {
	struct h2c_session *h;
	struct giong__list_node link;  /* on h->streams */
	struct giong__list_node wlink; /* on h->waiters, while its task waits */
	int32_t id;
	struct giong_waitq wait;
	bool waiting;
	/* The request body: client_body()'s bytes, lent until nghttp2 took them. */
	const uint8_t *body;
	size_t body_len;
	bool body_last, deferred, eof_sent;
	/* The response head: fields as offsets into hbuf while it grows, then pointers. */
	int status;
	unsigned interim;
	struct giong_http_field *fields;
	uint32_t nfields, fields_cap;
	char *hbuf;
	size_t hbuf_len, hbuf_cap;
	uint64_t head_bytes;
	int64_t content_length;
	bool head_done;
	/* The response body: received, not yet read; the chunk lent out (consumed in
	 * nghttp2's window at the next read). */
	struct h2c_chunk *in, *in_tail, *lent;
	size_t unconsumed; /* bytes received and not yet given back to the windows */
	bool end_stream;   /* the server's END_STREAM came */
	bool closed;       /* nghttp2 closed it */
	uint32_t reset;    /* the error code it was closed with */
	int error;         /* ours: a limit crossed (-EMSGSIZE), a bad head (-EBADMSG) */
};

struct h2c_session {
	nghttp2_session *s;
	struct giong_stream *st; /* the connection's stream: the client's */
	uint32_t head_max, fields_max;
	struct giong__list streams, waiters; /* every stream; those whose task waits */
	unsigned nstreams;
	bool reading, writing, write_again;
	struct giong_waitq drained; /* tasks waiting for the writer's round to end */
	bool goaway;                /* the server's GOAWAY came: no new stream */
	int error;                  /* sticky: the connection failed */
	char *out;                  /* what h2c_flush() writes */
	size_t out_len, out_cap;
	char rbuf[H2C_READ_LEN];
};

/* client_io.c: reading, writing and waiting */
/* Write everything nghttp2 has queued (or leave it to the task writing). 0 or -errno. */
int h2c_flush(struct h2c_session *h);
/* The connection failed with @err: every stream is woken to see it. */
void h2c_fail(struct h2c_session *h, int err);
/* Wake @st's task if it waits. */
void h2c_wake(struct h2c_stream *st);
/* Wait until @ready(@st), reading the connection when nobody else does; with @drains
 * (what it waits for is its own frames leaving) it waits for the task writing rather
 * than read. 0 (also when what it waited for came with the connection's failure), or
 * -errno (the task's deadline, a cancellation, the connection's failure). */
int h2c_wait(struct h2c_stream *st, bool (*ready)(const struct h2c_stream *), bool drains);
/* The session's nghttp2 callbacks (client_io.c). */
int h2c_callbacks(nghttp2_session_callbacks **ret);

/* client.c: the table's client calls */
int h2c_open(struct giong_stream *s, const struct giong_http_client_options *o, void **session);
int h2c_usable(void *session);
unsigned h2c_streams(void *session);
void h2c_close(void *session);
int h2c_request(void *session, const struct giong_http_request_out *rq, void **st);
int h2c_body(void *st, const void *p, size_t len, bool last);
int h2c_response(void *st, struct giong_http_reply_in *h);
ssize_t h2c_next(void *st, const void **data);
int h2c_end(void *st);

#endif /* GIONG_HTTP2_CLIENT_H */
