// SPDX-License-Identifier: MIT
/*
 * wolfssl_ktls.c - the wolfSSL backend's export_keys: the key, IV and sequence number of
 * one direction, for kernel TLS (issue 29; docs/tls.md "Kernel TLS").
 *
 * wolfSSL (built with ATOMIC_USER, as Debian's is) hands them out by getters that point
 * into its own key state, which is the current one: after the handshake, and after a
 * TLS 1.3 key update once it happened. Measured against records taken off the wire
 * (tests/tls/test_ktls_keys.c): TLS 1.3 keys and the full 12-byte IV are those of the
 * application traffic secrets as soon as the handshake returned (a server's
 * wolfSSL_accept() has written its NewSessionTicket by then: its TX number is 1); TLS 1.2
 * GCM's "IV" is the 4-byte implicit salt.
 */
#include <wolfssl/options.h>
#include <wolfssl/ssl.h>

#include <errno.h>
#include <string.h>

#include "wolfssl_internal.h"

int giong__wolf_export_keys(WOLFSSL *ssl, bool tx, struct giong_tls_keys *k)
{
	/* TX of a client, RX of a server: the client's write direction. */
	bool client_dir = (wolfSSL_GetSide(ssl) == WOLFSSL_CLIENT_END) == tx;
	const unsigned char *key, *iv;
	word64 seq = 0;
	int ver = wolfSSL_version(ssl), bulk = wolfSSL_GetBulkCipher(ssl);
	int key_len = wolfSSL_GetKeySize(ssl);

	if (ver == TLS1_3_VERSION)
		k->version = GIONG_TLS_KEYS_1_3;
	else if (ver == TLS1_2_VERSION)
		k->version = GIONG_TLS_KEYS_1_2;
	else
		return -ENOTSUP;
	if (bulk == wolfssl_aes_gcm && (key_len == 16 || key_len == 32)) {
		k->cipher = key_len == 16 ? GIONG_TLS_KEYS_AES_GCM_128 : GIONG_TLS_KEYS_AES_GCM_256;
		k->iv_len = k->version == GIONG_TLS_KEYS_1_3 ? 12 : 4;
	} else if (bulk == wolfssl_chacha && key_len == 32) {
		k->cipher = GIONG_TLS_KEYS_CHACHA20_POLY1305;
		k->iv_len = 12;
	} else {
		return -ENOTSUP; /* CBC, CCM, ...: not taken by the kernel here */
	}
	/* Decrypted bytes still inside wolfSSL belong to records already counted: the
	 * kernel would start after them and they would be lost. */
	if (!tx && wolfSSL_pending(ssl) > 0)
		return -EAGAIN;
	key = client_dir ? wolfSSL_GetClientWriteKey(ssl) : wolfSSL_GetServerWriteKey(ssl);
	iv = client_dir ? wolfSSL_GetClientWriteIV(ssl) : wolfSSL_GetServerWriteIV(ssl);
	if (!key || !iv)
		return -ENOTSUP;
	/* Both return !seq (1 when the number is 0), not a status: ignored. */
	if (tx)
		(void)wolfSSL_GetSequenceNumber(ssl, &seq);
	else
		(void)wolfSSL_GetPeerSequenceNumber(ssl, &seq);
	k->key_len = (uint8_t)key_len;
	memcpy(k->key, key, (size_t)key_len);
	memcpy(k->iv, iv, k->iv_len);
	k->seq = seq;
	return 0;
}
