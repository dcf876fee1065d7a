/* SPDX-License-Identifier: MIT */
/*
 * splice.c - a file's bytes to a connection's stream after its batch
 * (giong__http_conn_splice()): HTTP/1.1's large sendfile bodies and a
 * protocol's (giong_http_conn_splice(): HTTP/2's DATA payloads).
 *  - to a plain socket, spliced: file -> pipe -> socket, so the bytes go
 *    from the page cache to the socket without a copy through user space;
 *    the pipes are the worker's, kept for reuse while empty;
 *  - to any other stream (TLS), read into a buffer and written through it.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/conn.h"

/* What one splice into a pipe moves when its size cannot be known: the default. */
#define SPLICE_CHUNK (64u * 1024)
/* The read buffer for streams that cannot splice. */
#define READ_CHUNK (64u * 1024)

int giong__http_file_read(int fd, void *buf, size_t len, uint64_t off)
{
	struct io_uring_sqe *sqe = giong_sqe();

	if (!sqe)
		return -EBUSY;
	/* @buf is lent to the kernel until giong_io returns. */
	io_uring_prep_read(sqe, fd, buf, (unsigned)len, off);
	return giong_io(sqe);
}

static int splice_once(int in, int64_t off_in, int out, unsigned len)
{
	struct io_uring_sqe *sqe = giong_sqe();

	if (!sqe)
		return -EBUSY;
	io_uring_prep_splice(sqe, in, off_in, out, -1, len, 0);
	return giong_io(sqe);
}

/*
 * The capacity asked for a splice pipe: each splice moves at most a pipe's worth, and
 * io_uring runs every splice in its worker threads (a hand-off and two context switches
 * each), so a 1 MiB body in the default 64 KiB pipe costs 32 of them; in 256 KiB, 8. A pipe
 * holds references to page-cache pages, not copies, so its capacity costs no memory until
 * it is filled; it counts against the user's pipe quota (fs.pipe-user-pages-soft, 64 MiB by
 * default), which 32 pipes of 256 KiB per worker leave room in. Refused (quota, or
 * fs.pipe-max-size lowered), the pipe keeps its default size.
 */
#define PIPE_SIZE (256u * 1024)

/* A pipe of the worker's (blocking: a splice that must wait is the kernel's worker
 * thread's to wait in, not a retry loop's), or -errno. */
static int pipe_get(struct giong__http_worker *w, struct giong__http_pipe *p)
{
	int size;

	if (w->npipes) {
		*p = w->pipes[--w->npipes];
		return 0;
	}
	if (pipe2(p->fd, O_CLOEXEC))
		return -errno;
	size = fcntl(p->fd[1], F_SETPIPE_SZ, PIPE_SIZE);
	if (size < 0)
		size = fcntl(p->fd[1], F_GETPIPE_SZ);
	p->size = size > 0 ? (unsigned)size : SPLICE_CHUNK;
	return 0;
}

/* Back to the worker if empty (@clean), else closed: bytes left in a pipe
 * would be the next response's. */
static void pipe_put(struct giong__http_worker *w, struct giong__http_pipe *p, bool clean)
{
	if (clean && w->npipes < sizeof(w->pipes) / sizeof(w->pipes[0])) {
		w->pipes[w->npipes++] = *p;
		return;
	}
	close(p->fd[0]);
	close(p->fd[1]);
}

/*
 * The file through a pipe into the socket. The write timeout is a bound on a peer that
 * does not read, as for the batch's writes (one per 64 KiB there): it starts again at
 * each move into the socket, so a slow reader of a large file is served, not cut after
 * write_timeout_ms of the whole body.
 */
static int by_splice(struct giong_http_conn *c, int fd, uint64_t off, uint64_t len)
{
	uint32_t timeout = c->w->srv->limits.write_timeout_ms;
	uint64_t saved = giong_deadline_in(timeout);
	struct giong__http_pipe p;
	int r = 0;
	bool clean = true;

	if ((r = pipe_get(c->w, &p))) {
		giong_deadline_restore(saved);
		return r;
	}
	while (len && r == 0) {
		unsigned want = len < p.size ? (unsigned)len : p.size;
		int in = splice_once(fd, (int64_t)off, p.fd[1], want);

		if (in <= 0) {
			r = in ? in : -EIO; /* 0: the file ended before len */
			break;
		}
		clean = false;
		for (int moved = 0; moved < in && r == 0;) {
			ssize_t n;

			giong_deadline_restore(saved); /* a scope can only shorten: anew */
			giong_deadline_in(timeout);
			/* Through net: the socket may be a direct one (no descriptor). */
			n = giong_stream_splice(c->s, p.fd[0], (size_t)(in - moved));

			if (n <= 0)
				r = n ? (int)n : -EPIPE;
			else
				moved += (int)n;
		}
		if (r == 0)
			clean = true;
		off += (uint64_t)in;
		len -= (uint64_t)in;
	}
	pipe_put(c->w, &p, clean);
	giong_deadline_restore(saved);
	if (r == -ETIMEDOUT)
		c->w->stats.write_timeouts++;
	return r;
}

static int by_reads(struct giong_http_conn *c, struct giong_waitq *wq, int fd, uint64_t off,
		    uint64_t len)
{
	char *buf = malloc(len < READ_CHUNK ? (size_t)len : READ_CHUNK);
	int r = buf ? 0 : -ENOMEM;

	while (len && r == 0) {
		size_t want = len < READ_CHUNK ? (size_t)len : READ_CHUNK;
		int n = giong__http_file_read(fd, buf, want, off);

		if (n <= 0) {
			r = n ? n : -EIO;
			break;
		}
		struct iovec iov = {buf, (size_t)n};
		r = giong__http_conn_write(c, wq, &iov, 1);
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	free(buf);
	return r;
}

int giong__http_conn_splice(struct giong_http_conn *c, struct giong_waitq *wq, int fd, uint64_t off,
			    uint64_t len)
{
	int r;

	/* What is queued goes first, then the file's bytes. */
	if ((c->sending || c->batch->out.len) && (r = giong__http_conn_write(c, wq, NULL, 0)))
		return r;
	/* Spliced if the stream's bytes reach a socket as they are (not TLS). */
	r = giong_stream_can_splice(c->s) > 0 ? by_splice(c, fd, off, len)
					      : by_reads(c, wq, fd, off, len);
	if (r)
		c->broken = true; /* part of the bytes may have left */
	return r;
}
