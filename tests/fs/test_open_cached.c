/* SPDX-License-Identifier: MIT */
/*
 * test_open_cached.c - the page-cache fast path of opens: a path whose
 * lookup is cached opens with a direct openat2(RESOLVE_CACHED), no SQE
 * (giong_stats().sqes_submitted does not grow); ring_only, O_CREAT/O_TRUNC
 * and GIONG_FS_READ=ring (the fs.open_cached_ring_reads run) open through
 * the ring; the descriptor is not left O_NONBLOCK unless asked for; errors
 * are the ring's (ENOENT, ENOTDIR, EISDIR);
 * a FIFO with no writer does not make the open wait, and one reached
 * through an uncached lookup (a /proc/self/fd link) waits but ends with
 * -ETIMEDOUT / -ECANCELED; a task past its deadline opens nothing; a
 * directory takes the fast path; an io_uring descriptor is closed.
 */
#include "fs_test.h"

#include <linux/io_uring.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>

/* Whether opens can take the fast path here: openat2(2) may be missing
 * (valgrind 3.19 does not know it, a seccomp policy may refuse it); then
 * every open is an SQE, as with GIONG_FS_READ=ring. */
static bool ring_opens(void)
{
	static int direct = -1;

	if (direct < 0) {
		struct open_how how = {.flags = O_RDONLY | O_CLOEXEC, .resolve = RESOLVE_CACHED};
		long fd = syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof(how));

		direct = fd >= 0 || errno == EAGAIN;
		if (fd >= 0)
			close((int)fd);
	}
	return fs_ring_env() || !direct;
}

/* Flush what earlier calls queued (a close), then count from here. */
static uint64_t mark(void)
{
	gt_check_int_equal(giong_yield(), 0);
	return fs_sqes();
}

/* SQEs since @s0, once what this call queued has entered the kernel. */
static uint64_t since(uint64_t s0)
{
	gt_check_int_equal(giong_yield(), 0);
	return fs_sqes() - s0;
}

static void body_cached(void)
{
	const char *p = fs_path("cached");
	struct giong_open_options ro = {.read = true};
	struct giong_file *f;
	char buf[16];
	uint64_t s0;
	int fl;

	fs_put(p, "hello, cache", 12); /* its dentry is in the cache now */
	s0 = mark();
	if (!gt_check_int_equal(giong_file_open(p, &ro, &f), 0))
		return;
	gt_check_int_equal(since(s0), ring_opens() ? 1 : 0);
	fl = fcntl(giong_file_fd(f), F_GETFL);
	gt_check_true(fl >= 0);
	gt_check_int_equal(fl & O_NONBLOCK, 0); /* the attempt's O_NONBLOCK is gone */
	gt_check_int_equal(fl & O_ACCMODE, O_RDONLY);
	gt_check_int_equal(giong_file_read_at(f, buf, sizeof buf, 0), 12);
	gt_check_memory_equal(buf, "hello, cache", 12);
	gt_check_int_equal(giong_file_close(f), 0);

	/* a directory takes the fast path too (O_TMPFILE contains O_DIRECTORY:
	 * it must not be mistaken for one) */
	struct giong_dir *d;
	struct giong_open_options dro = {.read = true, .custom_flags = O_DIRECTORY};

	s0 = mark();
	if (!gt_check_int_equal(giong_dir_open(fs_scratch, &d), 0))
		return;
	gt_check_int_equal(since(s0), ring_opens() ? 1 : 0);
	gt_check_int_equal(giong_dir_close(d), 0);
	s0 = mark();
	if (!gt_check_int_equal(giong_file_open(fs_scratch, &dro, &f), 0))
		return;
	gt_check_int_equal(since(s0), ring_opens() ? 1 : 0);
	gt_check_int_equal(giong_file_close(f), 0);

	/* ring_only: the open is an SQE too */
	ro.ring_only = true;
	s0 = mark();
	if (!gt_check_int_equal(giong_file_open(p, &ro, &f), 0))
		return;
	gt_check_int_equal(since(s0), 1);
	gt_check_int_equal(giong_file_close(f), 0);
}

