/* SPDX-License-Identifier: MIT */
/*
 * test_resolve_gai.c - giong_resolve() as built without c-ares: from a task,
 * getaddrinfo() runs on core's helper threads (giong_offload()), so the
 * worker's other tasks run while it waits; a cancel waits for it and keeps
 * its answer; off a task (a plain thread, a completion callback) it runs
 * on the calling thread, as before; getaddrinfo()'s errors map as before
 * (EAI_SYSTEM with the helper's errno). On the default tier and the epoll
 * tier.
 *
 * CI builds with c-ares, so this file compiles resolve.c itself with
 * GIONG_RESOLVER_CARES undefined and getaddrinfo() replaced by one that
 * records its thread, answers some names itself, and can be held: the
 * library's own resolve.o is then never linked in (every symbol of it that
 * is used is defined here first), and only names of the test's own reach
 * it (no network: each ends in a numeric lookup or an answer made here).
 */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#define BOUND_MS 5000

static pthread_t gai_thread; /* the last caller of getaddrinfo() */
static atomic_int gai_calls, gai_held, gai_release;

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* getaddrinfo() as resolve.c sees it here: the test's names, then the real
 * one on a numeric address. */
static int test_getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
			    struct addrinfo **res)
{
	gai_thread = pthread_self();
	atomic_fetch_add(&gai_calls, 1);
	if (!strcmp(node, "held.giong.test")) {
		/* Until the test says so, through the cancel's signals too. */
		atomic_store(&gai_held, 1);
		for (int i = 0; i < BOUND_MS && !atomic_load(&gai_release); i++)
			nap_ms(1);
		node = "127.0.0.2";
	} else if (!strcmp(node, "v4.giong.test")) {
		node = "127.0.0.3";
	} else if (!strcmp(node, "missing.giong.test")) {
		return EAI_NONAME;
	} else if (!strcmp(node, "again.giong.test")) {
		return EAI_AGAIN;
	} else if (!strcmp(node, "system.giong.test")) {
		errno = EMFILE; /* the helper's own errno: it must be read there */
		return EAI_SYSTEM;
	} else {
		return EAI_FAIL; /* no name of the system's is ever looked up */
	}
	return getaddrinfo(node, service, hints, res);
}

#define getaddrinfo test_getaddrinfo
#undef GIONG_RESOLVER_CARES
#include "resolve.c"
#undef getaddrinfo

#include "net_test.h"

/* The answer is @text with @port. */
static bool is(const struct giong_addr *a, const char *text, unsigned port)
{
	char buf[GIONG_ADDR_STRLEN], want[GIONG_ADDR_STRLEN];

	snprintf(want, sizeof(want), "%s:%u", text, port);
	return giong_addr_format(a, buf, sizeof(buf)) > 0 && !strcmp(buf, want);
}

/* ----------------------------------------------------- from a task */

struct names {
	pthread_t worker;
	bool off_worker, v4_ok, held_ok, cancelled_ok, callback_inline;
	int v4, missing, again, system, wrong_family, local, local_calls;
	int held, ticks, cancelled, cancel_join, in_callback;
	atomic_int held_returned;
	struct giong_addr a[4], h[4], c[4];
	struct giong_soon soon;
};

static intptr_t held_task(void *arg)
{
	struct names *n = arg;

	n->held = giong_resolve("held.giong.test", 443, AF_UNSPEC, n->h, 4);
	atomic_store(&n->held_returned, 1);
	return 0;
}

static intptr_t cancelled_task(void *arg)
{
	struct names *n = arg;

	n->cancelled = giong_resolve("held.giong.test", 80, AF_INET, n->c, 4);
	atomic_store(&n->held_returned, 1);
	return 0;
}

static void in_callback(struct giong_soon *s, void *ctx)
{
	struct names *n = ctx;
	struct giong_addr a;

	(void)s;
	n->in_callback = giong_resolve("v4.giong.test", 1, AF_INET, &a, 1);
	n->callback_inline = pthread_equal(gai_thread, pthread_self());
}

/* Wait, from a task, for *@flag (at most BOUND_MS). */
static bool task_wait(atomic_int *flag)
{
	for (int i = 0; i < BOUND_MS && !atomic_load(flag); i++)
		giong_sleep_ms(1);
	return atomic_load(flag);
}

