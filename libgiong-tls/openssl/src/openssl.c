/* SPDX-License-Identifier: MIT */
/*
 * openssl.c - the OpenSSL 3.0 backend of libgiong-tls: struct giong_tls_backend
 * (<giong/tls/backend.h>) over SSL_CTX/SSL and a BIO of our own whose read
 * and write are giong_tls_io_pull() and giong_tls_io_push().
 *
 * Contexts: one SSL_CTX per certificate for a server (all built from the
 * same settings; the first is the default and the session context of every
 * connection, so its ticket keys seal and open every ticket; the others get
 * a copy of them all the same), one for a client. A servername callback
 * moves a connection to the SSL_CTX whose certificate names the client's
 * SNI name (X509_check_host).
 *
 * Retries: SSL_MODE_AUTO_RETRY stays on (OpenSSL's default). With a BIO
 * that says "retry", OpenSSL then goes on past a post-handshake record (a
 * TLS 1.3 NewSessionTicket or KeyUpdate) to the next one until the BIO has
 * nothing: SSL_read() reports WANT_READ only when the pull did. Off, it
 * would report WANT_READ after such a record even with more ciphertext
 * held, which is not what GIONG_TLS_WANT_READ means; the ops below retry
 * such a WANT_READ all the same (bounded), whatever the mode.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <giong/core/error.h>
#include <giong/tls/backend.h>
#include <giong/tls/openssl.h>

/* LIB_PTR(), LIB_INT(): the fault plan's `tls` kind at our calls into OpenSSL.
 * What fails such a call is an allocation inside OpenSSL, which 3.0 reports
 * with ERR_R_MALLOC_FAILURE queued: config_fail() and fail() make that
 * -ENOMEM (a configuration is built again next time), not GIONG_ETLS_CONFIG
 * (kept for good). */
#define LIB_FAULT_REPORT() ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE)
#include "../../src/backend_faults.h"
#include "openssl_internal.h"

/* The session id context of every server SSL_CTX: the same everywhere, so a
 * session moved between them by SNI still resumes (and set at all, or
 * OpenSSL refuses to resume with client verification on). */
static const unsigned char sid_ctx[] = "giong-tls";

/*
 * The default suites, the wolfSSL backend's: AEADs with forward secrecy only.
 * OpenSSL's own TLS 1.2 default adds CBC suites (Lucky 13 and its kin),
 * static RSA key exchange (no forward secrecy) and DHE. AES-GCM first (OpenSSL
 * uses the CPU's AES instructions, which make it the cheapest per byte; AES-128
 * costs less than AES-256), then ChaCha20-Poly1305. A server picks by this order
 * (SSL_OP_CIPHER_SERVER_PREFERENCE), except that a client listing ChaCha20
 * first, one without AES in hardware, gets it (SSL_OP_PRIORITIZE_CHACHA).
 * TLS 1.3: OpenSSL's three suites, in the same order.
 */
#define OSSL_DEFAULT12                                                                             \
	"ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"                               \
	"ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"                               \
	"ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"
#define OSSL_DEFAULT13 "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"

/* An op's internal verdict: OpenSSL said WANT_READ but the pull did not. */
#define RETRY 1
#define MAX_RETRIES 64

enum op { OP_HANDSHAKE, OP_READ, OP_WRITE, OP_SHUTDOWN };

struct octx {
	const struct giong_tls_settings *set;
	size_t n;       /* SSL_CTXs in ctx[]: one per certificate (a client: 1) */
	SSL_CTX *ctx[]; /* [0]: the default and the session context */
};

struct oconn {
	SSL *ssl;
	struct giong_tls_stream *s;
	const struct octx *x;
	unsigned long err; /* the last OpenSSL error code of the last failure */
	long verify;       /* its X509_V_* when it was a certificate failure */
	const char *why;   /* a fixed text when OpenSSL queued nothing */
	int push_err;      /* giong_tls_io_push()'s failure */
	bool want;         /* the last pull said GIONG_TLS_WANT_READ */
	bool eof;          /* a pull said the stream beneath ended */
	struct oktls kt;   /* kernel TLS: record counts and TLS 1.3 secrets */
};

/* Our BIO method: made on first use (openssl_ready()), then read by every
 * worker (atomically: a later use may be the one that makes it). */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static BIO_METHOD *bio_method;

/* --- the BIO: its data is the struct oconn ------------------------------------------------ */

