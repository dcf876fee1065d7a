/* SPDX-License-Identifier: MIT */
/*
 * giong/net/tcp.h - TCP listeners and connections.
 *
 * Each worker binds its own listener on the same port (SO_REUSEPORT) and
 * the kernel spreads connections across them. A listener keeps one
 * multishot accept in the kernel for its whole life; accepted connections
 * wait in the listener's queue until giong_tcp_accept() takes them, so a
 * timeout or a cancellation around accept never loses a connection. When
 * the queue holds more than max_pending connections, accepting pauses (the
 * kernel's backlog then slows new clients) until it drains below half.
 *
 * Direct descriptors. Where the runtime was given a table
 * (giong_config.direct_files; none by default), on the io_uring tiers, a TCP
 * listener accepts into the worker's table of direct descriptors
 * (giong/core/direct.h): the kernel
 * puts each connection in a free slot of the ring's file table
 * (IORING_FILE_INDEX_ALLOC) and it never gets a descriptor in the process.
 * Its receives, sends, shutdown, cancels and close name the slot
 * (IOSQE_FIXED_FILE), which saves the kernel a descriptor lookup and
 * reference per operation and the process a descriptor per connection.
 * Nothing changes for the stream's user, but for what needs a descriptor:
 *  - giong_stream_fd() (and GIONG_STREAM_QUERY_SOCKET) gives -EOPNOTSUPP
 *    (which is -ENOTSUP on Linux), and so giong_stream_peer_addr() and
 *    giong_stream_local_addr(): Linux has no call that gives a slot's
 *    socket a descriptor, nor its addresses, before 6.8; from 6.8
 *    giong_stream_fd_install() gives it one (an operation on the ring: it
 *    may suspend), and the stream is a regular one from then on;
 *  - giong_stream_splice_fd() gives -ENOENT: bytes are written through the
 *    stream (HTTP then copies a file body instead of splicing it);
 *  - giong_tcp_set_nodelay() gives -EOPNOTSUPP; a listener of
 *    giong_tcp_listen() sets TCP_NODELAY on its connections already.
 * A listener whose connections need a descriptor asks for regular ones
 * (giong_listen_options.regular_fds): its connections are as before. Unix
 * listeners and connect always make regular descriptors, and so do workers
 * without a table (the epoll tier, a kernel that refuses one or releases
 * closed slots late - before 6.13 -, the table turned off).
 * A full table is no error: when no more than a sixteenth of it (1 to 64
 * slots) is free, the listener accepts regular descriptors, each counted in
 * giong_stats.direct_fallbacks, and goes back to direct ones once twice
 * that is free. The margin is for bursts the kernel accepts before the
 * worker reaps them: should one still find the table full, that connection
 * is lost (the kernel closes it: -ENFILE), and the listener accepts regular
 * descriptors from then on.
 */
#ifndef GIONG_NET_TCP_H
#define GIONG_NET_TCP_H

#include <stdbool.h>

#include <giong/core/api.h>
#include <giong/net/addr.h>
#include <giong/net/stream.h>

GIONG_BEGIN_DECLS

struct giong_listener;

/* Listener settings. Zero fields take the defaults. */
struct giong_listen_options {
	/* listen(2) backlog: connections the kernel has completed that no
	 * accept has taken yet. Default: the system's net.core.somaxconn
	 * (read once; SOMAXCONN where /proc is missing). The kernel caps any
	 * larger value at somaxconn. */
	int backlog;
	unsigned max_pending; /* accepted but not yet taken; default 1024 */
	bool no_reuseport;    /* do not set SO_REUSEPORT (default: set) */
	bool v6only;          /* IPv6 sockets accept IPv6 only */
	/* Accept TCP connections as regular descriptors, never into the
	 * worker's direct table (see Direct descriptors above); for
	 * connections whose descriptor is needed: giong_stream_fd(), peer and
	 * local addresses, setsockopt, a socket handed to another library.
	 * Default false: direct where the worker has a table. */
	bool regular_fds;
};

