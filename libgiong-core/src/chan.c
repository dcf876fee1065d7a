/* SPDX-License-Identifier: MIT */
/*
 * chan.c - a bounded multi-producer channel between workers.
 *
 * The queue is a ring of pointers under a mutex (held for a few
 * instructions). Parked senders and receivers are listed in the channel
 * with a record on their own stack. Waking one from another thread posts a
 * message to its worker's mailbox; the message is part of the record, so
 * the parked fiber must not return (and free its stack frame) while a wake
 * is in flight: a "claimed" record waits for its message to be delivered
 * before leaving, even when it was cancelled or timed out meanwhile.
 * A wake only means "look again": the woken fiber retries under the lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fiber.h"

struct chan_wait {
	struct giong__list_node link; /* in senders or receivers, until claimed */
	struct giong__worker *w;
	struct giong_waitq q; /* the one parked fiber */
	struct giong__msg msg;
	bool claimed;   /* a waker took us off the list (under the lock) */
	bool delivered; /* the wake reached our worker (our thread only) */
};

struct giong_chan {
	pthread_mutex_t lock;
	void **slots;
	unsigned cap, head, count;
	bool closed;
	struct giong__worker *owner;
	struct giong__list senders, receivers; /* struct chan_wait, oldest first */
};

/* Runs on the waiter's own worker. */
static void deliver(struct giong__msg *m)
{
	struct chan_wait *cw = giong__container_of(m, struct chan_wait, msg);

	cw->delivered = true;
	giong_waitq_wake_one(&cw->q, 0);
}

/* Wake the oldest waiter of @l. Called with the lock held. */
static void wake_one(struct giong__list *l)
{
	struct chan_wait *cw = giong__list_entry(giong__list_pop_front(l), struct chan_wait, link);

	if (!cw)
		return;
	cw->claimed = true;
	if (cw->w == giong__worker_current()) {
		deliver(&cw->msg);
		return;
	}
	memset(&cw->msg, 0, sizeof(cw->msg));
	cw->msg.kind = GIONG__MSG_CALL;
	cw->msg.call = deliver;
	/* Cannot fail: cw's task is parked on that worker, whose loop runs
	 * while it has a task. */
	(void)giong__mailbox_post(cw->w, &cw->msg);
}

static void wake_all(struct giong__list *l)
{
	while (!giong__list_empty(l))
		wake_one(l);
}

/* Park on @l (lock held on entry, released here). Returns the wait's result;
 * on return nothing refers to the record any more. */
static int park(struct giong_chan *ch, struct giong__list *l, unsigned flags)
{
	struct giong__worker *w = giong__worker_current();
	struct chan_wait cw;
	int ret;

	memset(&cw, 0, sizeof(cw));
	cw.w = w;
	giong_waitq_init(&cw.q);
	giong__list_push_back(l, &cw.link);
	pthread_mutex_unlock(&ch->lock);
	ret = giong_waitq_wait(&cw.q, flags);
	pthread_mutex_lock(&ch->lock);
	if (!cw.claimed) {
		giong__list_remove(l, &cw.link);
	} else if (ret < 0) {
		/* We were handed a turn we will not use: pass it on. */
		wake_one(l);
	}
	pthread_mutex_unlock(&ch->lock);
	while (cw.claimed && !cw.delivered)
		giong__yield_raw(w); /* the wake message still points at cw */
	return ret;
}

int giong_chan_new(unsigned capacity, struct giong_chan **ret)
{
	struct giong__worker *w = giong__worker_current();
	struct giong_chan *ch;

	if (!capacity || !ret || capacity > (1u << 30))
		return -EINVAL;
	if (!w)
		return GIONG_ENOTWORKER;
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	ch->slots = calloc(capacity, sizeof(*ch->slots));
	if (!ch->slots) {
		free(ch);
		return -ENOMEM;
	}
	pthread_mutex_init(&ch->lock, NULL);
	ch->cap = capacity;
	ch->owner = w;
	*ret = ch;
	return 0;
}

/* Lock held. */
static int try_push(struct giong_chan *ch, void *msg)
{
	if (ch->closed)
		return -EPIPE;
	if (ch->count == ch->cap)
		return -EAGAIN;
	ch->slots[(ch->head + ch->count) % ch->cap] = msg;
	ch->count++;
	wake_one(&ch->receivers);
	return 0;
}

/* Lock held. */
static int try_pop(struct giong_chan *ch, void **msg)
{
	if (!ch->count)
		return ch->closed ? -EPIPE : -EAGAIN;
	*msg = ch->slots[ch->head];
	ch->head = (ch->head + 1) % ch->cap;
	ch->count--;
	wake_one(&ch->senders);
	return 0;
}

int giong_chan_try_send(struct giong_chan *ch, void *msg)
{
	int ret;

	if (!ch)
		return -EINVAL;
	pthread_mutex_lock(&ch->lock);
	ret = try_push(ch, msg);
	pthread_mutex_unlock(&ch->lock);
	return ret;
}

int giong_chan_send(struct giong_chan *ch, void *msg)
{
	struct giong__worker *w = giong__worker_current();
	int ret;

	if (!ch)
		return -EINVAL;
	if (!w || !w->current)
		return GIONG_ENOTWORKER;
	for (;;) {
		pthread_mutex_lock(&ch->lock);
		ret = try_push(ch, msg);
		if (ret != -EAGAIN) {
			pthread_mutex_unlock(&ch->lock);
			return ret;
		}
		ret = park(ch, &ch->senders, 0);
		if (ret < 0)
			return ret;
	}
}

int giong_chan_try_recv(struct giong_chan *ch, void **msg)
{
	int ret;

	if (!ch || !msg)
		return -EINVAL;
	if (ch->owner != giong__worker_current())
		return -EPERM;
	pthread_mutex_lock(&ch->lock);
	ret = try_pop(ch, msg);
	pthread_mutex_unlock(&ch->lock);
	return ret;
}

int giong_chan_recv(struct giong_chan *ch, void **msg)
{
	struct giong__worker *w = giong__worker_current();
	int ret;

	if (!ch || !msg)
		return -EINVAL;
	if (ch->owner != w)
		return -EPERM;
	if (!w->current)
		return GIONG_ENOTWORKER;
	for (;;) {
		pthread_mutex_lock(&ch->lock);
		ret = try_pop(ch, msg);
		if (ret != -EAGAIN) {
			pthread_mutex_unlock(&ch->lock);
			return ret;
		}
		ret = park(ch, &ch->receivers, GIONG_WAIT_SHUTDOWN);
		if (ret < 0)
			return ret;
	}
}

int giong_chan_close(struct giong_chan *ch)
{
	if (!ch)
		return -EINVAL;
	pthread_mutex_lock(&ch->lock);
	ch->closed = true;
	wake_all(&ch->senders);
	wake_all(&ch->receivers);
	pthread_mutex_unlock(&ch->lock);
	return 0;
}

void giong_chan_free(struct giong_chan *ch)
{
	if (!ch)
		return;
	pthread_mutex_destroy(&ch->lock);
	free(ch->slots);
	free(ch);
}
