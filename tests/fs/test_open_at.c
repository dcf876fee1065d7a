/* SPDX-License-Identifier: MIT */
/*
 * test_open_at.c - giong_file_open_at() and giong_open_options.resolve: on
 * a scratch tree (root/ with a.txt, sub/b.txt, a symlink pointing inside, a
 * relative and an absolute one pointing outside, an absolute one pointing
 * inside, a FIFO; a sibling directory outside/ with x), RESOLVE_BENEATH
 * opens what is inside (".." that stays inside included) and the kernel
 * refuses every way out with -EXDEV; RESOLVE_NO_SYMLINKS refuses a link
 * with -ELOOP; RESOLVE_IN_ROOT clamps "/" and ".." to the root; O_CREAT
 * beneath applies the mode; a FIFO opened O_NONBLOCK read-only returns at
 * once and stats as a FIFO; bad arguments are -EINVAL / -EBADF / -ENOTDIR;
 * giong_file_open() with resolve works relative to the working directory.
 * Each body runs with ring_only false (the direct cached openat2) and true
 * (IORING_OP_OPENAT2); descriptors end at their baseline.
 */
#include "fs_test.h"

#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

static bool ring_only;

/* Whether opens can take the direct path here (as in test_open_cached). */
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

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The tree, made once per process (the bodies only read it, apart from the
 * files they create and remove). */
static char root[PATH_MAX / 2 + 8];

static void make_tree(void)
{
	char abs_in[PATH_MAX];

	if (root[0])
		return;
	snprintf(root, sizeof root, "%s/root", fs_scratch);
	gt_check_int_equal(mkdir(root, 0700), 0);
	gt_check_int_equal(mkdir(fs_path("root/sub"), 0700), 0);
	gt_check_int_equal(mkdir(fs_path("outside"), 0700), 0);
	fs_put(fs_path("root/a.txt"), "A", 1);
	fs_put(fs_path("root/sub/b.txt"), "BB", 2);
	fs_put(fs_path("outside/x"), "XXX", 3);
	gt_check_int_equal(symlink("sub/b.txt", fs_path("root/in_link")), 0);
	gt_check_int_equal(symlink("../a.txt", fs_path("root/sub/up_link")), 0);
	gt_check_int_equal(symlink("../outside/x", fs_path("root/out_link")), 0);
	gt_check_int_equal(symlink("/etc/hostname", fs_path("root/etc_link")), 0);
	snprintf(abs_in, sizeof abs_in, "%s/a.txt", root);
	gt_check_int_equal(symlink(abs_in, fs_path("root/abs_link")), 0);
	gt_check_int_equal(mkfifo(fs_path("root/fifo"), 0600), 0);
}

/* Open @path under @dirfd with @resolve, read-only; return 0 and check the
 * first @n bytes are @want, or return the error. */
static int open_read(int dirfd, const char *path, unsigned resolve, const char *want, size_t n)
{
	struct giong_open_options o = {.read = true, .ring_only = ring_only, .resolve = resolve};
	struct giong_file *f = (struct giong_file *)1;
	char buf[16];
	int r = giong_file_open_at(dirfd, path, &o, &f);

	if (r) {
		gt_check_null(f);
		return r;
	}
	if (gt_check_int_equal(giong_file_read_at(f, buf, sizeof buf, 0), n))
		gt_check_memory_equal(buf, want, n);
	gt_check_int_equal(giong_file_close(f), 0);
	return 0;
}

