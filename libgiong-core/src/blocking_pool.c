/* SPDX-License-Identifier: MIT */
/*
 * blocking_pool.c - helper threads for calls that may block (the epoll
 * tier's files, splice from a file, getaddrinfo): a queue under one mutex,
 * threads started on demand up to a cap, completions handed back to the
 * submitting worker's port (blocking_pool.h says who owns what, when).
 *
 * One lock for the queue, the jobs' states and the ports' completed lists:
 * every transition of a job (queued, running, finished) happens under it,
 * which is what makes a cancel's answer exact. The lock is held for a few
 * list operations, never across fn(); a job costs a system call or more, so
 * the lock is not what bounds the pool.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "blocking_pool.h"

enum {
	JOB_IDLE, /* not in the pool: before submit, from done() on */
	JOB_QUEUED,
	JOB_RUNNING,
	JOB_FINISHED, /* on its port's list, done() owed */
};

/* A helper's stack: fn() is a system call or getaddrinfo (glibc's resolver
 * keeps its alloca()s under 64 KiB), not the 8 MiB a default thread maps.
 * The sanitizers' frames are several times larger. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BPOOL_STACK (1024 * 1024)
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define BPOOL_STACK (1024 * 1024)
#endif
#endif
#ifndef BPOOL_STACK
#define BPOOL_STACK (256 * 1024)
#endif

struct bpool_port {
	struct giong__list done; /* finished jobs, in completion order */
	atomic_bool pending;     /* done is not empty (set and cleared under the lock) */
	int efd;                 /* written when done goes from empty to not empty */
	unsigned outstanding;    /* submitted, done() not called: the owner's only */
};

struct giong__bpool {
	pthread_mutex_t lock;
	pthread_cond_t work; /* a job was queued, or the pool is stopping */
	struct giong__list queue;
	unsigned queued, idle, nthreads, max_threads;
	bool stopping;
	unsigned long ran, cancels;
	pthread_t threads[GIONG__BPOOL_THREADS_MAX]; /* nthreads started */
	unsigned nports;
	struct bpool_port ports[];
};

/* GIONG__BPOOL_SIGNAL's handler is ours (blocking_pool.h): cancels
 * interrupt running jobs. Set once per process. */
static bool interruptible;
static pthread_once_t interrupt_once = PTHREAD_ONCE_INIT;

static void on_interrupt(int sig)
{
	(void)sig; /* only to end the helper's system call with EINTR */
}

static void interrupt_install(void)
{
	struct sigaction old, sa;

	if (sigaction(GIONG__BPOOL_SIGNAL, NULL, &old) || (old.sa_flags & SA_SIGINFO) ||
	    old.sa_handler != SIG_DFL)
		return; /* the program's own: leave it */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_interrupt;
	sigfillset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: the call must end */
	interruptible = sigaction(GIONG__BPOOL_SIGNAL, &sa, NULL) == 0;
}

static struct giong__blocking_job *job_of(struct giong__list_node *n)
{
	return giong__list_entry(n, struct giong__blocking_job, link);
}

/* Under the lock: @job is finished; put it on its port's list and, if @wake
 * and the list was empty (else the owner has a wake coming and has not
 * reaped yet), write the port's eventfd.
 *
 * The write is made under the lock, not after it: a port is re-bound under
 * the lock (giong__emu_fini() hands its port to the mailbox's eventfd, then
 * closes its own), so a number read here and written after unlocking could
 * name a descriptor closed meanwhile and reused, and 8 bytes would land in
 * someone else's file. Every port's eventfd is EFD_NONBLOCK (the epoll
 * tier's and the mailbox's): the write never waits (EAGAIN only at a
 * counter near 2^64, when a wake is due anyway), so the lock is held for
 * one system call more, once per empty-to-not-empty transition. */
static void finish_locked(struct giong__bpool *p, struct giong__blocking_job *job, bool wake)
{
	struct bpool_port *pt = &p->ports[job->port];
	bool was_empty = giong__list_empty(&pt->done);
	uint64_t one = 1;

	job->state = JOB_FINISHED;
	giong__list_push_back(&pt->done, &job->link);
	atomic_store_explicit(&pt->pending, true, memory_order_release);
	if (wake && was_empty && pt->efd >= 0) {
		ssize_t r = write(pt->efd, &one, sizeof(one));
		(void)r; /* EAGAIN: the counter is already non-zero, a wake is due */
	}
}

