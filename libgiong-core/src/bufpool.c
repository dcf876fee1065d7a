/* SPDX-License-Identifier: MIT */
/*
 * bufpool.c - the worker's provided buffer ring (IORING_REGISTER_PBUF_RING).
 *
 * liburing 2.3 has no io_uring_setup_buf_ring(), so the ring is mapped here:
 * an anonymous mapping of count struct io_uring_buf entries, registered with
 * the kernel under group id 0. Both the ring and the buffers it points to
 * are shared with the kernel from registration until unregistration, and are
 * unmapped only after that (and after the worker's operations are drained).
 *
 * Each buffer id has one struct giong_recvbuf descriptor. The kernel cannot
 * hand out an id again before we put it back in the ring, so the descriptor
 * for a received buffer is never aliased.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"
#include "bufpool.h"

struct io_uring_buf_ring *giong__buf_ring_setup(struct io_uring *ring, unsigned entries, int bgid,
						int *err)
{
	struct io_uring_buf_reg reg;
	size_t bytes = entries * sizeof(struct io_uring_buf);
	void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int ret;

	if (mem == MAP_FAILED) {
		*err = -errno;
		return NULL;
	}
	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = (uint64_t)(uintptr_t)mem;
	reg.ring_entries = entries;
	reg.bgid = (uint16_t)bgid;
	/* The mapping is the kernel's to read until unregistered. */
	ret = io_uring_register_buf_ring(ring, &reg, 0);
	if (ret) {
		munmap(mem, bytes);
		*err = ret;
		return NULL;
	}
	io_uring_buf_ring_init(mem);
	*err = 0;
	return mem;
}

void giong__buf_ring_free(struct io_uring *ring, struct io_uring_buf_ring *br, unsigned entries,
			  int bgid)
{
	io_uring_unregister_buf_ring(ring, bgid);
	munmap(br, entries * sizeof(struct io_uring_buf));
}

/* Put buffer @bid back where the kernel can pick it. */
static void ring_put(struct giong__bufpool *p, unsigned bid)
{
	io_uring_buf_ring_add(p->br, p->mem + (size_t)bid * p->size, p->size, (unsigned short)bid,
			      p->mask, 0);
	io_uring_buf_ring_advance(p->br, 1);
	p->free++;
}

int giong__bufpool_init(struct giong__worker *w, unsigned count, unsigned size)
{
	struct giong__bufpool *p = &w->pool;
	int err;

	memset(p, 0, sizeof(*p));
	p->count = count;
	p->size = size;
	p->mask = io_uring_buf_ring_mask(count);
	p->bgid = 0;
	p->mem_bytes = (size_t)count * size;
	/* Populated now: the kernel hands the buffers out in turn, so a busy
	 * worker touches every one of them soon anyway; faulting them in at
	 * start makes the pool the fixed cost it is (count * size per worker,
	 * 4 MiB by default), not a cost that seems to grow with connections. */
	p->mem = mmap(NULL, p->mem_bytes, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p->mem == MAP_FAILED) {
		p->mem = NULL;
		return -ENOMEM;
	}
	p->descs = calloc(count, sizeof(*p->descs));
	if (!p->descs) {
		munmap(p->mem, p->mem_bytes);
		return -ENOMEM;
	}
	if (w->ring.tier == GIONG_TIER_EPOLL) {
		/* No kernel: the same ring layout, read by emu_net.c through
		 * giong__bufpool_peek(), so that release and refill are one
		 * code path on every tier. */
		p->br_bytes = count * sizeof(struct io_uring_buf);
		p->br = mmap(NULL, p->br_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			     -1, 0);
		if (p->br == MAP_FAILED)
			p->br = NULL;
		else
			io_uring_buf_ring_init(p->br);
		err = -ENOMEM;
	} else {
		p->br = giong__buf_ring_setup(&w->ring.ring, count, p->bgid, &err);
	}
	if (!p->br) {
		free(p->descs);
		munmap(p->mem, p->mem_bytes);
		return err == -EINVAL ? GIONG_EURING_OLD : err;
	}
	p->registered = true;
	for (unsigned i = 0; i < count; i++) {
		p->descs[i].bid = (int32_t)i;
		p->descs[i].w = w;
		ring_put(p, i);
	}
	return 0;
}

