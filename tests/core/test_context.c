// SPDX-License-Identifier: MIT
/*
 * Fiber context switch and stack pool: white-box tests of context.c,
 * switch.S and stack.c. Build with -O2 so that the register-preservation
 * test really keeps its values in callee-saved registers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fenv.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "context.h"
#include "stack.h"

#define STACK_SIZE (64 * 1024)

struct fiber {
	struct giong__ctx ctx;
	struct giong__stack *stack;
	struct giong__ctx *back; /* where the fiber switches to */
	bool stop;
};

static void fiber_start(struct giong__stack_pool *p, struct fiber *f, struct giong__ctx *back,
			void (*entry)(void *))
{
	f->back = back;
	f->stop = false;
	assert_int_equal(giong__stack_get(p, &f->stack), 0);
	giong__ctx_make(&f->ctx, f->stack->lo, f->stack->size, entry, f);
}

static void fiber_end(struct giong__stack_pool *p, struct fiber *f)
{
	giong__ctx_destroy(&f->ctx);
	giong__stack_put(p, f->stack);
	f->stack = NULL;
}

/* Every fiber ends this way: the last switch off its stack is final. */
static void fiber_exit(struct fiber *f)
{
	giong__ctx_switch_final(&f->ctx, f->back);
}

/* ---- ping-pong ------------------------------------------------------------ */

struct pingpong {
	struct fiber f; /* first: the entry gets a struct fiber pointer */
	unsigned long counter;
};

static void pingpong_entry(void *arg)
{
	struct pingpong *pp = arg;

	while (!pp->f.stop) {
		pp->counter++;
		giong__ctx_switch(&pp->f.ctx, pp->f.back);
	}
	fiber_exit(&pp->f);
}

/*
 * Returns the number of failed checks rather than asserting: it also runs
 * on threads, where a CMocka failure cannot longjmp back to the runner.
 */
static unsigned long pingpong_run(unsigned long rounds)
{
	struct giong__stack_pool pool;
	struct giong__ctx main_ctx;
	struct pingpong pp = {.counter = 0};
	unsigned long i, bad = 0;

	giong__stack_pool_init(&pool, STACK_SIZE, 4);
	giong__ctx_init_thread(&main_ctx);
	pp.f.back = &main_ctx;
	if (giong__stack_get(&pool, &pp.f.stack) != 0)
		return 1;
	giong__ctx_make(&pp.f.ctx, pp.f.stack->lo, pp.f.stack->size, pingpong_entry, &pp);
	for (i = 0; i < rounds; i++) {
		giong__ctx_switch(&main_ctx, &pp.f.ctx);
		bad += pp.counter != i + 1;
	}
	pp.f.stop = true;
	giong__ctx_switch(&main_ctx, &pp.f.ctx);
	bad += pp.counter != rounds;
	fiber_end(&pool, &pp.f);
	giong__ctx_destroy(&main_ctx);
	giong__stack_pool_fini(&pool);
	bad += pool.mapped != 0;
	return bad;
}

static void test_pingpong(void **state)
{
	(void)state;
	assert_int_equal(pingpong_run(1000000), 0);
}

/* Fibers on several threads at once: per-thread contexts and live lists. */
static void *pingpong_thread(void *arg)
{
	unsigned long *bad = arg;

	*bad = pingpong_run(100000);
	return NULL;
}

static void test_pingpong_threads(void **state)
{
	unsigned long bad[2] = {1, 1};
	pthread_t t[2];
	int i;

	(void)state;
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, pingpong_thread, &bad[i]), 0);
	for (i = 0; i < 2; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(bad[i], 0);
	}
}

/* ---- callee-saved registers ---------------------------------------------- */

