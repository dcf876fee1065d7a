// SPDX-License-Identifier: MIT
/*
 * Fiber switch cost: one iteration is a round trip (scheduler -> fiber ->
 * scheduler, two switches), with giong's assembly switch and with glibc's
 * swapcontext, which saves and restores the signal mask with a
 * rt_sigprocmask system call on every switch.
 */
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <ucontext.h>

extern "C" {
#include "context.h"
#include "stack.h"
}

namespace
{

constexpr size_t kStackSize = 64 * 1024;

struct GiongPair {
	giong__ctx sched;
	giong__ctx fiber;
	bool stop;
};

GiongPair gp;

void giong_entry(void *arg)
{
	auto *p = static_cast<GiongPair *>(arg);

	while (!p->stop)
		giong__ctx_switch(&p->fiber, &p->sched);
	giong__ctx_switch_final(&p->fiber, &p->sched);
}

void BM_giong_ctx_switch_roundtrip(benchmark::State &state)
{
	giong__stack_pool pool;
	giong__stack *s;

	giong__stack_pool_init(&pool, kStackSize, 1);
	if (giong__stack_get(&pool, &s) != 0) {
		state.SkipWithError("giong__stack_get failed");
		return;
	}
	gp.stop = false;
	giong__ctx_init_thread(&gp.sched);
	giong__ctx_make(&gp.fiber, s->lo, s->size, giong_entry, &gp);

	for (auto _ : state)
		giong__ctx_switch(&gp.sched, &gp.fiber);

	gp.stop = true;
	giong__ctx_switch(&gp.sched, &gp.fiber);
	giong__ctx_destroy(&gp.fiber);
	giong__ctx_destroy(&gp.sched);
	giong__stack_put(&pool, s);
	giong__stack_pool_fini(&pool);
	state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_giong_ctx_switch_roundtrip);

ucontext_t uc_sched, uc_fiber;
volatile bool uc_stop;

void uc_entry()
{
	while (!uc_stop)
		swapcontext(&uc_fiber, &uc_sched);
	setcontext(&uc_sched);
}

void BM_swapcontext_roundtrip(benchmark::State &state)
{
	void *stack = std::malloc(kStackSize);

	if (!stack || getcontext(&uc_fiber) != 0) {
		state.SkipWithError("swapcontext setup failed");
		std::free(stack);
		return;
	}
	uc_fiber.uc_stack.ss_sp = stack;
	uc_fiber.uc_stack.ss_size = kStackSize;
	uc_fiber.uc_link = nullptr;
	makecontext(&uc_fiber, uc_entry, 0);
	uc_stop = false;

	for (auto _ : state)
		swapcontext(&uc_sched, &uc_fiber);

	uc_stop = true;
	swapcontext(&uc_sched, &uc_fiber);
	std::free(stack);
	state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_swapcontext_roundtrip);

} // namespace

BENCHMARK_MAIN();
