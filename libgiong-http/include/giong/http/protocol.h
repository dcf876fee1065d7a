/* SPDX-License-Identifier: MIT */
/*
 * giong/http/protocol.h - the protocol table: what a second wire protocol
 * (HTTP/2: libgiong-http2's giong_http2()) provides for the server and the
 * client to run it, and the calls it makes back. For protocol authors;
 * programs only pass the pointer such a library returns in
 * giong_http_server_options.protocols and giong_http_client_options.protocols.
 *
 * Split of the work (the TLS backend table, <giong/tls/backend.h>, is the
 * model): libgiong-http owns the connection (accept, wrap, parking with no
 * task, the idle and write timeouts, shutdown, the output batch and its one
 * send without waiting), the request and response objects, the router, the
 * limits, the handlers and the counters. A protocol owns its wire: it reads
 * the connection's stream in serve(), turns what arrives into exchanges
 * (giong_http_exchange_new(), giong_http_request_head_set(),
 * giong_http_exchange_run() from a task of its own per exchange), and writes
 * the handlers' responses through the operations below into the batch
 * (giong_http_conn_append(), giong_http_conn_flush()).
 *
 * Which protocol a connection speaks is chosen once, after the wrap: the
 * stream's ALPN result (giong_stream_alpn()) names a protocol of the
 * server's list, or, on a connection without ALPN, HTTP/1.1 begins and
 * hands the connection over when the client's first bytes are the
 * preface of a protocol with GIONG_HTTP_PROTOCOL_PRIOR_KNOWLEDGE (where
 * HTTP/1.1 alone answers 505).
 *
 * Threads: every call below is made on the connection's worker, from its
 * tasks or from completions; none may be made from another thread.
 */
#ifndef GIONG_HTTP_PROTOCOL_H
#define GIONG_HTTP_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <giong/core/api.h>
#include <giong/http/limits.h>
#include <giong/http/request.h>
#include <giong/http/response.h>
#include <giong/net/stream.h>

GIONG_BEGIN_DECLS

/* The layout version of struct giong_http_protocol: giong_http_server_new()
 * refuses (-EINVAL) a table built against another. */
#define GIONG_HTTP_PROTOCOL_ABI 1

/* A server connection, as its protocol sees it: opaque. */
struct giong_http_conn;
struct giong_http_stats;
struct giong_http_client_options;
struct giong_http_request_out;
struct giong_http_reply_in;

/* Capability flags (struct giong_http_protocol.caps). */
enum {
	/* Spoken on a connection without ALPN when the client starts with
	 * .preface (HTTP/2's "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"). */
	GIONG_HTTP_PROTOCOL_PRIOR_KNOWLEDGE = 1u << 0,
};

/* One field of a head (a request's or a response's), in the memory of whoever
 * made it. */
struct giong_http_field {
	const char *name, *value;
	uint32_t name_len, value_len;
};

/*
 * The table. Every pointer is required unless marked optional. The exchange
 * operations are the ones libgiong-http calls for the handler's request and
 * response (their meaning is the public API's of <giong/http/request.h> and
 * <giong/http/response.h>, whose checks have run): they run in the
 * exchange's task and may suspend, except where said.
 */
struct giong_http_protocol {
	uint32_t abi;        /* GIONG_HTTP_PROTOCOL_ABI */
	uint32_t size;       /* sizeof(struct giong_http_protocol) */
	const char *name;    /* its ALPN identifier: "h2" */
	unsigned caps;       /* GIONG_HTTP_PROTOCOL_* */
	const char *preface; /* with PRIOR_KNOWLEDGE: the client's first bytes */
	size_t preface_len;

