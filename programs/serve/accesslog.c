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
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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
	size_t chunk;  /* the most one write carries (PIPE_BUF to a pipe or a socket) */
	bool ring;     /* written through the ring (else write(2): see serve_alog_worker_start) */
	bool may_wait; /* a file: a line that finds no room waits for it, never dropped */
	uint64_t first_ms; /* when buf[fill] got its first line */
	uint64_t dropped;
	int error; /* the last write error said on stderr (said once each) */
	struct giong_waitq wake;
	struct giong_waitq room; /* the tasks of lines waiting for a buffer (files) */
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

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* @n bytes of @p to @fd with write(2), off the ring (the worker's exit, or no writer task),
 * in whole lines of at most @chunk bytes, each once poll() says the descriptor takes it
 * (a pipe: PIPE_BUF bytes free), until @until (mono_ms(); 0: only what it takes at once):
 * a stalled output blocks nobody for longer. Returns the lines it could not write (the
 * caller counts them dropped). */
static size_t write_now(int fd, const char *p, size_t n, size_t chunk, int64_t until)
{
	while (n) {
		struct pollfd pfd = {.fd = fd, .events = POLLOUT};
		size_t k = whole_lines(p, n, chunk);
		int64_t left = until ? until - mono_ms() : 0;
		ssize_t w;

		if (poll(&pfd, 1, left > 0 ? (int)left : 0) != 1 || !(pfd.revents & POLLOUT))
			return lines_in(p, n);
		w = write(fd, p, k);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return lines_in(p, n);
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* buf[fill ^ 1] from a->off through the ring (or write(2)), in whole lines of at most
 * a->chunk bytes.
 * Returns 0, or GIONG_ESHUTDOWN or -ECANCELED (the worker ends: the rest is the exit
 * hook's). */
static int write_out(struct alog *a)
{
	unsigned out = a->fill ^ 1;

	while (a->off < a->len[out]) {
		const char *p = a->buf[out] + a->off;
		size_t n = whole_lines(p, a->len[out] - a->off, a->chunk);
		struct io_uring_sqe *sqe;
		int r;

		if (!a->ring) {
			r = (int)write(a->fd, p, n);
			r = r < 0 ? -errno : r;
		} else if (!(sqe = giong_sqe())) {
			r = -EAGAIN; /* the kernel takes no submission: give up on this buffer */
		} else {
			/* The bytes are the kernel's until giong_io() returns (see the top). */
			io_uring_prep_write(sqe, a->fd, p, (unsigned)n, (uint64_t)-1);
			r = giong_io(sqe);
		}
		if (r == GIONG_ESHUTDOWN || r == -ECANCELED)
			return r; /* the worker ends: the rest is the exit hook's */
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
			giong_waitq_wake_all(&a->room, 0);
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
	giong_waitq_wake_all(&a->room, 0); /* they write their lines themselves now */
	return 0;
}

static void worker_end(void *p)
{
	struct alog *a = p;

	me = NULL;
	/* A second at most: a stalled output must not keep a stopping worker. */
	int64_t until = mono_ms() + 1000;

	if (a->writing)
		drop(a, write_now(a->fd, a->buf[a->fill ^ 1] + a->off, a->len[a->fill ^ 1] - a->off,
				  a->chunk, until));
	drop(a, write_now(a->fd, a->buf[a->fill], a->len[a->fill], a->chunk, until));
	if (a->dropped)
		fprintf(stderr, PROG ": worker %d: %llu access-log lines dropped\n",
			giong_worker_index(), (unsigned long long)a->dropped);
	free(a);
}

int serve_alog_worker_start(int fd)
{
	struct alog *a = calloc(1, sizeof(*a));
	struct stat st;
	bool known, stream;
	int r, fl;

	if (!a)
		return -ENOMEM;
	a->fd = fd;
	/* Through the ring where it can wait without holding the worker and where writes of
	 * several workers at once are safe: a pipe or socket (no file position), a file opened
	 * to append (the kernel appends each write whole). Not a file opened to write at its
	 * position (a shell's ">"): the ring's writes at the current position do not take
	 * the position's lock as write(2) does, so two workers' writes in flight at once could
	 * land at the same offset, one over the other. Those get write(2) from the task (the
	 * page cache's speed; the same system calls, a batch each). */
	fl = fcntl(fd, F_GETFL);
	known = fstat(fd, &st) == 0;
	stream = known && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
	a->chunk = stream ? PIPE_BUF : SERVE_ALOG_BUF;
	a->ring = stream || (known && S_ISREG(st.st_mode) && fl >= 0 && (fl & O_APPEND));
	a->may_wait = known && S_ISREG(st.st_mode);
	giong_waitq_init(&a->wake);
	giong_waitq_init(&a->room);
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
	if (!a) { /* no buffers: the line now, or dropped if the output cannot take it now */
		atomic_fetch_add(&dropped_total, write_now(STDOUT_FILENO, line, len, len, 0));
		return;
	}
	/* A file whose write in flight holds the other buffer while this one is full: the
	 * request waits for it (backpressure on this connection; a file's write ends), so
	 * that no line is lost. A pipe's or a socket's reader may never read again: there
	 * the line is dropped below. */
	while (a->may_wait && a->writer_running && a->writing &&
	       a->len[a->fill] + len > SERVE_ALOG_BUF)
		if (giong_waitq_wait(&a->room, 0) < 0)
			break; /* cancelled, or past the task's deadline: dropped */
	if (!a->writer_running) {
		/* No writer (it could not be spawned, or shutdown ended it): what it left
		 * first, then the line, with write(2) if the output takes them now. */
		if (a->writing) {
			drop(a, write_now(a->fd, a->buf[a->fill ^ 1] + a->off,
					  a->len[a->fill ^ 1] - a->off, a->chunk, 0));
			a->len[a->fill ^ 1] = a->off = 0;
			a->writing = false;
		}
		drop(a, write_now(a->fd, a->buf[a->fill], a->len[a->fill], a->chunk, 0));
		a->len[a->fill] = 0;
		drop(a, write_now(a->fd, line, len, a->chunk, 0));
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
