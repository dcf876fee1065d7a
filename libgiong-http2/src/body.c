/* SPDX-License-Identifier: MIT */
/*
 * body.c - the protocol table's exchange operations for an HTTP/2 stream
 * (h2.h): the request body from the DATA received, its window opened as the
 * handler reads (backpressure, not buffering); the response head collected
 * as nghttp2 name/value pairs and submitted at its end; body bytes queued
 * for DATA frames, which nghttp2 asks for as the peer's window allows and
 * which go into the connection's batch as they are (NGHTTP2_DATA_FLAG_NO_COPY:
 * nghttp2 writes only the frame header); a large file range to a client
 * taking large frames on h2c, spliced from the page cache after each frame's
 * header by the connection's writer task (splice_file(), h2_splice_pending()).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <liburing.h>

#include "h2.h"

/* Queued response bytes past which a handler's write waits for DATA frames to take them. */
#define OUT_HIGH (64u * 1024)
/* The most bytes of one response head's fields. */
#define HEAD_MAX (64u * 1024)

static struct h2_stream *of_req(struct giong_http_request *req)
{
	return giong_http_exchange_state(req);
}

static struct h2_stream *of_res(struct giong_http_response *res)
{
	return giong_http_response_exchange_state(res);
}

/* Wait on the stream under the deadline @ms from now: 0, or -errno. */
static int wait_stream(struct h2_stream *st, uint32_t ms)
{
	uint64_t saved = giong_deadline_in(ms);
	int r = giong_waitq_wait(&st->wait, 0);

	giong_deadline_restore(saved);
	return r;
}

/* ------------------------------------------------------------ the request body */

void h2_body_begin(struct giong_http_request *req, uint64_t limit)
{
	struct h2_stream *st = of_req(req);

	st->body_limit = limit;
	if (st->received > limit)
		st->over_limit = true;
	if (!st->head.has_body)
		giong_http_request_body_done(req);
}

ssize_t h2_body_next(struct giong_http_request *req, const char **data, size_t max)
{
	struct h2_stream *st = of_req(req);
	struct h2_conn *h = st->h;
	struct h2_chunk *c;
	size_t n;
	int r;

	for (;;) {
		if (st->over_limit) {
			giong_http_conn_stats(h->c)->body_too_large++;
			return -EMSGSIZE;
		}
		if ((c = st->in))
			break;
		if (st->end_stream) {
			giong_http_request_body_done(req);
			return 0;
		}
		if (st->closed || h->dead)
			return -ECONNRESET;
		r = wait_stream(st, giong_http_conn_limits(h->c)->body_timeout_ms);
		if (r == -ETIMEDOUT) {
			giong_http_conn_stats(h->c)->body_timeouts++;
			nghttp2_submit_rst_stream(h->s, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_CANCEL);
			h2_want_write(h);
		}
		if (r < 0)
			return r;
	}
	n = c->len - c->off < max ? c->len - c->off : max;
	*data = c->data + c->off;
	c->off += n;
	if (c->off == c->len) {
		/* Kept until the next span is given: the caller may still hold this one. */
		st->in = c->next;
		if (!st->in)
			st->in_tail = NULL;
		while (st->read) {
			struct h2_chunk *old = st->read;

			st->read = old->next;
			free(old);
		}
		c->next = NULL;
		st->read = c;
	}
	/* Read: the peer may send as much again on this stream (the connection's
	 * window was given back on arrival: h2_stream_data()). */
	nghttp2_session_consume_stream(h->s, st->id, n);
	h2_want_write(h);
	if (!st->in && st->end_stream)
		giong_http_request_body_done(req);
	return (ssize_t)n;
}