	/* --- the connection -------------------------------------------------------------
	 * Run @c from its task until the protocol parks it (giong_http_conn_park()
	 * returned 0: a new task calls serve() again when bytes arrive) or closes it
	 * (giong_http_conn_close()). Bytes HTTP/1.1 read before a handover are
	 * giong_http_conn_handed_input()'s. */
	void (*serve)(struct giong_http_conn *c);
	/* Optional: free the state the protocol attached to @c
	 * (giong_http_conn_set_state()) as the connection is freed. Never suspends. */
	void (*conn_free)(void *state);
	/* Optional: the batch's send ended (from its completion, outside any task:
	 * must not suspend). @broken: it failed, nothing more can be sent. */
	void (*sent)(struct giong_http_conn *c, bool broken);

	/* --- the request body -------------------------------------------------------------
	 * Ready the body of the request just received, at most @limit bytes. */
	void (*body_begin)(struct giong_http_request *req, uint64_t limit);
	/* The next span of body bytes, at most @max, valid until the exchange ends: its
	 * length, 0 at the end, or -errno (sticky). */
	ssize_t (*body_next)(struct giong_http_request *req, const char **data, size_t max);
	/* An interim response (100 Continue) before the final one. 0 or -errno. */
	int (*interim)(struct giong_http_request *req, int status);

	/* --- the response (its status is final when head_start runs) ------------------------
	 * Begin the head: the status and the fields the server adds (Date, Server). */
	int (*head_start)(struct giong_http_response *res);
	/* One field the handler added: a token name and a value already checked (no CR,
	 * LF, NUL; no framing or connection field). */
	int (*head_field)(struct giong_http_response *res, const char *name, size_t name_len,
			  const char *value, size_t value_len);
	/* End the head: @length body bytes follow (>= 0), or a streamed body (-1). */
	int (*head_end)(struct giong_http_response *res, int64_t length);
	/* A sized body's bytes: the handler's memory is lent until the call returns. */
	int (*body)(struct giong_http_response *res, const void *p, size_t len);
	/* A piece of a streamed body, on its way when this returns. */
	int (*body_write)(struct giong_http_response *res, const void *p, size_t len);
	/* The end of a streamed body. */
	int (*body_end)(struct giong_http_response *res);
	/* A sized body's bytes from @fd at @off (@fd is the handler's until the call
	 * returns). */
	int (*sendfile)(struct giong_http_response *res, int fd, off_t off, uint64_t len);
	/* Take back a begun response none of which left. Never suspends. */
	void (*head_cancel)(struct giong_http_response *res);

	/* --- the client (optional: all NULL, or a .size that ends before them, for a
	 * protocol that only serves) ---------------------------------------------------------
	 * libgiong-http's client owns the connection (connect, TLS, the pool, closing) and
	 * the exchange; the protocol owns a session over the connection's stream and one
	 * stream of it per exchange. Each call runs in an exchange's task, under the
	 * deadline the client set for that step (the head or the body timeout, as the
	 * task's deadline), and may suspend unless said. Tasks of several exchanges call
	 * into one session at once: the protocol serialises its reads and writes. */
	/* A session over @s (connected; ALPN chose this protocol, or prior knowledge), its
	 * preface and settings queued, with the response limits of @o (head_max,
	 * fields_max). 0 and the session in *@session, or -errno (the client closes @s). */
	int (*client_open)(struct giong_stream *s, const struct giong_http_client_options *o,
			   void **session);
	/* Whether @session takes a new stream: 1; 0 while at the server's limit (a
	 * request made then is held by the protocol until a stream ends, under its
	 * deadline); -errno once it can take none again (a GOAWAY came, the connection
	 * failed): new exchanges go to another connection. Never suspends. */
	int (*client_usable)(void *session);
	/* The streams open on @session, and 1 more while frames wait to be written (the
	 * reset of a stream ended early): 0 means idle, the client may pool it. Never
	 * suspends. */
	unsigned (*client_streams)(void *session);
	/* Free @session, none of whose streams is open; its stream stays the client's.
	 * Never suspends. */
	void (*client_close)(void *session);
	/* Open a stream on @session for @rq: 0 and the stream in *@st, or -errno (-EAGAIN:
	 * this session takes no new stream). Its head is written with its body's first
	 * bytes (client_body()), or at once when it has none. */
	int (*client_request)(void *session, const struct giong_http_request_out *rq, void **st);
	/* Request body bytes @p[0..@len), lent until the call returns; @last: the end of
	 * the body (a sized body's last bytes, or the end of a streamed one, @len 0 then).
	 * 0 once they are on their way, or -errno. */
	int (*client_body)(void *st, const void *p, size_t len, bool last);
	/* The final response head, interim ones skipped, in *@h (the protocol's memory,
	 * valid until client_end()): its status (200..599), or -errno: -EMSGSIZE (over
	 * head_max or fields_max), -EBADMSG (malformed), -ECONNRESET (reset, or the
	 * connection ended), -EAGAIN (the server refused the stream unprocessed:
	 * REFUSED_STREAM, or past a GOAWAY's last stream: the request may go again). */
	int (*client_response)(void *st, struct giong_http_reply_in *h);
	/* The next span of the response body, lent until the next call or client_end():
	 * its length, 0 at the end of the body, or -errno as client_response(). */
	ssize_t (*client_next)(void *st, const void **data);
	/* End and free @st: 1 when it ended whole (its response read to the end, the
	 * request sent), 0 when it had to be reset (the reset is written with the
	 * session's next write). The session goes on either way. Never suspends. */
	int (*client_end)(void *st);
};

