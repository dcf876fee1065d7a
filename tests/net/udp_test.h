/* SPDX-License-Identifier: MIT */
/*
 * udp_test.h - helpers of the UDP tests (test_udp.c, test_udp_pool.c):
 * loopback addresses of either family, datagrams that carry their sequence
 * number and a pattern derived from it, the pool's accounting.
 */
#ifndef GIONG_UDP_TEST_H
#define GIONG_UDP_TEST_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <giong/net.h>

#include "giong_test.h"

static inline unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static inline int port_of(struct giong_udp *u)
{
	struct giong_addr a;

	if (giong_udp_local_addr(u, &a))
		return -1;
	return giong_addr_port(&a);
}

/* The loopback address of @family with @port. */
static inline struct giong_addr loop_addr(int family, int port)
{
	struct giong_addr a;
	char text[64];

	snprintf(text, sizeof(text), family == AF_INET6 ? "[::1]:%d" : "127.0.0.1:%d", port);
	if (giong_addr_parse(text, &a))
		memset(&a, 0, sizeof(a));
	return a;
}

static inline const char *loop_any(int family)
{
	return family == AF_INET6 ? "[::1]:0" : "127.0.0.1:0";
}

static inline bool have_ipv6_loopback(void)
{
	struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	int fd = socket(AF_INET6, SOCK_DGRAM, 0);
	bool ok;

	if (fd < 0)
		return false;
	ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	close(fd);
	return ok;
}

/* A datagram carrying its sequence number, then a pattern derived from it. */
static inline void fill(unsigned char *p, size_t len, uint32_t seq)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (unsigned char)(seq * 7 + i);
	if (len >= 4)
		memcpy(p, &seq, 4);
}

/* The sequence number of a datagram made by fill(), or -1 if it is wrong. */
static inline long check(const void *data, size_t len, size_t want_len)
{
	const unsigned char *p = data;
	uint32_t seq;

	if (len != want_len || len < 4)
		return -1;
	memcpy(&seq, p, 4);
	for (size_t i = 4; i < len; i++)
		if (p[i] != (unsigned char)(seq * 7 + i))
			return -1;
	return seq;
}

/* Pool accounting of the calling worker: 1 when every buffer is back. */
static inline int pool_all_free(void)
{
	struct giong_stats st;

	giong_stats(&st);
	return st.recvbufs_free == st.recvbufs_total;
}

#endif /* GIONG_UDP_TEST_H */
