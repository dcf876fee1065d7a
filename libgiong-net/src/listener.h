/* SPDX-License-Identifier: MIT */
/* listener.h - listeners shared by TCP and Unix (net internal). */
#ifndef GIONG_NET_LISTENER_H
#define GIONG_NET_LISTENER_H

#include <giong/net.h>

#include "owner.h"

struct giong_listener {
	int fd;
	pthread_t owner; /* the worker's thread (owner.h) */
	int busy;        /* tasks inside accept: freed only once none is */
	bool is_unix;
	char *unlink_path; /* a Unix socket file this listener made */
	struct giong_addr addr;
	/* Accepted, not yet taken: a descriptor (>= 0), or a slot of the
	 * worker's direct table stored as -2 - slot (listener.c). */
	int *fds;
	unsigned head, count, cap, max_pending;
	bool armed, cancel_sent, paused, closing;
	bool stopped;       /* giong_listener_stop(): never armed again */
	bool inherited;     /* giong_listener_from_fd(): the socket is shared, never shut down */
	bool direct;        /* accept into the worker's direct table while it has room */
	bool armed_direct;  /* the multishot accept armed (or last armed) is a direct one */
	bool armed_regular; /* ...is a regular one standing in for direct: each accept counted */
	bool direct_broken; /* the kernel refused a slot (-ENFILE): regular from now on */
	int err;
	uint64_t op_id;
	struct giong_waitq waiters;
};

int giong__net_listen_socket(const struct giong_addr *a, const struct giong_listen_options *opts);
int giong__net_listener_new(int fd, bool is_unix, const char *unlink_path,
			    const struct giong_listen_options *opts, struct giong_listener **ret);

#endif /* GIONG_NET_LISTENER_H */
