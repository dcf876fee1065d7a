/* SPDX-License-Identifier: MIT */
/*
 * core_tour - fibers, timeouts, cancellation, channels and shutdown in one
 * small program. Built as build/bin/core_tour; run by the test suite too.
 */
#include <errno.h>
#include <stdio.h>

#include <giong/core.h>

static struct giong_chan *inbox; /* received on worker 0 */

/* A task that waits longer than its caller allows. */
static intptr_t slow(void *arg)
{
	(void)arg;
	return giong_sleep_ms(10000); /* -ECANCELED when cancelled */
}

/* Runs on worker 1: sends three messages to worker 0. */
static intptr_t producer(void *arg)
{
	(void)arg;
	for (intptr_t i = 1; i <= 3; i++)
		giong_chan_send(inbox, (void *)i);
	return 0;
}

static void worker_main(unsigned worker, void *arg)
{
	int *status = arg;

	if (worker != 0)
		return; /* worker 1 only runs what it is sent */

	/* 1. A deadline scope: any parked call in it returns -ETIMEDOUT. */
	uint64_t saved = giong_deadline_in(20);
	int r = giong_sleep_ms(1000);
	giong_deadline_restore(saved);
	printf("sleep under a 20 ms deadline: %s\n", giong_err_name(r));
	if (r != -ETIMEDOUT)
		*status = 1;

	/* 2. Cancelling a task: its parked call returns -ECANCELED, and so
	 *    does joining it. */
	struct giong_task *t;
	intptr_t v;
	giong_spawn(slow, NULL, &t);
	giong_yield(); /* let it start and park */
	giong_task_cancel(t);
	r = giong_join(t, &v);
	printf("join of a cancelled task: %s\n", giong_err_name(r));
	if (r != -ECANCELED)
		*status = 1;

	/* 3. A channel across workers. */
	giong_chan_new(16, &inbox);
	giong_spawn_on(1, producer, NULL);
	for (int i = 0; i < 3; i++) {
		void *m;

		giong_chan_recv(inbox, &m);
		printf("message %ld from worker 1\n", (long)(intptr_t)m);
	}
	giong_chan_free(inbox);

	/* 4. Shutdown: waiters for new work return GIONG_ESHUTDOWN. */
	giong_shutdown();
	r = giong_shutdown_wait();
	printf("after giong_shutdown(): %s\n", giong_err_name(r));
}

int main(void)
{
	struct giong_config cfg;
	struct giong_runtime *rt;
	int status = 0, r;

	giong_config_init(&cfg);
	cfg.workers = 2;
	r = giong_runtime_new(&cfg, &rt);
	if (r) {
		fprintf(stderr, "core_tour: %s\n", giong_strerror(r));
		return r == GIONG_EURING_DISABLED || r == GIONG_ENOURING ? 77 : 1;
	}
	r = giong_runtime_run(rt, worker_main, &status);
	giong_runtime_free(rt);
	return r || status;
}
