/* SPDX-License-Identifier: MIT */
/*
 * giong/tls/backend.h - the backend vtable: what a TLS library must provide
 * for libgiong-tls to run it. For backend authors; programs only pass the
 * pointer a backend library returns (giong_tls_wolfssl(),
 * giong_tls_openssl()) to giong_tls_config_new().
 *
 * Split of the work (curl's lib/vtls is the model): the generic code in
 * libgiong-tls owns the stream, all I/O, buffering, parking, deadlines,
 * cancel safety, locking of writers, close_notify and idle handling; it
 * never names a TLS library. A backend owns one TLS library: it turns the
 * settings into a library context, runs the library's handshake, read and
 * write, and maps the library's results to the codes below. It never
 * suspends and never does I/O of its own: its library's I/O callbacks (a
 * custom BIO, wolfSSL's IORecv/IOSend) call giong_tls_io_pull() and
 * giong_tls_io_push(), which only copy bytes from and to the generic
 * code's buffers; "nothing to pull" comes back as GIONG_TLS_WANT_READ and
 * the backend returns it from the operation, so the generic code parks
 * outside the TLS library and calls the operation again.
 *
 * A third backend (GnuTLS, BoringSSL, rustls-ffi) is a library that links
 * giong::tls, fills one const struct giong_tls_backend, and exports a
 * function returning it. docs/tls.md walks through it.
 */
#ifndef GIONG_TLS_BACKEND_H
#define GIONG_TLS_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <giong/core/api.h>
#include <giong/tls/config.h>

GIONG_BEGIN_DECLS

/* The layout version of struct giong_tls_backend and of the settings.
 * giong_tls_config_new() refuses a backend built against another. */
#define GIONG_TLS_BACKEND_ABI 1

/* Returned by a backend's handshake/read/shutdown: its library needs more
 * ciphertext (giong_tls_io_pull() said GIONG_TLS_WANT_READ). Outside the
 * error space of <giong/core/error.h>; never returned to a program. */
#define GIONG_TLS_WANT_READ (-4096)

/* The generic stream, opaque to backends: the context of the io calls. */
struct giong_tls_stream;

/* One certificate chain and its key, PEM in memory (files are read by the
 * generic code). Not NUL-terminated; the lengths are exact. */
struct giong_tls_cert {
	const char *chain_pem;
	size_t chain_len;
	const char *key_pem;
	size_t key_len;
};

/* What a backend builds a library context from (ctx_new). Valid until
 * ctx_free; the backend may keep pointers into it. */
struct giong_tls_settings {
	bool server;                        /* the role of this context */
	const struct giong_tls_cert *certs; /* the first is the default; SNI picks */
	size_t ncerts;
	const char *const *ca_files; /* NULL-terminated lists (may be empty) */
	const char *const *ca_dirs;
	bool ca_system;
	enum giong_tls_verify verify;
	/* ALPN in wire format (length-prefixed names, most preferred first);
	 * NULL/0 for none. */
	const unsigned char *alpn;
	size_t alpn_len;
	enum giong_tls_version min_version, max_version;
	const char *ciphers12; /* NULL: the backend's default */
	const char *ciphers13;
	bool tickets;
	/* Kernel TLS may be asked of this context's connections (export_keys):
	 * a backend that must prepare for it at the handshake (OpenSSL's keylog
	 * callback) does so only when set (giong_tls_config_ktls()). */
	bool ktls;
};

/* What the kernel needs to take one direction of a connection over
 * (export_keys): the numbers are those of <linux/tls.h>. */
enum {
	GIONG_TLS_KEYS_1_2 = 0x0303, /* TLS_1_2_VERSION */
	GIONG_TLS_KEYS_1_3 = 0x0304, /* TLS_1_3_VERSION */
	GIONG_TLS_KEYS_AES_GCM_128 = 51,
	GIONG_TLS_KEYS_AES_GCM_256 = 52,
	GIONG_TLS_KEYS_CHACHA20_POLY1305 = 54,
};

struct giong_tls_keys {
	uint16_t version; /* GIONG_TLS_KEYS_1_2 / _1_3 */
	uint16_t cipher;  /* GIONG_TLS_KEYS_AES_GCM_128 / _256 / _CHACHA20_POLY1305 */
	uint8_t key_len;  /* 16 or 32 */
	/* 12 (TLS 1.3, and ChaCha20-Poly1305 in TLS 1.2: the static IV the
	 * nonce is XORed with), or 4 (TLS 1.2 AES-GCM: the implicit salt; the
	 * explicit 8 bytes travel in each record) */
	uint8_t iv_len;
	unsigned char key[32];
	unsigned char iv[12];
	uint64_t seq; /* the sequence number of the next record of the direction */
};