static void body_beneath(void)
{
	const unsigned B = RESOLVE_BENEATH;
	int fds, dfd;
	char abs_a[PATH_MAX];

	make_tree();
	fds = gt_count_fds();
	dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (!gt_check_true(dfd >= 0))
		return;
	snprintf(abs_a, sizeof abs_a, "%s/a.txt", root);

	/* inside */
	gt_check_int_equal(open_read(dfd, "a.txt", B, "A", 1), 0);
	gt_check_int_equal(open_read(dfd, "sub/b.txt", B, "BB", 2), 0);
	gt_check_int_equal(open_read(dfd, "in_link", B, "BB", 2), 0);
	gt_check_int_equal(open_read(dfd, "sub/../a.txt", B, "A", 1), 0);
	gt_check_int_equal(open_read(dfd, "sub/up_link", B, "A", 1), 0);
	gt_check_int_equal(open_read(dfd, "./sub/./b.txt", B, "BB", 2), 0);
	/* without resolve flags the way out is open (the control) */
	gt_check_int_equal(open_read(dfd, "../outside/x", 0, "XXX", 3), 0);
	gt_check_int_equal(open_read(dfd, "out_link", 0, "XXX", 3), 0);

	/* every way out: the kernel says EXDEV */
	gt_check_int_equal(open_read(dfd, "../outside/x", B, NULL, 0), -EXDEV);
	gt_check_int_equal(open_read(dfd, "..", B, NULL, 0), -EXDEV);
	gt_check_int_equal(open_read(dfd, "sub/../../outside/x", B, NULL, 0), -EXDEV);
	gt_check_int_equal(open_read(dfd, "/etc/hostname", B, NULL, 0), -EXDEV);
	gt_check_int_equal(open_read(dfd, abs_a, B, NULL, 0), -EXDEV); /* absolute, inside */
	gt_check_int_equal(open_read(dfd, "out_link", B, NULL, 0), -EXDEV);
	gt_check_int_equal(open_read(dfd, "etc_link", B, NULL, 0), -EXDEV);
	gt_check_int_equal(open_read(dfd, "abs_link", B, NULL, 0), -EXDEV); /* to inside */
	/* the same refusal with a missing target: EXDEV before any lookup */
	gt_check_int_equal(open_read(dfd, "../no-such-file", B, NULL, 0), -EXDEV);
	/* missing inside: ENOENT as usual */
	gt_check_int_equal(open_read(dfd, "missing", B, NULL, 0), -ENOENT);

	/* RESOLVE_NO_SYMLINKS: any link, the last component's too */
	gt_check_int_equal(open_read(dfd, "in_link", RESOLVE_NO_SYMLINKS, NULL, 0), -ELOOP);
	gt_check_int_equal(open_read(dfd, "in_link", B | RESOLVE_NO_SYMLINKS, NULL, 0), -ELOOP);
	gt_check_int_equal(open_read(dfd, "a.txt", RESOLVE_NO_SYMLINKS, "A", 1), 0);
	/* RESOLVE_NO_MAGICLINKS and NO_XDEV: plain files pass */
	gt_check_int_equal(
		open_read(dfd, "in_link", RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV, "BB", 2), 0);

	/* RESOLVE_IN_ROOT: "/" and ".." stop at the root */
	gt_check_int_equal(open_read(dfd, "/a.txt", RESOLVE_IN_ROOT, "A", 1), 0);
	gt_check_int_equal(open_read(dfd, "../../a.txt", RESOLVE_IN_ROOT, "A", 1), 0);
	gt_check_int_equal(open_read(dfd, "/etc/hostname", RESOLVE_IN_ROOT, NULL, 0), -ENOENT);

	/* AT_FDCWD with an absolute path and no resolve: an ordinary open */
	gt_check_int_equal(open_read(AT_FDCWD, abs_a, 0, "A", 1), 0);

	close(dfd);
	gt_check_int_equal(gt_count_fds(), fds);
}

/* O_CREAT beneath: openat2 takes the mode only with O_CREAT, and gets it. */
static void body_create(void)
{
	struct giong_open_options o = {.write = true,
				       .create_new = true,
				       .mode = 0640,
				       .ring_only = ring_only,
				       .resolve = RESOLVE_BENEATH};
	struct giong_file *f;
	struct giong_stat st;
	int fds, dfd;
	mode_t old;

	make_tree();
	fds = gt_count_fds();
	dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (!gt_check_true(dfd >= 0))
		return;
	old = umask(022);
	gt_check_int_equal(giong_file_open_at(dfd, "../outside/new", &o, &f), -EXDEV);
	gt_check_int_equal(access(fs_path("outside/new"), F_OK), -1);
	if (gt_check_int_equal(giong_file_open_at(dfd, "sub/new", &o, &f), 0)) {
		gt_check_int_equal(giong_file_write_all_at(f, "n", 1, 0), 0);
		if (gt_check_int_equal(giong_file_stat(f, &st), 0)) {
			gt_check_true(S_ISREG(st.mode));
			gt_check_int_equal(st.mode & 07777, 0640);
		}
		gt_check_int_equal(giong_file_close(f), 0);
	}
	gt_check_int_equal(giong_file_open_at(dfd, "sub/new", &o, &f), -EEXIST);
	umask(old);
	gt_check_int_equal(unlink(fs_path("root/sub/new")), 0);
	close(dfd);
	gt_check_int_equal(gt_count_fds(), fds);
}

/* A FIFO with no writer, O_NONBLOCK read-only: back at once, never waiting
 * for a writer (a deadline of 2 s guards the test against a hang). */
