// SPDX-License-Identifier: MIT
/*
 * openssl_ktls.c - the OpenSSL backend's export_keys: the key, IV and sequence number of
 * one direction, for kernel TLS (issue 29; docs/tls.md "Kernel TLS").
 *
 * OpenSSL 3.0 hands its kTLS material only to its own socket BIO, mid-handshake and for
 * TLS 1.3 only for sending (issue 29), so the material is derived here as
 * the RFCs define it:
 * - TLS 1.3: the application traffic secrets come from the keylog callback (installed on
 *   every SSL_CTX when the settings allow kernel TLS); key and IV are
 *   HKDF-Expand-Label(secret, "key" / "iv", "", length) with the suite's hash.
 * - TLS 1.2: the key block is PRF(master secret, "key expansion", server_random ||
 *   client_random): client key, server key, client IV, server IV (AEADs: no MAC keys).
 * - The sequence numbers are counted in our BIO (openssl.c), restarted at each key
 *   change: a TLS 1.2 ChangeCipherSpec record, or the keylog line of a TLS 1.3 secret.
 * Checked against records taken off the wire and against wolfSSL's view of the same
 * connection (tests/tls/test_ktls_keys.c, tls.cross_keys).
 *
 * A TLS 1.3 KeyUpdate is followed here (OpenSSL 3.0 logs no updated secret): the message
 * callback sees the KeyUpdate pass, sent or received, and the direction's secret becomes
 * HKDF-Expand-Label(secret, "traffic upd", "", hash length), its count restarting
 * after the KeyUpdate's record (RFC 8446 7.2); tls.cross_keys checks it against wolfSSL,
 * which updates its own keys.
 */
#include <errno.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/ssl.h>

#include "openssl_internal.h"

#define REC_CCS 20 /* change_cipher_spec */

void giong__ossl_ktls_count(struct oktls *k, bool tx, const unsigned char *buf, size_t len)
{
	struct oktls_dir *d = &k->dir[tx];

	while (len) {
		if (d->have < sizeof(d->hdr)) {
			d->hdr[d->have++] = *buf++;
			len--;
			if (d->have < sizeof(d->hdr))
				continue;
			d->left = (uint16_t)(d->hdr[3] << 8 | d->hdr[4]);
		} else {
			size_t n = len < d->left ? len : d->left;

			buf += n;
			len -= n;
			d->left -= (uint16_t)n;
		}
		if (d->have == sizeof(d->hdr) && d->left == 0) {
			/* A whole record. In TLS 1.3 the compatibility CCS records come
			 * before the application keys, whose keylog line restarts again. */
			d->seq = d->hdr[0] == REC_CCS || d->rekey ? 0 : d->seq + 1;
			d->rekey = false;
			d->have = 0;
		}
	}
}

void giong__ossl_ktls_keylog(const SSL *ssl, struct oktls *k, const char *line)
{
	static const char cl[] = "CLIENT_TRAFFIC_SECRET_0 ", sl[] = "SERVER_TRAFFIC_SECRET_0 ";
	bool client_secret, tx;
	struct oktls_dir *d;
	const char *p;
	size_t n = 0;

	if (!strncmp(line, cl, sizeof(cl) - 1))
		client_secret = true;
	else if (!strncmp(line, sl, sizeof(sl) - 1))
		client_secret = false;
	else
		return; /* handshake secrets, the exporter's, TLS 1.2's CLIENT_RANDOM */
	/* the client's secret is what a client sends and a server receives */
	tx = client_secret == !SSL_is_server((SSL *)ssl);
	d = &k->dir[tx];
	p = strchr(line + sizeof(cl) - 1, ' '); /* after the client random */
	if (!p)
		return;
	for (p++; p[0] && p[1] && n < sizeof(d->sec); p += 2) {
		int hi = OPENSSL_hexchar2int((unsigned char)p[0]);
		int lo = OPENSSL_hexchar2int((unsigned char)p[1]);

		if (hi < 0 || lo < 0)
			break;
		d->sec[n++] = (unsigned char)(hi << 4 | lo);
	}
	d->sec_len = (uint8_t)n;
	d->seq = 0; /* the key of this direction changes now */
}

