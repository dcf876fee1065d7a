/* SPDX-License-Identifier: MIT */
/*
 * listener.c - listening sockets with one multishot accept each.
 *
 * Accepted descriptors wait in the listener's queue until a task takes them;
 * a task that gives up (timeout, cancel) leaves them there, so none is lost.
 * Above max_pending the multishot accept is cancelled, and re-armed once the
 * queue drains below half: the kernel's own backlog then holds (and
 * eventually refuses) new clients instead of our memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "listener.h"
#include "sock.h"

static int fdq_push(struct giong_listener *l, int fd)
{
	if (l->count == l->cap) {
		unsigned cap = l->cap ? l->cap * 2 : 16;
		int *n = malloc(cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		for (unsigned i = 0; i < l->count; i++)
			n[i] = l->fds[(l->head + i) % l->cap];
		free(l->fds);
		l->fds = n;
		l->head = 0;
		l->cap = cap;
	}
	l->fds[(l->head + l->count) % l->cap] = fd;
	l->count++;
	return 0;
}

static int fdq_pop(struct giong_listener *l)
{
	int fd = l->fds[l->head];

	l->head = (l->head + 1) % l->cap;
	l->count--;
	return fd;
}

/* A queue entry for slot @slot of the worker's direct table (entries >= 0
 * are descriptors). */
static int slot_entry(unsigned slot)
{
	return -2 - (int)slot;
}

/* Close a queue entry, without waiting. */
static void entry_close(int e)
{
	if (e >= 0)
		close(e);
	else
		giong_close_direct_nowait((unsigned)(-2 - e));
}

/*
 * The slots kept free of direct accepts: the kernel may fill slots faster
 * than this worker reaps the completions that tell it (a burst of
 * connections), and an accept that finds no slot drops its connection
 * (-ENFILE). A sixteenth of the table, at least 1 and at most 64.
 */
static int headroom(int size)
{
	int h = size / 16;

	return h < 1 ? 1 : h > 64 ? 64 : h;
}

/*
 * Whether the next multishot accept of @l should be direct: @l wants it and
 * the worker's table has more room than the headroom. Hysteresis: a
 * listener accepting regular descriptors goes back to direct ones only once
 * twice the headroom is free, so that it does not re-arm on every close.
 */
static bool want_direct(const struct giong_listener *l)
{
	int size = giong_direct_size(), room = giong_direct_free();

	if (!l->direct || l->direct_broken || size <= 0)
		return false;
	return room > (l->armed_direct ? 1 : 2) * headroom(size);
}

static void listener_free(struct giong_listener *l)
{
	if (l->unlink_path)
		unlink(l->unlink_path);
	free(l->unlink_path);
	free(l->fds);
	free(l);
}

/* Free a closed listener once the kernel's accept is over and no task is
 * inside accept (a woken acceptor still reads it when it runs). */
static void maybe_free(struct giong_listener *l)
{
	if (l->closing && !l->armed && !l->busy)
		listener_free(l);
}

static void arm(struct giong_listener *l);

/* An error that is the new connection's, not the listener's: accept(2)
 * says Linux passes a connection's pending network errors to accept(),
 * firewall refusals (EPERM) too, and that a program should retry as for
 * EAGAIN. That connection is gone; the next one is accepted as usual. */
static bool connection_error(int res)
{
	switch (res) {
	case -ECONNABORTED:
	case -EPROTO:
	case -ENETDOWN:
	case -ENOPROTOOPT:
	case -EHOSTDOWN:
	case -ENONET:
	case -EHOSTUNREACH:
	case -EOPNOTSUPP:
	case -ENETUNREACH:
	case -EPERM:
		return true;
	default:
		return false;
	}
}

/* The accept just completed with @res >= 0: the queue entry for it. A slot
 * is counted used from now until its close_direct completes. */
static int accepted(struct giong_listener *l, int res)
{
	if (!l->armed_direct) {
		if (l->armed_regular)
			giong_direct_note_fallback(); /* the table had no room */
		return res;
	}
	giong_direct_taken();
	return slot_entry((unsigned)res);
}