static void *helper_main(void *arg)
{
	struct giong__bpool *p = arg;

	pthread_setname_np(pthread_self(), "giong-blk");
	if (interruptible) {
		sigset_t one;

		sigemptyset(&one);
		sigaddset(&one, GIONG__BPOOL_SIGNAL);
		pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	}
	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct giong__blocking_job *job;
		long res;

		while (giong__list_empty(&p->queue) && !p->stopping) {
			p->idle++;
			pthread_cond_wait(&p->work, &p->lock);
			p->idle--;
		}
		job = job_of(giong__list_pop_front(&p->queue));
		if (!job)
			break; /* stopping, and the queue is empty */
		p->queued--;
		job->state = JOB_RUNNING;
		job->thread = pthread_self();
		pthread_mutex_unlock(&p->lock);
		/* The job's memory is the pool's until done(): fn() may write
		 * into it even after a cancel (which answered -EALREADY). */
		res = job->fn(job);
		pthread_mutex_lock(&p->lock);
		job->res = res;
		p->ran++;
		finish_locked(p, job, true);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Under the lock. Every signal blocked in the creator for the call, so that
 * the thread starts with them blocked: no window in which a SIGINT meant for
 * worker 0's signalfd could land on it. */
static int start_thread_locked(struct giong__bpool *p)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int err;

	if (pthread_attr_init(&attr))
		return -ENOMEM;
	pthread_attr_setstacksize(&attr, BPOOL_STACK);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&p->threads[p->nthreads], &attr, helper_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err)
		return -err;
	p->nthreads++;
	return 0;
}

int giong__bpool_new(unsigned max_threads, unsigned nports, struct giong__bpool **ret)
{
	struct giong__bpool *p;

	if (!ret)
		return -EINVAL;
	*ret = NULL;
	if (max_threads < 1 || max_threads > GIONG__BPOOL_THREADS_MAX || nports < 1 ||
	    nports > 65536)
		return -EINVAL;
	pthread_once(&interrupt_once, interrupt_install);
	p = calloc(1, sizeof(*p) + nports * sizeof(p->ports[0]));
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	p->max_threads = max_threads;
	p->nports = nports;
	for (unsigned i = 0; i < nports; i++)
		p->ports[i].efd = -1;
	*ret = p;
	return 0;
}

void giong__bpool_bind(struct giong__bpool *p, unsigned port, int efd)
{
	if (!p || port >= p->nports)
		return;
	/* Under the lock: a port may be re-bound while helpers finish jobs. */
	pthread_mutex_lock(&p->lock);
	p->ports[port].efd = efd;
	pthread_mutex_unlock(&p->lock);
}

