/* SPDX-License-Identifier: MIT */
/*
 * mailbox.h - how other threads (and signals) reach a worker (mailbox.c):
 * a locked queue of messages and an eventfd the worker keeps a read armed
 * on. The only locked structure of a worker. Calls down into op only.
 */
#ifndef GIONG_SRC_MAILBOX_H
#define GIONG_SRC_MAILBOX_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <giong/core/task.h>

struct giong__worker;
struct giong_runtime;

enum giong__msg_kind {
	GIONG__MSG_SPAWN, /* spawn fn(arg) as a detached task */
	GIONG__MSG_CALL,  /* run call(msg) on the worker, outside any task */
};

struct giong__msg {
	struct giong__msg *next;
	enum giong__msg_kind kind;
	giong_task_fn fn; /* MSG_SPAWN */
	void *arg;
	void (*call)(struct giong__msg *m); /* MSG_CALL; may free the message */
	bool heap;                          /* MSG_SPAWN: free after handling */
};

struct giong__mailbox {
	pthread_mutex_t lock;
	struct giong__msg *head, *tail;
	atomic_bool sleeping; /* the worker is (about to be) blocked in the kernel */
	atomic_bool pending;  /* head != NULL, readable without the lock */
	int efd;              /* eventfd the worker keeps a read armed on */
	uint64_t efd_buf;     /* lent to the kernel while the read is armed */
	uint64_t efd_op;
	bool efd_armed;
	bool closed; /* under lock: the worker's loop is over, posts fail */
};

/* Queue @m for @target. False if @target's loop is over (or never began):
 * @m was not queued and stays the caller's. Any thread. */
bool giong__mailbox_post(struct giong__worker *target, struct giong__msg *m);
/* Take every queued message, in order; with @close, posts fail from now on. */
struct giong__msg *giong__mailbox_take(struct giong__worker *w, bool close);
/* Close the mailbox if nothing is queued (then true); false if something
 * arrived since the loop's last look. */
bool giong__mailbox_close_if_empty(struct giong__worker *w);
/* Keep a read of the eventfd in the kernel (the worker's own thread). */
void giong__mailbox_arm(struct giong__worker *w);
/* Kick every worker of @rt out of its wait (async-signal-safe). */
void giong__wake_all_workers(struct giong_runtime *rt);
/* Set @rt's shutdown flag and kick every worker, once (async-signal-safe).
 * Here rather than in runtime.c so that a worker's signal read starts a
 * shutdown without calling up. True for the call that set it. */
bool giong__shutdown_begin(struct giong_runtime *rt);

#endif /* GIONG_SRC_MAILBOX_H */
