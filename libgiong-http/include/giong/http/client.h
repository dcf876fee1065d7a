/* SPDX-License-Identifier: MIT */
/*
 * giong/http/client.h - an HTTP client over giong_stream: HTTP/1.1, and the
 * protocols a program passes by pointer (HTTP/2: libgiong-http2).
 *
 * A client is settings, made once and shared read-only by every worker;
 * each worker keeps its own pool of idle connections, per origin (scheme,
 * host, port). One request and its response are an exchange:
 *
 *	struct giong_http_exchange *ex;
 *	giong_http_exchange_begin(cli, "GET", "http://127.0.0.1:8080/users/1", &ex);
 *	giong_http_exchange_header(ex, "Accept", "application/json");
 *	int status = giong_http_exchange_response(ex);     // sends, reads the head
 *	ssize_t n = giong_http_exchange_body(ex, &body);    // the whole body
 *	giong_http_exchange_end(ex);                        // back to the pool
 *
 * or, for the common case, giong_http_get(cli, url, &status, &body).
 *
 * Plain http:// runs on giong_tcp_connect(); https:// goes through the
 * options' @connect function, which turns the TCP stream into the stream the
 * client talks to (a TLS handshake: libgiong-http links no TLS library).
 *
 * Responses are parsed with the server's own code (the same scanner for the
 * field section, the same framing rules, http-parser's second opinion): a
 * head that is malformed or whose framing is doubtful is -EBADMSG and the
 * connection is closed, never read on out of step. docs/http.md ("Client")
 * has the rules.
 *
 * Keep-alive: an exchange ended with its response read to the end, on a
 * connection both sides keep alive, puts it back in the worker's pool,
 * parked with no task and no pool buffer (giong_stream_on_readable()); the
 * server closing it there closes it at once. A request on a pooled
 * connection that fails before any byte of a response came (the server
 * closed it in between) is sent again, once, on a new connection when its
 * method is idempotent and its body, if any, was given from memory.
 *
 * Expect: 100-continue (giong_http_exchange_expect_continue()): the head
 * goes first and the body only once the server asks for it, or after a
 * short wait; a server that answers at once saves the upload, and that
 * connection is then closed, not reused.
 *
 * Deadlines: connect (TCP and @connect), the response head (from the end of
 * the request) and the body (from the end of the head); each gives
 * -ETIMEDOUT, after which the exchange only ends and its connection is
 * closed, not reused. They combine with the calling task's own deadline.
 *
 * Pipelining (RFC 9112 9.3.2): a pipeline sends the requests of several
 * exchanges to one origin on one connection in one write, then hands their
 * responses back in the order sent, each one an exchange as above:
 *
 *	giong_http_pipeline_begin(cli, 0, &pl);
 *	for (i = 0; i < n; i++) {
 *		giong_http_exchange_begin(cli, "GET", url[i], &ex);
 *		giong_http_pipeline_add(pl, ex, NULL, 0);          // the pipeline's now
 *	}
 *	while ((status = giong_http_pipeline_next(pl, &ex)) != 0) {  // sends first
 *		if (status > 0)
 *			n = giong_http_exchange_body(ex, &body);
 *		giong_http_exchange_end(ex);                        // before the next
 *	}
 *	giong_http_pipeline_end(pl);                                // pooled, or closed
 *
 * HTTP/2 (giong_http_client_options.protocols, libgiong-http2's
 * giong_http2()): the same calls; the exchanges to one origin then run as
 * streams of one connection at once, an exchange ended early resets only its
 * stream, and a pipeline's requests go as streams. docs/http2.md ("The client
 * speaks HTTP/2") has the rules and the differences.
 *
 * Threads: an exchange belongs to the worker it was begun on ("Owner worker
 * only"), as do its connections and pipelines. Nothing here is for another
 * thread.
 */
#ifndef GIONG_HTTP_CLIENT_H
#define GIONG_HTTP_CLIENT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <giong/core/api.h>
#include <giong/net/stream.h>

GIONG_BEGIN_DECLS