static void test_cached(void **state)
{
	(void)state;
	fs_run(body_cached);
}

static off_t size_of(const char *p)
{
	struct stat st;

	gt_check_int_equal(stat(p, &st), 0);
	return st.st_size;
}

static void body_flags(void)
{
	const char *p = fs_path("flags");
	struct giong_open_options o = {.read = true, .custom_flags = O_NONBLOCK};
	struct giong_open_options app = {.append = true};
	struct giong_open_options tr = {.write = true, .truncate = true};
	struct giong_file *f;
	uint64_t s0;

	fs_put(p, "0123456789", 10);
	/* a flags word that would read as a negative errno */
	struct giong_open_options neg = {.read = true, .custom_flags = INT_MIN};

	gt_check_int_equal(giong_file_open(p, &neg, &f), -EINVAL);
	/* O_NONBLOCK asked for: kept */
	if (!gt_check_int_equal(giong_file_open(p, &o, &f), 0))
		return;
	gt_check_true(fcntl(giong_file_fd(f), F_GETFL) & O_NONBLOCK);
	gt_check_int_equal(giong_file_close(f), 0);
	/* O_APPEND survives the F_SETFL that takes O_NONBLOCK off */
	if (!gt_check_int_equal(giong_file_open(p, &app, &f), 0))
		return;
	gt_check_true(fcntl(giong_file_fd(f), F_GETFL) & O_APPEND);
	gt_check_int_equal(giong_file_write_all(f, "ab", 2), 0);
	gt_check_int_equal(giong_file_close(f), 0);
	gt_check_int_equal(size_of(p), 12);
	/* O_TRUNC is never completed without blocking: through the ring */
	s0 = mark();
	if (!gt_check_int_equal(giong_file_open(p, &tr, &f), 0))
		return;
	gt_check_int_equal(since(s0), 1);
	gt_check_int_equal(giong_file_close(f), 0);
	gt_check_int_equal(size_of(p), 0);
}

static void test_flags(void **state)
{
	(void)state;
	fs_run(body_flags);
}

static void body_errors(void)
{
	struct giong_open_options ro = {.read = true}, rw = {.read = true, .write = true};
	struct giong_file *f = (struct giong_file *)1;
	char *buf;
	size_t len;

	fs_put(fs_path("plain"), "x", 1);
	gt_check_int_equal(giong_file_open(fs_path("missing"), &ro, &f), -ENOENT);
	gt_check_null(f);
	/* asked twice: the second time the negative lookup is cached */
	gt_check_int_equal(giong_file_open(fs_path("missing"), &ro, &f), -ENOENT);
	gt_check_int_equal(giong_file_open(fs_path("plain/below"), &ro, &f), -ENOTDIR);
	gt_check_int_equal(giong_file_open(fs_scratch, &rw, &f), -EISDIR);
	gt_check_int_equal(giong_fs_read(fs_path("missing"), &buf, &len), -ENOENT);
	gt_check_int_equal(giong_fs_read(fs_scratch, &buf, &len), -EISDIR);
	/* a directory opened read-only is fine, and so is reading it as one */
	if (!gt_check_int_equal(giong_file_open(fs_scratch, &ro, &f), 0))
		return;
	gt_check_int_equal(giong_file_close(f), 0);
}

static void test_errors(void **state)
{
	(void)state;
	fs_run(body_errors);
}

/* A FIFO with no writer: open(2) for reading would wait for one; the ring's
 * open and the direct attempt both carry O_NONBLOCK for the attempt. */
static void body_fifo(void)
{
	const char *p = fs_path("fifo");
	struct giong_open_options ro = {.read = true}, wo = {.write = true};
	struct giong_file *f;
	int fl;

	gt_check_int_equal(mkfifo(p, 0600), 0);
	gt_check_int_equal(giong_file_open(p, &wo, &f), -ENXIO); /* no reader: as the ring says */
	if (!gt_check_int_equal(giong_file_open(p, &ro, &f), 0))
		return;
	fl = fcntl(giong_file_fd(f), F_GETFL);
	gt_check_int_equal(fl & O_NONBLOCK, 0);
	gt_check_int_equal(giong_file_close(f), 0);
	unlink(p);
}

