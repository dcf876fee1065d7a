/* SPDX-License-Identifier: MIT */
/*
 * Fiber execution contexts: the register-level half of a fiber.
 *
 * A context is one saved stack pointer. Everything else the ABI calls
 * callee-saved (and the FPU/SSE control words on x86-64, FPCR on AArch64)
 * is pushed on the context's own stack by giong__ctx_jump() in
 * arch/<arch>/switch.S, so a switch is a handful of instructions and
 * never enters the kernel (glibc's swapcontext does a sigprocmask per
 * switch).
 *
 * Sanitizer builds (GIONG_ASAN, GIONG_TSAN) route every switch through
 * context.c, which tells the runtime that the stack is about to change.
 * Those builds add fields to struct giong__ctx, so every translation unit
 * of one build must agree on the macros; the build defines them globally
 * and we also derive them from -fsanitize=... below so a sanitizer build
 * cannot forget them. GIONG_VALGRIND only registers stacks on make and
 * destroy, so its switch stays on the inline fast path.
 *
 * Not thread-safe by design: a context belongs to one thread (fibers never
 * migrate), and only that thread switches to and from it.
 */
#ifndef GIONG_CORE_CONTEXT_H
#define GIONG_CORE_CONTEXT_H

#include <stddef.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) && !defined(GIONG_ASAN)
#define GIONG_ASAN 1
#endif
#if __has_feature(thread_sanitizer) && !defined(GIONG_TSAN)
#define GIONG_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(GIONG_ASAN)
#define GIONG_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__) && !defined(GIONG_TSAN)
#define GIONG_TSAN 1
#endif

/* Only x86-64 and AArch64 have hand-written switches; others use ucontext. */
#if !defined(__x86_64__) && !defined(__aarch64__) && !defined(GIONG_CTX_UCONTEXT)
#define GIONG_CTX_UCONTEXT 1
#endif

#ifdef GIONG_CTX_UCONTEXT
#include <ucontext.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

struct giong__ctx {
	void *sp; /* saved stack pointer; the rest of the state is below it */
#if defined(GIONG_ASAN) || defined(GIONG_TSAN) || defined(GIONG_CTX_UCONTEXT)
	/* The entry runs behind a C wrapper that first finishes the switch. */
	void (*entry)(void *);
	void *arg;
#endif
#ifdef GIONG_ASAN
	const void *stack_lo; /* bounds ASan is told on every switch to us */
	size_t stack_size;
	void *fake_stack; /* ASan's use-after-return frames while off-CPU */
#endif
#ifdef GIONG_TSAN
	void *tsan_fiber;
	int tsan_owned; /* 0 for the thread context: TSan owns that fiber */
#endif
#ifdef GIONG_VALGRIND
	unsigned vg_stack_id;
	int vg_registered;
#endif
#ifdef GIONG_CTX_UCONTEXT
	ucontext_t uc;
#endif
};

/*
 * giong__ctx_make() - prepare @c so that the first switch to it calls
 * entry(@arg) on the stack [@stack_lo, @stack_lo + @size).
 * @entry must never return: the scheduler switches away from a finished
 * fiber with giong__ctx_switch_final(). Returning traps (ud2 / brk).
 * The stack is borrowed until giong__ctx_destroy(). The new context starts
 * with the caller's SSE/x87 control words (FPCR on AArch64), as a new
 * thread inherits them from its creator.
 */
void giong__ctx_make(struct giong__ctx *c, void *stack_lo, size_t size, void (*entry)(void *),
		     void *arg);

/*
 * giong__ctx_init_thread() - initialise @c as the context of the calling
 * thread's native stack (the scheduler), so fibers can switch back to it.
 */
void giong__ctx_init_thread(struct giong__ctx *c);

/* giong__ctx_destroy() - release the TSan fiber / valgrind stack id of @c. */
void giong__ctx_destroy(struct giong__ctx *c);

/* Raw switch in arch/<arch>/switch.S: save state on the current stack,
 * store the stack pointer in *@save_sp, load @new_sp, restore, return. */
void giong__ctx_jump(void **save_sp, void *new_sp);

#if defined(GIONG_ASAN) || defined(GIONG_TSAN) || defined(GIONG_CTX_UCONTEXT)
/* giong__ctx_switch() - save the current context into @from, resume @to. */
void giong__ctx_switch(struct giong__ctx *from, struct giong__ctx *to);
/*
 * giong__ctx_switch_final() - like giong__ctx_switch(), but @from is
 * finished for good: once we are off it its stack may be recycled, and
 * sanitizers drop what they kept for it. Never returns.
 */
void giong__ctx_switch_final(struct giong__ctx *from, struct giong__ctx *to);
#else
/* The fast path: a switch is exactly one call into switch.S. */
static inline void giong__ctx_switch(struct giong__ctx *from, struct giong__ctx *to)
{
	giong__ctx_jump(&from->sp, to->sp);
}

static inline void giong__ctx_switch_final(struct giong__ctx *from, struct giong__ctx *to)
{
	giong__ctx_jump(&from->sp, to->sp);
	__builtin_unreachable();
}
#endif

#ifdef __cplusplus
}
#endif

#endif /* GIONG_CORE_CONTEXT_H */
