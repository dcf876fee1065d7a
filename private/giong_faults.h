/* SPDX-License-Identifier: MIT */
/*
 * giong_faults.h - fault injection (the GIONG_FAULTS=ON build, never a
 * release, never installed): a seeded plan that makes the libraries' own
 * allocations fail, io_uring_get_sqe() find the ring full, io_uring_enter()
 * return -EINTR, -EAGAIN or -EBUSY, stream sends and receives come back
 * short, a multishot receive end with -ENOBUFS, and a TLS library step fail.
 * docs/testing.md describes the plan and the check that runs it
 * (scripts/check faults).
 *
 * The plan comes from the environment, read once when libgiong-core is
 * loaded (a bad one is reported on stderr and aborts there, never ignored):
 *
 *   GIONG_FAULTS=seed=7,alloc=1/500,sqe=1/50,enter=1/100,short=1/10,nobufs=1/100,tls=1/1000
 *   (workers=1: only workers' threads decide; the program's own see no fault)
 *   GIONG_FAULTS=workers=1,alloc=@12  (exactly the 12th decision of each
 *   thread's stream: a test that fails every point of a scenario in turn)
 *   GIONG_FAULTS_REPORT=1    print what was injected at exit (stderr)
 *
 * A decision is a hash (splitmix64) of the seed, the kind, the thread's
 * stream (a worker's index; every other thread shares one stream of its
 * own) and the number of decisions of that kind the thread made before.
 * A worker's counters start again at 0 when its loop starts, so the same
 * seed and the same sequence of calls on a worker give the same faults.
 *
 * In a build without the option every hook is the constant 0: the
 * compiler drops it and the code it guards.
 *
 * Sources that place a hook include this header. In a faults build it is
 * also force-included (-include, with GIONG__FAULTS_ALLOC) into every
 * source of every library (giong_add_library()), where its last part turns
 * malloc(), calloc(), realloc(), posix_memalign(), strdup() and strndup()
 * into the plan's wrappers, in the way curl's memdebug.h does: the
 * libraries' own calls only, not the TLS libraries', c-ares' or the
 * tests'.
 */
#ifndef GIONG_FAULTS_H
#define GIONG_FAULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum giong__fault_kind {
	GIONG__FAULT_ALLOC,  /* "alloc": a library allocation returns NULL (ENOMEM) */
	GIONG__FAULT_SQE,    /* "sqe": io_uring_get_sqe() finds the SQ full (core op.c) */
	GIONG__FAULT_ENTER,  /* "enter": io_uring_enter fails before the call (core ring.c) */
	GIONG__FAULT_SHORT,  /* "short": a stream send or receive is cut short (net sock.c) */
	GIONG__FAULT_NOBUFS, /* "nobufs": a multishot receive ends with -ENOBUFS (net rxq.c) */
	GIONG__FAULT_TLS,    /* "tls": a TLS library step fails (tls stream.c) */
	GIONG__FAULT_KINDS
};

#ifdef GIONG_FAULTS

#define GIONG__FAULTS_API __attribute__((visibility("default")))

/*
 * giong__fault() - one decision of the plan for @kind on the calling thread.
 * Returns 0 (no fault), or a nonzero pseudo-random value (inject it; pick
 * the details from the value, e.g. a length as 1 + v % len). Counts both.
 */
GIONG__FAULTS_API uint64_t giong__fault(enum giong__fault_kind kind);

/* This thread is worker @index: its own stream of decisions, counters reset
 * (worker.c, when a worker's loop starts). */
GIONG__FAULTS_API void giong__faults_thread(unsigned index);

/*
 * giong__faults_configure() - replace the plan with @spec (the syntax of
 * GIONG_FAULTS; NULL or "" is no fault at all) and zero the counters.
 * Returns 0, or -EINVAL with the reason in @err (@errlen bytes). Not to be
 * called while other threads decide (tests call it between runtimes).
 */
GIONG__FAULTS_API int giong__faults_configure(const char *spec, char *err, size_t errlen);

/* The faults of @kind injected, and the decisions made, since the plan was
 * set (all threads). */
GIONG__FAULTS_API uint64_t giong__faults_injected(enum giong__fault_kind kind);
GIONG__FAULTS_API uint64_t giong__faults_decided(enum giong__fault_kind kind);

/* The allocation wrappers: NULL with errno ENOMEM (posix_memalign: ENOMEM)
 * when the plan says so, else the real call. */
GIONG__FAULTS_API void *giong__fault_malloc(size_t n);
GIONG__FAULTS_API void *giong__fault_calloc(size_t n, size_t size);
GIONG__FAULTS_API void *giong__fault_realloc(void *p, size_t n);
GIONG__FAULTS_API int giong__fault_posix_memalign(void **p, size_t align, size_t n);
GIONG__FAULTS_API char *giong__fault_strdup(const char *s);
GIONG__FAULTS_API char *giong__fault_strndup(const char *s, size_t n);

/* The libraries' own allocations go through the plan: in their objects
 * (GIONG__FAULTS_ALLOC, set with the -include), but not in faults.c, which
 * calls the real ones, and not in a test that compiles a library's file
 * with an allocator of its own. <stdlib.h> and <string.h> are included
 * above, so their declarations are not renamed. */
#if defined(GIONG__FAULTS_ALLOC) && !defined(GIONG__FAULTS_PLAN)
#undef malloc
#undef calloc
#undef realloc
#undef posix_memalign
#undef strdup
#undef strndup
#define malloc(n) giong__fault_malloc(n)
#define calloc(n, size) giong__fault_calloc(n, size)
#define realloc(p, n) giong__fault_realloc(p, n)
#define posix_memalign(p, align, n) giong__fault_posix_memalign(p, align, n)
#define strdup(s) giong__fault_strdup(s)
#define strndup(s, n) giong__fault_strndup(s, n)
#endif

#else /* !GIONG_FAULTS */

#define giong__fault(kind) ((void)(kind), (uint64_t)0)
#define giong__faults_thread(index) ((void)(index))

#endif /* GIONG_FAULTS */

#endif /* GIONG_FAULTS_H */
