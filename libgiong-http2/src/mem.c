/* SPDX-License-Identifier: MIT */
/*
 * mem.c - the allocator nghttp2 gets (nghttp2_mem): the system's, with each
 * block's size in a 16-byte prefix, so that what a session holds is known
 * (h->mem, and the worker's session_bytes): the figure reported beside an
 * idle connection's RSS.
 *
 * The session's frame buffer (NGHTTP2_FRAMEBUF_CHUNKLEN bytes, lib/
 * nghttp2_frame.h: a frame header, a pad byte and 16 KiB, made with the
 * session and kept for its life) is page-aligned and kept apart (h->big)
 * with its size, no prefix: while the connection idles with nothing queued
 * in nghttp2 it holds no frame, and its pages go back to the kernel
 * (h2_mem_idle(): MADV_DONTNEED, zero-filled when touched again), so an idle
 * connection's RSS does not hold it. Only a block of exactly that size is
 * treated so: nothing else of nghttp2's may be zeroed under it (a release
 * with another size simply keeps its pages).
 */
#include <assert.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

/* The index of @p among @h's big blocks, or -1. */
static int big_find(const struct h2_conn *h, const void *p)
{
	for (int i = 0; i < H2_BIG_MAX; i++)
		if (h->big[i].p == p)
			return i;
	return -1;
}

/* A page-aligned block of @size (the frame buffer's) in a free big slot, or NULL to take
 * the ordinary path (no slot free). */
static void *big_alloc(struct h2_conn *h, size_t size)
{
	int i = big_find(h, NULL);
	void *p;

	if (i < 0 || posix_memalign(&p, 4096, size))
		return NULL;
	h->big[i].p = p;
	h->big[i].size = size;
	count(h, size, 0);
	return p;
}

void h2_mem_idle(struct h2_conn *h)
{
	for (int i = 0; i < H2_BIG_MAX; i++)
		if (h->big[i].p && h->big[i].size >= 4096)
			/* Whole pages only: the block starts on one. */
			(void)madvise(h->big[i].p, h->big[i].size & ~(size_t)4095, MADV_DONTNEED);
}

static void *mem_malloc(size_t size, void *ud)
{
	char *p;

	if (size == H2_FRAMEBUF_LEN && (p = big_alloc(ud, size)))
		return p;
	p = size <= SIZE_MAX - PREFIX ? malloc(size + PREFIX) : NULL;
	if (!p)
		return NULL;
	memcpy(p, &size, sizeof(size));
	count(ud, size, 0);
	return p + PREFIX;
}

static void mem_free(void *ptr, void *ud)
{
	struct h2_conn *h = ud;
	char *p = ptr;
	size_t size;
	int i;

	if (!p)
		return;
	if ((i = big_find(h, p)) >= 0) {
		count(h, 0, h->big[i].size);
		h->big[i].p = NULL;
		free(p);
		return;
	}
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
	struct h2_conn *h = ud;
	char *p = ptr, *q;
	size_t old;
	int i;

	if (!p)
		return mem_malloc(size, ud);
	if ((i = big_find(h, p)) >= 0) {
		/* Rare (nghttp2 grows few buffers): a new block and a copy. */
		if (!(q = mem_malloc(size, ud)))
			return NULL;
		memcpy(q, p, size < h->big[i].size ? size : h->big[i].size);
		mem_free(p, ud);
		return q;
	}
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
