/* SPDX-License-Identifier: MIT */
/*
 * test_epoll_reads.c - reads the epoll tier hands to its helper threads
 * (issue 27), and the buffer's ownership when such a read is cancelled:
 *
 *   - a read a helper is inside (blocked on an empty pipe) is interrupted by
 *     its task's cancel: giong_io() returns -ECANCELED only once the helper
 *     has left the read, and after the buffer is freed, bytes written to the
 *     pipe stay there (no thread reads into the freed buffer);
 *   - a read the cancel cannot interrupt (the program's own SIGURG handler,
 *     SA_RESTART) keeps its buffer past its task's cancel: giong_io() waits for
 *     the helper, returns what it read (io_uring's "completed anyway"), and
 *     the bytes are in the buffer before it returns;
 *   - a cancel by descriptor (IORING_ASYNC_CANCEL_FD) reaches a read a
 *     helper runs (-EALREADY, interrupted) and one queued for a helper;
 *   - with two helpers held, 32 file reads queue, and all complete with the
 *     file's bytes once the helpers are free.
 *
 * How a read reaches a helper blocked on a pipe: the tier tries a read at
 * once (RWF_NOWAIT); a /proc file refuses that (EOPNOTSUPP) and is a
 * regular file, so its read is queued for a helper. While the only helper
 * is held (an open of a FIFO with no reader), the test puts a pipe's read
 * end under the same descriptor number (dup3): the helper then reads the
 * pipe, as it would a file on a slow or remote file system. Forced onto
 * the epoll tier, whatever GIONG_RING_TIER says.
 */
#include <dirent.h>
#include <fcntl.h>
#include <liburing.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "giong_test.h"

#define BUF 64
#define CHUNKS 32
#define CHUNK 4096

struct reads {
	char dir[64];
	char fifo[96];
	char link[64];     /* /proc/self/fd/N of the FIFO: never a cached lookup */
	int memfd;         /* CHUNKS chunks, chunk i's byte k being i * 7 + k / 16 */
	bool memfd_pooled; /* its reads take no RWF_NOWAIT: all go to a helper */
	int pfd;           /* O_PATH descriptor of the FIFO */
	int fd;            /* the read's descriptor (a /proc file, then a pipe) */
	int wr;            /* the pipe's write end */
	char *buf;         /* the read's heap buffer */
	volatile int res;  /* the read's result, once giong_io() returned */
	volatile int back; /* giong_io() returned */
	int chunk_ok[CHUNKS];
};

/* Holds its helper until the FIFO gets a reader (or the open is
 * cancelled). 0 (what it opened is closed) or the error. */
static intptr_t holder(void *arg)
{
	return gt_io_open(((struct reads *)arg)->link, O_WRONLY | O_CLOEXEC);
}

/* Free a holder: open the FIFO's read end, which completes its open. */
static void release_holder(struct reads *r, struct giong_task *t)
{
	intptr_t res = -1;
	int rd = open(r->fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	gt_check_true(rd >= 0);
	gt_check_int_equal(giong_join(t, &res), 0);
	gt_check_int_equal(res, 0);
	close(rd);
}

static intptr_t reader(void *arg)
{
	struct reads *r = arg;
	struct io_uring_sqe *sqe = giong_sqe();

	/* Offset -1: the file position (a pipe takes no offset). */
	io_uring_prep_read(sqe, r->fd, r->buf, BUF, (uint64_t)-1);
	r->res = giong_io(sqe);
	r->back = 1;
	return 0;
}

/* The number of helper threads ("giong-blk") inside system call @nr now
 * (/proc/self/task/T/syscall starts with the number of the call a thread
 * waits in). */
static int helpers_in(long nr)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[300], text[64] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (!fgets(text, sizeof(text), f) || strncmp(text, "giong-blk", 9)) {
			fclose(f);
			continue;
		}
		fclose(f);
		snprintf(path, sizeof(path), "/proc/self/task/%s/syscall", e->d_name);
		f = fopen(path, "re");
		if (f && fgets(text, sizeof(text), f) && strtol(text, NULL, 10) == nr)
			n++;
		if (f)
			fclose(f);
	}
	closedir(d);
	return n;
}

