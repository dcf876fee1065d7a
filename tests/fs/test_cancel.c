/* SPDX-License-Identifier: MIT */
/*
 * test_cancel.c - cancellation, deadlines and descriptor accounting:
 * a read parked on an empty FIFO cancelled with giong_task_cancel() returns
 * -ECANCELED and its buffer is never written afterwards; the same read under
 * a deadline returns -ETIMEDOUT; a read that races its cancel loses nothing;
 * FIFO opens through the ring; every descriptor is closed exactly once
 * (/proc/self/fd), also by cancelled tasks and outside any task.
 */
#include "fs_test.h"

#include <poll.h>

static const char *fifo;
static int wfd = -1; /* our writer end, opened O_RDWR so opens never block */
static struct giong_file *rf;
static char rbuf[64]; /* outlives the reader task: checked after it ended */

/* False (recorded) if the FIFO could not be made and opened. */
static bool fifo_setup(void)
{
	static int n;
	char name[32];

	snprintf(name, sizeof name, "fifo%d", n++);
	fifo = fs_path(name);
	if (!gt_check_int_equal(mkfifo(fifo, 0600), 0))
		return false;
	wfd = open(fifo, O_RDWR | O_CLOEXEC);
	if (!gt_check_true(wfd >= 0))
		return false;
	struct giong_open_options o = {.read = true};
	if (!gt_check_int_equal(giong_file_open(fifo, &o, &rf), 0))
		return false;
	memset(rbuf, 0xaa, sizeof rbuf);
	return true;
}

static void fifo_teardown(void)
{
	gt_check_int_equal(giong_file_close(rf), 0);
	rf = NULL;
	close(wfd);
	wfd = -1;
	unlink(fifo);
}

static bool rbuf_untouched(void)
{
	for (size_t i = 0; i < sizeof rbuf; i++)
		if ((unsigned char)rbuf[i] != 0xaa)
			return false;
	return true;
}

/* What is in the FIFO now (our O_RDWR end reads it without blocking). */
static ssize_t fifo_drain(char *out, size_t len)
{
	struct pollfd p = {.fd = wfd, .events = POLLIN};

	if (poll(&p, 1, 0) != 1)
		return 0;
	return read(wfd, out, len);
}

static intptr_t reader(void *arg)
{
	(void)arg;
	return giong_file_read_at(rf, rbuf, sizeof rbuf, 0);
}

static void body_cancel_read(void)
{
	struct giong_task *t;
	intptr_t res = 0;
	char got[16];

	if (!fifo_setup())
		return;
	if (!gt_check_int_equal(giong_spawn(reader, NULL, &t), 0))
		return;
	gt_check_int_equal(giong_sleep_ms(20), 0); /* the reader is parked in the kernel */
	gt_check_int_equal(giong_task_cancel(t), 0);
	gt_check_int_equal(giong_join(t, &res), -ECANCELED); /* the task was cancelled... */
	/* ...and its read said so: run it again in a task we join normally. */
	if (!gt_check_int_equal(giong_spawn(reader, NULL, &t), 0))
		return;
	gt_check_int_equal(giong_yield(), 0);
	gt_check_int_equal(giong_task_cancel(t), 0);
	gt_check_int_equal(giong_join(t, &res), -ECANCELED);

	/* Data arriving afterwards is not written into the old buffer, and is
	 * still in the FIFO: nothing was consumed by the cancelled reads. */
	gt_check_int_equal(write(wfd, "data", 4), 4);
	gt_check_int_equal(giong_sleep_ms(20), 0);
	gt_check_true(rbuf_untouched());
	gt_check_int_equal(fifo_drain(got, sizeof got), 4);
	gt_check_memory_equal(got, "data", 4);
	fifo_teardown();
}

static void test_cancel_read(void **state)
{
	(void)state;
	fs_run(body_cancel_read);
}

/* The read's own return value, through a task that cancels itself only
 * after the read began: giong_join() reports -ECANCELED for the task, so
 * record the read's result separately. */
