/* SPDX-License-Identifier: MIT */
/*
 * runtime.c - settings, creating and running a runtime, shutdown, signals,
 * counters: the top of core's call order.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#define GIONG__DEFAULT_RING 1024u
#define GIONG__DEFAULT_BUFS 1024u
#define GIONG__DEFAULT_BUFSZ 4096u
#define GIONG__DEFAULT_STACK (128u * 1024)
#define GIONG__DEFAULT_STACK_POOL 256u
#define GIONG__DEFAULT_GRACE_MS 5000u

/*
 * The one call up into this file from below (fiber.c, task.c, worker.c): a
 * share of the runtime's work is given back - a worker's last live task
 * ended, a spawn_on message was delivered or refused, a worker started (or
 * could not start) its main task. The last share anywhere wakes every
 * worker, so each sees that no task is left and ends its loop.
 */
void giong__active_put(struct giong_runtime *rt)
{
	if (atomic_fetch_sub(&rt->active, 1) == 1)
		giong__wake_all_workers(rt);
}

static unsigned cpus_allowed(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

int giong_config_init(struct giong_config *cfg)
{
	if (!cfg)
		return -EINVAL;
	memset(cfg, 0, sizeof(*cfg));
	cfg->workers = cpus_allowed();
	cfg->ring_entries = GIONG__DEFAULT_RING;
	cfg->recv_buffers = GIONG__DEFAULT_BUFS;
	cfg->recv_buffer_size = GIONG__DEFAULT_BUFSZ;
	cfg->stack_size = GIONG__DEFAULT_STACK;
	cfg->stack_pool = GIONG__DEFAULT_STACK_POOL;
	cfg->shutdown_grace_ms = GIONG__DEFAULT_GRACE_MS;
	return 0;
}

static bool is_pow2(unsigned v)
{
	return v && !(v & (v - 1));
}

/* GIONG_DIRECT_FILES into *@out as giong_config.direct_files takes it: "off"
 * (or 0) 0, "auto" -1, or the count. Returns 1 if set, 0 if unset, -EINVAL
 * for anything else (a count above 2^20, the kernel's most, included). */
static int direct_files_from_env(int *out)
{
	const char *v = getenv("GIONG_DIRECT_FILES");
	char *end;
	long n;

	if (!v || !*v)
		return 0;
	if (!strcmp(v, "off") || !strcmp(v, "auto")) {
		*out = v[0] == 'a' ? -1 : 0;
		return 1;
	}
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || *end || n < 0 || n > (1L << 20))
		return -EINVAL;
	*out = (int)n;
	return 1;
}

/* Fill zeros with defaults and reject what cannot work. */
static int config_check(struct giong_config *c)
{
	struct giong_config d;
	int env;

	giong_config_init(&d);
	if (!c->workers)
		c->workers = d.workers;
	if (!c->ring_entries)
		c->ring_entries = d.ring_entries;
	if (!c->recv_buffers)
		c->recv_buffers = d.recv_buffers;
	if (!c->recv_buffer_size)
		c->recv_buffer_size = d.recv_buffer_size;
	if (!c->stack_size)
		c->stack_size = d.stack_size;
	if (!c->stack_pool)
		c->stack_pool = d.stack_pool;
	if (!c->shutdown_grace_ms)
		c->shutdown_grace_ms = d.shutdown_grace_ms;
	if (c->workers > 1024 || c->ring_entries > 32768 || !is_pow2(c->recv_buffers) ||
	    c->recv_buffers > 32768 || c->recv_buffer_size > (1u << 30) ||
	    c->stack_size < 16 * 1024 || c->stack_size > (1ul << 30))
		return -EINVAL;
	if (c->ring_tier && (c->ring_tier < GIONG_TIER_DEFER || c->ring_tier > GIONG_TIER_EPOLL))
		return -EINVAL;
	if (c->direct_files < -1 || c->direct_files > (1 << 20))
		return -EINVAL;
	if (direct_files_from_env(&c->direct_files) < 0)
		return -EINVAL;
	env = giong__ring_tier_from_env();
	if (env < 0)
		return -EINVAL;
	if (env == GIONG__TIER_URING_ONLY)
		c->uring_only = true;
	else if (!c->ring_tier)
		c->ring_tier = (enum giong_ring_tier)env;
	return 0;
}

