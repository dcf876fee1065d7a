/* SPDX-License-Identifier: MIT */
/*
 * sendfile.c - a response body from an open file (giong_http_response_sendfile()),
 * through core's operation layer (http links core and net only, not fs):
 *  - a small body is read straight into the batch and leaves with it (a
 *    read through the ring: a direct preadv2(RWF_NOWAIT) first was measured
 *    and cost more, two system calls a response where the ring's reads of
 *    all the responses of a tick share one io_uring_enter: bench/results/serve.md);
 *  - to a plain socket, a larger one is spliced: file -> pipe -> socket, so
 *    the bytes go from the page cache to the socket without a copy through
 *    user space; the pipes are the worker's, kept for reuse while empty;
 *  - to any other stream (TLS), read into a buffer and written through it.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdlib.h>
#include <unistd.h>

#include "h1/h1.h"

/* What one splice into a pipe moves when its size cannot be known: the default. */
#define SPLICE_CHUNK (64u * 1024)
/* The read buffer for streams that cannot splice. */
#define READ_CHUNK (64u * 1024)

static int file_read(int fd, void *buf, size_t len, uint64_t off)
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

static int by_splice(struct giong__http_frame *f, int sock, int fd, uint64_t off, uint64_t len)
{
	uint64_t saved = giong_deadline_in(f->c->w->srv->limits.write_timeout_ms);
	struct giong__http_pipe p;
	int r = 0;
	bool clean = true;

	if ((r = pipe_get(f->c->w, &p))) {
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
			int n = splice_once(p.fd[0], -1, sock, (unsigned)(in - moved));

			if (n <= 0)
				r = n ? n : -EPIPE;
			else
				moved += n;
		}
		if (r == 0)
			clean = true;
		off += (uint64_t)in;
		len -= (uint64_t)in;
	}
	pipe_put(f->c->w, &p, clean);
	giong_deadline_restore(saved);
	if (r == -ETIMEDOUT)
		f->c->w->stats.write_timeouts++;
	return r;
}

static int by_reads(struct giong__http_frame *f, int fd, uint64_t off, uint64_t len)
{
	char *buf = malloc(len < READ_CHUNK ? (size_t)len : READ_CHUNK);
	int r = buf ? 0 : -ENOMEM;

	while (len && r == 0) {
		size_t want = len < READ_CHUNK ? (size_t)len : READ_CHUNK;
		int n = file_read(fd, buf, want, off);

		if (n <= 0) {
			r = n ? n : -EIO;
			break;
		}
		struct iovec iov = {buf, (size_t)n};
		r = giong__http1_write(f, &iov, 1);
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	free(buf);
	return r;
}

int giong__http1_sendfile(struct giong_http_response *res, int fd, off_t off, uint64_t len)
{
	struct giong__http_frame *f = res->px;
	struct giong__http_out *o;
	int sock, r;

	if (len <= GIONG__HTTP_COPY_MAX) {
		/* Into the batch (not in flight while a handler runs: h1.h), and
		 * the read's target is lent to the kernel until giong_io returns. */
		o = &f->c->batch->out;
		for (uint64_t got = 0; got < len;) {
			char *dst;

			if ((r = giong__http_out_grow(o, (size_t)(len - got), &dst)))
				return r;
			r = file_read(fd, dst, (size_t)(len - got), (uint64_t)off + got);
			if (r <= 0) {
				/* The head promised len bytes: what is queued goes,
				 * this body cut short, then the connection closes. */
				f->res.close = true;
				f->c->last = true;
				return r ? r : -EIO;
			}
			o->len += (size_t)r;
			got += (uint64_t)r;
		}
		return 0;
	}
	/* The socket, if the stream's bytes reach it as they are (not TLS). */
	sock = giong_stream_splice_fd(f->c->s);
	/* What is queued goes first, then the file's bytes. */
	if ((r = giong__http1_write(f, NULL, 0)))
		return r;
	r = sock >= 0 ? by_splice(f, sock, fd, (uint64_t)off, len)
		      : by_reads(f, fd, (uint64_t)off, len);
	if (r)
		f->c->broken = true;
	return r;
}
