/* SPDX-License-Identifier: MIT */
/*
 * emu_net.c - the epoll tier's readiness-driven operations: sockets, pipes,
 * eventfds and signalfds, and POLL_ADD. Each try makes the non-blocking
 * call; EAGAIN means "wait for op->want on op->wait_fd" (emu_submit.c parks
 * the operation and tries again when epoll reports it).
 *
 * The descriptors may be blocking ones (giong's sockets are: io_uring needs
 * no O_NONBLOCK), so the calls say "do not wait" themselves: MSG_DONTWAIT
 * for sockets, RWF_NOWAIT for read and write. Two calls have no such flag:
 * accept4 (the listening socket is made O_NONBLOCK for good: only giong
 * reads it) and connect (O_NONBLOCK for the duration of the connect, then
 * given back as it was; a blocking Unix socket's connect to a full backlog
 * is made blocking by a helper thread, as io_uring's kernel worker does).
 *
 * Results and CQE flags are io_uring's: MSG_NOSIGNAL on sends, MSG_WAITALL
 * sends go on until all is sent (a later error reports what was sent; any
 * number of iovecs up to IOV_MAX), and the multishot receives fill core's
 * pool buffers with IORING_CQE_F_BUFFER, the buffer id in the upper 16 bits
 * and IORING_CQE_F_MORE on all but the final completion, -ENOBUFS (final)
 * when the pool is empty.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "internal.h"

/* Completions a multishot operation posts per readiness before it lets the
 * other descriptors have their turn (re-arming reports it again at once). */
#define EMU_BATCH 32
/* iovecs of a SENDMSG's rest copied on the stack (more: on the heap). */
#define EMU_IOV_LOCAL 64

static bool would_block(void)
{
	return errno == EAGAIN || errno == EWOULDBLOCK;
}

static enum giong__emu_state done(struct giong__worker *w, struct giong__emu_op *op, int res)
{
	giong__emu_post(w, op->sqe.user_data, res, 0);
	return GIONG__EMU_DONE;
}

static enum giong__emu_state wait_for(struct giong__emu_op *op, int fd, uint32_t events)
{
	op->wait_fd = fd;
	op->want = events;
	return GIONG__EMU_WAIT;
}

/* READ, READV, WRITE, WRITEV: a file goes to run_blocking (unless the page
 * cache answers at once), anything else waits for readiness. */
static enum giong__emu_state rw(struct giong__worker *w, struct giong__emu_op *op, bool write)
{
	struct io_uring_sqe *sqe = &op->sqe;
	bool vec = sqe->opcode == IORING_OP_READV || sqe->opcode == IORING_OP_WRITEV;
	struct iovec one = {(void *)(uintptr_t)sqe->addr, sqe->len};
	const struct iovec *iov = vec ? (const struct iovec *)(uintptr_t)sqe->addr : &one;
	int n = vec ? (int)sqe->len : 1, flags = (int)sqe->rw_flags | RWF_NOWAIT;
	ssize_t r;

again:
	r = giong__emu_rw(write, sqe->fd, iov, n, sqe->off, flags);
	if (r >= 0)
		return done(w, op, (int)r);
	if (errno == ESPIPE && sqe->off != (uint64_t)-1) {
		/* A stream (eventfd, pipe): io_uring ignores the offset. */
		sqe->off = (uint64_t)-1;
		goto again;
	}
	if (errno == EOPNOTSUPP && (flags & RWF_NOWAIT)) {
		/* No RWF_NOWAIT for this file: only readiness says it will
		 * not wait (a lone reader of a pipe or an eventfd). */
		struct pollfd p = {sqe->fd, write ? POLLOUT : POLLIN, 0};

		if (giong__emu_is_file(sqe->fd) ||
		    (poll(&p, 1, 0) == 1 && !(p.revents & POLLNVAL))) {
			flags &= ~RWF_NOWAIT;
			if (giong__emu_is_file(sqe->fd)) {
				sqe->rw_flags = (uint32_t)flags;
				giong__emu_fs_blocking(w, sqe);
				return GIONG__EMU_DONE;
			}
			goto again;
		}
		return wait_for(op, sqe->fd, write ? EPOLLOUT : EPOLLIN);
	}
	if (!would_block())
		return done(w, op, -errno);
	if (giong__emu_is_file(sqe->fd)) {
		giong__emu_fs_blocking(w, sqe); /* the disk, not readiness */
		return GIONG__EMU_DONE;
	}
	return wait_for(op, sqe->fd, write ? EPOLLOUT : EPOLLIN);
}

