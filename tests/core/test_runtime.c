/* SPDX-License-Identifier: MIT */
/* test_runtime.c - workers, block_on, counters, errors and their text, and
 * the runtime calls' refusals. */
#include <stdatomic.h>

#include "giong_test.h"

struct wk {
	_Atomic unsigned seen_mask;
	_Atomic int count_ok;
	_Atomic int tier_ok;
};

static void wk_main(unsigned w, void *arg)
{
	struct wk *k = arg;

	atomic_fetch_or(&k->seen_mask, 1u << w);
	if (giong_worker_index() == (int)w && giong_worker_count() == 2)
		atomic_fetch_add(&k->count_ok, 1);
	if (giong_ring_tier() >= GIONG_TIER_DEFER && giong_ring_tier() <= GIONG_TIER_EPOLL)
		atomic_fetch_add(&k->tier_ok, 1);
}

static void test_each_worker_runs_main(void **state)
{
	struct giong_config c = gt_config(2);
	struct giong_runtime *rt;
	struct giong_stats st;
	struct wk k = {0};

	(void)state;
	c.pin_cores = true;
	assert_int_equal(giong_runtime_new(&c, &rt), 0);
	assert_int_equal(giong_runtime_stats(rt, 0, &st), -EBUSY);
	assert_int_equal(giong_runtime_run(rt, wk_main, &k), 0);
	assert_int_equal(atomic_load(&k.seen_mask), 3u);
	assert_int_equal(atomic_load(&k.count_ok), 2);
	assert_int_equal(atomic_load(&k.tier_ok), 2);
	for (unsigned i = 0; i < 2; i++) {
		assert_int_equal(giong_runtime_stats(rt, i, &st), 0);
		assert_true(st.ticks >= 1);
		assert_int_equal(st.fibers_live, 0);
		assert_int_equal(st.ops_live, 0);
		assert_int_equal(st.recvbufs_total, c.recv_buffers);
	}
	assert_int_equal(giong_runtime_stats(rt, 2, &st), -EINVAL);
	assert_int_equal(giong_runtime_free(rt), 0);
}

static void bo_main(unsigned w, void *arg)
{
	*(int *)arg = (int)w + 100;
}

static void test_block_on(void **state)
{
	int v = 0;

	(void)state;
	assert_int_equal(giong_block_on(bo_main, &v), 0);
	assert_int_equal(v, 100);
	assert_int_equal(giong_block_on(NULL, NULL), -EINVAL);
}

static void test_errors_have_text(void **state)
{
	(void)state;
	assert_string_equal(giong_err_name(-ENOENT), "ENOENT");
	assert_string_equal(giong_err_name(GIONG_ESHUTDOWN), "GIONG_ESHUTDOWN");
	assert_string_equal(giong_err_name(-9999), "unknown");
	assert_string_equal(giong_strerror(0), "success");
	assert_non_null(strstr(giong_strerror(-ECONNRESET), "reset"));
	assert_non_null(strstr(giong_strerror(ECONNRESET), "reset"));
	assert_non_null(strstr(giong_strerror(GIONG_EURING_DISABLED), "io_uring_disabled"));
	assert_string_equal(giong_strerror(-99999), "unknown error");
	assert_non_null(giong_version());
	assert_string_equal(giong_version(), GIONG_VERSION_STRING);
}

/* ---- refusals: off a worker, bad arguments, a full atexit table --------- */

struct refuse {
	struct giong_runtime *rt;
	int free_running, atexit_null, atexit_full, registered;
	int ran[17], nran;
};

static struct refuse *refuse_seen;

static void refuse_hook(void *ctx)
{
	refuse_seen->ran[refuse_seen->nran++] = (int)(intptr_t)ctx;
}

static void refuse_main(unsigned w, void *arg)
{
	struct refuse *r = arg;
	int ret = 0;

	(void)w;
	r->free_running = giong_runtime_free(r->rt); /* its own runtime, running */
	r->atexit_null = giong_worker_atexit(NULL, NULL);
	/* At most 16 per worker: the 17th (or earlier, if core's own took some)
	 * is refused, and the ones taken run at the worker's end, last first. */
	for (int i = 0; i < 17 && ret == 0; i++) {
		ret = giong_worker_atexit(refuse_hook, (void *)(intptr_t)i);
		if (ret == 0)
			r->registered++;
	}
	r->atexit_full = ret;
}

static void test_refusals(void **state)
{
	struct giong_config c = gt_config(1);
	struct giong_stats st;
	struct refuse r;

	(void)state;
	/* Off any worker. */
	assert_int_equal(giong_shutdown_wait(), GIONG_ENOTWORKER);
	assert_int_equal(giong_stats(NULL), -EINVAL);
	assert_int_equal(giong_stats(&st), GIONG_ENOTWORKER);
	assert_int_equal(giong_worker_atexit(NULL, NULL), -EINVAL);
	assert_int_equal(giong_worker_atexit(refuse_hook, NULL), GIONG_ENOTWORKER);
	assert_int_equal(giong_worker_index(), -1);
	assert_int_equal(giong_worker_count(), GIONG_ENOTWORKER);
	assert_int_equal(giong_ring_tier(), GIONG_ENOTWORKER);
	assert_false(giong_is_shutting_down());
	assert_int_equal(giong_runtime_stats(NULL, 0, &st), -EINVAL);
	assert_int_equal(giong_runtime_shutdown(NULL), -EINVAL);

	memset(&r, 0, sizeof(r));
	refuse_seen = &r;
	assert_int_equal(giong_runtime_new(&c, &r.rt), 0);
	assert_int_equal(giong_runtime_stats(r.rt, 0, NULL), -EINVAL);
	assert_int_equal(giong_runtime_run(r.rt, refuse_main, &r), 0);
	assert_int_equal(r.free_running, -EBUSY);
	assert_int_equal(r.atexit_null, -EINVAL);
	assert_int_equal(r.atexit_full, -ENOSPC);
	assert_true(r.registered >= 1 && r.registered <= 16);
	assert_int_equal(r.nran, r.registered);
	for (int i = 0; i < r.nran; i++)
		assert_int_equal(r.ran[i], r.registered - 1 - i);
	assert_int_equal(giong_runtime_free(r.rt), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_worker_runs_main),
		cmocka_unit_test(test_block_on),
		cmocka_unit_test(test_errors_have_text),
		cmocka_unit_test(test_refusals),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
