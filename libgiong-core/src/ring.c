/* SPDX-License-Identifier: MIT */
/*
 * ring.c - setting up a worker's io_uring and entering it.
 *
 * Set-up tries the tiers in order: SINGLE_ISSUER|DEFER_TASKRUN (completions
 * are produced only when this thread enters, so they arrive in batches and
 * never interrupt the worker), then COOP_TASKRUN|TASKRUN_FLAG, then no flags.
 * GIONG_RING_TIER=defer|coop|basic forces one so the fallbacks are tested
 * (=uring: the best of them, and never the epoll tier runtime.c otherwise
 * falls back to where io_uring is refused).
 *
 * Entering is done here rather than through io_uring_submit_and_wait_timeout()
 * so that one tick costs exactly one io_uring_enter (liburing's helper may
 * loop and enter again), and so that the counters are exact.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "giong_faults.h"
#include "internal.h"
#include "ring.h"

#ifdef GIONG_TSAN
#include <sanitizer/tsan_interface.h>
/*
 * ThreadSanitizer does not see a ring's memory come and go: liburing maps
 * and unmaps it with its own system calls, not through libc. When one
 * worker's ring is unmapped and another worker's is mapped at the same
 * address, TSan takes the two threads' accesses for a race. A release
 * before unmapping, paired with an acquire after mapping, tells it what the
 * kernel guarantees. Only in TSan builds.
 */
static char ring_map_token;
#define RING_MAPPED() __tsan_acquire(&ring_map_token)
#define RING_UNMAPPING() __tsan_release(&ring_map_token)
#else
#define RING_MAPPED() ((void)0)
#define RING_UNMAPPING() ((void)0)
#endif

int giong__ring_tier_from_env(void)
{
	const char *s = getenv("GIONG_RING_TIER");

	if (!s || !*s)
		return 0;
	if (!strcmp(s, "defer"))
		return GIONG_TIER_DEFER;
	if (!strcmp(s, "coop"))
		return GIONG_TIER_COOP;
	if (!strcmp(s, "basic"))
		return GIONG_TIER_BASIC;
	if (!strcmp(s, "epoll"))
		return GIONG_TIER_EPOLL;
	if (!strcmp(s, "uring"))
		return GIONG__TIER_URING_ONLY;
	return -EINVAL;
}

/* Map a set-up error to the code users see. A seccomp filter chooses its
 * errno: Docker's default answers EPERM, other profiles EOPNOTSUPP (ENOTSUP,
 * the same number on Linux), and io_uring_setup itself never returns that. */
int giong__ring_setup_error(int err)
{
	switch (err) {
	case -EPERM:
	case -EACCES:
	case -EOPNOTSUPP:
		return GIONG_EURING_DISABLED;
	case -ENOSYS:
		return GIONG_ENOURING;
	default:
		return err;
	}
}

bool giong__ring_refused(int err)
{
	return err == -EPERM || err == -EACCES || err == -EOPNOTSUPP || err == -ENOSYS;
}

static unsigned tier_flags(enum giong_ring_tier t)
{
	switch (t) {
	case GIONG_TIER_DEFER:
		/* TASKRUN_FLAG too: the kernel then raises IORING_SQ_TASKRUN when
		 * completions wait, so spinning can watch memory, not enter. */
		return IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
		       IORING_SETUP_TASKRUN_FLAG;
	case GIONG_TIER_COOP:
		return IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
	default:
		return 0;
	}
}

static int ring_try(struct giong__ring *r, unsigned entries, unsigned flags)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	/* CQ twice the SQ: a tick may complete more than it submitted
	 * (multishot), and overflow is costly. SUBMIT_ALL: one bad SQE must not
	 * strand the rest of the batch. */
	p.flags = flags | IORING_SETUP_CQSIZE | IORING_SETUP_SUBMIT_ALL;
	p.cq_entries = entries * 2;
	int ret = io_uring_queue_init_params(entries, &r->ring, &p);
	if (ret == 0)
		RING_MAPPED();
	return ret;
}

