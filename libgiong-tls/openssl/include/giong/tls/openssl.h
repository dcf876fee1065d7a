/* SPDX-License-Identifier: MIT */
/*
 * giong/tls/openssl.h - the OpenSSL backend of libgiong-tls
 * (libgiong-tls-openssl, giong::tls_openssl, giong-tls-openssl.pc).
 * Includes no OpenSSL header: a program may link this backend and the
 * wolfSSL one and choose at run time.
 */
#ifndef GIONG_TLS_OPENSSL_H
#define GIONG_TLS_OPENSSL_H

#include <giong/core/api.h>

GIONG_BEGIN_DECLS

struct giong_tls_backend;

/* giong_tls_openssl() - the OpenSSL backend, for giong_tls_config_new().
 * Initialises OpenSSL once (thread-safe). Never NULL. */
GIONG_API const struct giong_tls_backend *giong_tls_openssl(void);

GIONG_END_DECLS

#endif /* GIONG_TLS_OPENSSL_H */
