/* SPDX-License-Identifier: MIT */
/*
 * giong/http2.h - HTTP/2 (RFC 9113) for the HTTP server of libgiong-http, on
 * libnghttp2: a protocol a program passes to the server by pointer, as it
 * passes a TLS backend to a TLS configuration:
 *
 *     const struct giong_http_protocol *h2[] = {giong_http2(), NULL};
 *     struct giong_http_server_options o = {.protocols = h2, ...};
 *
 * Then the same router and handlers answer HTTP/2 streams: over TLS when the
 * client chose "h2" by ALPN (giong_tls_config_alpn(cfg, "h2,http/1.1")), and
 * on plain connections whose client starts with the HTTP/2 preface (prior
 * knowledge, "h2c"). A program that does not pass it links no HTTP/2 code and
 * no libnghttp2. docs/http2.md has the settings, their defaults and each
 * defence against the published HTTP/2 attacks.
 */
#ifndef GIONG_HTTP2_H
#define GIONG_HTTP2_H

#include <stdint.h>

#include <giong/core/api.h>
#include <giong/http/protocol.h>

GIONG_BEGIN_DECLS

/* Settings of an HTTP/2 protocol (giong_http2_new()). Zero fields take the
 * defaults named. */
struct giong_http2_options {
	/* SETTINGS_MAX_CONCURRENT_STREAMS: streams a client may have open at once
	 * (each runs its handler in a task). One more is refused with REFUSED_STREAM
	 * until the client acknowledged the setting, and after that nghttp2 ends the
	 * connection (GOAWAY PROTOCOL_ERROR; RFC 9113 5.1.2 allows either); a new
	 * stream while as many handlers still run (of streams the client reset, say)
	 * gets REFUSED_STREAM. Default 100. */
	uint32_t max_concurrent_streams;
	/* Each stream's receive window (SETTINGS_INITIAL_WINDOW_SIZE): the request
	 * body bytes a client may send ahead of the handler's reading. Default
	 * 65,535; at most 2^31 - 1. */
	uint32_t stream_window;
	/* The most bytes of one request's decoded header list (names, values and
	 * 32 per field, as RFC 9113 counts), checked as the fields arrive: past it
	 * the stream is answered 431, as HTTP/1.1 answers a head past the same
	 * server's limits->head. 0 (giong_http2_options_init()'s): that
	 * limits->head, but at most 16 KiB (every stream open at once holds up to
	 * this much: 100 x 16 KiB per connection by default). Sent as
	 * SETTINGS_MAX_HEADER_LIST_SIZE. */
	uint32_t header_list_max;
	/* New streams handled per receive (nginx's cap against Rapid Reset):
	 * beyond it the connection is closed with ENHANCE_YOUR_CALM. Default
	 * 2 x max_concurrent_streams. */
	uint32_t streams_per_read;
	/* The token bucket of frames that make the server reset a stream or that
	 * are invalid (the MadeYouReset defence): @burst at most, refilled by
	 * @rate per second; empty: GOAWAY ENHANCE_YOUR_CALM. Defaults 10,000 and
	 * 330 (nghttp2 1.69's). */
	uint32_t glitch_burst, glitch_rate;
};

/* Fill @o with the defaults. Returns 0, or -EINVAL for NULL. */
GIONG_API int giong_http2_options_init(struct giong_http2_options *o);

/*
 * giong_http2() - HTTP/2 with the default settings: a table that lives as
 * long as the program, shared by every server and thread.
 */
GIONG_API const struct giong_http_protocol *giong_http2(void);

/*
 * giong_http2_new() - HTTP/2 with settings @o (copied; NULL: the defaults),
 * in *@ret: free it with giong_http2_free() once no server that uses it
 * serves. Returns 0, -EINVAL (NULL @ret; a window past 2^31 - 1), -ENOMEM.
 * Any thread.
 */
GIONG_API int giong_http2_new(const struct giong_http2_options *o,
			      const struct giong_http_protocol **ret);
/* Free what giong_http2_new() made (NULL: nothing). Returns 0, or -EINVAL for
 * the table giong_http2() returns. */
GIONG_API int giong_http2_free(const struct giong_http_protocol *p);

/* Counters of a worker's HTTP/2 connections, beside the server's own
 * (giong_http_server_stats()): the calling worker's only. */
struct giong_http2_stats {
	uint64_t connections;     /* connections that spoke HTTP/2 */
	uint64_t streams;         /* streams opened by clients */
	uint64_t refused_streams; /* past max_concurrent_streams */
	uint64_t resets_received; /* RST_STREAM from clients */
	uint64_t goaway_calm;     /* connections ended with ENHANCE_YOUR_CALM */
	uint64_t protocol_errors; /* connections ended for a protocol error */
	uint64_t session_bytes;   /* what nghttp2 holds now, on this worker */
};

/* The calling worker's HTTP/2 counters into @out. 0, -EINVAL,
 * GIONG_ENOTWORKER. */
GIONG_API int giong_http2_stats(struct giong_http2_stats *out);

GIONG_END_DECLS

#endif /* GIONG_HTTP2_H */