/* Wait (at most 5 s: valgrind starts threads slowly) until @want helpers
 * are inside system call @nr. */
static bool wait_helpers_in(long nr, int want)
{
	for (int i = 0; i < 5000; i++) {
		if (helpers_in(nr) == want)
			return true;
		giong_sleep_ms(1);
	}
	return false;
}

/* The helper is held; the read is queued behind it on a /proc file; the
 * pipe takes that descriptor number; the helper is freed and enters the
 * read, blocked: the pipe is empty, its write end open. */
static bool read_in_helper(struct reads *r, struct giong_task **rt)
{
	struct giong_task *held;
	int p[2];

	if (!gt_check_int_equal(giong_spawn(holder, r, &held), 0))
		return false;
	if (!gt_check_true(wait_helpers_in(SYS_openat, 1)))
		return false;
	r->fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	r->buf = malloc(BUF);
	if (!gt_check_true(r->fd >= 0 && r->buf))
		return false;
	memset(r->buf, 0, BUF);
	if (!gt_check_int_equal(giong_spawn(reader, r, rt), 0))
		return false;
	giong_sleep_ms(5); /* submitted: queued behind the holder */
	gt_check_int_equal(r->back, 0);
	if (!gt_check_int_equal(pipe2(p, O_CLOEXEC), 0))
		return false;
	gt_check_int_equal(dup3(p[0], r->fd, O_CLOEXEC), r->fd);
	close(p[0]);
	r->wr = p[1];
	release_holder(r, held);
	return gt_check_true(wait_helpers_in(SYS_preadv2, 1));
}

/* After the read is over: the bytes written now stay in the pipe. */
static void check_pipe_untouched(struct reads *r)
{
	char back[8] = "";

	gt_check_int_equal(helpers_in(SYS_preadv2), 0);
	gt_check_int_equal(write(r->wr, "late", 4), 4);
	giong_sleep_ms(20); /* time for a stray reader to take them */
	gt_check_int_equal(fcntl(r->fd, F_SETFL, O_NONBLOCK), 0);
	gt_check_int_equal(read(r->fd, back, sizeof(back)), 4);
	gt_check_int_equal(memcmp(back, "late", 4), 0);
	close(r->wr);
	close(r->fd);
}

static void cancelled_main(unsigned w, void *arg)
{
	struct reads *r = arg;
	struct giong_task *rt;

	(void)w;
	if (!read_in_helper(r, &rt))
		return;
	giong_sleep_ms(10);
	gt_check_int_equal(r->back, 0);
	gt_check_int_equal(giong_task_cancel(rt), 0);
	gt_check_int_equal(giong_join(rt, NULL), -ECANCELED);
	gt_check_int_equal(r->back, 1);
	gt_check_int_equal(r->res, -ECANCELED);
	free(r->buf); /* giong_io() returned: the buffer is the task's again */
	r->buf = NULL;
	check_pipe_untouched(r);
}

static void ignore_urg(int sig)
{
	(void)sig;
}

static void outlives_main(unsigned w, void *arg)
{
	struct reads *r = arg;
	struct giong_task *rt;

	(void)w;
	if (!read_in_helper(r, &rt))
		return;
	gt_check_int_equal(giong_task_cancel(rt), 0);
	giong_sleep_ms(50); /* the signal is sent again every 10 ms */
	/* The cancel came, the read goes on: giong_io() still waits. */
	gt_check_int_equal(r->back, 0);
	/* Back in it: the signal's handler returns, the read restarts. */
	gt_check_true(wait_helpers_in(SYS_preadv2, 1));
	gt_check_int_equal(write(r->wr, "hello", 5), 5);
	gt_check_int_equal(giong_join(rt, NULL), -ECANCELED);
	gt_check_int_equal(r->back, 1);
	gt_check_int_equal(r->res, 5);
	gt_check_int_equal(memcmp(r->buf, "hello", 6), 0);
	free(r->buf);
	r->buf = NULL;
	check_pipe_untouched(r);
}

/* IORING_OP_ASYNC_CANCEL by descriptor (IORING_ASYNC_CANCEL_FD, the net
 * library's when a socket is closed) from a task: its result. */
