/* SPDX-License-Identifier: MIT */
/*
 * faults.c - the fault plan (private/giong_faults.h): parsing GIONG_FAULTS,
 * the decisions, the counters and the allocation wrappers. Built only with
 * GIONG_FAULTS=ON; a leaf of core's call order (it calls nothing of core).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Compiled with GIONG__FAULTS_PLAN (libgiong-core/CMakeLists.txt): this file
 * is what the wrappers call, its allocations are the real ones. */
#include "giong_faults.h"

static const char *const kind_names[GIONG__FAULT_KINDS] = {
	[GIONG__FAULT_ALLOC] = "alloc",   [GIONG__FAULT_SQE] = "sqe",
	[GIONG__FAULT_ENTER] = "enter",   [GIONG__FAULT_SHORT] = "short",
	[GIONG__FAULT_NOBUFS] = "nobufs", [GIONG__FAULT_TLS] = "tls",
};

/* The stream of a thread that is no worker (the program's own threads,
 * before and after a runtime): one shared by all of them. */
#define OUTSIDE_STREAM 0xffffu

static struct {
	uint64_t seed;
	uint32_t num[GIONG__FAULT_KINDS], den[GIONG__FAULT_KINDS]; /* num 0: never */
	uint64_t nth[GIONG__FAULT_KINDS]; /* "kind=@N": the Nth decision only (0: a rate) */
	bool any;
	bool workers_only; /* "workers=1": the program's own threads decide no fault */
	_Atomic uint64_t injected[GIONG__FAULT_KINDS], decided[GIONG__FAULT_KINDS];
} plan;

static __thread struct {
	unsigned stream;
	bool set;
	uint64_t n[GIONG__FAULT_KINDS];
} me;

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

uint64_t giong__fault(enum giong__fault_kind kind)
{
	uint64_t h, n;

	if (!plan.any || (unsigned)kind >= GIONG__FAULT_KINDS || !plan.num[kind])
		return 0;
	if (!me.set) {
		me.stream = OUTSIDE_STREAM;
		me.set = true;
	}
	if (plan.workers_only && me.stream == OUTSIDE_STREAM)
		return 0; /* not even a decision: the workers' sequences stay as they were */
	n = me.n[kind]++;
	atomic_fetch_add_explicit(&plan.decided[kind], 1, memory_order_relaxed);
	h = splitmix64(plan.seed ^ splitmix64(((uint64_t)kind << 32 | me.stream) ^ splitmix64(n)));
	if (plan.nth[kind] ? n + 1 != plan.nth[kind] : h % plan.den[kind] >= plan.num[kind])
		return 0;
	atomic_fetch_add_explicit(&plan.injected[kind], 1, memory_order_relaxed);
	return splitmix64(h) | 1;
}

void giong__faults_thread(unsigned index)
{
	me.stream = index & 0xffffu;
	me.set = true;
	memset(me.n, 0, sizeof(me.n));
}

uint64_t giong__faults_injected(enum giong__fault_kind kind)
{
	return (unsigned)kind < GIONG__FAULT_KINDS ? atomic_load(&plan.injected[kind]) : 0;
}

uint64_t giong__faults_decided(enum giong__fault_kind kind)
{
	return (unsigned)kind < GIONG__FAULT_KINDS ? atomic_load(&plan.decided[kind]) : 0;
}