/*
 * giong_tcp_listen() - listen on @addr ("host:port" text, see addr.h; port 0
 * picks a free one, see giong_listener_addr()). @opts may be NULL.
 * Returns 0 and an owned listener in *@ret (free with
 * giong_listener_close()), or -errno: -EINVAL (bad text or options),
 * -EADDRINUSE, -EACCES, GIONG_ENOTWORKER. Owner worker only.
 */
GIONG_API int giong_tcp_listen(const char *addr, const struct giong_listen_options *opts,
			       struct giong_listener **ret);

/*
 * giong_listener_from_fd() - a listener on @fd, a stream socket that is
 * listening already (TCP over IPv4 or IPv6, or Unix): one handed in by
 * systemd's socket activation (LISTEN_FDS, from descriptor 3), or by a
 * parent process. Takes ownership of @fd on success (giong_listener_close()
 * closes it; FD_CLOEXEC is set); on failure @fd stays the caller's. To serve
 * one inherited socket from several workers, give each its own dup(2): the
 * kernel spreads connections over their accepts. @opts may be NULL (only
 * max_pending and regular_fds apply: the socket is bound and listening
 * already). Returns
 * 0 and an owned listener in *@ret, or -EBADF (a negative or closed @fd),
 * -ENOTSOCK, -EINVAL (not a stream socket, or not listening; NULL @ret),
 * -EAFNOSUPPORT (another family), -ENOMEM, GIONG_ENOTWORKER. Owner worker
 * only.
 */
GIONG_API int giong_listener_from_fd(int fd, const struct giong_listen_options *opts,
				     struct giong_listener **ret);

/* giong_tcp_listen_addr() - the same from a struct giong_addr. */
GIONG_API int giong_tcp_listen_addr(const struct giong_addr *addr,
				    const struct giong_listen_options *opts,
				    struct giong_listener **ret);

/*
 * giong_listener_accept() - take the next connection of @l (TCP or Unix),
 * parking until one arrives. Returns 0 and an owned stream in *@ret (free
 * with giong_stream_close()), GIONG_ESHUTDOWN once the runtime shuts down,
 * -ECANCELED, -ETIMEDOUT (no connection is lost), -EMFILE and friends when
 * the kernel could not accept (the next call accepts again), -EBADF once
 * @l is closed, -ESHUTDOWN once it was stopped and nothing is left
 * (giong_listener_stop(); what was accepted before comes first, also after
 * GIONG_ESHUTDOWN), -EINVAL, GIONG_ENOTWORKER (not on a worker) or -EPERM (on
 * another worker than @l's). A new connection's own network errors, which
 * accept(2) passes on (ECONNABORTED, EPROTO, ENETDOWN, EHOSTUNREACH, a
 * firewall's EPERM, ...), are not returned: that connection is dropped and
 * the wait goes on. May suspend. Owner worker only.
 */
GIONG_API int giong_listener_accept(struct giong_listener *l, struct giong_stream **ret);

/* giong_tcp_accept() - giong_listener_accept(), named for the common case. */
GIONG_API int giong_tcp_accept(struct giong_listener *l, struct giong_stream **ret);

/* giong_listener_addr() - the bound address (with the port the kernel chose
 * for port 0). Returns 0, -EINVAL, or GIONG_ENOTWORKER (not on a worker) /
 * -EPERM (on another worker than @l's): then *@out is untouched. Does not
 * suspend. Owner worker only. */
GIONG_API int giong_listener_addr(const struct giong_listener *l, struct giong_addr *out);