int giong__bpool_submit(struct giong__bpool *p, unsigned port, struct giong__blocking_job *job)
{
	if (!p || port >= p->nports || !job || !job->fn || !job->done)
		return -EINVAL;
	pthread_mutex_lock(&p->lock);
	if (p->stopping) {
		pthread_mutex_unlock(&p->lock);
		return -ESHUTDOWN;
	}
	/* One more thread when the idle ones are all spoken for. A failure
	 * matters only if no thread exists: the others will take the job. */
	if (p->queued >= p->idle && p->nthreads < p->max_threads) {
		int err = start_thread_locked(p);

		if (err && p->nthreads == 0) {
			pthread_mutex_unlock(&p->lock);
			return err;
		}
	}
	job->res = 0;
	job->port = port;
	job->state = JOB_QUEUED;
	atomic_store_explicit(&job->cancel, false, memory_order_relaxed);
	giong__list_push_back(&p->queue, &job->link);
	p->queued++;
	p->ports[port].outstanding++;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

int giong__bpool_cancel(struct giong__bpool *p, struct giong__blocking_job *job)
{
	int ret;

	if (!p || !job)
		return -EINVAL;
	pthread_mutex_lock(&p->lock);
	switch (job->state) {
	case JOB_QUEUED:
		giong__list_remove(&p->queue, &job->link);
		p->queued--;
		p->cancels++;
		job->res = -ECANCELED;
		/* The owner is the caller, awake; the wake keeps a loop that
		 * reaps only on its eventfd from missing the completion. */
		finish_locked(p, job, true);
		ret = 0;
		break;
	case JOB_RUNNING:
		atomic_store_explicit(&job->cancel, true, memory_order_relaxed);
		/* Under the lock: the thread is still inside this job's fn()
		 * (it takes the lock to finish it), so the signal cannot reach
		 * a later job's call; if it lands between two of fn()'s calls,
		 * fn() sees the flag. */
		if (interruptible)
			pthread_kill(job->thread, GIONG__BPOOL_SIGNAL);
		ret = -EALREADY;
		break;
	default:
		ret = -ENOENT;
		break;
	}
	pthread_mutex_unlock(&p->lock);
	return ret;
}

unsigned giong__bpool_reap(struct giong__bpool *p, unsigned port)
{
	struct bpool_port *pt;
	struct giong__list_node *n;
	unsigned count = 0;

	if (!p || port >= p->nports)
		return 0;
	pt = &p->ports[port];
	/* Without the lock: a completion this load misses has its eventfd
	 * write still to come (written after the store, see finish_locked()). */
	if (!atomic_load_explicit(&pt->pending, memory_order_acquire))
		return 0;
	pthread_mutex_lock(&p->lock);
	n = pt->done.first;
	pt->done.first = pt->done.last = NULL;
	atomic_store_explicit(&pt->pending, false, memory_order_relaxed);
	pthread_mutex_unlock(&p->lock);
	while (n) {
		struct giong__blocking_job *job = job_of(n);

		/* Read before done(), which may free the job. */
		n = n->next;
		job->link.next = job->link.prev = NULL;
		job->state = JOB_IDLE;
		pt->outstanding--;
		count++;
		job->done(job);
	}
	return count;
}

bool giong__bpool_pending(struct giong__bpool *p, unsigned port)
{
	return p && port < p->nports &&
	       atomic_load_explicit(&p->ports[port].pending, memory_order_acquire);
}

unsigned giong__bpool_outstanding(struct giong__bpool *p, unsigned port)
{
	return p && port < p->nports ? p->ports[port].outstanding : 0;
}

void giong__bpool_stats(struct giong__bpool *p, struct giong__bpool_stats *out)
{
	if (!out)
		return;
	*out = (struct giong__bpool_stats){0};
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	out->threads = p->nthreads;
	out->idle = p->idle;
	out->queued = p->queued;
	out->ran = p->ran;
	out->cancels = p->cancels;
	pthread_mutex_unlock(&p->lock);
}

void giong__bpool_free(struct giong__bpool *p)
{
	struct giong__list_node *n;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	/* Queued jobs never run; their completions wait below with the rest.
	 * No wake: the ports are reaped here, on this thread. */
	while ((n = giong__list_pop_front(&p->queue))) {
		struct giong__blocking_job *job = job_of(n);

		p->queued--;
		p->cancels++;
		job->res = -ECANCELED;
		finish_locked(p, job, false);
	}
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	/* The running jobs end first: no thread writes into a job after this. */
	for (unsigned i = 0; i < p->nthreads; i++)
		pthread_join(p->threads[i], NULL);
	for (unsigned i = 0; i < p->nports; i++)
		giong__bpool_reap(p, i);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* --- the runtime's pool ------------------------------------------------------------------- */

static unsigned threads_setting(void)
{
	const char *s = getenv("GIONG_BLOCKING_THREADS");
	char *end;
	unsigned long n;

	if (!s || !*s)
		return GIONG__BPOOL_THREADS;
	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || *end || n < 1 || n > GIONG__BPOOL_THREADS_MAX)
		return GIONG__BPOOL_THREADS;
	return (unsigned)n;
}

struct giong__bpool *giong__blocking_pool(struct giong__worker *w)
{
	struct giong_runtime *rt;
	struct giong__bpool *p, *expected = NULL;

	if (!w)
		return NULL;
	rt = w->rt;
	p = atomic_load_explicit(&rt->blocking, memory_order_acquire);
	if (GIONG__LIKELY(p != NULL))
		return p;
	if (giong__bpool_new(threads_setting(), rt->nworkers, &p))
		return NULL;
	/* The mailbox's eventfd: every tier's loop already wakes on it, and
	 * a spurious wake there costs a look at an empty queue. */
	for (unsigned i = 0; i < rt->nworkers; i++)
		giong__bpool_bind(p, i, rt->workers[i]->mbox.efd);
	/* Two workers' first jobs at once: one pool wins, the other goes. */
	if (!atomic_compare_exchange_strong(&rt->blocking, &expected, p)) {
		giong__bpool_free(p);
		p = expected;
	}
	return p;
}

int giong__blocking_submit(struct giong__worker *w, struct giong__blocking_job *job)
{
	struct giong__bpool *p;

	if (!w || !job)
		return -EINVAL;
	p = giong__blocking_pool(w);
	return p ? giong__bpool_submit(p, w->index, job) : -ENOMEM;
}

static struct giong__bpool *pool_if_made(struct giong__worker *w)
{
	return w ? atomic_load_explicit(&w->rt->blocking, memory_order_acquire) : NULL;
}

int giong__blocking_cancel(struct giong__worker *w, struct giong__blocking_job *job)
{
	struct giong__bpool *p = pool_if_made(w);

	if (!w || !job)
		return -EINVAL;
	return p ? giong__bpool_cancel(p, job) : -ENOENT;
}

unsigned giong__blocking_reap(struct giong__worker *w)
{
	struct giong__bpool *p = pool_if_made(w);

	return p ? giong__bpool_reap(p, w->index) : 0;
}

bool giong__blocking_pending(struct giong__worker *w)
{
	struct giong__bpool *p = pool_if_made(w);

	return p && giong__bpool_pending(p, w->index);
}

unsigned giong__blocking_outstanding(struct giong__worker *w)
{
	struct giong__bpool *p = pool_if_made(w);

	return p ? giong__bpool_outstanding(p, w->index) : 0;
}

void giong__blocking_pool_free(struct giong_runtime *rt)
{
	if (!rt)
		return;
	giong__bpool_free(atomic_exchange(&rt->blocking, NULL));
}
