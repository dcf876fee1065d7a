/* SPDX-License-Identifier: MIT */
/*
 * backend_faults.h - the `tls` fault kind (private/giong_faults.h) at the
 * backends' own calls into their TLS library, for the backends' sources
 * only (wolfssl.c, openssl.c; it includes no TLS header).
 *
 * The generic code fails a handshake, read or write step (stream.c,
 * TLS_STEP). The backends' error paths for a library call that fails, a
 * context, connection, BIO or certificate that cannot be made, a setter
 * that refuses, a session that does not serialise, are reached only when
 * the library fails inside, mostly on an allocation giong's allocation
 * hook does not see. These macros make such a call fail when the plan
 * says so, the way the library reports it (NULL, 0, WOLFSSL_FAILURE, ...),
 * without calling it: nothing is half made, so the path frees exactly what
 * it frees after a real failure.
 *
 * Only calls made to build a context or set up a connection, their
 * helpers, and session export and import; not the per-record handshake,
 * read and write (TLS_STEP has them), not frees, not calls whose result is
 * ignored. In a build without GIONG_FAULTS giong__fault() is the constant
 * 0: each macro is its call, and the compiler drops the rest.
 */
#ifndef GIONG_TLS_BACKEND_FAULTS_H
#define GIONG_TLS_BACKEND_FAULTS_H

#include <stdbool.h>
#include <stddef.h>

#include "giong_faults.h"

/* What the library leaves behind when such a call fails, beyond its return
 * value (OpenSSL queues an error): a backend defines it before including
 * this header, or nothing. */
#ifndef LIB_FAULT_REPORT
#define LIB_FAULT_REPORT() ((void)0)
#endif

/* One decision of the plan for a TLS library call: true to fail it. */
#define LIB_FAULT()                                                                                \
	(__builtin_expect(giong__fault(GIONG__FAULT_TLS) != 0, 0) && (LIB_FAULT_REPORT(), true))

/* @call, a library call returning a pointer, or NULL without calling it. */
#define LIB_PTR(call) (LIB_FAULT() ? NULL : (call))

/* @call, a library call returning a status, or @fail (its failure value)
 * without calling it. */
#define LIB_INT(fail, call) (LIB_FAULT() ? (fail) : (call))

#endif /* GIONG_TLS_BACKEND_FAULTS_H */
