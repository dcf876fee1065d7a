/* SPDX-License-Identifier: MIT */
/*
 * giong/http/server.h - serving HTTP/1.1 on a listener, or on one stream.
 *
 * A server is a router plus settings, made once and shared read-only by
 * every worker; each worker serves its own listener (SO_REUSEPORT spreads
 * the connections), with its own connections, counters and caches.
 *
 * A connection's life: accepted, wrapped (the options' @wrap: a TLS
 * handshake, or nothing), then parked on giong_stream_on_readable() with no
 * task: an idle connection holds no fiber, no stack and no pool buffer.
 * When bytes arrive a task from the stack pool parses every complete request
 * that is buffered, runs each handler in order, and sends all their
 * responses in one write without waiting for it to complete; with nothing
 * more buffered the task ends and the connection parks again.
 *
 * Shutdown (giong_shutdown(), or a signal with shutdown_on_signals): no new
 * connection is accepted - the listener is stopped (giong_listener_stop()),
 * so the kernel sends new connections to the other listeners of the port, a
 * new process's in a restart - and the connections accepted already are
 * served; idle keep-alive connections are closed at once; a connection with
 * no request yet (its client connected before the stop and is sending) is
 * kept up to a second (at most the head timeout) for its first request;
 * requests in progress are answered within the runtime's grace period with
 * Connection: close; then giong_http_serve() returns.
 */
#ifndef GIONG_HTTP_SERVER_H
#define GIONG_HTTP_SERVER_H

#include <stdint.h>

#include <giong/core/api.h>
#include <giong/http/limits.h>
#include <giong/http/router.h>
#include <giong/net/stream.h>
#include <giong/net/tcp.h>

GIONG_BEGIN_DECLS

struct giong_http_server;
struct giong_http_protocol;

/*
 * A wrap function: turn @accepted into the stream the server talks to, in
 * *@out (TLS: a handshake, then the TLS stream over @accepted). Runs in the
 * connection's task, under the head deadline. Returns 0 (*@out owns
 * @accepted from now on, per the stacking rules of <giong/net/stream.h>; it
 * may be @accepted itself), or -errno: the server then closes @accepted.
 */
typedef int (*giong_http_wrap_fn)(struct giong_stream *accepted, void *ctx,
				  struct giong_stream **out);

/* One line of an access log: what giong_http_log_fn gets. For a head that
 * was refused (400, 408, 414, 431, 501, 505, 417) the request is an empty
 * one: nothing of what the client sent is trusted enough to show. */
struct giong_http_log_entry {
	const struct giong_http_request *req; /* valid during the call only */
	int status;                           /* the status sent */
	uint64_t body_bytes;                  /* body bytes sent (0 for HEAD) */
	const struct giong_stream *stream;    /* for the peer's address */
};

/* Called in the connection's task after each response was queued or sent.
 * Should not park: the responses behind it wait. */
typedef void (*giong_http_log_fn)(const struct giong_http_log_entry *e, void *ctx);

/* Settings. Zero fields take the defaults. */
struct giong_http_server_options {
	const struct giong_http_limits *limits; /* copied; NULL: giong_http_limits_init() */
	const char *server_name;                /* "Server" field value (copied); NULL: none */
	giong_http_wrap_fn wrap;                /* NULL: talk to the accepted stream itself */
	void *wrap_ctx;
	giong_http_log_fn log; /* NULL: no access log */
	void *log_ctx;
	/* Expect a PROXY protocol header (v1 or v2, HAProxy's proxy-protocol.txt)
	 * before anything else on every connection, from a load balancer in
	 * front: giong_http_request_client_addr() then gives the client it
	 * names. A connection without a valid one gets 400 and is closed. Off by
	 * default: only turn it on behind a balancer that always sends it, or
	 * any client can claim any address. Plain sockets only (the header comes
	 * before the wrap, a TLS handshake say). */
	bool proxy_protocol;
	/* Protocols besides HTTP/1.1, most preferred first, NULL-terminated (at most
	 * 8; the list is copied, the tables borrowed: they outlive the server). A
	 * connection speaks the one its TLS handshake's ALPN named, or, on a
	 * connection without ALPN, the first with GIONG_HTTP_PROTOCOL_PRIOR_KNOWLEDGE
	 * when the client starts with its preface; HTTP/1.1 otherwise. HTTP/2:
	 * libgiong-http2's giong_http2() (<giong/http2.h>). NULL: HTTP/1.1 only. A
	 * TLS wrap advertises the names by its configuration's ALPN list. */
	const struct giong_http_protocol *const *protocols;
};