/* RECV into a pool buffer (IOSQE_BUFFER_SELECT), one-shot or multishot. */
static enum giong__emu_state recv_select(struct giong__worker *w, struct giong__emu_op *op)
{
	struct io_uring_sqe *sqe = &op->sqe;
	bool multi = sqe->ioprio & IORING_RECV_MULTISHOT;
	int flags = (int)sqe->msg_flags | MSG_DONTWAIT;

	for (unsigned i = 0; i < EMU_BATCH; i++) {
		unsigned bid, size;
		char *buf = sqe->buf_group == (unsigned)w->pool.bgid
				    ? giong__bufpool_peek(w, &bid, &size)
				    : NULL;
		ssize_t r;

		if (!buf)
			return done(w, op, -ENOBUFS);
		if (sqe->len && sqe->len < size)
			size = sqe->len;
		r = recv(sqe->fd, buf, size, flags);
		if (r < 0 && would_block())
			return wait_for(op, sqe->fd, EPOLLIN);
		if (r <= 0) /* end of stream or error: final, no buffer used */
			return done(w, op, r < 0 ? -errno : 0);
		giong__bufpool_commit(w);
		giong__emu_post(w, sqe->user_data, (int)r,
				IORING_CQE_F_BUFFER | (bid << IORING_CQE_BUFFER_SHIFT) |
					(multi ? IORING_CQE_F_MORE : 0));
		if (!multi)
			return GIONG__EMU_DONE;
	}
	return wait_for(op, sqe->fd, EPOLLIN); /* re-arming reports it again */
}

/* Multishot RECVMSG into pool buffers: each buffer holds a struct
 * io_uring_recvmsg_out, the name and control room of the template msghdr,
 * then the payload, as the kernel lays it out. */
static enum giong__emu_state recvmsg_select(struct giong__worker *w, struct giong__emu_op *op)
{
	struct io_uring_sqe *sqe = &op->sqe;
	const struct msghdr *tmpl = (const struct msghdr *)(uintptr_t)sqe->addr;
	size_t head =
		sizeof(struct io_uring_recvmsg_out) + tmpl->msg_namelen + tmpl->msg_controllen;
	bool multi = sqe->ioprio & IORING_RECV_MULTISHOT;

	for (unsigned i = 0; i < EMU_BATCH; i++) {
		unsigned bid, size;
		char *buf = sqe->buf_group == (unsigned)w->pool.bgid
				    ? giong__bufpool_peek(w, &bid, &size)
				    : NULL;
		struct io_uring_recvmsg_out out;
		struct iovec iov;
		struct msghdr mh;
		ssize_t r;

		if (!buf)
			return done(w, op, -ENOBUFS);
		if (size < head)
			return done(w, op, -EFAULT);
		memset(&mh, 0, sizeof(mh));
		mh.msg_name = tmpl->msg_namelen ? buf + sizeof(out) : NULL;
		mh.msg_namelen = tmpl->msg_namelen;
		mh.msg_control =
			tmpl->msg_controllen ? buf + sizeof(out) + tmpl->msg_namelen : NULL;
		mh.msg_controllen = tmpl->msg_controllen;
		iov.iov_base = buf + head;
		iov.iov_len = size - head;
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		r = recvmsg(sqe->fd, &mh, (int)sqe->msg_flags | MSG_DONTWAIT);
		if (r < 0 && would_block())
			return wait_for(op, sqe->fd, EPOLLIN);
		if (r < 0)
			return done(w, op, -errno);
		out.namelen = mh.msg_namelen;
		out.controllen = (unsigned)mh.msg_controllen;
		out.payloadlen = (unsigned)r;
		out.flags = (unsigned)mh.msg_flags;
		memcpy(buf, &out, sizeof(out));
		giong__bufpool_commit(w);
		giong__emu_post(w, sqe->user_data,
				(int)(head + ((size_t)r < iov.iov_len ? (size_t)r : iov.iov_len)),
				IORING_CQE_F_BUFFER | (bid << IORING_CQE_BUFFER_SHIFT) |
					(multi ? IORING_CQE_F_MORE : 0));
		if (!multi)
			return GIONG__EMU_DONE;
	}
	return wait_for(op, sqe->fd, EPOLLIN);
}

