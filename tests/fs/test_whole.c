/* SPDX-License-Identifier: MIT */
/*
 * test_whole.c - giong_fs_read() and giong_fs_write(): a file that grows
 * between the size check and the read (made to happen deterministically by
 * interposing fstat), a file that grows while it is read (another thread
 * appending), files without a size (/proc, a FIFO), and the error cases.
 */
#include "fs_test.h"

#include <dlfcn.h>
#include <pthread.h>

/* --- fstat interposer: grow a file right after giong_fs_read() sized it. */
static int grow_next_fstat; /* how many fstat calls still grow the file */
static const char *grow_path;
static size_t grow_by;
static uint64_t grow_seed;

int fstat(int fd, struct stat *st)
{
	static int (*real)(int, struct stat *);
	int r;

	if (!real)
		real = (int (*)(int, struct stat *))dlsym(RTLD_NEXT, "fstat");
	r = real(fd, st);
	if (grow_next_fstat > 0) {
		char *more = malloc(grow_by);
		int w = open(grow_path, O_WRONLY | O_APPEND | O_CLOEXEC);

		grow_next_fstat--;
		fs_fill(more, grow_by, grow_seed);
		gt_check_true(w >= 0);
		gt_check_int_equal(write(w, more, grow_by), (ssize_t)grow_by);
		close(w);
		free(more);
	}
	return r;
}

static void check_grown(size_t start, size_t by)
{
	const char *p = fs_path("grow");
	char *src = malloc(start + by), *buf;
	size_t len;

	fs_fill(src, start, 5);
	fs_fill(src + start, by, 6);
	fs_put(p, src, start);
	grow_path = p;
	grow_by = by;
	grow_seed = 6;
	grow_next_fstat = 1;
	if (gt_check_int_equal(giong_fs_read(p, &buf, &len), 0)) {
		gt_check_int_equal(grow_next_fstat,
				   0); /* the size hint was taken before the growth */
		if (gt_check_int_equal(len, start + by)) {
			gt_check_memory_equal(buf, src, start + by);
			gt_check_int_equal(buf[len], '\0');
		}
		giong_fs_free(buf);
	}
	grow_next_fstat = 0;
	free(src);
}

static void body_grow_after_stat(void)
{
	check_grown(0, 10); /* empty when sized */
	check_grown(1, 1);  /* one probe byte more */
	check_grown(4096, 1);
	check_grown(4096, 100000); /* far beyond one doubling */
	check_grown(1 << 20, 3 << 20);
}

static void test_grows_between_stat_and_read(void **state)
{
	(void)state;
	fs_run(body_grow_after_stat);
}

/* --- another thread appends while fibers read the file whole. */
static int appending; /* atomic */
static size_t appended;

static unsigned char at(size_t i)
{
	return (unsigned char)(i * 131 + (i >> 9));
}

static void *appender(void *arg)
{
	unsigned char chunk[777];
	int fd = open((const char *)arg, O_WRONLY | O_APPEND | O_CLOEXEC);

	while (__atomic_load_n(&appending, __ATOMIC_ACQUIRE) && appended < (2u << 20)) {
		for (size_t i = 0; i < sizeof chunk; i++)
			chunk[i] = at(appended + i);
		if (write(fd, chunk, sizeof chunk) != (ssize_t)sizeof chunk)
			break;
		__atomic_store_n(&appended, appended + sizeof chunk, __ATOMIC_RELEASE);
	}
	close(fd);
	return NULL;
}