/* A client's request as libgiong-http hands it to a protocol (client_request()): the
 * exchange's memory, valid until the call returns. */
struct giong_http_request_out {
	const char *method, *scheme, *authority, *path;
	size_t method_len, scheme_len, authority_len, path_len;
	const struct giong_http_field *fields; /* the caller's fields, names as given */
	uint32_t nfields;
	int64_t content_length; /* the body's length; -1: streamed, or none */
	bool has_body;          /* body bytes follow by client_body() */
};

/* A response head as a client protocol received it (client_response()). */
struct giong_http_reply_in {
	int status;
	const struct giong_http_field *fields; /* the regular fields, names lowercase */
	uint32_t nfields;
	int64_t content_length; /* -1: not given */
};

/* ------------------------------------------------------------ the connection */

/* The stream @c talks over (wrapped: TLS), owned by the connection. */
GIONG_API struct giong_stream *giong_http_conn_stream(struct giong_http_conn *c);
/* The server's limits (timeouts, sizes), read-only. */
GIONG_API const struct giong_http_limits *giong_http_conn_limits(const struct giong_http_conn *c);
/* The worker's counters of the server, for the protocol to count in (requests,
 * refused, timeouts); responses are counted by the library. */
GIONG_API struct giong_http_stats *giong_http_conn_stats(struct giong_http_conn *c);
/* True once shutdown began (giong_shutdown(), or the server's). */
GIONG_API bool giong_http_conn_shutting_down(const struct giong_http_conn *c);
/* The table @c speaks (the one a protocol's serve() was called for). */
GIONG_API const struct giong_http_protocol *
giong_http_conn_protocol(const struct giong_http_conn *c);
/* The Date field's value for now (IMF-fixdate, RFC 9110 5.6.7): the library's
 * per-thread cache, formatted at most once a second, the one HTTP/1.1 sends.
 * GIONG_HTTP_DATE_LEN bytes, not NUL-terminated, valid until the calling
 * thread's next call. Never fails. */
#define GIONG_HTTP_DATE_LEN 29
GIONG_API const char *giong_http_date_now(void);
/* The protocol's state of @c (NULL at first), freed by its conn_free. */
GIONG_API void *giong_http_conn_state(const struct giong_http_conn *c);
GIONG_API void giong_http_conn_set_state(struct giong_http_conn *c, void *state);

/*
 * giong_http_conn_handed_input() - the bytes HTTP/1.1 had read when it handed
 * @c over (its prior-knowledge preface first) in *@p: their count (0: none).
 * They stay valid until giong_http_conn_handed_input_done(), which gives their
 * buffer back (and which the connection's end does too).
 */
