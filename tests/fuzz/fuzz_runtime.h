/* SPDX-License-Identifier: MIT */
/*
 * fuzz_runtime.h - one one-worker runtime that serves every input of a
 * socket-level fuzz target, on a thread of its own.
 *
 * A fresh runtime per input spent most of each input setting up a ring, a
 * thread and its stacks (fuzz_http2_server: 331 inputs a second under ASan,
 * against about 1,000 with one runtime for all). fuzz_runtime_start(), from
 * LLVMFuzzerInitialize(), starts the thread; fuzz_runtime_run(), from
 * LLVMFuzzerTestOneInput(), hands it an input through an eventfd and waits
 * on a semaphore until the worker's main task has run @fn(input) to its end.
 * The target's @fn must leave nothing behind (join every task it spawned,
 * close what it opened): the next input runs on the same worker, and the
 * target's own checks after each input (nghttp2's memory count back at 0)
 * would catch what one left. The thread lives until libFuzzer's exit().
 */
#ifndef GIONG_FUZZ_RUNTIME_H
#define GIONG_FUZZ_RUNTIME_H

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <giong/core.h>

#include "fuzz_util.h"

typedef void (*fuzz_input_fn)(void *input);

static int fuzz_input_ready = -1;        /* eventfd: libFuzzer's thread -> the worker */
static sem_t fuzz_input_done;            /* the worker -> libFuzzer's thread */
static void *volatile fuzz_input;        /* the input handed over (the eventfd orders it) */
static fuzz_input_fn fuzz_input_run;     /* the target's @fn */
static unsigned fuzz_runtime_stack_pool; /* giong_config.stack_pool */

/* The worker's main task: each input in turn, for as long as the process lives. */
static void fuzz_runtime_main(unsigned worker, void *arg)
{
	uint64_t n;

	(void)worker;
	(void)arg;
	for (;;) {
		CHECK(giong_poll(fuzz_input_ready, POLLIN, -1) & POLLIN);
		CHECK(read(fuzz_input_ready, &n, sizeof(n)) == (ssize_t)sizeof(n));
		fuzz_input_run(fuzz_input);
		CHECK(sem_post(&fuzz_input_done) == 0);
	}
}

static void *fuzz_runtime_thread(void *arg)
{
	struct giong_config c;
	struct giong_runtime *rt;

	(void)arg;
	giong_config_init(&c);
	c.workers = 1;
	c.ring_entries = 64;
	c.recv_buffers = 32;
	c.stack_pool = fuzz_runtime_stack_pool;
	c.shutdown_grace_ms = 1;
	CHECK(giong_runtime_new(&c, &rt) == 0);
	CHECK(giong_runtime_run(rt, fuzz_runtime_main, NULL) == 0);
	return NULL; /* not reached: fuzz_runtime_main() never returns */
}

/* Start the runtime's thread; every input will run as @fn(input) on its worker, whose
 * stack pool keeps @stack_pool stacks. Traps on failure. */
static inline void fuzz_runtime_start(fuzz_input_fn fn, unsigned stack_pool)
{
	pthread_t t;

	fuzz_input_run = fn;
	fuzz_runtime_stack_pool = stack_pool;
	fuzz_input_ready = eventfd(0, EFD_CLOEXEC);
	CHECK(fuzz_input_ready >= 0);
	CHECK(sem_init(&fuzz_input_done, 0, 0) == 0);
	CHECK(pthread_create(&t, NULL, fuzz_runtime_thread, NULL) == 0);
	CHECK(pthread_detach(t) == 0);
}

/* Run @input on the worker and return when the target's @fn returned. */
static inline void fuzz_runtime_run(void *input)
{
	uint64_t one = 1;

	fuzz_input = input;
	CHECK(write(fuzz_input_ready, &one, sizeof(one)) == (ssize_t)sizeof(one));
	while (sem_wait(&fuzz_input_done) != 0)
		CHECK(errno == EINTR);
}

#endif /* GIONG_FUZZ_RUNTIME_H */
