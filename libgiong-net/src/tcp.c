/* SPDX-License-Identifier: MIT */
/* tcp.c - TCP listen, connect and socket options. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include "listener.h"
#include "sock.h"

int giong_tcp_listen_addr(const struct giong_addr *addr, const struct giong_listen_options *opts,
			  struct giong_listener **ret)
{
	int fd, r;

	if (!addr || !ret || (addr->ss.ss_family != AF_INET && addr->ss.ss_family != AF_INET6))
		return -EINVAL;
	*ret = NULL;
	if (giong_worker_index() < 0)
		return GIONG_ENOTWORKER;
	fd = giong__net_listen_socket(addr, opts);
	if (fd < 0)
		return fd;
	r = giong__net_listener_new(fd, false, NULL, opts, ret);
	if (r)
		close(fd);
	return r;
}

int giong_tcp_listen(const char *text, const struct giong_listen_options *opts,
		     struct giong_listener **ret)
{
	struct giong_addr a;
	int r;

	if (!ret)
		return -EINVAL;
	*ret = NULL;
	r = giong_addr_parse(text, &a);
	return r ? r : giong_tcp_listen_addr(&a, opts, ret);
}

int giong_tcp_connect_addr(const struct giong_addr *addr, struct giong_stream **ret)
{
	if (!addr || !ret || (addr->ss.ss_family != AF_INET && addr->ss.ss_family != AF_INET6))
		return -EINVAL;
	*ret = NULL;
	if (giong_worker_index() < 0)
		return GIONG_ENOTWORKER;
	return giong__net_sock_connect(addr->ss.ss_family, (const struct sockaddr *)&addr->ss,
				       addr->len, &giong__net_tcp_ops, ret);
}

int giong_tcp_connect(const char *text, struct giong_stream **ret)
{
	struct giong_addr a;
	int r;

	if (!ret)
		return -EINVAL;
	*ret = NULL;
	r = giong_addr_resolve(text, &a);
	return r ? r : giong_tcp_connect_addr(&a, ret);
}

int giong_tcp_set_nodelay(struct giong_stream *st, bool on)
{
	struct giong__sock *s = giong__net_sock_of(st);
	int v = on;

	if (!st)
		return -EINVAL;
	if (!s || st->ops != &giong__net_tcp_ops)
		return -ENOTSUP;
	return setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &v, sizeof(v)) ? -errno : 0;
}

static int sock_addr(const struct giong_stream *st, struct giong_addr *out, bool peer)
{
	struct giong__sock *s = giong__net_sock_of(st);
	int r;

	if (!st || !out)
		return -EINVAL;
	if (!s)
		return -ENOTSUP;
	out->len = sizeof(out->ss);
	r = peer ? getpeername(s->fd, (struct sockaddr *)&out->ss, &out->len)
		 : getsockname(s->fd, (struct sockaddr *)&out->ss, &out->len);
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