/* Leave garbage in every callee-saved register we may name, then switch. */
static void clobber_entry(void *arg)
{
	struct fiber *f = arg;

	while (!f->stop) {
#if defined(__x86_64__)
		__asm__ volatile("movq $0x1111, %%rbx\n\tmovq $0x2222, %%r12\n\t"
				 "movq $0x3333, %%r13\n\tmovq $0x4444, %%r14\n\t"
				 "movq $0x5555, %%r15\n\t" ::
					 : "rbx", "r12", "r13", "r14", "r15");
#elif defined(__aarch64__)
		__asm__ volatile("mov x19, #1\n\tmov x20, #2\n\tmov x21, #3\n\tmov x22, #4\n\t"
				 "mov x23, #5\n\tmov x24, #6\n\tmov x25, #7\n\tmov x26, #8\n\t"
				 "mov x27, #9\n\tmov x28, #10\n\tfmov d8, #1.0\n\t"
				 "fmov d9, #2.0\n\tfmov d10, #3.0\n\tfmov d11, #4.0\n\t"
				 "fmov d12, #5.0\n\tfmov d13, #6.0\n\tfmov d14, #7.0\n\t"
				 "fmov d15, #8.0\n\t" ::
					 : "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26",
					   "x27", "x28", "d8", "d9", "d10", "d11", "d12", "d13",
					   "d14", "d15");
#endif
		giong__ctx_switch(&f->ctx, f->back);
	}
	fiber_exit(f);
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ull;
	return x ^ (x >> 29);
}

static volatile uint64_t seed = 12345;

/*
 * Twelve integers and four doubles stay live across every switch, more
 * than there are callee-saved registers, so the compiler keeps some in
 * rbx/rbp/r12-r15 (x19-x28, d8-d15) and spills the rest to the stack.
 */
static __attribute__((noinline)) uint64_t many_live(struct giong__ctx *self,
						    struct giong__ctx *other, int rounds)
{
	uint64_t a = seed, b = a + 1, c = a + 2, d = a + 3, e = a + 4, g = a + 5;
	uint64_t h = a + 6, i = a + 7, j = a + 8, k = a + 9, l = a + 10, m = a + 11;
	double x = (double)a, y = x * 0.5, z = x * 0.25, w = x * 0.125;
	volatile double vx = 1.5, vy = 2.25;
	int n;

	for (n = 0; n < rounds; n++) {
		if (self)
			giong__ctx_switch(self, other);
		a = mix(a + b);
		b = mix(b + c);
		c = mix(c + d);
		d = mix(d + e);
		e = mix(e + g);
		g = mix(g + h);
		h = mix(h + i);
		i = mix(i + j);
		j = mix(j + k);
		k = mix(k + l);
		l = mix(l + m);
		m = mix(m + a);
		x = x * 1.0000001 + y;
		y = y * 0.9999999 + z;
		z = z + w;
		w = w * 1.0000002;
		vx = vx + vy;
	}
	return a ^ b ^ c ^ d ^ e ^ g ^ h ^ i ^ j ^ k ^ l ^ m ^ (uint64_t)x ^ (uint64_t)y ^
	       (uint64_t)z ^ (uint64_t)w ^ (uint64_t)vx;
}

static void test_callee_saved(void **state)
{
	struct giong__stack_pool pool;
	struct giong__ctx main_ctx;
	struct fiber f;
	uint64_t want, got;

	(void)state;
	giong__stack_pool_init(&pool, STACK_SIZE, 4);
	giong__ctx_init_thread(&main_ctx);
	fiber_start(&pool, &f, &main_ctx, clobber_entry);

	want = many_live(NULL, NULL, 1000);
	got = many_live(&main_ctx, &f.ctx, 1000);
	assert_true(want == got);

	f.stop = true;
	giong__ctx_switch(&main_ctx, &f.ctx);
	fiber_end(&pool, &f);
	giong__ctx_destroy(&main_ctx);
	giong__stack_pool_fini(&pool);
}

/* ---- FPU / SSE control state ---------------------------------------------- */

static int fp_seen_in_fiber[3];
static volatile float fp_one = 1.0f, fp_three = 3.0f;

#if defined(__x86_64__)
/* Read both registers: glibc's fegetround() only looks at the x87 word. */
static unsigned mxcsr_rc(void)
{
	uint32_t v;

	__asm__ volatile("stmxcsr %0" : "=m"(v));
	return (v >> 13) & 3;
}

static unsigned x87_rc(void)
{
	uint16_t v;

	__asm__ volatile("fnstcw %0" : "=m"(v));
	return (v >> 10) & 3;
}
#endif