/* The table's room changed the mode @l wants: end the armed accept; its
 * final completion arms the other kind (accept_cqe). */
static void maybe_switch(struct giong_listener *l)
{
	if (l->armed && !l->cancel_sent && !l->closing && !l->stopped &&
	    want_direct(l) != l->armed_direct)
		l->cancel_sent = giong_op_cancel(l->op_id) == 0;
}

static void accept_cqe(void *ctx, int res, unsigned flags)
{
	struct giong_listener *l = ctx;

	if (!(flags & IORING_CQE_F_MORE)) {
		l->armed = false;
		l->cancel_sent = false;
	}
	if (res == -ENFILE && l->armed_direct) {
		/* No free slot, though the count said there was (another user of
		 * the table): that connection is lost (the kernel closed it).
		 * Regular descriptors from now on, and the same next time. */
		l->direct_broken = true;
		l->armed_direct = false;
		res = -ECANCELED;
	}
	if (res >= 0) {
		int e = accepted(l, res);

		if (l->closing || fdq_push(l, e)) {
			entry_close(e);
		} else {
			giong_waitq_wake_one(&l->waiters, 0);
			if (l->count > l->max_pending && l->armed && !l->cancel_sent) {
				l->paused = true;
				l->cancel_sent = giong_op_cancel(l->op_id) == 0;
			}
			maybe_switch(l);
		}
	} else if (res != -ECANCELED && res != -EINTR && !connection_error(res)) {
		/* EMFILE and friends end the multishot: tell one acceptor; the
		 * next accept re-arms, so a full descriptor table does not spin. A
		 * stopped listener's socket is shut down: its accept ends so (EINVAL),
		 * which is no error for anyone. */
		if (l->stopped && !l->closing) {
			giong_waitq_wake_all(&l->waiters, 0);
		} else if (!l->closing) {
			l->err = res;
			giong_waitq_wake_one(&l->waiters, 0);
		} else {
			maybe_free(l);
		}
		return;
	}
	if (!l->armed) {
		if (l->closing)
			maybe_free(l);
		else if (l->stopped)
			giong_waitq_wake_all(&l->waiters, 0); /* the end: acceptors see it */
		else if (!l->paused)
			arm(l);
	}
}

static void arm(struct giong_listener *l)
{
	struct io_uring_sqe *sqe;
	bool direct;

	if (l->armed || l->closing || l->stopped)
		return;
	sqe = giong_sqe();
	if (!sqe)
		return;
	direct = want_direct(l);
	/* No address buffers: the kernel writes nothing into our memory; the
	 * listener itself (the callback's context) lives until the final CQE.
	 * Direct: each connection goes into a free slot of the worker's table
	 * (IORING_FILE_INDEX_ALLOC), its index the CQE's result; from then the
	 * slot is its stream's (sock.c) until the stream's close_direct
	 * completes, or the listener's if it is closed first (entry_close). */
	if (direct)
		io_uring_prep_multishot_accept_direct(sqe, l->fd, NULL, NULL, 0);
	else
		io_uring_prep_multishot_accept(sqe, l->fd, NULL, NULL, SOCK_CLOEXEC);
	if (giong_op_start(sqe, accept_cqe, l, &l->op_id) == 0) {
		l->armed = true;
		l->armed_direct = direct;
		l->armed_regular = !direct && l->direct && giong_direct_size() > 0;
	}
}

int giong__net_listener_new(int fd, bool is_unix, const char *unlink_path,
			    const struct giong_listen_options *opts, struct giong_listener **ret)
{
	struct giong_listener *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	l->fd = fd;
	l->owner = giong__owner_self();
	l->is_unix = is_unix;
	l->max_pending = opts && opts->max_pending ? opts->max_pending : 1024;
	/* Unix connections are few and their peers asked about (credentials):
	 * TCP only. */
	l->direct = !is_unix && !(opts && opts->regular_fds);
	giong_waitq_init(&l->waiters);
	if (unlink_path && !(l->unlink_path = strdup(unlink_path))) {
		free(l);
		return -ENOMEM;
	}
	l->addr.len = sizeof(l->addr.ss);
	if (getsockname(fd, (struct sockaddr *)&l->addr.ss, &l->addr.len))
		l->addr.len = 0;
	arm(l);
	*ret = l;
	return 0;
}