/* Create and discard a ring and a buffer ring, and enter it once, so that a
 * system that blocks io_uring or lacks what we need fails at creation with a
 * clear code. A seccomp profile may refuse io_uring_register or
 * io_uring_enter alone: those count as refused too. *@raw gets the kernel's
 * own -errno of a failure (0 if none), which says whether to fall back. */
static int probe(const struct giong_config *c, int *raw)
{
	struct giong__ring r;
	struct io_uring_buf_ring *br;
	int ret;

	*raw = 0;
	if (c->ring_tier == GIONG_TIER_EPOLL)
		return 0; /* epoll_create1 is not refused where sockets work */
	ret = giong__ring_init(&r, 4, c->ring_tier);
	if (ret) {
		*raw = r.setup_err;
		return ret;
	}
	br = giong__buf_ring_setup(&r.ring, 1, 0, &ret);
	if (br)
		giong__buf_ring_free(&r.ring, br, 1, 0);
	else if (giong__ring_refused(ret))
		*raw = ret;
	else if (ret == -EINVAL || ret == -ENOTSUP)
		ret = GIONG_EURING_OLD;
	if (!ret && syscall(__NR_io_uring_enter, r.ring.ring_fd, 0, 0, IORING_ENTER_GETEVENTS, NULL,
			    0) < 0) {
		ret = -errno;
		*raw = giong__ring_refused(ret) ? ret : 0;
	}
	giong__ring_exit(&r);
	return *raw ? giong__ring_setup_error(*raw) : ret;
}

/* Why io_uring is refused, for the one line the fallback prints. EPERM
 * comes from kernel.io_uring_disabled (2: for everyone; 1: for processes
 * outside kernel.io_uring_group) or from a seccomp profile (Docker's,
 * containerd's); the sysctl tells which it can be. */
static const char *refusal_cause(int raw, char *buf, size_t len)
{
	char v = '0';
	int fd;

	switch (raw) {
	case -ENOSYS:
		return "ENOSYS: a kernel without io_uring, gVisor, or a seccomp profile";
	case -EOPNOTSUPP:
		return "EOPNOTSUPP: a seccomp profile";
	default:
		break;
	}
	fd = open("/proc/sys/kernel/io_uring_disabled", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (read(fd, &v, 1) != 1)
			v = '0';
		close(fd);
	}
	snprintf(buf, len, "%s: %s", raw == -EACCES ? "EACCES" : "EPERM",
		 v == '2'         ? "kernel.io_uring_disabled=2"
		 : v == '1'       ? "kernel.io_uring_disabled=1 and not in kernel.io_uring_group, "
				    "or a seccomp profile"
		 : raw == -EACCES ? "a security module or a seccomp profile"
				  : "a seccomp profile");
	return buf;
}

/* io_uring is refused here: run on the epoll tier, and say so once (one
 * write, so lines of runtimes made at once do not interleave). */
static void fall_back(struct giong_config *c, int raw)
{
	char cause[160], line[256];
	int n;

	c->ring_tier = GIONG_TIER_EPOLL;
	if (c->quiet_fallback)
		return;
	n = snprintf(line, sizeof(line), "giong: io_uring is %s (%s); running on the epoll tier\n",
		     raw == -ENOSYS ? "missing" : "refused",
		     refusal_cause(raw, cause, sizeof(cause)));
	if (n > 0 && write(STDERR_FILENO, line, (size_t)n) < 0)
		return; /* nowhere to say it: the tier is in giong_stats all the same */
}

