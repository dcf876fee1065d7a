/* SPDX-License-Identifier: MIT */
/*
 * giong/core/error.h - error codes and their text.
 *
 * Every giong function returns 0 or a count on success and a negative errno
 * on failure, like liburing. Conditions that have no errno take codes in
 * [-4095, -4000), generated from GIONG_ERROR_MAP so that the names, the
 * numbers and the messages never drift apart.
 */
#ifndef GIONG_CORE_ERROR_H
#define GIONG_CORE_ERROR_H

#include <giong/core/api.h>

GIONG_BEGIN_DECLS

/* XX(name, value, message) */
#define GIONG_ERROR_MAP(XX)                                                                        \
	XX(ESHUTDOWN, -4001, "the runtime is shutting down")                                       \
	XX(EURING_DISABLED, -4002,                                                                 \
	   "io_uring is disabled on this system: the sysctl kernel.io_uring_disabled is 1 or 2, "  \
	   "or a seccomp profile (such as Docker's default) blocks io_uring; "                     \
	   "set kernel.io_uring_disabled=0 or run the container with "                             \
	   "--security-opt seccomp=unconfined, or do not ask for io_uring only "                   \
	   "(giong_config.uring_only, GIONG_RING_TIER=uring, a forced io_uring tier) "             \
	   "and giong runs on its epoll tier")                                                     \
	XX(ENOURING, -4003,                                                                        \
	   "this kernel has no io_uring (io_uring_setup returned ENOSYS): it needs Linux 6.0 "     \
	   "or newer with CONFIG_IO_URING; do not ask for io_uring only "                          \
	   "(giong_config.uring_only, GIONG_RING_TIER=uring, a forced io_uring tier) "             \
	   "and giong runs on its epoll tier")                                                     \
	XX(EURING_OLD, -4004,                                                                      \
	   "this kernel's io_uring lacks a feature giong needs (provided buffer rings or "         \
	   "multishot operations); giong needs Linux 6.0 or newer")                                \
	XX(ENOTWORKER, -4005, "called outside a giong worker thread (no fiber to suspend)")        \
	XX(EPARSE, -4006, "malformed input")                                                       \
	XX(ETLS, -4010,                                                                            \
	   "TLS protocol error (a bad record, a failed decryption, an unexpected message)")        \
	XX(ETLS_HANDSHAKE, -4011,                                                                  \
	   "TLS handshake failed (no common version, cipher suite or ALPN protocol, or an "        \
	   "unknown server name)")                                                                 \
	XX(ETLS_CERT, -4012,                                                                       \
	   "TLS peer certificate rejected (untrusted, expired, or not for this host name)")        \
	XX(ETLS_ALERT, -4013, "the TLS peer ended the connection with a fatal alert")              \
	XX(ETLS_TRUNCATED, -4014,                                                                  \
	   "the TLS stream ended without close_notify: the data may have been cut short")          \
	XX(ETLS_CONFIG, -4015,                                                                     \
	   "TLS configuration rejected: a certificate, key or CA list that cannot be loaded, "     \
	   "or a key that does not match its certificate")                                         \
	XX(ESTACK, -4016,                                                                          \
	   "the task's stack is too small for this call: raise giong_config.stack_size")

enum giong_error {
#define GIONG__ERR_ENUM(name, val, msg) GIONG_##name = (val),
	GIONG_ERROR_MAP(GIONG__ERR_ENUM)
#undef GIONG__ERR_ENUM
};

/*
 * giong_strerror() - describe an error code.
 * @err: a negative errno or a GIONG_E* code (a positive errno is accepted too).
 * Returns a static string; never allocates, never NULL. Thread-safe.
 */
GIONG_API const char *giong_strerror(int err);

/*
 * giong_err_name() - the symbolic name of an error code: "ECONNRESET",
 * "GIONG_ESHUTDOWN", or "unknown". Returns a static string. Thread-safe.
 */
GIONG_API const char *giong_err_name(int err);

GIONG_END_DECLS

#endif /* GIONG_CORE_ERROR_H */
