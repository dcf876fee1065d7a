/* SPDX-License-Identifier: MIT */
/*
 * tls_client.h - giong-load's https://: the client's connector around giong_tls_connect()
 * and its configuration (the backend by name, the system's CA roots, ALPN http/1.1 or h2; -k:
 * no verification). Built without libgiong-tls, https URLs are refused at start-up.
 */
#ifndef GIONG_LOAD_TLS_CLIENT_H
#define GIONG_LOAD_TLS_CLIENT_H

#include <stdbool.h>

#include <giong/http/client.h>

struct load_tls_args {
	const char *backend; /* "wolfssl", "openssl" */
	bool insecure;       /* -k: accept any certificate */
	const char *alpn;    /* the one protocol offered: NULL is "http/1.1"; --h2: "h2" */
};

/* The backends this build has ("wolfssl or openssl"; "none ..." without TLS). */
const char *load_tls_backends(void);
/* The default backend's name ("none" without TLS). */
const char *load_tls_default_backend(void);
/* The connector for giong_http_client_options.connect (NULL without TLS). */
giong_http_connect_fn load_tls_connector(void);
/* The client configuration @a asks for, checked; NULL after saying why on stderr. */
void *load_tls_config(const struct load_tls_args *a);
/* Free what load_tls_config() made (NULL: nothing). */
void load_tls_free(void *cfg);

#endif /* GIONG_LOAD_TLS_CLIENT_H */
