/* SPDX-License-Identifier: MIT */
/* ktls.c - kernel TLS on a TCP socket stream (giong/net/ktls.h): the set-up, and the
 * records of another type than application data. */
#include <errno.h>
#include <limits.h>
#include <linux/tls.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <giong/net/ktls.h>

#include "giong_private.h"
#include "sock.h"

#ifndef SOL_TLS
#define SOL_TLS 282 /* <bits/socket.h> since glibc 2.27 */
#endif

/* The kernel takes one record of at most 2^14 bytes of plaintext. */
#define RECORD_MAX 16384

/* Whether @len is the size of one of the crypto_info structures of <linux/tls.h>
 * for the cipher it names. */
static bool info_fits(const void *info, size_t len)
{
	struct tls_crypto_info ci;

	if (len < sizeof(ci))
		return false;
	memcpy(&ci, info, sizeof(ci));
	switch (ci.cipher_type) {
	case TLS_CIPHER_AES_GCM_128:
		return len == sizeof(struct tls12_crypto_info_aes_gcm_128);
	case TLS_CIPHER_AES_GCM_256:
		return len == sizeof(struct tls12_crypto_info_aes_gcm_256);
#ifdef TLS_CIPHER_CHACHA20_POLY1305
	case TLS_CIPHER_CHACHA20_POLY1305:
		return len == sizeof(struct tls12_crypto_info_chacha20_poly1305);
#endif
	default:
		return false;
	}
}

int giong_ktls_probe(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), a = -1, r;

	if (l < 0 || c < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&sa, &sl) ||
	    connect(c, (struct sockaddr *)&sa, sizeof(sa)) ||
	    (a = accept4(l, NULL, NULL, SOCK_CLOEXEC)) < 0)
		r = -errno;
	else /* TCP_ULP takes only a connected socket */
		r = setsockopt(a, SOL_TCP, TCP_ULP, "tls", sizeof("tls")) ? -errno : 0;
	if (a >= 0)
		close(a);
	if (c >= 0)
		close(c);
	if (l >= 0)
		close(l);
	return r;
}

/* The TCP socket beneath @st, entered (leave it with giong__net_sock_leave()). */
static int tcp_beneath(struct giong_stream *st, struct giong__sock **ret)
{
	struct giong__sock *s;
	int r;

	if ((r = giong__net_bottom_sock(st, &s)))
		return r;
	if (s->base.ops != &giong__net_tcp_ops)
		return -ENOTSUP; /* a Unix stream: kernel TLS is TCP's */
	if ((r = giong__net_sock_enter(s)))
		return r;
	*ret = s;
	return 0;
}

/* Attach the `tls` ULP to @fd once, then set direction @opt (TLS_TX, TLS_RX). */
static int set_crypto(struct giong__sock *s, int fd, int opt, const void *info, size_t len)
{
	static const char ulp[] = "tls";

	if (!s->ktls_ulp) {
		if (setsockopt(fd, SOL_TCP, TCP_ULP, ulp, sizeof(ulp)) < 0)
			return -errno; /* ENOENT: no tls module; ENOPROTOOPT: no ULP at all */
		s->ktls_ulp = true;
	}
	/* On failure the ULP stays attached in its base mode, where the socket is
	 * plain TCP (and a later direction may still be set): TLS goes on in user
	 * space over it. */
	return setsockopt(fd, SOL_TLS, opt, info, (socklen_t)len) < 0 ? -errno : 0;
}

/*
 * The receive direction. Every byte the socket has received so far must have gone
 * to the TLS library, and the kernel must start at the record after them: so the
 * multishot receive, which takes bytes ahead of any reader, is stopped first, and
 * if it took some meanwhile the hand-over waits (-EAGAIN: the caller gives them to
 * the library and asks again at its next record boundary).
 */
static int rx_start(struct giong__sock *s, int fd, const void *info, size_t len)
{
	struct giong__rxq *q = &s->rxq;
	int r;

	if (s->ktls_rx)
		return -EALREADY;
	if (q->count || q->eof || q->err || q->hold)
		return -EAGAIN;
	if ((r = giong__net_rxq_quiesce(q)))
		return r;
	if (q->count || q->eof || q->err) {
		r = -EAGAIN; /* arrived before the multishot ended: the library's */
	} else if ((r = set_crypto(s, fd, TLS_RX, info, len)) == 0) {
		s->ktls_rx = true;
		q->ktls = true;
	}
	giong__net_rxq_unhold(q);
	return r;
}

int giong_stream_ktls_start(struct giong_stream *st, enum giong_ktls_dir dir, const void *info,
			    size_t len)
{
	struct giong__sock *s;
	int fd, r;

	if (!st || !info || (dir != GIONG_KTLS_TX && dir != GIONG_KTLS_RX) || !info_fits(info, len))
		return -EINVAL;
	/* A direct socket gets its descriptor first: setsockopt needs one. */
	if ((fd = giong_stream_fd_install(st)) < 0)
		return fd;
	if ((r = tcp_beneath(st, &s)))
		return r;
	if (dir == GIONG_KTLS_RX)
		r = rx_start(s, fd, info, len);
	else if (s->ktls_tx)
		r = -EALREADY;
	else if (s->writing)
		r = -EBUSY; /* bytes of the library's records may still be on their way */
	else if ((r = set_crypto(s, fd, TLS_TX, info, len)) == 0)
		s->ktls_tx = true;
	giong__net_sock_leave(s);
	return r;
}