int giong_listener_from_fd(int fd, const struct giong_listen_options *opts,
			   struct giong_listener **ret)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(int), sl = sizeof(ss);
	int type = 0, listening = 0, r;

	if (!ret)
		return -EINVAL;
	*ret = NULL;
	if (fd < 0)
		return -EBADF;
	if (giong_worker_index() < 0)
		return GIONG_ENOTWORKER;
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len))
		return -errno; /* -EBADF, -ENOTSOCK */
	if (type != SOCK_STREAM)
		return -EINVAL;
	len = sizeof(listening);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len))
		return -errno;
	if (!listening)
		return -EINVAL;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl))
		return -errno;
	if (ss.ss_family != AF_INET && ss.ss_family != AF_INET6 && ss.ss_family != AF_UNIX)
		return -EAFNOSUPPORT;
	if (fcntl(fd, F_SETFD, FD_CLOEXEC))
		return -errno;
	/* A Unix socket file given to us is not ours to remove at close. */
	r = giong__net_listener_new(fd, ss.ss_family == AF_UNIX, NULL, opts, ret);
	if (r == 0)
		(*ret)->inherited = true;
	return r;
}

/*
 * The default backlog: the system's net.core.somaxconn, read once. The kernel
 * caps any backlog at it, so this is the deepest queue the system allows; a
 * fixed 1024 overflowed here when 5,000 clients connected at once (each
 * dropped SYN costs its client a one-second retransmit). Where the file
 * cannot be read (no /proc in a container), SOMAXCONN: the kernel's default
 * since 5.4 (4096), capped by the kernel as any other value.
 */
static int default_backlog(void)
{
	static int cached; /* 0: not read yet; races only read the same file twice */
	int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);

	if (!v) {
		char buf[24] = {0};
		int fd = open("/proc/sys/net/core/somaxconn", O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		long l = n > 0 ? strtol(buf, NULL, 10) : 0;

		if (fd >= 0)
			close(fd);
		v = l > 0 && l <= INT_MAX ? (int)l : SOMAXCONN;
		__atomic_store_n(&cached, v, __ATOMIC_RELAXED);
	}
	return v;
}

/* socket + options + bind + listen; returns the descriptor or -errno. */
int giong__net_listen_socket(const struct giong_addr *a, const struct giong_listen_options *opts)
{
	int one = 1, fd, family = a->ss.ss_family;
	int backlog = opts && opts->backlog > 0 ? opts->backlog : default_backlog();

	fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (family != AF_UNIX) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!(opts && opts->no_reuseport) &&
		    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)))
			goto fail;
		/* Accepted sockets inherit it: no call per connection. */
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (family == AF_INET6 && opts && opts->v6only)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	}
	if (bind(fd, (const struct sockaddr *)&a->ss, a->len) || listen(fd, backlog))
		goto fail;
	return fd;
fail:
	one = -errno;
	close(fd);
	return one;
}

int giong_listener_accept(struct giong_listener *l, struct giong_stream **ret)
{
	int fd, r;

	if (!l || !ret)
		return -EINVAL;
	*ret = NULL;
	if ((r = giong__owner_check(l->owner)))
		return r;
	if (l->closing)
		return -EBADF;
	/* Held until we leave: a task woken (by a connection or an error)
	 * runs later, and the listener may be closed before it does. */
	l->busy++;
	while (!l->count) {
		if (l->closing) {
			r = -EBADF;
			goto out;
		}
		if (l->err) {
			r = l->err;
			l->err = 0;
			goto out;
		}
		if (l->stopped && !l->armed) {
			r = -ESHUTDOWN; /* taken all, and the kernel's accept is over */
			goto out;
		}
		arm(l);
		/* Stopped, the wait is for the accept's last completions (a tick),
		 * which shutdown must not cut short: what they bring is the caller's. */
		r = giong_waitq_wait(&l->waiters, l->stopped ? 0 : GIONG_WAIT_SHUTDOWN);
		if (r < 0)
			goto out;
	}
	fd = fdq_pop(l);
	if (l->paused && l->count <= l->max_pending / 2) {
		l->paused = false;
		arm(l);
	}
	maybe_switch(l); /* the table may have room again */
	r = fd >= 0 ? giong__net_sock_new(fd, false,
					  l->is_unix ? &giong__net_unix_ops : &giong__net_tcp_ops,
					  ret)
		    : giong__net_sock_new(-2 - fd, true, &giong__net_tcp_ops, ret);
out:
	l->busy--;
	maybe_free(l);
	return r;
}

