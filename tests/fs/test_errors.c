/* SPDX-License-Identifier: MIT */
/*
 * test_errors.c - bad input gives a negative errno with a clear
 * giong_strerror() text and never crashes: missing files, a directory opened
 * as a file, bad option combinations, negative offsets, NULL arguments,
 * wrong access modes, and calls made outside any task.
 */
#include "fs_test.h"

#include <sys/uio.h>

static void expect(int got, int want, const char *what)
{
	if (got != want)
		gt_check_fail_msg("%s: got %d (%s), want %d (%s)", what, got, giong_strerror(got),
				  want, giong_strerror(want));
}

static void body_bad_input(void)
{
	struct giong_open_options ro = {.read = true}, wo = {.write = true, .create = true};
	struct giong_file *f = NULL, *w = NULL;
	struct giong_stat st;
	char buf[16];
	struct iovec iov = {buf, sizeof buf};

	/* missing file, missing directory on the way, empty path */
	expect(giong_file_open(fs_path("missing"), &ro, &f), -ENOENT, "open missing");
	gt_check_null(f);
	expect(giong_file_open(fs_path("missing/x"), &wo, &f), -ENOENT, "create under missing dir");
	expect(giong_file_open("", &ro, &f), -ENOENT, "open empty path");
	gt_check_string_equal(giong_strerror(-ENOENT), "No such file or directory");
	gt_check_string_equal(giong_err_name(-EISDIR), "EISDIR");

	/* a directory opened as a file: -EISDIR for write access and for reads */
	expect(giong_file_open(fs_scratch, &wo, &f), -EISDIR, "open dir for write");
	struct giong_open_options rw = {.read = true, .write = true};
	expect(giong_file_open(fs_scratch, &rw, &f), -EISDIR, "open dir rw");
	expect(giong_file_open(fs_scratch, &ro, &f), 0, "open dir read-only (as open(2))");
	expect((int)giong_file_read_at(f, buf, sizeof buf, 0), -EISDIR, "read a dir");
	expect(giong_file_close(f), 0, "close dir");

	/* bad option combinations */
	struct giong_open_options bad[] = {
		{0},
		{.create = true},
		{.read = true, .create = true},
		{.read = true, .truncate = true},
		{.read = true, .create_new = true},
		{.append = true, .truncate = true},
		{.write = true, .mode = 070000},
		{.read = true, .custom_flags = O_RDWR},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		f = (struct giong_file *)1;
		expect(giong_file_open(fs_path("bad"), &bad[i], &f), -EINVAL, "bad options");
		gt_check_null(f);
	}
	struct stat sst;
	gt_check_int_equal(stat(fs_path("bad"), &sst), -1); /* nothing was created */

	/* NULL arguments */
	expect(giong_file_open(NULL, &ro, &f), -EINVAL, "NULL path");
	expect(giong_file_open(fs_path("x"), NULL, &f), -EINVAL, "NULL opts");
	expect(giong_file_open(fs_path("x"), &ro, NULL), -EINVAL, "NULL ret");
	expect(giong_file_create(NULL, &f), -EINVAL, "create NULL");
	expect(giong_file_from_fd(-1, &f), -EINVAL, "from_fd -1");
	expect(giong_file_from_fd(0, NULL), -EINVAL, "from_fd NULL");
	expect(giong_file_into_fd(NULL), -EINVAL, "into_fd NULL");
	expect(giong_file_fd(NULL), -EINVAL, "fd NULL");
	expect((int)giong_file_read_at(NULL, buf, 1, 0), -EINVAL, "read NULL file");
	expect((int)giong_file_write_at(NULL, buf, 1, 0), -EINVAL, "write NULL file");
	expect(giong_file_sync_all(NULL), -EINVAL, "sync NULL");
	expect(giong_file_sync_data(NULL), -EINVAL, "sync_data NULL");
	expect(giong_file_stat(NULL, &st), -EINVAL, "stat NULL");
	expect((int)giong_file_len(NULL), -EINVAL, "len NULL");
	expect(giong_file_set_len(NULL, 0), -EINVAL, "set_len NULL");
	expect(giong_file_allocate(NULL, 0, 0, 1), -EINVAL, "allocate NULL");
	expect(giong_fs_rename(NULL, "x"), -EINVAL, "rename NULL");
	expect(giong_fs_rename("x", NULL), -EINVAL, "rename NULL 2");
	expect(giong_fs_unlink(NULL), -EINVAL, "unlink NULL");
	expect(giong_fs_rmdir(NULL), -EINVAL, "rmdir NULL");
	expect(giong_fs_mkdir(NULL, 0), -EINVAL, "mkdir NULL");
	expect(giong_fs_stat(NULL, &st), -EINVAL, "stat path NULL");
	expect(giong_fs_stat("/", NULL), -EINVAL, "stat buf NULL");
	expect(giong_fs_lstat(NULL, &st), -EINVAL, "lstat NULL");
	expect(giong_fs_link(NULL, "x"), -EINVAL, "link NULL");
	expect(giong_fs_symlink("x", NULL), -EINVAL, "symlink NULL");

	/* negative offsets and lengths, NULL buffers, bad iovec counts */
	expect(giong_file_create(fs_path("f"), &w), 0, "create");
	expect(giong_file_open(fs_path("f"), &ro, &f), 0, "open");
	expect((int)giong_file_read_at(f, buf, sizeof buf, -1), -EINVAL, "read at -1");
	expect((int)giong_file_read_at(f, buf, sizeof buf, INT64_MIN), -EINVAL, "read at MIN");
	expect((int)giong_file_write_at(w, buf, sizeof buf, -4096), -EINVAL, "write at -4096");
	expect(giong_file_write_all_at(w, buf, sizeof buf, -1), -EINVAL, "write_all at -1");
	expect((int)giong_file_readv_at(f, &iov, 1, -1), -EINVAL, "readv at -1");
	expect((int)giong_file_writev_at(w, &iov, 1, -1), -EINVAL, "writev at -1");
	expect((int)giong_file_readv_at(f, &iov, -1, 0), -EINVAL, "readv -1 vecs");
	expect((int)giong_file_readv_at(f, &iov, IOV_MAX + 1, 0), -EINVAL, "readv too many");
	expect((int)giong_file_readv_at(f, NULL, 1, 0), -EINVAL, "readv NULL iov");
	expect((int)giong_file_read_at(f, NULL, 1, 0), -EINVAL, "read NULL buf");
	expect((int)giong_file_write_at(w, NULL, 1, 0), -EINVAL, "write NULL buf");
	expect((int)giong_file_read_at(f, NULL, 0, 0), 0, "read 0 bytes into NULL");
	expect(giong_file_set_len(w, -1), -EINVAL, "set_len -1");
	expect(giong_file_allocate(w, 0, -1, 1), -EINVAL, "allocate at -1");
	expect(giong_file_allocate(w, 0, 0, -1), -EINVAL, "allocate -1 bytes");
	expect(giong_file_write_all_at(w, buf, 10, INT64_MAX - 5), -EFBIG, "write past INT64_MAX");
	/* an offset past what the filesystem allows */
	int r = (int)giong_file_write_at(w, buf, 1, INT64_MAX - 1);
	gt_check_true(r == -EFBIG || r == -EINVAL);

	/* wrong access: writing a read-only file, reading a write-only one */
	expect((int)giong_file_write_at(f, buf, 1, 0), -EBADF, "write read-only");
	expect((int)giong_file_read_at(w, buf, 1, 0), -EBADF, "read write-only");
	expect(giong_file_close(f), 0, "close");
	expect(giong_file_close(w), 0, "close");

	/* a bad pointer reaches the kernel, which answers -EFAULT: no crash.
	 * Not under valgrind, which rightly reports the bad pointer itself. */
	expect(giong_file_open(fs_path("f"), &ro, &f), 0, "open");
#ifndef GIONG_VALGRIND
	expect((int)giong_file_read_at(f, (void *)16, 1, 0), 0, "read into bad pointer at EOF");
	expect(giong_fs_stat((const char *)16, &st), -EFAULT, "stat bad path pointer");
#endif
	expect(giong_file_write_all_at(f, "x", 1, 0), -EBADF, "write_all read-only");
	expect(giong_file_close(f), 0, "close");
}

static void test_bad_input(void **state)
{
	(void)state;
	fs_run(body_bad_input);
}

/* Outside a task every call that would suspend says GIONG_ENOTWORKER. */
static void test_outside_task(void **state)
{
	struct giong_open_options ro = {.read = true};
	struct giong_file *f = NULL;
	struct giong_stat st;
	char *buf = NULL;
	size_t len;

	(void)state;
	assert_int_equal(giong_file_open("/dev/null", &ro, &f), GIONG_ENOTWORKER);
	assert_null(f);
	assert_int_equal(giong_fs_read("/dev/null", &buf, &len), GIONG_ENOTWORKER);
	assert_int_equal(giong_fs_write(fs_path("o"), "x", 1), GIONG_ENOTWORKER);
	assert_int_equal(giong_fs_stat("/", &st), GIONG_ENOTWORKER);
	assert_int_equal(giong_fs_mkdir(fs_path("o"), 0), GIONG_ENOTWORKER);
	assert_non_null(strstr(giong_strerror(GIONG_ENOTWORKER), "outside"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_outside_task),
	};

	return fs_test_main("errors", tests, sizeof(tests) / sizeof(tests[0]));
}
