/* SPDX-License-Identifier: MIT */
/*
 * accesslog.c - giong-serve's access log: per-worker double buffers written through the
 * worker's ring by a task of the worker (accesslog.h says why and how).
 *
 * Ownership: while the writer task's write is in the kernel (giong_io()), the bytes of the
 * buffer being written belong to the kernel; appends only touch the other buffer, and the
 * worker frees both only in its exit hook, after its operations were drained.
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <liburing.h>

#include <giong/core.h>

#include "accesslog.h"

#define PROG "giong-serve"

/* The longest a line waits in a buffer before it is written (ms). */
#define FLUSH_MS 100

struct alog {
	char buf[2][SERVE_ALOG_BUF];
	size_t len[2];
	size_t off;          /* bytes of buf[fill ^ 1] already written */
	unsigned fill;       /* the buffer lines go into; the other is written */
	bool writing;        /* buf[fill ^ 1] is (being) written */
	bool writer_running; /* the writer task runs: false before, and after shutdown */
	bool said_drop;      /* the first drop was said on stderr */
	int fd;
	size_t chunk;      /* the most one write carries (PIPE_BUF to a pipe or a socket) */
	uint64_t first_ms; /* when buf[fill] got its first line */
	uint64_t dropped;
	int error; /* the last write error said on stderr (said once each) */
	struct giong_waitq wake;
};

static _Thread_local struct alog *me;
static atomic_uint_fast64_t dropped_total;

uint64_t serve_alog_dropped(void)
{
	return atomic_load(&dropped_total);
}

static size_t lines_in(const char *p, size_t n)
{
	size_t k = 0;

	for (const char *e = p + n; (p = memchr(p, '\n', (size_t)(e - p))); p++)
		k++;
	return k;
}

static void drop(struct alog *a, size_t lines)
{
	a->dropped += lines;
	atomic_fetch_add(&dropped_total, lines);
}

/* The first @n bytes of @p that end a line and fit @cap (all of them if they fit). */
static size_t whole_lines(const char *p, size_t n, size_t cap)
{
	const char *nl;

	if (n <= cap)
		return n;
	for (nl = p + cap; nl > p && nl[-1] != '\n'; nl--)
		;
	return nl > p ? (size_t)(nl - p) : cap; /* a line longer than cap: cut */
}

static void write_error(struct alog *a, int err, size_t lines)
{
	drop(a, lines);
	if (err != a->error) {
		fprintf(stderr, PROG ": access log: %s; %zu lines dropped\n", strerror(-err),
			lines);
		a->error = err;
	}
}

