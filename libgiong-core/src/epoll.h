/* SPDX-License-Identifier: MIT */
/*
 * epoll.h - the epoll tier: the io_uring SQE contract emulated inside core
 * for systems that refuse io_uring (docs/core.md, "The epoll tier").
 *
 * The libraries above core keep preparing struct io_uring_sqe with liburing's
 * helpers. On this tier giong__sqe() hands out a slot of a worker-local
 * array (the "SQ", no kernel ring); the enter of a tick runs every queued
 * SQE in order, as the kernel would at submission: an operation that can
 * finish at once (a non-blocking call that did not answer EAGAIN, a file
 * operation) posts its completion to a worker-local "CQ"; one that must wait
 * for readiness is copied into a struct giong__emu_op and parked on its
 * descriptor until epoll says it may make progress. giong__reap() takes the
 * completions off that CQ exactly as it takes CQEs off the ring, so the
 * callbacks, the slab and the cancel path are the same on every tier.
 *
 * Files (in core's call order): epoll.c the SQ, the CQ and the epoll set;
 * emu_fs.c runs the operations that may block (files, paths) and close;
 * emu_net.c the readiness-driven ones (sockets, pipes, eventfd, poll);
 * emu_submit.c runs the SQ, waits in epoll_wait, retries the waiters and
 * cancels. All of it is the worker's own: nothing is locked.
 */
#ifndef GIONG_SRC_EPOLL_H
#define GIONG_SRC_EPOLL_H

#include <liburing.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "blocking_pool.h"
#include "giong_private.h"

struct giong__worker;

/* IORING_OP_FTRUNCATE (Linux 6.9): liburing 2.3 does not name it. */
#define GIONG__EMU_OP_FTRUNCATE 55

/* One operation waiting for readiness. Owned by the emulator from its
 * submission to its final completion; the memory the SQE names (buffers,
 * msghdr, iovecs, addresses) stays the submitter's, lent until then, as on
 * io_uring. */
struct giong__emu_op {
	struct io_uring_sqe sqe;      /* a copy: the SQ slot is reused at once */
	struct giong__list_node link; /* in the waiter list of fd wait_fd */
	int wait_fd;                  /* the descriptor whose readiness it waits for */
	uint32_t want;      /* EPOLLIN and/or EPOLLOUT (POLL_ADD: its mask, RDHUP added) */
	uint64_t done;      /* SEND/SENDMSG with MSG_WAITALL: bytes sent so far */
	bool connecting;    /* CONNECT: connect(2) answered EINPROGRESS */
	bool restore_block; /* CONNECT: O_NONBLOCK was set by us, to clear */
	/* Inside a struct giong__emu_job (a call run by a helper thread):
	 * link is then on emu.pooled, not on a descriptor's list. */
	bool pooled;
};

/* A call that may block, run by the helper-thread pool (emu_fs.c). Found by
 * slot as its op; freed by done(), on the worker. */
struct giong__emu_job {
	struct giong__emu_op op;
	struct giong__blocking_job job; /* the pool's from submit until done() */
	struct giong__worker *w;        /* where done() posts the completion */
	bool kick;                      /* cancelled while running: signalled again at each wait */
};

/* What a descriptor's waiters are. fds[] is indexed by descriptor number. */
struct giong__emu_fd {
	struct giong__list waiters; /* struct giong__emu_op, in the order they parked */
	uint32_t armed; /* the events of the one-shot registration in the kernel, 0: none */
};

struct giong__emu_cqe {
	uint64_t ud;
	int res;
	unsigned flags;
};

struct giong__emu {
	int epfd;
	struct io_uring_sqe *sq; /* sq_entries slots, a power of two */
	unsigned sq_entries, sq_head, sq_tail;
	struct giong__emu_cqe *cq; /* completions not reaped yet: [cq_head, cq_head + cq_n) */
	unsigned cq_head, cq_n, cq_cap;
	struct giong__emu_fd *fds;
	unsigned nfds;
	/* The waiting operation of each op slab slot (user_data's low 32 bits,
	 * less one), for ASYNC_CANCEL by user_data: slots are dense. */
	struct giong__emu_op **by_slot;
	unsigned nslots;
	unsigned waiting;          /* operations parked on readiness */
	struct giong__list pooled; /* struct giong__emu_job in the helper-thread pool */
	unsigned kicks;            /* pooled ones with kick set */
	uint64_t kick_next;        /* giong__clock_ms() of the next signal to them */
	int wake_efd;              /* the pool's completions wake it (in the epoll set) */
	bool pool_bound;           /* this worker's port of the pool writes wake_efd */
	unsigned polls_skipped;    /* enters in a row that did not look at readiness */
};

