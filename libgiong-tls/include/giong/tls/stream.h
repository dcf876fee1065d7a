/* SPDX-License-Identifier: MIT */
/*
 * giong/tls/stream.h - TLS 1.2/1.3 as a giong_stream over another one.
 *
 * giong_tls_accept() and giong_tls_connect() run a handshake over @lower
 * (a TCP or Unix stream, or any giong_stream) and make a stream that reads
 * and writes plaintext: every giong_stream_*() call of <giong/net/stream.h>
 * works on it, with the same contracts as on a socket stream. Its
 * ciphertext goes through @lower's own calls only (the TLS library is never
 * handed a descriptor), from the task that called the TLS stream: the TLS
 * library's "want read" is that task parking in @lower's receive.
 *
 * Stacking (<giong/net/stream.h>): a successful accept or connect hands
 * @lower to the TLS stream, and giong_stream_close() of the TLS stream
 * closes @lower too. A failed one leaves @lower to the caller, as it was
 * (except for the bytes the handshake consumed): close it.
 *
 * Receiving: giong_stream_recv() hands out decrypted bytes in a heap buffer
 * (giong_recvbuf_alloc(); no pool buffer is held by the caller), one TLS
 * record's worth per call. Cancel safety: a timeout or cancellation while a
 * task waits in recv or read loses nothing; a record half received stays
 * buffered for the next call.
 *
 * Writing: one giong_stream_writev() encrypts up to 64 KiB of plaintext
 * into records and sends them in one write of @lower; a short count is
 * then not an error (giong_stream_write_all() loops). Writes of two tasks
 * never interleave records. A write that fails, times out or is cancelled
 * after some of its records may have left leaves the stream broken: every
 * later call fails with -EPIPE and the peer sees a cut stream, never a
 * corrupt record.
 *
 * Ending: giong_stream_shutdown(s, SHUT_WR) sends close_notify and shuts
 * @lower's write side. On a broken stream, or when the close_notify cannot
 * be made or sent, it still shuts @lower's write side (the peer sees a cut
 * stream at once, not when this one is closed) and returns the error
 * (-EPIPE when broken). giong_stream_close() sends close_notify too when the
 * stream is healthy (without waiting: best effort), then frees the TLS
 * state. The end of @lower without the peer's close_notify is
 * GIONG_ETLS_TRUNCATED, never a clean end of stream (0).
 *
 * Idle: giong_stream_on_readable() is passed down to @lower once nothing
 * decrypted or undecrypted is held, and the TLS library's idle buffers are
 * released: a parked HTTPS keep-alive connection holds no task and no pool
 * buffer.
 *
 * Errors: -errno of @lower (-ETIMEDOUT, -ECANCELED, -ECONNRESET, ...), or
 * GIONG_ETLS* (<giong/core/error.h>): GIONG_ETLS_HANDSHAKE,
 * GIONG_ETLS_CERT, GIONG_ETLS_ALERT, GIONG_ETLS_TRUNCATED, GIONG_ETLS,
 * GIONG_ETLS_CONFIG. giong_tls_last_error() gives the backend's own text.
 *
 * Stack: a handshake runs the TLS library on the calling task's stack (RSA
 * and ECC use several KiB); docs/tls.md gives the measured depth of each
 * backend against core's default 64 KiB fiber stack.
 */
#ifndef GIONG_TLS_STREAM_H
#define GIONG_TLS_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <giong/core/api.h>
#include <giong/net/stream.h>
#include <giong/tls/config.h>

GIONG_BEGIN_DECLS

/*
 * giong_tls_accept() - the server side of a handshake over @lower, in the
 * calling task, under its deadline and the configuration's handshake
 * timeout. Returns 0 and the TLS stream in *@ret (it owns @lower now), or
 * -errno / GIONG_ETLS*, *@ret NULL and @lower still the caller's: -EINVAL
 * (NULL argument), GIONG_ETLS_CONFIG (no certificate, or one that does not
 * load), -ETIMEDOUT, -ECANCELED, GIONG_ETLS_HANDSHAKE, GIONG_ETLS_CERT (a
 * client certificate refused), GIONG_ETLS_ALERT, GIONG_ETLS_TRUNCATED (the
 * client left half way), -ENOMEM, GIONG_ENOTWORKER. May suspend.
 */