static int bio_read(BIO *b, char *buf, size_t len, size_t *got)
{
	struct oconn *c = BIO_get_data(b);
	ssize_t n;

	BIO_clear_retry_flags(b);
	*got = 0;
	if (!len)
		return 0;
	n = giong_tls_io_pull(c->s, buf, len);
	if (n > 0) {
		*got = (size_t)n;
		giong__ossl_ktls_count(&c->kt, false, (const unsigned char *)buf, (size_t)n);
		return 1;
	}
	if (n == GIONG_TLS_WANT_READ) {
		c->want = true;
		BIO_set_retry_read(b);
	} else if (n == 0) {
		c->eof = true; /* BIO_CTRL_EOF: OpenSSL reports an unexpected EOF */
	}
	return 0; /* 0 or -errno: a failure without retry */
}

static int bio_write(BIO *b, const char *buf, size_t len, size_t *put)
{
	struct oconn *c = BIO_get_data(b);
	ssize_t n;

	BIO_clear_retry_flags(b);
	*put = 0;
	n = giong_tls_io_push(c->s, buf, len);
	if (n < 0) {
		c->push_err = (int)n;
		return 0;
	}
	*put = (size_t)n;
	giong__ossl_ktls_count(&c->kt, true, (const unsigned char *)buf, (size_t)n);
	return 1;
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	struct oconn *c = BIO_get_data(b);

	(void)num;
	(void)ptr;
	switch (cmd) {
	case BIO_CTRL_FLUSH:
		return 1; /* the generic code flushes what was pushed */
	case BIO_CTRL_EOF:
		return c && c->eof;
	case BIO_CTRL_PUSH:
	case BIO_CTRL_POP:
		return 0;
	default:
		return 0; /* BIO_CTRL_SET_KTLS and the rest: not supported */
	}
}

static int bio_create(BIO *b)
{
	BIO_set_data(b, NULL);
	BIO_set_init(b, 0);
	return 1;
}

static int bio_destroy(BIO *b)
{
	BIO_set_data(b, NULL);
	BIO_set_init(b, 0);
	return 1;
}

static BIO_METHOD *make_bio_method(void)
{
	BIO_METHOD *m;
	int type;

	type = LIB_INT(-1, BIO_get_new_index());
	if (type == -1)
		return NULL;
	m = LIB_PTR(BIO_meth_new(type | BIO_TYPE_SOURCE_SINK, "giong-tls"));
	if (!m)
		return NULL;
	if (!LIB_INT(0, BIO_meth_set_read_ex(m, bio_read)) ||
	    !BIO_meth_set_write_ex(m, bio_write) || !BIO_meth_set_ctrl(m, bio_ctrl) ||
	    !BIO_meth_set_create(m, bio_create) || !BIO_meth_set_destroy(m, bio_destroy)) {
		BIO_meth_free(m);
		return NULL;
	}
	return m;
}

/*
 * OpenSSL's set-up and our BIO method, on first use; the method, or NULL
 * when it could not be made (no memory). Not pthread_once(): a method that
 * could not be made is tried again at the next use, where pthread_once()
 * would have failed every connection of the process for good.
 */
static BIO_METHOD *openssl_ready(void)
{
	BIO_METHOD *m = __atomic_load_n(&bio_method, __ATOMIC_ACQUIRE);

	if (m)
		return m;
	pthread_mutex_lock(&init_lock);
	m = bio_method;
	if (!m) {
		OPENSSL_init_ssl(OPENSSL_INIT_LOAD_SSL_STRINGS | OPENSSL_INIT_LOAD_CRYPTO_STRINGS,
				 NULL);
		m = make_bio_method();
		__atomic_store_n(&bio_method, m, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&init_lock);
	return m;
}

/* --- contexts ----------------------------------------------------------------------------- */

/* Never ask for a passphrase (the default callback reads the terminal). */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)u;
	return 0;
}

/* The formatted @fmt and OpenSSL's reason into @err; the error queue is
 * emptied. */
__attribute__((format(printf, 3, 4))) static int config_fail(char *err, size_t errlen,
							     const char *fmt, ...)
{
	unsigned long e, last = 0;
	bool nomem = false;
	size_t n;
	va_list ap;

	while ((e = ERR_get_error())) {
		if (ERR_GET_REASON(e) == ERR_R_MALLOC_FAILURE)
			nomem = true;
		last = e;
	}
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	n = strlen(err);
	if (last && n + 2 < errlen) {
		memcpy(err + n, ": ", 3);
		ERR_error_string_n(last, err + n + 2, errlen - n - 2);
	}
	return nomem ? -ENOMEM : GIONG_ETLS_CONFIG;
}

