/* SPDX-License-Identifier: MIT */
/*
 * ktls.c - kernel TLS: the generic side of the backends' export_keys (issue 29).
 * It asks the backend and checks the answer, then hands the send direction to
 * the socket beneath (<giong/net/ktls.h>), then the receive direction at the peer's
 * next record boundary; with both in the kernel the backend's object is freed.
 * Under kernel TLS receive, reads come here: the records of other types than data
 * (alerts, tickets, key updates) reach us through giong_stream_ktls_recv_record().
 */
#include <endian.h>
#include <errno.h>
#include <linux/tls.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <giong/net/ktls.h>
#include <giong/tls/stream.h>

#include "tls_int.h"

/* Whether @k is something <linux/tls.h> can describe: a backend's slip must not
 * reach a setsockopt as a short key. */
static bool keys_sane(const struct giong_tls_keys *k)
{
	if (k->version != GIONG_TLS_KEYS_1_2 && k->version != GIONG_TLS_KEYS_1_3)
		return false;
	switch (k->cipher) {
	case GIONG_TLS_KEYS_AES_GCM_128:
		return k->key_len == 16 && k->iv_len == (k->version == GIONG_TLS_KEYS_1_3 ? 12 : 4);
	case GIONG_TLS_KEYS_AES_GCM_256:
		return k->key_len == 32 && k->iv_len == (k->version == GIONG_TLS_KEYS_1_3 ? 12 : 4);
	case GIONG_TLS_KEYS_CHACHA20_POLY1305:
		return k->key_len == 32 && k->iv_len == 12;
	default:
		return false;
	}
}

int giong__tls_export_keys(struct giong_stream *st, bool tx, struct giong_tls_keys *k)
{
	struct giong_tls_stream *s;
	int r;

	if (!st || !k || !giong_tls_is_tls(st))
		return -EINVAL;
	s = (struct giong_tls_stream *)st; /* base is the first member */
	memset(k, 0, sizeof(*k));
	if (s->be->size <
		    offsetof(struct giong_tls_backend, export_keys) + sizeof(s->be->export_keys) ||
	    !s->be->export_keys)
		return -EOPNOTSUPP;
	if (!s->handshaken || s->closed || !s->conn)
		return -ENOTCONN; /* !conn: both directions in the kernel, the object freed */
	r = s->be->export_keys(s->conn, tx, k);
	if (r == 0 && !keys_sane(k))
		r = -EPROTO;
	if (r)
		explicit_bzero(k, sizeof(*k));
	return r;
}

/* --- the send direction to the kernel ----------------------------------------------------- */

/* What setsockopt(SOL_TLS) takes, for each cipher. */
union giong__tls_crypto_info {
	struct tls_crypto_info info;
	struct tls12_crypto_info_aes_gcm_128 gcm128;
	struct tls12_crypto_info_aes_gcm_256 gcm256;
	struct tls12_crypto_info_chacha20_poly1305 chacha;
};

static atomic_uint_fast64_t stat_tx, stat_module, stat_cipher, stat_other;
static atomic_uint_fast64_t stat_rx, stat_rx_fallback, stat_released, stat_key_update;
/* CLOCK_MONOTONIC seconds until which the kernel is known to have no TLS: one
 * failed TCP_ULP costs a system call (and for root a modprobe), so the others
 * wait a minute before asking again. */
static atomic_int_fast64_t no_module_until;

#define NO_MODULE_RETRY_S 60

static int64_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec;
}

enum giong__tls_ktls_mode giong__tls_ktls_default(void)
{
	const char *e = getenv("GIONG_TLS_KTLS");

	if (e && (!strcmp(e, "off") || !strcmp(e, "0")))
		return GIONG__TLS_KTLS_OFF;
	if (e && !strcmp(e, "force"))
		return GIONG__TLS_KTLS_FORCE;
	return GIONG__TLS_KTLS_AUTO;
}

static atomic_bool kernel_yes;

bool giong__tls_kernel_has_tls(void)
{
	if (atomic_load(&kernel_yes))
		return true;
	if (atomic_load(&no_module_until) > now_s())
		return false;
	if (giong_ktls_probe() == 0) {
		atomic_store(&kernel_yes, true);
		return true;
	}
	atomic_store(&no_module_until, now_s() + NO_MODULE_RETRY_S);
	return false;
}

