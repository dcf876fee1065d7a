// SPDX-License-Identifier: MIT
/*
 * wolfssl.c - the wolfSSL backend of libgiong-tls (giong_tls_wolfssl()).
 *
 * Only wolfSSL headers here: wolfssl/ssl.h defines OpenSSL's names, so this
 * file must never see an OpenSSL header (nor the other backend's).
 *
 * One WOLFSSL_CTX per certificate: the first is the context every WOLFSSL
 * is made from; a server with several certificates switches a connection
 * to another one from the SNI callback (wolfSSL_set_SSL_CTX), matching the
 * client's name against each certificate's subjectAltName DNS names,
 * parsed once (wolfssl_certs.c, which loads and checks the certificates,
 * keys and CA certificates). All contexts of one role are configured alike
 * and share the first one's ticket key (a TLS 1.2 ticket is opened before
 * the switch).
 *
 * I/O goes through giong_tls_io_pull/push only (the IORecv/IOSend
 * callbacks); wolfSSL reads exactly the bytes of the record it is on (a
 * 5-byte header, then the body), so it never holds a whole undecrypted
 * record: pending() is wolfSSL_pending(). Debian's build frees its input
 * and output buffers by itself as soon as a record is consumed or sent
 * (no LARGE_STATIC_BUFFERS), so there is nothing for idle() to do.
 */
#include <wolfssl/options.h>
#include <wolfssl/ssl.h>
#include <wolfssl/error-ssl.h>
#include <wolfssl/wolfcrypt/ecc.h>
#include <wolfssl/wolfcrypt/error-crypt.h>

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <giong/core/error.h>
#include <giong/tls/backend.h>
#include <giong/tls/wolfssl.h>

/* LIB_PTR(), LIB_INT(): the fault plan's `tls` kind at our calls into wolfSSL */
#include "../../src/backend_faults.h"
#include "wolfssl_internal.h"

/* The default suites: AEADs with forward secrecy only (Debian's build would
 * otherwise offer RC4, 3DES, NULL and integrity-only TLS 1.3 suites). */
#ifdef WOLFSSL_AESNI /* AES in hardware: AES-GCM first */
#define WOLF_DEFAULT13                                                                             \
	"TLS13-AES128-GCM-SHA256:TLS13-AES256-GCM-SHA384:TLS13-CHACHA20-POLY1305-SHA256"
#define WOLF_DEFAULT12                                                                             \
	"ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"                               \
	"ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"                               \
	"ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"
#else
/* Portable C, as Debian builds wolfSSL: ChaCha20-Poly1305 costs half of
 * AES-GCM per byte (bench/results/https.md: /users 50.5 against 94.7 us per
 * request), so a server offers it first (wolfSSL servers pick by their own
 * order). */
#define WOLF_DEFAULT13                                                                             \
	"TLS13-CHACHA20-POLY1305-SHA256:TLS13-AES128-GCM-SHA256:TLS13-AES256-GCM-SHA384"
#define WOLF_DEFAULT12                                                                             \
	"ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:"                               \
	"ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"                               \
	"ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384"
#endif

struct wolf_ctx {
	bool server;
	enum giong_tls_verify verify;
	struct wolf_cert *certs;   /* certs[0].ctx is the context of every WOLFSSL */
	size_t ncerts;             /* at least 1 (a client without a certificate too) */
	const unsigned char *alpn; /* wire format, from the settings */
	size_t alpn_len;
	char *alpn_list; /* the same, comma-separated, for wolfSSL_UseALPN */
};

struct wolf_conn {
	WOLFSSL *ssl;
	struct wolf_ctx *ctx;
	struct giong_tls_stream *s;
	int detail;    /* wolfSSL's code of the last failure */
	int alert;     /* the fatal alert received, or -1 */
	long verify;   /* X509 verify result of the last failure */
	bool shutdown; /* close_notify sent */
};

static void wolf_thread_enter(void);

/* ---- configuration -------------------------------------------------- */