static int load_cert(SSL_CTX *c, const struct giong_tls_cert *cert, size_t no, char *err,
		     size_t errlen)
{
	BIO *b;
	X509 *x;
	EVP_PKEY *key;
	unsigned long e;

	if (!cert->chain_pem || !cert->key_pem || cert->chain_len > INT_MAX ||
	    cert->key_len > INT_MAX)
		return config_fail(err, errlen, "certificate %zu: no certificate or key", no);
	b = LIB_PTR(BIO_new_mem_buf(cert->chain_pem, (int)cert->chain_len));
	if (!b)
		return config_fail(err, errlen, "certificate %zu: BIO_new_mem_buf", no);
	x = PEM_read_bio_X509(b, NULL, no_passphrase, NULL);
	if (!x || LIB_INT(0, SSL_CTX_use_certificate(c, x)) != 1) {
		X509_free(x);
		BIO_free(b);
		return config_fail(err, errlen, "certificate %zu: the leaf does not load", no);
	}
	X509_free(x);
	while ((x = PEM_read_bio_X509(b, NULL, no_passphrase, NULL))) {
		if (!LIB_INT(0, SSL_CTX_add0_chain_cert(c, x))) {
			X509_free(x);
			BIO_free(b);
			return config_fail(err, errlen,
					   "certificate %zu: a chain certificate is refused", no);
		}
	}
	BIO_free(b);
	e = ERR_peek_last_error();
	if (ERR_GET_LIB(e) != ERR_LIB_PEM || ERR_GET_REASON(e) != PEM_R_NO_START_LINE)
		return config_fail(err, errlen,
				   "certificate %zu: a chain certificate does not load", no);
	ERR_clear_error(); /* the end of the PEM text */

	b = LIB_PTR(BIO_new_mem_buf(cert->key_pem, (int)cert->key_len));
	if (!b)
		return config_fail(err, errlen, "certificate %zu: BIO_new_mem_buf", no);
	key = PEM_read_bio_PrivateKey(b, NULL, no_passphrase, NULL);
	BIO_free(b);
	if (!key)
		return config_fail(err, errlen, "certificate %zu: the private key does not load",
				   no);
	if (X509_check_private_key(SSL_CTX_get0_certificate(c), key) != 1) {
		EVP_PKEY_free(key);
		return config_fail(
			err, errlen,
			"certificate %zu: the private key does not match the certificate", no);
	}
	if (LIB_INT(0, SSL_CTX_use_PrivateKey(c, key)) != 1 ||
	    LIB_INT(0, SSL_CTX_check_private_key(c)) != 1) {
		EVP_PKEY_free(key);
		return config_fail(err, errlen, "certificate %zu: the private key is refused", no);
	}
	EVP_PKEY_free(key);
	return 0;
}

static int load_cas(SSL_CTX *c, const struct giong_tls_settings *set, char *err, size_t errlen)
{
	const char *const *p;

	for (p = set->ca_files; p && *p; p++)
		if (SSL_CTX_load_verify_locations(c, *p, NULL) != 1)
			return config_fail(err, errlen, "CA file %s does not load", *p);
	for (p = set->ca_dirs; p && *p; p++)
		if (SSL_CTX_load_verify_locations(c, NULL, *p) != 1)
			return config_fail(err, errlen, "CA directory %s does not load", *p);
	if (set->ca_system && LIB_INT(0, SSL_CTX_set_default_verify_paths(c)) != 1)
		return config_fail(err, errlen, "the system's CA roots do not load");
	return 0;
}

/* The server's own most preferred protocol that the client offered. */
static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		       const unsigned char *in, unsigned int inlen, void *arg)
{
	const struct giong_tls_settings *set = arg;
	size_t i, j;

	(void)ssl;
	for (i = 0; i < set->alpn_len; i += 1u + set->alpn[i]) {
		const unsigned char *mine = set->alpn + i + 1;
		unsigned n = set->alpn[i];

		for (j = 0; j < inlen; j += 1u + in[j])
			if (in[j] == n && j + 1 + n <= inlen && !memcmp(in + j + 1, mine, n)) {
				*out = mine;
				*outlen = (unsigned char)n;
				return SSL_TLSEXT_ERR_OK;
			}
	}
	return SSL_TLSEXT_ERR_ALERT_FATAL; /* no_application_protocol */
}