static int cancel_fd(int fd, unsigned flags)
{
	struct io_uring_sqe *sqe = giong_sqe();

	io_uring_prep_cancel_fd(sqe, fd, flags);
	return giong_io(sqe);
}

/* Wait (at most 5 s) for the read to come back. */
static bool wait_back(struct reads *r)
{
	for (int i = 0; i < 5000 && !r->back; i++)
		giong_sleep_ms(1);
	return r->back;
}

/* A cancel by descriptor reaches the reads the helpers hold: the running
 * one (-EALREADY, interrupted) and, with IORING_ASYNC_CANCEL_ALL, a queued
 * one (counted, never run). Either read then completes with -ECANCELED. */
static void cancel_fd_main(unsigned w, void *arg)
{
	struct reads *r = arg;
	struct giong_task *rt, *held;

	(void)w;
	if (!read_in_helper(r, &rt))
		return;
	gt_check_int_equal(cancel_fd(r->fd, 0), -EALREADY);
	if (!gt_check_true(wait_back(r)))
		gt_check_int_equal(write(r->wr, "x", 1), 1); /* end the test anyway */
	gt_check_int_equal(giong_join(rt, NULL), 0);
	gt_check_int_equal(r->res, -ECANCELED);
	check_pipe_untouched(r);

	/* Queued behind a held helper: cancelled before it runs. */
	gt_check_int_equal(giong_spawn(holder, r, &held), 0);
	gt_check_true(wait_helpers_in(SYS_openat, 1));
	r->fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	r->back = 0;
	gt_check_int_equal(giong_spawn(reader, r, &rt), 0);
	giong_sleep_ms(5);
	gt_check_int_equal(cancel_fd(r->fd, IORING_ASYNC_CANCEL_ALL), 1);
	gt_check_true(wait_back(r));
	release_holder(r, held); /* before the join: it ends an uncancelled read too */
	gt_check_int_equal(giong_join(rt, NULL), 0);
	gt_check_int_equal(r->res, -ECANCELED);
	close(r->fd);
}

struct chunk {
	struct reads *r;
	int fd, i;
};

/* Reads chunk i (READ for even ones, READV for odd ones) into its own heap
 * buffer and checks each byte. */
static intptr_t chunk_reader(void *arg)
{
	struct chunk *c = arg;
	unsigned char *b = malloc(CHUNK);
	struct io_uring_sqe *sqe = giong_sqe();
	struct iovec v[2];
	int res;

	if (!b)
		return -1;
	memset(b, 0xee, CHUNK);
	if (c->i % 2) {
		v[0] = (struct iovec){b, CHUNK / 4};
		v[1] = (struct iovec){b + CHUNK / 4, CHUNK - CHUNK / 4};
		io_uring_prep_readv(sqe, c->fd, v, 2, (uint64_t)c->i * CHUNK);
	} else {
		io_uring_prep_read(sqe, c->fd, b, CHUNK, (uint64_t)c->i * CHUNK);
	}
	res = giong_io(sqe);
	if (res == CHUNK) {
		c->r->chunk_ok[c->i] = 1;
		for (int k = 0; k < CHUNK; k++)
			if (b[k] != (unsigned char)(c->i * 7 + k / 16))
				c->r->chunk_ok[c->i] = 0;
	}
	free(b);
	return res;
}

static void queued_main(unsigned w, void *arg)
{
	struct reads *r = arg;
	struct giong_task *held[2], *t[CHUNKS];
	struct chunk c[CHUNKS];
	int fd = r->memfd, done = 0;
	intptr_t res;

	(void)w;
	for (int i = 0; i < 2; i++)
		gt_check_int_equal(giong_spawn(holder, r, &held[i]), 0);
	gt_check_true(wait_helpers_in(SYS_openat, 2));
	for (int i = 0; i < CHUNKS; i++) {
		c[i] = (struct chunk){r, fd, i};
		gt_check_int_equal(giong_spawn(chunk_reader, &c[i], &t[i]), 0);
	}
	giong_sleep_ms(10);
	for (int i = 0; i < CHUNKS; i++)
		done += r->chunk_ok[i];
	if (r->memfd_pooled)
		gt_check_int_equal(done, 0); /* all queued behind the holders */
	for (int i = 0; i < 2; i++)
		release_holder(r, held[i]);
	for (int i = 0; i < CHUNKS; i++) {
		gt_check_int_equal(giong_join(t[i], &res), 0);
		gt_check_int_equal(res, CHUNK);
		gt_check_int_equal(r->chunk_ok[i], 1);
	}
}

