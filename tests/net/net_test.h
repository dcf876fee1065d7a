/* SPDX-License-Identifier: MIT */
/*
 * net_test.h - helpers shared by the net tests: a byte pattern whose every
 * offset is recognisable (a lost, doubled or reordered byte shows), plain
 * blocking/non-blocking sockets for peers outside giong, and descriptor
 * limits.
 *
 * Fibers record results; assertions run after the runtime ended (a CMocka
 * failure longjmps, which must not happen on a fiber stack).
 */
#ifndef GIONG_NET_TEST_H
#define GIONG_NET_TEST_H

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "giong_test.h"

#include <giong/net.h>

/* The byte at offset @i of a pattern stream @seed: hashed, so a shift by any
 * count of bytes changes it. */
static inline unsigned char nt_pat(uint64_t seed, uint64_t i)
{
	uint64_t x = (i + seed * 0x9E3779B97F4A7C15ull) * 0xD6E8FEB86659FD93ull;

	return (unsigned char)(x >> 56);
}

static inline void nt_fill(uint64_t seed, uint64_t off, void *buf, size_t len)
{
	unsigned char *p = buf;

	for (size_t i = 0; i < len; i++)
		p[i] = nt_pat(seed, off + i);
}

/* -1 if @buf holds the pattern at @off, else the offset of the first wrong byte. */
static inline long long nt_check(uint64_t seed, uint64_t off, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	for (size_t i = 0; i < len; i++)
		if (p[i] != nt_pat(seed, off + i))
			return (long long)(off + i);
	return -1;
}

/* The port of a listener, or -1. */
static inline int nt_listener_port(const struct giong_listener *l)
{
	struct giong_addr a;

	if (giong_listener_addr(l, &a))
		return -1;
	return giong_addr_port(&a);
}

/* A connected TCP pair of giong streams through a fresh listener (closed again);
 * the accepted one @regular: a regular descriptor, else direct where the worker has a
 * table (tcp.h). Returns 0, or the failing call's -errno (nothing is left open then).
 * In a task. */
static inline int nt_tcp_pair_as(struct giong_stream **c, struct giong_stream **s, bool regular)
{
	struct giong_listen_options lo = {.regular_fds = regular};
	struct giong_listener *l;
	char addr[64];
	int r;

	r = giong_tcp_listen("127.0.0.1:0", &lo, &l);
	if (r)
		return r;
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", nt_listener_port(l));
	r = giong_tcp_connect(addr, c);
	if (!r) {
		r = giong_tcp_accept(l, s);
		if (r)
			giong_stream_close(*c);
	}
	giong_listener_close(l);
	return r;
}

/* nt_tcp_pair_as(), the accepted stream as the listener's default makes it. */
static inline int nt_tcp_pair(struct giong_stream **c, struct giong_stream **s)
{
	return nt_tcp_pair_as(c, s, false);
}

/* A plain TCP socket bound to 127.0.0.1:@port (0: any); @listen_backlog < 0:
 * bound only. Stores the port in *@port_out. Returns the fd or -errno. */
static inline int nt_plain_bind(int port, int listen_backlog, int *port_out)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    (listen_backlog >= 0 && listen(fd, listen_backlog)) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len)) {
		int e = -errno;

		close(fd);
		return e;
	}
	if (port_out)
		*port_out = ntohs(sa.sin_port);
	return fd;
}

/* A plain TCP connection to 127.0.0.1:@port; non-blocking if @nonblock
 * (then the connect may still be in progress). Returns the fd or -errno. */
static inline int nt_plain_connect(int port, int nonblock)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);

	if (fd < 0)
		return -errno;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) && errno != EINPROGRESS) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

/* One int over a control socket between a test and its child process.
 * 0, or -1 on a short read or write. */
static inline int nt_ctl_send(int fd, int v)
{
	return write(fd, &v, sizeof(v)) == sizeof(v) ? 0 : -1;
}

static inline int nt_ctl_recv(int fd, int *v)
{
	return read(fd, v, sizeof(*v)) == sizeof(*v) ? 0 : -1;
}

/* Read exactly @len bytes from a giong stream. Returns @len, 0 on a too-early
 * end of stream, or -errno. */
static inline ssize_t nt_stream_read_exact(struct giong_stream *s, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = giong_stream_read(s, (char *)buf + done, len - done);

		if (n <= 0)
			return n;
		done += (size_t)n;
	}
	return (ssize_t)len;
}

#endif /* GIONG_NET_TEST_H */
