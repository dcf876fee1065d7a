/* SPDX-License-Identifier: MIT */
/*
 * ktls.c - kernel TLS: the generic side of the backends' export_keys (issue 29).
 * It asks the backend and checks the answer, then hands the send direction to
 * the socket beneath (<giong/net/ktls.h>); the receive direction comes later.
 */
#include <endian.h>
#include <errno.h>
#include <linux/tls.h>
#include <stdatomic.h>
#include <stddef.h>
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
	if (!s->handshaken || s->closed)
		return -ENOTCONN;
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

void giong__tls_ktls_tx(struct giong_tls_stream *s)
{
	union giong__tls_crypto_info u;
	struct giong_tls_keys k;
	size_t len;
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
	if ((r = giong__tls_export_keys(&s->base, true, &k))) {
		atomic_fetch_add(r == -ENOTSUP ? &stat_cipher : &stat_other, 1);
		return;
	}
	len = crypto_info(&k, &u);
	explicit_bzero(&k, sizeof(k));
	r = giong_stream_ktls_start(s->base.lower, GIONG_KTLS_TX, &u, len);
	explicit_bzero(&u, sizeof(u));
	if (r == 0) {
		s->ktls_tx = true;
		atomic_fetch_add(&stat_tx, 1);
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
