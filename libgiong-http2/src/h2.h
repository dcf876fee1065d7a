/* SPDX-License-Identifier: MIT */
/*
 * h2.h - HTTP/2 on a server connection, on libnghttp2's memory API.
 * Internal to libgiong-http2.
 *
 * Who runs what (all on the connection's worker; nghttp2 is only ever
 * entered from one place at a time, as nothing here suspends inside it):
 *  - the connection's task (conn.c: serve()), started when bytes arrive,
 *    feeds them to nghttp2_session_mem_recv(), then parks the connection
 *    with no task again: it never waits for bytes while streams are open;
 *  - nghttp2's callbacks (session.c) build each stream's head and, at its
 *    end, start the stream's task (stream.c), which runs the common
 *    dispatch: router, handler, the response through the table's ops;
 *  - the pump (conn.c) drains nghttp2_session_mem_send() into the
 *    connection's batch and sends it without waiting, once per turn
 *    (giong_call_soon()) however many streams answered in it; the batch's
 *    completion pumps again.
 *
 * Memory: a stream lives until both its task ended and nghttp2 closed it
 * (st->task, st->closed); the connection's state until its last stream is
 * gone and the connection closed.
 */
#ifndef GIONG_HTTP2_H2_H
#define GIONG_HTTP2_H2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nghttp2/nghttp2.h>

#include <giong/core.h>
#include <giong/http/protocol.h>
#include <giong/http/server.h>
#include <giong/http2.h>

/* How long a client may take to acknowledge our SETTINGS (RFC 9113 6.5.3; nghttpx's). */
#define H2_SETTINGS_TIMEOUT_MS 10000u

/* The header list's budget when header_list_max is 0 and the server's head limit is
 * larger (nghttp2's own default for it is unlimited). */
#define H2_HEADER_LIST_DEFAULT 16384u

/* How long an ending connection waits for its last frames (a GOAWAY) to leave before it
 * closes anyway (HTTP/1.1's close lingers as long). */
#define H2_LINGER_MS 1000u

/* File bodies from this size on are spliced to a plain socket (smaller ones are copied:
 * a splice costs two io_uring operations run by its worker threads). */
#define H2_SPLICE_MIN (64u * 1024)
/* ... to a client whose SETTINGS_MAX_FRAME_SIZE is at least this: a splice costs about
 * the same per frame whatever its size, a copy per byte (A/B: 2.3 x the copy's CPU with
 * 16 KiB frames, even with 64 KiB, 0.8 x with 128 KiB, 0.5 x from 256 KiB). */
#define H2_SPLICE_FRAME_MIN (128u * 1024)

/* Bytes of nghttp2's output queued in one batch before it is sent (the rest waits for
 * the send's end: no more than this is held for a peer that reads slowly). */
#define H2_BATCH_MAX (256u * 1024)

/* Blocks of nghttp2's kept apart per session (mem.c): its frame buffer, of
 * NGHTTP2_FRAMEBUF_CHUNKLEN bytes (lib/nghttp2_frame.h, 1.52: 9 + 1 + 16384). */
#define H2_BIG_MAX 2
#define H2_FRAMEBUF_LEN (9u + 1u + 16384u)

/* The table a program passes, with the settings behind it. */
struct h2_proto {
	struct giong_http_protocol table; /* first: the pointer programs hold */
	struct giong_http2_options opt;
	bool dynamic; /* giong_http2_new()'s, freed by giong_http2_free() */
};

struct h2_chunk {
	struct h2_chunk *next;
	size_t len, off;
	char data[];
};

struct h2_conn;