/* The SSL_CTX whose certificate names the client's SNI name; else the first. */
static int servername(SSL *ssl, int *alert, void *arg)
{
	const struct octx *x = arg;
	const char *name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
	size_t i;

	(void)alert;
	if (!name)
		return SSL_TLSEXT_ERR_NOACK;
	for (i = 0; i < x->n; i++) {
		X509 *leaf = SSL_CTX_get0_certificate(x->ctx[i]);

		if (leaf && X509_check_host(leaf, name, 0, 0, NULL) == 1) {
			if (i && !LIB_PTR(SSL_set_SSL_CTX(ssl, x->ctx[i])))
				return SSL_TLSEXT_ERR_ALERT_FATAL; /* internal_error */
			return SSL_TLSEXT_ERR_OK;
		}
	}
	return SSL_TLSEXT_ERR_NOACK; /* the default certificate, the name not acknowledged */
}

/* A client's new session (a TLS 1.3 ticket, in a read after the handshake;
 * a TLS 1.2 session at its end): serialised for the generic code's cache.
 * Returns 0: OpenSSL keeps no reference for us. */
static int new_session(SSL *ssl, SSL_SESSION *sess)
{
	struct oconn *c = BIO_get_data(SSL_get_rbio(ssl));
	int len = LIB_INT(0, i2d_SSL_SESSION(sess, NULL));
	unsigned char *blob, *p;

	if (!c || len <= 0 || !(blob = p = LIB_PTR(OPENSSL_malloc((size_t)len))))
		return 0;
	if (LIB_INT(0, i2d_SSL_SESSION(sess, &p)) == len)
		giong_tls_io_session(c->s, blob, (size_t)len);
	OPENSSL_clear_free(blob, (size_t)len);
	return 0;
}

/* Kernel TLS: the TLS 1.3 traffic secrets, for export_keys (openssl_ktls.c). */
static void keylog(const SSL *ssl, const char *line)
{
	struct oconn *c = BIO_get_data(SSL_get_rbio(ssl));

	if (c)
		giong__ossl_ktls_keylog(ssl, &c->kt, line);
}

/* Kernel TLS: a TLS 1.3 KeyUpdate sent or received moves the secrets on. */
static void msg_cb(int write_p, int version, int content_type, const void *buf, size_t len,
		   SSL *ssl, void *arg)
{
	struct oconn *c = arg;

	(void)version;
	if (c)
		giong__ossl_ktls_msg(ssl, &c->kt, write_p == 1, content_type, buf, len);
}

