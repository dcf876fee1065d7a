/* SPDX-License-Identifier: MIT */
/*
 * tls_backends.h - the programs with TLS (examples/http, programs/serve, programs/load): the TLS backends this
 * build has, by the names --tls-backend takes. Each program is built with
 * GIONG_HAVE_TLS_WOLFSSL / GIONG_HAVE_TLS_OPENSSL for the backends it links.
 */
#ifndef GIONG_TOOLS_TLS_BACKENDS_H
#define GIONG_TOOLS_TLS_BACKENDS_H

#include <stddef.h>
#include <string.h>

#ifdef GIONG_HAVE_TLS_WOLFSSL
#include <giong/tls/wolfssl.h>
#endif
#ifdef GIONG_HAVE_TLS_OPENSSL
#include <giong/tls/openssl.h>
#endif

struct giong_tls_backend;

/* The backends built, for messages ("wolfssl or openssl"; "none ..." without TLS). */
static inline const char *tool_tls_backend_names(void)
{
#if defined(GIONG_HAVE_TLS_WOLFSSL) && defined(GIONG_HAVE_TLS_OPENSSL)
	return "wolfssl or openssl";
#elif defined(GIONG_HAVE_TLS_WOLFSSL)
	return "wolfssl";
#elif defined(GIONG_HAVE_TLS_OPENSSL)
	return "openssl";
#else
	return "none (built without libgiong-tls)";
#endif
}

/* The backend named @name ("wolfssl", "openssl"), or NULL when it is not built in. */
static inline const struct giong_tls_backend *tool_tls_backend(const char *name)
{
#ifdef GIONG_HAVE_TLS_WOLFSSL
	if (!strcmp(name, "wolfssl"))
		return giong_tls_wolfssl();
#endif
#ifdef GIONG_HAVE_TLS_OPENSSL
	if (!strcmp(name, "openssl"))
		return giong_tls_openssl();
#endif
	(void)name;
	return NULL;
}

#endif /* GIONG_TOOLS_TLS_BACKENDS_H */