static void body_fifo(void)
{
	struct giong_open_options ro = {.read = true,
					.custom_flags = O_NONBLOCK,
					.ring_only = ring_only,
					.resolve = RESOLVE_BENEATH};
	struct giong_open_options wo = ro;
	struct giong_file *f = NULL;
	struct giong_stat st;
	int fds, dfd, r;
	uint64_t saved, t0, took;

	make_tree();
	fds = gt_count_fds();
	dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (!gt_check_true(dfd >= 0))
		return;
	wo.read = false;
	wo.write = true;
	saved = giong_deadline_in(2000);
	t0 = mono_ms();
	r = giong_file_open_at(dfd, "fifo", &ro, &f);
	took = mono_ms() - t0;
	giong_deadline_restore(saved);
	gt_check_int_equal(r, 0);
	/* Did not block for a writer (until the 2 s deadline); through io-wq
	 * under TSan or valgrind, slow. */
	gt_check_true(took < 1500);
	if (r == 0) {
		gt_check_true(fcntl(giong_file_fd(f), F_GETFL) & O_NONBLOCK);
		if (gt_check_int_equal(giong_file_stat(f, &st), 0))
			gt_check_true(S_ISFIFO(st.mode));
		gt_check_int_equal(giong_file_close(f), 0);
	}
	/* write-only with no reader: ENXIO at once */
	saved = giong_deadline_in(2000);
	gt_check_int_equal(giong_file_open_at(dfd, "fifo", &wo, &f), -ENXIO);
	giong_deadline_restore(saved);
	/* a regular file stats as one */
	ro.custom_flags = O_NONBLOCK;
	if (gt_check_int_equal(giong_file_open_at(dfd, "a.txt", &ro, &f), 0)) {
		if (gt_check_int_equal(giong_file_stat(f, &st), 0))
			gt_check_true(S_ISREG(st.mode));
		gt_check_int_equal(giong_file_close(f), 0);
	}
	close(dfd);
	gt_check_int_equal(gt_count_fds(), fds);
}

static void body_bad_args(void)
{
	struct giong_open_options o = {.read = true, .ring_only = ring_only};
	struct giong_open_options none = {.ring_only = ring_only, .resolve = RESOLVE_BENEATH};
	struct giong_file *f = (struct giong_file *)1;
	int fds, dfd, filefd;

	make_tree();
	fds = gt_count_fds();
	dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	filefd = open(fs_path("root/a.txt"), O_RDONLY | O_CLOEXEC);
	if (!gt_check_true(dfd >= 0) || !gt_check_true(filefd >= 0))
		return;
	gt_check_int_equal(giong_file_open_at(dfd, NULL, &o, &f), -EINVAL);
	gt_check_null(f);
	gt_check_int_equal(giong_file_open_at(dfd, "a.txt", NULL, &f), -EINVAL);
	gt_check_int_equal(giong_file_open_at(dfd, "a.txt", &o, NULL), -EINVAL);
	gt_check_int_equal(giong_file_open_at(dfd, "a.txt", &none, &f), -EINVAL); /* no access */
	o.resolve = RESOLVE_CACHED; /* giong's own business */
	gt_check_int_equal(giong_file_open_at(dfd, "a.txt", &o, &f), -EINVAL);
	o.resolve = 0x40;
	gt_check_int_equal(giong_file_open_at(dfd, "a.txt", &o, &f), -EINVAL);
	o.resolve = 1u << 31;
	gt_check_int_equal(giong_file_open_at(dfd, "a.txt", &o, &f), -EINVAL);
	o.resolve = RESOLVE_BENEATH | RESOLVE_IN_ROOT;
	gt_check_int_equal(giong_file_open_at(dfd, "a.txt", &o, &f), -EINVAL);
	gt_check_int_equal(giong_file_open(fs_path("root/a.txt"), &o, &f), -EINVAL);
	o.resolve = RESOLVE_BENEATH;
	gt_check_int_equal(giong_file_open_at(-5, "a.txt", &o, &f), -EBADF);
	gt_check_int_equal(giong_file_open_at(1 << 20, "a.txt", &o, &f), -EBADF);
	gt_check_int_equal(giong_file_open_at(filefd, "a.txt", &o, &f), -ENOTDIR);
	gt_check_null(f);
	/* giong_open_options_flags() ignores resolve */
	{
		struct giong_open_options plain = {.read = true};

		gt_check_int_equal(giong_open_options_flags(&o), giong_open_options_flags(&plain));
	}
	close(filefd);
	close(dfd);
	gt_check_int_equal(gt_count_fds(), fds);
}

/* giong_file_open() with resolve: openat2 relative to the working
 * directory. */
static void body_cwd(void)
{
	struct giong_open_options o = {
		.read = true, .ring_only = ring_only, .resolve = RESOLVE_BENEATH};
	struct giong_file *f;
	char buf[4];
	int fds, here;

	make_tree();
	fds = gt_count_fds();
	here = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (!gt_check_true(here >= 0) || !gt_check_int_equal(chdir(root), 0))
		return;
	if (gt_check_int_equal(giong_file_open("sub/b.txt", &o, &f), 0)) {
		gt_check_int_equal(giong_file_read_at(f, buf, sizeof buf, 0), 2);
		gt_check_int_equal(giong_file_close(f), 0);
	}
	gt_check_int_equal(giong_file_open("../outside/x", &o, &f), -EXDEV);
	gt_check_int_equal(giong_file_open("out_link", &o, &f), -EXDEV);
	gt_check_int_equal(giong_file_open("/etc/hostname", &o, &f), -EXDEV);
	gt_check_int_equal(giong_file_open_at(AT_FDCWD, "a.txt", &o, &f), 0);
	gt_check_int_equal(giong_file_close(f), 0);
	o.resolve = RESOLVE_NO_SYMLINKS;
	gt_check_int_equal(giong_file_open("in_link", &o, &f), -ELOOP);
	gt_check_int_equal(fchdir(here), 0);
	close(here);
	gt_check_int_equal(gt_count_fds(), fds);
}

