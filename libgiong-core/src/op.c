/* SPDX-License-Identifier: MIT */
/*
 * op.c - the operation slab and the completion layer.
 *
 * Every SQE giong submits carries user_data = (generation << 32) | (slot+1)
 * naming a slab entry that holds its callback. The entry is freed only when
 * the final CQE (no IORING_CQE_F_MORE) arrives, so a late CQE can never
 * reach a reused entry; the generation catches bugs, not races. user_data 0
 * marks SQEs whose completion nobody waits for (ASYNC_CANCEL requests,
 * discarded SQEs).
 *
 * Parking a task on an operation (giong_io) is in io.c, above the scheduler.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "giong_faults.h"
#include "internal.h"
#include "op.h"

static struct giong__op *op_at(struct giong__op_slab *s, uint32_t idx)
{
	return &s->chunks[idx >> GIONG__OP_CHUNK_SHIFT][idx & (GIONG__OP_CHUNK - 1)];
}

/* The user_data naming entry @slot (index + 1) in its current generation. */
static uint64_t op_id(const struct giong__op *op, uint32_t slot)
{
	return ((uint64_t)op->gen << 32) | slot;
}

static int slab_grow(struct giong__op_slab *s)
{
	struct giong__op **chunks = realloc(s->chunks, (s->nchunks + 1) * sizeof(*chunks));
	struct giong__op *c;

	if (!chunks)
		return -ENOMEM;
	s->chunks = chunks;
	c = calloc(GIONG__OP_CHUNK, sizeof(*c));
	if (!c)
		return -ENOMEM;
	s->chunks[s->nchunks] = c;
	/* Thread the new entries onto the free list, lowest index first. */
	uint32_t base = s->nchunks * GIONG__OP_CHUNK;
	for (uint32_t i = GIONG__OP_CHUNK; i-- > 0;) {
		c[i].next_free = s->free_head;
		s->free_head = base + i + 1;
	}
	s->nchunks++;
	return 0;
}

void giong__op_slab_fini(struct giong__op_slab *s)
{
	for (uint32_t i = 0; i < s->nchunks; i++)
		free(s->chunks[i]);
	free(s->chunks);
	free(s->stash);
	memset(s, 0, sizeof(*s));
}

static struct giong__op *op_find(struct giong__op_slab *s, uint64_t user_data)
{
	uint32_t slot = (uint32_t)user_data;
	struct giong__op *op;

	if (!slot || slot > s->nchunks * GIONG__OP_CHUNK)
		return NULL;
	op = op_at(s, slot - 1);
	if (!op->live || op->gen != (uint32_t)(user_data >> 32))
		return NULL;
	return op;
}

/* A free slot of the SQ, or NULL when it is full; GIONG_FAULTS: or when the
 * plan says it is. */
static struct io_uring_sqe *get_sqe(struct giong__worker *w)
{
	if (GIONG__UNLIKELY(giong__fault(GIONG__FAULT_SQE)))
		return NULL;
	if (w->ring.tier == GIONG_TIER_EPOLL)
		return giong__emu_get_sqe(w);
	return io_uring_get_sqe(&w->ring.ring);
}

/*
 * Take every ready CQE off the ring into the stash, in order, running no
 * callback: they run at the loop's next giong__reap(), before the ring's.
 * Returns 0, or -ENOMEM (nothing taken: no memory for the stash).
 */
static int stash_cqes(struct giong__worker *w)
{
	struct io_uring *ring = &w->ring.ring;
	struct giong__op_slab *s = &w->ops;
	unsigned ready = io_uring_cq_ready(ring), head, n = 0;
	struct io_uring_cqe *cqe;

	if (!ready)
		return 0;
	if (s->stash_head) { /* to the front: the free room is at the end */
		memmove(s->stash, s->stash + s->stash_head, s->stash_n * sizeof(*s->stash));
		s->stash_head = 0;
	}
	if (s->stash_n + ready > s->stash_cap) {
		unsigned cap = s->stash_cap ? s->stash_cap : *ring->cq.kring_entries;
		struct giong__cqe_copy *v;

		while (cap < s->stash_n + ready)
			cap *= 2;
		if (!(v = realloc(s->stash, cap * sizeof(*v))))
			return -ENOMEM;
		s->stash = v;
		s->stash_cap = cap;
	}
	io_uring_for_each_cqe(ring, head, cqe) {
		s->stash[s->stash_n++] =
			(struct giong__cqe_copy){cqe->user_data, cqe->res, cqe->flags};
		if (++n == ready)
			break;
	}
	io_uring_cq_advance(ring, n);
	w->stats.cqes_reaped += n;
	return 0;
}

int giong__io_enter(struct giong__worker *w, unsigned wait_nr, uint64_t timeout_ms)
{
	if (w->ring.tier == GIONG_TIER_EPOLL)
		return giong__emu_enter(w, wait_nr, timeout_ms);
	return giong__ring_enter(w, wait_nr, timeout_ms);
}