int giong__ring_init(struct giong__ring *r, unsigned entries, enum giong_ring_tier tier)
{
	int ret = -EINVAL;

	memset(r, 0, sizeof(*r));
	if (tier == GIONG_TIER_EPOLL) {
		/* No ring at all: the worker sets up its emulator (epoll.c). */
		r->tier = tier;
		return 0;
	}
	for (int t = tier ? (int)tier : GIONG_TIER_DEFER; t <= GIONG_TIER_BASIC; t++) {
		unsigned flags = tier_flags((enum giong_ring_tier)t);

		ret = ring_try(r, entries, flags);
		if (ret == -EINVAL && (flags & IORING_SETUP_TASKRUN_FLAG) && t == GIONG_TIER_DEFER)
			ret = ring_try(r, entries, flags & ~IORING_SETUP_TASKRUN_FLAG);
		if (ret == 0) {
			r->tier = (enum giong_ring_tier)t;
			r->taskrun_flag = r->ring.flags & IORING_SETUP_TASKRUN_FLAG;
			break;
		}
		/* EPERM/EOPNOTSUPP/ENOSYS/ENOMEM will not change with other flags. */
		if (ret != -EINVAL || tier)
			break;
	}
	if (ret) {
		r->setup_err = ret;
		return giong__ring_setup_error(ret);
	}
	if (!(r->ring.features & IORING_FEAT_NODROP) || !(r->ring.features & IORING_FEAT_EXT_ARG)) {
		giong__ring_exit(r);
		return GIONG_EURING_OLD;
	}
	r->ext_arg = true;
	/* A child must not inherit the ring's memory (see io_uring-notes). */
	io_uring_ring_dontfork(&r->ring);
	/* Registered ring fd: saves an fget/fput per enter. Optional. */
	r->registered_fd = io_uring_register_ring_fd(&r->ring) == 1;
	return 0;
}

void giong__ring_exit(struct giong__ring *r)
{
	if (r->tier == GIONG_TIER_EPOLL)
		return;
	RING_UNMAPPING();
	io_uring_queue_exit(&r->ring);
}

/*
 * Publish the SQEs prepared since the last flush. The release store orders
 * the SQE contents before the tail the kernel reads. liburing 2.3 maps the SQ
 * array one-to-one at set-up, so only the tail moves.
 */
static unsigned flush_sq(struct io_uring *ring)
{
	struct io_uring_sq *sq = &ring->sq;
	unsigned tail = sq->sqe_tail;

	if (sq->sqe_head != tail) {
		sq->sqe_head = tail;
		io_uring_smp_store_release(sq->ktail, tail);
	}
	return tail - IO_URING_READ_ONCE(*sq->khead);
}

/* True when the kernel holds completions that only an enter with GETEVENTS
 * will post: deferred task work, or an overflow backlog. */
static bool needs_getevents(const struct giong__ring *r)
{
	unsigned f = IO_URING_READ_ONCE(*r->ring.sq.kflags);

	if (f & (IORING_SQ_TASKRUN | IORING_SQ_CQ_OVERFLOW))
		return true;
	/* A defer ring set up without TASKRUN_FLAG gives no hint: always ask. */
	return r->tier == GIONG_TIER_DEFER && !r->taskrun_flag;
}

int giong__ring_enter(struct giong__worker *w, unsigned wait_nr, uint64_t timeout_ms)
{
	struct giong__ring *r = &w->ring;
	struct io_uring *ring = &r->ring;
	unsigned submit = flush_sq(ring);
	unsigned flags = 0;
	struct io_uring_getevents_arg arg;
	struct __kernel_timespec ts;
	void *argp = NULL;
	size_t argsz = 0;
	int fd = ring->ring_fd;
	long ret;

	if (wait_nr || needs_getevents(r))
		flags |= IORING_ENTER_GETEVENTS;
	if (!submit && !flags)
		return 0;
	if (wait_nr && timeout_ms != UINT64_MAX) {
		/* ts and arg live on this stack frame for the duration of the
		 * system call only: the kernel copies them before returning. */
		ts.tv_sec = (long long)(timeout_ms / 1000);
		ts.tv_nsec = (long long)(timeout_ms % 1000) * 1000000;
		memset(&arg, 0, sizeof(arg));
		arg.ts = (uint64_t)(uintptr_t)&ts;
		argp = &arg;
		argsz = sizeof(arg);
		flags |= IORING_ENTER_EXT_ARG;
	}
	if (r->registered_fd) {
		fd = ring->enter_ring_fd;
		flags |= IORING_ENTER_REGISTERED_RING;
	}
	/* GIONG_FAULTS: the enter fails before it is made, as the kernel's can
	 * (a signal, a CQ backlog it cannot flush); the SQEs flushed above stay
	 * in the SQ for the next enter. The callers cope with each. */
	uint64_t fault = giong__fault(GIONG__FAULT_ENTER);
	if (GIONG__UNLIKELY(fault)) {
		static const int errs[] = {-EINTR, -EAGAIN, -EBUSY};

		return errs[fault % 3];
	}
	w->stats.enters++;
	if (wait_nr)
		w->stats.parks++;
	ret = syscall(__NR_io_uring_enter, fd, submit, wait_nr, flags, argp, argsz);
	if (ret < 0)
		return -errno;
	w->stats.sqes_submitted += (uint64_t)ret;
	return (int)ret;
}

bool giong__ring_has_work(const struct giong__ring *r)
{
	if (r->tier == GIONG_TIER_EPOLL)
		return false; /* the emulator's CQ is asked for (op.c) */
	return io_uring_cq_ready(&r->ring) || needs_getevents(r);
}
