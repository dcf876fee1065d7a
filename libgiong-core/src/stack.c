// SPDX-License-Identifier: MIT
/*
 * Fiber stacks and the guard-page overflow report. See stack.h for the
 * layout of a mapping.
 */
#include "stack.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef GIONG_ASAN
#include <sanitizer/asan_interface.h>
#endif
#ifdef GIONG_COVERAGE
void __gcov_dump(void); /* libgcov's; coverage builds only */
#endif

/* The header takes the top 64 bytes of the mapping (one cache line). */
#define STACK_HDR 64
/* Stack tops are spread over this many bytes: the span of L1 set indices. */
#define STACK_SPREAD 4096

_Static_assert(sizeof(struct giong__stack) <= STACK_HDR, "stack header outgrew its slot");

/*
 * Stacks handed out on this thread, for the signal handler. initial-exec:
 * the handler must not reach __tls_get_addr, which may allocate.
 */
static __thread struct giong__stack *live_head __attribute__((tls_model("initial-exec")));

static size_t page_size(void)
{
	static size_t ps;
	size_t v = __atomic_load_n(&ps, __ATOMIC_RELAXED);

	if (!v) {
		long r = sysconf(_SC_PAGESIZE);

		v = r > 0 ? (size_t)r : 4096;
		__atomic_store_n(&ps, v, __ATOMIC_RELAXED);
	}
	return v;
}

/*
 * A fiber that ended through giong__ctx_switch_final() never returned from
 * its frames, so ASan's redzone poison for them stays in the shadow. Clear
 * it before a stack is reused, and before it is unmapped: the next mmap
 * there (a malloc arena, anyone) would inherit it as false positives.
 */
static void stack_unpoison(struct giong__stack *s)
{
#ifdef GIONG_ASAN
	__asan_unpoison_memory_region(s->lo, s->size);
#else
	(void)s;
#endif
}

static size_t round_up(size_t n, size_t align)
{
	return (n + align - 1) & ~(align - 1);
}

/* Cheap stateless spread: consecutive mmaps differ only in high bits. */
static size_t stack_slack(const void *map, size_t page)
{
	size_t span = page < STACK_SPREAD ? page : STACK_SPREAD;
	size_t slots = (span - STACK_HDR) / 64;
	uint64_t h = ((uint64_t)(uintptr_t)map >> 12) * 0x9e3779b97f4a7c15ull;

	return (size_t)((h >> 32) % slots) * 64;
}

void giong__stack_pool_init(struct giong__stack_pool *p, size_t stack_size, unsigned max_pooled)
{
	memset(p, 0, sizeof(*p));
	p->size = round_up(stack_size ? stack_size : 1, page_size());
	p->max = max_pooled;
}

/*
 * One mapping: guard page + the requested size + one page for the header
 * and the slack. MAP_NORESERVE: untouched stack pages cost neither memory
 * nor commit charge, so generous stack sizes are cheap. Each stack is two
 * VMAs (guard, rw), which counts against vm.max_map_count (65530).
 */
