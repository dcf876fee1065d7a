// SPDX-License-Identifier: MIT
/*
 * Fiber contexts: building the first frame of a new context, and the
 * out-of-line switch that sanitizer builds need. The switch itself is in
 * arch/<arch>/switch.S; see context.h for the overview.
 */
#include "context.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef GIONG_ASAN
#include <pthread.h>
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef GIONG_TSAN
#include <sanitizer/tsan_interface.h>
#endif
#ifdef GIONG_VALGRIND
#include <valgrind/valgrind.h>
#endif

#if defined(GIONG_ASAN) || defined(GIONG_TSAN) || defined(GIONG_CTX_UCONTEXT)
#define CTX_WRAPPED 1
#endif

/* The first instruction of every new context, in switch.S. */
void giong__ctx_trampoline(void);

#ifdef CTX_WRAPPED
/* Sanitizer bookkeeping that must run on the new stack, right after landing. */
static void ctx_finish_switch(struct giong__ctx *self)
{
#ifdef GIONG_ASAN
	/* NULL: a fresh context has no fake stack to restore. */
	__sanitizer_finish_switch_fiber(self ? self->fake_stack : NULL, NULL, NULL);
#else
	(void)self;
#endif
}

/*
 * In wrapped builds the trampoline (or makecontext) calls this instead of
 * the entry, so that the switch that started us is finished before any
 * user code runs on the new stack.
 */
static void ctx_start(void *p)
{
	struct giong__ctx *c = p;

	ctx_finish_switch(NULL);
	c->entry(c->arg);
	/* Returning would run off the top of the stack. */
	abort();
}
#endif

#if defined(GIONG_CTX_UCONTEXT)
/* makecontext() passes only ints, so the context pointer comes in halves. */
static void ctx_uc_start(unsigned hi, unsigned lo)
{
	ctx_start((void *)(((uintptr_t)hi << 16 << 16) | lo));
}

static void ctx_make_frame(struct giong__ctx *c, void *stack_lo, size_t size, void (*entry)(void *),
			   void *arg)
{
	uintptr_t p = (uintptr_t)c;

	(void)entry;
	(void)arg;
	if (getcontext(&c->uc) != 0)
		abort();
	c->uc.uc_stack.ss_sp = stack_lo;
	c->uc.uc_stack.ss_size = size;
	c->uc.uc_link = NULL;
	makecontext(&c->uc, (void (*)(void))ctx_uc_start, 2, (unsigned)(p >> 16 >> 16),
		    (unsigned)p);
}

static inline void ctx_raw_switch(struct giong__ctx *from, struct giong__ctx *to)
{
	if (swapcontext(&from->uc, &to->uc) != 0)
		abort();
}

#elif defined(__x86_64__)
/* Must match the frame giong__ctx_jump saves; see arch/x86_64/switch.S. */
enum { X86_CSR, X86_R15, X86_R14, X86_R13, X86_R12, X86_RBX, X86_RBP, X86_RET, X86_WORDS };

static void ctx_make_frame(struct giong__ctx *c, void *stack_lo, size_t size, void (*entry)(void *),
			   void *arg)
{
	uintptr_t top = ((uintptr_t)stack_lo + size) & ~(uintptr_t)15;
	/* The trampoline runs with rsp here: 16-aligned, a zero return address. */
	uint64_t *tramp_sp = (uint64_t *)(top - 16);
	uint64_t *f = tramp_sp - X86_WORDS;
	uint32_t mxcsr;
	uint16_t fpucw;

	/* Inherit the creator's control bits, minus its sticky exception flags. */
	__asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
	__asm__ volatile("fnstcw %0" : "=m"(fpucw));
	mxcsr &= ~0x3fu;

	assert((void *)f > stack_lo);
	memset(f, 0, (X86_WORDS + 2) * sizeof(*f));
	f[X86_CSR] = mxcsr | (uint64_t)fpucw << 32;
	f[X86_R13] = (uintptr_t)entry;
	f[X86_R12] = (uintptr_t)arg;
	f[X86_RET] = (uintptr_t)giong__ctx_trampoline;
	c->sp = f;
}

#elif defined(__aarch64__)
/* In switch.S: @lr signed as a saved x30 against @sp (unchanged in a build without pac-ret). */
uintptr_t giong__ctx_sign_lr(uintptr_t lr, uintptr_t sp);

/* Must match the frame giong__ctx_jump saves; see arch/aarch64/switch.S. */
enum { A64_X19 = 0, A64_X20 = 1, A64_X29 = 10, A64_X30 = 11, A64_FPCR = 20, A64_WORDS = 22 };

