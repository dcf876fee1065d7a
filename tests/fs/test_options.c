/* SPDX-License-Identifier: MIT */
/*
 * test_options.c - struct giong_open_options against open(2): every one of
 * the 64 combinations of the six booleans, on a missing and on an existing
 * file, gives the same result, the same file and the same descriptor flags
 * as open(2) with the flags the rules prescribe; the combinations the rules
 * refuse give -EINVAL and touch nothing. Append writes go to the end.
 */
#include "fs_test.h"

/* The rules, written out independently of the library (Rust's OpenOptions). */
static int ref_flags(bool rd, bool wr, bool ap, bool cr, bool cn, bool tr)
{
	int f = O_CLOEXEC;

	if (!rd && !wr && !ap)
		return -EINVAL;
	if (!wr && !ap && (cr || cn || tr))
		return -EINVAL;
	if (ap && tr && !cn)
		return -EINVAL;
	f |= ap         ? O_APPEND | (rd ? O_RDWR : O_WRONLY)
	     : rd && wr ? O_RDWR
	     : wr       ? O_WRONLY
			: O_RDONLY;
	if (cn)
		f |= O_CREAT | O_EXCL;
	else
		f |= (cr ? O_CREAT : 0) | (tr ? O_TRUNC : 0);
	return f;
}

static void prepare(const char *p, bool exists)
{
	unlink(p);
	if (exists)
		fs_put(p, "0123456789", 10);
}

struct outcome {
	int err;     /* 0 or -errno of the open */
	int fl;      /* F_GETFL & (O_ACCMODE | O_APPEND) */
	int cloexec; /* FD_CLOEXEC set */
	long size;   /* size after the open, -1 if the file does not exist */
};

static void describe(const char *p, int fd, int err, struct outcome *o)
{
	struct stat st;

	o->err = err;
	o->fl = fd >= 0 ? fcntl(fd, F_GETFL) & (O_ACCMODE | O_APPEND) : -1;
	o->cloexec = fd >= 0 ? !!(fcntl(fd, F_GETFD) & FD_CLOEXEC) : -1;
	o->size = stat(p, &st) ? -1 : (long)st.st_size;
}

static void body_matrix(void)
{
	const char *pa = fs_path("opt-ref"), *pb = fs_path("opt-giong");
	int valid = 0, invalid = 0;

	for (unsigned m = 0; m < 64; m++) {
		struct giong_open_options o = {
			.read = m & 1,
			.write = m & 2,
			.append = m & 4,
			.create = m & 8,
			.create_new = m & 16,
			.truncate = m & 32,
		};
		int want = ref_flags(o.read, o.write, o.append, o.create, o.create_new, o.truncate);

		gt_check_int_equal(giong_open_options_flags(&o), want);
		for (int exists = 0; exists < 2; exists++) {
			struct giong_file *f = (struct giong_file *)1;
			struct outcome a, b;
			int fd, r;

			prepare(pa, exists);
			prepare(pb, exists);
			r = giong_file_open(pb, &o, &f);
			if (want < 0) {
				invalid++;
				gt_check_int_equal(r, -EINVAL);
				gt_check_null(f);
				describe(pb, -1, 0, &b);
				gt_check_int_equal(b.size, exists ? 10 : -1); /* untouched */
				continue;
			}
			valid++;
			fd = open(pa, want, 0666);
			describe(pa, fd, fd < 0 ? -errno : 0, &a);
			describe(pb, r ? -1 : giong_file_fd(f), r, &b);
			if (a.err != b.err || a.fl != b.fl || a.cloexec != b.cloexec ||
			    a.size != b.size)
				gt_check_fail_msg(
					"options %#x exists=%d: open(2) err=%d fl=%#x cloexec=%d size=%ld; "
					"giong err=%d fl=%#x cloexec=%d size=%ld",
					m, exists, a.err, a.fl, a.cloexec, a.size, b.err, b.fl,
					b.cloexec, b.size);
			if (fd >= 0)
				close(fd);
			if (!r)
				gt_check_int_equal(giong_file_close(f), 0);
		}
	}
	print_message("%d valid and %d refused (option set, file state) cases match open(2)\n",
		      valid, invalid);
	gt_check_int_equal(valid + invalid, 128);
}

static void test_matrix_vs_open(void **state)
{
	(void)state;
	fs_run(body_matrix);
}

/* Writes on an append file go to the end whatever the offset, like pwrite(2)
 * on an O_APPEND descriptor. */