static void test_fifo(void **state)
{
	(void)state;
	fs_run(body_fifo);
}

/* A FIFO reached through /proc/self/fd: the lookup of a magic link is
 * never cached, so the open goes to the kernel's worker threads and waits
 * for a reader like open(2). A deadline or a cancel must end it with
 * -ETIMEDOUT / -ECANCELED (not the kernel's internal -ERESTARTSYS). */
static intptr_t slow_fifo_open(void *arg)
{
	struct giong_open_options wo = {.write = true};
	struct giong_file *f = NULL;
	int r = giong_file_open((const char *)arg, &wo, &f);

	if (r == 0)
		giong_file_close(f);
	return r;
}

static void body_slow_fifo(void)
{
	const char *fifo = fs_path("slow-fifo");
	char link[64];
	int pfd, fds = gt_count_fds();
	struct giong_task *t;
	intptr_t res = 0;
	uint64_t saved;

	gt_check_int_equal(mkfifo(fifo, 0600), 0);
	pfd = open(fifo, O_PATH | O_CLOEXEC);
	gt_check_true(pfd >= 0);
	snprintf(link, sizeof link, "/proc/self/fd/%d", pfd);
	saved = giong_deadline_in(50);
	gt_check_int_equal(slow_fifo_open(link), -ETIMEDOUT);
	giong_deadline_restore(saved);
	if (!gt_check_int_equal(giong_spawn(slow_fifo_open, link, &t), 0))
		return;
	gt_check_int_equal(giong_sleep_ms(20), 0);
	gt_check_int_equal(giong_task_cancel(t), 0);
	gt_check_int_equal(giong_join(t, &res), -ECANCELED); /* cancelled first */
	close(pfd);
	unlink(fifo);
	gt_check_int_equal(gt_count_fds(), fds);
}

static void test_slow_fifo(void **state)
{
	(void)state;
	fs_run(body_slow_fifo);
}

/* The ring will not close an io_uring instance's descriptor (-EBADF);
 * giong_file_close() must close it all the same, exactly once. */
static void body_close_ring_fd(void)
{
	struct io_uring_params params;
	struct giong_file *f;
	int fd;

	memset(&params, 0, sizeof(params));
	fd = (int)syscall(__NR_io_uring_setup, 4, &params);
	gt_check_true(fd >= 0);
	if (!gt_check_int_equal(giong_file_from_fd(fd, &f), 0))
		return;
	gt_check_int_equal(giong_file_close(f), 0);
	gt_check_int_equal(fcntl(fd, F_GETFD), -1);
	gt_check_int_equal(errno, EBADF);
}

static void test_close_ring_fd(void **state)
{
	(void)state;
	gt_skip_if_uring_refused(); /* no io_uring instance to make */
	fs_run(body_close_ring_fd);
}

static void body_cancelled(void)
{
	const char *p = fs_path("cancel");
	struct giong_open_options ro = {.read = true};
	struct giong_file *f;
	int fds = gt_count_fds();
	uint64_t saved;

	fs_put(p, "y", 1);
	saved = giong_deadline_set(giong_now_ms()); /* already passed */
	gt_check_int_equal(giong_file_open(p, &ro, &f), -ETIMEDOUT);
	giong_deadline_restore(saved);
	gt_check_int_equal(gt_count_fds(), fds);
	if (!gt_check_int_equal(giong_file_open(p, &ro, &f), 0))
		return;
	gt_check_int_equal(giong_file_close(f), 0);
}

static void test_cancelled(void **state)
{
	(void)state;
	fs_run(body_cancelled);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cached),        cmocka_unit_test(test_flags),
		cmocka_unit_test(test_errors),        cmocka_unit_test(test_fifo),
		cmocka_unit_test(test_cancelled),     cmocka_unit_test(test_slow_fifo),
		cmocka_unit_test(test_close_ring_fd),
	};

	return fs_test_main("open_cached", tests, sizeof(tests) / sizeof(tests[0]));
}
