// SPDX-License-Identifier: MIT
/*
 * bench_timer.cc - timing wheel vs an indexed binary heap.
 *
 * ArmCancel: arm one timer and cancel it again while N others are live, the
 * common case of an I/O timeout that is cancelled when the I/O completes.
 * Churn: re-arm a random live timer (cancel from an arbitrary position, then
 * insert), the case where a heap pays its O(log n) sift.
 * Delays are uniform in 1 ms .. 60 s. IdleJump: one advance across 30 idle
 * days that fires a single timer.
 *
 *   gcc -O2 -std=c17 -D_GNU_SOURCE -c libgiong-core/src/timer_wheel.c -o /tmp/timer_wheel.o
 *   g++ -O2 -std=c++17 -Ilibgiong-core/src bench/micro/bench_timer.cc \
 *       /tmp/timer_wheel.o -lbenchmark -lpthread -o /tmp/bench_timer
 */
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

extern "C" {
#include "timer_wheel.h"
}

namespace {

constexpr uint64_t kNow = 1'000'000'007;	// unaligned start
constexpr uint64_t kMaxDelay = 60'000;
constexpr size_t kDelays = 1 << 16;		// power of two: cheap wrap

std::vector<uint64_t> make_delays(uint64_t seed)
{
	std::mt19937_64 rng(seed);
	std::uniform_int_distribution<uint64_t> d(1, kMaxDelay);
	std::vector<uint64_t> v(kDelays);

	for (auto &x : v)
		x = d(rng);
	return v;
}

void noop(struct giong__timer *) {}

/* ---- indexed binary min-heap: O(log n) insert and cancel ---- */

struct HeapTimer {
	uint64_t expires;
	uint64_t seq;		// FIFO among equal expiries, like the wheel
	size_t idx;		// position in the heap; SIZE_MAX when not armed
};

class Heap {
public:
	explicit Heap(size_t cap) { a_.reserve(cap); }

	void arm(HeapTimer *t, uint64_t expires)
	{
		cancel(t);
		t->expires = expires;
		t->seq = seq_++;
		t->idx = a_.size();
		a_.push_back(t);
		up(t->idx);
	}

	void cancel(HeapTimer *t)
	{
		size_t i = t->idx;

		if (i == SIZE_MAX)
			return;
		t->idx = SIZE_MAX;
		HeapTimer *last = a_.back();
		a_.pop_back();
		if (i == a_.size())
			return;
		a_[i] = last;
		last->idx = i;
		// The moved element may belong above or below its new place.
		if (i > 0 && less(a_[i], a_[(i - 1) / 2]))
			up(i);
		else
			down(i);
	}

	size_t size() const { return a_.size(); }

private:
	static bool less(const HeapTimer *x, const HeapTimer *y)
	{
		return x->expires < y->expires ||
		       (x->expires == y->expires && x->seq < y->seq);
	}

	void set(size_t i, HeapTimer *t)
	{
		a_[i] = t;
		t->idx = i;
	}

	void up(size_t i)
	{
		HeapTimer *t = a_[i];

		while (i > 0) {
			size_t p = (i - 1) / 2;

			if (!less(t, a_[p]))
				break;
			set(i, a_[p]);
			i = p;
		}
		set(i, t);
	}

	void down(size_t i)
	{
		HeapTimer *t = a_[i];
		size_t n = a_.size();

		for (;;) {
			size_t c = 2 * i + 1;

			if (c >= n)
				break;
			if (c + 1 < n && less(a_[c + 1], a_[c]))
				c++;
			if (!less(a_[c], t))
				break;
			set(i, a_[c]);
			i = c;
		}
		set(i, t);
	}