int giong_runtime_new(const struct giong_config *cfg, struct giong_runtime **ret)
{
	struct giong_runtime *rt;
	int err;

	if (!ret)
		return -EINVAL;
	*ret = NULL;
	rt = calloc(1, sizeof(*rt));
	if (!rt)
		return -ENOMEM;
	if (cfg)
		rt->cfg = *cfg;
	else
		giong_config_init(&rt->cfg);
	rt->sigfd = -1;
	err = config_check(&rt->cfg);
	if (!err) {
		int raw;

		err = probe(&rt->cfg, &raw);
		/* A forced io_uring tier or uring_only: the clear error, no fallback. */
		if (err && raw && !rt->cfg.ring_tier && !rt->cfg.uring_only) {
			fall_back(&rt->cfg, raw);
			err = 0;
		}
	}
	if (!err)
		err = giong__stack_guard_install();
	if (err) {
		free(rt);
		return err;
	}
	rt->nworkers = rt->cfg.workers;
	rt->workers = calloc(rt->nworkers, sizeof(*rt->workers));
	if (!rt->workers) {
		free(rt);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < rt->nworkers; i++) {
		err = giong__worker_new(rt, i, &rt->workers[i]);
		if (err) {
			rt->nworkers = i;
			giong_runtime_free(rt);
			return err;
		}
	}
	*ret = rt;
	return 0;
}

static void pin(struct giong_runtime *rt, unsigned index)
{
	cpu_set_t allowed, one;
	unsigned seen = 0;

	if (!rt->cfg.pin_cores || sched_getaffinity(0, sizeof(allowed), &allowed))
		return;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &allowed))
			continue;
		if (seen++ == index % (unsigned)CPU_COUNT(&allowed)) {
			CPU_ZERO(&one);
			CPU_SET(cpu, &one);
			pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
			return;
		}
	}
}