static void names_main(unsigned w, void *arg)
{
	struct names *n = arg;
	struct giong_task *t;
	int calls;

	(void)w;
	n->worker = pthread_self();
	n->v4 = giong_resolve("v4.giong.test", 8080, AF_UNSPEC, n->a, 4);
	n->v4_ok = n->v4 == 1 && is(&n->a[0], "127.0.0.3", 8080);
	n->off_worker = !pthread_equal(gai_thread, n->worker);
	n->missing = giong_resolve("missing.giong.test", 80, AF_UNSPEC, n->a, 4);
	n->again = giong_resolve("again.giong.test", 80, AF_UNSPEC, n->a, 4);
	n->system = giong_resolve("system.giong.test", 80, AF_UNSPEC, n->a, 4);
	n->wrong_family = giong_resolve("v4.giong.test", 80, AF_INET6, n->a, 4);
	/* "localhost" is answered without a resolver, in a task as off one. */
	calls = atomic_load(&gai_calls);
	n->local = giong_resolve("localhost", 80, AF_INET, n->a, 4);
	n->local_calls = atomic_load(&gai_calls) - calls;

	/* A held lookup parks its task only: this one keeps its turns. */
	atomic_store(&gai_release, 0);
	atomic_store(&gai_held, 0);
	if (!gt_check_int_equal(giong_spawn(held_task, n, &t), 0))
		return;
	gt_check_true(task_wait(&gai_held));
	for (int i = 0; i < 20; i++) {
		giong_sleep_ms(1);
		n->ticks++;
	}
	gt_check_int_equal(atomic_load(&n->held_returned), 0);
	atomic_store(&gai_release, 1);
	gt_check_int_equal(giong_join(t, NULL), 0);
	n->held_ok = n->held == 1 && is(&n->h[0], "127.0.0.2", 443);

	/* Cancelled while getaddrinfo() runs: the task waits for it, and
	 * the answer is kept. */
	atomic_store(&gai_release, 0);
	atomic_store(&gai_held, 0);
	atomic_store(&n->held_returned, 0);
	if (!gt_check_int_equal(giong_spawn(cancelled_task, n, &t), 0))
		return;
	gt_check_true(task_wait(&gai_held));
	gt_check_int_equal(giong_task_cancel(t), 0);
	for (int i = 0; i < 20; i++)
		giong_sleep_ms(1);
	gt_check_int_equal(atomic_load(&n->held_returned), 0);
	atomic_store(&gai_release, 1);
	n->cancel_join = giong_join(t, NULL);
	n->cancelled_ok = n->cancelled == 1 && is(&n->c[0], "127.0.0.2", 80);

	/* A callback cannot park: getaddrinfo() on the worker's thread. */
	gt_check_int_equal(giong_call_soon(&n->soon, in_callback, n), 0);
	giong_sleep_ms(1);
}

static void run_names(enum giong_ring_tier tier)
{
	struct giong_config c = gt_config(1);
	struct names n;

	memset(&n, 0, sizeof(n));
	c.ring_tier = tier;
	gt_run(&c, names_main, &n, NULL);
	assert_int_equal(n.v4, 1);
	assert_true(n.v4_ok);
	assert_true(n.off_worker);
	assert_int_equal(n.missing, -EHOSTUNREACH);
	assert_int_equal(n.again, -ETIMEDOUT);
	assert_int_equal(n.system, -EMFILE);
	assert_int_equal(n.wrong_family, -EHOSTUNREACH);
	assert_int_equal(n.local, 1);
	assert_int_equal(n.local_calls, 0);
	assert_int_equal(n.ticks, 20);
	assert_int_equal(n.held, 1);
	assert_true(n.held_ok);
	assert_int_equal(n.cancel_join, -ECANCELED);
	assert_int_equal(n.cancelled, 1);
	assert_true(n.cancelled_ok);
	assert_int_equal(n.in_callback, 1);
	assert_true(n.callback_inline);
}

static void test_default_tier(void **state)
{
	(void)state;
	run_names(0);
}

static void test_epoll_tier(void **state)
{
	(void)state;
	run_names(GIONG_TIER_EPOLL);
}

/* ------------------------------------------------ outside any worker */

static void test_off_worker(void **state)
{
	struct giong_addr a[2];

	(void)state;
	assert_string_equal(giong_resolver_backend(), "getaddrinfo");
	/* Blocks the calling thread, as it always did. */
	assert_int_equal(giong_resolve("v4.giong.test", 53, AF_INET, a, 2), 1);
	assert_true(is(&a[0], "127.0.0.3", 53));
	assert_true(pthread_equal(gai_thread, pthread_self()));
	assert_int_equal(giong_resolve("missing.giong.test", 53, AF_UNSPEC, a, 2), -EHOSTUNREACH);
	assert_int_equal(giong_resolver_configure(NULL), GIONG_ENOTWORKER);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_tier),
		cmocka_unit_test(test_epoll_tier),
		cmocka_unit_test(test_off_worker),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