static ssize_t read_result;
static intptr_t reader_rec(void *arg)
{
	(void)arg;
	read_result = giong_file_read_at(rf, rbuf, sizeof rbuf, 0);
	return 0;
}

static void body_cancel_read_result(void)
{
	struct giong_task *t;

	if (!fifo_setup())
		return;
	read_result = 12345;
	if (!gt_check_int_equal(giong_spawn(reader_rec, NULL, &t), 0))
		return;
	gt_check_int_equal(giong_sleep_ms(10), 0);
	gt_check_int_equal(giong_task_cancel(t), 0);
	giong_join(t, NULL);
	gt_check_int_equal(read_result, -ECANCELED);
	gt_check_true(rbuf_untouched());

	/* Data and cancel close together: either the read won (its bytes are in
	 * the buffer) or the cancel did (the bytes are still in the FIFO). */
	int won = 0, lost = 0;
	for (int i = 0; i < 50; i++) {
		char got[16];

		memset(rbuf, 0xaa, sizeof rbuf);
		read_result = 12345;
		if (!gt_check_int_equal(giong_spawn(reader_rec, NULL, &t), 0))
			return;
		gt_check_int_equal(giong_sleep_ms(1), 0);
		gt_check_int_equal(write(wfd, "race", 4), 4);
		if (i & 1)
			giong_yield(); /* give the completion a tick to arrive first */
		gt_check_int_equal(giong_task_cancel(t), 0);
		giong_join(t, NULL);
		if (read_result == 4) {
			won++;
			gt_check_memory_equal(rbuf, "race", 4);
			gt_check_int_equal(fifo_drain(got, sizeof got), 0);
		} else {
			lost++;
			gt_check_int_equal(read_result, -ECANCELED);
			gt_check_true(rbuf_untouched());
			gt_check_int_equal(fifo_drain(got, sizeof got), 4);
		}
	}
	print_message("read vs cancel in one tick: read won %d, cancel won %d\n", won, lost);
	fifo_teardown();
}

static void test_cancel_read_result(void **state)
{
	(void)state;
	fs_run(body_cancel_read_result);
}

static void body_deadline(void)
{
	uint64_t t0, saved;
	ssize_t r;

	if (!fifo_setup())
		return;
	t0 = giong_now_ms();
	saved = giong_deadline_in(50);
	r = giong_file_read_at(rf, rbuf, sizeof rbuf, 0);
	giong_deadline_restore(saved);
	gt_check_int_equal(r, -ETIMEDOUT);
	gt_check_true(giong_now_ms() - t0 >= 50);
	gt_check_int_equal(write(wfd, "late", 4), 4);
	gt_check_int_equal(giong_sleep_ms(10), 0);
	gt_check_true(rbuf_untouched());

	/* Data there before the deadline: returned, no timeout. */
	saved = giong_deadline_in(1000);
	r = giong_file_read_at(rf, rbuf, sizeof rbuf, 0);
	giong_deadline_restore(saved);
	gt_check_int_equal(r, 4);
	gt_check_memory_equal(rbuf, "late", 4);

	/* Past the deadline already: nothing is submitted. */
	saved = giong_deadline_set(giong_now_ms());
	gt_check_int_equal(giong_file_read_at(rf, rbuf, sizeof rbuf, 0), -ETIMEDOUT);
	/* ...but close still closes (the deadline does not apply to it). */
	int before = gt_count_fds();
	struct giong_open_options o = {.read = true};
	struct giong_file *f;
	giong_deadline_restore(saved);
	if (!gt_check_int_equal(giong_file_open(fifo, &o, &f), 0))
		return;
	int fd = giong_file_fd(f);
	saved = giong_deadline_set(giong_now_ms());
	gt_check_int_equal(giong_file_close(f), 0);
	giong_deadline_restore(saved);
	gt_check_int_equal(fcntl(fd, F_GETFD), -1);
	gt_check_int_equal(gt_count_fds(), before);
	fifo_teardown();
}

static void test_deadline(void **state)
{
	(void)state;
	fs_run(body_deadline);
}

