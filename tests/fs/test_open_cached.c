/* SPDX-License-Identifier: MIT */
/*
 * test_open_cached.c - the page-cache fast path of opens: a path whose
 * lookup is cached opens with a direct openat2(RESOLVE_CACHED), no SQE
 * (giong_stats().sqes_submitted does not grow); ring_only, O_CREAT/O_TRUNC
 * and GIONG_FS_READ=ring (the fs.open_cached_ring_reads run) open through
 * the ring; the descriptor is not left O_NONBLOCK unless asked for; errors
 * are the ring's (ENOENT, ENOTDIR, EISDIR);
 * a FIFO with no writer does not make the open wait; a task past its
 * deadline opens nothing.
 */
#include "fs_test.h"

#include <sys/stat.h>

/* Flush what earlier calls queued (a close), then count from here. */
static uint64_t mark(void)
{
	assert_int_equal(giong_yield(), 0);
	return fs_sqes();
}

/* SQEs since @s0, once what this call queued has entered the kernel. */
static uint64_t since(uint64_t s0)
{
	assert_int_equal(giong_yield(), 0);
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
	assert_int_equal(giong_file_open(p, &ro, &f), 0);
	assert_int_equal(since(s0), fs_ring_env() ? 1 : 0);
	fl = fcntl(giong_file_fd(f), F_GETFL);
	assert_true(fl >= 0);
	assert_int_equal(fl & O_NONBLOCK, 0); /* the attempt's O_NONBLOCK is gone */
	assert_int_equal(fl & O_ACCMODE, O_RDONLY);
	assert_int_equal(giong_file_read_at(f, buf, sizeof buf, 0), 12);
	assert_memory_equal(buf, "hello, cache", 12);
	assert_int_equal(giong_file_close(f), 0);

	/* ring_only: the open is an SQE too */
	ro.ring_only = true;
	s0 = mark();
	assert_int_equal(giong_file_open(p, &ro, &f), 0);
	assert_int_equal(since(s0), 1);
	assert_int_equal(giong_file_close(f), 0);
}

static void test_cached(void **state)
{
	(void)state;
	fs_run(body_cached);
}

static off_t size_of(const char *p)
{
	struct stat st;

	assert_int_equal(stat(p, &st), 0);
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
	/* O_NONBLOCK asked for: kept */
	assert_int_equal(giong_file_open(p, &o, &f), 0);
	assert_true(fcntl(giong_file_fd(f), F_GETFL) & O_NONBLOCK);
	assert_int_equal(giong_file_close(f), 0);
	/* O_APPEND survives the F_SETFL that takes O_NONBLOCK off */
	assert_int_equal(giong_file_open(p, &app, &f), 0);
	assert_true(fcntl(giong_file_fd(f), F_GETFL) & O_APPEND);
	assert_int_equal(giong_file_write_all(f, "ab", 2), 0);
	assert_int_equal(giong_file_close(f), 0);
	assert_int_equal(size_of(p), 12);
	/* O_TRUNC is never completed without blocking: through the ring */
	s0 = mark();
	assert_int_equal(giong_file_open(p, &tr, &f), 0);
	assert_int_equal(since(s0), 1);
	assert_int_equal(giong_file_close(f), 0);
	assert_int_equal(size_of(p), 0);
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
	assert_int_equal(giong_file_open(fs_path("missing"), &ro, &f), -ENOENT);
	assert_null(f);
	/* asked twice: the second time the negative lookup is cached */
	assert_int_equal(giong_file_open(fs_path("missing"), &ro, &f), -ENOENT);
	assert_int_equal(giong_file_open(fs_path("plain/below"), &ro, &f), -ENOTDIR);
	assert_int_equal(giong_file_open(fs_scratch, &rw, &f), -EISDIR);
	assert_int_equal(giong_fs_read(fs_path("missing"), &buf, &len), -ENOENT);
	assert_int_equal(giong_fs_read(fs_scratch, &buf, &len), -EISDIR);
	/* a directory opened read-only is fine, and so is reading it as one */
	assert_int_equal(giong_file_open(fs_scratch, &ro, &f), 0);
	assert_int_equal(giong_file_close(f), 0);
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

	assert_int_equal(mkfifo(p, 0600), 0);
	assert_int_equal(giong_file_open(p, &wo, &f), -ENXIO); /* no reader: as the ring says */
	assert_int_equal(giong_file_open(p, &ro, &f), 0);
	fl = fcntl(giong_file_fd(f), F_GETFL);
	assert_int_equal(fl & O_NONBLOCK, 0);
	assert_int_equal(giong_file_close(f), 0);
	unlink(p);
}

static void test_fifo(void **state)
{
	(void)state;
	fs_run(body_fifo);
}

static void body_cancelled(void)
{
	const char *p = fs_path("cancel");
	struct giong_open_options ro = {.read = true};
	struct giong_file *f;
	int fds = fs_count_fds();
	uint64_t saved;

	fs_put(p, "y", 1);
	saved = giong_deadline_set(giong_now_ms()); /* already passed */
	assert_int_equal(giong_file_open(p, &ro, &f), -ETIMEDOUT);
	giong_deadline_restore(saved);
	assert_int_equal(fs_count_fds(), fds);
	assert_int_equal(giong_file_open(p, &ro, &f), 0);
	assert_int_equal(giong_file_close(f), 0);
}

static void test_cancelled(void **state)
{
	(void)state;
	fs_run(body_cancelled);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cached),   cmocka_unit_test(test_flags),
		cmocka_unit_test(test_errors),   cmocka_unit_test(test_fifo),
		cmocka_unit_test(test_cancelled),
	};

	return fs_test_main("open_cached", tests, sizeof(tests) / sizeof(tests[0]));
}
