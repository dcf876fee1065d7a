// SPDX-License-Identifier: MIT
/*
 * The runtime's own costs, each beside a peer in the same binary:
 *  - a yield round trip between two tasks (park and resume through the
 *    scheduler) - compare with bench_switch's swapcontext figure;
 *  - spawn, run and join of an empty task vs pthread_create + pthread_join;
 *  - a no-op round trip through the ring, 64 tasks per batch, vs a minimal
 *    liburing loop doing the same batch (the ceiling): ns and enters per op;
 *    and the same batch through core's next-turn queue (giong_call_soon());
 *  - messages per second through a channel from worker 1 to worker 0.
 * The benchmark loops run inside a giong task (giong_block_on), so what is
 * timed is exactly what user code pays.
 */
#include <benchmark/benchmark.h>

#include <liburing.h>
#include <pthread.h>

#include <atomic>

extern "C" {
#include <giong/core.h>
}

namespace
{

template <typename F> void on_giong(benchmark::State &state, F body)
{
	struct Ctx {
		benchmark::State *st;
		F *fn;
	} ctx{&state, &body};
	int r = giong_block_on(
		[](unsigned, void *arg) {
			auto *c = static_cast<Ctx *>(arg);
			(*c->fn)(*c->st);
		},
		&ctx);
	if (r)
		state.SkipWithError(giong_strerror(r));
}

/* ------------------------------------------------------------- yield */

bool stop_yield;

intptr_t yielder(void *)
{
	while (!stop_yield)
		giong_yield();
	return 0;
}

void BM_giong_yield_roundtrip(benchmark::State &state)
{
	on_giong(state, [](benchmark::State &st) {
		struct giong_task *t;

		stop_yield = false;
		giong_spawn(yielder, nullptr, &t);
		for (auto _ : st)
			giong_yield(); /* me -> scheduler -> other -> scheduler -> me */
		stop_yield = true;
		giong_join(t, nullptr);
	});
}
BENCHMARK(BM_giong_yield_roundtrip);

/* ------------------------------------------------------- spawn + join */

intptr_t empty_task(void *arg)
{
	return (intptr_t)arg;
}

void BM_giong_spawn_join(benchmark::State &state)
{
	on_giong(state, [](benchmark::State &st) {
		for (auto _ : st) {
			struct giong_task *t;
			intptr_t r;

			giong_spawn(empty_task, nullptr, &t);
			giong_join(t, &r);
			benchmark::DoNotOptimize(r);
		}
	});
}
BENCHMARK(BM_giong_spawn_join);

void *empty_thread(void *arg)
{
	return arg;
}

void BM_pthread_create_join(benchmark::State &state)
{
	for (auto _ : state) {
		pthread_t th;
		void *r;

		pthread_create(&th, nullptr, empty_thread, nullptr);
		pthread_join(th, &r);
		benchmark::DoNotOptimize(r);
	}
}
BENCHMARK(BM_pthread_create_join)->UseRealTime();

/* -------------------------------------------- no-op round trip, 64/batch */

constexpr int kBatch = 64;

/* 64 long-lived tasks; each round wakes them all, each submits one no-op
 * and parks until its completion. No spawn in the timed loop. */
struct NopPool {
	struct giong_waitq start, done;
	int round_left;
	bool stop;
};

intptr_t nop_worker(void *arg)
{
	auto *p = static_cast<NopPool *>(arg);

	for (;;) {
		giong_waitq_wait(&p->start, 0);
		if (p->stop)
			return 0;
		struct io_uring_sqe *sqe = giong_sqe();
		io_uring_prep_nop(sqe);
		giong_io(sqe);
		if (--p->round_left == 0)
			giong_waitq_wake_one(&p->done, 0);
	}
}

/* Time rounds of the kBatch tasks @t (parked on p.start, each doing one operation per
 * round), then stop and join them: items, and enters and SQEs per operation. */
void measure_batch(benchmark::State &st, NopPool &p, struct giong_task **t)
{
	struct giong_stats a, b;

	giong_yield(); /* all parked on start */
	giong_stats(&a);
	for (auto _ : st) {
		p.round_left = kBatch;
		giong_waitq_wake_all(&p.start, 0);
		giong_waitq_wait(&p.done, 0);
	}
	giong_stats(&b);
	p.stop = true;
	giong_waitq_wake_all(&p.start, 0);
	for (int i = 0; i < kBatch; i++)
		giong_join(t[i], nullptr);
	double ops = double(st.iterations()) * kBatch;
	st.SetItemsProcessed(int64_t(ops));
	st.counters["enters_per_op"] = double(b.enters - a.enters) / ops;
	st.counters["sqes_per_op"] = double(b.sqes_submitted - a.sqes_submitted) / ops;
}

void BM_giong_nop_batch64(benchmark::State &state)
{
	on_giong(state, [](benchmark::State &st) {
		NopPool p{};
		struct giong_task *t[kBatch];

		giong_waitq_init(&p.start);
		giong_waitq_init(&p.done);
		for (int i = 0; i < kBatch; i++)
			giong_spawn(nop_worker, &p, &t[i]);
		measure_batch(st, p, t);
	});
}
BENCHMARK(BM_giong_nop_batch64);

/* The same batch through core's next-turn queue instead of the ring: each
 * task queues a callback (giong_call_soon(), no SQE) that wakes it, and
 * parks until it runs. What net's and tls's "tell the reader from the loop"
 * paid with a no-op SQE before. */
struct SoonTask {
	struct giong_soon soon;
	struct giong_waitq woken;
	NopPool *p;
};

void soon_wake(struct giong_soon *, void *ctx)
{
	giong_waitq_wake_one(&static_cast<SoonTask *>(ctx)->woken, 0);
}

intptr_t soon_worker(void *arg)
{
	auto *t = static_cast<SoonTask *>(arg);

	for (;;) {
		giong_waitq_wait(&t->p->start, 0);
		if (t->p->stop)
			return 0;
		giong_call_soon(&t->soon, soon_wake, t);
		giong_waitq_wait(&t->woken, 0);
		if (--t->p->round_left == 0)
			giong_waitq_wake_one(&t->p->done, 0);
	}
}

void BM_giong_call_soon_batch64(benchmark::State &state)
{
	on_giong(state, [](benchmark::State &st) {
		NopPool p{};
		SoonTask ts[kBatch] = {};
		struct giong_task *t[kBatch];

		giong_waitq_init(&p.start);
		giong_waitq_init(&p.done);
		for (int i = 0; i < kBatch; i++) {
			ts[i].p = &p;
			giong_waitq_init(&ts[i].woken);
			giong_spawn(soon_worker, &ts[i], &t[i]);
		}
		measure_batch(st, p, t);
	});
}
BENCHMARK(BM_giong_call_soon_batch64);

/* The ceiling: the same batch with bare liburing, one submit_and_wait. */
void BM_liburing_nop_batch64(benchmark::State &state)
{
	struct io_uring ring;
	struct io_uring_params p = {};

	p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	if (io_uring_queue_init_params(256, &ring, &p)) {
		state.SkipWithError("io_uring_queue_init");
		return;
	}
	for (auto _ : state) {
		struct io_uring_cqe *cqe;
		unsigned head, n = 0;

		for (int i = 0; i < kBatch; i++)
			io_uring_prep_nop(io_uring_get_sqe(&ring));
		io_uring_submit_and_wait(&ring, kBatch);
		io_uring_for_each_cqe(&ring, head, cqe)
			n++;
		io_uring_cq_advance(&ring, n);
	}
	state.SetItemsProcessed(int64_t(state.iterations()) * kBatch);
	io_uring_queue_exit(&ring);
}
BENCHMARK(BM_liburing_nop_batch64);

/* ------------------------------------------- channel across two workers */

constexpr long kMessages = 200000;

struct ChanRun {
	struct giong_chan *ch;
	std::atomic<int> ready;
	long received;
};

void chan_main(unsigned w, void *arg)
{
	auto *r = static_cast<ChanRun *>(arg);

	if (w == 0) {
		void *m;

		giong_chan_new(1024, &r->ch);
		r->ready.store(1);
		while (r->received < kMessages && giong_chan_recv(r->ch, &m) == 0)
			r->received++;
		return;
	}
	while (!r->ready.load())
		giong_yield();
	for (long i = 0; i < kMessages; i++)
		giong_chan_send(r->ch, (void *)(i + 1));
}

void BM_chan_cross_worker(benchmark::State &state)
{
	for (auto _ : state) {
		struct giong_config c;
		struct giong_runtime *rt;
		ChanRun r{};

		giong_config_init(&c);
		c.workers = 2;
		if (giong_runtime_new(&c, &rt)) {
			state.SkipWithError("runtime");
			return;
		}
		giong_runtime_run(rt, chan_main, &r);
		giong_runtime_free(rt);
		giong_chan_free(r.ch);
		if (r.received != kMessages)
			state.SkipWithError("lost messages");
	}
	state.SetItemsProcessed(int64_t(state.iterations()) * kMessages);
}
BENCHMARK(BM_chan_cross_worker)->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace

BENCHMARK_MAIN();