int h2_interim(struct giong_http_request *req, int status)
{
	struct h2_stream *st = of_req(req);
	char digits[4];
	nghttp2_nv nv = {(uint8_t *)":status", (uint8_t *)digits, 7, 3, NGHTTP2_NV_FLAG_NONE};

	if (status < 100 || status > 199)
		return -EINVAL;
	snprintf(digits, sizeof(digits), "%03d", status);
	if (st->closed)
		return -ECONNRESET;
	if (nghttp2_submit_headers(st->h->s, NGHTTP2_FLAG_NONE, st->id, NULL, &nv, 1, NULL) < 0)
		return -ENOMEM;
	h2_want_write(st->h);
	return 0;
}

/* ------------------------------------------------------------ the response head */

/* Append name (lowercased: HTTP/2 field names are) and value to the head. */
static int add_nv(struct h2_stream *st, const char *name, size_t nl, const char *value, size_t vl)
{
	size_t need = nl + vl;
	char *p;

	if (st->nvbuf_len + need > HEAD_MAX)
		return -E2BIG;
	if (st->nnv == st->nv_cap) {
		size_t cap = st->nv_cap ? st->nv_cap * 2 : 8;
		nghttp2_nv *n = realloc(st->nva, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		st->nva = n;
		st->nv_cap = cap;
	}
	if (st->nvbuf_len + need > st->nvbuf_cap) {
		size_t cap = st->nvbuf_cap ? st->nvbuf_cap : 256;

		while (cap < st->nvbuf_len + need)
			cap *= 2;
		if (!(p = realloc(st->nvbuf, cap)))
			return -ENOMEM;
		st->nvbuf = p;
		st->nvbuf_cap = cap;
	}
	p = st->nvbuf + st->nvbuf_len;
	for (size_t i = 0; i < nl; i++)
		p[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
	memcpy(p + nl, value, vl);
	/* Offsets for now: the buffer may move until head_end() points them. */
	st->nva[st->nnv++] = (nghttp2_nv){(uint8_t *)(uintptr_t)st->nvbuf_len,
					  (uint8_t *)(uintptr_t)(st->nvbuf_len + nl), nl, vl,
					  NGHTTP2_NV_FLAG_NONE};
	st->nvbuf_len += need;
	return 0;
}

int h2_head_start(struct giong_http_response *res)
{
	struct h2_stream *st = of_res(res);
	char digits[4];
	int r;

	if (st->closed)
		return -ECONNRESET;
	st->nnv = 0;
	st->nvbuf_len = 0;
	snprintf(digits, sizeof(digits), "%03d", giong_http_response_status_code(res));
	if ((r = add_nv(st, ":status", 7, digits, 3)) ||
	    (r = add_nv(st, "date", 4, giong_http_date_now(), GIONG_HTTP_DATE_LEN)))
		return r;
	return 0;
}

int h2_head_field(struct giong_http_response *res, const char *name, size_t name_len,
		  const char *value, size_t value_len)
{
	return add_nv(of_res(res), name, name_len, value, value_len);
}

int h2_head_end(struct giong_http_response *res, int64_t length)
{
	struct h2_stream *st = of_res(res);
	struct h2_conn *h = st->h;
	struct giong_http_request *req = giong_http_response_request(res);
	int status = giong_http_response_status_code(res);
	bool body = length != 0 && status != 204 && status != 304 &&
		    giong_http_request_method(req) != GIONG_HTTP_HEAD;
	nghttp2_data_provider dp = {.source.ptr = st, .read_callback = h2_data_read};
	char text[24];
	int r;

	if (st->closed)
		return -ECONNRESET;
	if (length >= 0 && status != 204 && status != 304) {
		int n = snprintf(text, sizeof(text), "%lld", (long long)length);

		if ((r = add_nv(st, "content-length", 14, text, (size_t)n)))
			return r;
	}
	for (size_t i = 0; i < st->nnv; i++) {
		st->nva[i].name = (uint8_t *)st->nvbuf + (uintptr_t)st->nva[i].name;
		st->nva[i].value = (uint8_t *)st->nvbuf + (uintptr_t)st->nva[i].value;
	}
	st->out_eof = !body;
	st->out_left = body ? length : 0;
	/* nghttp2 copies the fields: st->nva and st->nvbuf are free again after this. */
	if (nghttp2_submit_response(h->s, st->id, st->nva, st->nnv, body ? &dp : NULL))
		return -ENOMEM;
	st->submitted = true;
	giong_http_response_set_sent(res); /* the head is nghttp2's now */
	h2_want_write(h);
	return 0;
}

void h2_head_cancel(struct giong_http_response *res)
{
	struct h2_stream *st = of_res(res);

	st->nnv = 0;
	st->nvbuf_len = 0;
}

/* ------------------------------------------------------------ the response body */

/* Queue @len bytes (copied) for DATA frames, then wait while more than @high
 * are queued (the peer's window and the connection's send take them). */
static int queue_out(struct h2_stream *st, const void *p, size_t len, size_t high)
{
	struct h2_conn *h = st->h;
	int r;

	if (st->closed || h->dead)
		return -ECONNRESET;
	if (len) {
		if (st->out_off && st->out_off == st->out_len)
			st->out_off = st->out_len = 0;
		if (st->out_len + len > st->out_cap) {
			size_t cap = st->out_cap ? st->out_cap : 4096;
			char *n;

			while (cap < st->out_len + len)
				cap *= 2;
			if (!(n = realloc(st->out, cap)))
				return -ENOMEM;
			st->out = n;
			st->out_cap = cap;
		}
		memcpy(st->out + st->out_len, p, len);
		st->out_len += len;
		/* A sized body ends with its last byte (there is no body_end() for it). */
		if (st->out_left > 0) {
			st->out_left -= (int64_t)len < st->out_left ? (int64_t)len : st->out_left;
			if (!st->out_left)
				st->out_eof = true;
		}
	}
	if (st->deferred) {
		st->deferred = false;
		nghttp2_session_resume_data(h->s, st->id);
	}
	h2_want_write(h);
	/* What left before the stream closed counts: a stream closes normally with its
	 * last DATA, and the handler then waited for nothing more. */
	while (st->out_len - st->out_off > high) {
		if (st->closed || h->dead)
			return -ECONNRESET;
		r = wait_stream(st, giong_http_conn_limits(h->c)->write_timeout_ms);
		if (r == -ETIMEDOUT) {
			giong_http_conn_stats(h->c)->write_timeouts++;
			h2_conn_fail(h, NGHTTP2_CANCEL); /* a peer that does not read */
		}
		if (r < 0)
			return r;
	}
	return 0;
}

int h2_body(struct giong_http_response *res, const void *p, size_t len)
{
	return queue_out(of_res(res), p, len, OUT_HIGH);
}

int h2_body_write(struct giong_http_response *res, const void *p, size_t len)
{
	/* On its way when this returns: nothing of it waits in the stream. */
	return queue_out(of_res(res), p, len, 0);
}

int h2_body_end(struct giong_http_response *res)
{
	struct h2_stream *st = of_res(res);

	st->out_eof = true;
	return queue_out(st, NULL, 0, SIZE_MAX);
}

/* Read @len bytes of @fd at @off into @buf through the ring: a file not in the page
 * cache is read by the kernel's workers, never by a blocking pread() on this worker.
 * @buf is lent to the kernel until giong_io() returns. The count, or -errno. */
static int file_read(int fd, void *buf, size_t len, uint64_t off)
{
	struct iovec iov = {buf, len};
	struct io_uring_sqe *sqe;
	ssize_t n;

	/* What the page cache holds is copied at once, without a trip through the ring
	 * and a park of the task (A/B in bench/results/http2.md); only a miss goes to the
	 * ring (RWF_NOWAIT: EAGAIN instead of waiting for the disk). */
	n = preadv2(fd, &iov, 1, (off_t)off, RWF_NOWAIT);
	if (n > 0)
		return (int)n;
	if (!(sqe = giong_sqe()))
		return -EBUSY;
	io_uring_prep_read(sqe, fd, buf, (unsigned)len, off);
	return giong_io(sqe);
}

/* Whether a file body of @len bytes to @h's connection is spliced: a plain socket
 * (not TLS), a body large enough, and a client that takes frames large enough for a
 * header write and two splices a frame to cost less than a copy (with 16 KiB frames,
 * every common client's, they cost 2.3 x: bench/results/http2.md). */
static bool splices(struct h2_conn *h, uint64_t len)
{
	return len >= H2_SPLICE_MIN &&
	       nghttp2_session_get_remote_settings(h->s, NGHTTP2_SETTINGS_MAX_FRAME_SIZE) >=
		       H2_SPLICE_FRAME_MIN &&
	       giong_stream_can_splice(giong_http_conn_stream(h->c)) > 0;
}

void h2_file_drop(struct h2_stream *st)
{
	if (st->file_fd < 0 || st->h->splice_st == st)
		return; /* the writer drops it once its splice ended */
	close(st->file_fd);
	st->file_fd = -1;
}

/* The range @fd [@off, @off + @len) as the stream's DATA payloads, spliced by the
 * connection's writer frame by frame (h2_data_send(), h2_splice_pending()); returns
 * once all of it left. 0 or -errno. */
static int splice_file(struct h2_stream *st, int fd, off_t off, uint64_t len)
{
	struct h2_conn *h = st->h;
	int r = 0;

	/* What was queued before goes first, in order. */
	if ((r = queue_out(st, NULL, 0, 0)))
		return r;
	/* A descriptor of its own: a frame's splice may still run when this returns
	 * early (a timeout), and the handler closes @fd then. */
	if ((st->file_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0)
		return -errno;
	st->file_off = (uint64_t)off;
	st->file_left = st->file_unoffered = len;
	st->file_eof = st->file_abandoned = false;
	if (st->out_left > 0) {
		st->out_left -= (int64_t)len < st->out_left ? (int64_t)len : st->out_left;
		st->file_eof = !st->out_left;
	}
	if (st->deferred) {
		st->deferred = false;
		nghttp2_session_resume_data(h->s, st->id);
	}
	h2_want_write(h);
	while (st->file_left) {
		if (h->splice_st != st && (st->closed || h->dead)) {
			r = -ECONNRESET;
			break;
		}
		r = wait_stream(st, giong_http_conn_limits(h->c)->write_timeout_ms);
		if (r == -ETIMEDOUT) {
			giong_http_conn_stats(h->c)->write_timeouts++;
			h2_conn_fail(h, NGHTTP2_CANCEL); /* a peer that does not read */
		}
		if (r < 0)
			break;
	}
	if (st->file_left) {
		/* Cut short: never an END_STREAM after it (the writer's pending frame,
		 * if any, still leaves whole: its header promised it; a frame nghttp2
		 * packed meanwhile fails the connection, h2_data_send()). */
		st->file_abandoned = true;
		st->file_eof = false;
		if (!st->closed)
			nghttp2_submit_rst_stream(h->s, NGHTTP2_FLAG_NONE, st->id,
						  NGHTTP2_INTERNAL_ERROR);
		h2_want_write(h);
	}
	h2_file_drop(st);
	return r;
}

int h2_sendfile(struct giong_http_response *res, int fd, off_t off, uint64_t len)
{
	struct h2_stream *st = of_res(res);
	char buf[16384];
	int r;

	if (splices(st->h, len))
		return splice_file(st, fd, off, len);
	/* Copied through memory: a small body, or a stream that cannot splice (TLS). */
	while (len) {
		int n = file_read(fd, buf, len < sizeof(buf) ? (size_t)len : sizeof(buf),
				  (uint64_t)off);

		if (n < 0)
			return n;
		if (n == 0)
			return -EIO; /* the file is shorter than the range */
		if ((r = queue_out(st, buf, (size_t)n, OUT_HIGH)))
			return r;
		off += n;
		len -= (uint64_t)n;
	}
	return 0;
}

/* ------------------------------------------------------------ DATA frames */

ssize_t h2_data_read(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
		     nghttp2_data_source *src, void *ud)
{
	struct h2_stream *st = src->ptr;
	size_t avail = st->out_len - st->out_off;

	(void)s;
	(void)id;
	(void)buf;
	(void)ud;
	if (st->file_abandoned)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* reset: cut short */
	if (st->file_unoffered) { /* spliced after its header (h2_data_send()) */
		*flags |= NGHTTP2_DATA_FLAG_NO_COPY;
		if (len > st->file_unoffered)
			len = (size_t)st->file_unoffered;
		st->file_unoffered -= len;
		if (!st->file_unoffered && st->file_eof)
			*flags |= NGHTTP2_DATA_FLAG_EOF;
		return (ssize_t)len;
	}
	if (!avail && !st->out_eof) {
		st->deferred = true;
		return NGHTTP2_ERR_DEFERRED;
	}
	*flags |= NGHTTP2_DATA_FLAG_NO_COPY;
	if (len > avail)
		len = avail;
	if (len == avail && st->out_eof)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)len;
}

int h2_data_send(nghttp2_session *s, nghttp2_frame *frame, const uint8_t *framehd, size_t len,
		 nghttp2_data_source *src, void *ud)
{
	struct h2_conn *h = ud;
	struct h2_stream *st = src->ptr;

	(void)s;
	(void)frame; /* no padding is asked for: the frame is its header and payload */
	/* nghttp2 calls this for frame after frame within one mem_send(): the batch's
	 * bound is kept here, and the send's end pumps the rest. */
	if (giong_http_conn_sending(h->c) || h->splice_st)
		return NGHTTP2_ERR_WOULDBLOCK;
	if (st->file_left) {
		if (st->file_abandoned)
			return NGHTTP2_ERR_CALLBACK_FAILURE; /* its fd may be gone */
		/* The header now, its payload spliced after the batch by the writer;
		 * mem_send() returns here (PAUSE: the frame counts as sent). */
		if (giong_http_conn_append(h->c, framehd, 9))
			return NGHTTP2_ERR_CALLBACK_FAILURE;
		h->splice_st = st;
		h->splice_len = len;
		return NGHTTP2_ERR_PAUSE;
	}
	if (giong_http_conn_queued(h->c) + 9 + len > H2_BATCH_MAX)
		return NGHTTP2_ERR_WOULDBLOCK;
	if (giong_http_conn_append(h->c, framehd, 9) ||
	    (len && giong_http_conn_append(h->c, st->out + st->out_off, len)))
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	st->out_off += len;
	h2_stream_wake(st);
	return 0;
}

ssize_t h2_data_length(nghttp2_session *s, uint8_t type, int32_t id, int32_t session_window,
		       int32_t stream_window, uint32_t max_frame, void *ud)
{
	struct h2_stream *st = nghttp2_session_get_stream_user_data(s, id);

	(void)type;
	(void)session_window;
	(void)stream_window;
	(void)ud;
	/* A spliced frame costs the same operations at any size: as large as the peer
	 * takes. A copied one stays within nghttp2's 16 KiB frame buffer. */
	if (st && st->file_unoffered)
		return (ssize_t)max_frame;
	return max_frame < 16384 ? (ssize_t)max_frame : 16384;
}

int h2_splice_pending(struct h2_conn *h)
{
	struct h2_stream *st = h->splice_st;
	size_t len = h->splice_len;
	int r;

	r = giong_http_conn_splice(h->c, st->file_fd, (off_t)st->file_off, len);
	h->splice_st = NULL;
	if (r == 0 && st->file_left >= len) {
		st->file_off += len;
		st->file_left -= len;
		if (!st->file_left && st->file_eof)
			st->out_eof = true; /* the body's last byte left */
	}
	if (!st->file_left || st->file_abandoned)
		h2_file_drop(st);
	h2_stream_wake(st);
	h2_stream_maybe_free(st); /* held while its splice ran */
	return r;
}