static void fp_entry(void *arg)
{
	struct fiber *f = arg;

	fp_seen_in_fiber[0] = fegetround();
	fesetround(FE_UPWARD);
	giong__ctx_switch(&f->ctx, f->back);
	/* The scheduler's rounding mode must not have leaked in here either. */
	fp_seen_in_fiber[1] = fegetround();
#if defined(__x86_64__)
	fp_seen_in_fiber[2] = mxcsr_rc() == 2 && x87_rc() == 2;
#else
	fp_seen_in_fiber[2] = 1;
#endif
	fiber_exit(f);
}

static void test_fp_control_isolated(void **state)
{
	struct giong__stack_pool pool;
	struct giong__ctx main_ctx;
	struct fiber f;
	float nearest, q;

	(void)state;
	giong__stack_pool_init(&pool, STACK_SIZE, 4);
	giong__ctx_init_thread(&main_ctx);
	assert_int_equal(fegetround(), FE_TONEAREST);
	nearest = fp_one / fp_three;

	/* A new context inherits its creator's mode, as a new thread would. */
	fesetround(FE_DOWNWARD);
	fiber_start(&pool, &f, &main_ctx, fp_entry);
	fesetround(FE_TONEAREST);

	giong__ctx_switch(&main_ctx, &f.ctx);
	assert_int_equal(fp_seen_in_fiber[0], FE_DOWNWARD);
	/* The fiber went FE_UPWARD; we must still round to nearest. */
	assert_int_equal(fegetround(), FE_TONEAREST);
#if defined(__x86_64__)
	assert_int_equal(mxcsr_rc(), 0);
	assert_int_equal(x87_rc(), 0);
#endif
	q = fp_one / fp_three;
	assert_true(q == nearest);

	fesetround(FE_TOWARDZERO);
	giong__ctx_switch(&main_ctx, &f.ctx);
	assert_int_equal(fegetround(), FE_TOWARDZERO);
	fesetround(FE_TONEAREST);
	assert_int_equal(fp_seen_in_fiber[1], FE_UPWARD);
	assert_true(fp_seen_in_fiber[2]);

	fiber_end(&pool, &f);
	giong__ctx_destroy(&main_ctx);
	giong__stack_pool_fini(&pool);
}

/* ---- deep recursion --------------------------------------------------------- */

static const char *deep_lo;
static uintptr_t deep_min_sp;
static unsigned long deep_depth, deep_sum;

static __attribute__((noinline)) unsigned long recurse(unsigned long depth)
{
	volatile unsigned char buf[480];
	unsigned long r;

	/* Not &buf: ASan's use-after-return mode moves locals to the heap. */
	const char *sp = __builtin_frame_address(0);

	buf[0] = (unsigned char)depth;
	buf[sizeof(buf) - 1] = (unsigned char)depth;
	if ((uintptr_t)sp < deep_min_sp)
		deep_min_sp = (uintptr_t)sp;
	/* Stop 6 KiB above the guard page, whatever the frame size. */
	if (sp - deep_lo < 6144) {
		deep_depth = depth;
		return buf[0];
	}
	r = recurse(depth + 1);
	/* Use our frame after the call: no tail call, and proof it survived. */
	return r + buf[0] + buf[sizeof(buf) - 1];
}

static void deep_entry(void *arg)
{
	struct fiber *f = arg;

	deep_sum = recurse(0);
	fiber_exit(f);
}

static void test_deep_recursion(void **state)
{
	struct giong__stack_pool pool;
	struct giong__ctx main_ctx;
	struct fiber f;
	unsigned long d, want;
	uintptr_t top;

	(void)state;
	giong__stack_pool_init(&pool, STACK_SIZE, 4);
	giong__ctx_init_thread(&main_ctx);
	fiber_start(&pool, &f, &main_ctx, deep_entry);
	deep_lo = f.stack->lo;
	top = (uintptr_t)f.stack->lo + f.stack->size;
	deep_min_sp = UINTPTR_MAX;
	giong__ctx_switch(&main_ctx, &f.ctx);

	want = deep_depth & 0xff;
	for (d = 0; d < deep_depth; d++)
		want += 2 * (d & 0xff);
	assert_int_equal(deep_sum, want);
	/* At least 56 KiB of the 64 KiB stack were in use. */
	assert_true(top - deep_min_sp >= 56 * 1024);
	assert_true(deep_min_sp >= (uintptr_t)f.stack->lo);

	fiber_end(&pool, &f);
	giong__ctx_destroy(&main_ctx);
	giong__stack_pool_fini(&pool);
}