struct io_uring_sqe *giong__sqe(struct giong__worker *w)
{
	struct io_uring_sqe *sqe = get_sqe(w);

	while (GIONG__UNLIKELY(!sqe)) {
		/* SQ full: hand the kernel what is queued, then take the slot.
		 * The enter cannot wait, so it is safe from inside a task. */
		int ret = giong__io_enter(w, 0, UINT64_MAX);

		if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY)
			return NULL;
		if ((ret == -EBUSY || ret == -EAGAIN) && stash_cqes(w)) {
			/* The kernel's CQ backlog is full: it will not take more
			 * until CQEs leave the ring. They are stashed, not
			 * dispatched: a callback run here could free what our
			 * caller is using (a stream it is closing), and inside
			 * a callback it would run before the rest of the outer
			 * batch. No memory for the stash: give up. */
			return NULL;
		}
		sqe = get_sqe(w);
	}
	/* liburing leaves the slot as its last user left it. Until the caller
	 * prepares and binds it, it is a no-op owned by nobody (user_data 0,
	 * ignored): should it enter the kernel early (the caller takes a second
	 * SQE and the SQ is full), it cannot complete someone else's operation. */
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, 0);
	return sqe;
}

int giong__op_start(struct giong__worker *w, struct io_uring_sqe *sqe, giong_op_fn fn, void *ctx,
		    uint64_t *id)
{
	struct giong__op_slab *s = &w->ops;
	struct giong__op *op;
	uint32_t slot;

	if (GIONG__UNLIKELY(w->draining)) {
		/* The worker is leaving: nothing new may enter the kernel. */
		giong_sqe_discard(sqe);
		return GIONG_ESHUTDOWN;
	}
	if (GIONG__UNLIKELY(!s->free_head) && slab_grow(s)) {
		giong_sqe_discard(sqe);
		return -ENOMEM;
	}
	slot = s->free_head;
	op = op_at(s, slot - 1);
	s->free_head = op->next_free;
	op->fn = fn;
	op->ctx = ctx;
	op->gen++;
	op->live = true;
	op->cancel_sent = false;
	op->cancel_wanted = false;
	s->live++;
	uint64_t ud = op_id(op, slot);
	io_uring_sqe_set_data64(sqe, ud);
	if (id)
		*id = ud;
	return 0;
}

/* Dispatch one CQE to its operation. */
static void op_complete(struct giong__worker *w, uint64_t user_data, int res, unsigned flags)
{
	struct giong__op_slab *s = &w->ops;
	struct giong__op *op = op_find(s, user_data);
	giong_op_fn fn;
	void *ctx;

	if (!op)
		return; /* cancel requests and discarded SQEs */
	fn = op->fn;
	ctx = op->ctx;
	if (!(flags & IORING_CQE_F_MORE)) {
		/* Final CQE: the kernel is done with the operation's memory. */
		if (op->cancel_wanted) {
			op->cancel_wanted = false;
			w->cancels_wanted--;
		}
		op->live = false;
		op->next_free = s->free_head;
		s->free_head = (uint32_t)user_data;
		s->live--;
	}
	fn(ctx, res, flags);
}

/* Consume every ready CQE. Copy a batch, then release the slots before any
 * callback runs: a callback may submit and, with a full SQ, enter and reap. */
void giong__reap(struct giong__worker *w)
{
	struct io_uring *ring = &w->ring.ring;
	struct {
		uint64_t ud;
		int res;
		unsigned flags;
	} batch[64];

	if (w->reaping)
		return; /* from a callback of this very loop: it reaps on */
	w->reaping = true;
	for (;;) {
		struct giong__op_slab *s = &w->ops;
		struct io_uring_cqe *cqe;
		unsigned head, n = 0;

		/* What giong__sqe() stashed came off the ring before what is
		 * on it now: first. (A callback may stash more: at the end.) */
		while (s->stash_n && n < 64) {
			struct giong__cqe_copy *c = &s->stash[s->stash_head];

			batch[n].ud = c->ud;
			batch[n].res = c->res;
			batch[n++].flags = c->flags;
			s->stash_head++;
			if (!--s->stash_n)
				s->stash_head = 0;
		}
		if (!n && w->ring.tier == GIONG_TIER_EPOLL) {
			/* The emulator's completions (epoll.h), in order. */
			struct giong__emu_cqe c;

			while (n < 64 && giong__emu_cq_pop(&w->emu, &c)) {
				batch[n].ud = c.ud;
				batch[n].res = c.res;
				batch[n++].flags = c.flags;
			}
			if (!n)
				break;
			w->stats.cqes_reaped += n;
		} else if (!n) {
			io_uring_for_each_cqe(ring, head, cqe) {
				batch[n].ud = cqe->user_data;
				batch[n].res = cqe->res;
				batch[n].flags = cqe->flags;
				if (++n == 64)
					break;
			}
			if (!n)
				break;
			io_uring_cq_advance(ring, n);
			w->stats.cqes_reaped += n;
		}
		for (unsigned i = 0; i < n; i++) {
			if (batch[i].flags & IORING_CQE_F_BUFFER)
				giong__bufpool_consumed(w);
			op_complete(w, batch[i].ud, batch[i].res, batch[i].flags);
		}
	}
	w->reaping = false;
}