static int stack_map(size_t size, struct giong__stack **ret)
{
	size_t page = page_size();
	size_t map_size = page + size + page;
	struct giong__stack *s;
	char *map, *top;

	map = mmap(NULL, map_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (map == MAP_FAILED)
		return -ENOMEM;
	if (mprotect(map, page, PROT_NONE) != 0) {
		munmap(map, map_size);
		return -ENOMEM;
	}
	s = (struct giong__stack *)(map + map_size - STACK_HDR);
	top = (char *)s - stack_slack(map, page);
	s->map = map;
	s->map_size = map_size;
	s->lo = map + page;
	s->size = (size_t)(top - (char *)s->lo);
	s->next = NULL;
	s->pprev = NULL;
	s->owner_name = NULL;
	*ret = s;
	return 0;
}

/*
 * The live list is only read by the SIGSEGV handler on this same thread,
 * so compiler ordering is all it needs: a node is complete before it is
 * reachable from live_head.
 */
static void live_link(struct giong__stack *s)
{
	s->next = live_head;
	s->pprev = &live_head;
	if (live_head)
		live_head->pprev = &s->next;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	live_head = s;
}

static void live_unlink(struct giong__stack *s)
{
	*s->pprev = s->next;
	if (s->next)
		s->next->pprev = s->pprev;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->next = NULL;
	s->pprev = NULL;
}

int giong__stack_get(struct giong__stack_pool *p, struct giong__stack **ret)
{
	struct giong__stack *s = p->free;
	int err;

	if (s) {
		p->free = s->next;
		p->count--;
	} else {
		err = stack_map(p->size, &s);
		if (err)
			return err;
		p->mapped++;
	}
	s->owner_name = NULL;
	stack_unpoison(s);
	live_link(s);
	p->live++;
	*ret = s;
	return 0;
}

void giong__stack_put(struct giong__stack_pool *p, struct giong__stack *s)
{
	assert(p->live > 0);
	live_unlink(s);
	p->live--;
	s->owner_name = NULL;
	if (p->count < p->max) {
		s->next = p->free;
		p->free = s;
		p->count++;
		return;
	}
	stack_unpoison(s);
	munmap(s->map, s->map_size);
	p->mapped--;
}

void giong__stack_pool_fini(struct giong__stack_pool *p)
{
	struct giong__stack *s, *next;

	assert(p->live == 0);
	for (s = p->free; s; s = next) {
		next = s->next;
		stack_unpoison(s);
		munmap(s->map, s->map_size);
		p->mapped--;
	}
	p->free = NULL;
	p->count = 0;
}

/* ---- overflow report ---------------------------------------------------- */

#if defined(GIONG_ASAN) || defined(GIONG_TSAN)

int giong__stack_guard_install(void)
{
	return 0;
}

void giong__stack_guard_thread_init(void)
{
}

void giong__stack_guard_thread_fini(void)
{
}

#else

static pthread_once_t guard_once = PTHREAD_ONCE_INIT;
static int guard_err;
static struct sigaction old_segv, old_bus;

static __thread void *altstack_map __attribute__((tls_model("initial-exec")));
static __thread size_t altstack_size __attribute__((tls_model("initial-exec")));

/* Async-signal-safe formatting: no stdio in a signal handler. */
struct msg {
	char buf[512];
	size_t len;
};

static void msg_str(struct msg *m, const char *s)
{
	while (*s && m->len < sizeof(m->buf))
		m->buf[m->len++] = *s++;
}

static void msg_uint(struct msg *m, uintptr_t v, unsigned base)
{
	char tmp[24];
	int n = 0;

	if (base == 16)
		msg_str(m, "0x");
	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	while (n > 0 && m->len < sizeof(m->buf))
		m->buf[m->len++] = tmp[--n];
}

static void report_overflow(const struct giong__stack *s, const void *addr)
{
	struct msg m = {.len = 0};
	const char *name = s->owner_name ? s->owner_name : "(unnamed)";
	char shortname[128];
	size_t i;

	/* Bound the name so the sizes after it always fit. */
	for (i = 0; i + 1 < sizeof(shortname) && name[i]; i++)
		shortname[i] = name[i];
	shortname[i] = '\0';

	msg_str(&m, "giong: fiber stack overflow: fault at ");
	msg_uint(&m, (uintptr_t)addr, 16);
	msg_str(&m, " in the guard page [");
	msg_uint(&m, (uintptr_t)s->map, 16);
	msg_str(&m, ",");
	msg_uint(&m, (uintptr_t)s->lo, 16);
	msg_str(&m, ") of fiber '");
	msg_str(&m, shortname);
	msg_str(&m, "' (stack size ");
	msg_uint(&m, s->size, 10);
	msg_str(&m, " bytes); raise giong_config.stack_size\n");
	if (write(STDERR_FILENO, m.buf, m.len) < 0) {
		/* Nothing left to tell anyone. */
	}
}

static const struct giong__stack *guard_lookup(const void *addr)
{
	const struct giong__stack *s;

	for (s = live_head; s; s = s->next)
		if ((const char *)addr >= (const char *)s->map &&
		    (const char *)addr < (char *)s->lo)
			return s;
	return NULL;
}

static void set_default(int sig)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

/*
 * Die of @sig with the default action. The signal is blocked while we run,
 * so raise() leaves it pending until the handler returns; a fault from the
 * kernel would also simply recur on return, now without a handler.
 */
static void die_default(int sig)
{
#ifdef GIONG_COVERAGE
	/* gcov writes its counters at exit, which a death by signal never
	 * reaches: this run's would be lost (the overflow tests die here). */
	__gcov_dump();
#endif
	set_default(sig);
	raise(sig);
}

static void guard_chain(int sig, siginfo_t *si, void *uctx)
{
	const struct sigaction *old = sig == SIGSEGV ? &old_segv : &old_bus;

	if (old->sa_flags & SA_SIGINFO) {
		old->sa_sigaction(sig, si, uctx);
	} else if (old->sa_handler == SIG_IGN) {
		/* Ignoring a real fault would spin on the faulting instruction. */
		if (si->si_code > 0)
			die_default(sig);
	} else if (old->sa_handler == SIG_DFL) {
		die_default(sig);
	} else {
		old->sa_handler(sig);
	}
}

static void guard_handler(int sig, siginfo_t *si, void *uctx)
{
	int saved_errno = errno;
	const struct giong__stack *s = NULL;

	/* Only a fault raised by the kernel has a meaningful si_addr. */
	if (si->si_code > 0)
		s = guard_lookup(si->si_addr);
	if (s) {
		report_overflow(s, si->si_addr);
		die_default(sig);
	} else {
		guard_chain(sig, si, uctx);
	}
	errno = saved_errno;
}

static void guard_install_once(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = guard_handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, &old_segv) != 0 || sigaction(SIGBUS, &sa, &old_bus) != 0)
		guard_err = -errno;
}