/* Capability flags (struct giong_tls_backend.caps). */
enum {
	GIONG_TLS_CAP_TLS13 = 1u << 0,      /* speaks TLS 1.3 */
	GIONG_TLS_CAP_SNI_SELECT = 1u << 1, /* a server picks among several certificates */
	GIONG_TLS_CAP_ALPN = 1u << 2,
	GIONG_TLS_CAP_TICKETS = 1u << 3,
	GIONG_TLS_CAP_CLIENT_CERT = 1u << 4,  /* verifies client certificates */
	GIONG_TLS_CAP_RELEASE_IDLE = 1u << 5, /* idle() frees the library's buffers */
};

/*
 * The table. Every pointer is required unless marked optional. @conn is
 * conn_size bytes of zeroed, suitably aligned memory the generic code
 * allocates per stream; @ctx is what ctx_new made. All calls are made on
 * the stream's worker, never concurrently for one @conn, never inside a
 * TLS library call of the same @conn.
 *
 * Return codes of handshake/read/write/shutdown: a count (read, write), 0
 * (handshake done; read: the peer's close_notify), GIONG_TLS_WANT_READ, or a
 * GIONG_ETLS* code / -errno. When the library's failure came from the I/O
 * callbacks (giong_tls_io_pull() returned 0 or -errno), return
 * giong_tls_io_error(s) instead: the generic code knows what happened
 * below. After any negative return other than WANT_READ, error_text is
 * called at once (OpenSSL's error queue is per thread and short-lived).
 */
struct giong_tls_backend {
	uint32_t abi;     /* GIONG_TLS_BACKEND_ABI */
	uint32_t size;    /* sizeof(struct giong_tls_backend) */
	const char *name; /* "wolfssl", "openssl" */
	unsigned caps;    /* GIONG_TLS_CAP_* */
	size_t conn_size; /* per-stream state, passed as @conn */
	/* The deepest stack a handshake of this backend was measured to use
	 * (tests/tls/test_stack.c), bytes: accept and connect refuse with
	 * GIONG_ESTACK when the calling task has less than this and 8 KiB
	 * more left, rather than overflow. */
	size_t stack_need;

	/* Build the library context for @set (once per configuration and role,
	 * under a lock; then shared read-only by every worker). Returns 0 with
	 * *@ctx, or GIONG_ETLS_CONFIG with the reason in @err (NUL-terminated,
	 * at most @errlen bytes), -ENOMEM. */
	int (*ctx_new)(const struct giong_tls_settings *set, void **ctx, char *err, size_t errlen);
	void (*ctx_free)(void *ctx);

	/* Make the per-connection library object in @conn, its I/O bound to @s
	 * (giong_tls_io_pull/push(@s, ...)). @server_name: for a client, the
	 * SNI name and the name to verify (NULL: neither; a numeric address:
	 * verify only); NULL for a server. Returns 0, -ENOMEM,
	 * GIONG_ETLS_CONFIG. conn_free is called after a successful one only. */
	int (*conn_init)(void *ctx, void *conn, struct giong_tls_stream *s,
			 const char *server_name);
	void (*conn_free)(void *conn);

	/* Advance the handshake: 0 done, GIONG_TLS_WANT_READ, or an error. */
	int (*handshake)(void *conn);
	/* Decrypt into @buf (1..INT_MAX bytes): count, 0 for the peer's
	 * close_notify, GIONG_TLS_WANT_READ, or an error. */
	ssize_t (*read)(void *conn, void *buf, size_t len);
	/* Encrypt all of @buf (1..65536 bytes) into records pushed with
	 * giong_tls_io_push(): @len, or an error (the stream is then broken). */
	ssize_t (*write)(void *conn, const void *buf, size_t len);
	/* True when a read could return data or close_notify without pulling
	 * more: decrypted bytes or a whole record held inside the library. */
	bool (*pending)(void *conn);
	/* Push close_notify: 0 or an error. Waiting for the peer's is not asked. */
	int (*shutdown)(void *conn);

