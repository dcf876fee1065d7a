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

int giong_tcp_set_nodelay(struct giong_stream *st, bool on)
{
	int v = on, r;

	if (!st)
		return -EINVAL;
	/* Down the stack (TLS over TCP) to the first socket stream. */
	for (unsigned depth = 0; st; depth++, st = st->lower) {
		struct giong__sock *s;

		if (depth == GIONG_STREAM_MAX_DEPTH)
			return -ELOOP;
		if (!st->ops)
			return -EINVAL;
		if (!(s = giong__net_sock_of(st)))
			continue;
		if ((r = giong__owner_check(s->owner)))
			return r; /* nothing read of the socket, nothing set */
		if (st->ops != &giong__net_tcp_ops)
			return -ENOTSUP; /* a Unix stream */
		/* A direct socket has no descriptor to set it on (io_uring's
		 * setsockopt command needs Linux 6.7). One accepted by a listener
		 * of giong_tcp_listen() has TCP_NODELAY from it (listener.c). */
		if (s->rxq.fixed)
			return -EOPNOTSUPP;
		return setsockopt(s->rxq.fd, IPPROTO_TCP, TCP_NODELAY, &v, sizeof(v)) ? -errno : 0;
	}
	return -ENOTSUP;
}
