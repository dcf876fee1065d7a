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
	   "or a seccomp profile (such as Docker's default) blocks io_uring_setup; "               \
	   "set kernel.io_uring_disabled=0 or run the container with "                             \
	   "--security-opt seccomp=unconfined")                                                    \
	XX(ENOURING, -4003,                                                                        \
	   "this kernel has no io_uring (io_uring_setup returned ENOSYS); giong needs Linux "      \
	   "6.0 or newer with CONFIG_IO_URING")                                                    \
	XX(EURING_OLD, -4004,                                                                      \
	   "this kernel's io_uring lacks a feature giong needs (provided buffer rings or "         \
	   "multishot operations); giong needs Linux 6.0 or newer")                                \
	XX(ENOTWORKER, -4005, "called outside a giong worker thread (no fiber to suspend)")        \
	XX(EPARSE, -4006, "malformed input")

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