void giong__bufpool_fini(struct giong__worker *w)
{
	struct giong__bufpool *p = &w->pool;

	if (!p->registered)
		return;
	if (w->ring.tier == GIONG_TIER_EPOLL)
		munmap(p->br, p->br_bytes);
	else
		giong__buf_ring_free(&w->ring.ring, p->br, p->count, p->bgid);
	munmap(p->mem, p->mem_bytes);
	free(p->descs);
	p->registered = false;
}

void *giong__bufpool_peek(struct giong__worker *w, unsigned *bid, unsigned *len)
{
	struct giong__bufpool *p = &w->pool;
	struct io_uring_buf *b;

	if (!p->br || p->emu_head == io_uring_smp_load_acquire(&p->br->tail))
		return NULL;
	b = &p->br->bufs[p->emu_head & p->mask];
	*bid = b->bid;
	*len = b->len;
	return (void *)(uintptr_t)b->addr;
}

void giong__bufpool_commit(struct giong__worker *w)
{
	w->pool.emu_head++;
}

/* The pool ran dry: ask every holder to give unread buffers back. A holder
 * may remove itself or another one: p->dry_next, the one to call next, is
 * moved on by giong_bufpool_dry_remove(). */
static void call_dry_holders(struct giong__bufpool *p)
{
	struct giong__list_node *n = p->dry.first;

	while (n) {
		struct giong_bufpool_dry *d =
			giong__container_of(n, struct giong_bufpool_dry, _link);

		p->dry_next = n->next;
		d->fn(d);
		n = p->dry_next;
	}
	p->dry_next = NULL;
}

void giong__bufpool_consumed(struct giong__worker *w)
{
	struct giong__bufpool *p = &w->pool;

	if (p->free)
		p->free--;
	if (!p->free)
		call_dry_holders(p);
}

static bool half_free(const struct giong__bufpool *p)
{
	return p->free >= p->count / 2 + (p->count == 1);
}

/* A buffer came back: tell the waiters once half the pool is free. */
static void notify_refill(struct giong__bufpool *p)
{
	struct giong__list_node *n;

	if (giong__list_empty(&p->waiters) || !half_free(p))
		return;
	while ((n = giong__list_pop_front(&p->waiters))) {
		struct giong_bufpool_waiter *wt =
			giong__container_of(n, struct giong_bufpool_waiter, _link);

		wt->_queued = 0;
		wt->fn(wt);
	}
}

/* ----------------------------------------------------------- public API */

const void *giong_recvbuf_data(const struct giong_recvbuf *b)
{
	return b ? b->data : NULL;
}

size_t giong_recvbuf_len(const struct giong_recvbuf *b)
{
	return b ? b->len : 0;
}

long giong_recvbuf_consume(struct giong_recvbuf *b, size_t n)
{
	if (!b || n > b->len)
		return -EINVAL;
	b->data += n;
	b->len -= (uint32_t)n;
	return (long)b->len;
}

void giong_recvbuf_release(struct giong_recvbuf *b)
{
	struct giong__bufpool *p;

	if (!b)
		return;
	if (b->bid < 0) {
		free(b);
		return;
	}
	p = &b->w->pool;
	ring_put(p, (unsigned)b->bid);
	notify_refill(p);
}

int giong_bufpool_group(void)
{
	struct giong__worker *w = giong__worker_current();

	return w ? w->pool.bgid : GIONG_ENOTWORKER;
}

long giong_bufpool_size(void)
{
	struct giong__worker *w = giong__worker_current();

	return w ? (long)w->pool.size : GIONG_ENOTWORKER;
}

