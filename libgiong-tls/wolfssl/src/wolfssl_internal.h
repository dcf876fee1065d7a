/* SPDX-License-Identifier: MIT */
/*
 * wolfssl_internal.h - what the wolfSSL backend's files share: wolfssl.c
 * (the backend table, contexts and connections) and wolfssl_certs.c (the
 * certificates, keys and CA certificates a context loads). Internal to
 * libgiong-tls-wolfssl; wolfSSL headers only, never an OpenSSL one.
 */
#ifndef GIONG_TLS_WOLFSSL_INTERNAL_H
#define GIONG_TLS_WOLFSSL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <wolfssl/options.h>
#include <wolfssl/ssl.h>

#include <giong/tls/backend.h>

struct wolf_cert {
	WOLFSSL_CTX *ctx;
	char **names; /* subjectAltName DNS names (compared ignoring case) */
	size_t nnames;
};

/* giong__wolf_set_err() - "@what: wolfSSL's text (@code)" into @err (none
 * when @err is NULL or @errlen 0). @code: a wolfSSL error code (negative), or
 * anything else for the last error of the thread's queue. (wolfssl.c) */
void giong__wolf_set_err(char *err, size_t errlen, const char *what, int code);

/* giong__wolf_cert_names() - the subjectAltName DNS names of the leaf of
 * @pem (@len bytes) into c->names, c->nnames. Returns 0, GIONG_ETLS_CONFIG
 * (the reason in @err) or -ENOMEM. (wolfssl_certs.c) */
int giong__wolf_cert_names(struct wolf_cert *c, const char *pem, size_t len, char *err,
			   size_t errlen);

/* giong__wolf_cert_load() - @cert's chain and private key into @ctx, checked:
 * every certificate of the chain decodes and the key is the certificate's.
 * Returns 0, GIONG_ETLS_CONFIG (the reason in @err) or -ENOMEM.
 * (wolfssl_certs.c) */
int giong__wolf_cert_load(WOLFSSL_CTX *ctx, const struct giong_tls_cert *cert, char *err,
			  size_t errlen);

/* giong__wolf_ca_load() - the CA certificates of @set (ca_files, ca_dirs,
 * ca_system) into @ctx, to verify the peer against. Returns 0, or
 * GIONG_ETLS_CONFIG with the reason in @err. (wolfssl_certs.c) */
int giong__wolf_ca_load(WOLFSSL_CTX *ctx, const struct giong_tls_settings *set, char *err,
			size_t errlen);

/* giong__wolf_export_keys() - export_keys (struct giong_tls_backend) for @ssl, from
 * wolfSSL's key and sequence-number getters. (wolfssl_ktls.c) */
int giong__wolf_export_keys(WOLFSSL *ssl, bool tx, struct giong_tls_keys *k);

#endif /* GIONG_TLS_WOLFSSL_INTERNAL_H */