int giong__stack_guard_install(void)
{
	int err = pthread_once(&guard_once, guard_install_once);

	return err ? -err : guard_err;
}

void giong__stack_guard_thread_init(void)
{
	size_t page = page_size();
	long min = sysconf(_SC_SIGSTKSZ);
	stack_t ss, old;
	size_t size;
	char *map;

	if (altstack_map)
		return;
	/* Someone (the application, another library) already provided one. */
	if (sigaltstack(NULL, &old) == 0 && !(old.ss_flags & SS_DISABLE))
		return;

	/* Room for our handler and whatever handler we chain to. */
	size = round_up(min > 65536 ? (size_t)min : 65536, page);
	map = mmap(NULL, page + size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (map == MAP_FAILED)
		return;
	/* A guard here too: a handler overflowing the alt stack must not scribble. */
	mprotect(map, page, PROT_NONE);
	ss.ss_sp = map + page;
	ss.ss_size = size;
	ss.ss_flags = 0;
	if (sigaltstack(&ss, NULL) != 0) {
		munmap(map, page + size);
		return;
	}
	altstack_map = map;
	altstack_size = page + size;
}

void giong__stack_guard_thread_fini(void)
{
	stack_t ss;

	if (!altstack_map)
		return;
	memset(&ss, 0, sizeof(ss));
	ss.ss_flags = SS_DISABLE;
	if (sigaltstack(&ss, NULL) != 0)
		return; /* still on it (inside a handler): leave it be */
	munmap(altstack_map, altstack_size);
	altstack_map = NULL;
	altstack_size = 0;
}

#endif /* !GIONG_ASAN && !GIONG_TSAN */