GIONG_API size_t giong_http_conn_handed_input(struct giong_http_conn *c, const char **p);
GIONG_API void giong_http_conn_handed_input_done(struct giong_http_conn *c);

/*
 * giong_http_conn_append() - copy @len bytes to the end of @c's output batch.
 * 0; -EBUSY while the batch's send is in flight (the kernel reads it: wait
 * for the protocol's sent() call, or giong_http_conn_wait_sent()); -EPIPE once
 * a send failed; -ENOMEM. Never suspends.
 */
GIONG_API int giong_http_conn_append(struct giong_http_conn *c, const void *p, size_t len);
/* The bytes queued in the batch (0 while none, or while it is in flight). */
GIONG_API size_t giong_http_conn_queued(const struct giong_http_conn *c);
/* True while the batch's send is in flight. */
GIONG_API bool giong_http_conn_sending(const struct giong_http_conn *c);
/*
 * giong_http_conn_flush() - send what the batch holds without waiting: the
 * send owns its bytes until it ends (then the protocol's sent() runs). 0 (also
 * with nothing queued or a send already in flight), -EAGAIN when the stream
 * can only write with waiting (a TLS stream busy with a write of its own):
 * call giong_http_conn_write() from a task; -EPIPE, or -errno. Never suspends.
 */
GIONG_API int giong_http_conn_flush(struct giong_http_conn *c);
/*
 * giong_http_conn_write() - write the batch now and wait until the kernel took
 * it, under the write deadline; from a task only. 0 or -errno (-ETIMEDOUT:
 * counted as a write timeout). May suspend.
 */
GIONG_API int giong_http_conn_write(struct giong_http_conn *c);
/*
 * giong_http_conn_splice() - from a task: write what the batch holds, then move
 * @len bytes of @fd at @off to @c's stream after it, under the write deadline:
 * spliced from the page cache (file -> pipe -> socket, no copy through user
 * space) when the stream is a plain socket (giong_stream_can_splice() > 0),
 * read into a buffer and written through it otherwise (TLS). For a protocol
 * that frames a file's bytes (a header from the batch, the payload from here).
 * 0 or -errno: -EINVAL (bad arguments), -EPIPE (a send failed before), -EIO
 * (the file is shorter than the range), -ETIMEDOUT (counted as a write
 * timeout); after an error part of the bytes may have left: close @c. @fd is
 * only used until the call returns. May suspend.
 */
GIONG_API int giong_http_conn_splice(struct giong_http_conn *c, int fd, off_t off, size_t len);
/* Wait, in a task, until no send of the batch is in flight (write deadline).
 * 0 or -errno. May suspend. */
GIONG_API int giong_http_conn_wait_sent(struct giong_http_conn *c);

/*
 * giong_http_conn_park() - leave @c with no task until bytes (or the end)
 * arrive; a new task then calls serve(). @idle: nothing is open on it, so the
 * idle timeout applies and shutdown closes it; false: exchanges are open
 * (their tasks hold their own deadlines) and it only waits for bytes. A send
 * in flight goes on. Returns 0 (the caller returns from serve() and no longer
 * touches @c from this task), or -errno (the caller goes on with @c: reads
 * in its task, or closes it). From @c's task only.
 */
GIONG_API int giong_http_conn_park(struct giong_http_conn *c, bool idle);
/*
 * giong_http_conn_idle() - @c is parked waiting for bytes (giong_http_conn_park(c,
 * false)) and its last exchange just ended: from now the idle timeout applies, as if
 * it had been parked idle. 0; -EAGAIN when it is not parked waiting (a task runs on it,
 * or one is about to start for bytes that came: that task parks it itself); -EINVAL;
 * another -errno if it could not be parked (close it). Never suspends. From a task or a
 * completion of @c's worker.
 */
GIONG_API int giong_http_conn_idle(struct giong_http_conn *c);
/*
 * giong_http_conn_close() - close @c: its stream now, its memory once a send
 * in flight ended (conn_free runs then). No exchange of @c may still be
 * running. From a task or a completion of @c's worker.
 */