int giong_tls_ktls_stats(struct giong_tls_ktls_stats *out)
{
	if (!out)
		return -EINVAL;
	out->tx = atomic_load(&stat_tx);
	out->fallback_module = atomic_load(&stat_module);
	out->fallback_cipher = atomic_load(&stat_cipher);
	out->fallback_other = atomic_load(&stat_other);
	out->rx = atomic_load(&stat_rx);
	out->rx_fallback = atomic_load(&stat_rx_fallback);
	out->released = atomic_load(&stat_released);
	out->key_update = atomic_load(&stat_key_update);
	return 0;
}

/* An AES-GCM structure's fields (the 128- and 256-bit ones differ only in the key's
 * length): the key, the 4-byte salt, the 8-byte IV the nonce starts from (TLS 1.3: the
 * static IV's last 8 bytes; TLS 1.2: the explicit nonce, from the sequence number, which
 * the kernel counts up, as OpenSSL's own kernel TLS does: no nonce repeats under one key)
 * and the sequence number, big-endian. */
static void gcm(const struct giong_tls_keys *k, unsigned char *key, unsigned char *salt,
		unsigned char *iv, unsigned char *rec_seq)
{
	uint64_t seq = htobe64(k->seq);

	memcpy(key, k->key, k->key_len);
	memcpy(salt, k->iv, 4);
	memcpy(iv, k->version == GIONG_TLS_KEYS_1_3 ? k->iv + 4 : (const unsigned char *)&seq, 8);
	memcpy(rec_seq, &seq, 8);
}

/* The <linux/tls.h> structure for @k into @u: its length. */
static size_t crypto_info(const struct giong_tls_keys *k, union giong__tls_crypto_info *u)
{
	uint64_t seq = htobe64(k->seq);

	memset(u, 0, sizeof(*u));
	u->info.version = k->version;
	u->info.cipher_type = k->cipher;
	switch (k->cipher) {
	case GIONG_TLS_KEYS_AES_GCM_128:
		gcm(k, u->gcm128.key, u->gcm128.salt, u->gcm128.iv, u->gcm128.rec_seq);
		return sizeof(u->gcm128);
	case GIONG_TLS_KEYS_AES_GCM_256:
		gcm(k, u->gcm256.key, u->gcm256.salt, u->gcm256.iv, u->gcm256.rec_seq);
		return sizeof(u->gcm256);
	default: /* ChaCha20-Poly1305: the 12-byte IV the nonce is XORed with */
		memcpy(u->chacha.key, k->key, 32);
		memcpy(u->chacha.iv, k->iv, 12);
		memcpy(u->chacha.rec_seq, &seq, 8);
		return sizeof(u->chacha);
	}
}

/* The ALPN protocol copied into the stream (giong_tls_alpn() answers with the copy
 * from now on): the backend's object, where it lives, may be freed later. Without
 * memory the copy is not made, and the object is kept (release_backend()). */
static void keep_alpn(struct giong_tls_stream *s)
{
	const char *p;
	size_t l;

	if (!s->be->alpn || s->be->alpn(s->conn, &p, &l) != 0 || !p || !l)
		return;
	if ((s->kept_alpn = malloc(l))) {
		memcpy(s->kept_alpn, p, l);
		s->kept_alpn_len = l;
	}
}

/* Export direction @tx's keys and give them to the socket beneath. Returns 0; 1: the
 * backend answered -ENOTSUP (a version or cipher it cannot export); -EAGAIN from it
 * (not at a record boundary); -EPROTO for any other failure of the export; else
 * giong_stream_ktls_start()'s -errno. The keys are wiped from our memory either way. */
static int hand_over(struct giong_tls_stream *s, bool tx)
{
	union giong__tls_crypto_info u;
	struct giong_tls_keys k;
	size_t len;
	int r;

	if ((r = giong__tls_export_keys(&s->base, tx, &k)))
		return r == -ENOTSUP ? 1 : r == -EAGAIN ? -EAGAIN : -EPROTO;
	len = crypto_info(&k, &u);
	explicit_bzero(&k, sizeof(k));
	r = giong_stream_ktls_start(s->base.lower, tx ? GIONG_KTLS_TX : GIONG_KTLS_RX, &u, len);
	explicit_bzero(&u, sizeof(u));
	return r;
}

