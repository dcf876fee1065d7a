/* SPDX-License-Identifier: MIT */
/* tls_client.c - giong-load's https:// (tls_client.h). */
#include <stdio.h>
#include <string.h>

#include <giong/core.h>

#include "tls_client.h"

#ifdef GIONG_HAVE_TLS
#include <giong/tls.h>
#endif
#include "../tls_backends.h"

#define PROG "giong-load"

const char *load_tls_backends(void)
{
	return tool_tls_backend_names();
}

const char *load_tls_default_backend(void)
{
#if defined(GIONG_HAVE_TLS_OPENSSL)
	return "openssl"; /* AES-NI: the cheaper client of the two on this hardware */
#elif defined(GIONG_HAVE_TLS_WOLFSSL)
	return "wolfssl";
#else
	return "none";
#endif
}

#ifdef GIONG_HAVE_TLS

/* libgiong-http's connector shape, giong_tls_connect()'s work: the URL's host is the SNI
 * and the name the certificate must carry. */
static int connector(struct giong_stream *tcp, const char *host, void *ctx,
		     struct giong_stream **out)
{
	return giong_tls_connect(tcp, ctx, host, out);
}

giong_http_connect_fn load_tls_connector(void)
{
	return connector;
}

void *load_tls_config(const struct load_tls_args *a)
{
	const char *alpn[] = {a->alpn ? a->alpn : "http/1.1"};
	const struct giong_tls_backend *be;
	struct giong_tls_config *c;
	char why[200] = "";
	int r;

	be = tool_tls_backend(a->backend);
	if (!be) {
		fprintf(stderr, PROG ": --tls-backend %s: not built in (this build has %s)\n",
			a->backend, load_tls_backends());
		return NULL;
	}
	if ((r = giong_tls_config_new(be, &c))) {
		fprintf(stderr, PROG ": TLS: %s\n", giong_strerror(r));
		return NULL;
	}
	if ((r = giong_tls_config_alpn(c, alpn, 1)) ||
	    (a->insecure ? (r = giong_tls_config_verify(c, GIONG_TLS_VERIFY_NONE))
			 : (r = giong_tls_config_ca_system(c))) ||
	    (r = giong_tls_config_check(c, why, sizeof(why)))) {
		fprintf(stderr, PROG ": TLS (%s): %s%s%s\n", a->backend, giong_strerror(r),
			why[0] ? ": " : "", why);
		giong_tls_config_free(c);
		return NULL;
	}
	return c;
}

void load_tls_free(void *cfg)
{
	giong_tls_config_free(cfg);
}

#else /* !GIONG_HAVE_TLS */

giong_http_connect_fn load_tls_connector(void)
{
	return NULL;
}

void *load_tls_config(const struct load_tls_args *a)
{
	(void)a;
	fprintf(stderr, PROG ": built without libgiong-tls: no https://\n");
	return NULL;
}

void load_tls_free(void *cfg)
{
	(void)cfg;
}

#endif
