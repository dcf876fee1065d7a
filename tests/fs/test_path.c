/* SPDX-License-Identifier: MIT */
/*
 * test_path.c - path operations: rename and remove, mkdir/rmdir, stat and
 * lstat against stat(2)/lstat(2), hard and symbolic links, and reading a
 * directory.
 */
#include <linux/openat2.h>

#include "fs_test.h"

static void same_stat(const struct giong_stat *g, const struct stat *s)
{
	gt_check_int_equal(g->size, (uint64_t)s->st_size);
	gt_check_int_equal(g->ino, (uint64_t)s->st_ino);
	gt_check_int_equal(g->dev, (uint64_t)s->st_dev);
	gt_check_int_equal(g->rdev, (uint64_t)s->st_rdev);
	gt_check_int_equal(g->mode, (uint32_t)s->st_mode);
	gt_check_int_equal(g->nlink, (uint32_t)s->st_nlink);
	gt_check_int_equal(g->uid, (uint32_t)s->st_uid);
	gt_check_int_equal(g->gid, (uint32_t)s->st_gid);
	gt_check_int_equal(g->blocks, (uint64_t)s->st_blocks);
	gt_check_int_equal(g->mtime.sec, s->st_mtim.tv_sec);
	gt_check_int_equal(g->mtime.nsec, s->st_mtim.tv_nsec);
	gt_check_int_equal(g->ctime.sec, s->st_ctim.tv_sec);
	gt_check_int_equal(g->ctime.nsec, s->st_ctim.tv_nsec);
}

static void body_rename_remove(void)
{
	const char *a = fs_path("a"), *b = fs_path("b"), *c = fs_path("c");
	struct stat st;

	gt_check_int_equal(giong_fs_write(a, "alpha", 5), 0);
	gt_check_int_equal(giong_fs_write(c, "gamma!", 6), 0);
	gt_check_int_equal(giong_fs_rename(a, b), 0);
	gt_check_int_equal(stat(a, &st), -1);
	gt_check_int_equal(errno, ENOENT);
	gt_check_int_equal(stat(b, &st), 0);
	gt_check_int_equal(st.st_size, 5);
	/* rename over an existing file replaces it */
	gt_check_int_equal(giong_fs_rename(c, b), 0);
	gt_check_int_equal(stat(b, &st), 0);
	gt_check_int_equal(st.st_size, 6);
	gt_check_int_equal(giong_fs_rename(a, c), -ENOENT);
	gt_check_int_equal(giong_fs_unlink(b), 0);
	gt_check_int_equal(giong_fs_unlink(b), -ENOENT);
	gt_check_int_equal(stat(b, &st), -1);

	/* directories */
	const char *d = fs_path("dir"), *dd = fs_path("dir/sub"), *df = fs_path("dir/file");
	gt_check_int_equal(giong_fs_mkdir(d, 0750), 0);
	gt_check_int_equal(giong_fs_mkdir(d, 0), -EEXIST);
	gt_check_int_equal(giong_fs_mkdir(fs_path("nope/x"), 0), -ENOENT);
	gt_check_int_equal(giong_fs_mkdir(dd, 010000), -EINVAL);
	gt_check_int_equal(giong_fs_mkdir(dd, 0), 0);
	gt_check_int_equal(stat(d, &st), 0);
	gt_check_true(S_ISDIR(st.st_mode));
	gt_check_int_equal(giong_fs_write(df, "x", 1), 0);
	gt_check_int_equal(giong_fs_unlink(d), -EISDIR);
	gt_check_int_equal(giong_fs_rmdir(d), -ENOTEMPTY);
	gt_check_int_equal(giong_fs_rmdir(df), -ENOTDIR);
	gt_check_int_equal(giong_fs_rmdir(dd), 0);
	gt_check_int_equal(giong_fs_unlink(df), 0);
	gt_check_int_equal(giong_fs_rename(d, fs_path("dir2")), 0);
	gt_check_int_equal(giong_fs_rmdir(fs_path("dir2")), 0);
	gt_check_int_equal(giong_fs_rmdir(fs_path("dir2")), -ENOENT);
}

static void test_rename_remove(void **state)
{
	(void)state;
	fs_run(body_rename_remove);
}

static void body_stat_links(void)
{
	const char *f = fs_path("target"), *h = fs_path("hard"), *s = fs_path("soft");
	struct giong_stat g;
	struct stat st;

	gt_check_int_equal(giong_fs_write(f, "0123456789abcdef", 16), 0);
	gt_check_int_equal(giong_fs_stat(f, &g), 0);
	gt_check_int_equal(stat(f, &st), 0);
	same_stat(&g, &st);

	gt_check_int_equal(giong_fs_link(f, h), 0);
	gt_check_int_equal(giong_fs_link(f, h), -EEXIST);
	gt_check_int_equal(giong_fs_stat(h, &g), 0);
	gt_check_int_equal(stat(f, &st), 0);
	same_stat(&g, &st);
	gt_check_int_equal(g.nlink, 2);

	gt_check_int_equal(giong_fs_symlink("target", s), 0);
	gt_check_int_equal(giong_fs_symlink("target", s), -EEXIST);
	gt_check_int_equal(giong_fs_stat(s, &g), 0); /* follows */
	gt_check_int_equal(stat(s, &st), 0);
	same_stat(&g, &st);
	gt_check_int_equal(giong_fs_lstat(s, &g), 0); /* the link itself */
	gt_check_int_equal(lstat(s, &st), 0);
	same_stat(&g, &st);
	gt_check_true(S_ISLNK(g.mode));
	gt_check_int_equal(g.size, 6);

	/* a directory and a device */
	gt_check_int_equal(giong_fs_stat(fs_scratch, &g), 0);
	gt_check_int_equal(stat(fs_scratch, &st), 0);
	same_stat(&g, &st);
	gt_check_int_equal(giong_fs_stat("/dev/null", &g), 0);
	gt_check_int_equal(stat("/dev/null", &st), 0);
	same_stat(&g, &st);
	gt_check_true(S_ISCHR(g.mode));

	gt_check_int_equal(giong_fs_stat(fs_path("missing"), &g), -ENOENT);
	gt_check_int_equal(giong_fs_symlink("missing", fs_path("dangling")), 0);
	gt_check_int_equal(giong_fs_stat(fs_path("dangling"), &g), -ENOENT);
	gt_check_int_equal(giong_fs_lstat(fs_path("dangling"), &g), 0);
	gt_check_int_equal(giong_fs_stat(fs_path("target/x"), &g), -ENOTDIR);
}

