/* SPDX-License-Identifier: MIT */
/*
 * mailbox.c - how other threads, and signal handlers, reach a worker: a
 * queue of messages under a mutex (held for a few instructions) and an
 * eventfd the worker keeps a read armed on, written only when the worker
 * is, or is about to be, asleep in the kernel.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"
#include "mailbox.h"

static void mailbox_read_done(void *ctx, int res, unsigned flags)
{
	struct giong__worker *w = ctx;

	(void)res;
	(void)flags;
	w->mbox.efd_armed = false;
	/* The messages themselves are taken at the top of the next tick. */
	if (!w->draining)
		giong__mailbox_arm(w);
}

void giong__mailbox_arm(struct giong__worker *w)
{
	struct io_uring_sqe *sqe = giong__sqe(w);

	if (!sqe)
		return;
	/* w->mbox.efd_buf belongs to the worker, which outlives the read: the
	 * worker is freed only after its operations have all completed. */
	io_uring_prep_read(sqe, w->mbox.efd, &w->mbox.efd_buf, sizeof(w->mbox.efd_buf), 0);
	if (giong__op_start(w, sqe, mailbox_read_done, w, &w->mbox.efd_op) == 0)
		w->mbox.efd_armed = true;
}

bool giong__mailbox_post(struct giong__worker *target, struct giong__msg *m)
{
	struct giong__mailbox *mb = &target->mbox;

	m->next = NULL;
	pthread_mutex_lock(&mb->lock);
	if (mb->closed) {
		pthread_mutex_unlock(&mb->lock);
		return false;
	}
	if (mb->tail)
		mb->tail->next = m;
	else
		mb->head = m;
	mb->tail = m;
	atomic_store(&mb->pending, true);
	pthread_mutex_unlock(&mb->lock);
	/* Pairs with the worker's store to sleeping and load of pending (both
	 * seq_cst): either it sees pending, or we see it sleeping and kick. */
	if (atomic_load(&mb->sleeping) && target != giong__worker_current()) {
		uint64_t one = 1;
		ssize_t r = write(mb->efd, &one, sizeof(one));
		(void)r; /* EAGAIN: the counter is already non-zero, a wake is due */
	}
	return true;
}

struct giong__msg *giong__mailbox_take(struct giong__worker *w, bool close)
{
	struct giong__mailbox *mb = &w->mbox;
	struct giong__msg *m;

	pthread_mutex_lock(&mb->lock);
	if (close)
		mb->closed = true;
	m = mb->head;
	mb->head = mb->tail = NULL;
	atomic_store(&mb->pending, false);
	pthread_mutex_unlock(&mb->lock);
	return m;
}

/* Close the mailbox if nothing is queued: from then on posts fail, so no
 * task can be sent to a worker whose loop is over (its share of "active"
 * would never be given back, and the run would never end). False if
 * something arrived since the loop's last look: go round again. */
bool giong__mailbox_close_if_empty(struct giong__worker *w)
{
	struct giong__mailbox *mb = &w->mbox;
	bool empty;

	pthread_mutex_lock(&mb->lock);
	empty = mb->head == NULL;
	if (empty)
		mb->closed = true;
	pthread_mutex_unlock(&mb->lock);
	return empty;
}

void giong__wake_all_workers(struct giong_runtime *rt)
{
	/* Async-signal-safe: write(2) only. */
	for (unsigned i = 0; i < rt->nworkers; i++) {
		uint64_t one = 1;
		ssize_t r = write(rt->workers[i]->mbox.efd, &one, sizeof(one));
		(void)r; /* EAGAIN: the counter is already non-zero, a wake is due */
	}
}

bool giong__shutdown_begin(struct giong_runtime *rt)
{
	/* Async-signal-safe: an atomic exchange and write(2) only. */
	if (atomic_exchange(&rt->shutdown, true))
		return false;
	giong__wake_all_workers(rt);
	return true;
}
