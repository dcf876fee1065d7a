/* SPDX-License-Identifier: MIT */
/*
 * tls_int.h - what the generic TLS code shares between its files: the
 * configuration (config.c) and the stream (stream.c, io.c).
 */
#ifndef GIONG_TLS_INT_H
#define GIONG_TLS_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <giong/core.h>
#include <giong/net/stream.h>
#include <giong/tls/backend.h>
#include <giong/tls/config.h>

#include "giong_private.h"

/* Plaintext encrypted per giong_stream_writev() call: 4 full records. */
#define GIONG__TLS_WRITE_MAX (64u * 1024)
/* Server names whose last session a client configuration keeps. */
#define GIONG__TLS_SESSIONS 32
/* The largest serialised session kept (a ticket and its secrets). */
#define GIONG__TLS_SESSION_MAX 8192
/* The largest TLS plaintext record (RFC 8446 5.1): one recv's buffer. */
#define GIONG__TLS_RECORD 16384u
/* The size of a stream's error text (giong_tls_last_error()). */
#define GIONG__TLS_ERRTEXT 160

struct giong_tls_config {
	atomic_uint refs; /* the caller's, plus one per stream */
	const struct giong_tls_backend *be;

	struct giong_tls_cert *certs; /* owned copies of the PEM */
	size_t ncerts;
	char **ca_files; /* NULL-terminated */
	size_t nca_files;
	char **ca_dirs;
	size_t nca_dirs;
	bool ca_system;
	bool verify_set; /* else: clients PEER, servers NONE */
	enum giong_tls_verify verify;
	unsigned char *alpn; /* wire format */
	size_t alpn_len;
	enum giong_tls_version min_version, max_version;
	char *ciphers12, *ciphers13;
	bool tickets;
	bool ktls;       /* hand the records to the kernel after the handshake (ktls.c) */
	bool ktls_force; /* GIONG_TLS_KTLS=force: prepare even where the kernel has no TLS */
	uint32_t handshake_ms;

	/* Built once per role by the first handshake (or _check), then
	 * read-only: [0] client, [1] server. */
	pthread_mutex_t lock;
	bool frozen;
	atomic_bool ready[2]; /* built with success: the lock-free fast path */
	bool built[2];
	int build_err[2];
	void *ctx[2];
	struct giong_tls_settings settings[2]; /* what ctx[] was built from; kept */
	char build_text[2][160];

	/* Clients: the newest session per server name, for resumption (tickets
	 * on). Shared by every worker, under its own lock. */
	pthread_mutex_t sess_lock;
	struct giong__tls_session {
		char *name;
		unsigned char *blob;
		size_t len;
		uint64_t used; /* sess_clock when last stored or taken: the oldest goes */
	} sessions[GIONG__TLS_SESSIONS];
	uint64_t sess_clock;
};

/* The session kept for @name, copied into *@blob (free() it), or -ENOENT. */
int giong__tls_session_take(struct giong_tls_config *cfg, const char *name, unsigned char **blob,
			    size_t *len);
int giong__tls_session_put(struct giong_tls_config *cfg, const char *name, const void *blob,
			   size_t len);
void giong__tls_session_drop(struct giong_tls_config *cfg, const char *name);

/* The library context of @cfg for a role, built on first use (freezing
 * @cfg). Returns 0 and *@ctx, or GIONG_ETLS_CONFIG / -ENOMEM; @err (if not
 * NULL) gets the backend's reason. Thread-safe. */
int giong__tls_config_ctx(struct giong_tls_config *cfg, bool server, void **ctx, char *err,
			  size_t errlen);
void giong__tls_config_ref(struct giong_tls_config *cfg);

/* A TLS stream. */
struct giong_tls_stream {
	struct giong_stream base; /* FIRST: what callers hold */
	struct giong_tls_config *cfg;
	const struct giong_tls_backend *be;
	void *conn; /* the backend's state, allocated after this struct */
	int worker; /* giong_worker_index() of the owner */

	/* Ciphertext received from lower and not yet pulled by the library. */
	struct giong_recvbuf *held;
	struct giong_bufpool_dry dry; /* copies @held off the pool when it runs dry */
	int lower_err;                /* lower's fatal error, once seen (sticky) */
	bool lower_eof;               /* lower ended */
	bool peer_closed;             /* the peer's close_notify was read */