void giong__wolf_set_err(char *err, size_t errlen, const char *what, int code)
{
	char text[WOLFSSL_MAX_ERROR_SZ];

	if (!err || !errlen)
		return;
	if (code >= 0) /* WOLFSSL_FAILURE: the queue may say more */
		code = (int)wolfSSL_ERR_peek_last_error();
	if (code >= 0) { /* nothing, or OpenSSL-style packed codes it has no text for */
		snprintf(err, errlen, "%s: cannot be loaded", what);
		return;
	}
	wolfSSL_ERR_error_string_n((unsigned long)code, text, sizeof(text));
	snprintf(err, errlen, "%s: %s (%d)", what, text, code);
}

static int recv_cb(WOLFSSL *ssl, char *buf, int sz, void *arg)
{
	ssize_t n = giong_tls_io_pull(arg, buf, (size_t)sz);

	(void)ssl;
	if (n > 0)
		return (int)n;
	if (n == GIONG_TLS_WANT_READ)
		return WOLFSSL_CBIO_ERR_WANT_READ;
	if (n == 0)
		return WOLFSSL_CBIO_ERR_CONN_CLOSE;
	return WOLFSSL_CBIO_ERR_GENERAL;
}

static int send_cb(WOLFSSL *ssl, char *buf, int sz, void *arg)
{
	ssize_t n = giong_tls_io_push(arg, buf, (size_t)sz);

	(void)ssl;
	return n < 0 ? WOLFSSL_CBIO_ERR_GENERAL : (int)n;
}

/* Server ALPN: the first of our protocols the client offers. No overlap:
 * NOACK, and the list given by wolfSSL_UseALPN(FAILED_ON_MISMATCH) in
 * conn_init makes wolfSSL refuse the handshake (no_application_protocol). */
static int alpn_cb(WOLFSSL *ssl, const unsigned char **out, unsigned char *outlen,
		   const unsigned char *in, unsigned inlen, void *arg)
{
	const struct wolf_ctx *w = arg;

	(void)ssl;
	for (size_t i = 0; i < w->alpn_len; i += 1 + w->alpn[i]) {
		unsigned n = w->alpn[i];

		for (unsigned j = 0; j < inlen; j += 1u + in[j]) {
			if (in[j] == n && j + 1 + n <= inlen &&
			    !memcmp(in + j + 1, w->alpn + i + 1, n)) {
				*out = w->alpn + i + 1;
				*outlen = (unsigned char)n;
				return 0; /* SSL_TLSEXT_ERR_OK */
			}
		}
	}
	return 3; /* SSL_TLSEXT_ERR_NOACK */
}

static bool name_match(const char *pat, const char *name)
{
	if (pat[0] == '*' && pat[1] == '.') {
		const char *dot = strchr(name, '.');

		/* "*.example.com" covers one label: a.example.com, not example.com */
		return dot && dot != name && !strcasecmp(dot + 1, pat + 2);
	}
	return !strcasecmp(pat, name);
}

static int sni_cb(WOLFSSL *ssl, int *ad, void *arg)
{
	const struct wolf_ctx *w = arg;
	const char *name = wolfSSL_get_servername(ssl, WOLFSSL_SNI_HOST_NAME);

	(void)ad;
	if (!name || !*name)
		return 0;
	for (size_t i = 0; i < w->ncerts; i++) {
		const struct wolf_cert *c = &w->certs[i];

		for (size_t k = 0; k < c->nnames; k++) {
			if (name_match(c->names[k], name)) {
				if (i > 0 && !LIB_PTR(wolfSSL_set_SSL_CTX(ssl, c->ctx)))
					return 2; /* fatal_return */
				return 0;
			}
		}
	}
	return 0; /* no match: the first certificate */
}

/* ciphers12/ciphers13 (or our defaults) as one list; each name is checked
 * alone, as wolfSSL ignores unknown names in a list with a known one. */