	std::vector<HeapTimer *> a_;
	uint64_t seq_ = 0;
};

/* ---- arm + cancel one timer with N live ---- */

void BM_WheelArmCancel(benchmark::State &state)
{
	const size_t n = static_cast<size_t>(state.range(0));
	auto delays = make_delays(1);
	auto w = std::make_unique<giong__wheel>();
	std::vector<giong__timer> live(n);
	giong__timer t;
	size_t i = 0;

	giong__wheel_init(w.get(), kNow);
	for (size_t k = 0; k < n; k++) {
		giong__timer_init(&live[k], noop);
		giong__wheel_arm(w.get(), &live[k], kNow + delays[k % kDelays]);
	}
	giong__timer_init(&t, noop);
	for (auto _ : state) {
		giong__wheel_arm(w.get(), &t, kNow + delays[i++ & (kDelays - 1)]);
		giong__wheel_cancel(w.get(), &t);
		benchmark::ClobberMemory();
	}
	state.SetItemsProcessed(state.iterations());
}

void BM_HeapArmCancel(benchmark::State &state)
{
	const size_t n = static_cast<size_t>(state.range(0));
	auto delays = make_delays(1);
	Heap h(n + 1);
	std::vector<HeapTimer> live(n);
	HeapTimer t{0, 0, SIZE_MAX};
	size_t i = 0;

	for (size_t k = 0; k < n; k++) {
		live[k].idx = SIZE_MAX;
		h.arm(&live[k], kNow + delays[k % kDelays]);
	}
	for (auto _ : state) {
		h.arm(&t, kNow + delays[i++ & (kDelays - 1)]);
		h.cancel(&t);
		benchmark::ClobberMemory();
	}
	state.SetItemsProcessed(state.iterations());
}

/* ---- re-arm a random live timer ---- */

std::vector<uint32_t> make_picks(size_t n)
{
	std::mt19937_64 rng(2);
	std::uniform_int_distribution<size_t> d(0, n - 1);
	std::vector<uint32_t> v(kDelays);

	for (auto &x : v)
		x = static_cast<uint32_t>(d(rng));
	return v;
}

void BM_WheelChurn(benchmark::State &state)
{
	const size_t n = static_cast<size_t>(state.range(0));
	auto delays = make_delays(1);
	auto picks = make_picks(n);
	auto w = std::make_unique<giong__wheel>();
	std::vector<giong__timer> live(n);
	size_t i = 0;

	giong__wheel_init(w.get(), kNow);
	for (size_t k = 0; k < n; k++) {
		giong__timer_init(&live[k], noop);
		giong__wheel_arm(w.get(), &live[k], kNow + delays[k % kDelays]);
	}
	for (auto _ : state) {
		size_t j = i++ & (kDelays - 1);

		giong__wheel_arm(w.get(), &live[picks[j]], kNow + delays[j]);
		benchmark::ClobberMemory();
	}
	state.SetItemsProcessed(state.iterations());
}

void BM_HeapChurn(benchmark::State &state)
{
	const size_t n = static_cast<size_t>(state.range(0));
	auto delays = make_delays(1);
	auto picks = make_picks(n);
	Heap h(n);
	std::vector<HeapTimer> live(n);
	size_t i = 0;

	for (size_t k = 0; k < n; k++) {
		live[k].idx = SIZE_MAX;
		h.arm(&live[k], kNow + delays[k % kDelays]);
	}
	for (auto _ : state) {
		size_t j = i++ & (kDelays - 1);

		h.arm(&live[picks[j]], kNow + delays[j]);
		benchmark::ClobberMemory();
	}
	state.SetItemsProcessed(state.iterations());
}

/* ---- one advance over 30 idle days ---- */

void BM_WheelIdleJump30d(benchmark::State &state)
{
	constexpr uint64_t k30d = 30ull * 24 * 3600 * 1000;
	auto w = std::make_unique<giong__wheel>();
	giong__timer t;

	giong__wheel_init(w.get(), kNow);
	giong__timer_init(&t, noop);
	for (auto _ : state) {
		giong__wheel_arm(w.get(), &t, w->now + k30d);
		benchmark::DoNotOptimize(giong__wheel_advance(w.get(), w->now + k30d));
	}
}

} // namespace

BENCHMARK(BM_WheelArmCancel)->Arg(100)->Arg(10'000)->Arg(100'000);
BENCHMARK(BM_HeapArmCancel)->Arg(100)->Arg(10'000)->Arg(100'000);
BENCHMARK(BM_WheelChurn)->Arg(100)->Arg(10'000)->Arg(100'000);
BENCHMARK(BM_HeapChurn)->Arg(100)->Arg(10'000)->Arg(100'000);
BENCHMARK(BM_WheelIdleJump30d);

BENCHMARK_MAIN();