	/* Ciphertext pushed by the library, waiting for a flush. */
	unsigned char *out;
	size_t out_len, out_cap;
	/* The batch lent to lower (a write in progress, or a send_start). */
	unsigned char *flying;
	size_t flying_len, flying_cap;
	unsigned char *stage; /* small plaintext pieces gathered into one record */

	/* The write lock: one writer (task or send_start) at a time. */
	bool writing;
	struct giong_waitq write_q;
	/* The read lock: one task in the library's read at a time (two would
	 * each receive from lower, and the second buffer would land on the
	 * first's leftovers). */
	bool reading;
	struct giong_waitq read_q;
	int broken; /* a write failed part way: every call gives -EPIPE */
	bool shut_wr;
	bool handshaken;
	bool server; /* the role: cfg->settings[server] is the context's */
	/* The kernel makes this side's records (ktls.c): writes and sends go to lower
	 * as they are, and the library writes nothing more. */
	bool ktls_tx;
	/* The kernel reads the peer's records (ktls.c): reads take lower's plaintext as
	 * it is. Handed over after the send direction, at a record boundary; until
	 * then tried after each read (ktls_rx_tries counts the times bytes came in
	 * meanwhile), unless ktls_rx_off says it will not be. */
	bool ktls_rx, ktls_rx_off;
	uint8_t ktls_rx_tries;
	bool ticket_seen; /* a client: a session from the server arrived (io.c) */
	/* Once both directions are in the kernel the backend's object is freed
	 * (conn NULL): what the questions answer after that, kept before. ALPN's
	 * copy is made at the hand-over of the send direction, so that a name
	 * handed out before the free stays valid until the stream is closed. */
	const char *kept_version, *kept_cipher;
	bool kept_resumed;
	char *kept_alpn;
	size_t kept_alpn_len;

	/* Lifetime: tasks inside a call, and operations in flight (a deferred
	 * readable notice, a send), keep the struct after close. */
	bool closed;
	unsigned busy;
	unsigned inflight;

	giong_stream_readable_fn readable_fn;
	void *readable_ctx;
	bool readable_deferred;
	struct giong_soon ready_soon; /* queued while readable_deferred */
	bool lower_watched;           /* our lower_readable is registered on lower */

	struct giong_stream_send lower_send;
	struct giong_stream_send *user_send;
	size_t user_send_len;
	struct iovec flying_iov;

	char *errtext;     /* the backend's words for the last error (heap, lazily) */
	char *server_name; /* a client's, for its session cache entry (or NULL) */
};

/* stream.c: the stream's operations; the stream @st is, or NULL if @st is no TLS stream. */
extern const struct giong_stream_ops giong__tls_ops;
static inline const struct giong_tls_stream *giong__tls_of(const struct giong_stream *st)
{
	return st && st->ops == &giong__tls_ops ? (const struct giong_tls_stream *)st : NULL;
}
/* stream.c: free @s and everything it holds (the backend's object if it has one). */
void giong__tls_free_stream(struct giong_tls_stream *s);
/* stream.c: keep the backend's words for @err (its error queue does not last); @err. */
int giong__tls_failed(struct giong_tls_stream *s, int err);
/* A GIONG_ETLS* code: the backend has words for it. */
static inline bool giong__tls_error(ssize_t r)
{
	return r <= GIONG_ETLS && r > -4095;
}
/* handshake.c: the words of the calling worker's last failed handshake, whose stream
 * is gone (giong_tls_last_error(NULL)). */
extern _Thread_local char giong__tls_handshake_text[GIONG__TLS_ERRTEXT];

/* One step of the TLS library: @call; GIONG_FAULTS: or, when the plan says
 * so, @err (the code the backends give for a library error) without
 * calling the library. */
#define TLS_STEP(err, call) (GIONG__UNLIKELY(giong__fault(GIONG__FAULT_TLS)) ? (err) : (call))