static int set_ciphers(WOLFSSL_CTX *ctx, const struct giong_tls_settings *set, char *err,
		       size_t errlen)
{
	const char *c13 = set->ciphers13 ? set->ciphers13 : WOLF_DEFAULT13;
	const char *c12 = set->ciphers12 ? set->ciphers12 : WOLF_DEFAULT12;
	size_t n13 = strlen(c13), n12 = strlen(c12);
	char *list = malloc(n13 + n12 + 2), *tok, *save;
	int rc = 0;

	if (!list)
		return -ENOMEM;
	memcpy(list, c13, n13);
	list[n13] = ':';
	memcpy(list + n13 + 1, c12, n12 + 1);
	for (tok = strtok_r(list, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
		if (wolfSSL_CTX_set_cipher_list(ctx, tok) != WOLFSSL_SUCCESS) {
			if (err && errlen)
				snprintf(err, errlen, "unknown cipher suite \"%s\"", tok);
			rc = GIONG_ETLS_CONFIG;
			break;
		}
	}
	if (!rc) {
		memcpy(list, c13, n13);
		list[n13] = ':';
		memcpy(list + n13 + 1, c12, n12 + 1);
		if (LIB_INT(WOLFSSL_FAILURE, wolfSSL_CTX_set_cipher_list(ctx, list)) !=
		    WOLFSSL_SUCCESS) {
			giong__wolf_set_err(err, errlen, "cipher list", 0);
			rc = GIONG_ETLS_CONFIG;
		}
	}
	free(list);
	return rc;
}

/* A client's new session: serialised for the generic code's cache. TLS 1.3
 * tickets only: wolfSSL 5.5.4's client, offered a TLS 1.2 ticket the server
 * does not take, believes it resumed and fails the handshake ("Out of order
 * message"). Returns 0: wolfSSL keeps no reference for us. */
static int new_session(WOLFSSL *ssl, WOLFSSL_SESSION *sess)
{
	struct giong_tls_stream *s = wolfSSL_GetIOReadCtx(ssl);
	int len;
	unsigned char *blob, *p;

	if (!s || wolfSSL_version(ssl) != TLS1_3_VERSION)
		return 0;
	len = LIB_INT(0, wolfSSL_i2d_SSL_SESSION(sess, NULL));
	if (len <= 0 || !(blob = p = malloc((size_t)len)))
		return 0;
	if (LIB_INT(0, wolfSSL_i2d_SSL_SESSION(sess, &p)) == len)
		giong_tls_io_session(s, blob, (size_t)len);
	memset(blob, 0, (size_t)len);
	free(blob);
	return 0;
}

static int ctx_one(struct wolf_ctx *w, const struct giong_tls_settings *set,
		   const struct giong_tls_cert *cert, WOLFSSL_CTX **ret, char *err, size_t errlen)
{
	WOLFSSL_METHOD *m;
	WOLFSSL_CTX *ctx;
	int mode, rc;

	/* The method is allocated, and wolfSSL_CTX_new() takes it even when it
	 * fails (and frees it then): the fault is on the method, which fails
	 * the same way without leaving one to free. */
	if (LIB_FAULT())
		m = NULL;
	else if (set->max_version == GIONG_TLS_1_2)
		m = set->server ? wolfTLSv1_2_server_method() : wolfTLSv1_2_client_method();
	else if (set->min_version == GIONG_TLS_1_3)
		m = set->server ? wolfTLSv1_3_server_method() : wolfTLSv1_3_client_method();
	else
		m = set->server ? wolfTLS_server_method() : wolfTLS_client_method();
	if (!m || !(ctx = wolfSSL_CTX_new(m)))
		return -ENOMEM;
	*ret = ctx;
	wolfSSL_ERR_clear_error();
	if (set->max_version != GIONG_TLS_1_2 && set->min_version != GIONG_TLS_1_3 &&
	    (rc = LIB_INT(WOLFSSL_FAILURE, wolfSSL_CTX_SetMinVersion(ctx, WOLFSSL_TLSV1_2))) !=
		    WOLFSSL_SUCCESS) {
		giong__wolf_set_err(err, errlen, "versions", rc);
		return GIONG_ETLS_CONFIG;
	}
	/* WANT_READ comes back at once, not after ten retries of the callback */
	wolfSSL_CTX_clear_mode(ctx, SSL_MODE_AUTO_RETRY);
	wolfSSL_CTX_SetIORecv(ctx, recv_cb);
	wolfSSL_CTX_SetIOSend(ctx, send_cb);

	if (cert && (rc = giong__wolf_cert_load(ctx, cert, err, errlen)))
		return rc;

	if (set->verify != GIONG_TLS_VERIFY_NONE &&
	    (rc = giong__wolf_ca_load(ctx, set, err, errlen)))
		return rc;
	if (set->verify == GIONG_TLS_VERIFY_NONE)
		mode = WOLFSSL_VERIFY_NONE;
	else if (set->server && set->verify == GIONG_TLS_VERIFY_REQUIRE)
		mode = WOLFSSL_VERIFY_PEER | WOLFSSL_VERIFY_FAIL_IF_NO_PEER_CERT;
	else
		mode = WOLFSSL_VERIFY_PEER;
	wolfSSL_CTX_set_verify(ctx, mode, NULL);

	if ((rc = set_ciphers(ctx, set, err, errlen)))
		return rc;

	if (set->server) {
		if (!set->tickets) {
			wolfSSL_CTX_NoTicketTLSv12(ctx);
			wolfSSL_CTX_no_ticket_TLSv13(ctx);
			/* and no resumption by session ID either: full handshakes */
			wolfSSL_CTX_set_session_cache_mode(ctx, WOLFSSL_SESS_CACHE_OFF);
		}
		if (w->alpn_len)
			wolfSSL_CTX_set_alpn_select_cb(ctx, alpn_cb, w);
	} else if (set->tickets) {
		wolfSSL_CTX_UseSessionTicket(ctx);
		wolfSSL_CTX_sess_set_new_cb(ctx, new_session);
	}
	return 0;
}

static void wolf_ctx_free(void *p)
{
	struct wolf_ctx *w = p;

	if (!w)
		return;
	for (size_t i = w->ncerts; i-- > 0;) { /* certs[0] holds the ticket key */
		if (w->certs[i].ctx)
			wolfSSL_CTX_free(w->certs[i].ctx);
		for (size_t k = 0; k < w->certs[i].nnames; k++)
			free(w->certs[i].names[k]);
		free(w->certs[i].names);
	}
	free(w->certs);
	free(w->alpn_list);
	free(w);
}

static int wolf_ctx_new(const struct giong_tls_settings *set, void **ret, char *err, size_t errlen)
{
	struct wolf_ctx *w = calloc(1, sizeof(*w));
	size_t n = set->ncerts ? set->ncerts : 1;
	int rc = 0;

	if (err && errlen)
		err[0] = '\0';
	if (!w)
		return -ENOMEM;
	wolf_thread_enter();
	w->server = set->server;
	w->verify = set->verify;
	w->alpn = set->alpn;
	w->alpn_len = set->alpn ? set->alpn_len : 0;
	if (!(w->certs = calloc(n, sizeof(*w->certs)))) {
		free(w);
		return -ENOMEM;
	}
	w->ncerts = n;

	if (w->alpn_len) {
		char *q = w->alpn_list = malloc(w->alpn_len);

		if (!q) {
			rc = -ENOMEM;
			goto fail;
		}
		for (size_t i = 0; i < w->alpn_len; i += 1 + w->alpn[i]) {
			size_t l = w->alpn[i];

			if (!l || i + 1 + l > w->alpn_len || memchr(w->alpn + i + 1, ',', l)) {
				if (err && errlen)
					snprintf(err, errlen, "ALPN name that wolfSSL cannot take");
				rc = GIONG_ETLS_CONFIG;
				goto fail;
			}
			if (q != w->alpn_list)
				*q++ = ',';
			memcpy(q, w->alpn + i + 1, l);
			q += l;
		}
		*q = '\0';
	}

	/* a client presents only the first certificate: one context */
	if (!set->server && n > 1)
		w->ncerts = n = 1;
	for (size_t i = 0; i < n && !rc; i++) {
		const struct giong_tls_cert *c = set->ncerts ? &set->certs[i] : NULL;

		rc = ctx_one(w, set, c, &w->certs[i].ctx, err, errlen);
		if (!rc && c && set->server && set->ncerts > 1)
			rc = giong__wolf_cert_names(&w->certs[i], c->chain_pem, c->chain_len, err,
						    errlen);
	}
	if (rc)
		goto fail;
	if (set->server && n > 1) {
		wolfSSL_CTX_set_servername_callback(w->certs[0].ctx, sni_cb);
		wolfSSL_CTX_set_servername_arg(w->certs[0].ctx, w);
		/* one ticket key for all: a TLS 1.2 ticket is opened before the
		 * SNI callback runs (by the first context) but sealed after it */
		for (size_t i = 1; i < n; i++)
			wolfSSL_CTX_set_TicketEncCtx(w->certs[i].ctx,
						     wolfSSL_CTX_get_TicketEncCtx(w->certs[0].ctx));
	}
	*ret = w;
	return 0;
fail:
	if (rc == GIONG_ETLS_CONFIG && err && errlen && !err[0])
		giong__wolf_set_err(err, errlen, "wolfSSL", 0);
	wolf_ctx_free(w);
	return rc;
}

/* ---- connections ---------------------------------------------------- */

static bool is_numeric(const char *name)
{
	unsigned char a[16];

	return inet_pton(AF_INET, name, a) == 1 || inet_pton(AF_INET6, name, a) == 1;
}

/* wolfSSL 5.5.4 checks an IPv6 address as text, against the form it writes a
 * certificate's iPAddress names in (eight groups of four hex digits, case
 * ignored): "::1" would never match "0000:0000:0000:0000:0000:0000:0000:0001".
 * @name in that form into @buf (40 bytes), or @name as it is. */
static const char *ip_text(const char *name, char *buf)
{
	unsigned char a[16];

	if (inet_pton(AF_INET6, name, a) != 1)
		return name;
	for (int i = 0; i < 8; i++)
		snprintf(buf + 5 * i, 40 - 5 * (size_t)i, "%02X%02X%s", a[2 * i], a[2 * i + 1],
			 i < 7 ? ":" : "");
	return buf;
}

static void wolf_conn_free(void *p)
{
	struct wolf_conn *c = p;

	if (c->ssl)
		wolfSSL_free(c->ssl);
	c->ssl = NULL;
}

static int wolf_conn_init(void *ctx, void *p, struct giong_tls_stream *s, const char *server_name)
{
	struct wolf_ctx *w = ctx;
	struct wolf_conn *c = p;
	WOLFSSL *ssl;
	int rc = WOLFSSL_FAILURE;

	wolf_thread_enter();
	c->ctx = w;
	c->s = s;
	c->alert = -1;
	if (!(ssl = LIB_PTR(wolfSSL_new(w->certs[0].ctx))))
		return -ENOMEM;
	wolfSSL_SetIOReadCtx(ssl, s);
	wolfSSL_SetIOWriteCtx(ssl, s);
	if (w->alpn_len &&
	    (rc = LIB_INT(MEMORY_E,
			  wolfSSL_UseALPN(ssl, w->alpn_list, (unsigned)strlen(w->alpn_list),
					  WOLFSSL_ALPN_FAILED_ON_MISMATCH))) != WOLFSSL_SUCCESS)
		goto fail;
	if (!w->server && server_name && *server_name) {
		bool ip = is_numeric(server_name);

		if (!ip &&
		    (rc = LIB_INT(MEMORY_E, wolfSSL_UseSNI(ssl, WOLFSSL_SNI_HOST_NAME, server_name,
							   (unsigned short)strlen(server_name)))) !=
			    WOLFSSL_SUCCESS)
			goto fail;
		if (w->verify != GIONG_TLS_VERIFY_NONE) {
			if (ip) {
				char buf[40];

				/* checked against the iPAddress names */
				if (LIB_INT(WOLFSSL_FAILURE, wolfSSL_X509_VERIFY_PARAM_set1_ip_asc(
								     wolfSSL_get0_param(ssl),
								     ip_text(server_name, buf))) !=
				    WOLFSSL_SUCCESS)
					goto fail;
			} else if (LIB_INT(WOLFSSL_FAILURE,
					   wolfSSL_check_domain_name(ssl, server_name)) !=
				   WOLFSSL_SUCCESS) {
				goto fail;
			}
		}
	}
	c->ssl = ssl;
	return 0;
fail:
	wolfSSL_free(ssl);
	return rc == MEMORY_E ? -ENOMEM : GIONG_ETLS_CONFIG; /* MEMORY_E: UseALPN, UseSNI */
}

static bool cert_error(int e)
{
	switch (e) {
	case ASN_NO_SIGNER_E:
	case ASN_AFTER_DATE_E:
	case ASN_BEFORE_DATE_E:
	case ASN_SIG_CONFIRM_E:
	case ASN_SIG_OID_E:
	case ASN_SIG_KEY_E:
	case ASN_SIG_HASH_E:
	case ASN_CRIT_EXT_E:
	case ASN_PATHLEN_SIZE_E:
	case ASN_PATHLEN_INV_E:
	case ASN_SELF_SIGNED_E:
	case EXTKEYUSAGE_E:
	case EXTKEYUSE_AUTH_E: /* a server certificate for clients only, or the reverse */
	case KEYUSAGE_E:
	case DOMAIN_NAME_MISMATCH:
	case IPADDR_MISMATCH:
	case VERIFY_CERT_ERROR:
	case NO_PEER_CERT:
	case MAX_CHAIN_ERROR:
	case OCSP_CERT_REVOKED:
	case CRL_CERT_REVOKED:
		return true;
	default:
		return false;
	}
}

/* The result of a failed wolfSSL call @ret of @c, as a code of backend.h. */
static int fail(struct wolf_conn *c, int ret, bool handshake)
{
	WOLFSSL_ALERT_HISTORY h;
	int e = wolfSSL_get_error(c->ssl, ret), io;

	if (e == WOLFSSL_ERROR_WANT_READ)
		return GIONG_TLS_WANT_READ;
	c->detail = e;
	c->verify = wolfSSL_get_verify_result(c->ssl);
	c->alert = -1;
	if ((io = giong_tls_io_error(c->s)))
		return io;
	if (e == MEMORY_E)
		return -ENOMEM;
	/* (the verify result is set under VERIFY_NONE too: ignore it then) */
	if (cert_error(e) ||
	    (handshake && c->ctx->verify != GIONG_TLS_VERIFY_NONE && c->verify != 0))
		return GIONG_ETLS_CERT;
	if (wolfSSL_get_alert_history(c->ssl, &h) == WOLFSSL_SUCCESS &&
	    h.last_rx.level == alert_fatal) {
		c->alert = h.last_rx.code;
		return GIONG_ETLS_ALERT;
	}
	if (e == FATAL_ERROR)
		return GIONG_ETLS_ALERT;
	return handshake ? GIONG_ETLS_HANDSHAKE : GIONG_ETLS;
}

static int wolf_handshake(void *p)
{
	struct wolf_conn *c = p;
	int ret = c->ctx->server ? wolfSSL_accept(c->ssl) : wolfSSL_connect(c->ssl);

	return ret == WOLFSSL_SUCCESS ? 0 : fail(c, ret, true);
}

static ssize_t wolf_read(void *p, void *buf, size_t len)
{
	struct wolf_conn *c = p;
	int ret = wolfSSL_read(c->ssl, buf, len > INT_MAX ? INT_MAX : (int)len);

	if (ret > 0)
		return ret;
	if (wolfSSL_get_error(c->ssl, ret) == WOLFSSL_ERROR_ZERO_RETURN)
		return 0; /* close_notify */
	return fail(c, ret, false);
}

static ssize_t wolf_write(void *p, const void *buf, size_t len)
{
	struct wolf_conn *c = p;
	int ret = wolfSSL_write(c->ssl, buf, (int)len);

	if (ret == (int)len)
		return ret;
	if (ret > 0) { /* cannot happen: io_push takes everything */
		c->detail = 0;
		return GIONG_ETLS;
	}
	ret = fail(c, ret, false);
	return ret == GIONG_TLS_WANT_READ ? GIONG_ETLS : ret;
}

static bool wolf_pending(void *p)
{
	struct wolf_conn *c = p;

	return wolfSSL_pending(c->ssl) > 0;
}

static int wolf_shutdown(void *p)
{
	struct wolf_conn *c = p;
	int ret;

	if (c->shutdown)
		return 0;
	c->shutdown = true;
	ret = wolfSSL_shutdown(c->ssl);
	if (ret == WOLFSSL_SUCCESS || ret == WOLFSSL_SHUTDOWN_NOT_DONE)
		return 0;
	ret = fail(c, ret, false);
	return ret == GIONG_TLS_WANT_READ ? 0 : ret;
}

static int wolf_alpn(void *p, const char **proto, size_t *len)
{
	struct wolf_conn *c = p;
	char *name = NULL;
	unsigned short n = 0;

	if (wolfSSL_ALPN_GetProtocol(c->ssl, &name, &n) != WOLFSSL_SUCCESS || !name || !n)
		return -ENOENT;
	*proto = name;
	*len = n;
	return 0;
}

static const char *wolf_version(void *p)
{
	struct wolf_conn *c = p;

	return wolfSSL_get_version(c->ssl);
}

static const char *wolf_cipher(void *p)
{
	struct wolf_conn *c = p;
	int suite = wolfSSL_get_current_cipher_suite(c->ssl);
	const char *name = NULL;

	if (suite > 0)
		name = wolfSSL_get_cipher_name_iana_from_suite((unsigned char)(suite >> 8),
							       (unsigned char)suite);
	if (!name || !strcmp(name, "None"))
		name = wolfSSL_get_cipher_name(c->ssl);
	return name;
}

static bool wolf_resumed(void *p)
{
	struct wolf_conn *c = p;

	return wolfSSL_session_reused(c->ssl) == 1;
}

/* wolfSSL_X509_verify_cert_error_string() knows none of the results its
 * handshake sets: the common ones. */
static const char *verify_text(long v)
{
	switch (v) {
	case 2:
	case 20:
	case 21:
		return "unable to get the issuer certificate (untrusted CA)";
	case 7:
		return "certificate signature failure";
	case 9:
		return "certificate is not yet valid";
	case 10:
		return "certificate has expired";
	case 18:
	case 19:
		return "self-signed certificate";
	case 22:
		return "certificate chain too long";
	case 23:
		return "certificate revoked";
	case 26:
		return "unsupported certificate purpose";
	case 62:
		return "hostname mismatch";
	case 64:
		return "IP address mismatch";
	default:
		return wolfSSL_X509_verify_cert_error_string(v);
	}
}

static void wolf_error_text(void *p, int err, char *buf, size_t len)
{
	struct wolf_conn *c = p;
	char text[WOLFSSL_MAX_ERROR_SZ];
	int n = 0;

	if (!len)
		return;
	buf[0] = '\0';
	if (c->detail < 0) {
		wolfSSL_ERR_error_string_n((unsigned long)c->detail, text, sizeof(text));
		n = snprintf(buf, len, "%s", text);
	} else {
		n = snprintf(buf, len, "%s", err == GIONG_ETLS_ALERT ? "fatal alert" : "TLS error");
	}
	if (n >= 0 && (size_t)n < len && err == GIONG_ETLS_CERT && c->verify != 0)
		n += snprintf(buf + n, len - (size_t)n, ": %s (verify result %ld)",
			      verify_text(c->verify), c->verify);
	if (n >= 0 && (size_t)n < len && c->alert >= 0)
		snprintf(buf + n, len - (size_t)n, ": %s alert from the peer",
			 wolfSSL_alert_desc_string_long(c->alert));
	wolfSSL_ERR_clear_error();
}

static int wolf_session_set(void *p, const void *blob, size_t len)
{
	struct wolf_conn *c = p;
	const unsigned char *b = blob;
	WOLFSSL_SESSION *sess;
	int ok;

	if (len > INT_MAX || !(sess = LIB_PTR(wolfSSL_d2i_SSL_SESSION(NULL, &b, (long)len))))
		return GIONG_ETLS_CONFIG;
	ok = LIB_INT(WOLFSSL_FAILURE, wolfSSL_set_session(c->ssl, sess));
	wolfSSL_SESSION_free(sess);
	wolfSSL_ERR_clear_error();
	return ok == WOLFSSL_SUCCESS ? 0 : GIONG_ETLS_CONFIG;
}

static int wolf_export_keys(void *p, bool tx, struct giong_tls_keys *k)
{
	struct wolf_conn *c = p;

	return giong__wolf_export_keys(c->ssl, tx, k);
}

static const struct giong_tls_backend wolf_backend = {
	.abi = GIONG_TLS_BACKEND_ABI,
	.size = sizeof(struct giong_tls_backend),
	.name = "wolfssl",
	.caps = GIONG_TLS_CAP_TLS13 | GIONG_TLS_CAP_SNI_SELECT | GIONG_TLS_CAP_ALPN |
		GIONG_TLS_CAP_TICKETS | GIONG_TLS_CAP_CLIENT_CERT,
	.conn_size = sizeof(struct wolf_conn),
	/* tests/tls/test_stack.c: 49 KiB for RSA 2048, 43 KiB for ECDSA (docs/tls.md) */
	.stack_need = 52 * 1024,
	.ctx_new = wolf_ctx_new,
	.ctx_free = wolf_ctx_free,
	.conn_init = wolf_conn_init,
	.conn_free = wolf_conn_free,
	.handshake = wolf_handshake,
	.read = wolf_read,
	.write = wolf_write,
	.pending = wolf_pending,
	.shutdown = wolf_shutdown,
	.alpn = wolf_alpn,
	.version = wolf_version,
	.cipher = wolf_cipher,
	.session_set = wolf_session_set,
	.resumed = wolf_resumed,
	.idle = NULL, /* wolfSSL frees its record buffers itself */
	.error_text = wolf_error_text,
	.export_keys = wolf_export_keys,
};

/*
 * Debian's build has FP_ECC with HAVE_THREAD_LS: every thread that does ECC
 * grows its own fixed-point cache (1.6 MB a point, up to FP_ENTRIES points)
 * that only wc_ecc_fp_free() on that thread frees. A thread-specific key
 * whose destructor calls it frees the cache (and the thread's error queue)
 * when a worker ends.
 */
static pthread_once_t wolf_once = PTHREAD_ONCE_INIT;
static pthread_key_t wolf_key;
static bool wolf_key_ok;
static __thread bool wolf_thread_seen;

static void wolf_thread_exit(void *arg)
{
	(void)arg;
	wc_ecc_fp_free();
	wolfSSL_ERR_clear_error();
}

static void wolf_thread_enter(void)
{
	if (wolf_thread_seen || !wolf_key_ok)
		return;
	wolf_thread_seen = pthread_setspecific(wolf_key, &wolf_key) == 0;
}

static void wolf_init(void)
{
	wolfSSL_Init();
	wolf_key_ok = pthread_key_create(&wolf_key, wolf_thread_exit) == 0;
}

const struct giong_tls_backend *giong_tls_wolfssl(void)
{
	pthread_once(&wolf_once, wolf_init);
	return &wolf_backend;
}
