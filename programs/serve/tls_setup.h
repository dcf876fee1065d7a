/* SPDX-License-Identifier: MIT */
/*
 * tls_setup.h - giong-serve's HTTPS: the backend chosen by name, the certificate from files
 * or made at start-up (--self-signed), the configuration checked before any worker runs.
 * Built without libgiong-tls, every call says so and nothing serves HTTPS.
 */
#ifndef GIONG_SERVE_TLS_SETUP_H
#define GIONG_SERVE_TLS_SETUP_H

#include <stdbool.h>

#include <giong/http/server.h>

struct serve_tls_args {
	const char *cert, *key; /* PEM files (both or neither) */
	const char *backend;    /* "wolfssl", "openssl" */
	const char *ciphers13;  /* TLS 1.3 suites ("TLS_AES_128_GCM_SHA256:..."); NULL: default */
	bool self_signed;       /* make an ECDSA P-256 certificate for localhost now */
	bool h2;                /* offer "h2" by ALPN before "http/1.1" */
};

/* The backends this build has, for messages ("wolfssl, openssl"; "none" without TLS). */
const char *serve_tls_backends(void);

/* The backend used when --tls-backend is not given (the first built; "none"). */
const char *serve_tls_default_backend(void);

/* The HTTP server's wrap function for HTTPS (giong_tls_wrap_accept; NULL without TLS). */
giong_http_wrap_fn serve_tls_wrap(void);

/* serve_tls_config - the server configuration @a asks for (ALPN h2 and http/1.1, or
 * http/1.1 alone without @a->h2), checked: a bad
 * key, a certificate that does not match it, an unknown backend are said on stderr now and
 * NULL is returned. With self_signed, the certificate's SHA-256 fingerprint is printed. */
void *serve_tls_config(const struct serve_tls_args *a);

/* serve_tls_free - free what serve_tls_config() made (NULL: nothing). */
void serve_tls_free(void *cfg);

#endif /* GIONG_SERVE_TLS_SETUP_H */