/*
 * giong_listener_stop() - stop accepting on @l, keeping what was accepted: the
 * listening socket is shut down (shutdown(2)), so the kernel takes no new
 * connection on it - with SO_REUSEPORT it sends them to the other listeners of
 * the port, and with net.ipv4.tcp_migrate_req = 1 (Linux 5.14+) it moves
 * there the ones queued but not yet accepted too - and the multishot accept
 * ends. Connections accepted before are still returned by
 * giong_listener_accept(), which returns -ESHUTDOWN once they are taken and
 * the accept has ended. For a graceful stop of one process among several on
 * a port (a restart): stop, take what is left, serve it, close. The
 * descriptor stays @l's until giong_listener_close(). A listener made by
 * giong_listener_from_fd() is not shut down - its socket is shared (with
 * systemd, or the other workers' dups) and a shutdown would end it for all
 * of them -: its accept is cancelled and the socket goes on listening, the
 * kernel queueing new connections for its other owners. Returns 0 (also when
 * stopped already), -EINVAL (NULL, closed), GIONG_ENOTWORKER or -EPERM (not
 * @l's worker). Does not suspend. Owner worker only.
 */
GIONG_API int giong_listener_stop(struct giong_listener *l);

/* giong_listener_pending() - connections accepted and waiting, or -EINVAL,
 * GIONG_ENOTWORKER (not on a worker) / -EPERM (on another worker than
 * @l's). Does not suspend. Owner worker only. */
GIONG_API int giong_listener_pending(const struct giong_listener *l);

/*
 * giong_listener_close() - stop listening and free @l (takes ownership).
 * Connections still queued are closed; tasks parked in accept, or woken
 * and not yet run, return -EBADF (@l is freed once the last has left).
 * Returns 0, -EINVAL (NULL), or GIONG_ENOTWORKER (not on a worker) / -EPERM
 * (on another worker): then nothing was done and the caller still owns @l.
 * Closing twice is undefined: the first close may free @l at once. Does not
 * suspend. Owner worker only.
 */
GIONG_API int giong_listener_close(struct giong_listener *l);

/*
 * giong_tcp_connect() - connect to @addr ("host:port", "[v6]:port"). A host
 * name is resolved with giong_resolve() (without blocking the worker when
 * built with c-ares; see resolve.h), and its addresses (up to 8, both
 * families, taking turns) are raced as RFC 8305 (Happy Eyeballs) says: a
 * try every 250 ms or as soon as the earlier ones failed, the first to
 * connect wins, the others are cancelled. The task's deadline covers the
 * lookup and every try.
 * Returns 0 and an owned stream in *@ret, or -errno: the last try's
 * (-ECONNREFUSED, -ENETUNREACH, ...), -ETIMEDOUT (deadline), -ECANCELED,
 * -EINVAL, -ENOMEM, GIONG_ENOTWORKER (a name with several addresses,
 * outside a task), or giong_resolve()'s (-EHOSTUNREACH: no such name).
 * May suspend. Owner worker only.
 */
GIONG_API int giong_tcp_connect(const char *addr, struct giong_stream **ret);

/* giong_tcp_connect_addr() - the same from a struct giong_addr. */
GIONG_API int giong_tcp_connect_addr(const struct giong_addr *addr, struct giong_stream **ret);

/*
 * giong_tcp_set_nodelay() - TCP_NODELAY on or off on the TCP socket beneath
 * @s: @s itself, or the first socket stream down its stack (TLS over TCP,
 * see Stacking in stream.h). Returns 0, -EINVAL (NULL @s, or a stream in the
 * stack with no table), -ENOTSUP (the socket beneath is not TCP, or there is
 * none), -ELOOP, GIONG_ENOTWORKER (not on a worker) / -EPERM (on another
 * worker than the socket's: nothing set), or -errno of setsockopt(2). Does
 * not suspend. Owner worker only.
 */
GIONG_API int giong_tcp_set_nodelay(struct giong_stream *s, bool on);

/* giong_stream_peer_addr() and giong_stream_local_addr() are declared in
 * <giong/net/stream.h>: they work on any stream over a socket. */

GIONG_END_DECLS

#endif /* GIONG_NET_TCP_H */