void giong__tls_ktls_tx(struct giong_tls_stream *s)
{
	int r;

	if (!s->cfg->ktls || s->ktls_tx || s->out_len || s->flying_len || s->writing)
		return;
	if (!s->cfg->settings[s->server].ktls) {
		/* The kernel had no TLS when the context was built: its backend did
		 * not prepare the export (OpenSSL's callbacks cost 9 % of a handshake). */
		atomic_fetch_add(&stat_module, 1);
		return;
	}
	if (atomic_load(&no_module_until) > now_s()) {
		atomic_fetch_add(&stat_module, 1);
		return;
	}
	if ((r = hand_over(s, true)) == -EPROTO) {
		atomic_fetch_add(&stat_other, 1); /* the export's own failure */
	} else if (r == 1) {
		atomic_fetch_add(&stat_cipher, 1); /* the export could not describe it */
	} else if (r == 0) {
		s->ktls_tx = true;
		atomic_fetch_add(&stat_tx, 1);
		keep_alpn(s);
	} else if (r == -ENOENT || r == -ENOPROTOOPT) {
		/* TCP_ULP's ENOENT is the missing module; SOL_TLS's (a cipher's
		 * missing crypto module) comes after a ULP was attached, which
		 * giong_stream_ktls_start() cannot tell apart here: both wait. */
		atomic_store(&no_module_until, now_s() + NO_MODULE_RETRY_S);
		atomic_fetch_add(&stat_module, 1);
	} else if (r == -EINVAL) {
		atomic_fetch_add(&stat_cipher, 1);
	} else {
		atomic_fetch_add(&stat_other, 1);
	}
}

/* --- the receive direction ---------------------------------------------------------------- */

/* Bytes came in ahead of a record boundary this many times: the peer keeps sending, and
 * each try costs a wait for the socket's receive to stop. The stream stays in user space. */
#define RX_TRIES 8

/* Free the backend's object once neither direction needs it: what the questions ask
 * is kept first. A connection whose ALPN could not be copied keeps it. */
static void release_backend(struct giong_tls_stream *s)
{
	const char *p;
	size_t l;

	if (!s->ktls_tx || !s->ktls_rx || !s->conn)
		return;
	if (!s->kept_alpn && s->be->alpn && s->be->alpn(s->conn, &p, &l) == 0 && p && l)
		return; /* keep_alpn() had no memory */
	s->kept_version = s->be->version ? s->be->version(s->conn) : NULL;
	s->kept_cipher = s->be->cipher ? s->be->cipher(s->conn) : NULL;
	s->kept_resumed = s->be->resumed && s->be->resumed(s->conn);
	if (s->be->conn_free)
		s->be->conn_free(s->conn);
	s->conn = NULL;
	atomic_fetch_add(&stat_released, 1);
}

/* Whether the connection is TLS 1.3 (after the handshake: the backend's answer, or the
 * one kept when its object was freed). */
static bool is_tls13(struct giong_tls_stream *s)
{
	const char *v =
		s->conn ? (s->be->version ? s->be->version(s->conn) : NULL) : s->kept_version;

	return v && !strcmp(v, "TLSv1.3");
}

/* A TLS 1.3 client that resumes waits for the server's ticket before it gives the
 * receive direction away: under kernel TLS a ticket is a record the library never
 * sees. Without resumption (no tickets, a server) nothing waits. */
static bool waits_for_ticket(struct giong_tls_stream *s)
{
	return !s->server && s->server_name && !s->ticket_seen && is_tls13(s);
}

void giong__tls_ktls_rx(struct giong_tls_stream *s)
{
	int r;

	if (!s->ktls_tx || s->ktls_rx || s->ktls_rx_off || s->held || s->closed || !s->conn ||
	    (s->be->pending && s->be->pending(s->conn)) || waits_for_ticket(s))
		return;
	/* -EAGAIN: a record begun inside the library, or bytes that came in while the
	 * socket's receive was stopped: asked again after the next read. */
	if ((r = hand_over(s, false)) == 0) {
		s->ktls_rx = true;
		atomic_fetch_add(&stat_rx, 1);
		release_backend(s);
	} else if (r == -ETIMEDOUT || r == -ECANCELED || r == -EBUSY ||
		   (r == -EAGAIN && ++s->ktls_rx_tries < RX_TRIES)) {
		return; /* nothing changed: asked again after the next read */
	} else {
		s->ktls_rx_off = true;
		atomic_fetch_add(&stat_rx_fallback, 1);
	}
}