/* A decimal number of at most @max, all of [p, end). */
static bool parse_u64(const char *p, const char *end, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (p == end)
		return false;
	for (; p < end; p++) {
		uint64_t d = (uint64_t)(*p - '0');

		if (*p < '0' || *p > '9' || d > max || v > (max - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		if (errlen)                                                                        \
			snprintf(err, errlen, __VA_ARGS__);                                        \
		return -EINVAL;                                                                    \
	} while (0)

/* One "name=value" item of [p, end) into *@np (not yet the plan). */
static int parse_item(const char *p, const char *end, uint64_t *seed, bool *workers_only,
		      bool *seen, uint32_t *num, uint32_t *den, uint64_t *nth, char *err,
		      size_t errlen)
{
	const char *eq = memchr(p, '=', (size_t)(end - p)), *slash;
	int len = (int)(end - p);
	uint64_t a = 0, b = 0;
	int k;

	if (!eq)
		FAIL("'%.*s' is not name=value", len, p);
	if ((size_t)(eq - p) == 4 && !memcmp(p, "seed", 4)) {
		if (seen[GIONG__FAULT_KINDS])
			FAIL("seed is given twice");
		seen[GIONG__FAULT_KINDS] = true;
		if (!parse_u64(eq + 1, end, UINT64_MAX, seed))
			FAIL("seed '%.*s' is not a decimal number", (int)(end - eq - 1), eq + 1);
		return 0;
	}
	if ((size_t)(eq - p) == 7 && !memcmp(p, "workers", 7)) {
		if (seen[GIONG__FAULT_KINDS + 1])
			FAIL("workers is given twice");
		seen[GIONG__FAULT_KINDS + 1] = true;
		if (end - eq != 2 || (eq[1] != '0' && eq[1] != '1'))
			FAIL("workers '%.*s' is not 0 or 1", (int)(end - eq - 1), eq + 1);
		*workers_only = eq[1] == '1';
		return 0;
	}
	for (k = 0; k < GIONG__FAULT_KINDS; k++)
		if (strlen(kind_names[k]) == (size_t)(eq - p) &&
		    !memcmp(p, kind_names[k], (size_t)(eq - p)))
			break;
	if (k == GIONG__FAULT_KINDS)
		FAIL("unknown fault '%.*s' (known: seed workers alloc sqe enter short nobufs tls)",
		     (int)(eq - p), p);
	if (seen[k])
		FAIL("%s is given twice", kind_names[k]);
	seen[k] = true;
	if (end - eq > 1 && eq[1] == '@') {
		/* "kind=@N": the Nth decision of each stream, no other (a sweep). */
		if (!parse_u64(eq + 2, end, UINT64_MAX, &a) || !a)
			FAIL("%s '%.*s' is not @N with N a decimal number from 1", kind_names[k],
			     (int)(end - eq - 1), eq + 1);
		num[k] = den[k] = 1;
		nth[k] = a;
		return 0;
	}
	slash = memchr(eq + 1, '/', (size_t)(end - eq - 1));
	if (!slash && end - eq == 2 && eq[1] == '0') {
		num[k] = 0; /* "kind=0": never */
		den[k] = 1;
		return 0;
	}
	if (!slash || !parse_u64(eq + 1, slash, UINT32_MAX, &a) ||
	    !parse_u64(slash + 1, end, UINT32_MAX, &b) || !b || a > b)
		FAIL("%s rate '%.*s' is not N/D with 0 <= N <= D, 0 < D < 2^32 (e.g. 1/100), or 0",
		     kind_names[k], (int)(end - eq - 1), eq + 1);
	num[k] = (uint32_t)a;
	den[k] = (uint32_t)b;
	return 0;
}

int giong__faults_configure(const char *spec, char *err, size_t errlen)
{
	uint32_t num[GIONG__FAULT_KINDS] = {0}, den[GIONG__FAULT_KINDS];
	uint64_t nth[GIONG__FAULT_KINDS] = {0};
	bool seen[GIONG__FAULT_KINDS + 2] = {0}; /* the kinds, seed, workers */
	uint64_t seed = 1;
	bool any = false, workers_only = false;

	for (int k = 0; k < GIONG__FAULT_KINDS; k++)
		den[k] = 1;
	if (spec && *spec) {
		for (const char *p = spec;;) {
			const char *end = strchr(p, ',');
			int r;

			if (!end)
				end = p + strlen(p);
			if (end == p)
				FAIL("an empty item (two commas, or one at an end)");
			r = parse_item(p, end, &seed, &workers_only, seen, num, den, nth, err,
				       errlen);
			if (r)
				return r;
			if (!*end)
				break;
			p = end + 1;
		}
	}
	for (int k = 0; k < GIONG__FAULT_KINDS; k++)
		any |= num[k] != 0;
	plan.any = false; /* nothing decides while the plan changes */
	plan.seed = seed;
	plan.workers_only = workers_only;
	memcpy(plan.num, num, sizeof(num));
	memcpy(plan.den, den, sizeof(den));
	memcpy(plan.nth, nth, sizeof(nth));
	for (int k = 0; k < GIONG__FAULT_KINDS; k++) {
		atomic_store(&plan.injected[k], 0);
		atomic_store(&plan.decided[k], 0);
	}
	memset(me.n, 0, sizeof(me.n));
	plan.any = any;
	if (errlen)
		err[0] = '\0';
	return 0;
}

static void report(void)
{
	fprintf(stderr, "giong faults: seed %" PRIu64 ":", plan.seed);
	for (int k = 0; k < GIONG__FAULT_KINDS; k++)
		if (plan.num[k])
			fprintf(stderr, " %s %" PRIu64 "/%" PRIu64, kind_names[k],
				atomic_load(&plan.injected[k]), atomic_load(&plan.decided[k]));
	fprintf(stderr, " (injected/decided)\n");
}

/* When libgiong-core is loaded (or the program starts, statically linked):
 * a plan that cannot be read stops the program here, before it runs
 * without the faults it was asked for. */
__attribute__((constructor)) static void faults_from_env(void)
{
	const char *spec = getenv("GIONG_FAULTS"), *rep = getenv("GIONG_FAULTS_REPORT");
	char why[160];

	if (giong__faults_configure(spec, why, sizeof(why))) {
		fprintf(stderr, "giong: GIONG_FAULTS=%s: %s\n", spec, why);
		abort();
	}
	if (rep && *rep && strcmp(rep, "0")) {
		if (strcmp(rep, "1")) {
			fprintf(stderr, "giong: GIONG_FAULTS_REPORT=%s: want 1 or 0\n", rep);
			abort();
		}
		atexit(report);
	}
}

/* ------------------------------------------------------------ allocation */

void *giong__fault_malloc(size_t n)
{
	if (giong__fault(GIONG__FAULT_ALLOC)) {
		errno = ENOMEM;
		return NULL;
	}
	return malloc(n);
}

void *giong__fault_calloc(size_t n, size_t size)
{
	if (giong__fault(GIONG__FAULT_ALLOC)) {
		errno = ENOMEM;
		return NULL;
	}
	return calloc(n, size);
}

void *giong__fault_realloc(void *p, size_t n)
{
	if (giong__fault(GIONG__FAULT_ALLOC)) {
		errno = ENOMEM;
		return NULL; /* @p stays as it was, as realloc() leaves it */
	}
	return realloc(p, n);
}

int giong__fault_posix_memalign(void **p, size_t align, size_t n)
{
	if (giong__fault(GIONG__FAULT_ALLOC))
		return ENOMEM;
	return posix_memalign(p, align, n);
}

char *giong__fault_strdup(const char *s)
{
	if (giong__fault(GIONG__FAULT_ALLOC)) {
		errno = ENOMEM;
		return NULL;
	}
	return strdup(s);
}

char *giong__fault_strndup(const char *s, size_t n)
{
	if (giong__fault(GIONG__FAULT_ALLOC)) {
		errno = ENOMEM;
		return NULL;
	}
	return strndup(s, n);
}