int giong_bufpool_take(unsigned bid, size_t len, struct giong_recvbuf **ret)
{
	struct giong__worker *w = giong__worker_current();
	struct giong_recvbuf *b;

	if (!w)
		return GIONG_ENOTWORKER;
	if (!ret || bid >= w->pool.count || len > w->pool.size)
		return -EINVAL;
	b = &w->pool.descs[bid];
	b->data = w->pool.mem + (size_t)bid * w->pool.size;
	b->len = (uint32_t)len;
	*ret = b;
	return 0;
}

int giong_recvbuf_copy(struct giong_recvbuf **bp)
{
	struct giong_recvbuf *b, *c;

	if (!bp || !*bp)
		return -EINVAL;
	b = *bp;
	if (b->bid < 0)
		return 0;
	c = malloc(sizeof(*c) + b->len);
	if (!c)
		return -ENOMEM;
	c->data = (char *)(c + 1);
	c->len = b->len;
	c->cap = b->len;
	c->bid = -1;
	c->w = b->w;
	memcpy(c->data, b->data, b->len);
	giong_recvbuf_release(b);
	*bp = c;
	return 0;
}

int giong_recvbuf_alloc(size_t cap, struct giong_recvbuf **ret)
{
	struct giong_recvbuf *b;

	if (!ret)
		return -EINVAL;
	*ret = NULL;
	if (!cap || cap > UINT32_MAX)
		return -EINVAL;
	b = malloc(sizeof(*b) + cap);
	if (!b)
		return -ENOMEM;
	b->data = (char *)(b + 1);
	b->len = 0;
	b->cap = (uint32_t)cap;
	b->bid = -1;
	b->w = giong__worker_current();
	*ret = b;
	return 0;
}

/* Room after the data of heap buffer @b: its bytes start right after it. */
static size_t heap_room(const struct giong_recvbuf *b)
{
	size_t used = (size_t)(b->data - (const char *)(b + 1)) + b->len;

	return b->cap - used;
}

void *giong_recvbuf_tail(struct giong_recvbuf *b, size_t *room)
{
	if (room)
		*room = 0;
	if (!b || b->bid >= 0)
		return NULL;
	if (room)
		*room = heap_room(b);
	return b->data + b->len;
}

long giong_recvbuf_commit(struct giong_recvbuf *b, size_t n)
{
	if (!b || b->bid >= 0 || n > heap_room(b))
		return -EINVAL;
	b->len += (uint32_t)n;
	return (long)b->len;
}

int giong_bufpool_is_pooled(const struct giong_recvbuf *b)
{
	return b && b->bid >= 0;
}

int giong_bufpool_notify(struct giong_bufpool_waiter *wt)
{
	struct giong__worker *w = giong__worker_current();
	struct giong__bufpool *p;

	if (!wt || !wt->fn)
		return -EINVAL;
	if (!w)
		return GIONG_ENOTWORKER;
	if (wt->_queued)
		return -EALREADY;
	p = &w->pool;
	if (half_free(p))
		return 1; /* no release may ever come to trigger a notification */
	giong__list_push_back(&p->waiters, &wt->_link);
	wt->_queued = 1;
	return 0;
}

void giong_bufpool_notify_cancel(struct giong_bufpool_waiter *wt)
{
	struct giong__worker *w = giong__worker_current();

	if (!wt || !wt->_queued || !w)
		return;
	giong__list_remove(&w->pool.waiters, &wt->_link);
	wt->_queued = 0;
}

int giong_bufpool_dry_add(struct giong_bufpool_dry *d)
{
	struct giong__worker *w = giong__worker_current();

	if (!d || !d->fn)
		return -EINVAL;
	if (!w)
		return GIONG_ENOTWORKER;
	if (d->_added)
		return -EALREADY;
	giong__list_push_back(&w->pool.dry, &d->_link);
	d->_added = 1;
	return 0;
}

void giong_bufpool_dry_remove(struct giong_bufpool_dry *d)
{
	struct giong__worker *w = giong__worker_current();
	struct giong__bufpool *p;

	if (!d || !d->_added || !w)
		return;
	p = &w->pool;
	if (p->dry_next == &d->_link)
		p->dry_next = d->_link.next;
	giong__list_remove(&p->dry, &d->_link);
	d->_added = 0;
}