struct giong_http_client;
struct giong_http_exchange;
struct giong_http_pipeline;
struct giong_http_protocol;

/*
 * A connector for https:// (and any origin whose scheme needs a layer over
 * TCP): turn @tcp, connected to @host, into the stream the client talks to,
 * in *@out (a TLS handshake sending @host as SNI and checking the
 * certificate names it). Runs in the exchange's task under the connect
 * deadline. Returns 0 (*@out owns @tcp from now on, per the stacking rules of
 * <giong/net/stream.h>), or -errno / GIONG_ETLS*: @tcp is then still the
 * caller's, and the client closes it.
 */
typedef int (*giong_http_connect_fn)(struct giong_stream *tcp, const char *host, void *ctx,
				     struct giong_stream **out);

/* Defaults of struct giong_http_client_options. */
#define GIONG_HTTP_CLIENT_HEAD (64u * 1024)
#define GIONG_HTTP_CLIENT_FIELDS 100u
#define GIONG_HTTP_CLIENT_BODY (8u * 1024 * 1024)
#define GIONG_HTTP_CLIENT_CONNECT_TIMEOUT_MS 10000u
#define GIONG_HTTP_CLIENT_HEAD_TIMEOUT_MS 30000u
#define GIONG_HTTP_CLIENT_BODY_TIMEOUT_MS 60000u
#define GIONG_HTTP_CLIENT_POOL 16u
#define GIONG_HTTP_CLIENT_IDLE_TIMEOUT_MS 30000u
/* giong_http_exchange_expect_continue()'s wait for the server's answer. */
#define GIONG_HTTP_CLIENT_EXPECT_TIMEOUT_MS 1000u

/* Settings. Zero fields take the defaults above. */
struct giong_http_client_options {
	uint32_t head_max;   /* bytes of a response head, status line included */
	uint32_t fields_max; /* header fields of a response */
	uint64_t body_max;   /* bytes giong_http_exchange_body() takes (streaming: no limit) */
	uint32_t connect_timeout_ms;   /* TCP connect and the connector (TLS handshake) */
	uint32_t head_timeout_ms;      /* each write of the request, then its response's head */
	uint32_t body_timeout_ms;      /* the whole response body, from the end of its head */
	uint32_t pool_max;             /* idle connections kept per origin, per worker */
	uint32_t idle_timeout_ms;      /* how long one stays in the pool */
	bool no_keep_alive;            /* send Connection: close, pool nothing */
	giong_http_connect_fn connect; /* https://; NULL: https:// is -EPROTONOSUPPORT */
	void *connect_ctx;
	/*
	 * Protocols beside HTTP/1.1 (NULL-terminated, at most 8; NULL: HTTP/1.1
	 * only), each a table with the client's calls (<giong/http/protocol.h>):
	 * libgiong-http2's giong_http2(). Over https:// the client speaks the one
	 * the server chose by ALPN (the connector's TLS configuration offers their
	 * names first: giong_tls_config_alpn(cfg, {"h2", "http/1.1"})), else
	 * HTTP/1.1. Over http:// it speaks the first of them from the first byte
	 * when @prior_knowledge is set (h2c: the server must speak it), else
	 * HTTP/1.1. On such a connection the exchanges to one origin run as
	 * streams side by side, up to the server's limit of concurrent streams;
	 * the API is the same. docs/http2.md ("The client") has the differences.
	 */
	const struct giong_http_protocol *const *protocols;
	bool prior_knowledge;
};

/* A worker's counters (giong_http_client_stats()). */
struct giong_http_client_stats {
	uint64_t exchanges;     /* exchanges begun */
	uint64_t connects;      /* connections made (their connect and connector succeeded) */
	uint64_t reused;        /* requests sent on a pooled connection */
	uint64_t retries;       /* requests sent again after a pooled connection failed */
	uint64_t timeouts;      /* exchanges ended by a deadline */
	uint64_t bad_responses; /* heads or bodies refused as malformed or over a limit */
	uint64_t idle_closed;   /* pooled connections the server closed, or that timed out */
	uint32_t idle;          /* connections in the pool now */
	uint64_t pipelines;     /* pipelines begun */
	uint64_t pipelined;     /* requests sent in pipelines (sent again: counted in retries) */
	uint64_t streams;       /* requests sent as streams of another protocol (HTTP/2) */
	uint64_t multiplexed;   /* ... of them on a connection other streams were open on */
};