static int ctx_setup(struct octx *x, size_t i, char *err, size_t errlen)
{
	const struct giong_tls_settings *set = x->set;
	SSL_CTX *c;
	int mode, ret;

	if ((set->min_version != GIONG_TLS_1_2 && set->min_version != GIONG_TLS_1_3) ||
	    (set->max_version != GIONG_TLS_1_2 && set->max_version != GIONG_TLS_1_3) ||
	    set->min_version > set->max_version) {
		snprintf(err, errlen, "unknown TLS versions 0x%04x..0x%04x",
			 (unsigned)set->min_version, (unsigned)set->max_version);
		return GIONG_ETLS_CONFIG;
	}
	c = LIB_PTR(SSL_CTX_new(set->server ? TLS_server_method() : TLS_client_method()));
	if (!c)
		return config_fail(err, errlen, "SSL_CTX_new");
	x->ctx[i] = c;
	x->n = i + 1;

	/* The enum's values are the wire's: TLS1_2_VERSION, TLS1_3_VERSION. */
	if (!LIB_INT(0, SSL_CTX_set_min_proto_version(c, (int)set->min_version)) ||
	    !LIB_INT(0, SSL_CTX_set_max_proto_version(c, (int)set->max_version)))
		return config_fail(err, errlen, "TLS versions");
	SSL_CTX_set_mode(c, SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_options(c, SSL_OP_NO_RENEGOTIATION);
	if (SSL_CTX_set_cipher_list(c, set->ciphers12 ? set->ciphers12 : OSSL_DEFAULT12) != 1)
		return config_fail(err, errlen, "TLS 1.2 cipher list");
	if (SSL_CTX_set_ciphersuites(c, set->ciphers13 ? set->ciphers13 : OSSL_DEFAULT13) != 1)
		return config_fail(err, errlen, "TLS 1.3 cipher suites");
	if (set->server) /* the order above (or the one given) decides, not the client's */
		SSL_CTX_set_options(c, SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_PRIORITIZE_CHACHA);

	if (!set->tickets)
		SSL_CTX_set_options(c, SSL_OP_NO_TICKET);
	if (set->server) {
		/* Resumption by stateless tickets only: no session cache (a lock
		 * shared by every worker). One TLS 1.3 ticket per full handshake,
		 * not OpenSSL's two: a client keeps one session per server (curl,
		 * OpenSSL's own clients), so the second is a record, an encryption
		 * and a MAC spent for nothing; after a resumption OpenSSL sends one
		 * anyway. With tickets off, none: SSL_OP_NO_TICKET alone would
		 * still issue stateful TLS 1.3 tickets. */
		SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_OFF);
		if (!LIB_INT(0, SSL_CTX_set_num_tickets(c, set->tickets ? 1 : 0)) ||
		    !LIB_INT(0, SSL_CTX_set_session_id_context(c, sid_ctx, sizeof(sid_ctx) - 1)))
			return config_fail(err, errlen, "session tickets");
		if (i) {
			unsigned char keys[80]; /* name, HMAC and AES keys: 16 + 32 + 32 */

			if (SSL_CTX_get_tlsext_ticket_keys(x->ctx[0], keys, sizeof(keys)) == 1)
				SSL_CTX_set_tlsext_ticket_keys(c, keys, sizeof(keys));
			OPENSSL_cleanse(keys, sizeof(keys));
			ERR_clear_error();
		}
		mode = set->verify == GIONG_TLS_VERIFY_NONE ? SSL_VERIFY_NONE
		       : set->verify == GIONG_TLS_VERIFY_PEER
			       ? SSL_VERIFY_PEER | SSL_VERIFY_CLIENT_ONCE
			       : SSL_VERIFY_PEER | SSL_VERIFY_CLIENT_ONCE |
					 SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
		if (set->alpn_len)
			SSL_CTX_set_alpn_select_cb(c, alpn_select, (void *)set);
	} else {
		mode = set->verify == GIONG_TLS_VERIFY_NONE ? SSL_VERIFY_NONE : SSL_VERIFY_PEER;
		if (set->tickets) {
			/* The sessions go to the generic code's cache (per server
			 * name, shared by the workers), not OpenSSL's. */
			SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_CLIENT |
								  SSL_SESS_CACHE_NO_INTERNAL_STORE);
			SSL_CTX_sess_set_new_cb(c, new_session);
		}
		if (set->alpn_len &&
		    (set->alpn_len > UINT_MAX ||
		     LIB_INT(1, SSL_CTX_set_alpn_protos(c, set->alpn, (unsigned)set->alpn_len))))
			return config_fail(err, errlen, "ALPN protocols"); /* 0 is success */
	}
	SSL_CTX_set_verify(c, mode, NULL);
	/* On every SSL_CTX: the SNI callback may move a connection to another. */
	if (set->ktls)
		SSL_CTX_set_keylog_callback(c, keylog);

	/* One store of CA roots, shared by the SSL_CTXs of the certificates. */
	if (i)
		SSL_CTX_set1_cert_store(c, SSL_CTX_get_cert_store(x->ctx[0]));
	else if ((ret = load_cas(c, set, err, errlen)))
		return ret;
	if (set->ncerts && (ret = load_cert(c, &set->certs[i], i + 1, err, errlen)))
		return ret;
	return 0;
}

static void o_ctx_free(void *ctx)
{
	struct octx *x = ctx;
	size_t i;

	if (!x)
		return;
	for (i = 0; i < x->n; i++)
		SSL_CTX_free(x->ctx[i]);
	free(x);
}

static int o_ctx_new(const struct giong_tls_settings *set, void **ctx, char *err, size_t errlen)
{
	struct octx *x;
	size_t i, n;
	char none[1];
	int ret;

	if (!err || !errlen) {
		err = none;
		errlen = sizeof(none);
	}
	err[0] = '\0';
	(void)openssl_ready();
	ERR_clear_error();
	if (set->server && !set->ncerts) {
		snprintf(err, errlen, "a server needs a certificate");
		return GIONG_ETLS_CONFIG;
	}
	n = set->server ? set->ncerts : 1; /* a client presents its first one */
	x = calloc(1, sizeof(*x) + n * sizeof(x->ctx[0]));
	if (!x)
		return -ENOMEM;
	x->set = set;
	for (i = 0; i < n; i++)
		if ((ret = ctx_setup(x, i, err, errlen))) {
			o_ctx_free(x);
			ERR_clear_error();
			return ret;
		}
	if (n > 1) {
		SSL_CTX_set_tlsext_servername_callback(x->ctx[0], servername);
		SSL_CTX_set_tlsext_servername_arg(x->ctx[0], x);
	}
	*ctx = x;
	return 0;
}

