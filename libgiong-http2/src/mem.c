/* SPDX-License-Identifier: MIT */
/*
 * mem.c - the allocator nghttp2 gets (nghttp2_mem): the system's, with each
 * block's size in a 16-byte prefix, so that what a session holds is known
 * (h->mem, and the worker's session_bytes): the figure reported beside an
 * idle connection's RSS.
 */
#include <assert.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "h2.h"

/* A prefix that keeps the block aligned as malloc's is. */
#define PREFIX 16u

static _Thread_local struct giong_http2_stats worker_stats;

struct giong_http2_stats *h2_worker_stats(void)
{
	return &worker_stats;
}

static void count(struct h2_conn *h, size_t add, size_t sub)
{
	h->mem += add - sub;
	worker_stats.session_bytes += add - sub;
}

static void *mem_malloc(size_t size, void *ud)
{
	char *p = size <= SIZE_MAX - PREFIX ? malloc(size + PREFIX) : NULL;

	if (!p)
		return NULL;
	memcpy(p, &size, sizeof(size));
	count(ud, size, 0);
	return p + PREFIX;
}

static void mem_free(void *ptr, void *ud)
{
	char *p = ptr;
	size_t size;

	if (!p)
		return;
	p -= PREFIX;
	memcpy(&size, p, sizeof(size));
	count(ud, 0, size);
	free(p);
}

static void *mem_calloc(size_t n, size_t size, void *ud)
{
	void *p;

	if (size && n > (SIZE_MAX - PREFIX) / size)
		return NULL;
	if ((p = mem_malloc(n * size, ud)))
		memset(p, 0, n * size);
	return p;
}

static void *mem_realloc(void *ptr, size_t size, void *ud)
{
	char *p = ptr, *q;
	size_t old;

	if (!p)
		return mem_malloc(size, ud);
	if (size > SIZE_MAX - PREFIX)
		return NULL;
	p -= PREFIX;
	memcpy(&old, p, sizeof(old));
	if (!(q = realloc(p, size + PREFIX)))
		return NULL;
	memcpy(q, &size, sizeof(size));
	count(ud, size, old);
	return q + PREFIX;
}

void h2_mem_init(nghttp2_mem *m, struct h2_conn *h)
{
	static_assert(PREFIX >= sizeof(size_t) && PREFIX % alignof(max_align_t) == 0,
		      "the prefix keeps malloc's alignment");
	m->mem_user_data = h;
	m->malloc = mem_malloc;
	m->free = mem_free;
	m->calloc = mem_calloc;
	m->realloc = mem_realloc;
}
