/* SPDX-License-Identifier: MIT */
/*
 * giong/tls.h - libgiong-tls: TLS 1.2/1.3 streams over giong_stream, with
 * the cryptography of a backend the program chooses: link giong::tls and
 * one backend library, <giong/tls/wolfssl.h> (giong_tls_wolfssl()) or
 * <giong/tls/openssl.h> (giong_tls_openssl()), and pass its pointer to
 * giong_tls_config_new(). docs/tls.md is the guide.
 */
#ifndef GIONG_TLS_H
#define GIONG_TLS_H

#include <giong/tls/config.h>
#include <giong/tls/stream.h>

#endif /* GIONG_TLS_H */