/* --- connections -------------------------------------------------------------------------- */

static bool numeric_host(const char *name)
{
	struct in6_addr a;

	return inet_pton(AF_INET, name, &a) == 1 || inet_pton(AF_INET6, name, &a) == 1;
}

static int o_conn_init(void *ctx, void *conn, struct giong_tls_stream *s, const char *server_name)
{
	const struct octx *x = ctx;
	struct oconn *c = conn;
	BIO_METHOD *meth;
	BIO *b;

	c->s = s;
	c->x = x;
	meth = openssl_ready();
	if (!meth)
		return -ENOMEM; /* tried again at the next connection */
	ERR_clear_error();
	c->ssl = LIB_PTR(SSL_new(x->ctx[0]));
	if (!c->ssl)
		goto nomem;
	b = LIB_PTR(BIO_new(meth));
	if (!b)
		goto nomem;
	BIO_set_data(b, c);
	BIO_set_init(b, 1);
	SSL_set_bio(c->ssl, b, b); /* one reference for both directions */
	if (x->set->ktls) {
		SSL_set_msg_callback(c->ssl, msg_cb);
		SSL_set_msg_callback_arg(c->ssl, c);
	}
	if (x->set->server) {
		SSL_set_accept_state(c->ssl);
		return 0;
	}
	SSL_set_connect_state(c->ssl);
	if (server_name && server_name[0]) {
		bool ip = numeric_host(server_name);

		if (!ip && !LIB_INT(0, SSL_set_tlsext_host_name(c->ssl, server_name))) {
			c->why = "the server name is not valid for SNI";
			goto config;
		}
		if (x->set->verify != GIONG_TLS_VERIFY_NONE &&
		    !LIB_INT(0,
			     ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl), server_name)
				: SSL_set1_host(c->ssl, server_name))) {
			c->why = "the server name cannot be checked";
			goto config;
		}
	}
	return 0;
nomem:
	SSL_free(c->ssl);
	c->ssl = NULL;
	ERR_clear_error();
	return -ENOMEM;
config:
	c->err = ERR_peek_last_error();
	SSL_free(c->ssl);
	c->ssl = NULL;
	ERR_clear_error();
	/* a setter that could not allocate */
	return ERR_GET_REASON(c->err) == ERR_R_MALLOC_FAILURE ? -ENOMEM : GIONG_ETLS_CONFIG;
}

static void o_conn_free(void *conn)
{
	struct oconn *c = conn;

	SSL_free(c->ssl);
	c->ssl = NULL;
	giong__ossl_ktls_wipe(&c->kt);
}

/* Map the failure @r of an SSL_* call of @op to our codes, keep OpenSSL's
 * reason for error_text and empty the thread's error queue. */