void giong__ossl_ktls_wipe(struct oktls *k)
{
	OPENSSL_cleanse(k, sizeof(*k));
}

/* HKDF-Expand-Label(@secret, "tls13 " @label, "", @len) with digest @md (RFC 8446 7.1). */
static int expand_label(const char *md, const unsigned char *secret, size_t secret_len,
			const char *label, unsigned char *out, size_t len)
{
	unsigned char info[2 + 1 + 6 + 16 + 1];
	size_t ll = strlen(label), n = 0;
	int mode = EVP_KDF_HKDF_MODE_EXPAND_ONLY, ok = 0;
	EVP_KDF *kdf;
	EVP_KDF_CTX *kctx = NULL;
	OSSL_PARAM params[5];

	info[n++] = (unsigned char)(len >> 8);
	info[n++] = (unsigned char)len;
	info[n++] = (unsigned char)(6 + ll);
	memcpy(info + n, "tls13 ", 6);
	n += 6;
	memcpy(info + n, label, ll);
	n += ll;
	info[n++] = 0; /* no context */
	kdf = EVP_KDF_fetch(NULL, OSSL_KDF_NAME_HKDF, NULL);
	if (kdf)
		kctx = EVP_KDF_CTX_new(kdf);
	EVP_KDF_free(kdf);
	if (!kctx)
		return -ENOMEM;
	params[0] = OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode);
	params[1] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)md, 0);
	params[2] =
		OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)secret, secret_len);
	params[3] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info, n);
	params[4] = OSSL_PARAM_construct_end();
	ok = EVP_KDF_derive(kctx, out, len, params) == 1;
	EVP_KDF_CTX_free(kctx);
	return ok ? 0 : -ENOMEM;
}

void giong__ossl_ktls_msg(SSL *ssl, struct oktls *k, bool tx, int content_type, const void *buf,
			  size_t len)
{
	const SSL_CIPHER *suite;
	const EVP_MD *md;
	struct oktls_dir *d = &k->dir[tx];
	unsigned char next[sizeof(d->sec)];

	if (content_type != SSL3_RT_HANDSHAKE || len < 1 ||
	    *(const unsigned char *)buf != SSL3_MT_KEY_UPDATE || !d->sec_len)
		return;
	suite = SSL_get_current_cipher(ssl);
	md = suite ? SSL_CIPHER_get_handshake_digest(suite) : NULL;
	if (md && EVP_MD_get0_name(md) &&
	    !expand_label(EVP_MD_get0_name(md), d->sec, d->sec_len, "traffic upd", next,
			  d->sec_len))
		memcpy(d->sec, next, d->sec_len);
	else
		d->sec_len = 0; /* cannot follow: export_keys says -ENOTSUP from now on */
	OPENSSL_cleanse(next, sizeof(next));
	/* A received KeyUpdate was pulled whole before OpenSSL read it: the next record is
	 * the first under the new key. One we send is announced before its record is
	 * pushed (seen in tls.cross_keys): the count restarts after that record. */
	if (tx)
		d->rekey = true;
	else
		d->seq = 0;
}

static int export13(const char *md, const struct oktls_dir *d, struct giong_tls_keys *out)
{
	int r;

	if (!d->sec_len)
		return -ENOTSUP; /* no keylog line: kernel TLS was not allowed */
	r = expand_label(md, d->sec, d->sec_len, "key", out->key, out->key_len);
	if (!r)
		r = expand_label(md, d->sec, d->sec_len, "iv", out->iv, out->iv_len);
	return r;
}