GIONG_API void giong_http_conn_close(struct giong_http_conn *c);
/*
 * giong_http_conn_linger() - close @c once its peer read what was sent (a lingering
 * close, RFC 9112 9.6's, which an HTTP/2 GOAWAY needs as much): from a task of its own,
 * the send in flight ends, the write side is shut (the peer reads the end after the
 * last byte), and what the peer still sends is read and dropped until it closes too,
 * for at most 1 s of silence and 256 KiB, within the write timeout; then as
 * giong_http_conn_close(). A close now would reset the connection when the peer's
 * bytes came after it (HTTP/2's WINDOW_UPDATEs for the last DATA), and the reset
 * destroys what the peer had not read yet. Closes at once when a send failed or no
 * task can be had. Nothing of @c runs meanwhile: serve() and sent() are not called
 * again, conn_free once it closed. No exchange of @c may still be running. From a task
 * or a completion of @c's worker.
 */
GIONG_API void giong_http_conn_linger(struct giong_http_conn *c);

/* ------------------------------------------------------------ exchanges */

/* A request head as a protocol received it: the memory is the protocol's and
 * must stay until giong_http_exchange_free(). */
struct giong_http_head_in {
	const char *method, *path, *authority; /* authority: NULL if none came */
	size_t method_len, path_len, authority_len;
	const struct giong_http_field *fields; /* the regular fields, names lowercase */
	uint32_t nfields;
	int64_t content_length; /* -1: not given */
	bool has_body;          /* body bytes may follow (no END_STREAM on the head) */
	uint8_t version_major, version_minor;
};

/*
 * giong_http_exchange_new() - a request and its response on @c, answered by
 * @c's protocol, with @px the protocol's state of the exchange (given back by
 * giong_http_exchange_state()). 0, -EINVAL, -ENOMEM.
 */
GIONG_API int giong_http_exchange_new(struct giong_http_conn *c, void *px,
				      struct giong_http_request **req,
				      struct giong_http_response **res);
/* The protocol's state of @req's / @res's exchange. */
GIONG_API void *giong_http_exchange_state(const struct giong_http_request *req);
GIONG_API void *giong_http_response_exchange_state(const struct giong_http_response *res);
/* The status of @res (200 unless the handler set another). */
GIONG_API int giong_http_response_status_code(const struct giong_http_response *res);
/* The request of @res. */
GIONG_API struct giong_http_request *giong_http_response_request(struct giong_http_response *res);
/*
 * giong_http_request_head_set() - give @req its head (@h: checked as HTTP/1.1
 * checks its own: a method token, an origin-form path or "*" for OPTIONS, an
 * authority). 0, or the status to refuse the request with (400), counted as
 * refused; -EINVAL for a NULL argument.
 */
GIONG_API int giong_http_request_head_set(struct giong_http_request *req,
					  const struct giong_http_head_in *h);
/*
 * giong_http_exchange_run() - answer @req: the router, the body limit, the
 * library's refusals (404, 405, 413), the handler, what it left open, the
 * access log; with @refuse a status (giong_http_request_head_set()'s), only
 * that status. From a task; may suspend. 0, or -errno: the exchange broke (the
 * protocol resets it).
 */
GIONG_API int giong_http_exchange_run(struct giong_http_request *req, int refuse);
/* True when the handler asked to close (giong_http_response_close()) or
 * shutdown began while it ran: the protocol ends the connection gracefully. */
GIONG_API bool giong_http_response_wants_close(const struct giong_http_response *res);
/* True when the response's head went out in part (it can no longer be taken back). */
GIONG_API void giong_http_response_set_sent(struct giong_http_response *res);
/* The request's body ended (all of it was given by body_next): the protocol says so. */
GIONG_API void giong_http_request_body_done(struct giong_http_request *req);
/* Free what giong_http_exchange_new() made (NULL: nothing). */
GIONG_API void giong_http_exchange_free(struct giong_http_request *req);

GIONG_END_DECLS

#endif /* GIONG_HTTP_PROTOCOL_H */