static void ctx_make_frame(struct giong__ctx *c, void *stack_lo, size_t size, void (*entry)(void *),
			   void *arg)
{
	uintptr_t top = ((uintptr_t)stack_lo + size) & ~(uintptr_t)15;
	uint64_t *f = (uint64_t *)top - A64_WORDS;
	uint64_t fpcr;

	__asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));

	assert((void *)f > stack_lo);
	memset(f, 0, A64_WORDS * sizeof(*f));
	f[A64_X19] = (uintptr_t)entry;
	f[A64_X20] = (uintptr_t)arg;
	f[A64_X29] = 0; /* null frame record: frame-pointer walks stop here */
	/* Signed as giong__ctx_jump signs a saved x30, against the sp it restores (top). */
	f[A64_X30] = giong__ctx_sign_lr((uintptr_t)giong__ctx_trampoline, top);
	f[A64_FPCR] = fpcr;
	c->sp = f;
}
#endif

#if !defined(GIONG_CTX_UCONTEXT) && defined(CTX_WRAPPED)
static inline void ctx_raw_switch(struct giong__ctx *from, struct giong__ctx *to)
{
	giong__ctx_jump(&from->sp, to->sp);
}
#endif

void giong__ctx_make(struct giong__ctx *c, void *stack_lo, size_t size, void (*entry)(void *),
		     void *arg)
{
	memset(c, 0, sizeof(*c));
#ifdef CTX_WRAPPED
	c->entry = entry;
	c->arg = arg;
	entry = ctx_start;
	arg = c;
#endif
#ifdef GIONG_ASAN
	c->stack_lo = stack_lo;
	c->stack_size = size;
	/*
	 * A recycled stack still carries the redzone poison of the frames its
	 * previous fiber never returned from (it left via switch_final).
	 */
	__asan_unpoison_memory_region(stack_lo, size);
#endif
#ifdef GIONG_TSAN
	c->tsan_fiber = __tsan_create_fiber(0);
	c->tsan_owned = 1;
#endif
#ifdef GIONG_VALGRIND
	/* Without this memcheck takes the sp jump for a huge alloca. */
	c->vg_stack_id = VALGRIND_STACK_REGISTER(stack_lo, (char *)stack_lo + size);
	c->vg_registered = 1;
#endif
	ctx_make_frame(c, stack_lo, size, entry, arg);
}

void giong__ctx_init_thread(struct giong__ctx *c)
{
	memset(c, 0, sizeof(*c));
#ifdef GIONG_ASAN
	{
		pthread_attr_t attr;
		void *lo;
		size_t size;

		/* ASan needs the bounds of every stack we switch to, ours included. */
		if (pthread_getattr_np(pthread_self(), &attr) == 0) {
			if (pthread_attr_getstack(&attr, &lo, &size) == 0) {
				c->stack_lo = lo;
				c->stack_size = size;
			}
			pthread_attr_destroy(&attr);
		}
	}
#endif
#ifdef GIONG_TSAN
	c->tsan_fiber = __tsan_get_current_fiber();
	c->tsan_owned = 0;
#endif
}

void giong__ctx_destroy(struct giong__ctx *c)
{
#ifdef GIONG_TSAN
	if (c->tsan_owned && c->tsan_fiber)
		__tsan_destroy_fiber(c->tsan_fiber);
	c->tsan_fiber = NULL;
	c->tsan_owned = 0;
#endif
#ifdef GIONG_VALGRIND
	if (c->vg_registered)
		VALGRIND_STACK_DEREGISTER(c->vg_stack_id);
	c->vg_registered = 0;
#endif
	c->sp = NULL;
}

#ifdef CTX_WRAPPED
void giong__ctx_switch(struct giong__ctx *from, struct giong__ctx *to)
{
#ifdef GIONG_ASAN
	__sanitizer_start_switch_fiber(&from->fake_stack, to->stack_lo, to->stack_size);
#endif
#ifdef GIONG_TSAN
	/* flags 0: the switch is a happens-before edge, as it is in reality. */
	__tsan_switch_to_fiber(to->tsan_fiber, 0);
#endif
	ctx_raw_switch(from, to);
	/* Someone switched back to @from; we are on its stack again. */
	ctx_finish_switch(from);
}

void giong__ctx_switch_final(struct giong__ctx *from, struct giong__ctx *to)
{
#ifdef GIONG_ASAN
	/* NULL: drop this fiber's fake stack, we never come back. */
	__sanitizer_start_switch_fiber(NULL, to->stack_lo, to->stack_size);
#endif
#ifdef GIONG_TSAN
	__tsan_switch_to_fiber(to->tsan_fiber, 0);
#endif
	ctx_raw_switch(from, to);
	abort(); /* a finished context was resumed */
}
#endif
