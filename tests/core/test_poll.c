/* SPDX-License-Identifier: MIT */
/* test_poll.c - giong_poll() on descriptors made elsewhere. */
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "giong_test.h"

struct pst {
	int pfd[2], efd;
	int timeout_ret, pipe_ret, efd_ret, out_ret, bad_ret, dl_ret;
};

static intptr_t late_writer(void *arg)
{
	struct pst *p = arg;
	uint64_t one = 1;

	giong_sleep_ms(5);
	if (write(p->pfd[1], "x", 1) != 1 || write(p->efd, &one, sizeof(one)) != 8)
		return -1;
	return 0;
}

static void poll_main(unsigned w, void *arg)
{
	struct pst *p = arg;
	uint64_t saved;

	(void)w;
	p->timeout_ret = giong_poll(p->pfd[0], POLLIN, 10);
	giong_spawn(late_writer, p, NULL);
	p->pipe_ret = giong_poll(p->pfd[0], POLLIN, -1);
	p->efd_ret = giong_poll(p->efd, POLLIN, 1000);
	p->out_ret = giong_poll(p->pfd[1], POLLOUT, 0);
	p->bad_ret = giong_poll(-1, POLLIN, 0);
	/* The task's deadline, not the poll's own timeout: -ETIMEDOUT. */
	saved = giong_deadline_in(10);
	p->dl_ret = giong_poll(p->pfd[1] == 0 ? 0 : p->efd, POLLPRI, 5000);
	giong_deadline_restore(saved);
}

static void test_poll(void **state)
{
	struct giong_config c = gt_config(1);
	struct pst p;

	(void)state;
	assert_int_equal(pipe(p.pfd), 0);
	p.efd = eventfd(0, 0);
	gt_run(&c, poll_main, &p, NULL);
	assert_int_equal(p.timeout_ret, 0);
	assert_true(p.pipe_ret & POLLIN);
	assert_true(p.efd_ret & POLLIN);
	assert_true(p.out_ret & POLLOUT);
	assert_int_equal(p.bad_ret, -EINVAL);
	assert_int_equal(p.dl_ret, -ETIMEDOUT);
	assert_int_equal(giong_poll(p.pfd[0], POLLIN, 0), GIONG_ENOTWORKER);
	close(p.pfd[0]);
	close(p.pfd[1]);
	close(p.efd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_poll),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
