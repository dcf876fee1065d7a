/* SPDX-License-Identifier: MIT */
/*
 * giong/tls/config.h - what a TLS endpoint presents and accepts, for one
 * backend: certificates and keys, CA roots, peer verification, ALPN,
 * versions, cipher suites, session tickets, the handshake deadline.
 *
 * A configuration is made for one backend (giong_tls_wolfssl(),
 * giong_tls_openssl(), or a third one), filled with the setters below, then
 * used by giong_tls_accept() and giong_tls_connect() on any worker. The
 * first handshake freezes it: the backend builds its library context (one
 * per role, server and client) from it once, and every later setter returns
 * -EBUSY. Certificate and key files are read when they are added, so a
 * missing or unreadable file is reported by the setter, not by the first
 * handshake; a certificate and key that do not load or do not match are
 * reported by giong_tls_config_check() (or the first handshake).
 *
 * Ownership: the caller owns the configuration and frees it with
 * giong_tls_config_free(); streams made from it hold a reference, so it may
 * be freed while they live (its memory goes with the last one).
 *
 * Threads: the setters and giong_tls_config_check() are for one thread at a
 * time, before the configuration is shared; after that, any number of
 * workers may handshake with it at once.
 */
#ifndef GIONG_TLS_CONFIG_H
#define GIONG_TLS_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <giong/core/api.h>

GIONG_BEGIN_DECLS

struct giong_tls_backend;
struct giong_tls_config;

/* Protocol versions, as on the wire. */
enum giong_tls_version {
	GIONG_TLS_1_2 = 0x0303,
	GIONG_TLS_1_3 = 0x0304,
};

/* How the peer's certificate is checked (giong_tls_config_verify()). */
enum giong_tls_verify {
	/* Client: do not check the server (tests only). Server: do not ask
	 * for a client certificate (the server's default). */
	GIONG_TLS_VERIFY_NONE = 0,
	/* Client: the server's chain must lead to a configured CA root and its
	 * certificate must name the host given to giong_tls_connect() (the
	 * client's default). Server: ask for a client certificate and check it
	 * if one is sent. */
	GIONG_TLS_VERIFY_PEER = 1,
	/* Server: as PEER, and a client without a certificate is refused.
	 * Client: the same as PEER. */
	GIONG_TLS_VERIFY_REQUIRE = 2,
};

/*
 * giong_tls_config_new() - an empty configuration for @backend: TLS 1.2 to
 * 1.3, the backend's default cipher suites, session tickets on, clients
 * verify the server (VERIFY_PEER, but no CA roots yet: add some or every
 * handshake fails with GIONG_ETLS_CERT), servers ask for no certificate,
 * handshakes limited to 10 s. Returns 0 and the configuration in *@ret;
 * -EINVAL (NULL argument, or a backend of another ABI version); -ENOMEM.
 */
GIONG_API int giong_tls_config_new(const struct giong_tls_backend *backend,
				   struct giong_tls_config **ret);

/* giong_tls_config_free() - drop the caller's reference; NULL is a no-op. */
GIONG_API void giong_tls_config_free(struct giong_tls_config *cfg);

/*
 * giong_tls_config_add_cert_file() - a certificate chain (PEM: the leaf
 * first, then its intermediates) and its private key (PEM; RSA or ECDSA),
 * read now. A server presents the first one added unless the client's SNI
 * name matches a later one (its subjectAltName DNS names, wildcards
 * included); a client presents the first one when a server asks. Returns 0,
 * -EINVAL (NULL), -errno of open/read (-ENOENT, -EACCES), -EFBIG (over
 * 1 MiB), -EBUSY (frozen), -ENOMEM.
 */
GIONG_API int giong_tls_config_add_cert_file(struct giong_tls_config *cfg, const char *chain_path,
					     const char *key_path);

/* giong_tls_config_add_cert_mem() - the same from memory (copied). Returns
 * as giong_tls_config_add_cert_file() (-EINVAL for an empty buffer). */
GIONG_API int giong_tls_config_add_cert_mem(struct giong_tls_config *cfg, const void *chain_pem,
					    size_t chain_len, const void *key_pem, size_t key_len);

/*
 * giong_tls_config_ca_file() / giong_tls_config_ca_dir() - CA roots for
 * verifying the peer: a PEM file of certificates, or a directory of them
 * named by subject hash (c_rehash). giong_tls_config_ca_system() - the
 * system's roots (Debian: /etc/ssl/certs). They add up. Paths are copied
 * and loaded by the first handshake. Return 0, -EINVAL, -ENOENT (no such
 * path), -EBUSY, -ENOMEM.
 */