static int fail(struct oconn *c, int r, enum op op)
{
	int e = SSL_get_error(c->ssl, r), io, reason;
	int other = op == OP_HANDSHAKE ? GIONG_ETLS_HANDSHAKE : GIONG_ETLS;
	unsigned long code, last = 0;
	bool nomem = false;

	while ((code = ERR_get_error())) {
		if (ERR_GET_REASON(code) == ERR_R_MALLOC_FAILURE)
			nomem = true;
		last = code;
	}
	c->err = last;
	c->verify = X509_V_OK;
	c->why = NULL;
	if (e == SSL_ERROR_WANT_READ && (op == OP_HANDSHAKE || op == OP_READ))
		return c->want ? GIONG_TLS_WANT_READ : RETRY;
	if ((io = giong_tls_io_error(c->s)))
		return io; /* the stream beneath ended or failed */
	if (c->push_err)
		return c->push_err;
	if (nomem)
		return -ENOMEM;
	switch (e) {
	case SSL_ERROR_ZERO_RETURN:
		c->why = "the peer sent close_notify";
		return other;
	case SSL_ERROR_WANT_READ:
	case SSL_ERROR_WANT_WRITE:
		c->why = "OpenSSL wants to read or write in the middle of this operation";
		return other;
	case SSL_ERROR_SYSCALL:
		if (!last) {
			c->why = "unexpected eof while reading";
			return op == OP_READ ? GIONG_ETLS_TRUNCATED : other;
		}
		break;
	default:
		break;
	}
	if (ERR_GET_LIB(last) != ERR_LIB_SSL)
		return other;
	reason = ERR_GET_REASON(last);
	switch (reason) {
	case SSL_R_CERTIFICATE_VERIFY_FAILED:
		c->verify = SSL_get_verify_result(c->ssl);
		return GIONG_ETLS_CERT;
	case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
		return GIONG_ETLS_CERT;
	case SSL_R_UNEXPECTED_EOF_WHILE_READING:
		return GIONG_ETLS_TRUNCATED;
	default:
		break;
	}
	if (reason >= SSL_AD_REASON_OFFSET && reason < SSL_AD_REASON_OFFSET + 256)
		return GIONG_ETLS_ALERT; /* SSL_R_SSLV3_ALERT_*, SSL_R_TLSV1_ALERT_* */
	/* SSL_R_NO_SHARED_CIPHER, SSL_R_UNSUPPORTED_PROTOCOL,
	 * SSL_R_NO_APPLICATION_PROTOCOL, ... in a handshake; GIONG_ETLS after. */
	return other;
}

/* An empty error queue before each call (SSL_get_error() reads it), cleared
 * only when it is not: ERR_clear_error() walks all 16 slots of the thread's
 * queue, 3.4 % of the server's time on HTTPS /json (bench/results/https.md);
 * ERR_peek_error() reads one. */
static void clear_errors(void)
{
	if (ERR_peek_error())
		ERR_clear_error();
}

static void begin(struct oconn *c)
{
	clear_errors();
	c->want = false;
}

static int o_handshake(void *conn)
{
	struct oconn *c = conn;
	int r, tries;

	for (tries = 0; tries < MAX_RETRIES; tries++) {
		begin(c);
		r = SSL_do_handshake(c->ssl);
		if (r == 1)
			return 0;
		r = fail(c, r, OP_HANDSHAKE);
		if (r != RETRY)
			return r;
	}
	c->why = "OpenSSL asked to retry the handshake too often";
	return GIONG_ETLS_HANDSHAKE;
}

static ssize_t o_read(void *conn, void *buf, size_t len)
{
	struct oconn *c = conn;
	size_t n;
	int r, tries;

	for (tries = 0; tries < MAX_RETRIES; tries++) {
		begin(c);
		if (SSL_read_ex(c->ssl, buf, len, &n) == 1)
			return (ssize_t)n;
		if (SSL_get_error(c->ssl, 0) == SSL_ERROR_ZERO_RETURN) {
			ERR_clear_error();
			return 0; /* close_notify */
		}
		r = fail(c, 0, OP_READ);
		if (r != RETRY)
			return r;
	}
	c->why = "OpenSSL asked to retry the read too often";
	return GIONG_ETLS;
}

static ssize_t o_write(void *conn, const void *buf, size_t len)
{
	struct oconn *c = conn;
	size_t n;

	begin(c);
	/* SSL_MODE_ENABLE_PARTIAL_WRITE is off: all of @buf or a failure. */
	if (SSL_write_ex(c->ssl, buf, len, &n) == 1)
		return (ssize_t)n;
	return fail(c, 0, OP_WRITE);
}

/* Decrypted bytes held. Not SSL_has_pending(): with read-ahead off OpenSSL
 * never holds a whole unprocessed record, but it counts the part of one it
 * has pulled so far, for which a read would only pull again. */
static bool o_pending(void *conn)
{
	struct oconn *c = conn;

	return SSL_pending(c->ssl) > 0;
}

static int o_shutdown(void *conn)
{
	struct oconn *c = conn;
	int r;

	begin(c);
	r = SSL_shutdown(c->ssl); /* once: 0 sent, 1 the peer's was in too */
	if (r >= 0)
		return 0;
	if (SSL_get_error(c->ssl, r) == SSL_ERROR_WANT_READ &&
	    (SSL_get_shutdown(c->ssl) & SSL_SENT_SHUTDOWN)) {
		ERR_clear_error();
		return 0; /* sent; it would wait for the peer's */
	}
	return fail(c, r, OP_SHUTDOWN);
}

