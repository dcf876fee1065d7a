/* SPDX-License-Identifier: MIT */
/*
 * owner.h - the worker a socket belongs to (net internal).
 *
 * Streams, listeners and UDP sockets have no locks: only the worker that
 * made one may touch it. A worker never changes thread, so the thread that
 * made the object names its worker. Entry points check the caller first and
 * refuse, touching nothing, from any other thread: a close from a plain
 * thread would otherwise race the worker and cancel nothing (it has no
 * ring), and one from another worker would cancel on the wrong ring.
 */
#ifndef GIONG_NET_OWNER_H
#define GIONG_NET_OWNER_H

#include <errno.h>
#include <pthread.h>

#include <giong/core.h>

/* The owner tag of an object made now, on the calling worker. */
static inline pthread_t giong__owner_self(void)
{
	return pthread_self();
}

/* 0 if the caller may touch an object made on the thread @owner;
 * GIONG_ENOTWORKER off any worker, -EPERM on a worker other than the
 * owner. The tag is written once, before the object is handed out, so any
 * thread may read it; nothing else of the object is read. */
static inline int giong__owner_check(pthread_t owner)
{
	if (giong_worker_index() < 0)
		return GIONG_ENOTWORKER;
	return pthread_equal(owner, pthread_self()) ? 0 : -EPERM;
}

#endif /* GIONG_NET_OWNER_H */
