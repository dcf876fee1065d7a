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
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#ifdef GIONG_VALGRIND
#include <sys/uio.h>
#include <valgrind/memcheck.h>

/*
 * valgrind cannot see the kernel write into a buffer through the ring, and
 * would call the bytes a read brought uninitialised. For the reads whose
 * buffer the SQE names (READ, RECV, READV), tell it what the kernel wrote.
 * Only in GIONG_VALGRIND builds.
 */
struct kernel_write {
	uint8_t opcode;
	uint64_t addr;
	uint32_t len;
};

static struct kernel_write kernel_write_of(const struct io_uring_sqe *sqe)
{
	struct kernel_write k = {sqe->opcode, sqe->addr, sqe->len};
	return k;
}

static void kernel_wrote(struct kernel_write k, int res)
{
	if (res <= 0)
		return;
	if (k.opcode == IORING_OP_READ || k.opcode == IORING_OP_RECV) {
		VALGRIND_MAKE_MEM_DEFINED((void *)(uintptr_t)k.addr, (size_t)res);
	} else if (k.opcode == IORING_OP_READV) {
		const struct iovec *iov = (const struct iovec *)(uintptr_t)k.addr;
		size_t left = (size_t)res;

		for (uint32_t i = 0; i < k.len && left; i++) {
			size_t n = iov[i].iov_len < left ? iov[i].iov_len : left;

			VALGRIND_MAKE_MEM_DEFINED(iov[i].iov_base, n);
			left -= n;
		}
	}
}
#endif

static struct giong__op *op_at(struct giong__op_slab *s, uint32_t idx)
{
	return &s->chunks[idx >> GIONG__OP_CHUNK_SHIFT][idx & (GIONG__OP_CHUNK - 1)];
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

struct io_uring_sqe *giong__sqe(struct giong__worker *w)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring.ring);

	while (GIONG__UNLIKELY(!sqe)) {
		/* SQ full: hand the kernel what is queued, then take the slot.
		 * The enter cannot wait, so it is safe from inside a task. */
		int ret = giong__ring_enter(w, 0, UINT64_MAX);

		if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY)
			return NULL;
		if (ret == -EBUSY || ret == -EAGAIN) {
			/* The kernel's CQ backlog is full: it will not take more
			 * until we reap. Completions only queue work (wake
			 * tasks), so reaping here is safe - but not from inside
			 * a completion callback: the CQEs reaped now would run
			 * before the rest of the outer batch, and a multishot
			 * operation's final CQE before its earlier ones. */
			if (w->reaping)
				return NULL;
			giong__reap(w);
		}
		sqe = io_uring_get_sqe(&w->ring.ring);
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
	uint64_t ud = ((uint64_t)op->gen << 32) | slot;
	io_uring_sqe_set_data64(sqe, ud);
	if (id)
		*id = ud;
	return 0;
}

void giong__op_complete(struct giong__worker *w, uint64_t user_data, int res, unsigned flags)
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

bool giong__submit_cancel(struct giong__worker *w, uint64_t user_data)
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
	if (giong__submit_cancel(w, ud)) {
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

		if (op->live && op->cancel_wanted &&
		    giong__submit_cancel(w, ((uint64_t)op->gen << 32) | (i + 1))) {
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
			request_cancel(w, op, ((uint64_t)op->gen << 32) | (i + 1));
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

/* The completion of a task's giong_io(): record it and resume the task. */
static void fiber_io_done(void *ctx, int res, unsigned flags)
{
	struct giong__wait *wt = ctx;

	if (flags & IORING_CQE_F_MORE)
		return; /* giong_io() is for one-shot operations */
	/* Cancelled on our request: report why we asked. The kernel's own
	 * "restart" codes (ERESTARTSYS and kin, 512-516 but 515) escape from a
	 * kernel worker thread that a cancel interrupted in a blocking call;
	 * they must never reach a user. For an open waiting for a FIFO's other
	 * end that means it did not happen: report the cancel. A close
	 * interrupted in ->flush has already released the descriptor: -EINTR,
	 * as close(2) says. Any other result, -EINTR included, means the
	 * operation ran; keep it (invariant 2). */
	if (res <= -512 && res >= -516 && res != -515)
		res = wt->interrupted && wt->opcode != IORING_OP_CLOSE ? wt->interrupt_code : -EINTR;
	else if (wt->interrupted && res == -ECANCELED)
		res = wt->interrupt_code;
	wt->result = res;
	wt->cqe_flags = flags;
	giong__make_ready(wt->f->w, wt->f);
}

int giong_io(struct io_uring_sqe *sqe)
{
	struct giong__worker *w = giong__worker_current();
	struct giong__fiber *f = w ? w->current : NULL;
	struct giong__wait wt;
	int ret;

	if (!sqe)
		return -EINVAL;
	if (!f) {
		/* On a worker but outside a task (a callback): the SQE must not
		 * go to the kernel half-owned. */
		if (w)
			giong_sqe_discard(sqe);
		return GIONG_ENOTWORKER;
	}
	ret = giong__check_wait(w, f);
	if (ret) {
		giong_sqe_discard(sqe);
		return ret;
	}
	memset(&wt, 0, sizeof(wt));
	wt.kind = GIONG__WAIT_IO;
	wt.f = f;
	wt.opcode = sqe->opcode;
#ifdef GIONG_VALGRIND
	struct kernel_write kw = kernel_write_of(sqe);
#endif
	/* &wt lives on this task's stack, which stays put while it is parked:
	 * it is the op's context until the final CQE resumes us. */
	ret = giong__op_start(w, sqe, fiber_io_done, &wt, &wt.op_id);
	if (ret)
		return ret;
	ret = giong__park(w, &wt);
	f->io_cqe_flags = wt.cqe_flags;
#ifdef GIONG_VALGRIND
	kernel_wrote(kw, ret);
#endif
	return ret;
}

unsigned giong_io_cqe_flags(void)
{
	struct giong__worker *w = giong__worker_current();

	return w && w->current ? w->current->io_cqe_flags : 0;
}

int giong_poll(int fd, short events, int timeout_ms)
{
	struct giong__worker *w = giong__worker_current();
	struct io_uring_sqe *sqe;
	uint64_t saved = GIONG_NO_DEADLINE, mine = GIONG_NO_DEADLINE;
	int ret;

	if (fd < 0)
		return -EINVAL;
	if (!w || !w->current)
		return GIONG_ENOTWORKER;
	if (timeout_ms >= 0) {
		mine = giong__clock_ms_ceil() + (uint64_t)timeout_ms;
		saved = giong_deadline_set(mine);
	}
	sqe = giong__sqe(w);
	if (!sqe) {
		ret = -EBUSY;
	} else {
		io_uring_prep_poll_add(sqe, fd, (unsigned)(unsigned short)events);
		ret = giong_io(sqe);
	}
	if (timeout_ms >= 0) {
		giong_deadline_restore(saved);
		/* Our own timeout, not the caller's deadline: poll(2) says 0. */
		if (ret == -ETIMEDOUT && mine < saved)
			ret = 0;
	}
	return ret;
}