/* One record of @type at @buf: @mh (its control buffer in @control) as sendmsg
 * takes it (recvmsg fills it), the caller's @iov naming the bytes. */
struct record_msg {
	union {
		char buf[CMSG_SPACE(sizeof(uint8_t))];
		struct cmsghdr align;
	} control;
	struct iovec iov;
	struct msghdr mh;
};

static void record_msg(struct record_msg *m, uint8_t type, const void *buf, size_t len)
{
	struct cmsghdr *cm;

	memset(m, 0, sizeof(*m));
	m->iov = (struct iovec){(void *)buf, len};
	m->mh.msg_iov = &m->iov;
	m->mh.msg_iovlen = 1;
	m->mh.msg_control = m->control.buf;
	m->mh.msg_controllen = sizeof(m->control.buf);
	cm = CMSG_FIRSTHDR(&m->mh);
	cm->cmsg_level = SOL_TLS;
	cm->cmsg_type = TLS_SET_RECORD_TYPE;
	cm->cmsg_len = CMSG_LEN(sizeof(type));
	memcpy(CMSG_DATA(cm), &type, sizeof(type));
}

/* The arguments of a record checked, and the TCP socket beneath @st entered. */
static int record_sock(struct giong_stream *st, uint8_t type, const void *buf, size_t len,
		       struct giong__sock **s)
{
	if (!st || (!buf && len) || len > RECORD_MAX || type == 23)
		return -EINVAL;
	return tcp_beneath(st, s);
}

ssize_t giong_stream_ktls_send_record(struct giong_stream *st, uint8_t type, const void *buf,
				      size_t len)
{
	struct io_uring_sqe *sqe;
	struct record_msg m;
	struct giong__sock *s;
	ssize_t n;
	int r;

	if ((r = record_sock(st, type, buf, len, &s)))
		return r;
	r = s->ktls_tx ? giong__net_write_begin(s) : -ENOTCONN;
	giong__net_sock_leave(s); /* write_begin entered it again */
	if (r)
		return r;
	record_msg(&m, type, buf, len);
	if (!(sqe = giong_sqe())) {
		n = -EBUSY;
	} else {
		/* m (message, control buffer, iovec) lives in this frame, the bytes
		 * are the caller's: all lent to the kernel until giong_io returns. */
		io_uring_prep_sendmsg(sqe, s->rxq.fd, &m.mh, MSG_NOSIGNAL);
		n = giong_io(giong__net_on_sock(s, sqe));
	}
	return giong__net_write_end(s, n);
}

ssize_t giong_stream_ktls_send_record_nowait(struct giong_stream *st, uint8_t type, const void *buf,
					     size_t len)
{
	struct record_msg m;
	struct giong__sock *s;
	ssize_t n;
	int r;

	if ((r = record_sock(st, type, buf, len, &s)))
		return r;
	if (!s->ktls_tx) {
		n = -ENOTCONN;
	} else if (s->writing || s->rxq.fixed) {
		n = -EBUSY; /* a write ahead of it, or no descriptor for a system call */
	} else {
		record_msg(&m, type, buf, len);
		/* A system call, not the ring: the caller cannot park, and what follows
		 * (a close) must find the record gone to the socket or not at all. */
		n = sendmsg(s->rxq.fd, &m.mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0)
			n = -errno;
	}
	giong__net_sock_leave(s);
	return n;
}

/* The record type recvmsg gave in @mh's control message; 23 (data) without one. */
static uint8_t record_type(struct msghdr *mh)
{
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm))
		if (cm->cmsg_level == SOL_TLS && cm->cmsg_type == TLS_GET_RECORD_TYPE &&
		    cm->cmsg_len >= CMSG_LEN(sizeof(uint8_t)))
			return *CMSG_DATA(cm);
	return 23;
}

ssize_t giong_stream_ktls_recv_record(struct giong_stream *st, uint8_t *type, void *buf, size_t len)
{
	struct io_uring_sqe *sqe;
	struct record_msg m;
	struct giong__sock *s;
	struct giong__rxq *q;
	ssize_t n;
	int r;

	if (!st || !type || !buf || !len)
		return -EINVAL;
	if ((r = tcp_beneath(st, &s)))
		return r;
	q = &s->rxq;
	if (!s->ktls_rx) {
		n = -ENOTCONN;
	} else if (!q->ctrl || q->armed || q->count || q->hold) {
		/* No receive said such a record is next (it could be data, which
		 * would leave the stream here), or the data before it first. */
		n = -EAGAIN;
	} else if (!(sqe = giong_sqe())) {
		n = -EBUSY;
	} else {
		record_msg(&m, 0, buf, len > INT_MAX ? INT_MAX : len);
		/* m lives in this frame, the bytes are the caller's: lent to the
		 * kernel until giong_io returns. */
		io_uring_prep_recvmsg(sqe, q->fd, &m.mh, 0);
		n = giong_io(giong__net_on_sock(s, sqe));
		if (s->closing) {
			n = -EBADF;
		} else if (n >= 0) {
			*type = record_type(&m.mh);
			q->ctrl = false;
			if (n == 0)
				q->eof = true; /* the peer's FIN, after the records */
			giong__net_rxq_arm(q);
		} else if (n != -ETIMEDOUT && n != -ECANCELED && n != -EINTR) {
			q->ctrl = false; /* -EBADMSG (a record that does not open): for good */
			if (!q->err)
				q->err = (int)n;
		}
	}
	giong__net_sock_leave(s);
	return n;
}
