/* SPDX-License-Identifier: MIT */
/*
 * fs_test.h - fixtures shared by the libgiong-fs tests (header-only: each
 * test executable includes it once).
 *
 *   fs_test_main()        skip (exit 77) when io_uring is unusable, make a
 *                         scratch directory, run the group, remove it
 *   fs_run(fn)            run fn() as the main fiber of giong_block_on()
 *   fs_path(name)         a path inside the scratch directory (static buffer
 *                         ring: valid for the next 7 calls)
 *   fs_count_fds()        entries of /proc/self/fd
 *   fs_fill(), fs_rand()  deterministic data
 *   fs_sqes()             the worker's giong_stats().sqes_submitted
 *   fs_ring_env()         GIONG_FS_READ=ring is set (the *_ring_reads runs)
 */
#ifndef GIONG_TESTS_FS_TEST_H
#define GIONG_TESTS_FS_TEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cmocka.h>

#include <giong/core.h>
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
 * honoured by giong_block_on()). */
static inline void fs_run(void (*fn)(void))
{
	struct fs_body b = { fn };
	int r = giong_block_on(fs_body_main, &b);

	if (r)
		print_error("giong_block_on: %s\n", giong_strerror(r));
	assert_int_equal(r, 0);
}

static inline int fs_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the DIR's own descriptor */
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

/* Write @len bytes with plain system calls (the reference side). */
static inline void fs_put(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	const char *p = data;

	assert_true(fd >= 0);
	while (len) {
		ssize_t n = write(fd, p, len);

		assert_true(n > 0);
		p += n;
		len -= (size_t)n;
	}
	assert_int_equal(close(fd), 0);
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
	struct giong_stats st;

	assert_int_equal(giong_stats(&st), 0);
	return st.sqes_submitted;
}

/* GIONG_FS_READ=ring: every read and open goes through the ring. */
static inline bool fs_ring_env(void)
{
	const char *e = getenv("GIONG_FS_READ");

	return e && strcmp(e, "ring") == 0;
}

static inline void fs_noop_main(unsigned worker, void *arg)
{
	(void)worker;
	(void)arg;
}

static inline int fs_test_main(const char *name, const struct CMUnitTest *tests, size_t n)
{
	const char *tmp = getenv("TMPDIR");
	int r;

	/* The bodies assert inside tasks: a failure aborts rather than
	 * longjmp off a fiber stack (see giong_test.h). */
	setenv("CMOCKA_TEST_ABORT", "1", 0);
	/* A runtime that cannot start (io_uring blocked or missing) is a skip,
	 * not a failure; say why. */
	r = giong_block_on(fs_noop_main, NULL);
	if (r == GIONG_EURING_DISABLED || r == GIONG_ENOURING || r == GIONG_EURING_OLD) {
		printf("SKIP %s: io_uring is not usable here: %s\n", name, giong_strerror(r));
		return 77;
	}
	if (r) {
		printf("FAIL %s: giong_block_on: %s\n", name, giong_strerror(r));
		return 1;
	}
	snprintf(fs_scratch, sizeof(fs_scratch), "%s/giong-fs-%s-XXXXXX", tmp ? tmp : "/tmp", name);
	if (!mkdtemp(fs_scratch)) {
		perror("mkdtemp");
		return 1;
	}
	r = _cmocka_run_group_tests(name, tests, n, NULL, NULL);
	nftw(fs_scratch, fs_rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return r;
}

#endif /* GIONG_TESTS_FS_TEST_H */