/*
 * giong_http_client_new() - a client with @opts (NULL: the defaults; copied).
 * Returns 0 and an owned client in *@ret (free with giong_http_client_free()),
 * -EINVAL (NULL @ret), -ENOMEM. Any thread. A client serves one runtime at a
 * time: its per-worker table is sized by the first runtime that uses it, and a
 * later runtime with more workers gets -EINVAL from those workers' exchanges
 * (make one client per runtime).
 */
GIONG_API int giong_http_client_new(const struct giong_http_client_options *opts,
				    struct giong_http_client **ret);

/*
 * giong_http_client_free() - free @cli (NULL: nothing). A worker's pool of it
 * is closed when the worker ends (or with giong_http_client_close_idle()), so
 * free it once the runtime that used it has ended. Returns 0, or -EBUSY
 * while a worker still holds state of it (nothing freed).
 */
GIONG_API int giong_http_client_free(struct giong_http_client *cli);

/*
 * giong_http_client_close_idle() - close the calling worker's pooled
 * connections of @cli. Returns how many were closed, -EINVAL, or
 * GIONG_ENOTWORKER. Does not suspend. Owner worker only.
 */
GIONG_API int giong_http_client_close_idle(struct giong_http_client *cli);

/*
 * giong_http_client_stats() - worker @worker's counters of @cli into @out
 * (zeros for a worker that never used it, or once it ended). The calling
 * worker's may be read at any time. Returns 0, or -EINVAL.
 */
GIONG_API int giong_http_client_stats(const struct giong_http_client *cli, unsigned worker,
				      struct giong_http_client_stats *out);

/*
 * giong_http_exchange_begin() - begin a request of @method (a token: "GET",
 * "POST", ... copied) to @url ("http://host[:port][/path][?query]", or
 * https://; a fragment is dropped; no userinfo). Connects nothing yet: the
 * connection is taken or made when the request is sent. Returns 0 and an
 * owned exchange in *@ret (end it with giong_http_exchange_end()), -EINVAL
 * (NULL argument, a method that is not a token, CONNECT, a URL that does not
 * parse), -EPROTONOSUPPORT (a scheme other than http and https, or https
 * without a connector), -ENOMEM, GIONG_ENOTWORKER. Does not suspend. Owner
 * worker only.
 */
GIONG_API int giong_http_exchange_begin(struct giong_http_client *cli, const char *method,
					const char *url, struct giong_http_exchange **ret);

/*
 * giong_http_exchange_header() - add the field @name: @value to the request
 * (both copied; _n: with lengths). The client writes Host, Content-Length,
 * Transfer-Encoding and Connection itself: those, Keep-Alive, Upgrade, TE and
 * Trailer are -EINVAL, as are a name that is not a token and a value with
 * CR, LF, NUL or another control byte but HTAB. Returns 0, -EINVAL, -E2BIG
 * (the head past 64 KiB), -EALREADY once the head was sent, -ENOMEM.
 */
GIONG_API int giong_http_exchange_header(struct giong_http_exchange *ex, const char *name,
					 const char *value);
GIONG_API int giong_http_exchange_header_n(struct giong_http_exchange *ex, const char *name,
					   size_t name_len, const char *value, size_t value_len);

