/* SPDX-License-Identifier: MIT */
/*
 * udp.c - UDP sockets on the core runtime.
 *
 * Two ways in:
 *
 * - giong_udp_recv_from()/recv(): the socket's receive queue (rxq.c) keeps
 *   one multishot IORING_OP_RECVMSG armed, filling the worker's pool
 *   buffers. Each queued buffer holds the kernel's raw layout:
 *
 *       struct io_uring_recvmsg_out | name (msg_namelen bytes) | payload
 *
 *   (no control data: the socket's msghdr asks for none). The header and name
 *   are parsed when a datagram is taken, then consumed so that the caller's
 *   buffer points at the payload. A timeout or cancellation around the wait
 *   never touches the kernel operation, so no datagram is lost.
 *
 * - giong_udp_read_from()/read(): one one-shot IORING_OP_RECVMSG straight
 *   into the caller's buffer, as long as recv_from() was never used on the
 *   socket. Once it was, the multishot is armed (or will be re-armed) and
 *   owns the socket's incoming datagrams: a one-shot recvmsg next to it
 *   would take datagrams in an order nobody could predict. read_from() then
 *   takes the oldest queued datagram instead, copies it into the caller's
 *   buffer and gives the pool buffer back. Either way a datagram is
 *   delivered exactly once and in order. (A one-shot read_from() already
 *   parked when recv_from() is first called still takes the next datagram
 *   the kernel gives it; do not start both at once on one socket.)
 *
 * Sends are one-shot IORING_OP_SENDMSG (with an address) or IORING_OP_SEND
 * (connected) through giong_io(). UDP needs no round trip to connect, so
 * giong_udp_connect() calls connect(2) directly.
 *
 * Closing: giong__net_rxq_close() gives back what is queued and cancels the
 * multishot; the struct is freed, and the descriptor closed, from the rxq's
 * on_free callback once the kernel confirms the multishot is over (maybe at
 * once). The descriptor is not closed earlier because closing it would not
 * end the multishot (the operation holds its own file reference) and the
 * port would stay bound in a half-closed state. Close a socket only when no
 * other task is using it: the struct may be freed at once.
 */
#include <errno.h>
#include <limits.h>
#include <liburing.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <giong/core.h>
#include <giong/net/addr.h>
#include <giong/net/udp.h>

#include "giong_private.h"
#include "owner.h"
#include "rxq.h"

/* Memory the kernel filled through the ring is invisible to valgrind, which
 * would call it uninitialised; tell it (GIONG_VALGRIND builds only). */
#ifdef GIONG_VALGRIND
#include <valgrind/memcheck.h>
#define KERNEL_WROTE(p, n) VALGRIND_MAKE_MEM_DEFINED((p), (n))
#else
#define KERNEL_WROTE(p, n) ((void)0)
#endif

#define UDP_DEFAULT_MAX_QUEUED 256

struct giong_udp {
	struct giong__rxq q; /* the rxq's callbacks get &u->q */
	/* Lent to the kernel while the recvmsg multishot is armed, until
	 * udp_on_free: only its name and control lengths are read, for the
	 * buffer layout. Here, not in the rxq: streams need none. */
	struct msghdr mh;
	/* udp_rxq_ops with this socket's bound (max_queued): q's table. */
	struct giong__rxq_ops ops;
	int fd;
	pthread_t owner; /* the worker's thread (owner.h) */
	bool multishot;  /* recv_from() was used: datagrams come through q */
};

/* The header and name of a queued datagram, copied out of the buffer so that
 * an odd pool buffer size can never make the parse read unaligned. */
struct udp_hdr {
	struct io_uring_recvmsg_out out;
	struct sockaddr_storage name;
};

/* --------------------------------------------------------------- addresses */

/* A giong_addr a caller handed us: IPv4 or IPv6, of a sane length. */
static bool addr_ok(const struct giong_addr *a)
{
	if (!a || a->len < sizeof(sa_family_t) || a->len > sizeof(a->ss))
		return false;
	if (a->ss.ss_family == AF_INET)
		return a->len >= sizeof(struct sockaddr_in);
	if (a->ss.ss_family == AF_INET6)
		return a->len >= sizeof(struct sockaddr_in6);
	return false;
}

