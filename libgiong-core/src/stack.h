/* SPDX-License-Identifier: MIT */
/*
 * Fiber stacks: mmap'd regions with a PROT_NONE guard page below them,
 * recycled through a per-worker pool, and a SIGSEGV/SIGBUS handler that
 * turns a hit on a guard page into a message naming the fiber instead of a
 * bare segfault.
 *
 * Layout of one mapping, low to high addresses:
 *
 *	map                lo                          lo+size        map+map_size
 *	| guard (1 page)   | usable stack ... <- sp    | slack | header |
 *
 * The struct giong__stack header lives in the top 64 bytes of its own
 * mapping, so getting a stack costs one mmap and no malloc, and a pooled
 * stack costs nothing but the mapping. The header is above the initial
 * stack pointer, where a downward-growing stack cannot reach it.
 *
 * The slack between the top of the usable stack and the header is a
 * per-mapping pseudo-random multiple of 64 bytes below one page: stack tops
 * would otherwise all share one page offset, so the hot top frames of
 * every fiber would compete for the same L1 sets. The slack comes out of
 * the header page, so ->size is the requested size plus 64 to 4032 bytes,
 * never less.
 *
 * Pools and stacks belong to one thread (a worker): get, put and fini run
 * on the thread that owns the pool, never concurrently.
 */
#ifndef GIONG_CORE_STACK_H
#define GIONG_CORE_STACK_H

#include <stddef.h>

#include "context.h" /* for GIONG_ASAN / GIONG_TSAN detection */

#ifdef __cplusplus
extern "C" {
#endif

struct giong__stack {
	void *lo;    /* lowest usable byte, just above the guard page */
	size_t size; /* usable bytes from lo, excluding guard and header */
	void *map;   /* the whole mapping; the guard is [map, lo) */
	size_t map_size;
	struct giong__stack *next;   /* pool free list, or live list of the thread */
	struct giong__stack **pprev; /* live list link; NULL while pooled. Not the
				      * shared giong__list: the SIGSEGV handler walks
				      * this list, so a node is published with a signal
				      * fence once complete (stack.c, live_link) */
	const char *owner_name;      /* for the overflow message; borrowed */
};

struct giong__stack_pool {
	struct giong__stack *free; /* pooled stacks, LIFO so the warmest is reused */
	unsigned count;            /* stacks in @free */
	unsigned max;              /* at most this many stay pooled */
	size_t size;               /* requested stack size, page-rounded */
	unsigned live;             /* stacks handed out and not yet put back */
	unsigned mapped;           /* stacks currently mapped: live + count */
};

/* giong__stack_pool_init() - empty pool of @stack_size (page-rounded) stacks. */
void giong__stack_pool_init(struct giong__stack_pool *p, size_t stack_size, unsigned max_pooled);

/*
 * giong__stack_get() - take a stack from @p, reusing a pooled one or
 * mapping a new one. Returns 0 and an owned stack in *@ret (give it back
 * with giong__stack_put()), or -ENOMEM. ->owner_name starts NULL.
 * Owner thread only.
 */
int giong__stack_get(struct giong__stack_pool *p, struct giong__stack **ret);

/*
 * giong__stack_put() - take ownership of @s back into @p; it is unmapped
 * when the pool already holds ->max stacks. The stack must no longer be in
 * use (switch off it first). Owner thread only.
 */
void giong__stack_put(struct giong__stack_pool *p, struct giong__stack *s);

/* giong__stack_pool_fini() - unmap pooled stacks. All stacks must be put back. */
void giong__stack_pool_fini(struct giong__stack_pool *p);

/*
 * giong__stack_guard_install() - install the process-wide SIGSEGV/SIGBUS
 * handler that reports fiber stack overflows. Idempotent and thread-safe.
 * Faults that are not on a guard page go to the handler that was installed
 * before (or the default action). Returns 0 or -errno.
 *
 * ASan and TSan builds install nothing and return 0: those runtimes own
 * SIGSEGV (ASan reports stack overflows itself) and chaining behind them is
 * fragile.
 */
int giong__stack_guard_install(void);

/*
 * giong__stack_guard_thread_init() - give the calling thread an alternate
 * signal stack, without which the handler cannot run once a fiber stack is
 * exhausted. Keeps an alternate stack the thread already has. Best effort:
 * on failure an overflow is still fatal, just without the message.
 */
void giong__stack_guard_thread_init(void);

/* giong__stack_guard_thread_fini() - release what thread_init allocated. */
void giong__stack_guard_thread_fini(void);

#ifdef __cplusplus
}
#endif

#endif /* GIONG_CORE_STACK_H */