/* SQEs one open_at() of @path costs (after its close too has gone). */
static uint64_t sqes_of(int dfd, const char *path, const struct giong_open_options *o, int want)
{
	struct giong_file *f;
	uint64_t s0;

	gt_check_int_equal(giong_yield(), 0);
	s0 = fs_sqes();
	if (gt_check_int_equal(giong_file_open_at(dfd, path, o, &f), want) && want == 0)
		giong_file_close(f);
	gt_check_int_equal(giong_yield(), 0);
	return fs_sqes() - s0 - (want == 0); /* less the close */
}

/* Which path an open takes: the direct attempt costs no SQE, ring_only one.
 * A refusal the RCU-walk can decide (an absolute path or an absolute link
 * under RESOLVE_BENEATH, a link under RESOLVE_NO_SYMLINKS) is final in the
 * direct attempt; a ".." that would climb above the directory makes the
 * RCU-walk give up (-ECHILD, so RESOLVE_CACHED's -EAGAIN) and the ring
 * gives the kernel's -EXDEV. */
static void body_sqes(void)
{
	struct giong_open_options o = {.read = true, .resolve = RESOLVE_BENEATH};
	struct giong_open_options ns = {.read = true, .resolve = RESOLVE_NO_SYMLINKS};
	int dfd;

	make_tree();
	dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (!gt_check_true(dfd >= 0))
		return;
	gt_check_int_equal(open_read(dfd, "sub/b.txt", RESOLVE_BENEATH, "BB", 2), 0); /* warm */
	gt_check_int_equal(open_read(dfd, "in_link", RESOLVE_BENEATH, "BB", 2), 0);
	for (int ro = 0; ro < 2; ro++) {
		/* At most one SQE either way (see below); exactly one with ring_only. */
		int want = 1;
		/* The direct attempt is the kernel's RCU-walk, which gives up (and
		 * the ring then answers) whenever a rename or a cold dentry on
		 * the way interferes: under a loaded machine (CI), even for these.
		 * So without ring_only at most one SQE; the answer is the same. */
		int lo = ro || ring_opens() ? 1 : 0;

		o.ring_only = ns.ring_only = ro;
		gt_check_in_range(sqes_of(dfd, "sub/b.txt", &o, 0), lo, want);
		gt_check_in_range(sqes_of(dfd, "in_link", &o, 0), lo, want);
		gt_check_in_range(sqes_of(dfd, "/etc/hostname", &o, -EXDEV), lo, want);
		gt_check_in_range(sqes_of(dfd, "etc_link", &o, -EXDEV), lo, want);
		gt_check_in_range(sqes_of(dfd, "in_link", &ns, -ELOOP), lo, want);
		gt_check_int_equal(sqes_of(dfd, "out_link", &o, -EXDEV), 1);
		gt_check_int_equal(sqes_of(dfd, "../outside/x", &o, -EXDEV), 1);
	}
	close(dfd);
}

#define BOTH(name)                                                                                 \
	static void test_##name##_direct(void **state)                                             \
	{                                                                                          \
		(void)state;                                                                       \
		ring_only = false;                                                                 \
		fs_run(body_##name);                                                               \
	}                                                                                          \
	static void test_##name##_ring(void **state)                                               \
	{                                                                                          \
		(void)state;                                                                       \
		ring_only = true;                                                                  \
		fs_run(body_##name);                                                               \
	}

BOTH(beneath)
BOTH(create)
BOTH(fifo)
BOTH(bad_args)
BOTH(cwd)

static void test_sqes(void **state)
{
	(void)state;
	fs_run(body_sqes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_beneath_direct),
		cmocka_unit_test(test_beneath_ring),
		cmocka_unit_test(test_create_direct),
		cmocka_unit_test(test_create_ring),
		cmocka_unit_test(test_fifo_direct),
		cmocka_unit_test(test_fifo_ring),
		cmocka_unit_test(test_bad_args_direct),
		cmocka_unit_test(test_bad_args_ring),
		cmocka_unit_test(test_cwd_direct),
		cmocka_unit_test(test_cwd_ring),
		cmocka_unit_test(test_sqes),
	};

	return fs_test_main("open_at", tests, sizeof(tests) / sizeof(tests[0]));
}