/* The stream's error text for @err, in our words (the backend may be gone). */
__attribute__((format(printf, 3, 4))) static int rx_failed(struct giong_tls_stream *s, int err,
							   const char *fmt, ...)
{
	va_list ap;

	if (s->errtext || (s->errtext = malloc(GIONG__TLS_ERRTEXT))) {
		va_start(ap, fmt);
		vsnprintf(s->errtext, GIONG__TLS_ERRTEXT, fmt, ap);
		va_end(ap);
	}
	s->lower_err = err; /* every later read answers the same */
	return err;
}

/* The record of another type the kernel holds next. 1: nothing for the reader (a
 * ticket: read on); 0: close_notify; else the error that ends the stream. */
static int control_record(struct giong_tls_stream *s)
{
	unsigned char *rec = malloc(GIONG__TLS_RECORD);
	uint8_t type = 0;
	ssize_t n;
	int r = 1;

	if (!rec)
		return -ENOMEM; /* transient: the record stays for the next read */
	n = giong_stream_ktls_recv_record(s->base.lower, &type, rec, GIONG__TLS_RECORD);
	if (n == -EBADMSG) {
		r = rx_failed(s, GIONG_ETLS,
			      "a record from the peer did not authenticate (kernel TLS)");
	} else if (n < 0) {
		r = (int)n;
	} else if (n == 0) {
		r = rx_failed(s, GIONG_ETLS_TRUNCATED,
			      "the peer ended the connection without close_notify");
	} else if (type == 21) {
		if (n >= 2 && rec[1] == 0) {
			s->peer_closed = true; /* close_notify */
			r = 0;
		} else if (n >= 2 && ((rec[0] == 1 && !is_tls13(s)) || rec[1] == 90)) {
			/* TLS 1.2's warnings (no_renegotiation...) and user_canceled, which
			 * a close_notify follows, end nothing, as in the libraries. */
			r = 1;
		} else {
			r = rx_failed(s, GIONG_ETLS_ALERT, "the peer sent TLS alert %u (level %u)",
				      n >= 2 ? rec[1] : 0, rec[0]);
		}
	} else if (type == 22) {
		/* Handshake messages after the handshake, as many as the record holds. */
		for (ssize_t i = 0; r == 1 && i + 4 <= n;
		     i += 4 + (rec[i + 1] << 16 | rec[i + 2] << 8 | rec[i + 3])) {
			if (rec[i] == 4) /* NewSessionTicket: for the library, which is gone */
				continue;
			if (((rec[i] == 1 && s->server) || (rec[i] == 0 && !s->server)) &&
			    !is_tls13(s)) {
				/* A TLS 1.2 renegotiation asked (ClientHello) or offered
				 * (HelloRequest): refused as the libraries refuse it, with
				 * a warning no_renegotiation alert (RFC 5246 7.2.2), and
				 * the connection goes on. */
				if (!s->shut_wr) /* nothing after our close_notify */
					(void)giong_stream_ktls_send_record(s->base.lower, 21,
									    "\x01\x64", 2);
				continue;
			}
			if (rec[i] == 24) {
				atomic_fetch_add(&stat_key_update, 1);
				r = rx_failed(
					s, GIONG_ETLS,
					"the peer updated its TLS keys (KeyUpdate), which the "
					"kernel's TLS cannot follow before Linux 6.14");
			} else {
				r = rx_failed(
					s, GIONG_ETLS,
					"handshake message %u after the handshake, under kernel "
					"TLS",
					rec[i]);
			}
		}
	} else {
		r = rx_failed(s, GIONG_ETLS, "a TLS record of type %u under kernel TLS", type);
	}
	explicit_bzero(rec, (size_t)(n > 0 ? n : 0));
	free(rec);
	return r;
}

ssize_t giong__tls_ktls_read(struct giong_tls_stream *s, void *buf, size_t len,
			     struct giong_recvbuf **ret)
{
	for (;;) {
		ssize_t r;

		if (s->lower_err)
			return s->lower_err;
		if (s->peer_closed)
			return 0;
		r = ret ? giong_stream_recv(s->base.lower, ret)
			: giong_stream_read(s->base.lower, buf, len);
		if (r > 0)
			return r;
		if (r == 0)
			return rx_failed(s, GIONG_ETLS_TRUNCATED,
					 "the peer ended the connection without close_notify");
		if (r == -EBADMSG)
			return rx_failed(
				s, GIONG_ETLS,
				"a record from the peer did not authenticate (kernel TLS)");
		if (r != -EIO)
			return r;
		if ((r = control_record(s)) != 1)
			return r;
	}
}
