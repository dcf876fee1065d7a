/* SPDX-License-Identifier: MIT */
/*
 * giong/net/udp.h - UDP sockets.
 *
 * giong_udp_recv_from() keeps one multishot recvmsg in the kernel that
 * fills the worker's pool buffers; datagrams wait on the socket until taken,
 * so a timeout around it loses none. Each pool buffer holds the kernel's
 * recvmsg header and the source address before the payload, so the largest
 * payload received whole is giong_udp_max_payload(); a longer datagram is
 * cut there and reported with GIONG_UDP_TRUNCATED. giong_udp_read_from()
 * reads one datagram straight into the caller's buffer instead.
 */
#ifndef GIONG_NET_UDP_H
#define GIONG_NET_UDP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <giong/core/api.h>
#include <giong/net/addr.h>

GIONG_BEGIN_DECLS

struct giong_udp;
struct giong_recvbuf;

/* Flags of a received datagram. */
enum {
	GIONG_UDP_TRUNCATED = 1u << 0, /* longer than the buffer: the tail was cut */
};

/* Socket settings. Zero fields take the defaults. */
struct giong_udp_options {
	bool reuseport; /* SO_REUSEPORT: several workers bind one port */
	bool broadcast; /* SO_BROADCAST */
	bool v6only;
	unsigned max_queued; /* datagrams waiting before the multishot receive pauses (the
			      * kernel's socket buffer then holds, and drops, the rest);
			      * default 256 */
};

/*
 * giong_udp_bind() - a UDP socket bound to @addr ("host:port"; port 0 picks
 * one). @opts may be NULL. Returns 0 and an owned socket in *@ret (free with
 * giong_udp_close()), or -errno (-EINVAL, -EADDRINUSE, GIONG_ENOTWORKER)
 * with *@ret NULL. The socket belongs to the calling worker: every function
 * that takes it (receive, read, send, connect, local_addr, close) called on
 * any other thread touches nothing and returns GIONG_ENOTWORKER (not a
 * worker) or -EPERM (another worker).
 */
GIONG_API int giong_udp_bind(const char *addr, const struct giong_udp_options *opts,
			     struct giong_udp **ret);

/* giong_udp_connect() - fix the peer (connect(2)): send() and recv() then
 * talk to it only. Returns 0 or -errno: -EINVAL (NULL, or @addr not numeric
 * "host:port"), connect(2)'s, GIONG_ENOTWORKER / -EPERM (not this socket's
 * worker: nothing done). Does not suspend. Owner worker only. */
GIONG_API int giong_udp_connect(struct giong_udp *u, const char *addr);

/*
 * giong_udp_recv_from() - wait for a datagram and borrow the pool buffer
 * holding it (data points at the payload). Returns the payload length (>= 0;
 * 0 is an empty datagram) with an owned buffer in *@ret (release with
 * giong_recvbuf_release()), the source in *@from if non-NULL, and
 * GIONG_UDP_* flags in *@flags if non-NULL; or -errno (-ETIMEDOUT,
 * -ECANCELED: nothing is lost), GIONG_ESHUTDOWN once the runtime shuts down
 * and nothing is queued, or an error the kernel reported for the socket
 * (such as -ECONNREFUSED on a connected socket), once; -ENOMEM, once, when
 * a datagram arrived that could not be queued (it is lost, as UDP may lose
 * one; receiving goes on); GIONG_ENOTWORKER / -EPERM off the owner worker.
 * May suspend. Owner worker only.
 */
GIONG_API ssize_t giong_udp_recv_from(struct giong_udp *u, struct giong_recvbuf **ret,
				      struct giong_addr *from, unsigned *flags);

/* giong_udp_recv() - giong_udp_recv_from() without the source. */
GIONG_API ssize_t giong_udp_recv(struct giong_udp *u, struct giong_recvbuf **ret, unsigned *flags);

/*
 * giong_udp_read_from() - receive one datagram into @buf (one-shot recvmsg;
 * @buf is lent to the kernel until this returns). Returns its length (cut to
 * @len: then *@flags has GIONG_UDP_TRUNCATED), or -errno; on -ETIMEDOUT no
 * datagram was taken. May suspend. Owner worker only.
 */
GIONG_API ssize_t giong_udp_read_from(struct giong_udp *u, void *buf, size_t len,
				      struct giong_addr *from, unsigned *flags);

/* giong_udp_read() - giong_udp_read_from() without the source. */
GIONG_API ssize_t giong_udp_read(struct giong_udp *u, void *buf, size_t len, unsigned *flags);

/* giong_udp_send_to() - send one datagram to @to. Returns the bytes sent or
 * -errno (-EMSGSIZE, -EACCES for broadcast without the option). May suspend.
 * Owner worker only. */
GIONG_API ssize_t giong_udp_send_to(struct giong_udp *u, const void *buf, size_t len,
				    const struct giong_addr *to);

/* giong_udp_send() - send one datagram to the connected peer. Returns the
 * bytes sent or -errno: -EINVAL (NULL, or @buf NULL with @len), -EDESTADDRREQ
 * (not connected), -EMSGSIZE, -EBUSY, GIONG_ENOTWORKER / -EPERM (not this
 * socket's worker). May suspend. Owner worker only. */
GIONG_API ssize_t giong_udp_send(struct giong_udp *u, const void *buf, size_t len);

/* giong_udp_local_addr() - the bound address. Returns 0 or -errno: -EINVAL,
 * getsockname(2)'s, GIONG_ENOTWORKER / -EPERM (not this socket's worker:
 * *@out untouched). Does not suspend. Owner worker only. */
GIONG_API int giong_udp_local_addr(const struct giong_udp *u, struct giong_addr *out);

/* giong_udp_max_payload() - the largest payload a pool buffer of the calling
 * worker holds whole, or GIONG_ENOTWORKER. */
GIONG_API long giong_udp_max_payload(void);

/* giong_udp_close() - close and free @u (takes ownership); its multishot
 * receive is cancelled and its memory freed once the kernel confirms. No
 * other task may be using @u (it may be freed at once). Returns 0, -EINVAL,
 * or GIONG_ENOTWORKER (not on a worker) / -EPERM (on another worker): then
 * nothing was done and the caller still owns @u. Owner worker only. */
GIONG_API int giong_udp_close(struct giong_udp *u);

GIONG_END_DECLS

#endif /* GIONG_NET_UDP_H */
