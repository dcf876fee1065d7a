/* SPDX-License-Identifier: MIT */
/*
 * stream.c - giong_stream_*(): argument checks, then the stream's table;
 * for stacked streams (see Stacking in stream.h) the close of the whole
 * stack and the questions that go down it (giong_stream_query()).
 */
#include <errno.h>
#include <limits.h>
#include <sys/socket.h>

#include <giong/net/stream.h>

/* giong_stream._flags */
#define KEEP_LOWER 1u /* giong_stream_close() leaves s->lower open */

ssize_t giong_stream_recv(struct giong_stream *s, struct giong_recvbuf **ret)
{
	if (!s || !s->ops || !ret)
		return -EINVAL;
	if (!s->ops->recv) {
		*ret = NULL;
		return -ENOTSUP;
	}
	return s->ops->recv(s, ret);
}

ssize_t giong_stream_read(struct giong_stream *s, void *buf, size_t len)
{
	if (!s || !s->ops || !buf || !len)
		return -EINVAL;
	if (!s->ops->read)
		return -ENOTSUP;
	return s->ops->read(s, buf, len);
}

ssize_t giong_stream_writev(struct giong_stream *s, const struct iovec *iov, int n)
{
	if (!s || !s->ops || !iov || n <= 0 || n > IOV_MAX)
		return -EINVAL;
	if (!s->ops->writev)
		return -ENOTSUP;
	return s->ops->writev(s, iov, n, 0);
}

ssize_t giong_stream_write(struct giong_stream *s, const void *buf, size_t len)
{
	struct iovec iov = {(void *)buf, len};

	if (!s || !s->ops || (!buf && len))
		return -EINVAL;
	if (!s->ops->writev)
		return -ENOTSUP;
	/* Nothing to send: done, as giong_stream_write_all() says too. */
	if (!len)
		return 0;
	return s->ops->writev(s, &iov, 1, 0);
}

ssize_t giong_stream_write_all(struct giong_stream *s, const void *buf, size_t len)
{
	size_t done = 0;

	if (!s || !s->ops || (!buf && len))
		return -EINVAL;
	if (!s->ops->writev)
		return -ENOTSUP;
	while (done < len) {
		struct iovec iov = {(char *)buf + done, len - done};
		ssize_t n = s->ops->writev(s, &iov, 1, GIONG_WRITE_ALL);

		if (n < 0)
			return n;
		if (n == 0)
			return -EPIPE;
		done += (size_t)n;
	}
	return (ssize_t)len;
}

int giong_stream_send_start(struct giong_stream *s, struct giong_stream_send *req,
			    const struct iovec *iov, int n)
{
	size_t total = 0;

	if (!s || !s->ops || !req || !req->done || !iov || n <= 0 || n > IOV_MAX)
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		if (iov[i].iov_len > (size_t)INT_MAX - total)
			return -EINVAL; /* one send reports its count as an int */
		total += iov[i].iov_len;
	}
	if (!s->ops->send_start)
		return -ENOTSUP;
	return s->ops->send_start(s, req, iov, n);
}

int giong_stream_shutdown(struct giong_stream *s, int how)
{
	if (!s || !s->ops)
		return -EINVAL;
	if (!s->ops->shutdown)
		return -ENOTSUP;
	return s->ops->shutdown(s, how);
}

/* The streams giong_stream_close(@s) would close: 0 if each has a table with
 * a close and there are at most GIONG_STREAM_MAX_DEPTH of them. Checked
 * before anything is closed, so that a bad stack is refused untouched. */
static int check_close_stack(const struct giong_stream *s)
{
	for (unsigned depth = 0; s; depth++) {
		if (depth == GIONG_STREAM_MAX_DEPTH)
			return -ELOOP;
		if (!s->ops)
			return -EINVAL;
		if (!s->ops->close)
			return -ENOTSUP;
		s = (s->_flags & KEEP_LOWER) ? NULL : s->lower;
	}
	return 0;
}

int giong_stream_close(struct giong_stream *s)
{
	int r;

	if (!s)
		return -EINVAL;
	if ((r = check_close_stack(s)))
		return r;
	while (s) {
		/* Read before the close: it frees s. */
		struct giong_stream *lower = (s->_flags & KEEP_LOWER) ? NULL : s->lower;

		if ((r = s->ops->close(s)))
			return r; /* nothing done to s, nor to what is beneath it */
		s = lower;
	}
	return 0;
}

