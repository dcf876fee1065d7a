/* SPDX-License-Identifier: MIT */
/*
 * bufpool.h - the worker's receive buffer pool: a provided buffer ring
 * registered with the kernel, and the recvbufs lent out of it (bufpool.c).
 * Calls only ring-level liburing helpers.
 */
#ifndef GIONG_SRC_BUFPOOL_H
#define GIONG_SRC_BUFPOOL_H

#include <liburing.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <giong/core/buf.h>

struct giong__worker;

struct giong_recvbuf {
	char *data;   /* first unconsumed byte */
	uint32_t len; /* unconsumed bytes */
	uint32_t cap; /* heap buffer (bid -1): bytes of room after the struct */
	int32_t bid;  /* pool buffer id, or -1 for a heap buffer */
	struct giong__worker *w;
};

struct giong__bufpool {
	struct io_uring_buf_ring *br; /* shared with the kernel; see bufpool.c */
	size_t br_bytes;
	char *mem; /* count * size bytes, lent to the kernel while a buffer is in the ring */
	size_t mem_bytes;
	struct giong_recvbuf *descs; /* one per buffer id */
	unsigned count, size, mask;
	unsigned free; /* buffers in the ring, available to the kernel */
	int bgid;
	bool registered;
	uint16_t emu_head;          /* epoll tier: the next entry to take (the kernel's head) */
	struct giong__list waiters; /* struct giong_bufpool_waiter, oldest first */
	struct giong__list dry;     /* struct giong_bufpool_dry, in order added */
	struct giong__list_node *dry_next; /* while calling them: the next one */
};

int giong__bufpool_init(struct giong__worker *w, unsigned count, unsigned size);
/* Map and register a provided buffer ring (liburing 2.3 lacks the helper). */
struct io_uring_buf_ring *giong__buf_ring_setup(struct io_uring *ring, unsigned entries, int bgid,
						int *err);
void giong__buf_ring_free(struct io_uring *ring, struct io_uring_buf_ring *br, unsigned entries,
			  int bgid);
/* A CQE consumed a buffer from the ring; the last one calls the dry holders. */
void giong__bufpool_consumed(struct giong__worker *w);
void giong__bufpool_fini(struct giong__worker *w);
/* Epoll tier (no kernel ring): the buffer the kernel would pick next, its id
 * and size in *@bid and *@len, not taken yet; NULL when the ring is empty.
 * giong__bufpool_commit() takes it (a CQE with IORING_CQE_F_BUFFER follows,
 * which giong__bufpool_consumed() counts as on io_uring). */
void *giong__bufpool_peek(struct giong__worker *w, unsigned *bid, unsigned *len);
void giong__bufpool_commit(struct giong__worker *w);

#endif /* GIONG_SRC_BUFPOOL_H */