static void body_grow_concurrently(void)
{
	const char *p = fs_path("live");
	pthread_t th;
	int reads = 0;
	size_t last = 0;

	fs_put(p, "", 0);
	__atomic_store_n(&appending, 1, __ATOMIC_RELEASE);
	if (!gt_check_int_equal(pthread_create(&th, NULL, appender, (void *)p), 0))
		return;
	for (reads = 0; reads < 200; reads++) {
		size_t before = __atomic_load_n(&appended, __ATOMIC_ACQUIRE), len;
		char *buf;

		if (!gt_check_int_equal(giong_fs_read(p, &buf, &len), 0))
			break;
		gt_check_true(len >= before); /* never less than what was there */
		for (size_t i = 0; i < len; i++)
			if ((unsigned char)buf[i] != at(i))
				gt_check_fail_msg("byte %zu of %zu wrong", i, len);
		last = len;
		giong_fs_free(buf);
	}
	__atomic_store_n(&appending, 0, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	print_message("%d whole reads of a growing file, last %zu bytes\n", reads, last);
}

static void test_grows_while_read(void **state)
{
	(void)state;
	fs_run(body_grow_concurrently);
}

/* --- files without a size, and a FIFO whose writer comes later. */
static void *fifo_writer(void *arg)
{
	int fd = open((const char *)arg, O_WRONLY | O_CLOEXEC); /* waits for the reader */
	char buf[10000];

	fs_fill(buf, sizeof buf, 77);
	for (int i = 0; i < 10; i++)
		if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
			break;
	close(fd);
	return NULL;
}

static void body_sizeless(void)
{
	char *buf, want[10000];
	size_t len;
	pthread_t th;

	if (gt_check_int_equal(giong_fs_read("/proc/self/status", &buf, &len), 0)) {
		gt_check_true(len > 100);
		gt_check_non_null(strstr(buf, "Name:"));
		gt_check_int_equal(strlen(buf), len);
		giong_fs_free(buf);
	}

	const char *fifo = fs_path("fifo");
	if (!gt_check_int_equal(mkfifo(fifo, 0600), 0) ||
	    !gt_check_int_equal(pthread_create(&th, NULL, fifo_writer, (void *)fifo), 0))
		return;
	int r = giong_fs_read(fifo, &buf, &len);
	pthread_join(th, NULL);
	if (!gt_check_int_equal(r, 0))
		return;
	if (gt_check_int_equal(len, 100000)) {
		fs_fill(want, sizeof want, 77);
		for (int i = 0; i < 10; i++)
			gt_check_memory_equal(buf + i * 10000, want, 10000);
	}
	giong_fs_free(buf);
}

static void test_sizeless_files(void **state)
{
	(void)state;
	fs_run(body_sizeless);
}

static void body_errors(void)
{
	char *buf = (char *)1;
	size_t len = 99;
	struct stat st;

	gt_check_int_equal(giong_fs_read(fs_path("missing"), &buf, &len), -ENOENT);
	gt_check_null(buf);
	gt_check_int_equal(len, 0);
	gt_check_int_equal(giong_fs_read(fs_scratch, &buf, &len), -EISDIR);
	gt_check_null(buf);
	gt_check_int_equal(giong_fs_read(NULL, &buf, &len), -EINVAL);
	gt_check_int_equal(giong_fs_read(fs_path("x"), NULL, &len), -EINVAL);
	gt_check_int_equal(giong_fs_read(fs_path("x"), &buf, NULL), -EINVAL);
	gt_check_int_equal(giong_fs_write(NULL, "a", 1), -EINVAL);
	gt_check_int_equal(giong_fs_write(fs_path("x"), NULL, 1), -EINVAL);
	gt_check_int_equal(giong_fs_write(fs_scratch, "a", 1), -EISDIR);
	gt_check_int_equal(giong_fs_write(fs_path("no/such/dir"), "a", 1), -ENOENT);

	/* empty file: a valid, NUL-terminated, empty buffer */
	gt_check_int_equal(giong_fs_write(fs_path("empty"), NULL, 0), 0);
	if (gt_check_int_equal(giong_fs_read(fs_path("empty"), &buf, &len), 0) &&
	    gt_check_non_null(buf)) {
		gt_check_int_equal(len, 0);
		gt_check_int_equal(buf[0], '\0');
		giong_fs_free(buf);
	}
	giong_fs_free(NULL);

	/* giong_fs_write replaces the contents */
	gt_check_int_equal(giong_fs_write(fs_path("w"), "long contents", 13), 0);
	gt_check_int_equal(giong_fs_write(fs_path("w"), "short", 5), 0);
	gt_check_int_equal(stat(fs_path("w"), &st), 0);
	gt_check_int_equal(st.st_size, 5);
}

static void test_errors(void **state)
{
	(void)state;
	fs_run(body_errors);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grows_between_stat_and_read),
		cmocka_unit_test(test_grows_while_read),
		cmocka_unit_test(test_sizeless_files),
		cmocka_unit_test(test_errors),
	};

	return fs_test_main("whole", tests, sizeof(tests) / sizeof(tests[0]));
}
