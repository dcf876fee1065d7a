/* SPDX-License-Identifier: MIT */
/* stream.c - giong_stream_*(): argument checks, then the stream's table. */
#include <errno.h>
#include <limits.h>

#include <giong/net/stream.h>

ssize_t giong_stream_recv(struct giong_stream *s, struct giong_recvbuf **ret)
{
	if (!s || !s->ops || !ret)
		return -EINVAL;
	return s->ops->recv(s, ret);
}

ssize_t giong_stream_read(struct giong_stream *s, void *buf, size_t len)
{
	if (!s || !s->ops || !buf || !len)
		return -EINVAL;
	return s->ops->read(s, buf, len);
}

ssize_t giong_stream_writev(struct giong_stream *s, const struct iovec *iov, int n)
{
	if (!s || !s->ops || !iov || n <= 0 || n > IOV_MAX)
		return -EINVAL;
	return s->ops->writev(s, iov, n, 0);
}

ssize_t giong_stream_write(struct giong_stream *s, const void *buf, size_t len)
{
	struct iovec iov = {(void *)buf, len};

	if (!s || !s->ops || (!buf && len))
		return -EINVAL;
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

int giong_stream_shutdown(struct giong_stream *s, int how)
{
	if (!s || !s->ops)
		return -EINVAL;
	return s->ops->shutdown(s, how);
}

int giong_stream_close(struct giong_stream *s)
{
	if (!s || !s->ops)
		return -EINVAL;
	return s->ops->close(s);
}

int giong_stream_on_readable(struct giong_stream *s, void (*fn)(struct giong_stream *, void *),
			     void *ctx)
{
	if (!s || !s->ops)
		return -EINVAL;
	if (!s->ops->set_on_readable)
		return -ENOTSUP;
	return s->ops->set_on_readable(s, fn, ctx);
}

int giong_stream_fd(const struct giong_stream *s)
{
	if (!s || !s->ops)
		return -EINVAL;
	return s->ops->fd ? s->ops->fd(s) : -ENOTSUP;
}

const char *giong_stream_kind(const struct giong_stream *s)
{
	return s && s->ops && s->ops->name ? s->ops->name : "invalid";
}
