/* SPDX-License-Identifier: MIT */
/*
 * op.h - the operation slab and the completion layer (op.c): every SQE
 * giong submits names a slab entry holding its callback; reaping dispatches
 * each CQE to it. Calls down into ring and bufpool only.
 */
#ifndef GIONG_SRC_OP_H
#define GIONG_SRC_OP_H

#include <liburing.h>
#include <stdbool.h>
#include <stdint.h>

#include <giong/core/op.h>

struct giong__worker;

/* One entry of the slab. user_data = (gen << 32) | (index + 1); 0 is "ignore". */
struct giong__op {
	giong_op_fn fn;
	void *ctx;
	uint32_t gen;
	uint32_t next_free; /* index + 1 of the next free entry, 0 = none */
	bool live;
	bool cancel_sent;
	bool cancel_wanted; /* asked for, but no SQE was to be had: owed */
};

#define GIONG__OP_CHUNK_SHIFT 8
#define GIONG__OP_CHUNK (1u << GIONG__OP_CHUNK_SHIFT)

/* A CQE taken off the ring, its callback not run yet. */
struct giong__cqe_copy {
	uint64_t ud;
	int res;
	unsigned flags;
};

struct giong__op_slab {
	struct giong__op **chunks;
	uint32_t nchunks;
	uint32_t free_head; /* index + 1, 0 = none */
	uint32_t live;
	/* CQEs giong__sqe() took off a full CQ to make the kernel take more,
	 * in order, for giong__reap() to dispatch before the ring's: entries
	 * [stash_head, stash_head + stash_n) of stash_cap (grown on demand). */
	struct giong__cqe_copy *stash;
	unsigned stash_head, stash_n, stash_cap;
};

void giong__op_slab_fini(struct giong__op_slab *s);
/* giong__ring_enter(), or on the epoll tier giong__emu_enter(): submit what
 * is queued, and wait as asked. */
int giong__io_enter(struct giong__worker *w, unsigned wait_nr, uint64_t timeout_ms);
/* A free SQE, cleared to an ignored no-op; with a full SQ, submits (and, if
 * the kernel's CQ backlog is full, takes the CQEs off the ring into the
 * stash, running no callback) to make room. NULL if none can be had. */
struct io_uring_sqe *giong__sqe(struct giong__worker *w);
/* Bind @sqe to a new slab entry calling @fn(@ctx, res, flags) on each CQE. */
int giong__op_start(struct giong__worker *w, struct io_uring_sqe *sqe, giong_op_fn fn, void *ctx,
		    uint64_t *id);
/* Consume every ready CQE, calling operation callbacks. Does not nest. */
void giong__reap(struct giong__worker *w);
/* Cancel live operation @user_data once; if no SQE can be had now, the
 * cancel is owed and giong__retry_cancels() sends it (every tick). */
void giong__cancel_op(struct giong__worker *w, uint64_t user_data);
void giong__retry_cancels(struct giong__worker *w);
/* Cancel every live operation (at worker exit). */
void giong__op_cancel_all(struct giong__worker *w);

#endif /* GIONG_SRC_OP_H */