/* What an executor did with an operation. */
enum giong__emu_state {
	GIONG__EMU_DONE, /* its final completion is posted: free it */
	GIONG__EMU_WAIT, /* it waits for op->want on op->wait_fd */
};

/* epoll.c */
int giong__emu_init(struct giong__worker *w, unsigned entries);
void giong__emu_fini(struct giong__worker *w);
/* A free SQ slot, or NULL when full (the caller enters and retries). */
struct io_uring_sqe *giong__emu_get_sqe(struct giong__worker *w);
/* Queue a completion for giong__reap(). */
void giong__emu_post(struct giong__worker *w, uint64_t ud, int res, unsigned flags);
/* @fd's record (grown on demand), or NULL (fd < 0, no memory). */
struct giong__emu_fd *giong__emu_fd(struct giong__worker *w, int fd);
/* Index waiting @op under @ud's slot (NULL: unindex). False: no memory. */
bool giong__emu_slot_set(struct giong__worker *w, uint64_t ud, struct giong__emu_op *op);
/* The waiting operation whose user_data is @ud, or NULL. */
struct giong__emu_op *giong__emu_slot_find(struct giong__worker *w, uint64_t ud);
/* Register @fd (one-shot) for what its waiters want, unless it already is.
 * 0 or -errno (EPERM: not pollable, a regular file). */
int giong__emu_arm(struct giong__worker *w, int fd);
/* @fd is being closed (CLOSE, or cancelled by descriptor). */
void giong__emu_fd_closing(struct giong__worker *w, int fd);

/* emu_fs.c: the operations that may block (and NOP, CLOSE): run now.
 * Returns true if @sqe's opcode is one of them (its completion posted). */
bool giong__emu_fs_run(struct giong__worker *w, const struct io_uring_sqe *sqe);
/* preadv2/pwritev2 (@write) as system calls, not through libc: see emu_fs.c. */
ssize_t giong__emu_rw(bool write, int fd, const struct iovec *iov, int n, uint64_t off, int flags);
/* @fd is a regular file or a block device: its reads may wait on a disk. */
bool giong__emu_is_file(int fd);
/* Run @sqe's call where it may block: on a helper thread (the completion is
 * posted when giong__blocking_reap() calls the job's done()), or inline if
 * the pool refuses it. */
void giong__emu_fs_blocking(struct giong__worker *w, const struct io_uring_sqe *sqe);
/* ASYNC_CANCEL of a pooled @op: 0 (queued: it completes with -ECANCELED),
 * -EALREADY (running: interrupted if it can be, completes with its own
 * result) or -ENOENT (finished, its completion not reaped yet). */
int giong__emu_fs_cancel(struct giong__worker *w, struct giong__emu_op *op);
/* Signal again every running job a cancel could not stop yet (the signal
 * may have come just before its call began). */
void giong__emu_fs_kick(struct giong__worker *w);

/* emu_net.c: start or retry a readiness-driven operation. */
enum giong__emu_state giong__emu_net_try(struct giong__worker *w, struct giong__emu_op *op);
/* The result of @op ending early with @err (cancelled, or it cannot wait):
 * a SEND or SENDMSG that sent part of its bytes (MSG_WAITALL) reports that
 * count, as io_uring does (io_sendrecv_fail()); any other, @err. */
int giong__emu_net_partial(const struct giong__emu_op *op, int err);
/* The operation ends without completing (cancelled): undo what it changed
 * on its descriptor (a connect's O_NONBLOCK). */
void giong__emu_net_abort(struct giong__emu_op *op);

/* emu_submit.c: run every queued SQE; then, if @wait_nr and no completion
 * is queued, one epoll_wait of at most @timeout_ms (UINT64_MAX: none), else
 * one that does not wait if operations wait for readiness. Returns the
 * number of SQEs run, or -errno (EINTR). */
int giong__emu_enter(struct giong__worker *w, unsigned wait_nr, uint64_t timeout_ms);

static inline bool giong__emu_cq_ready(const struct giong__emu *e)
{
	return e->cq_n != 0;
}

/* Take the oldest queued completion; false if none. */
static inline bool giong__emu_cq_pop(struct giong__emu *e, struct giong__emu_cqe *out)
{
	if (!e->cq_n)
		return false;
	*out = e->cq[e->cq_head];
	e->cq_head = (e->cq_head + 1) & (e->cq_cap - 1);
	e->cq_n--;
	return true;
}

#endif /* GIONG_SRC_EPOLL_H */