static void *worker_thread(void *arg)
{
	struct giong__worker *w = arg;
	int err;

	pin(w->rt, w->index);
	err = giong__worker_run(w);
	if (err) {
		int expected = 0;
		/* Keep the first error; the others stop because of it. */
		__atomic_compare_exchange_n(&w->rt->start_error, &expected, err, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		giong_runtime_shutdown(w->rt);
	}
	return NULL;
}

int giong_runtime_run(struct giong_runtime *rt, giong_main_fn fn, void *arg)
{
	sigset_t sigs, old;
	int expected = 0, err = 0;
	unsigned started = 1;

	if (!rt || !fn)
		return -EINVAL;
	/* The calling thread becomes worker 0: it cannot already be one (a
	 * task would run a second loop on its own small stack, and leave its
	 * worker without its thread state when that loop ends). */
	if (giong__worker_current())
		return -EDEADLK;
	if (!atomic_compare_exchange_strong(&rt->state, &expected, 1))
		return -EBUSY;
	rt->main_fn = fn;
	rt->main_arg = arg;
	atomic_store(&rt->mains_left, (int)rt->nworkers);
	/* Until each worker has started its main task, count it as active, so
	 * that a fast worker does not see "no task anywhere" and leave. */
	atomic_store(&rt->active, (long)rt->nworkers);
	if (rt->cfg.shutdown_on_signals) {
		/* Block the signals in every worker (threads inherit the mask)
		 * and read them through worker 0's ring instead. */
		sigemptyset(&sigs);
		sigaddset(&sigs, SIGINT);
		sigaddset(&sigs, SIGTERM);
		pthread_sigmask(SIG_BLOCK, &sigs, &old);
		rt->sigfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
		if (rt->sigfd < 0) {
			err = -errno;
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			atomic_store(&rt->state, 2);
			return err;
		}
	}
	for (unsigned i = 1; i < rt->nworkers; i++) {
		err = -pthread_create(&rt->workers[i]->thread, NULL, worker_thread, rt->workers[i]);
		if (err) {
			/* Workers i.. never run: the ones already running must
			 * not send them tasks (spawn_on would wait for ever). */
			for (unsigned j = i; j < rt->nworkers; j++)
				giong__worker_refuse(rt->workers[j]);
			giong_runtime_shutdown(rt);
			break;
		}
		rt->workers[i]->thread_started = true;
		started++;
	}
	worker_thread(rt->workers[0]);
	for (unsigned i = 1; i < rt->nworkers; i++)
		if (rt->workers[i]->thread_started)
			pthread_join(rt->workers[i]->thread, NULL);
	(void)started;
	if (rt->sigfd >= 0) {
		struct signalfd_siginfo si;

		/* Consume what arrived during the run so that unblocking does
		 * not deliver it (and kill the process) after a clean stop. */
		while (read(rt->sigfd, &si, sizeof(si)) == sizeof(si))
			;
		close(rt->sigfd);
		rt->sigfd = -1;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	atomic_store(&rt->state, 2);
	if (!err)
		err = __atomic_load_n(&rt->start_error, __ATOMIC_SEQ_CST);
	return err;
}

int giong_runtime_free(struct giong_runtime *rt)
{
	if (!rt)
		return 0;
	if (atomic_load(&rt->state) == 1)
		return -EBUSY;
	/* Before the workers: its threads may still write their eventfds. */
	giong__blocking_pool_free(rt);
	for (unsigned i = 0; i < rt->nworkers; i++)
		giong__worker_free(rt->workers[i]);
	free(rt->workers);
	free(rt);
	return 0;
}

int giong_block_on(giong_main_fn fn, void *arg)
{
	struct giong_config cfg;
	struct giong_runtime *rt;
	int err;

	if (!fn)
		return -EINVAL;
	if (giong__worker_current())
		return -EDEADLK; /* see giong_runtime_run() */
	giong_config_init(&cfg);
	cfg.workers = 1;
	err = giong_runtime_new(&cfg, &rt);
	if (err)
		return err;
	err = giong_runtime_run(rt, fn, arg);
	giong_runtime_free(rt);
	return err;
}

int giong_runtime_shutdown(struct giong_runtime *rt)
{
	if (!rt)
		return -EINVAL;
	giong__shutdown_begin(rt); /* async-signal-safe */
	return 0;
}

int giong_shutdown(void)
{
	struct giong__worker *w = giong__worker_current();

	return w ? giong_runtime_shutdown(w->rt) : GIONG_ENOTWORKER;
}

bool giong_is_shutting_down(void)
{
	struct giong__worker *w = giong__worker_current();

	return w && atomic_load_explicit(&w->rt->shutdown, memory_order_relaxed);
}

int giong_shutdown_wait(void)
{
	struct giong__worker *w = giong__worker_current();
	struct giong_waitq q;
	int ret;

	if (!w || !w->current)
		return GIONG_ENOTWORKER;
	giong_waitq_init(&q);
	do
		ret = giong_waitq_wait(&q, GIONG_WAIT_SHUTDOWN);
	while (ret >= 0);
	return ret;
}

int giong_worker_index(void)
{
	struct giong__worker *w = giong__worker_current();

	return w ? (int)w->index : -1;
}

int giong_worker_count(void)
{
	struct giong__worker *w = giong__worker_current();

	return w ? (int)w->rt->nworkers : GIONG_ENOTWORKER;
}

int giong_ring_tier(void)
{
	struct giong__worker *w = giong__worker_current();

	return w ? (int)w->ring.tier : GIONG_ENOTWORKER;
}

int giong_stats(struct giong_stats *out)
{
	struct giong__worker *w = giong__worker_current();

	if (!out)
		return -EINVAL;
	if (!w)
		return GIONG_ENOTWORKER;
	giong__fill_stats(w, out);
	return 0;
}

int giong_runtime_stats(const struct giong_runtime *rt, unsigned worker, struct giong_stats *out)
{
	if (!rt || !out || worker >= rt->nworkers)
		return -EINVAL;
	if (atomic_load(&((struct giong_runtime *)rt)->state) != 2)
		return -EBUSY;
	*out = rt->workers[worker]->final_stats;
	return 0;
}

int giong_worker_atexit(void (*fn)(void *ctx), void *ctx)
{
	struct giong__worker *w = giong__worker_current();

	if (!fn)
		return -EINVAL;
	if (!w)
		return GIONG_ENOTWORKER;
	if (w->natexit == sizeof(w->atexit) / sizeof(w->atexit[0]))
		return -ENOSPC;
	w->atexit[w->natexit].fn = fn;
	w->atexit[w->natexit].ctx = ctx;
	w->natexit++;
	return 0;
}