/* sendmsg(2) of what @m has past its first @sent bytes (MSG_WAITALL goes on
 * after a short send). The caller's iovecs stay as they are: the rest is a
 * copy, on the stack up to EMU_IOV_LOCAL iovecs, else on the heap (up to
 * the IOV_MAX the kernel takes). Returns sendmsg's result (-1 and errno), or
 * -2 if the copy could not be made. */
static ssize_t sendmsg_rest(int fd, const struct msghdr *m, uint64_t sent, int flags)
{
	struct iovec local[EMU_IOV_LOCAL], *rest = local;
	struct msghdr mh = *m;
	size_t k = 0, n;
	ssize_t r;
	int err;

	if (!sent)
		return sendmsg(fd, m, flags);
	while (k < m->msg_iovlen && sent >= m->msg_iov[k].iov_len)
		sent -= m->msg_iov[k++].iov_len;
	n = m->msg_iovlen - k;
	if (n > EMU_IOV_LOCAL && !(rest = malloc(n * sizeof(*rest))))
		return -2;
	if (n) {
		memcpy(rest, m->msg_iov + k, n * sizeof(*rest));
		rest[0].iov_base = (char *)rest[0].iov_base + sent;
		rest[0].iov_len -= sent;
	}
	mh.msg_iov = rest;
	mh.msg_iovlen = n;
	r = sendmsg(fd, &mh, flags);
	err = errno;
	if (rest != local)
		free(rest);
	errno = err;
	return r;
}

/* SEND and SENDMSG; with MSG_WAITALL until every byte is sent, op->done
 * counting what is. Without it, what the call took (a short count), as
 * io_uring completes it. */
static enum giong__emu_state send_op(struct giong__worker *w, struct giong__emu_op *op)
{
	struct io_uring_sqe *sqe = &op->sqe;
	int flags = (int)sqe->msg_flags;
	bool all = flags & MSG_WAITALL;

	flags = (flags & ~MSG_WAITALL) | MSG_DONTWAIT | MSG_NOSIGNAL;
	for (;;) {
		ssize_t r;

		if (sqe->opcode == IORING_OP_SEND) {
			r = send(sqe->fd, (const char *)(uintptr_t)sqe->addr + op->done,
				 sqe->len - op->done, flags);
		} else {
			r = sendmsg_rest(sqe->fd, (const struct msghdr *)(uintptr_t)sqe->addr,
					 op->done, flags);
			if (r == -2) /* no memory for the rest: what was sent */
				return done(w, op, (int)op->done);
		}
		if (r < 0 && would_block())
			return wait_for(op, sqe->fd, EPOLLOUT);
		if (r < 0)
			return done(w, op, op->done ? (int)op->done : -errno);
		op->done += (uint64_t)r;
		if (!all || r == 0)
			return done(w, op, (int)op->done);
		if (sqe->opcode == IORING_OP_SEND && op->done >= sqe->len)
			return done(w, op, (int)op->done);
		if (sqe->opcode == IORING_OP_SENDMSG) {
			const struct msghdr *m = (const struct msghdr *)(uintptr_t)sqe->addr;
			uint64_t total = 0;

			for (size_t j = 0; j < m->msg_iovlen; j++)
				total += m->msg_iov[j].iov_len;
			if (op->done >= total)
				return done(w, op, (int)op->done);
		}
	}
}

static enum giong__emu_state accept_op(struct giong__worker *w, struct giong__emu_op *op)
{
	struct io_uring_sqe *sqe = &op->sqe;
	bool multi = sqe->ioprio & IORING_ACCEPT_MULTISHOT;