/* The TLS 1.2 key block: PRF(master, "key expansion", server_random || client_random). */
static int export12(SSL *ssl, const char *md, bool client_dir, struct giong_tls_keys *out)
{
	static const char label[] = "key expansion";
	unsigned char ms[48], seed[sizeof(label) - 1 + 64], block[2 * 32 + 2 * 12];
	size_t kl = out->key_len, il = out->iv_len, ml, n = sizeof(label) - 1;
	EVP_KDF *kdf;
	EVP_KDF_CTX *kctx = NULL;
	OSSL_PARAM params[4];
	int ok;

	ml = SSL_SESSION_get_master_key(SSL_get_session(ssl), ms, sizeof(ms));
	if (ml != sizeof(ms))
		return -ENOTSUP;
	memcpy(seed, label, n);
	n += SSL_get_server_random(ssl, seed + n, 32);
	n += SSL_get_client_random(ssl, seed + n, 32);
	kdf = EVP_KDF_fetch(NULL, OSSL_KDF_NAME_TLS1_PRF, NULL);
	if (kdf)
		kctx = EVP_KDF_CTX_new(kdf);
	EVP_KDF_free(kdf);
	if (!kctx) {
		OPENSSL_cleanse(ms, sizeof(ms));
		return -ENOMEM;
	}
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)md, 0);
	params[1] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SECRET, ms, sizeof(ms));
	params[2] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SEED, seed, n);
	params[3] = OSSL_PARAM_construct_end();
	ok = EVP_KDF_derive(kctx, block, 2 * kl + 2 * il, params) == 1;
	EVP_KDF_CTX_free(kctx);
	if (ok) {
		memcpy(out->key, block + (client_dir ? 0 : kl), kl);
		memcpy(out->iv, block + 2 * kl + (client_dir ? 0 : il), il);
	}
	OPENSSL_cleanse(ms, sizeof(ms));
	OPENSSL_cleanse(block, sizeof(block));
	return ok ? 0 : -ENOMEM;
}

int giong__ossl_export_keys(SSL *ssl, const struct oktls *k, bool tx, struct giong_tls_keys *out)
{
	const SSL_CIPHER *suite = SSL_get_current_cipher(ssl);
	const EVP_MD *md = suite ? SSL_CIPHER_get_handshake_digest(suite) : NULL;
	bool client_dir = !SSL_is_server(ssl) == tx;
	int ver = SSL_version(ssl);
	const char *mdname;

	if (!SSL_is_init_finished(ssl) || !md || !(mdname = EVP_MD_get0_name(md)))
		return -ENOTSUP;
	if (ver != TLS1_2_VERSION && ver != TLS1_3_VERSION)
		return -ENOTSUP;
	out->version = ver == TLS1_3_VERSION ? GIONG_TLS_KEYS_1_3 : GIONG_TLS_KEYS_1_2;
	switch (SSL_CIPHER_get_cipher_nid(suite)) {
	case NID_aes_128_gcm:
		out->cipher = GIONG_TLS_KEYS_AES_GCM_128;
		out->key_len = 16;
		break;
	case NID_aes_256_gcm:
		out->cipher = GIONG_TLS_KEYS_AES_GCM_256;
		out->key_len = 32;
		break;
	case NID_chacha20_poly1305:
		out->cipher = GIONG_TLS_KEYS_CHACHA20_POLY1305;
		out->key_len = 32;
		break;
	default:
		return -ENOTSUP;
	}
	out->iv_len = out->cipher != GIONG_TLS_KEYS_CHACHA20_POLY1305 &&
				      out->version == GIONG_TLS_KEYS_1_2
			      ? 4
			      : 12;
	/* RX: bytes inside OpenSSL (a record begun, or decrypted data) were counted already
	 * or would be skipped; TX: a key update of ours waits to go out. */
	if (tx ? SSL_get_key_update_type(ssl) != SSL_KEY_UPDATE_NONE
	       : SSL_has_pending(ssl) || k->dir[0].have)
		return -EAGAIN;
	if (tx && k->dir[1].have)
		return -EAGAIN; /* cannot be: every write pushes whole records */
	out->seq = k->dir[tx].seq;
	if (out->version == GIONG_TLS_KEYS_1_3)
		return export13(mdname, &k->dir[tx], out);
	return export12(ssl, mdname, client_dir, out);
}