/* A directory with the FIFO the holders open, and the file to read. */
static void setup(struct reads *r)
{
	unsigned char b[CHUNK];
	struct iovec v;
	int fd;

	memset(r, 0, sizeof(*r));
	snprintf(r->dir, sizeof(r->dir), "/tmp/giong-epoll-reads-%d", (int)getpid());
	assert_int_equal(mkdir(r->dir, 0700), 0);
	snprintf(r->fifo, sizeof(r->fifo), "%s/fifo", r->dir);
	assert_int_equal(mkfifo(r->fifo, 0600), 0);
	r->pfd = open(r->fifo, O_PATH | O_CLOEXEC);
	assert_true(r->pfd >= 0);
	snprintf(r->link, sizeof(r->link), "/proc/self/fd/%d", r->pfd);
	/* A tmpfs file: no page cache to drop or keep, and its reads refuse
	 * RWF_NOWAIT (EOPNOTSUPP, up to Linux 6.18 at least), so the tier
	 * gives every one to a helper; where one is answered at once, the
	 * reads are checked, not that they queued. */
	fd = memfd_create("giong-epoll-reads", MFD_CLOEXEC);
	assert_true(fd >= 0);
	for (int i = 0; i < CHUNKS; i++) {
		for (int k = 0; k < CHUNK; k++)
			b[k] = (unsigned char)(i * 7 + k / 16);
		assert_int_equal(write(fd, b, CHUNK), CHUNK);
	}
	v = (struct iovec){b, 1};
	r->memfd_pooled = preadv2(fd, &v, 1, 0, RWF_NOWAIT) < 0 && errno == EOPNOTSUPP;
	r->memfd = fd;
}

static void teardown(struct reads *r)
{
	free(r->buf);
	close(r->pfd);
	unlink(r->fifo);
	close(r->memfd);
	assert_int_equal(rmdir(r->dir), 0);
}

/* /proc/PID/task/TID/syscall can be read here (not under gVisor, nor in a
 * kernel without CONFIG_HAVE_ARCH_TRACEHOOK). */
static bool syscalls_visible(void)
{
	FILE *f = fopen("/proc/thread-self/syscall", "re");
	char text[64];
	bool ok = f && fgets(text, sizeof(text), f);

	if (f)
		fclose(f);
	return ok;
}

static void run(giong_main_fn fn, const char *threads)
{
	struct giong_config c = gt_config(1);
	struct reads r;
	int fds_before = gt_count_fds();

	if (!syscalls_visible()) {
		/* "The helper is inside the read" cannot be told. */
		print_message("no /proc/thread-self/syscall: skipped\n");
		skip();
	}
	setup(&r);
	c.ring_tier = GIONG_TIER_EPOLL;
	setenv("GIONG_BLOCKING_THREADS", threads, 1);
	gt_run(&c, fn, &r, NULL);
	unsetenv("GIONG_BLOCKING_THREADS");
	teardown(&r);
	assert_int_equal(gt_count_fds(), fds_before);
}

static void test_cancelled_read(void **state)
{
	(void)state;
	run(cancelled_main, "1");
}

/* Runs after test_cancelled_read: the pool's own SIGURG handler is
 * replaced by one that restarts the read, then put back. */
static void test_read_outlives_cancel(void **state)
{
	struct sigaction sa, old;

	(void)state;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = ignore_urg;
	sa.sa_flags = SA_RESTART;
	assert_int_equal(sigaction(SIGURG, &sa, &old), 0);
	run(outlives_main, "1");
	assert_int_equal(sigaction(SIGURG, &old, NULL), 0);
}

static void test_cancel_by_fd(void **state)
{
	(void)state;
	run(cancel_fd_main, "1");
}

static void test_queued_reads(void **state)
{
	(void)state;
	run(queued_main, "2");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cancelled_read),
		cmocka_unit_test(test_read_outlives_cancel),
		cmocka_unit_test(test_cancel_by_fd),
		cmocka_unit_test(test_queued_reads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
