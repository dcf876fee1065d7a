// SPDX-License-Identifier: MIT
/*
 * uring_naive_echo: the naive liburing echo server of issue 4's benchmark. What someone
 * writes on a first try with io_uring: one thread, one ring, a one-shot accept that is
 * re-armed after each connection, and per connection one recv SQE into its own buffer, then
 * a send of what arrived, then a recv again. No provided buffers, no multishot, no
 * registered files, no SQPOLL; io_uring_submit_and_wait() once per loop.
 *
 * usage: uring_naive_echo [--port] PORT [--host ADDR]     (default host 127.0.0.1)
 * SIGINT/SIGTERM (read from a signalfd through the ring) close everything and exit 0.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "peer.h"

#define BUF_SIZE (64 * 1024)
#define RING_ENTRIES 4096

/* user_data of the two operations that are not a connection's (conns are malloc'ed). */
#define UD_ACCEPT ((uint64_t)1)
#define UD_SIGNAL ((uint64_t)2)

enum conn_op { OP_RECV, OP_SEND };

struct conn {
	int fd;
	enum conn_op op; /* the one operation in flight */
	uint32_t off;    /* first unsent byte (OP_SEND) */
	uint32_t len;    /* bytes to send (OP_SEND) */
	struct conn *prev, *next;
	char buf[BUF_SIZE];
};

static struct io_uring ring;
static struct conn *conn_list;

static void die(const char *what, int err)
{
	fprintf(stderr, "uring_naive_echo: %s: %s\n", what, strerror(err));
	exit(1);
}

static struct io_uring_sqe *get_sqe(void)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

	while (!sqe) {
		/* SQ full: hand what is queued to the kernel and try again. */
		int r = io_uring_submit(&ring);

		if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY)
			die("io_uring_submit", -r);
		sqe = io_uring_get_sqe(&ring);
	}
	return sqe;
}

static void arm_accept(int listen_fd)
{
	struct io_uring_sqe *sqe = get_sqe();

	io_uring_prep_accept(sqe, listen_fd, NULL, NULL, SOCK_CLOEXEC);
	io_uring_sqe_set_data64(sqe, UD_ACCEPT);
}

static void arm_recv(struct conn *c)
{
	struct io_uring_sqe *sqe = get_sqe();

	c->op = OP_RECV;
	io_uring_prep_recv(sqe, c->fd, c->buf, BUF_SIZE, 0);
	io_uring_sqe_set_data(sqe, c);
}

static void arm_send(struct conn *c)
{
	struct io_uring_sqe *sqe = get_sqe();

	c->op = OP_SEND;
	io_uring_prep_send(sqe, c->fd, c->buf + c->off, c->len - c->off, MSG_NOSIGNAL);
	io_uring_sqe_set_data(sqe, c);
}

static void conn_close(struct conn *c)
{
	close(c->fd);
	if (c->prev)
		c->prev->next = c->next;
	else
		conn_list = c->next;
	if (c->next)
		c->next->prev = c->prev;
	free(c);
}

static void on_accept(int listen_fd, int res)
{
	struct conn *c;
	int one = 1;

	arm_accept(listen_fd);
	if (res < 0) {
		if (res != -EINTR && res != -ECONNABORTED)
			fprintf(stderr, "uring_naive_echo: accept: %s\n", strerror(-res));
		return;
	}
	c = malloc(sizeof(*c));
	if (!c) {
		close(res);
		return;
	}
	c->fd = res;
	c->off = 0;
	c->len = 0;
	c->prev = NULL;
	c->next = conn_list;
	if (conn_list)
		conn_list->prev = c;
	conn_list = c;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	arm_recv(c);
}

static void on_conn(struct conn *c, int res)
{
	if (c->op == OP_RECV) {
		if (res <= 0) {
			/* EOF or error: nothing else is in flight on this connection. */
			conn_close(c);
			return;
		}
		c->off = 0;
		c->len = (uint32_t)res;
		arm_send(c);
		return;
	}
	if (res < 0) {
		conn_close(c);
		return;
	}
	c->off += (uint32_t)res;
	if (c->off < c->len)
		arm_send(c); /* short send: send the rest */
	else
		arm_recv(c);
}

int main(int argc, char **argv)
{
	struct signalfd_siginfo si;
	struct io_uring_params p = {0};
	const char *host;
	sigset_t mask;
	int port, listen_fd, sfd, r;
	int stop = 0;

	peer_args(argc, argv, &port, &host);
	peer_raise_nofile();

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0)
		die("signalfd", errno);

	listen_fd = peer_listen("uring_naive_echo", host, port, 0, 0);

	/* A CQ twice the SQ: at most one operation per connection is in flight. */
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 2 * RING_ENTRIES;
	r = io_uring_queue_init_params(RING_ENTRIES, &ring, &p);
	if (r < 0)
		die("io_uring_queue_init", -r);

	arm_accept(listen_fd);
	{
		struct io_uring_sqe *sqe = get_sqe();

		io_uring_prep_read(sqe, sfd, &si, sizeof(si), 0);
		io_uring_sqe_set_data64(sqe, UD_SIGNAL);
	}

	while (!stop) {
		struct io_uring_cqe *cqe;
		unsigned int head, seen = 0;

		r = io_uring_submit_and_wait(&ring, 1);
		if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY)
			die("io_uring_submit_and_wait", -r);
		io_uring_for_each_cqe(&ring, head, cqe) {
			uint64_t ud = io_uring_cqe_get_data64(cqe);

			seen++;
			if (ud == UD_ACCEPT)
				on_accept(listen_fd, cqe->res);
			else if (ud == UD_SIGNAL)
				stop = 1;
			else
				on_conn(io_uring_cqe_get_data(cqe), cqe->res);
		}
		io_uring_cq_advance(&ring, seen);
	}

	/* The ring goes first: its teardown cancels the recv/send/accept still in flight. */
	io_uring_queue_exit(&ring);
	while (conn_list)
		conn_close(conn_list);
	close(listen_fd);
	close(sfd);
	return 0;
}
