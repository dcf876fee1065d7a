// SPDX-License-Identifier: MIT
/*
 * epoll_echo: the hand-written epoll echo server that giong's echo example is measured
 * against (issue 4, "Benchmark"). One thread, level-triggered epoll, non-blocking sockets.
 *
 * Per connection: one read into a 64 KiB buffer, one write of what was read. A short write
 * keeps the unsent bytes, stops reading from that connection and waits for EPOLLOUT; once
 * the bytes are gone the connection goes back to EPOLLIN. So a ping-pong message costs
 * read + write + a share of one epoll_wait, which is what a careful engineer gets from epoll.
 *
 * usage: epoll_echo [--port] PORT [--host ADDR]     (default host 127.0.0.1)
 * SIGINT/SIGTERM close everything and exit 0. Nothing is printed per request.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "peer.h"

#define BUF_SIZE (64 * 1024)
#define MAX_EVENTS 256

struct conn {
	int fd;
	uint32_t off; /* first unsent byte in buf */
	uint32_t len; /* bytes in buf (unsent while off < len) */
	char buf[BUF_SIZE];
};

static volatile sig_atomic_t stop_requested;
static int listen_fd = -1;
static int epfd = -1;
static struct conn **conns; /* indexed by fd */
static size_t conns_cap;
static size_t nconns;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void die(const char *what)
{
	fprintf(stderr, "epoll_echo: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void conn_close(struct conn *c)
{
	/* close() also removes the fd from the epoll set: it is not dup'ed anywhere. */
	close(c->fd);
	conns[c->fd] = NULL;
	nconns--;
	free(c);
}

static int conn_set_events(struct conn *c, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = c};

	return epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Write what is pending. Returns 1 when all is sent, 0 when the socket is full, -1 on error. */
static int conn_flush(struct conn *c)
{
	while (c->off < c->len) {
		ssize_t n = write(c->fd, c->buf + c->off, c->len - c->off);

		if (n > 0) {
			c->off += (uint32_t)n;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && errno == EAGAIN) {
			return 0;
		} else {
			return -1;
		}
	}
	c->off = 0;
	c->len = 0;
	return 1;
}

static void on_readable(struct conn *c)
{
	ssize_t n = read(c->fd, c->buf, BUF_SIZE);
	int r;

	if (n == 0) {
		conn_close(c);
		return;
	}
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			conn_close(c);
		return;
	}
	c->off = 0;
	c->len = (uint32_t)n;
	r = conn_flush(c);
	if (r < 0)
		conn_close(c);
	else if (r == 0 && conn_set_events(c, EPOLLOUT) < 0)
		conn_close(c);
}

static void on_writable(struct conn *c)
{
	int r = conn_flush(c);

	if (r < 0)
		conn_close(c);
	else if (r == 1 && conn_set_events(c, EPOLLIN) < 0)
		conn_close(c);
}

static void on_accept(void)
{
	int fd;

	while ((fd = peer_accept("epoll_echo", listen_fd)) >= 0) {
		struct conn *c;
		struct epoll_event ev;
		void *table = peer_fd_table_fit(conns, &conns_cap, sizeof(*conns), fd);

		if (!table) {
			close(fd);
			continue;
		}
		conns = table;
		c = malloc(sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->off = 0;
		c->len = 0;
		ev.events = EPOLLIN;
		ev.data.ptr = c;
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			close(fd);
			free(c);
			continue;
		}
		conns[fd] = c;
		nconns++;
	}
}

int main(int argc, char **argv)
{
	struct epoll_event events[MAX_EVENTS];
	sigset_t waitmask;
	const char *host;
	int port;

	peer_args(argc, argv, &port, &host);
	peer_raise_nofile();

	peer_signals(on_signal, &waitmask);

	conns_cap = 1024;
	conns = calloc(conns_cap, sizeof(*conns));
	if (!conns)
		die("calloc");

	listen_fd = peer_listen("epoll_echo", host, port, SOCK_NONBLOCK, 0);

	epfd = peer_epoll("epoll_echo", listen_fd);

	while (!stop_requested) {
		int n = epoll_pwait(epfd, events, MAX_EVENTS, -1, &waitmask);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("epoll_pwait");
		}
		for (int i = 0; i < n; i++) {
			struct conn *c = events[i].data.ptr;
			uint32_t ev = events[i].events;

			if (!c) {
				on_accept();
				continue;
			}
			/* Each fd shows up once per batch and is closed only by its own handler. */
			if (ev & EPOLLOUT)
				on_writable(c);
			else if (ev & (EPOLLIN | EPOLLERR | EPOLLHUP))
				on_readable(c);
		}
	}

	for (size_t fd = 0; fd < conns_cap; fd++)
		if (conns[fd])
			conn_close(conns[fd]);
	free(conns);
	close(epfd);
	close(listen_fd);
	return 0;
}