/*
 * giong_http_exchange_expect_continue() - send the request's body only when
 * the server asks for it (RFC 9110 10.1.1): the head goes alone, with
 * "Expect: 100-continue", then the client waits up to @timeout_ms (0:
 * GIONG_HTTP_CLIENT_EXPECT_TIMEOUT_MS) for the server's answer:
 *  - 100 Continue: the body goes; another interim response (103) is skipped;
 *  - the wait passes: the body goes anyway (the server, or one in between,
 *    may not know the expectation);
 *  - a final response (417, 401, 413...): the body is withheld, never sent:
 *    giong_http_exchange_send() and giong_http_exchange_write() return 1,
 *    giong_http_exchange_response() that response, and the connection is
 *    closed when the exchange ends, never pooled (the server may still wait
 *    for the body, or take its first bytes for the next request).
 * The wait is part of giong_http_exchange_send(), or of the first
 * giong_http_exchange_write() of a streamed body; without a body no field is
 * sent and nothing waits. The retry above still holds: a pooled connection
 * the server closed before any answer sends it all again on a new one (and
 * waits again). A calling task's deadline that passes during the wait is
 * -ETIMEDOUT, not a go-ahead. Not for a pipeline: giong_http_pipeline_add()
 * refuses such an exchange (-EINVAL). Returns 0, -EINVAL (NULL @ex), -EBUSY
 * (queued in a pipeline), -EALREADY (the head was sent). Does not suspend.
 * Owner worker only.
 */
GIONG_API int giong_http_exchange_expect_continue(struct giong_http_exchange *ex,
						  uint32_t timeout_ms);

/*
 * giong_http_exchange_send() - send the request with @body[0..@len) as its
 * body (Content-Length; none for a GET, HEAD, DELETE, OPTIONS or TRACE with
 * @len 0), head and body in one write (with expect-continue: the head, the
 * wait, the body). @body is borrowed until giong_http_exchange_response()
 * returned (it may be sent again, see the retry above). Returns 0, 1 (with
 * expect-continue only) when the server answered before the body, which was
 * not sent, or -errno (the exchange has then failed: only
 * giong_http_exchange_end() is left): -EALREADY (sent already, or streamed),
 * -ETIMEDOUT, -ECONNREFUSED and the other errors of connecting, of the
 * connector and of writing. May suspend. Owner worker only.
 */
GIONG_API int giong_http_exchange_send(struct giong_http_exchange *ex, const void *body,
				       size_t len);

/*
 * giong_http_exchange_write() - stream the request body: the first call
 * sends the head (Transfer-Encoding: chunked), each call one chunk of
 * @buf[0..@len) (borrowed until it returns; @len 0 sends nothing);
 * giong_http_exchange_response() sends the last chunk. A streamed request is
 * never sent again. Returns 0 or -errno as giong_http_exchange_send(); with
 * expect-continue the first call waits as send() does, and when the server
 * answered before the body it and every later call return 1 with nothing
 * sent (giong_http_exchange_response() then reads that answer). May
 * suspend. Owner worker only.
 */
GIONG_API int giong_http_exchange_write(struct giong_http_exchange *ex, const void *buf,
					size_t len);

/*
 * giong_http_exchange_response() - finish sending the request (all of it
 * when nothing was sent yet: the head alone), then read the response head,
 * skipping interim 1xx responses (100 Continue, 103 Early Hints). Returns
 * the final status (200..599; 101 is -EPROTO: no upgrade was asked for), or
 * -errno: -ETIMEDOUT (head deadline), -EBADMSG (a malformed head or
 * framing), -EMSGSIZE (over head_max or fields_max), -ECONNRESET (the server
 * closed before a response; after the retry when one was allowed), the
 * errors of giong_http_exchange_send(). Calling it again returns the same.
 * May suspend. Owner worker only.
 */
GIONG_API int giong_http_exchange_response(struct giong_http_exchange *ex);

/* giong_http_exchange_status() - the final status once the head was read,
 * else -EAGAIN (not yet), -errno (failed) or -EINVAL. */
GIONG_API int giong_http_exchange_status(const struct giong_http_exchange *ex);

/*
 * giong_http_exchange_field() - the value of the response's first field named
 * @name (case-insensitive), not NUL-terminated, its length in *@len; NULL
 * (and *@len 0) when there is none or no head was read. Valid until the
 * exchange ends. @len may be NULL.
 */
GIONG_API const char *giong_http_exchange_field(const struct giong_http_exchange *ex,
						const char *name, size_t *len);