/* Run @op until it no longer wants to read; parks in lower in between. */
#define RUN_BACKEND(s, r, call)                                                                    \
	for (;;) {                                                                                 \
		(r) = (call);                                                                      \
		if ((r) != GIONG_TLS_WANT_READ)                                                    \
			break;                                                                     \
		if ((s)->held || (s)->lower_eof || (s)->lower_err) {                               \
			(r) = GIONG_ETLS; /* wants more, but has not taken all: a bug */           \
			break;                                                                     \
		}                                                                                  \
		int fr_ = giong__tls_flush(s);                                                     \
		if (fr_ == 0)                                                                      \
			fr_ = giong__tls_fill(s);                                                  \
		if (fr_) {                                                                         \
			(r) = fr_;                                                                 \
			break;                                                                     \
		}                                                                                  \
	}

/* ktls.c: the kernel TLS material of direction @tx of TLS stream @st, from its
 * backend's export_keys (struct giong_tls_backend), checked for what
 * <linux/tls.h> can take. Returns 0 and *@k (the caller wipes it); -EINVAL: not
 * a TLS stream; -EOPNOTSUPP: the backend has no export_keys; -ENOTCONN: before
 * the handshake finished, or closed; -EPROTO: the backend's answer was not
 * sane; else the backend's -ENOTSUP / -EAGAIN / -ENOMEM (*@k zeroed on
 * failure). Internal: the tests call it (tests/tls/test_ktls_keys.c). */
int giong__tls_export_keys(struct giong_stream *st, bool tx, struct giong_tls_keys *k);

/* ktls.c: the default of giong_tls_config_ktls() from GIONG_TLS_KTLS: off ("off", "0"),
 * auto (unset, anything else: where the kernel has TLS), force (tests: the backends
 * prepare the export even where the kernel has no TLS). */
enum giong__tls_ktls_mode { GIONG__TLS_KTLS_OFF, GIONG__TLS_KTLS_AUTO, GIONG__TLS_KTLS_FORCE };
enum giong__tls_ktls_mode giong__tls_ktls_default(void);
/* ktls.c: whether this kernel takes TLS (TCP_ULP "tls" on a loopback connection, asked
 * once; a "no" is asked again after a minute). */
bool giong__tls_kernel_has_tls(void);
/* ktls.c: after the handshake, with nothing of the library's left to send, hand
 * the send direction to the kernel where it can be (s->ktls_tx), else count why
 * not and stay in user space. Never fails the stream. */
void giong__tls_ktls_tx(struct giong_tls_stream *s);
/* ktls.c: at a record boundary of the peer's records, with nothing of them held,
 * hand the receive direction to the kernel where it can be (s->ktls_rx; after the
 * send direction only), and free the backend's object once both are there. May
 * park (the socket's receive ahead is stopped for it); never fails the stream. */
void giong__tls_ktls_rx(struct giong_tls_stream *s);
/* ktls.c: one read under kernel TLS receive: lower's plaintext into @buf, or with
 * @ret a buffer of it. Records of other types are handled on the way (close_notify:
 * 0; an alert: GIONG_ETLS_ALERT; a ticket: skipped; a key update: GIONG_ETLS).
 * The read lock is held. */
ssize_t giong__tls_ktls_read(struct giong_tls_stream *s, void *buf, size_t len,
			     struct giong_recvbuf **ret);

/* io.c: ciphertext in and out (all with the stream's busy count held). */
/* Receive from lower into s->held (parks). 0: something to pull (bytes, or
 * the end/failure of lower, which the pull reports); -errno: nothing was
 * taken (-ETIMEDOUT, -ECANCELED; -EBADF once closed). */
int giong__tls_fill(struct giong_tls_stream *s);
/* Send what the library pushed (parks; takes the write lock). */
int giong__tls_flush(struct giong_tls_stream *s);
int giong__tls_write_lock(struct giong_tls_stream *s);
void giong__tls_write_unlock(struct giong_tls_stream *s);
int giong__tls_flush_locked(struct giong_tls_stream *s);
/* What the library pushed becomes the batch lent to lower (s->flying), and
 * s->out the other buffer: what it pushes meanwhile (a reader's KeyUpdate
 * answer) queues behind without touching the bytes lent. Write lock held. */
void giong__tls_take_out(struct giong_tls_stream *s);
/* Join the dry-pool list while a pool buffer is held between calls. */
void giong__tls_held_settle(struct giong_tls_stream *s);
void giong__tls_held_release(struct giong_tls_stream *s);

#endif /* GIONG_TLS_INT_H */
