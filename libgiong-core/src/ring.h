/* SPDX-License-Identifier: MIT */
/*
 * ring.h - a worker's io_uring: set-up by tier, and the one io_uring_enter
 * of a tick (ring.c). The bottom of core's call order: ring.c calls nothing
 * else of core's.
 */
#ifndef GIONG_SRC_RING_H
#define GIONG_SRC_RING_H

#include <liburing.h>
#include <stdbool.h>
#include <stdint.h>

#include <giong/core/runtime.h>

struct giong__worker;

struct giong__ring {
	struct io_uring ring;
	enum giong_ring_tier tier;
	bool registered_fd; /* the ring fd is registered: enter with REGISTERED_RING */
	bool ext_arg;       /* FEAT_EXT_ARG: one enter can carry a timeout */
	bool taskrun_flag;  /* the kernel flags pending task work in sq.kflags */
	int setup_err;      /* io_uring_setup's own -errno when giong__ring_init failed */
};

/* Set up @r with the best tier (or the forced one). GIONG_TIER_EPOLL sets up
 * no ring (the worker's emulator stands in: epoll.h). Returns 0 or -errno
 * translated into GIONG_EURING_* codes. */
int giong__ring_init(struct giong__ring *r, unsigned entries, enum giong_ring_tier tier);
void giong__ring_exit(struct giong__ring *r);
/* Submit everything queued and wait for @wait_nr completions or @timeout_ms
 * (UINT64_MAX: none; only with wait_nr > 0). One io_uring_enter at most;
 * none when there is nothing to submit and nothing to wait for. Returns the
 * number submitted or -errno (EINTR/ETIME/EAGAIN/EBUSY are handled by the
 * caller as "reap and retry"). Counts into @w's stats. */
int giong__ring_enter(struct giong__worker *w, unsigned wait_nr, uint64_t timeout_ms);
/* Completions are ready, or waiting for an enter to post them. No syscall. */
bool giong__ring_has_work(const struct giong__ring *r);
/* GIONG_RING_TIER=uring: the best io_uring tier, never the epoll fallback. */
#define GIONG__TIER_URING_ONLY 100
/* Parse GIONG_RING_TIER. 0 if unset, a tier, GIONG__TIER_URING_ONLY, or
 * -EINVAL if unknown. */
int giong__ring_tier_from_env(void);
/* Map io_uring's -errno from set-up or registration to the code users see
 * (GIONG_EURING_DISABLED, GIONG_ENOURING; others unchanged). */
int giong__ring_setup_error(int err);
/* True for a -errno that says io_uring is refused or missing here (EPERM,
 * EACCES, EOPNOTSUPP, ENOSYS): what the epoll tier is chosen for. */
bool giong__ring_refused(int err);

#endif /* GIONG_SRC_RING_H */