/* A worker's counters (giong_http_server_stats()). */
struct giong_http_stats {
	uint64_t accepted;       /* connections taken from a listener or given */
	uint64_t requests;       /* request heads read, refused ones included */
	uint64_t responses[5];   /* by class: [0] 1xx (100 Continue) ... [4] 5xx */
	uint64_t refused;        /* heads refused (400, 414, 431, 501, 505...), then closed */
	uint64_t head_timeouts;  /* 408 for a head not in within head_timeout_ms, closed
				  * (HTTP/2: a header block, GOAWAY) */
	uint64_t body_timeouts;  /* a body not in within body_timeout_ms, closed */
	uint64_t idle_timeouts;  /* idle keep-alive connections closed after idle_timeout_ms */
	uint64_t write_timeouts; /* peers that did not read their responses, closed */
	uint64_t body_too_large; /* 413 */
	uint64_t handler_errors; /* handlers that failed (500 or a close) */
	uint64_t limit_pauses;   /* times accepting paused at limits->connections */
	uint32_t open;           /* connections open now */
	uint32_t idle;           /* of which idle: no task, no stack, no pool buffer */
};

/*
 * giong_http_server_new() - a server answering through @router (borrowed:
 * it must outlive the server and not change while serving). @opts may be
 * NULL. Returns 0 and an owned server in *@ret (free with
 * giong_http_server_free()); -EINVAL (NULL @router or @ret; limits that
 * giong_http_limits_check() refuses; a server name that is not a valid
 * field value; a protocol table of another ABI or missing a call); -ENOMEM. Any thread.
 */
GIONG_API int giong_http_server_new(const struct giong_http_router *router,
				    const struct giong_http_server_options *opts,
				    struct giong_http_server **ret);

/*
 * giong_http_server_free() - free @srv (NULL: nothing). Only once no
 * giong_http_serve*() call runs any more and their connections ended: after
 * the runtime returned, say. Returns 0, or -EBUSY while a connection is open
 * (nothing freed).
 */
GIONG_API int giong_http_server_free(struct giong_http_server *srv);

/*
 * giong_http_serve() - accept connections of @l (TCP or Unix, borrowed: the
 * caller closes it after this returns) and serve them on the calling worker,
 * until shutdown begins (or @l is closed) and every connection taken ended.
 * Past limits->connections open connections on this worker, accepting
 * pauses. Returns 0 after a shutdown; -EBADF when @l was closed; -EINVAL;
 * -ECANCELED when the calling task was cancelled (its connections go on and
 * end by themselves); GIONG_ENOTWORKER. May suspend (for the server's whole
 * life). At shutdown it stops @l (giong_listener_stop(): see above).
 * Owner worker of @l only.
 */
GIONG_API int giong_http_serve(struct giong_http_server *srv, struct giong_listener *l);

/*
 * giong_http_serve_stream() - serve the one connection @s (owned from now
 * on; closed by the server), until it ends; the wrap function is applied to
 * it too. Returns 0 when the connection ended (whatever the peer did), or
 * -EINVAL (@s is then closed too, if non-NULL), GIONG_ENOTWORKER. May
 * suspend. Owner worker of @s only.
 */
GIONG_API int giong_http_serve_stream(struct giong_http_server *srv, struct giong_stream *s);

/*
 * giong_http_server_stats() - worker @worker's counters of @srv into @out
 * (zeros for a worker that never served). The calling worker's may be read
 * at any time; another worker's only once the runtime has ended. Returns 0,
 * or -EINVAL (NULL argument, a worker index past the runtime's).
 */
GIONG_API int giong_http_server_stats(const struct giong_http_server *srv, unsigned worker,
				      struct giong_http_stats *out);

GIONG_END_DECLS

#endif /* GIONG_HTTP_SERVER_H */
