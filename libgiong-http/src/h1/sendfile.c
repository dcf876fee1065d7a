/* SPDX-License-Identifier: MIT */
/*
 * sendfile.c - a response body from an open file (giong_http_response_sendfile()),
 * through core's operation layer (http links core and net only, not fs):
 *  - a small body is read straight into the batch and leaves with it (a
 *    read through the ring: a direct preadv2(RWF_NOWAIT) first was measured
 *    and cost more, two system calls a response where the ring's reads of
 *    all the responses of a tick share one io_uring_enter: bench/results/serve.md);
 *  - a larger one is spliced to a plain socket, read through a buffer to any
 *    other stream (TLS): common/splice.c's giong__http_conn_splice().
 */
#include <errno.h>

#include "h1/h1.h"

int giong__http1_sendfile(struct giong_http_response *res, int fd, off_t off, uint64_t len)
{
	struct giong__http_frame *f = res->px;
	struct giong__http_out *o;
	int r;

	if (len <= GIONG__HTTP_COPY_MAX) {
		/* Into the batch (not in flight while a handler runs: h1.h), and
		 * the read's target is lent to the kernel until giong_io returns. */
		o = &f->c->batch->out;
		for (uint64_t got = 0; got < len;) {
			char *dst;

			if ((r = giong__http_out_grow(o, (size_t)(len - got), &dst)))
				return r;
			r = giong__http_file_read(fd, dst, (size_t)(len - got),
						  (uint64_t)off + got);
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
	/* What is queued goes first (as the response's), then the file's bytes. */
	if ((r = giong__http1_write(f, NULL, 0)))
		return r;
	return giong__http_conn_splice(f->c, &f->wait, fd, (uint64_t)off, len);
}