/* ------------------------------------------------------------ the socket */

static void udp_on_free(struct giong__rxq *q)
{
	struct giong_udp *u = giong__container_of(q, struct giong_udp, q);

	/* The kernel is done with q (and u->mh): the multishot is over. */
	close(u->fd);
	free(u);
}

static struct msghdr *udp_msghdr(struct giong__rxq *q)
{
	return &giong__container_of(q, struct giong_udp, q)->mh;
}

/* max_bytes 0: datagrams are bounded by count; each is one buffer. */
static const struct giong__rxq_ops udp_rxq_ops = {
	.on_free = udp_on_free,
	.msghdr = udp_msghdr,
	.max_items = UDP_DEFAULT_MAX_QUEUED,
};

static int set_opt(int fd, int level, int name, int on)
{
	return setsockopt(fd, level, name, &on, sizeof(on)) ? -errno : 0;
}

static int udp_socket(const struct giong_addr *a, const struct giong_udp_options *o)
{
	int fd, err = 0;

	/* No O_NONBLOCK: the descriptor is only ever read and written
	 * through the ring, which polls it and never blocks the worker. */
	fd = socket(a->ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (o && o->reuseport)
		err = set_opt(fd, SOL_SOCKET, SO_REUSEPORT, 1);
	if (!err && o && o->broadcast)
		err = set_opt(fd, SOL_SOCKET, SO_BROADCAST, 1);
	if (!err && a->ss.ss_family == AF_INET6)
		err = set_opt(fd, IPPROTO_IPV6, IPV6_V6ONLY, o && o->v6only);
	if (!err && bind(fd, (const struct sockaddr *)&a->ss, a->len))
		err = -errno;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int giong_udp_bind(const char *addr, const struct giong_udp_options *opts, struct giong_udp **ret)
{
	struct giong_addr a;
	struct giong_udp *u;
	int fd;

	if (!ret)
		return -EINVAL;
	*ret = NULL;
	if (!addr || giong_addr_parse(addr, &a))
		return -EINVAL;
	if (giong_worker_index() < 0)
		return GIONG_ENOTWORKER;
	fd = udp_socket(&a, opts);
	if (fd < 0)
		return fd;
	u = calloc(1, sizeof(*u));
	if (!u) {
		close(fd);
		return -ENOMEM;
	}
	u->fd = fd;
	u->owner = giong__owner_self();
	u->mh.msg_namelen = sizeof(struct sockaddr_storage);
	u->ops = udp_rxq_ops;
	if (opts && opts->max_queued)
		u->ops.max_items = opts->max_queued;
	giong__net_rxq_init(&u->q, fd, &u->ops);
	*ret = u;
	return 0;
}

int giong_udp_connect(struct giong_udp *u, const char *addr)
{
	struct giong_addr a;
	int r;

	if (!u || !addr || giong_addr_parse(addr, &a))
		return -EINVAL;
	if ((r = giong__owner_check(u->owner)))
		return r;
	/* UDP connect(2) only records the peer: no packet, no waiting. */
	if (connect(u->fd, (const struct sockaddr *)&a.ss, a.len))
		return -errno;
	return 0;
}

int giong_udp_local_addr(const struct giong_udp *u, struct giong_addr *out)
{
	int r;

	if (!u || !out)
		return -EINVAL;
	if ((r = giong__owner_check(u->owner)))
		return r;
	memset(out, 0, sizeof(*out));
	out->len = sizeof(out->ss);
	if (getsockname(u->fd, (struct sockaddr *)&out->ss, &out->len))
		return -errno;
	return 0;
}

long giong_udp_max_payload(void)
{
	long size = giong_bufpool_size();

	if (size < 0)
		return size;
	size -= (long)(sizeof(struct io_uring_recvmsg_out) + sizeof(struct sockaddr_storage));
	return size > 0 ? size : 0;
}

int giong_udp_close(struct giong_udp *u)
{
	int r;

	if (!u)
		return -EINVAL;
	/* Off the owner worker nothing could be cancelled or woken safely. */
	if ((r = giong__owner_check(u->owner)))
		return r;
	/* Releases what is queued, cancels the multishot, and calls
	 * udp_on_free() now or once the kernel confirms. */
	giong__net_rxq_close(&u->q);
	return 0;
}

/* ------------------------------------------------------------- receiving */

/*
 * Take the oldest queued datagram: parse the kernel's header, store the
 * source and flags, and consume header and name so that the buffer's data
 * is the payload. Returns the payload length and the owned buffer in *@ret,
 * or -EIO (a header the kernel would never write; the buffer is released).
 */
static ssize_t take_datagram(struct giong_udp *u, struct giong_recvbuf **ret,
			     struct giong_addr *from, unsigned *flags)
{
	struct giong_recvbuf *b = giong__net_rxq_pop(&u->q);
	size_t len = giong_recvbuf_len(b);
	struct io_uring_recvmsg_out *o;
	struct udp_hdr h;
	size_t off, plen;

	memcpy(&h, giong_recvbuf_data(b), len < sizeof(h) ? len : sizeof(h));
	o = io_uring_recvmsg_validate(&h, (int)len, &u->mh);
	if (!o) {
		giong_recvbuf_release(b);
		return -EIO;
	}
	off = (size_t)((char *)io_uring_recvmsg_payload(o, &u->mh) - (char *)&h);
	plen = io_uring_recvmsg_payload_length(o, (int)len, &u->mh);
	if (from) {
		socklen_t nl = o->namelen;

		if (nl > u->mh.msg_namelen)
			nl = u->mh.msg_namelen; /* cut by the kernel: keep what fit */
		memset(from, 0, sizeof(*from));
		memcpy(&from->ss, io_uring_recvmsg_name(o), nl);
		from->len = nl;
	}
	if (flags)
		*flags = (o->flags & MSG_TRUNC) ? GIONG_UDP_TRUNCATED : 0;
	giong_recvbuf_consume(b, off);
	*ret = b;
	return (ssize_t)plen;
}

ssize_t giong_udp_recv_from(struct giong_udp *u, struct giong_recvbuf **ret,
			    struct giong_addr *from, unsigned *flags)
{
	int r;

	if (!ret)
		return -EINVAL;
	*ret = NULL;
	if (!u)
		return -EINVAL;
	if (flags)
		*flags = 0;
	if ((r = giong__owner_check(u->owner)))
		return r;
	u->multishot = true; /* from now on every datagram comes through q */
	r = giong__net_rxq_wait(&u->q, GIONG_WAIT_SHUTDOWN);
	if (r < 0)
		return r;
	return take_datagram(u, ret, from, flags);
}

ssize_t giong_udp_recv(struct giong_udp *u, struct giong_recvbuf **ret, unsigned *flags)
{
	return giong_udp_recv_from(u, ret, NULL, flags);
}

/* read_from() once recv_from() was used: take from the queue, copy out. */
static ssize_t read_queued(struct giong_udp *u, void *buf, size_t len, struct giong_addr *from,
			   unsigned *flags)
{
	struct giong_recvbuf *b;
	unsigned f = 0;
	ssize_t n;
	int r;

	r = giong__net_rxq_wait(&u->q, 0);
	if (r < 0)
		return r;
	n = take_datagram(u, &b, from, &f);
	if (n < 0)
		return n;
	if ((size_t)n > len) {
		n = (ssize_t)len;
		f |= GIONG_UDP_TRUNCATED;
	}
	memcpy(buf, giong_recvbuf_data(b), (size_t)n);
	giong_recvbuf_release(b);
	if (flags)
		*flags = f;
	return n;
}

ssize_t giong_udp_read_from(struct giong_udp *u, void *buf, size_t len, struct giong_addr *from,
			    unsigned *flags)
{
	struct sockaddr_storage ss;
	struct io_uring_sqe *sqe;
	struct iovec iov;
	struct msghdr mh;
	int r;

	if (flags)
		*flags = 0;
	if (!u || !buf || !len)
		return -EINVAL;
	if ((r = giong__owner_check(u->owner)))
		return r;
	if (u->multishot)
		return read_queued(u, buf, len, from, flags);
	sqe = giong_sqe();
	if (!sqe)
		return -EBUSY;
	memset(&mh, 0, sizeof(mh));
	iov.iov_base = buf;
	iov.iov_len = len;
	mh.msg_name = &ss;
	mh.msg_namelen = sizeof(ss);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	/* Lent to the kernel until giong_io() returns, which it does only after
	 * the final CQE (also when cancelled or timed out): mh, iov and ss live
	 * on this task's stack frame, buf is the caller's (borrowed). The kernel
	 * writes the datagram to buf, the source to ss, and msg_namelen and
	 * msg_flags back into mh. MSG_TRUNC: the result is the datagram's real
	 * length even when it was cut, which tells us it was. */
	io_uring_prep_recvmsg(sqe, u->fd, &mh, MSG_TRUNC);
	r = giong_io(sqe);
	if (r < 0)
		return r;
	KERNEL_WROTE(buf, (size_t)r < len ? (size_t)r : len);
	KERNEL_WROTE(&ss, mh.msg_namelen <= sizeof(ss) ? mh.msg_namelen : sizeof(ss));
	if ((size_t)r > len || (mh.msg_flags & MSG_TRUNC)) {
		if (flags)
			*flags = GIONG_UDP_TRUNCATED;
		if ((size_t)r > len)
			r = (int)len;
	}
	if (from) {
		memset(from, 0, sizeof(*from));
		memcpy(&from->ss, &ss, mh.msg_namelen <= sizeof(ss) ? mh.msg_namelen : sizeof(ss));
		from->len = mh.msg_namelen <= sizeof(ss) ? mh.msg_namelen : sizeof(ss);
	}
	return r;
}

ssize_t giong_udp_read(struct giong_udp *u, void *buf, size_t len, unsigned *flags)
{
	return giong_udp_read_from(u, buf, len, NULL, flags);
}

/* --------------------------------------------------------------- sending */

ssize_t giong_udp_send_to(struct giong_udp *u, const void *buf, size_t len,
			  const struct giong_addr *to)
{
	struct io_uring_sqe *sqe;
	struct iovec iov;
	struct msghdr mh;
	int r;

	if (!u || (!buf && len) || !addr_ok(to))
		return -EINVAL;
	if ((r = giong__owner_check(u->owner)))
		return r;
	sqe = giong_sqe();
	if (!sqe)
		return -EBUSY;
	memset(&mh, 0, sizeof(mh));
	iov.iov_base = (void *)buf;
	iov.iov_len = len;
	mh.msg_name = (void *)&to->ss;
	mh.msg_namelen = to->len;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	/* Lent to the kernel until giong_io() returns (after the final CQE):
	 * mh and iov on this task's stack frame; buf and *to are the caller's
	 * (borrowed), only read. */
	io_uring_prep_sendmsg(sqe, u->fd, &mh, 0);
	return giong_io(sqe);
}

ssize_t giong_udp_send(struct giong_udp *u, const void *buf, size_t len)
{
	struct io_uring_sqe *sqe;
	int r;

	if (!u || (!buf && len))
		return -EINVAL;
	if ((r = giong__owner_check(u->owner)))
		return r;
	sqe = giong_sqe();
	if (!sqe)
		return -EBUSY;
	/* buf is the caller's (borrowed), read by the kernel until giong_io()
	 * returns. Not connected: the kernel answers -EDESTADDRREQ. The length
	 * is 32 bits in the SQE: 4 GiB + 10 would send 10 bytes; above INT_MAX
	 * the kernel refuses the datagram (-EMSGSIZE) as it should. */
	io_uring_prep_send(sqe, u->fd, buf, len > INT_MAX ? INT_MAX : (unsigned)len, 0);
	return giong_io(sqe);
}