GIONG_API int giong_tls_config_ca_file(struct giong_tls_config *cfg, const char *path);
GIONG_API int giong_tls_config_ca_dir(struct giong_tls_config *cfg, const char *path);
GIONG_API int giong_tls_config_ca_system(struct giong_tls_config *cfg);

/* giong_tls_config_verify() - the checks of the peer's certificate (see
 * enum giong_tls_verify). Returns 0, -EINVAL (an unknown mode), -EBUSY. */
GIONG_API int giong_tls_config_verify(struct giong_tls_config *cfg, enum giong_tls_verify mode);

/*
 * giong_tls_config_alpn() - the application protocols, most preferred
 * first ("http/1.1", "h2"): a client offers them, a server picks the first
 * of its own that the client offered and refuses the handshake when none
 * is (GIONG_ETLS_HANDSHAKE). @n 0 clears the list. Copied. Returns 0,
 * -EINVAL (NULL list with @n > 0, an empty name or one over 255 bytes, more
 * than 16 names), -EBUSY, -ENOMEM.
 */
GIONG_API int giong_tls_config_alpn(struct giong_tls_config *cfg, const char *const *protocols,
				    size_t n);

/* giong_tls_config_versions() - the lowest and highest version to speak
 * (default GIONG_TLS_1_2 and GIONG_TLS_1_3; 1.3 is preferred when both
 * sides have it). Returns 0, -EINVAL (unknown, or @min over @max), -EBUSY. */
GIONG_API int giong_tls_config_versions(struct giong_tls_config *cfg, enum giong_tls_version min,
					enum giong_tls_version max);

/*
 * giong_tls_config_ciphers() - cipher suites in the libraries' own syntax:
 * @tls12 for TLS 1.2 ("ECDHE-ECDSA-AES128-GCM-SHA256:..."), @tls13 for TLS
 * 1.3 ("TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256"); NULL keeps
 * the backend's default for that version. Copied; checked by the first
 * handshake (GIONG_ETLS_CONFIG). Returns 0, -EINVAL, -EBUSY, -ENOMEM.
 */
GIONG_API int giong_tls_config_ciphers(struct giong_tls_config *cfg, const char *tls12,
				       const char *tls13);

/* giong_tls_config_tickets() - session resumption with tickets (RFC 8446
 * 4.6.1; on by default): a server issues them and resumes the clients
 * that bring one back; a client keeps the newest session of each server
 * name (32 names, shared by every worker using this configuration) and
 * offers it in its next giong_tls_connect() to that name
 * (giong_tls_resumed() tells). A session the server refused is dropped. Off:
 * no ticket is issued or kept, and every handshake is a full one. The
 * wolfSSL backend's client keeps TLS 1.3 sessions only. Returns 0, -EINVAL,
 * -EBUSY. */
GIONG_API int giong_tls_config_tickets(struct giong_tls_config *cfg, bool on);

/*
 * giong_tls_config_ktls() - whether connections of @cfg hand their records to the
 * kernel's TLS after the handshake where they can (on by default; the environment's
 * GIONG_TLS_KTLS=off turns the default off). So far the send direction: what the
 * server writes is encrypted by the kernel (with the CPU's AES instructions, whatever
 * the library was built with), and a file body is spliced into the socket as over
 * plain TCP. Where it cannot be (no `tls` module, a cipher the kernel lacks, a backend
 * without the key export), the connection stays in user space, counted
 * (giong_tls_ktls_stats()). docs/tls.md, "Kernel TLS". Returns 0, -EINVAL, -EBUSY.
 */
GIONG_API int giong_tls_config_ktls(struct giong_tls_config *cfg, bool on);

/* giong_tls_config_handshake_timeout() - the longest a handshake may take
 * (default 10,000 ms; 0: only the calling task's own deadline applies). The
 * earlier of this and the task's deadline ends a stalled handshake with
 * -ETIMEDOUT. Returns 0, -EINVAL, -EBUSY. */
GIONG_API int giong_tls_config_handshake_timeout(struct giong_tls_config *cfg, uint32_t ms);

/*
 * giong_tls_config_check() - build the backend's contexts now (freezing the
 * configuration) and report what the first handshake would: 0, or
 * GIONG_ETLS_CONFIG (a certificate, key, CA list or cipher string that
 * does not load; @err, if not NULL, gets the backend's message, cut to
 * @errlen), -EINVAL, -ENOMEM. Servers call it at start-up to fail early.
 */
GIONG_API int giong_tls_config_check(struct giong_tls_config *cfg, char *err, size_t errlen);

/* giong_tls_config_backend() - the backend @cfg was made for, or NULL. */
GIONG_API const struct giong_tls_backend *
giong_tls_config_backend(const struct giong_tls_config *cfg);

GIONG_END_DECLS

#endif /* GIONG_TLS_CONFIG_H */
