/* SPDX-License-Identifier: MIT */
/*
 * fs_test.h - fixtures of the libgiong-fs tests only (header-only: each
 * test executable includes it once); what all tests share (the io_uring
 * skip, descriptor counting, the gt_check_*() record of what tasks saw) is
 * in tests/support/giong_test.h.
 *
 *   fs_test_main()        skip (exit 77) when io_uring is unusable, make a
 *                         scratch directory, run the group, remove it; each
 *                         test ends with gt_checks_assert()
 *   fs_run(fn)            run fn() as the main fiber of giong_block_on(),
 *                         then gt_checks_assert()
 *   fs_path(name)         a path inside the scratch directory (static buffer
 *                         ring: valid for the next 7 calls)
 *   fs_fill(), fs_rand()  deterministic data
 *   fs_put()              write a file with plain system calls
 *   fs_sqes()             the worker's giong_stats().sqes_submitted
 *   fs_ring_env()         GIONG_FS_READ=ring is set (the *_ring_reads runs)
 */
#ifndef GIONG_TESTS_FS_TEST_H
#define GIONG_TESTS_FS_TEST_H

#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "giong_test.h"

#include <giong/fs.h>

static char fs_scratch[PATH_MAX / 2];

static inline const char *fs_path(const char *name)
{
	static char bufs[8][PATH_MAX];
	static unsigned next;
	char *b = bufs[next++ % 8];

	snprintf(b, PATH_MAX, "%s/%s", fs_scratch, name);
	return b;
}

struct fs_body {
	void (*fn)(void);
};

static inline void fs_body_main(unsigned worker, void *arg)
{
	(void)worker;
	((struct fs_body *)arg)->fn();
}

/* Run @fn as the main fiber of a one-worker runtime (GIONG_RING_TIER is
 * honoured by giong_block_on()); fn records with gt_check_*(), asserted
 * here once the runtime has returned. */
static inline void fs_run(void (*fn)(void))
{
	struct fs_body b = {fn};
	int r = giong_block_on(fs_body_main, &b);

	if (r)
		print_error("giong_block_on: %s\n", giong_strerror(r));
	gt_checks_assert();
	assert_int_equal(r, 0);
}

/* xorshift64*: deterministic data and offsets. */
static inline uint64_t fs_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static inline void fs_fill(void *buf, size_t len, uint64_t seed)
{
	unsigned char *p = buf;
	uint64_t s = seed | 1;

	for (size_t i = 0; i < len; i++) {
		if (!(i & 7))
			s = fs_rand(&s);
		p[i] = (unsigned char)(s >> ((i & 7) * 8));
	}
}

/* Write @len bytes with plain system calls (the reference side). Records
 * with gt_check_*(): called in tasks and in tests, which the group's
 * teardown asserts. */
static inline void fs_put(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	const char *p = data;

	if (!gt_check_true(fd >= 0))
		return;
	while (len) {
		ssize_t n = write(fd, p, len);

		if (!gt_check_true(n > 0))
			break;
		p += n;
		len -= (size_t)n;
	}
	gt_check_int_equal(close(fd), 0);
}

static inline int fs_rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static inline uint64_t fs_sqes(void)
{
	struct giong_stats st = {0};

	gt_check_int_equal(giong_stats(&st), 0);
	return st.sqes_submitted;
}

/* GIONG_FS_READ=ring: every read and open goes through the ring. */
static inline bool fs_ring_env(void)
{
	const char *e = getenv("GIONG_FS_READ");

	return e && strcmp(e, "ring") == 0;
}

/* The teardown of every test: what its tasks (or fs_put() outside them)
 * recorded. */
static inline int fs_checks_teardown(void **state)
{
	(void)state;
	gt_checks_assert();
	return 0;
}

static inline int fs_test_main(const char *name, const struct CMUnitTest *tests, size_t n)
{
	const char *tmp = getenv("TMPDIR");
	struct CMUnitTest *t;
	int r;

	/* A runtime that cannot start is a skip, not a failure; says why (where
	 * io_uring is refused the runtime, and the test, run on the epoll tier). */
	gt_require_runtime();
	/* Descriptor counts compare before and after: /proc/self/fd must be
	 * readable, or every comparison would compare -1 with -1. */
	if (gt_count_fds() < 0) {
		printf("FAIL %s: /proc/self/fd: %s\n", name, strerror(errno));
		return 1;
	}
	t = calloc(n, sizeof(*t));
	if (!t)
		return 1;
	for (size_t i = 0; i < n; i++) {
		t[i] = tests[i];
		if (!t[i].teardown_func)
			t[i].teardown_func = fs_checks_teardown;
	}
	/* The fs tests hold the page-cache fast paths of a disk filesystem to
	 * their promises. /tmp is a tmpfs on many systems, where RWF_NOWAIT is
	 * refused (reads fall back to the ring, as file.h says) and some errors
	 * differ: without TMPDIR, use /var/tmp, which is on disk. */
	if (!tmp || !*tmp)
		tmp = access("/var/tmp", W_OK) == 0 ? "/var/tmp" : "/tmp";
	snprintf(fs_scratch, sizeof(fs_scratch), "%s/giong-fs-%s-XXXXXX", tmp, name);
	if (!mkdtemp(fs_scratch)) {
		perror("mkdtemp");
		free(t);
		return 1;
	}
	r = _cmocka_run_group_tests(name, t, n, NULL, NULL);
	nftw(fs_scratch, fs_rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(t);
	return r;
}

#endif /* GIONG_TESTS_FS_TEST_H */
