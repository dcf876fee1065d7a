/* SPDX-License-Identifier: MIT */
/*
 * giong/tls/wolfssl.h - the wolfSSL backend of libgiong-tls
 * (libgiong-tls-wolfssl, giong::tls_wolfssl, giong-tls-wolfssl.pc).
 * Includes no wolfSSL header: a program may link this backend and the
 * OpenSSL one and choose at run time.
 */
#ifndef GIONG_TLS_WOLFSSL_H
#define GIONG_TLS_WOLFSSL_H

#include <giong/core/api.h>

GIONG_BEGIN_DECLS

struct giong_tls_backend;

/* giong_tls_wolfssl() - the wolfSSL backend, for giong_tls_config_new().
 * Initialises wolfSSL once (thread-safe). Never NULL. */
GIONG_API const struct giong_tls_backend *giong_tls_wolfssl(void);

GIONG_END_DECLS

#endif /* GIONG_TLS_WOLFSSL_H */