static int o_alpn(void *conn, const char **proto, size_t *len)
{
	struct oconn *c = conn;
	const unsigned char *p = NULL;
	unsigned n = 0;

	SSL_get0_alpn_selected(c->ssl, &p, &n);
	if (!p || !n)
		return -ENOENT;
	*proto = (const char *)p;
	*len = n;
	return 0;
}

static const char *o_version(void *conn)
{
	struct oconn *c = conn;

	return SSL_get_version(c->ssl);
}

static const char *o_cipher(void *conn)
{
	struct oconn *c = conn;
	const SSL_CIPHER *ci = SSL_get_current_cipher(c->ssl);
	const char *name = SSL_CIPHER_standard_name(ci);

	return name ? name : SSL_CIPHER_get_name(ci);
}

static bool o_resumed(void *conn)
{
	struct oconn *c = conn;

	return SSL_session_reused(c->ssl) == 1;
}

static int o_session_set(void *conn, const void *blob, size_t len)
{
	struct oconn *c = conn;
	const unsigned char *p = blob;
	SSL_SESSION *sess;
	int ok;

	if (len > LONG_MAX || !(sess = LIB_PTR(d2i_SSL_SESSION(NULL, &p, (long)len)))) {
		clear_errors();
		return GIONG_ETLS_CONFIG;
	}
	ok = LIB_INT(0, SSL_set_session(c->ssl, sess)); /* takes its own reference */
	SSL_SESSION_free(sess);
	clear_errors();
	return ok == 1 ? 0 : GIONG_ETLS_CONFIG;
}

/* SSL_MODE_RELEASE_BUFFERS frees the buffers after most operations, not all:
 * a TLS 1.3 client's read that took the NewSessionTicket keeps its 16.5 KiB
 * read buffer (measured with OpenSSL 3.0.22). SSL_free_buffers() frees what
 * is left, and nothing while bytes are held. */
static void o_idle(void *conn)
{
	struct oconn *c = conn;

	SSL_free_buffers(c->ssl);
	clear_errors();
}

static void o_error_text(void *conn, int err, char *buf, size_t len)
{
	const struct oconn *c = conn;
	size_t n;

	if (!buf || !len)
		return;
	buf[0] = '\0';
	if (c->err) {
		ERR_error_string_n(c->err, buf, len);
		n = strlen(buf);
		if (c->verify != X509_V_OK && n < len)
			snprintf(buf + n, len - n, ": %s",
				 X509_verify_cert_error_string(c->verify));
	} else if (c->why) {
		snprintf(buf, len, "%s", c->why);
	} else {
		snprintf(buf, len, "%s", giong_strerror(err));
	}
}

static int o_export_keys(void *conn, bool tx, struct giong_tls_keys *k)
{
	struct oconn *c = conn;
	int r = giong__ossl_export_keys(c->ssl, &c->kt, tx, k);

	ERR_clear_error(); /* a KDF that failed queued its reason: nobody reads it */
	return r;
}

static const struct giong_tls_backend backend = {
	.abi = GIONG_TLS_BACKEND_ABI,
	.size = sizeof(struct giong_tls_backend),
	.name = "openssl",
	.caps = GIONG_TLS_CAP_TLS13 | GIONG_TLS_CAP_SNI_SELECT | GIONG_TLS_CAP_ALPN |
		GIONG_TLS_CAP_TICKETS | GIONG_TLS_CAP_CLIENT_CERT | GIONG_TLS_CAP_RELEASE_IDLE,
	.conn_size = sizeof(struct oconn),
	/* tests/tls/test_stack.c: about 7 KiB per side, ECDSA or RSA (docs/tls.md) */
	.stack_need = 16 * 1024,
	.ctx_new = o_ctx_new,
	.ctx_free = o_ctx_free,
	.conn_init = o_conn_init,
	.conn_free = o_conn_free,
	.handshake = o_handshake,
	.read = o_read,
	.write = o_write,
	.pending = o_pending,
	.shutdown = o_shutdown,
	.alpn = o_alpn,
	.version = o_version,
	.cipher = o_cipher,
	.resumed = o_resumed,
	.idle = o_idle,
	.error_text = o_error_text,
	.session_set = o_session_set,
	.export_keys = o_export_keys,
};

const struct giong_tls_backend *giong_tls_openssl(void)
{
	(void)openssl_ready();
	return &backend;
}