	if (!op->done) {
		/* accept4 has no "do not wait" flag: the listening socket is
		 * made non-blocking, for good (only giong reads it). */
		int fl = fcntl(sqe->fd, F_GETFL);

		if (fl >= 0 && !(fl & O_NONBLOCK))
			fcntl(sqe->fd, F_SETFL, fl | O_NONBLOCK);
		op->done = 1;
	}
	for (unsigned i = 0; i < EMU_BATCH; i++) {
		int fd = accept4(sqe->fd, (struct sockaddr *)(uintptr_t)sqe->addr,
				 (socklen_t *)(uintptr_t)sqe->addr2, (int)sqe->accept_flags);

		if (fd < 0 && would_block())
			return wait_for(op, sqe->fd, EPOLLIN);
		if (fd < 0)
			return done(w, op, -errno);
		giong__emu_post(w, sqe->user_data, fd, multi ? IORING_CQE_F_MORE : 0);
		if (!multi)
			return GIONG__EMU_DONE;
	}
	return wait_for(op, sqe->fd, EPOLLIN);
}

static void connect_restore(struct giong__emu_op *op)
{
	if (op->restore_block) {
		int fl = fcntl(op->sqe.fd, F_GETFL);

		if (fl >= 0)
			fcntl(op->sqe.fd, F_SETFL, fl & ~O_NONBLOCK);
		op->restore_block = false;
	}
}

static enum giong__emu_state connect_done(struct giong__worker *w, struct giong__emu_op *op,
					  int res)
{
	connect_restore(op);
	return done(w, op, res);
}

static enum giong__emu_state connect_op(struct giong__worker *w, struct giong__emu_op *op)
{
	struct io_uring_sqe *sqe = &op->sqe;

	if (op->connecting) {
		struct pollfd p = {sqe->fd, POLLOUT, 0};
		int err = 0;
		socklen_t len = sizeof(err);

		if (poll(&p, 1, 0) == 0)
			return wait_for(op, sqe->fd, EPOLLOUT);
		if (getsockopt(sqe->fd, SOL_SOCKET, SO_ERROR, &err, &len))
			err = errno;
		return connect_done(w, op, -err);
	}
	if (!op->restore_block) {
		int fl = fcntl(sqe->fd, F_GETFL);

		if (fl >= 0 && !(fl & O_NONBLOCK) && !fcntl(sqe->fd, F_SETFL, fl | O_NONBLOCK))
			op->restore_block = true;
	}
	if (!connect(sqe->fd, (const struct sockaddr *)(uintptr_t)sqe->addr, (socklen_t)sqe->off))
		return connect_done(w, op, 0);
	if (errno == EINPROGRESS) {
		op->connecting = true;
		return wait_for(op, sqe->fd, EPOLLOUT);
	}
	if (would_block()) {
		/* A Unix socket whose listener's backlog is full. No readiness
		 * says when there is room (the socket itself is writable):
		 * waiting for one would retry every turn. io_uring answers
		 * -EAGAIN for a non-blocking socket, and for a blocking one a
		 * kernel worker waits in connect(2): here, a helper thread
		 * (cancelled as any pooled call: interrupted, -ECANCELED). */
		if (!op->restore_block)
			return connect_done(w, op, -EAGAIN);
		connect_restore(op);
		giong__emu_fs_blocking(w, sqe);
		return GIONG__EMU_DONE;
	}
	return connect_done(w, op, -errno);
}

/* POLL_ADD: poll(2)'s answer. io_uring listens for POLLERR, POLLHUP,
 * POLLNVAL and POLLRDHUP whatever the mask (its IO_POLL_UNMASK): poll(2)
 * reports the first three by itself, POLLRDHUP is added. The whole mask
 * is what the operation waits for (POLLRDNORM, POLLWRBAND...): poll(2)'s
 * bits and epoll's have the same values, and epoll reports ERR and HUP
 * whatever it is asked. */
static enum giong__emu_state poll_op(struct giong__worker *w, struct giong__emu_op *op)
{
	unsigned mask = (op->sqe.poll32_events & 0xffff) | POLLRDHUP;
	struct pollfd p = {op->sqe.fd, (short)mask, 0};

	if (poll(&p, 1, 0) < 0)
		return done(w, op, -errno);
	if (p.revents)
		return done(w, op, (unsigned short)p.revents);
	return wait_for(op, op->sqe.fd, mask);
}

/* SPLICE between a pipe and a socket or another pipe. With an input offset
 * the input is a file (pipes and sockets take none): the disk may wait. */