/* @n bytes of @p to the log with write(2): the worker's exit, or no buffers. */
static void write_now(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/* buf[fill ^ 1] from a->off through the ring, in whole lines of at most a->chunk bytes.
 * Returns 0, or GIONG_ESHUTDOWN (the worker drains: the rest is the exit hook's). */
static int write_out(struct alog *a)
{
	unsigned out = a->fill ^ 1;

	while (a->off < a->len[out]) {
		const char *p = a->buf[out] + a->off;
		size_t n = whole_lines(p, a->len[out] - a->off, a->chunk);
		struct io_uring_sqe *sqe = giong_sqe();
		int r;

		if (!sqe) {
			r = -EAGAIN; /* the kernel takes no submission: give up on this buffer */
		} else {
			/* The bytes are the kernel's until giong_io() returns (see the top). */
			io_uring_prep_write(sqe, a->fd, p, (unsigned)n, (uint64_t)-1);
			r = giong_io(sqe);
		}
		if (r == GIONG_ESHUTDOWN)
			return r;
		if (r == -EINTR)
			continue;
		if (r <= 0) {
			write_error(a, r ? r : -EIO, lines_in(p, a->len[out] - a->off));
			break;
		}
		a->off += (size_t)r;
	}
	a->len[out] = a->off = 0;
	return 0;
}

static bool stop(int r)
{
	return r == GIONG_ESHUTDOWN || r == -ECANCELED;
}

static intptr_t writer(void *arg)
{
	struct alog *a = arg;
	int r = 0;

	while (!stop(r)) {
		if (a->writing) { /* an append found buf[fill] full and swapped */
			if (write_out(a))
				break;
			a->writing = false;
			continue;
		}
		if (!a->len[a->fill]) {
			r = giong_waitq_wait(&a->wake, GIONG_WAIT_SHUTDOWN); /* the first line */
			continue;
		}
		if (a->len[a->fill] < SERVE_ALOG_BUF / 2) {
			uint64_t saved = giong_deadline_set(a->first_ms + FLUSH_MS);

			r = giong_waitq_wait(&a->wake, GIONG_WAIT_SHUTDOWN); /* half full */
			giong_deadline_restore(saved);
			if (a->writing)
				continue;
		}
		a->fill ^= 1;
		a->writing = true;
	}
	/* Shutdown: what is buffered now goes out at once, later lines with write(2). */
	if (!a->writing && a->len[a->fill]) {
		a->fill ^= 1;
		a->writing = true;
	}
	if (a->writing && write_out(a) == 0)
		a->writing = false;
	a->writer_running = false;
	return 0;
}

static void worker_end(void *p)
{
	struct alog *a = p;

	me = NULL;
	if (a->writing)
		write_now(a->fd, a->buf[a->fill ^ 1] + a->off, a->len[a->fill ^ 1] - a->off);
	write_now(a->fd, a->buf[a->fill], a->len[a->fill]);
	if (a->dropped)
		fprintf(stderr, PROG ": worker %d: %llu access-log lines dropped\n",
			giong_worker_index(), (unsigned long long)a->dropped);
	free(a);
}

int serve_alog_worker_start(int fd)
{
	struct alog *a = calloc(1, sizeof(*a));
	struct stat st;
	int r;

	if (!a)
		return -ENOMEM;
	a->fd = fd;
	a->chunk = fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
			   ? PIPE_BUF
			   : SERVE_ALOG_BUF;
	giong_waitq_init(&a->wake);
	if ((r = giong_worker_atexit(worker_end, a))) {
		free(a);
		return r;
	}
	a->writer_running = true;
	if ((r = giong_spawn(writer, a, NULL))) {
		a->writer_running = false; /* lines go out with write(2) as they come */
		me = a;
		return r;
	}
	me = a;
	return 0;
}

void serve_alog_append(const char *line, size_t len)
{
	struct alog *a = me;
	size_t *fl;

	if (len > SERVE_ALOG_LINE_MAX)
		len = SERVE_ALOG_LINE_MAX;
	if (!a) {
		write_now(STDOUT_FILENO, line, len);
		return;
	}
	if (!a->writer_running) {
		/* No writer (it could not be spawned, or shutdown ended it): what it left
		 * first, then the line, with write(2). */
		if (a->writing) {
			write_now(a->fd, a->buf[a->fill ^ 1] + a->off,
				  a->len[a->fill ^ 1] - a->off);
			a->len[a->fill ^ 1] = a->off = 0;
			a->writing = false;
		}
		write_now(a->fd, a->buf[a->fill], a->len[a->fill]);
		a->len[a->fill] = 0;
		write_now(a->fd, line, len);
		return;
	}
	fl = &a->len[a->fill];
	if (*fl + len > SERVE_ALOG_BUF) {
		if (!a->writing) {
			a->fill ^= 1; /* the writer takes the full one */
			a->writing = true;
			giong_waitq_wake_one(&a->wake, 0);
			fl = &a->len[a->fill];
		} else {
			drop(a, 1);
			if (!a->said_drop) {
				fprintf(stderr, PROG
					": access log: the output takes lines slower than they "
					"come: lines are dropped (counted at exit)\n");
				a->said_drop = true;
			}
			return;
		}
	}
	if (!*fl)
		a->first_ms = giong_now_ms();
	memcpy(a->buf[a->fill] + *fl, line, len);
	if (!*fl || (*fl < SERVE_ALOG_BUF / 2 && *fl + len >= SERVE_ALOG_BUF / 2))
		giong_waitq_wake_one(&a->wake, 0);
	*fl += len;
}