static void body_append(void)
{
	const char *pa = fs_path("app-ref"), *pb = fs_path("app-giong");
	struct giong_open_options o = {.append = true, .read = true};
	struct giong_file *f;
	char a[64], b[64];
	ssize_t na, nb;

	prepare(pa, true);
	prepare(pb, true);
	int fd = open(pa, O_RDWR | O_APPEND | O_CLOEXEC);
	gt_check_true(fd >= 0);
	gt_check_int_equal(pwrite(fd, "XYZ", 3, 0), 3);
	gt_check_int_equal(pwrite(fd, "uv", 2, 4), 2);
	close(fd);

	if (!gt_check_int_equal(giong_file_open(pb, &o, &f), 0))
		return;
	gt_check_int_equal(giong_file_write_at(f, "XYZ", 3, 0), 3);
	gt_check_int_equal(giong_file_write_all_at(f, "uv", 2, 4), 0);
	gt_check_int_equal(giong_file_len(f), 15);
	gt_check_int_equal(giong_file_close(f), 0);

	fd = open(pa, O_RDONLY);
	na = read(fd, a, sizeof a);
	close(fd);
	fd = open(pb, O_RDONLY);
	nb = read(fd, b, sizeof b);
	close(fd);
	gt_check_int_equal(na, 15);
	gt_check_int_equal(nb, 15);
	gt_check_memory_equal(a, "0123456789XYZuv", 15);
	gt_check_memory_equal(b, a, 15);

	/* append + create makes the file; append alone does not. */
	unlink(pb);
	o = (struct giong_open_options){.append = true};
	gt_check_int_equal(giong_file_open(pb, &o, &f), -ENOENT);
	o.create = true;
	if (!gt_check_int_equal(giong_file_open(pb, &o, &f), 0))
		return;
	gt_check_int_equal(giong_file_write_at(f, "a", 1, 100), 1);
	gt_check_int_equal(giong_file_len(f), 1);
	gt_check_int_equal(giong_file_close(f), 0);
}

static void test_append(void **state)
{
	(void)state;
	fs_run(body_append);
}

static void body_mode_and_custom(void)
{
	const char *p = fs_path("mode");
	struct giong_open_options o = {.write = true, .create_new = true, .mode = 0640};
	struct giong_file *f;
	struct stat st;
	mode_t um = umask(022);

	unlink(p);
	if (!gt_check_int_equal(giong_file_open(p, &o, &f), 0))
		return;
	gt_check_int_equal(giong_file_close(f), 0);
	gt_check_int_equal(stat(p, &st), 0);
	gt_check_int_equal(st.st_mode & 07777, 0640);
	/* create_new on an existing file, and on a dangling symbolic link. */
	gt_check_int_equal(giong_file_open(p, &o, &f), -EEXIST);
	gt_check_int_equal(symlink("does-not-exist", fs_path("dangling")), 0);
	gt_check_int_equal(giong_file_open(fs_path("dangling"), &o, &f), -EEXIST);
	/* mode 0 = 0666 before the umask. */
	unlink(p);
	o.mode = 0;
	if (!gt_check_int_equal(giong_file_open(p, &o, &f), 0))
		return;
	gt_check_int_equal(giong_file_close(f), 0);
	gt_check_int_equal(stat(p, &st), 0);
	gt_check_int_equal(st.st_mode & 07777, 0644);
	o.mode = 010000;
	gt_check_int_equal(giong_file_open(p, &o, &f), -EINVAL);
	umask(um);

	/* custom_flags: what the booleans own is refused; the rest passes. */
	o = (struct giong_open_options){.read = true};
	const int owned[] = {O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_TRUNC, O_APPEND};
	for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++) {
		o.custom_flags = owned[i];
		gt_check_int_equal(giong_open_options_flags(&o), -EINVAL);
		gt_check_int_equal(giong_file_open(p, &o, &f), -EINVAL);
	}
	gt_check_int_equal(symlink("mode", fs_path("link")), 0);
	o.custom_flags = O_NOFOLLOW;
	gt_check_int_equal(giong_file_open(fs_path("link"), &o, &f), -ELOOP);
	if (!gt_check_int_equal(giong_file_open(p, &o, &f), 0))
		return;
	gt_check_int_equal(giong_file_close(f), 0);
	gt_check_int_equal(giong_open_options_init(&o), 0);
	gt_check_false(o.read || o.write || o.append || o.create || o.create_new || o.truncate);
	gt_check_int_equal(giong_open_options_init(NULL), -EINVAL);
	gt_check_int_equal(giong_open_options_flags(NULL), -EINVAL);
}

static void test_mode_and_custom_flags(void **state)
{
	(void)state;
	fs_run(body_mode_and_custom);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_matrix_vs_open),
		cmocka_unit_test(test_append),
		cmocka_unit_test(test_mode_and_custom_flags),
	};

	return fs_test_main("options", tests, sizeof(tests) / sizeof(tests[0]));
}