struct h2_stream {
	struct h2_conn *h;
	struct h2_stream *prev, *next; /* on h->streams */
	int32_t id;
	/* The head as it arrives: nghttp2's buffers kept (a reference each), no copy. */
	nghttp2_rcbuf **refs;
	uint32_t nrefs, refs_cap;
	struct giong_http_field *fields;
	uint32_t nfields, fields_cap;
	struct giong_http_head_in head;
	uint64_t header_bytes; /* RFC 9113 6.5.2's count: names, values, 32 each */
	int refuse;            /* a status to answer instead (431), or 0 */
	/* The request body: received and not yet read, then read (kept until the end). */
	struct h2_chunk *in, *in_tail, *read;
	uint64_t received, body_limit;
	bool end_stream; /* the client's END_STREAM came */
	bool over_limit; /* more than body_limit came */
	/* The exchange, while the task runs. */
	struct giong_http_request *req;
	struct giong_http_response *res;
	struct giong_waitq wait; /* the task waits here: body bytes, window, send */
	/* The response: fields collected for nghttp2_submit_response(). */
	nghttp2_nv *nva;
	size_t nnv, nv_cap;
	char *nvbuf; /* the fields' bytes */
	size_t nvbuf_len, nvbuf_cap;
	/* Body bytes queued for DATA frames: out[off..len). */
	char *out;
	size_t out_len, out_off, out_cap;
	int64_t out_left; /* a sized body's bytes still to be queued; -1: streamed */
	/* A file range whose DATA payloads are spliced (h2_sendfile() on a plain
	 * socket): its own descriptor (a dup: a splice may outlast the handler's
	 * call), or -1; where the next splice starts and what is still to leave;
	 * what nghttp2 was not offered yet (it packs a stream's next DATA frame as
	 * soon as the last one counts as sent, before its payload is spliced);
	 * whether the range ends the body; whether the handler gave it up. */
	int file_fd;
	uint64_t file_off, file_left, file_unoffered;
	bool file_eof, file_abandoned;
	bool out_eof;   /* no more after what is queued */
	bool submitted; /* the head went to nghttp2 */
	bool deferred;  /* the data source said DEFERRED: resume when bytes come */
	bool task;      /* its task runs */
	bool closed;    /* nghttp2 closed it (on_stream_close) */
	uint32_t reset; /* the error code it was closed with */
};

struct h2_conn {
	struct giong_http_conn *c;
	const struct h2_proto *p;
	nghttp2_session *s;
	struct h2_stream *streams; /* every stream not yet freed */
	unsigned nstreams, tasks;
	struct giong_soon soon;    /* the pump, queued once a turn */
	struct giong_timer linger; /* ending: how long its last send may take */
	bool pump_queued;
	bool reading;     /* its task runs serve() */
	bool waiting;     /* parked without the idle timeout (streams open) */
	bool dead;        /* fatal: close once no task is left */
	bool goaway;      /* a GOAWAY was submitted */
	bool writer;      /* a task writes the batch with waiting (counted in tasks) */
	bool pumping;     /* inside pump(): the batch is being filled */
	bool draining;    /* ending: parked until its last send left (end()) */
	bool peer_closed; /* the client's end (or an error) came: no linger for it */
	bool broken;      /* the writer's write failed: nothing more can be sent */
	/* A DATA frame whose header is in the batch and whose payload (splice_len bytes
	 * of splice_st's file range) the writer splices after it, or NULL: nghttp2 is
	 * not asked for more output until then. The stream is not freed meanwhile. */
	struct h2_stream *splice_st;
	size_t splice_len;
	/* The client's frames, followed as they are fed (conn.c: follow()): the preface's
	 * bytes still to come, a frame header's bytes so far, its payload's bytes still to
	 * come, whether that payload ends a header block. A header block is open
	 * (head_open) from its HEADERS frame's header until the payload with END_HEADERS
	 * is in; head_at: when it began (the head timeout counts from there). */
	uint32_t preface_left, payload_left;
	uint8_t hd[9], hd_len;
	bool block_ends, head_open;
	uint64_t head_at;
	uint32_t new_streams; /* streams begun in the current receive */
	uint32_t header_max;  /* the header list's budget: header_list_max, or limits->head */
	uint64_t settings_at; /* when our SETTINGS went out unacknowledged, or 0 */
	/* The glitch bucket (MadeYouReset): tokens, refilled by time. */
	uint64_t glitch_tokens, glitch_at;
	size_t mem; /* what nghttp2 holds for this session (mem.c) */
	struct {
		void *p; /* a page-aligned block of nghttp2's (its frame buffer), or NULL */
		size_t size;
	} big[H2_BIG_MAX];
};