/* FIFOs and the ring's open: IORING_OP_OPENAT first tries O_NONBLOCK, so a
 * FIFO with no peer does not make the open wait (documented in file.h):
 * write-only fails with -ENXIO, read-only returns at once and its reads wait
 * for a writer. An open by a task already cancelled fails at once. Nothing
 * leaks either way. */
static intptr_t opener(void *arg)
{
	struct giong_open_options o = {.read = true};
	struct giong_file *f = NULL;
	int r;

	giong_task_cancel(giong_task_current());
	r = giong_file_open((const char *)arg, &o, &f);
	if (!r)
		giong_file_close(f);
	return r;
}

static void body_fifo_open(void)
{
	const char *lonely = fs_path("lonely-fifo");
	int before = gt_count_fds();
	struct giong_open_options wo = {.write = true}, ro = {.read = true};
	struct giong_file *f;
	struct giong_task *t;
	uint64_t saved;
	char c;

	gt_check_int_equal(mkfifo(lonely, 0600), 0);
	gt_check_int_equal(giong_file_open(lonely, &wo, &f), -ENXIO);
	if (!gt_check_int_equal(giong_file_open(lonely, &ro, &f), 0))
		return;
	saved = giong_deadline_in(30);
	gt_check_int_equal(giong_file_read_at(f, &c, 1, 0), -ETIMEDOUT);
	giong_deadline_restore(saved);
	gt_check_int_equal(giong_file_close(f), 0);
	gt_check_int_equal(gt_count_fds(), before);

	if (!gt_check_int_equal(giong_spawn(opener, (void *)fs_path("held"), &t), 0))
		return;
	gt_check_int_equal(giong_join(t, NULL), -ECANCELED);
	gt_check_int_equal(gt_count_fds(), before);
}

static void test_fifo_open(void **state)
{
	(void)state;
	fs_put(fs_path("held"), "x", 1);
	fs_run(body_fifo_open);
}

/* A task that holds files when it is cancelled closes them exactly once. */
static int held_fd = -1;
static intptr_t holder(void *arg)
{
	struct giong_open_options o = {.read = true};
	struct giong_file *f, *g;
	int r;

	(void)arg;
	if (giong_file_open(fs_path("held"), &o, &f))
		return -100;
	held_fd = giong_file_fd(f);
	r = (int)giong_file_read_at(rf, rbuf, sizeof rbuf, 0); /* parks until cancelled */
	if (r != -ECANCELED)
		return -101;
	/* Cancelled: further opens fail at once, and close falls back to close(2). */
	if (giong_file_open(fs_path("held"), &o, &g) != -ECANCELED)
		return -102;
	return giong_file_close(f);
}

static void body_fds(void)
{
	int before = gt_count_fds();
	struct giong_file *files[100];
	struct giong_task *t;
	intptr_t res = -1;

	gt_check_int_equal(giong_fs_write(fs_path("held"), "x", 1), 0);
	for (int i = 0; i < 100; i++)
		if (!gt_check_int_equal(giong_file_create(fs_path("held2"), &files[i]), 0))
			return;
	gt_check_int_equal(gt_count_fds(), before + 100);
	for (int i = 0; i < 100; i++)
		gt_check_int_equal(giong_file_close(files[i]), 0);
	gt_check_int_equal(gt_count_fds(), before);
	gt_check_int_equal(giong_file_close(NULL), 0);

	for (int i = 0; i < 200; i++) {
		char *buf = NULL;
		size_t len;

		gt_check_int_equal(giong_fs_read(fs_path("held"), &buf, &len), 0);
		free(buf);
		gt_check_int_equal(giong_fs_read(fs_path("missing"), &buf, &len), -ENOENT);
		gt_check_int_equal(giong_fs_read(fs_scratch, &buf, &len), -EISDIR);
	}
	/* giong_fs_read() queues its close without waiting for it: the
	 * descriptor is gone once the tick's submissions reached the kernel. */
	gt_check_int_equal(giong_yield(), 0);
	gt_check_int_equal(gt_count_fds(), before);

	if (!fifo_setup())
		return;
	before = gt_count_fds();
	if (!gt_check_int_equal(giong_spawn(holder, NULL, &t), 0))
		return;
	gt_check_int_equal(giong_sleep_ms(10), 0);
	gt_check_int_equal(gt_count_fds(), before + 1);
	gt_check_int_equal(giong_task_cancel(t), 0);
	/* The task was cancelled, so join reports that; the count tells the rest. */
	gt_check_int_equal(giong_join(t, &res), -ECANCELED);
	gt_check_int_equal(fcntl(held_fd, F_GETFD), -1);
	gt_check_int_equal(gt_count_fds(), before);
	fifo_teardown();
}