/* giong_http_exchange_field_count() - the response's fields, or -EAGAIN /
 * -EINVAL. giong_http_exchange_field_at() - the @i-th, in the order sent:
 * 0 with the name and value (valid until the exchange ends), -ENOENT past the
 * last, -EAGAIN before the head, -EINVAL. */
GIONG_API int giong_http_exchange_field_count(const struct giong_http_exchange *ex);
GIONG_API int giong_http_exchange_field_at(const struct giong_http_exchange *ex, unsigned i,
					   const char **name, size_t *name_len, const char **value,
					   size_t *value_len);

/* giong_http_exchange_content_length() - the response's Content-Length; 0
 * for a response without a body (HEAD, 1xx, 204, 304); -1 for a chunked or
 * close-delimited one; -EAGAIN before the head, -EINVAL. */
GIONG_API int64_t giong_http_exchange_content_length(const struct giong_http_exchange *ex);

/*
 * giong_http_exchange_body() - read the whole response body (de-chunked, at
 * most body_max bytes) and lend it in *@data (in place when it came in one
 * piece, else a copy): valid until the exchange ends. Returns its length,
 * or -errno: -EMSGSIZE (over body_max), -ETIMEDOUT (body deadline), -EBADMSG
 * (malformed chunked framing), -ECONNRESET (the connection ended before the
 * body did), -EALREADY (the body was streamed), -EAGAIN (no head read yet);
 * the same again on a later call. May suspend. Owner worker only.
 */
GIONG_API ssize_t giong_http_exchange_body(struct giong_http_exchange *ex, const void **data);

/*
 * giong_http_exchange_next() - stream the body: the next span of it, lent in
 * place from the receive buffers in *@data (valid until the next call or the
 * end of the exchange). Returns its length (> 0), 0 at the end of the body,
 * or -errno as giong_http_exchange_body() (no body_max here). May suspend.
 * Owner worker only.
 */
GIONG_API ssize_t giong_http_exchange_next(struct giong_http_exchange *ex, const void **data);

/* giong_http_exchange_read() - the same, copied into @buf (at most @len
 * bytes). May suspend. Owner worker only. */
GIONG_API ssize_t giong_http_exchange_read(struct giong_http_exchange *ex, void *buf, size_t len);

/*
 * giong_http_exchange_end() - end @ex (takes ownership; NULL: nothing). Its
 * connection goes back to the pool when the response was read to its end,
 * both sides keep the connection alive, nothing failed and nothing came
 * after the response; else it is closed (a body not read to its end closes
 * it: reading it could take any time). Returns 1 when the connection was
 * pooled, 0 when it was closed (or there was none). An exchange handed back
 * by giong_http_pipeline_next(): 1 when the connection goes on to the next
 * response (or, after the last, to the pool), 0 when it was closed and the
 * rest of the pipeline fails; one still queued in a pipeline is -EBUSY
 * (nothing done). Does not suspend. Owner worker only.
 */
GIONG_API int giong_http_exchange_end(struct giong_http_exchange *ex);

/*
 * giong_http_get() - GET @url, the whole exchange: the status in *@status
 * and the body (at most body_max bytes, NUL-terminated for convenience) in
 * *@body, owned: free it with free(). Returns the body's length, or -errno
 * as the calls above (*@body NULL then). May suspend. Owner worker only.
 */
GIONG_API ssize_t giong_http_get(struct giong_http_client *cli, const char *url, int *status,
				 char **body);

/* Requests one pipeline takes (its write is one writev of two pieces each). */
#define GIONG_HTTP_PIPELINE_MAX 256u

/* Flags of giong_http_pipeline_begin(). */
enum giong_http_pipeline_flags {
	/* Let a POST, PATCH or other method that is not idempotent be added. By
	 * default it is -EINVAL: if the connection fails, the client cannot
	 * know whether the server acted on it (RFC 9112 9.3.2). A pipeline with
	 * one is never sent again. */
	GIONG_HTTP_PIPELINE_ANY_METHOD = 1u << 0,
};

