/* SPDX-License-Identifier: MIT */
/*
 * wolfssl_certs.c - what a context of the wolfSSL backend loads: a
 * certificate chain and its private key, each checked (every certificate of
 * the chain decodes, the key is the certificate's), the subjectAltName DNS
 * names a server's SNI callback matches (wolfssl.c), and the CA certificates
 * a peer is verified against (files, directories, the system's).
 *
 * Only wolfSSL headers here, as in wolfssl.c: never an OpenSSL header.
 */
#include <wolfssl/options.h>
#include <wolfssl/ssl.h>
#include <wolfssl/openssl/evp.h>
#include <wolfssl/wolfcrypt/error-crypt.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <giong/core/error.h>
#include <giong/tls/backend.h>

/* LIB_PTR(), LIB_INT(): the fault plan's `tls` kind at our calls into wolfSSL */
#include "../../src/backend_faults.h"
#include "wolfssl_internal.h"

/* The subjectAltName DNS names of the leaf of @pem. */
int giong__wolf_cert_names(struct wolf_cert *c, const char *pem, size_t len, char *err,
			   size_t errlen)
{
	WOLFSSL_X509 *x = LIB_PTR(wolfSSL_X509_load_certificate_buffer(
		(const unsigned char *)pem, (int)len, WOLFSSL_FILETYPE_PEM));
	WOLFSSL_GENERAL_NAMES *gens;
	int n, rc = 0;

	if (!x) {
		giong__wolf_set_err(err, errlen, "certificate", 0);
		return GIONG_ETLS_CONFIG;
	}
	gens = wolfSSL_X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
	n = gens ? wolfSSL_sk_GENERAL_NAME_num(gens) : 0;
	if (n > 0 && !(c->names = calloc((size_t)n, sizeof(*c->names))))
		rc = -ENOMEM;
	for (int i = 0; i < n && !rc; i++) {
		WOLFSSL_GENERAL_NAME *g = wolfSSL_sk_GENERAL_NAME_value(gens, i);
		const unsigned char *d;
		int dlen;
		char *s;

		if (!g || g->type != ASN_DNS_TYPE || !g->d.dNSName)
			continue;
		d = wolfSSL_ASN1_STRING_get0_data(g->d.dNSName);
		dlen = wolfSSL_ASN1_STRING_length(g->d.dNSName);
		if (!d || dlen <= 0 || memchr(d, 0, (size_t)dlen))
			continue;
		if (!(s = strndup((const char *)d, (size_t)dlen))) {
			rc = -ENOMEM;
			break;
		}
		c->names[c->nnames++] = s;
	}
	if (gens)
		wolfSSL_GENERAL_NAMES_free(gens);
	wolfSSL_X509_free(x);
	return rc;
}

/* Every certificate of a PEM chain decodes. wolfSSL's chain loader decodes the
 * leaf and keeps the others as they came: a block that is no certificate would
 * pass the configuration check and be sent to every client, which refuses it
 * (OpenSSL's loader refuses it at once). So each block is decoded here, once. */
static int chain_decodes(const char *pem, size_t len, char *err, size_t errlen)
{
	static const char begin[] = "-----BEGIN CERTIFICATE-----";
	static const char end[] = "-----END CERTIFICATE-----";
	const char *p = pem, *stop = pem + len;

	while ((p = memmem(p, (size_t)(stop - p), begin, sizeof(begin) - 1))) {
		const char *e = memmem(p, (size_t)(stop - p), end, sizeof(end) - 1);
		WOLFSSL_X509 *x;

		if (!e) {
			giong__wolf_set_err(err, errlen,
					    "certificate chain (a block without its end)", 0);
			return GIONG_ETLS_CONFIG;
		}
		e += sizeof(end) - 1;
		x = LIB_PTR(wolfSSL_X509_load_certificate_buffer(
			(const unsigned char *)p, (int)(e - p), WOLFSSL_FILETYPE_PEM));
		if (!x) {
			giong__wolf_set_err(
				err, errlen,
				"certificate chain (a certificate that does not decode)", 0);
			return GIONG_ETLS_CONFIG;
		}
		wolfSSL_X509_free(x);
		p = e;
	}
	return 0;
}

/* Debian's wolfSSL_CTX_check_private_key() compares key types only: an ECDSA
 * key of another certificate passes it. A signature made with the key and
 * checked with the certificate's public key cannot be fooled (one signature
 * per certificate, when the configuration is built). Returns 0, or
 * GIONG_ETLS_CONFIG for a key that does not match, -ENOMEM when the public key
 * or a digest context could not be made. */