static void test_stat_and_links(void **state)
{
	(void)state;
	fs_run(body_stat_links);
}

static void body_dir(void)
{
	enum { N = 1500 }; /* more than one 32 KiB getdents64 batch */
	char name[64];
	static unsigned char seen[N];
	struct giong_dir *d;
	struct giong_dirent e;
	int n = 0, r, other = 0;

	gt_check_int_equal(giong_fs_mkdir(fs_path("many"), 0), 0);
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof name, "many/entry-with-a-longish-name-%05d", i);
		gt_check_int_equal(giong_fs_write(fs_path(name), "", 0), 0);
	}
	gt_check_int_equal(giong_fs_mkdir(fs_path("many/subdir"), 0), 0);
	memset(seen, 0, sizeof seen);
	if (!gt_check_int_equal(giong_dir_open(fs_path("many"), &d), 0))
		return;
	while ((r = giong_dir_next(d, &e)) == 1) {
		int i;

		gt_check_string_not_equal(e.name, ".");
		gt_check_string_not_equal(e.name, "..");
		if (sscanf(e.name, "entry-with-a-longish-name-%d", &i) == 1) {
			if (!gt_check_true(i >= 0 && i < N))
				continue;
			gt_check_int_equal(seen[i], 0);
			seen[i] = 1;
			gt_check_true(e.type == DT_REG || e.type == DT_UNKNOWN);
			n++;
		} else {
			gt_check_string_equal(e.name, "subdir");
			gt_check_true(e.type == DT_DIR || e.type == DT_UNKNOWN);
			other++;
		}
	}
	gt_check_int_equal(r, 0);
	gt_check_int_equal(giong_dir_next(d, &e), 0); /* stays at the end */
	gt_check_int_equal(n, N);
	gt_check_int_equal(other, 1);
	gt_check_int_equal(giong_dir_close(d), 0);
	gt_check_int_equal(giong_dir_close(NULL), 0);

	/* empty directory, errors */
	gt_check_int_equal(giong_fs_mkdir(fs_path("empty"), 0), 0);
	if (!gt_check_int_equal(giong_dir_open(fs_path("empty"), &d), 0))
		return;
	gt_check_int_equal(giong_dir_next(d, &e), 0);
	gt_check_int_equal(giong_dir_next(NULL, &e), -EINVAL);
	gt_check_int_equal(giong_dir_next(d, NULL), -EINVAL);
	gt_check_int_equal(giong_dir_close(d), 0);
	gt_check_int_equal(giong_dir_open(fs_path("missing"), &d), -ENOENT);
	gt_check_null(d);
	gt_check_int_equal(giong_dir_open(fs_path("many/entry-with-a-longish-name-00001"), &d),
			   -ENOTDIR);
	gt_check_int_equal(giong_dir_open(NULL, &d), -EINVAL);

	/* from a descriptor: giong_file_open_at() under RESOLVE_BENEATH, then handed over */
	{
		struct giong_open_options o = {
			.read = true, .custom_flags = O_DIRECTORY, .resolve = RESOLVE_BENEATH};
		struct giong_file *f;
		int root = open(fs_scratch, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd;

		if (!gt_check_true(root >= 0) ||
		    !gt_check_int_equal(giong_file_open_at(root, "many", &o, &f), 0))
			return;
		fd = giong_file_into_fd(f);
		if (!gt_check_int_equal(giong_dir_from_fd(fd, &d), 0))
			return;
		gt_check_int_equal(giong_dir_fd(d), fd);
		n = 0;
		while ((r = giong_dir_next(d, &e)) == 1)
			n++;
		gt_check_int_equal(r, 0);
		gt_check_int_equal(n, N + 1); /* the entries and "subdir" */
		gt_check_int_equal(giong_dir_close(d), 0);
		gt_check_int_equal(fcntl(fd, F_GETFD), -1); /* closed with it */

		fd = openat(root, "many/entry-with-a-longish-name-00001", O_RDONLY | O_CLOEXEC);
		gt_check_true(fd >= 0);
		gt_check_int_equal(giong_dir_from_fd(fd, &d), -ENOTDIR);
		gt_check_null(d);
		gt_check_int_equal(fcntl(fd, F_GETFD), -1); /* closed: it was given */
		gt_check_int_equal(giong_dir_from_fd(-1, &d), -EINVAL);
		gt_check_int_equal(giong_dir_from_fd(root, NULL), -EINVAL);
		gt_check_int_equal(giong_dir_fd(NULL), -EINVAL);
		close(root);
	}
}

static void test_read_dir(void **state)
{
	(void)state;
	fs_run(body_dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rename_remove),
		cmocka_unit_test(test_stat_and_links),
		cmocka_unit_test(test_read_dir),
	};

	return fs_test_main("path", tests, sizeof(tests) / sizeof(tests[0]));
}