static void test_fds_closed_once(void **state)
{
	(void)state;
	fs_run(body_fds);
}

/* A pipe in O_NONBLOCK mode (a shared stdin can be one): stream reads wait
 * for data (by the ring, or by giong_poll() where the ring says -EAGAIN). */
static struct giong_file *nb_in;
static intptr_t nb_reader(void *arg)
{
	char buf[8] = {0};
	ssize_t n = giong_file_read(nb_in, buf, sizeof buf);

	(void)arg;
	return n == 5 && !memcmp(buf, "hello", 5) ? 0 : n < 0 ? n : -1;
}

static void body_nonblock_pipe(void)
{
	int p[2];
	char c;
	struct giong_task *t;
	intptr_t res = -1;

	if (!gt_check_int_equal(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0) ||
	    !gt_check_int_equal(giong_file_from_fd(p[0], &nb_in), 0))
		return;
	uint64_t saved = giong_deadline_in(20);
	ssize_t r = giong_file_read_at(nb_in, &c, 1, 0); /* kernel-dependent */
	giong_deadline_restore(saved);
	gt_check_true(r == -EAGAIN || r == -ETIMEDOUT);
	if (!gt_check_int_equal(giong_spawn(nb_reader, NULL, &t), 0))
		return;
	gt_check_int_equal(giong_sleep_ms(10), 0);
	gt_check_int_equal(write(p[1], "hello", 5), 5);
	gt_check_int_equal(giong_join(t, &res), 0);
	gt_check_int_equal(res, 0);
	close(p[1]);
	gt_check_int_equal(giong_file_read(nb_in, &c, 1), 0); /* writer gone: EOF */
	gt_check_int_equal(giong_file_close(nb_in), 0);
}

static void test_nonblock_pipe(void **state)
{
	(void)state;
	fs_run(body_nonblock_pipe);
}

/* Close outside any task: a direct close(2). */
static struct giong_file *carried;
static void body_open_only(void)
{
	struct giong_open_options o = {.read = true};

	if (!gt_check_int_equal(giong_file_open(fs_path("held"), &o, &carried), 0))
		return;
}

/* The main fiber's last act queues a close (giong_fs_read): the worker still
 * submits it while draining at exit. */
static void body_read_last(void)
{
	char *buf = NULL;
	size_t len;

	gt_check_int_equal(giong_fs_read(fs_path("held"), &buf, &len), 0);
	free(buf);
}

static void test_close_outside_task(void **state)
{
	(void)state;
	int before;

	fs_put(fs_path("held"), "x", 1);
	before = gt_count_fds();
	fs_run(body_read_last);
	assert_int_equal(gt_count_fds(), before);

	fs_run(body_open_only);
	assert_int_equal(gt_count_fds(), before + 1);
	int fd = giong_file_fd(carried);
	char c;
	assert_int_equal(giong_file_read_at(carried, &c, 1, 0), GIONG_ENOTWORKER);
	assert_int_equal(giong_file_close(carried), 0);
	assert_int_equal(fcntl(fd, F_GETFD), -1);
	assert_int_equal(gt_count_fds(), before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cancel_read),     cmocka_unit_test(test_cancel_read_result),
		cmocka_unit_test(test_deadline),        cmocka_unit_test(test_fifo_open),
		cmocka_unit_test(test_fds_closed_once), cmocka_unit_test(test_close_outside_task),
		cmocka_unit_test(test_nonblock_pipe),
	};

	return fs_test_main("cancel", tests, sizeof(tests) / sizeof(tests[0]));
}