GIONG_API int giong_tls_accept(struct giong_stream *lower, struct giong_tls_config *cfg,
			       struct giong_stream **ret);

/*
 * giong_tls_connect() - the client side: sends @server_name as SNI (unless
 * it is a numeric address) and, with verification on, checks that the
 * server's certificate names it (NULL @server_name: no SNI and, when
 * verifying, -EINVAL). Returns as giong_tls_accept() (GIONG_ETLS_CERT: an
 * untrusted, expired or misnamed server certificate).
 */
GIONG_API int giong_tls_connect(struct giong_stream *lower, struct giong_tls_config *cfg,
				const char *server_name, struct giong_stream **ret);

/*
 * giong_tls_wrap_accept() - giong_tls_accept() in the shape of the HTTP
 * server's wrap function (giong_http_wrap_fn): @cfg is the struct
 * giong_tls_config. HTTPS is then options.wrap = giong_tls_wrap_accept,
 * options.wrap_ctx = cfg; libgiong-http still links no TLS library.
 */
GIONG_API int giong_tls_wrap_accept(struct giong_stream *accepted, void *cfg,
				    struct giong_stream **ret);

/* giong_tls_is_tls() - true if @s itself is a TLS stream of this library. */
GIONG_API bool giong_tls_is_tls(const struct giong_stream *s);

/*
 * giong_tls_alpn() - the protocol agreed by ALPN ("http/1.1"), not
 * NUL-terminated, its length in *@len. Returns NULL (and *@len 0) when
 * none was, or @s is not a TLS stream. Valid while @s is open.
 */
GIONG_API const char *giong_tls_alpn(const struct giong_stream *s, size_t *len);

/* giong_tls_version() - "TLSv1.3" or "TLSv1.2"; giong_tls_cipher() - the
 * suite ("TLS_AES_128_GCM_SHA256", in the backend's spelling). NULL when
 * @s is not a TLS stream. Static or valid while @s is open. */
GIONG_API const char *giong_tls_version(const struct giong_stream *s);
GIONG_API const char *giong_tls_cipher(const struct giong_stream *s);

/* giong_tls_resumed() - 1 if the handshake resumed a session (a ticket),
 * 0 if it was a full one, -EINVAL if @s is not a TLS stream. */
GIONG_API int giong_tls_resumed(const struct giong_stream *s);

/*
 * giong_tls_last_error() - the backend's own words for the last TLS error
 * of @s ("certificate has expired", "no application protocol"), for a log.
 * "" when there was none. Valid until the next call on @s. With a NULL
 * @s: the words of the calling thread's last failed giong_tls_accept() or
 * giong_tls_connect() (whose stream is gone), valid until the next one.
 */
GIONG_API const char *giong_tls_last_error(const struct giong_stream *s);

/* giong_tls_backend_name() - "wolfssl", "openssl", ... of @s's backend;
 * NULL when @s is not a TLS stream. */
GIONG_API const char *giong_tls_backend_name(const struct giong_stream *s);

/* What kernel TLS did for the process's connections (giong_tls_config_ktls()). */
struct giong_tls_ktls_stats {
	uint64_t tx;              /* connections whose send direction the kernel took */
	uint64_t fallback_module; /* none here: no `tls` module (or a kernel without it) */
	uint64_t fallback_cipher; /* a version or cipher the kernel or the export cannot take */
	uint64_t fallback_other;  /* anything else: a backend without the export, no
				   * descriptor for a direct socket, no memory */
	/* The receive direction, handed over after the send direction: */
	uint64_t rx;          /* connections whose receive direction the kernel took */
	uint64_t rx_fallback; /* ...whose receive stayed in user space (refused, or
			       * bytes kept arriving ahead of a record boundary) */
	uint64_t released;    /* TLS library objects freed: both directions in the kernel */
	uint64_t key_update;  /* connections ended by the peer's TLS 1.3 KeyUpdate, which
			       * Linux before 6.14 cannot follow */
};

/* giong_tls_ktls_stats() - the process's counts since it started, into *@out.
 * Returns 0, or -EINVAL for NULL. Any thread. */
GIONG_API int giong_tls_ktls_stats(struct giong_tls_ktls_stats *out);

GIONG_END_DECLS

#endif /* GIONG_TLS_STREAM_H */
