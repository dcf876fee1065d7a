// SPDX-License-Identifier: MIT
/*
 * peer.h - what the hand-written peers (epoll_echo.c, uring_naive_echo.c, epoll_http.c)
 * share: their command line, the descriptor limit, the listening socket, and for the epoll
 * ones the signal set-up, accepting and the table of connections indexed by descriptor.
 * Header-only: each peer is one C file built on its own (Makefile).
 */
#ifndef GIONG_BENCH_PEER_H
#define GIONG_BENCH_PEER_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/epoll.h>
#include <sys/socket.h>

/* "[--port] PORT [--host ADDR]" (host default 127.0.0.1); prints the usage and exits 2
 * on anything else. */
static inline void peer_args(int argc, char **argv, int *port, const char **host)
{
	*port = -1;
	*host = "127.0.0.1";
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--port") == 0 && i + 1 < argc)
			*port = atoi(argv[++i]);
		else if (strcmp(argv[i], "--host") == 0 && i + 1 < argc)
			*host = argv[++i];
		else if (argv[i][0] != '-')
			*port = atoi(argv[i]);
		else
			*port = -1, i = argc;
	}
	if (*port <= 0 || *port >= 65536) {
		fprintf(stderr, "usage: %s [--port] PORT [--host ADDR]\n", argv[0]);
		exit(2);
	}
}

/* The soft descriptor limit up to the hard one: 1,000 connections and more. */
static inline void peer_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* A listening TCP socket on IPv4 @host:@port (SO_REUSEADDR, backlog SOMAXCONN), with
 * @sock_flags (SOCK_NONBLOCK, ...) and SOCK_CLOEXEC, and SO_REUSEPORT when @reuseport (as
 * giong's and nginx's listeners have). Exits with a message naming @prog on any failure. */
static inline int peer_listen(const char *prog, const char *host, int port, int sock_flags,
			      int reuseport)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd, one = 1;

	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		fprintf(stderr, "%s: bad IPv4 address '%s'\n", prog, host);
		exit(2);
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | sock_flags, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, SOMAXCONN) < 0) {
		fprintf(stderr, "%s: listen on %s:%d: %s\n", prog, host, port, strerror(errno));
		exit(1);
	}
	return fd;
}

/*
 * SIGINT/SIGTERM call @handler and are blocked except inside a wait given *@waitmask
 * (epoll_pwait), so a signal cannot slip in between the check of a stop flag and the
 * wait; SIGPIPE is ignored (a peer gone mid-write is an EPIPE).
 */
static inline void peer_signals(void (*handler)(int), sigset_t *waitmask)
{
	struct sigaction sact = {.sa_handler = handler};
	sigset_t block;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, waitmask);
	sigdelset(waitmask, SIGINT);
	sigdelset(waitmask, SIGTERM);
	sigaction(SIGINT, &sact, NULL);
	sigaction(SIGTERM, &sact, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* The next connection waiting on non-blocking @listen_fd, non-blocking itself and with
 * TCP_NODELAY; -1 when none is left (an error other than EAGAIN is reported, naming
 * @prog). */
static inline int peer_accept(const char *prog, int listen_fd)
{
	for (;;) {
		int one = 1, fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			return fd;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno != EAGAIN)
			fprintf(stderr, "%s: accept: %s\n", prog, strerror(errno));
		return -1;
	}
}

/* Room in @tab, a table of *@cap entries of @elem bytes indexed by descriptor, for index
 * @fd: the table (grown, the new entries zeroed, *@cap updated), or NULL without memory
 * (@tab is then untouched). */
static inline void *peer_fd_table_fit(void *tab, size_t *cap, size_t elem, int fd)
{
	size_t n = *cap;
	char *p;

	if ((size_t)fd < n)
		return tab;
	while (n <= (size_t)fd)
		n *= 2;
	p = realloc(tab, n * elem);
	if (!p)
		return NULL;
	memset(p + *cap * elem, 0, (n - *cap) * elem);
	*cap = n;
	return p;
}

/* An epoll instance watching @listen_fd for connections (its events carry a NULL
 * data.ptr, which tells them from a connection's). Exits naming @prog on failure. */
static inline int peer_epoll(const char *prog, int listen_fd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
	int epfd = epoll_create1(EPOLL_CLOEXEC);

	if (epfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, listen_fd, &ev) < 0) {
		fprintf(stderr, "%s: epoll: %s\n", prog, strerror(errno));
		exit(1);
	}
	return epfd;
}

#endif /* GIONG_BENCH_PEER_H */
