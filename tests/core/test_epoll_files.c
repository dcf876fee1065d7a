/* SPDX-License-Identifier: MIT */
/*
 * test_epoll_files.c - the epoll tier's calls that may block run on core's
 * helper threads (issue 27): with one helper, held by an open of a FIFO with
 * no reader, more calls queue and none is lost; a queued call whose
 * deadline passes never runs (-ETIMEDOUT, nothing created); the held open,
 * cancelled while the helper is inside it, is interrupted (-ECANCELED) and
 * leaves no descriptor; the worker keeps running tasks meanwhile.
 */
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "giong_test.h"

#define QUEUED 16

struct files;

struct mk {
	struct files *f;
	int i;
};

struct files {
	char dir[64];
	char link[64]; /* /proc/self/fd/N of the FIFO: never a cached lookup */
	int done;      /* mkdirs completed */
	unsigned ticks;
	struct mk mk[QUEUED];
};

/* Blocks its helper until cancelled: the FIFO has no reader. */
static intptr_t fifo_writer(void *arg)
{
	return gt_io_open(((struct files *)arg)->link, O_WRONLY | O_CLOEXEC);
}

/* Always a pool call (mkdir is never answered inline). */
static intptr_t mkdir_task(void *arg)
{
	struct mk *m = arg;
	struct files *f = m->f;
	struct io_uring_sqe *sqe = giong_sqe();
	char path[96];
	int r;

	snprintf(path, sizeof(path), "%s/d%d", f->dir, m->i);
	io_uring_prep_mkdirat(sqe, AT_FDCWD, path, 0700);
	r = giong_io(sqe);
	if (r == 0)
		f->done++;
	return r;
}

static intptr_t ticker(void *arg)
{
	struct files *f = arg;

	for (int i = 0; i < 20; i++) {
		giong_sleep_ms(1);
		f->ticks++;
	}
	return 0;
}

static void files_main(unsigned w, void *arg)
{
	struct files *f = arg;
	struct giong_task *held, *queued[QUEUED], *tick;
	struct io_uring_sqe *sqe;
	char path[96];
	intptr_t res = 0;
	uint64_t saved;
	int r;

	(void)w;
	if (!gt_check_int_equal(giong_spawn(fifo_writer, f, &held), 0))
		return;
	giong_sleep_ms(20); /* the only helper is inside the open */
	gt_check_int_equal(giong_spawn(ticker, f, &tick), 0);

	/* Queued behind it, with a deadline: cancelled before it runs. */
	snprintf(path, sizeof(path), "%s/never", f->dir);
	saved = giong_deadline_in(30);
	sqe = giong_sqe();
	io_uring_prep_mkdirat(sqe, AT_FDCWD, path, 0700);
	r = giong_io(sqe);
	giong_deadline_restore(saved);
	gt_check_int_equal(r, -ETIMEDOUT);
	gt_check_int_equal(access(path, F_OK), -1);

	/* More queued calls: none runs until the helper is free, none lost. */
	for (int i = 0; i < QUEUED; i++) {
		f->mk[i] = (struct mk){f, i};
		gt_check_int_equal(giong_spawn(mkdir_task, &f->mk[i], &queued[i]), 0);
	}
	giong_sleep_ms(10);
	gt_check_int_equal(f->done, 0);

	/* The worker was not blocked: the ticker ran its turns. */
	gt_check_int_equal(giong_join(tick, NULL), 0);
	gt_check_int_equal(f->ticks, 20);

	/* The running open is interrupted by its cancel. */
	gt_check_int_equal(giong_task_cancel(held), 0);
	gt_check_int_equal(giong_join(held, &res), -ECANCELED);
	for (int i = 0; i < QUEUED; i++) {
		gt_check_int_equal(giong_join(queued[i], &res), 0);
		gt_check_int_equal(res, 0);
	}
	gt_check_int_equal(f->done, QUEUED);
}

static void test_pool_of_one(void **state)
{
	struct giong_config c = gt_config(1);
	struct files f;
	char fifo[96], path[96];
	int pfd, fds_before = gt_count_fds();

	(void)state;
	memset(&f, 0, sizeof(f));
	snprintf(f.dir, sizeof(f.dir), "/tmp/giong-epoll-files-%d", (int)getpid());
	assert_int_equal(mkdir(f.dir, 0700), 0);
	snprintf(fifo, sizeof(fifo), "%s/fifo", f.dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	pfd = open(fifo, O_PATH | O_CLOEXEC);
	assert_true(pfd >= 0);
	snprintf(f.link, sizeof(f.link), "/proc/self/fd/%d", pfd);
	c.ring_tier = GIONG_TIER_EPOLL;
	setenv("GIONG_BLOCKING_THREADS", "1", 1);
	gt_run(&c, files_main, &f, NULL);
	unsetenv("GIONG_BLOCKING_THREADS");
	close(pfd);
	unlink(fifo);
	for (int i = 0; i < QUEUED; i++) {
		snprintf(path, sizeof(path), "%s/d%d", f.dir, i);
		rmdir(path);
	}
	assert_int_equal(rmdir(f.dir), 0);
	assert_int_equal(gt_count_fds(), fds_before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_of_one),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