/* conn.c */
/* Queue the pump for this turn (once). */
void h2_want_write(struct h2_conn *h);
/* End the connection as soon as no stream task runs (a fatal error, GOAWAY sent). */
void h2_conn_fail(struct h2_conn *h, uint32_t error_code);
/* A stream's task ended: free what is done, park or close the connection. */
void h2_task_ended(struct h2_conn *h);
/* With no task left while parked for bytes: parked idle instead. */
void h2_maybe_idle(struct h2_conn *h);

/* session.c */
/* A server session for @h with the settings sent. 0 or -ENOMEM. */
int h2_session_new(struct h2_conn *h);
/* One frame that was invalid or made the server reset: take a glitch token;
 * false when the bucket is empty (the connection is to end, calm). */
bool h2_glitch(struct h2_conn *h);

/* session.c (the server's and the client's): make room for one more field in *@fields (*@cap entries, @n used). 0 or
 * -ENOMEM. */
int h2_fields_reserve(struct giong_http_field **fields, uint32_t n, uint32_t *cap);

/* stream.c */
struct h2_stream *h2_stream_new(struct h2_conn *h, int32_t id);
/* Free @st if both its task and nghttp2 are done with it. */
void h2_stream_maybe_free(struct h2_stream *st);
/* The head is in: start its task. 0 or -errno (reset the stream). */
int h2_stream_start(struct h2_stream *st);
/* Body bytes (copied) or the end came: the task is woken. */
int h2_stream_data(struct h2_stream *st, const uint8_t *p, size_t len);
void h2_stream_wake(struct h2_stream *st);

/* body.c: the table's request-body and response operations */
void h2_body_begin(struct giong_http_request *req, uint64_t limit);
ssize_t h2_body_next(struct giong_http_request *req, const char **data, size_t max);
int h2_interim(struct giong_http_request *req, int status);
int h2_head_start(struct giong_http_response *res);
int h2_head_field(struct giong_http_response *res, const char *name, size_t name_len,
		  const char *value, size_t value_len);
int h2_head_end(struct giong_http_response *res, int64_t length);
int h2_body(struct giong_http_response *res, const void *p, size_t len);
int h2_body_write(struct giong_http_response *res, const void *p, size_t len);
int h2_body_end(struct giong_http_response *res);
int h2_sendfile(struct giong_http_response *res, int fd, off_t off, uint64_t len);
void h2_head_cancel(struct giong_http_response *res);
/* nghttp2's DATA source and frame writer for a stream's queued bytes. */
ssize_t h2_data_read(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
		     nghttp2_data_source *src, void *ud);
int h2_data_send(nghttp2_session *s, nghttp2_frame *frame, const uint8_t *framehd, size_t len,
		 nghttp2_data_source *src, void *ud);
/* The largest DATA payload nghttp2 may ask for: a spliced range's up to the peer's
 * SETTINGS_MAX_FRAME_SIZE, 16 KiB otherwise. */
ssize_t h2_data_length(nghttp2_session *s, uint8_t type, int32_t id, int32_t session_window,
		       int32_t stream_window, uint32_t max_frame, void *ud);
/* From the writer task: splice the pending DATA payload (h->splice_st) after the
 * batch, advance its stream's range. 0 or -errno (the connection is to end). */
int h2_splice_pending(struct h2_conn *h);
/* The stream's file descriptor closed, if it has one and no splice of it is pending. */
void h2_file_drop(struct h2_stream *st);

/* mem.c: nghttp2's allocator, counting per session (h->mem) and per worker. */
void h2_mem_init(nghttp2_mem *m, struct h2_conn *h);
/* The connection idles with nothing queued: the big blocks' pages go back. */
void h2_mem_idle(struct h2_conn *h);
/* The calling worker's counters. */
struct giong_http2_stats *h2_worker_stats(void);

#endif /* GIONG_HTTP2_H2_H */