static enum giong__emu_state splice_op(struct giong__worker *w, struct giong__emu_op *op)
{
	struct io_uring_sqe *sqe = &op->sqe;
	int in = sqe->splice_fd_in, out = sqe->fd;
	struct pollfd p[2] = {{in, POLLIN, 0}, {out, POLLOUT, 0}};
	ssize_t r;

	if ((int64_t)sqe->splice_off_in != -1) {
		giong__emu_fs_blocking(w, sqe);
		return GIONG__EMU_DONE;
	}
	/* The socket end may be a blocking descriptor, which SPLICE_F_NONBLOCK
	 * does not cover: splice only once both ends are ready. */
	if (poll(p, 2, 0) < 0)
		return done(w, op, -errno);
	if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
		return wait_for(op, in, EPOLLIN);
	if (!(p[1].revents & (POLLOUT | POLLHUP | POLLERR)))
		return wait_for(op, out, EPOLLOUT);
	r = splice(in, NULL, out, (int64_t)sqe->off == -1 ? NULL : (loff_t *)&sqe->off, sqe->len,
		   (sqe->splice_flags & ~SPLICE_F_FD_IN_FIXED) | SPLICE_F_NONBLOCK);
	if (r < 0 && would_block()) {
		/* Either end may have refused (the output filled since the
		 * look above): wait on the one not ready now. Waiting on the
		 * input while it is still readable would be reported at once,
		 * every turn, until the output drains. Both still ready (their
		 * poll and the call disagree): the output, which refused what
		 * a ready input offered. */
		if (poll(p, 2, 0) >= 0 && !(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			return wait_for(op, in, EPOLLIN);
		return wait_for(op, out, EPOLLOUT);
	}
	return done(w, op, r < 0 ? -errno : (int)r);
}

enum giong__emu_state giong__emu_net_try(struct giong__worker *w, struct giong__emu_op *op)
{
	struct io_uring_sqe *sqe = &op->sqe;
	ssize_t r;

	switch (sqe->opcode) {
	case IORING_OP_READ:
	case IORING_OP_READV:
		return rw(w, op, false);
	case IORING_OP_WRITE:
	case IORING_OP_WRITEV:
		return rw(w, op, true);
	case IORING_OP_RECV:
		if (sqe->flags & IOSQE_BUFFER_SELECT)
			return recv_select(w, op);
		r = recv(sqe->fd, (void *)(uintptr_t)sqe->addr, sqe->len,
			 (int)sqe->msg_flags | MSG_DONTWAIT);
		break;
	case IORING_OP_RECVMSG:
		if (sqe->flags & IOSQE_BUFFER_SELECT)
			return recvmsg_select(w, op);
		r = recvmsg(sqe->fd, (struct msghdr *)(uintptr_t)sqe->addr,
			    (int)sqe->msg_flags | MSG_DONTWAIT);
		break;
	case IORING_OP_SEND:
	case IORING_OP_SENDMSG:
		return send_op(w, op);
	case IORING_OP_ACCEPT:
		return accept_op(w, op);
	case IORING_OP_CONNECT:
		return connect_op(w, op);
	case IORING_OP_SHUTDOWN:
		return done(w, op, shutdown(sqe->fd, (int)sqe->len) ? -errno : 0);
	case IORING_OP_POLL_ADD:
		return poll_op(w, op);
	case IORING_OP_SPLICE:
		return splice_op(w, op);
	default:
		return done(w, op, -EINVAL);
	}
	/* One-shot RECV and RECVMSG into the caller's memory. */
	if (r < 0 && would_block())
		return wait_for(op, sqe->fd, EPOLLIN);
	return done(w, op, r < 0 ? -errno : (int)r);
}

int giong__emu_net_partial(const struct giong__emu_op *op, int err)
{
	/* op->done counts bytes only for the sends (ACCEPT uses it as a flag). */
	bool send = op->sqe.opcode == IORING_OP_SEND || op->sqe.opcode == IORING_OP_SENDMSG;

	return send && op->done ? (int)op->done : err;
}

void giong__emu_net_abort(struct giong__emu_op *op)
{
	if (op->sqe.opcode == IORING_OP_CONNECT)
		connect_restore(op);
}