/*
 * giong_http_pipeline_begin() - an empty pipeline of @cli with @flags (enum
 * giong_http_pipeline_flags). Connects nothing yet. Returns 0 and an owned
 * pipeline in *@ret (end it with giong_http_pipeline_end()), -EINVAL (NULL
 * argument, an unknown flag), -ENOMEM, GIONG_ENOTWORKER. Does not suspend.
 * Owner worker only.
 */
GIONG_API int giong_http_pipeline_begin(struct giong_http_client *cli, unsigned flags,
					struct giong_http_pipeline **ret);

/*
 * giong_http_pipeline_add() - queue @ex, begun and with its fields added but
 * not sent, with @body[0..@len) as its body (as giong_http_exchange_send()
 * would send it). @body is borrowed until the first giong_http_pipeline_next()
 * returned (the pipeline may be sent again, as an exchange is). Takes
 * ownership of @ex on success: giong_http_pipeline_next() hands it back, and
 * until then the exchange calls on it are -EBUSY.
 * Returns 0, or -errno and @ex is still the caller's: -EINVAL (NULL
 * argument, @ex sent, streamed, in a pipeline, of another client or worker,
 * with expect-continue asked for (a pipeline's requests go in one write, no
 * body waits), a method that is not idempotent without
 * GIONG_HTTP_PIPELINE_ANY_METHOD),
 * -EXDEV (another origin than the first exchange's), -E2BIG (past
 * GIONG_HTTP_PIPELINE_MAX), -EALREADY (the pipeline was sent), -ENOMEM.
 * Does not suspend. Owner worker only.
 */
GIONG_API int giong_http_pipeline_add(struct giong_http_pipeline *pl,
				      struct giong_http_exchange *ex, const void *body, size_t len);

/*
 * giong_http_pipeline_send() - send every queued request on one connection
 * (the pool's, else a new one) in one write. On a pooled connection that
 * turns out closed, the whole pipeline is sent again once on a new one,
 * as an exchange is (not with a method that is not idempotent). Returns 0,
 * -EALREADY (sent already), -ENOENT (nothing queued), or the errors of
 * giong_http_exchange_send(), which then every exchange of the pipeline
 * gets from giong_http_pipeline_next(). May suspend. Owner worker only.
 */
GIONG_API int giong_http_pipeline_send(struct giong_http_pipeline *pl);

/*
 * giong_http_pipeline_next() - the next exchange, in the order added, with its
 * response head read as by giong_http_exchange_response() (sending the
 * pipeline first if it was not). Returns its status (200..599) or -errno,
 * and the exchange in *@ex, owned again by the caller: read its fields and
 * body as any exchange's, then end it with giong_http_exchange_end() before
 * the next call. Returns 0 with *@ex NULL when every exchange was handed
 * back; -EBUSY (*@ex NULL) while the last one handed back is not ended;
 * -EINVAL. Once a response fails, or an exchange is ended with its body not
 * read to the end, or a response says Connection: close, the connection is
 * closed and every later exchange fails, none read out of step: with
 * -ECONNRESET when the server closed it (or said it would), else with
 * -ECONNABORTED (the client gave up on a connection it could no longer
 * trust). May suspend. Owner worker only.
 */
GIONG_API int giong_http_pipeline_next(struct giong_http_pipeline *pl,
				       struct giong_http_exchange **ex);

/*
 * giong_http_pipeline_end() - end @pl (takes ownership; NULL: nothing).
 * Exchanges not handed back yet are ended unsent or unread. The connection
 * goes back to the pool only when every response was read to its end, by the
 * rules of giong_http_exchange_end(); else it is closed. Returns 1 when it
 * was pooled, 0 when it was closed (or there was none), -EBUSY (nothing
 * done) while an exchange handed back is not ended. Does not suspend. Owner
 * worker only.
 */
GIONG_API int giong_http_pipeline_end(struct giong_http_pipeline *pl);

GIONG_END_DECLS

#endif /* GIONG_HTTP_CLIENT_H */