/* Queue an ASYNC_CANCEL of @user_data whose own CQE is ignored; false if no
 * SQE could be had (not sent). */
static bool submit_cancel(struct giong__worker *w, uint64_t user_data)
{
	struct io_uring_sqe *sqe = giong__sqe(w);

	if (!sqe)
		return false;
	io_uring_prep_cancel64(sqe, user_data, 0);
	io_uring_sqe_set_data64(sqe, 0);
	return true;
}

/* Cancel @op (user_data @ud) once. With no SQE to be had now, the cancel
 * is owed: giong__retry_cancels() sends it at the next tick. */
static void request_cancel(struct giong__worker *w, struct giong__op *op, uint64_t ud)
{
	if (op->cancel_sent || op->cancel_wanted)
		return;
	if (submit_cancel(w, ud)) {
		op->cancel_sent = true;
	} else {
		op->cancel_wanted = true;
		w->cancels_wanted++;
	}
}

void giong__cancel_op(struct giong__worker *w, uint64_t user_data)
{
	struct giong__op *op = op_find(&w->ops, user_data);

	if (op)
		request_cancel(w, op, user_data);
}

void giong__retry_cancels(struct giong__worker *w)
{
	struct giong__op_slab *s = &w->ops;

	/* Rare (the kernel refused a submission): a scan of the slab is fine. */
	for (uint32_t i = 0; w->cancels_wanted && i < s->nchunks * GIONG__OP_CHUNK; i++) {
		struct giong__op *op = op_at(s, i);

		if (op->live && op->cancel_wanted && submit_cancel(w, op_id(op, i + 1))) {
			op->cancel_wanted = false;
			op->cancel_sent = true;
			w->cancels_wanted--;
		}
	}
}

void giong__op_cancel_all(struct giong__worker *w)
{
	struct giong__op_slab *s = &w->ops;

	for (uint32_t i = 0; i < s->nchunks * GIONG__OP_CHUNK; i++) {
		struct giong__op *op = op_at(s, i);

		if (op->live)
			request_cancel(w, op, op_id(op, i + 1));
	}
}

/* ------------------------------------------------------------ public API */

struct io_uring_sqe *giong_sqe(void)
{
	struct giong__worker *w = giong__worker_current();

	return w ? giong__sqe(w) : NULL;
}

void giong_sqe_discard(struct io_uring_sqe *sqe)
{
	if (!sqe)
		return;
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, 0);
}

int giong_op_start(struct io_uring_sqe *sqe, giong_op_fn fn, void *ctx, uint64_t *id)
{
	struct giong__worker *w = giong__worker_current();

	if (!sqe || !fn) {
		giong_sqe_discard(sqe);
		return -EINVAL;
	}
	if (!w)
		return GIONG_ENOTWORKER;
	return giong__op_start(w, sqe, fn, ctx, id);
}

int giong_op_cancel(uint64_t id)
{
	struct giong__worker *w = giong__worker_current();
	struct giong__op *op;

	if (!w)
		return GIONG_ENOTWORKER;
	op = op_find(&w->ops, id);
	if (!op)
		return -ENOENT;
	request_cancel(w, op, id);
	return 0;
}

/* Completion of a close nobody waits for. The kernel answers -ECANCELED
 * only for a close it never ran (cancelled while the worker drained, before
 * a kernel worker picked it up), which leaves the descriptor open: close it
 * here. Any other result, -EBADF included, means the number is gone or was
 * never ours: closing it again could close a stranger's. Runs on the worker,
 * outside any task. */
static void close_nowait_done(void *ctx, int res, unsigned flags)
{
	(void)flags;
	if (res == -ECANCELED)
		close((int)(intptr_t)ctx);
}

int giong_close_nowait(int fd)
{
	struct giong__worker *w = giong__worker_current();
	struct io_uring_sqe *sqe;

	if (fd < 0)
		return -EBADF;
	sqe = w ? giong__sqe(w) : NULL;
	if (!sqe) {
		close(fd);
		return 0;
	}
	io_uring_prep_close(sqe, fd); /* no memory is lent; the fd rides in ctx */
	/* On failure giong__op_start() has made the SQE a no-op. */
	if (giong__op_start(w, sqe, close_nowait_done, (void *)(intptr_t)fd, NULL))
		close(fd);
	return 0;
}