int giong_tcp_accept(struct giong_listener *l, struct giong_stream **ret)
{
	return giong_listener_accept(l, ret);
}

/* The address is a copy made when @l was: nothing else could change it, but
 * only the owner knows that @l is not being closed (and freed) meanwhile. */
int giong_listener_addr(const struct giong_listener *l, struct giong_addr *out)
{
	int r;

	if (!l || !out)
		return -EINVAL;
	if ((r = giong__owner_check(l->owner)))
		return r;
	*out = l->addr;
	return 0;
}

int giong_listener_pending(const struct giong_listener *l)
{
	int r;

	if (!l)
		return -EINVAL;
	/* The queue is the owner's: its count changes under any other thread. */
	if ((r = giong__owner_check(l->owner)))
		return r;
	return (int)l->count;
}

int giong_listener_stop(struct giong_listener *l)
{
	int r;

	if (!l)
		return -EINVAL;
	/* First: not even l->closing is read off the owner worker. */
	if ((r = giong__owner_check(l->owner)))
		return r;
	if (l->closing)
		return -EINVAL;
	if (l->stopped)
		return 0;
	l->stopped = true;
	/* A listening TCP socket shut down stops listening: it leaves its
	 * SO_REUSEPORT group, and what it had queued is reset or, with
	 * tcp_migrate_req, moved to another listener of the group; a Unix one
	 * refuses connects. The multishot accept then ends by itself; the
	 * cancel is for a socket the shutdown would not end it on. Not an
	 * inherited socket: systemd (or the other workers' dups) share it, and a
	 * shutdown would stop it for all of them, for good: the accept is only
	 * cancelled, and the socket goes on listening for its other owners. */
	if (!l->inherited)
		shutdown(l->fd, SHUT_RDWR);
	if (l->armed && !l->cancel_sent)
		l->cancel_sent = giong_op_cancel(l->op_id) == 0;
	if (!l->armed)
		giong_waitq_wake_all(&l->waiters, 0);
	return 0;
}

int giong_listener_close(struct giong_listener *l)
{
	int r;

	if (!l)
		return -EINVAL;
	if ((r = giong__owner_check(l->owner)))
		return r;
	if (l->closing)
		return -EINVAL;
	l->closing = true;
	/* Remove the socket file now, not when the kernel lets go of the
	 * socket: by then a new listener may have bound the same path. */
	if (l->unlink_path) {
		unlink(l->unlink_path);
		free(l->unlink_path);
		l->unlink_path = NULL;
	}
	while (l->count)
		entry_close(fdq_pop(l));
	giong_waitq_wake_all(&l->waiters, -EBADF);
	/* The listening socket stays open in the kernel until the cancelled
	 * multishot accept lets go of it. Closed through the ring, after the
	 * SQEs queued before it: close(2) here would free the number while the
	 * accept (or its cancel) still waits unsubmitted in the SQ, and a socket
	 * opened meanwhile with that number (the next listener) would be the one
	 * the stale accept took, never to be answered (net.tcp's IPv6 case, on
	 * every tier, under load). */
	giong_close_nowait(l->fd);
	if (l->armed) {
		if (!l->cancel_sent) {
			l->cancel_sent = giong_op_cancel(l->op_id) == 0;
		}
		return 0; /* freed by the final CQE (or the last acceptor) */
	}
	maybe_free(l); /* or by the last task to leave accept */
	return 0;
}
