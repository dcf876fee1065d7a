/* SPDX-License-Identifier: MIT */
/*
 * openssl_internal.h - what the OpenSSL backend's files share: openssl.c (the backend
 * table, contexts, connections and the BIO) and openssl_ktls.c (export_keys, for kernel
 * TLS). Internal to libgiong-tls-openssl; OpenSSL headers only.
 */
#ifndef GIONG_TLS_OPENSSL_INTERNAL_H
#define GIONG_TLS_OPENSSL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include <giong/tls/backend.h>

/* One direction's record counter: OpenSSL 3.0 has no public getter of its sequence
 * numbers, but every record passes our BIO whole (5-byte header, then the body). */
struct oktls_dir {
	uint64_t seq;          /* records since the direction's last key change */
	unsigned char hdr[5];  /* the header of the record being passed */
	uint8_t have;          /* bytes of hdr[] seen */
	uint16_t left;         /* body bytes of that record still to pass */
	unsigned char sec[64]; /* TLS 1.3: its application traffic secret (keylog) */
	uint8_t sec_len;       /* 0: none delivered */
	bool rekey;            /* the count restarts after the record being pushed */
};

/* Per connection (in struct oconn): [0] what we receive, [1] what we send. */
struct oktls {
	struct oktls_dir dir[2];
};

/* giong__ossl_ktls_count() - @len bytes of direction @tx passed the BIO: count the
 * records they end; a TLS 1.2 ChangeCipherSpec record restarts the count (the next
 * record is the first under the new keys). (openssl_ktls.c) */
void giong__ossl_ktls_count(struct oktls *k, bool tx, const unsigned char *buf, size_t len);

/* giong__ossl_ktls_keylog() - a line of OpenSSL's keylog callback for connection @ssl:
 * keeps the TLS 1.3 application traffic secrets and restarts the count of their
 * direction (OpenSSL installs a key right after the last record under the old one
 * passed the BIO, and logs it then). (openssl_ktls.c) */
void giong__ossl_ktls_keylog(const SSL *ssl, struct oktls *k, const char *line);

/* giong__ossl_ktls_msg() - a message of OpenSSL's message callback for connection @ssl
 * (@tx: one it sent): a TLS 1.3 KeyUpdate moves the direction's secret on to the next
 * one and restarts its count after the KeyUpdate's record. (openssl_ktls.c) */
void giong__ossl_ktls_msg(SSL *ssl, struct oktls *k, bool tx, int content_type, const void *buf,
			  size_t len);

/* giong__ossl_ktls_wipe() - forget the secrets of @k. (openssl_ktls.c) */
void giong__ossl_ktls_wipe(struct oktls *k);

/* giong__ossl_export_keys() - export_keys (struct giong_tls_backend) of @ssl: TLS 1.3
 * from the logged secret (HKDF-Expand-Label), TLS 1.2 from the master secret (the PRF's
 * key block); the sequence number from @k's count. (openssl_ktls.c) */
int giong__ossl_export_keys(SSL *ssl, const struct oktls *k, bool tx, struct giong_tls_keys *out);

#endif /* GIONG_TLS_OPENSSL_INTERNAL_H */