	/* The ALPN result (not NUL-terminated) in *@proto / *@len; 0, or
	 * -ENOENT when none was agreed. */
	int (*alpn)(void *conn, const char **proto, size_t *len);
	const char *(*version)(void *conn); /* "TLSv1.3" */
	const char *(*cipher)(void *conn);  /* "TLS_AES_128_GCM_SHA256" */
	bool (*resumed)(void *conn);
	/* Optional (NULL): release the library's read and write buffers while
	 * the connection idles (called before it parks). */
	void (*idle)(void *conn);
	/* The library's text for the error @err just returned by an operation of
	 * @conn, NUL-terminated into @buf (at most @len bytes). */
	void (*error_text)(void *conn, int err, char *buf, size_t len);
	/* Optional (NULL: clients never resume): offer the session @blob (what
	 * the backend gave giong_tls_io_session() on an earlier connection to
	 * the same server name) in the coming handshake of client @conn. 0, or
	 * an error: then the handshake is a full one. */
	int (*session_set)(void *conn, const void *blob, size_t len);

	/* Everything above is ABI 1 as first published: a backend whose @size
	 * ends here still loads (it has no export_keys). Members below are read
	 * only when @size covers them. */

	/* Optional (NULL: never kernel TLS): what the kernel needs to take
	 * direction @tx (true: the records this side sends; false: the
	 * records it receives) of the handshaken @conn over, from the next
	 * record on, into *@k. Called between operations, after the handshake;
	 * the generic code has checked its own buffers (nothing of that
	 * direction queued or held, a record boundary) and decides when (a
	 * TLS 1.3 client waits for its session ticket there, not here: the
	 * material exported before the ticket was read is right, the ticket
	 * would then come through the kernel). Never does I/O and changes
	 * nothing in @conn. Returns 0; -ENOTSUP: a version or cipher the
	 * kernel cannot take (the connection stays in user space); -EAGAIN:
	 * not now (the library holds received bytes of that direction, or a
	 * key update is under way); -ENOMEM. The caller wipes *@k after use. */
	int (*export_keys)(void *conn, bool tx, struct giong_tls_keys *k);
};

/* The size of a backend table of ABI 1 without the optional members that
 * came later: the least struct giong_tls_backend.size that loads. */
#define GIONG_TLS_BACKEND_SIZE_1 offsetof(struct giong_tls_backend, export_keys)

/*
 * giong_tls_io_pull() - for a backend's receive callback: copy up to @len
 * bytes of ciphertext that came from the stream beneath into @buf. Returns
 * the count (> 0); GIONG_TLS_WANT_READ when none is held (return it up:
 * the generic code receives more and calls the operation again); 0 when
 * the stream beneath ended; -errno when it failed (-ECONNRESET). The pool
 * buffer the bytes came in goes back as soon as all of them were pulled.
 * Never suspends.
 */
GIONG_API ssize_t giong_tls_io_pull(struct giong_tls_stream *s, void *buf, size_t len);

/*
 * giong_tls_io_push() - for a backend's send callback: queue @len bytes of
 * ciphertext (copied) to leave through the stream beneath when the
 * generic code flushes, in order. Returns @len, or -ENOMEM / -EPIPE (the
 * stream is broken: report a fatal I/O error to the library). Never
 * suspends and never says "would block".
 */
GIONG_API ssize_t giong_tls_io_push(struct giong_tls_stream *s, const void *buf, size_t len);

/*
 * giong_tls_io_session() - for a client backend: its library made a session
 * the server may resume (a TLS 1.3 ticket, which arrives in a read after the
 * handshake; a TLS 1.2 session), serialised into @blob (copied, at most 8
 * KiB). The generic code keeps the newest one per server name in the
 * configuration (when tickets are on), and hands it to session_set() in the
 * next giong_tls_connect() to that name, on any worker. Returns 0 (also
 * when there is nothing to keep it for), -EINVAL, -EMSGSIZE, -ENOMEM. Never
 * suspends.
 */
GIONG_API int giong_tls_io_session(struct giong_tls_stream *s, const void *blob, size_t len);

/*
 * giong_tls_io_error() - what to return from an operation that failed
 * because giong_tls_io_pull() returned 0 or -errno: GIONG_ETLS_TRUNCATED
 * for the end of the stream beneath, else that -errno. 0 if neither
 * happened (then the failure was the library's own).
 */
GIONG_API int giong_tls_io_error(const struct giong_tls_stream *s);

GIONG_END_DECLS

#endif /* GIONG_TLS_BACKEND_H */