/* ---- stack alignment at entry ------------------------------------------------ */

static uintptr_t align_frame, align_local, align_inner;
static const char *align_lo, *align_hi;

static __attribute__((noinline)) void align_inner_fn(void)
{
	alignas(16) volatile char v[16];

	v[0] = 1;
	align_inner = (uintptr_t)v;
}

static void align_entry(void *arg)
{
	struct fiber *f = arg;
	alignas(16) volatile char v[16];

	v[0] = 1;
	align_local = (uintptr_t)v;
	align_frame = (uintptr_t)__builtin_frame_address(0);
	align_inner_fn();
	fiber_exit(f);
}

static void test_entry_alignment(void **state)
{
	struct giong__stack_pool pool;
	struct giong__ctx main_ctx;
	struct fiber f;

	(void)state;
	giong__stack_pool_init(&pool, STACK_SIZE, 4);
	giong__ctx_init_thread(&main_ctx);
	fiber_start(&pool, &f, &main_ctx, align_entry);
	align_lo = f.stack->lo;
	align_hi = align_lo + f.stack->size;
	giong__ctx_switch(&main_ctx, &f.ctx);

	/* frame pointer = entry sp - 8 (x86) or sp (arm64): 16-aligned either way. */
	assert_int_equal(align_frame % 16, 0);
	assert_int_equal(align_local % 16, 0);
	assert_int_equal(align_inner % 16, 0);
	/* The fiber really ran on its own stack. */
	assert_true(align_frame >= (uintptr_t)align_lo && align_frame < (uintptr_t)align_hi);

	fiber_end(&pool, &f);
	giong__ctx_destroy(&main_ctx);
	giong__stack_pool_fini(&pool);
}

/* ---- fiber to fiber, and recycling finished stacks -------------------------- */

static struct fiber chain_a, chain_b;
static int chain_trace[8], chain_n;

static void chain_b_entry(void *arg)
{
	struct fiber *f = arg;

	chain_trace[chain_n++] = 2;
	giong__ctx_switch(&f->ctx, &chain_a.ctx); /* straight back to A */
	chain_trace[chain_n++] = 4;
	fiber_exit(f);
}

static void chain_a_entry(void *arg)
{
	struct fiber *f = arg;

	chain_trace[chain_n++] = 1;
	giong__ctx_switch(&f->ctx, &chain_b.ctx); /* to B, not to main */
	chain_trace[chain_n++] = 3;
	fiber_exit(f);
}