static int key_check(WOLFSSL_CTX *ctx, char *err, size_t errlen)
{
	WOLFSSL_EVP_PKEY *priv = wolfSSL_CTX_get0_privatekey(ctx);
	WOLFSSL_EVP_PKEY *pub = LIB_PTR(wolfSSL_X509_get_pubkey(wolfSSL_CTX_get0_certificate(ctx)));
	WOLFSSL_EVP_MD_CTX *m = LIB_PTR(wolfSSL_EVP_MD_CTX_new());
	unsigned char sig[1024]; /* RSA 8192 or any ECDSA signature fits */
	size_t len = sizeof(sig);
	int rc = GIONG_ETLS_CONFIG;

	if (!pub || !m) {
		rc = -ENOMEM;
	} else if (priv &&
		   wolfSSL_EVP_DigestSignInit(m, NULL, wolfSSL_EVP_sha256(), NULL, priv) == 1 &&
		   wolfSSL_EVP_DigestSignUpdate(m, "giong", 5) == 1 &&
		   wolfSSL_EVP_DigestSignFinal(m, sig, &len) == 1) {
		wolfSSL_EVP_MD_CTX_free(m);
		m = LIB_PTR(wolfSSL_EVP_MD_CTX_new());
		if (!m)
			rc = -ENOMEM;
		else if (wolfSSL_EVP_DigestVerifyInit(m, NULL, wolfSSL_EVP_sha256(), NULL, pub) ==
				 1 &&
			 wolfSSL_EVP_DigestVerifyUpdate(m, "giong", 5) == 1 &&
			 wolfSSL_EVP_DigestVerifyFinal(m, sig, len) == 1)
			rc = 0;
	}
	wolfSSL_EVP_MD_CTX_free(m);
	wolfSSL_EVP_PKEY_free(pub);
	wolfSSL_ERR_clear_error();
	if (rc == GIONG_ETLS_CONFIG && err && errlen)
		snprintf(err, errlen, "the private key does not match the certificate");
	return rc;
}

/* What a failed loading call's @rc means: -ENOMEM for wolfSSL's MEMORY_E
 * (try again later), else GIONG_ETLS_CONFIG; its text into @err. */
static int load_fail(char *err, size_t errlen, const char *what, int rc)
{
	giong__wolf_set_err(err, errlen, what, rc);
	return rc == MEMORY_E ? -ENOMEM : GIONG_ETLS_CONFIG;
}

/* @cert's chain and key into @ctx, each checked (wolfssl_internal.h). */
int giong__wolf_cert_load(WOLFSSL_CTX *ctx, const struct giong_tls_cert *cert, char *err,
			  size_t errlen)
{
	int rc;

	rc = LIB_INT(MEMORY_E, wolfSSL_CTX_use_certificate_chain_buffer_format(
				       ctx, (const unsigned char *)cert->chain_pem,
				       (long)cert->chain_len, WOLFSSL_FILETYPE_PEM));
	if (rc != WOLFSSL_SUCCESS)
		return load_fail(err, errlen, "certificate chain", rc);
	if ((rc = chain_decodes(cert->chain_pem, cert->chain_len, err, errlen)))
		return rc;
	rc = LIB_INT(MEMORY_E,
		     wolfSSL_CTX_use_PrivateKey_buffer(ctx, (const unsigned char *)cert->key_pem,
						       (long)cert->key_len, WOLFSSL_FILETYPE_PEM));
	if (rc != WOLFSSL_SUCCESS)
		return load_fail(err, errlen, "private key", rc);
	if (LIB_INT(WOLFSSL_FAILURE, wolfSSL_CTX_check_private_key(ctx)) != WOLFSSL_SUCCESS) {
		if (err && errlen)
			snprintf(err, errlen, "the private key does not match the certificate");
		return GIONG_ETLS_CONFIG;
	}
	return key_check(ctx, err, errlen);
}

/* The CA certificates of @set into @ctx (wolfssl_internal.h). */
int giong__wolf_ca_load(WOLFSSL_CTX *ctx, const struct giong_tls_settings *set, char *err,
			size_t errlen)
{
	int rc;

	for (const char *const *p = set->ca_files; p && *p; p++) {
		rc = LIB_INT(WOLFSSL_FAILURE, wolfSSL_CTX_load_verify_locations(ctx, *p, NULL));
		if (rc != WOLFSSL_SUCCESS) {
			giong__wolf_set_err(err, errlen, *p, rc);
			return GIONG_ETLS_CONFIG;
		}
	}
	for (const char *const *p = set->ca_dirs; p && *p; p++) {
		/* wolfSSL reads every file of the directory: skip those
		 * that are no CA certificate */
		rc = LIB_INT(WOLFSSL_FAILURE,
			     wolfSSL_CTX_load_verify_locations_ex(
				     ctx, NULL, *p,
				     WOLFSSL_LOAD_FLAG_IGNORE_ERR | WOLFSSL_LOAD_FLAG_PEM_CA_ONLY));
		if (rc != WOLFSSL_SUCCESS) {
			giong__wolf_set_err(err, errlen, *p, rc);
			return GIONG_ETLS_CONFIG;
		}
	}
	if (set->ca_system &&
	    (rc = LIB_INT(WOLFSSL_FAILURE, wolfSSL_CTX_load_system_CA_certs(ctx))) !=
		    WOLFSSL_SUCCESS) {
		giong__wolf_set_err(err, errlen, "system CA certificates", rc);
		return GIONG_ETLS_CONFIG;
	}
	return 0;
}