int giong_stream_keep_lower(struct giong_stream *s, struct giong_stream **lower)
{
	if (lower)
		*lower = NULL;
	if (!s)
		return -EINVAL;
	if (!s->lower)
		return -ENOTSUP;
	s->_flags |= KEEP_LOWER;
	if (lower)
		*lower = s->lower;
	return 0;
}

int giong_stream_on_readable(struct giong_stream *s, giong_stream_readable_fn fn, void *ctx)
{
	if (!s || !s->ops)
		return -EINVAL;
	if (!s->ops->set_on_readable)
		return -ENOTSUP;
	return s->ops->set_on_readable(s, fn, ctx);
}

/* One stream's own answer to @what: 0, GIONG_STREAM_QUERY_LOWER, -ENOTSUP
 * (not known here), -ENOENT or another error. A table older than query may
 * still answer the socket question through its fd. */
static int ask(const struct giong_stream *s, int what, void *out, size_t *len)
{
	int r = s->ops->query ? s->ops->query(s, what, out, len) : -ENOTSUP;

	if (r == -ENOTSUP && what == GIONG_STREAM_QUERY_SOCKET && s->ops->fd) {
		int fd = s->ops->fd(s);

		if (fd < 0)
			return fd;
		*(int *)out = fd;
		return 0;
	}
	/* A positive return this version does not know is a table's bug:
	 * taken as "not known here", the answer that claims the least. */
	return r > 0 && r != GIONG_STREAM_QUERY_LOWER ? -ENOTSUP : r;
}

int giong_stream_query(const struct giong_stream *s, int what, void *out, size_t *len)
{
	if (!s || !out || what <= 0 || (what == GIONG_STREAM_QUERY_ALPN && !len))
		return -EINVAL;
	/* Down the stack to the first stream that answers. */
	for (unsigned depth = 0; s; depth++, s = s->lower) {
		int r;

		if (depth == GIONG_STREAM_MAX_DEPTH)
			return -ELOOP;
		if (!s->ops)
			return -EINVAL;
		r = ask(s, what, out, len);
		if (r == GIONG_STREAM_QUERY_LOWER)
			continue;
		if (r != -ENOTSUP)
			return r;
		/* A stream silent about where its written bytes go may change
		 * them on the way (a cipher that predates query): none, rather
		 * than a descriptor that would skip it. */
		if (what == GIONG_STREAM_QUERY_SPLICE_FD)
			return -ENOENT;
	}
	return -ENOTSUP;
}

int giong_stream_fd(const struct giong_stream *s)
{
	int fd, r = giong_stream_query(s, GIONG_STREAM_QUERY_SOCKET, &fd, NULL);

	/* "No socket here" from a stream that knows: as no stream knowing. */
	return r == -ENOENT ? -ENOTSUP : r ? r : fd;
}

int giong_stream_splice_fd(const struct giong_stream *s)
{
	int fd, r = giong_stream_query(s, GIONG_STREAM_QUERY_SPLICE_FD, &fd, NULL);

	return r ? r : fd;
}

int giong_stream_alpn(const struct giong_stream *s, const char **name, size_t *len)
{
	const char *p;
	size_t l;
	int r;

	if (!name || !len)
		return -EINVAL;
	if ((r = giong_stream_query(s, GIONG_STREAM_QUERY_ALPN, &p, &l)))
		return r;
	*name = p;
	*len = l;
	return 0;
}

static int sock_addr(const struct giong_stream *s, struct giong_addr *out, bool peer)
{
	int fd, r;

	if (!s || !out)
		return -EINVAL;
	fd = giong_stream_fd(s);
	if (fd < 0)
		return fd;
	out->len = sizeof(out->ss);
	r = peer ? getpeername(fd, (struct sockaddr *)&out->ss, &out->len)
		 : getsockname(fd, (struct sockaddr *)&out->ss, &out->len);
	return r ? -errno : 0;
}

int giong_stream_peer_addr(const struct giong_stream *s, struct giong_addr *out)
{
	return sock_addr(s, out, true);
}

int giong_stream_local_addr(const struct giong_stream *s, struct giong_addr *out)
{
	return sock_addr(s, out, false);
}

const char *giong_stream_kind(const struct giong_stream *s)
{
	return s && s->ops && s->ops->name ? s->ops->name : "invalid";
}