static void test_fiber_to_fiber(void **state)
{
	struct giong__stack_pool pool;
	struct giong__ctx main_ctx;

	(void)state;
	giong__stack_pool_init(&pool, STACK_SIZE, 4);
	giong__ctx_init_thread(&main_ctx);
	fiber_start(&pool, &chain_a, &main_ctx, chain_a_entry);
	fiber_start(&pool, &chain_b, &main_ctx, chain_b_entry);
	chain_n = 0;
	giong__ctx_switch(&main_ctx, &chain_a.ctx); /* A -> B -> A -> main */
	giong__ctx_switch(&main_ctx, &chain_b.ctx); /* B -> main */
	assert_int_equal(chain_n, 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(chain_trace[i], i + 1);
	fiber_end(&pool, &chain_a);
	fiber_end(&pool, &chain_b);
	giong__ctx_destroy(&main_ctx);
	giong__stack_pool_fini(&pool);
}

static unsigned long recycle_sum;

/*
 * Through a volatile pointer: gcc sees that fiber_exit() never returns and
 * would call the recursion below infinite.
 */
static void (*volatile recycle_exit)(struct fiber *) = fiber_exit;

/* Leave poisoned frames behind (under ASan) on a stack that gets reused. */
static __attribute__((noinline)) void recycle_work(struct fiber *f, int depth)
{
	volatile char buf[200];

	memset((char *)buf, depth, sizeof(buf));
	recycle_sum += buf[depth];
	if (depth < 20)
		recycle_work(f, depth + 1);
	else
		recycle_exit(f); /* leave from deep inside, frames never unwound */
}

static void recycle_entry(void *arg)
{
	recycle_work(arg, 0);
}

static void test_recycle_stacks(void **state)
{
	struct giong__stack_pool pool;
	struct giong__ctx main_ctx;
	struct fiber f;
	void *first = NULL;
	int i;

	(void)state;
	giong__stack_pool_init(&pool, STACK_SIZE, 1);
	giong__ctx_init_thread(&main_ctx);
	recycle_sum = 0;
	for (i = 0; i < 2000; i++) {
		fiber_start(&pool, &f, &main_ctx, recycle_entry);
		if (!first)
			first = f.stack->map;
		assert_ptr_equal(f.stack->map, first);
		giong__ctx_switch(&main_ctx, &f.ctx);
		fiber_end(&pool, &f);
	}
	assert_int_equal(recycle_sum, 2000ul * (21 * 20 / 2));
	assert_int_equal(pool.mapped, 1);
	giong__ctx_destroy(&main_ctx);
	giong__stack_pool_fini(&pool);
}

/* ---- stack pool ----------------------------------------------------------------- */

static void test_pool_reuse(void **state)
{
	struct giong__stack_pool pool;
	struct giong__stack *a, *b, *s[8];
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t offs[8];
	int i, distinct = 0;

	(void)state;
	giong__stack_pool_init(&pool, 60000, 2);
	assert_int_equal(pool.size % page, 0);
	assert_true(pool.size >= 60000);

	assert_int_equal(giong__stack_get(&pool, &a), 0);
	assert_int_equal(pool.mapped, 1);
	assert_int_equal(pool.live, 1);
	/* Layout: guard page, then at least the requested usable bytes. */
	assert_ptr_equal((char *)a->map + page, a->lo);
	assert_true(a->size >= pool.size);
	assert_true((char *)a->lo + a->size <= (char *)a->map + a->map_size);
	assert_int_equal(((uintptr_t)a->lo + a->size) % 64, 0);
	assert_null(a->owner_name);
	memset(a->lo, 0xa5, a->size); /* every usable byte is writable */

	a->owner_name = "x";
	giong__stack_put(&pool, a);
	assert_int_equal(pool.count, 1);
	assert_int_equal(pool.live, 0);
	assert_int_equal(giong__stack_get(&pool, &b), 0);
	assert_ptr_equal(a, b); /* same mapping, no new mmap */
	assert_ptr_equal(a->map, b->map);
	assert_int_equal(pool.mapped, 1);
	assert_int_equal(pool.count, 0);
	assert_null(b->owner_name);
	giong__stack_put(&pool, b);

	/* max is honoured: stacks beyond it are unmapped on put. */
	for (i = 0; i < 8; i++) {
		assert_int_equal(giong__stack_get(&pool, &s[i]), 0);
		offs[i] = ((uintptr_t)s[i]->lo + s[i]->size) % 4096;
	}
	assert_int_equal(pool.live, 8);
	assert_int_equal(pool.mapped, 8);
	assert_int_equal(pool.count, 0);
	/* Stack tops are spread across page offsets (L1 sets). */
	for (i = 1; i < 8; i++)
		distinct += offs[i] != offs[0];
	assert_true(distinct > 0);
	for (i = 0; i < 8; i++)
		giong__stack_put(&pool, s[i]);
	assert_int_equal(pool.count, 2);
	assert_int_equal(pool.mapped, 2);
	assert_int_equal(pool.live, 0);

	giong__stack_pool_fini(&pool);
	assert_int_equal(pool.mapped, 0);
	assert_int_equal(pool.count, 0);
	assert_null(pool.free);
}

static void test_pool_zero_max(void **state)
{
	struct giong__stack_pool pool;
	struct giong__stack *s;

	(void)state;
	giong__stack_pool_init(&pool, STACK_SIZE, 0);
	assert_int_equal(giong__stack_get(&pool, &s), 0);
	giong__stack_put(&pool, s);
	assert_int_equal(pool.mapped, 0);
	assert_int_equal(pool.count, 0);
	giong__stack_pool_fini(&pool);
}

/* ---- return address signing (AArch64, -mbranch-protection=pac-ret or standard) ---- */

#if defined(__aarch64__) && defined(__ARM_FEATURE_PAC_DEFAULT) && !defined(GIONG_CTX_UCONTEXT)
#define TEST_PAC 1
#include <signal.h>
#include <sys/auxv.h>
#include <sys/wait.h>

#ifndef HWCAP_PACA
#define HWCAP_PACA (1ul << 30)
#endif

void giong__ctx_trampoline(void);

/* A suspended context's saved x30: word 11 of its frame (arch/aarch64/switch.S). */
static uint64_t *saved_lr(struct giong__ctx *c)
{
	return (uint64_t *)c->sp + 11;
}

/* @v without its pointer authentication code (xpaclri, a hint: runs anywhere). */
static uint64_t strip_pac(uint64_t v)
{
	__asm__ volatile("mov x30, %0\n\thint #7\n\tmov %0, x30" : "+r"(v) : : "x30");
	return v;
}

static void pac_entry(void *arg)
{
	struct fiber *f = arg;

	giong__ctx_switch(&f->ctx, f->back);
	fiber_exit(f);
}

/*
 * The switch signs the x30 it saves, and a suspended fiber resumed through a
 * forged one (the right address, unsigned) dies instead of returning there.
 * A code is 0 by chance now and then (7 bits or more), so four fibers: one
 * signed with a non-zero code is enough to see it, and the one forged.
 */
static void test_pac_saved_lr(void **state)
{
	struct giong__stack_pool pool;
	struct giong__ctx main_ctx;
	struct fiber f[4];
	struct fiber *victim = NULL;
	uint64_t raw = 0;
	int i, status;
	pid_t pid;

	(void)state;
	if (!(getauxval(AT_HWCAP) & HWCAP_PACA)) {
		print_message("no pointer authentication on this CPU: nothing is signed\n");
		skip();
	}
	giong__stack_pool_init(&pool, STACK_SIZE, 4);
	giong__ctx_init_thread(&main_ctx);
	for (i = 0; i < 4; i++) {
		fiber_start(&pool, &f[i], &main_ctx, pac_entry);
		/* A fresh frame returns to the trampoline. */
		assert_int_equal(strip_pac(*saved_lr(&f[i].ctx)), (uintptr_t)giong__ctx_trampoline);
		giong__ctx_switch(&main_ctx, &f[i].ctx); /* runs, switches back */
		if (!victim && *saved_lr(&f[i].ctx) != strip_pac(*saved_lr(&f[i].ctx))) {
			victim = &f[i];
			raw = strip_pac(*saved_lr(&f[i].ctx));
		}
	}
	assert_non_null(victim);

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* CMocka catches these to report a test; the child must die of them. */
		signal(SIGSEGV, SIG_DFL);
		signal(SIGILL, SIG_DFL);
		signal(SIGBUS, SIG_DFL);
		*saved_lr(&victim->ctx) = raw;
		giong__ctx_switch(&main_ctx, &victim->ctx);
		_exit(0); /* the forged return address was taken */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));

	/* The parent's frames are untouched: each fiber resumes and ends. */
	for (i = 0; i < 4; i++) {
		giong__ctx_switch(&main_ctx, &f[i].ctx);
		fiber_end(&pool, &f[i]);
	}
	giong__ctx_destroy(&main_ctx);
	giong__stack_pool_fini(&pool);
	assert_int_equal(pool.mapped, 0);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pingpong),       cmocka_unit_test(test_pingpong_threads),
		cmocka_unit_test(test_callee_saved),   cmocka_unit_test(test_fp_control_isolated),
		cmocka_unit_test(test_deep_recursion), cmocka_unit_test(test_entry_alignment),
		cmocka_unit_test(test_fiber_to_fiber), cmocka_unit_test(test_recycle_stacks),
		cmocka_unit_test(test_pool_reuse),     cmocka_unit_test(test_pool_zero_max),
#ifdef TEST_PAC
		cmocka_unit_test(test_pac_saved_lr),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
