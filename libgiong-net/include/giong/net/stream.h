/* SPDX-License-Identifier: MIT */
/*
 * giong/net/stream.h - struct giong_stream: a byte stream behind a vtable.
 *
 * TCP and Unix stream sockets implement it (and, later, TLS over another
 * stream), so code written against giong_stream_*() never knows which it
 * has. The HTTP server is written against this header only.
 *
 * Receiving: two ways, which may be mixed.
 *  - giong_stream_recv() lends a buffer from the worker's receive pool,
 *    filled by a multishot receive that stays armed in the kernel. Nothing
 *    is lost to a timeout or a cancellation: bytes that arrive while nobody
 *    waits stay queued on the stream for the next call.
 *  - giong_stream_read() copies into the caller's buffer. On a stream whose
 *    multishot receive was never armed it is one one-shot receive straight
 *    into that buffer; a timeout then returns either the data or -ETIMEDOUT
 *    with nothing taken.
 *
 * Writing: giong_stream_write()/writev() send once (a short count is not an
 * error); giong_stream_write_all() sends everything. Writes of one stream
 * are serialised: two tasks writing at once never interleave bytes within
 * one call. Writes of many tasks in one tick leave in one io_uring_enter.
 *
 * Closing: giong_stream_close() cancels every operation still in the kernel
 * on the stream (tasks parked in it return -ECANCELED or -EBADF) and frees
 * the stream once none is left.
 *
 * Ownership: a stream is owned by whoever created or accepted it and freed
 * by giong_stream_close(). It belongs to the worker it was made on: for
 * socket streams (TCP, Unix), every call that touches the socket - recv,
 * read, write, writev, write_all, send_start, shutdown, close, on_readable,
 * and the questions about the connection (query, fd, splice_fd, alpn,
 * peer_addr, local_addr, giong_tcp_set_nodelay()) - called on any other
 * thread touches nothing and returns GIONG_ENOTWORKER (not a worker) or
 * -EPERM (another worker).
 * Only giong_stream_kind() reads nothing but the stream's constant table.
 *
 * Stacking: a stream may be built over another one, its @lower (TLS over a
 * TCP stream; a stack may be deeper). The contract:
 *  - Making an upper stream over a lower one hands the lower to the upper:
 *    until the upper is closed, the caller uses the upper only and never
 *    reads, writes or closes the lower itself. The upper does its I/O
 *    through the lower's giong_stream_*() calls, never through a descriptor.
 *    (An upper whose constructor fails leaves the lower to its caller.) All
 *    streams of a stack belong to one worker.
 *  - giong_stream_close(upper) closes the whole stack: first the upper
 *    (its table's close, which must not close @lower), then @lower with
 *    giong_stream_close(), and so on down. An upper told
 *    giong_stream_keep_lower() stops there: its lower stays open and is the
 *    caller's again once the upper is closed (bytes the upper had already
 *    taken from it, a TLS record read ahead say, went with the upper).
 *  - If the upper's close fails (GIONG_ENOTWORKER, -EPERM, -EBADF), nothing
 *    was done: the caller still owns the upper and, through it, the rest of
 *    the stack. If the upper was closed but a stream beneath failed to
 *    close, that error is returned: the upper is gone, and the stack is
 *    closed down to the stream that failed, which is left as it was.
 *  - Questions about the connection - giong_stream_query() and what is
 *    built on it: giong_stream_fd(), giong_stream_alpn(),
 *    giong_stream_splice_fd(), giong_stream_peer_addr(),
 *    giong_stream_local_addr(); and giong_tcp_set_nodelay() - go down the
 *    stack to the first stream that can answer, so that HTTP over TLS sees
 *    the client's socket and the protocol TLS agreed on. Receiving,
 *    reading, writing, shutdown and on_readable are never passed down: only
 *    the upper knows what it holds (TLS: plaintext already decrypted). A
 *    table entry that is NULL there gives -ENOTSUP.
 *  - A stack is at most GIONG_STREAM_MAX_DEPTH streams deep: a deeper one
 *    (or a stream that is its own lower) gives -ELOOP and nothing is done.
 */
#ifndef GIONG_NET_STREAM_H
#define GIONG_NET_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <giong/core/api.h>
#include <giong/net/addr.h>

GIONG_BEGIN_DECLS

struct giong_recvbuf;
struct giong_stream;
struct giong_stream_send;

/* Flags of giong_stream_ops.writev. */
enum {
	GIONG_WRITE_ALL = 1u << 0, /* send everything before returning (MSG_WAITALL) */
};

/* The most streams one stack holds (TLS over TCP is 2), see Stacking. */
#define GIONG_STREAM_MAX_DEPTH 16

/*
 * The readable callback of giong_stream_on_readable(): called on the worker,
 * outside any task, with the stream and the caller's @ctx. Must not park.
 */
typedef void (*giong_stream_readable_fn)(struct giong_stream *s, void *ctx);

/*
 * The questions of giong_stream_query() (@what), each with the type of the
 * answer it stores in *@out. Stable numbers: later versions add questions,
 * never renumber. A table's query returns -ENOTSUP for a question it does
 * not know, so values it has never heard of are safe to ask.
 */
enum {
	/* int: the socket descriptor beneath the stack (giong_stream_fd()).
	 * Borrowed: the socket stream owns it. */
	GIONG_STREAM_QUERY_SOCKET = 1,
	/* int: the descriptor that bytes written to this stream reach unchanged,
	 * so that a caller may splice(2) or sendfile(2) into it itself
	 * (giong_stream_splice_fd()). -ENOENT when the stream changes the bytes
	 * (TLS makes records of them). Borrowed, as above. */
	GIONG_STREAM_QUERY_SPLICE_FD = 2,
	/* const char *: the protocol agreed by ALPN (RFC 7301), not
	 * NUL-terminated, its length in *@len (1..255); borrowed from the
	 * stream that answered until it is closed (giong_stream_alpn()).
	 * -ENOENT when none was agreed. */
	GIONG_STREAM_QUERY_ALPN = 3,
	/* From here up, questions of a program's own streams: giong never
	 * uses these numbers (a silent stream passes them down). */
	GIONG_STREAM_QUERY_USER = 0x10000,
};

/* What a table's query returns to hand the question to s->lower on purpose
 * (the only positive return; see giong_stream_ops.query). */
#define GIONG_STREAM_QUERY_LOWER 1

/*
 * The operations of one kind of stream. A static const table per kind.
 * Fill it with designated initializers: later versions add optional
 * operations only in place of _reserved (zero means "absent"), so a table
 * built against this header stays valid under them.
 */
struct giong_stream_ops {
	const char *name; /* "tcp", "unix", "tls" */
	ssize_t (*recv)(struct giong_stream *s, struct giong_recvbuf **ret); /* may suspend */
	ssize_t (*read)(struct giong_stream *s, void *buf, size_t len);      /* may suspend */
	ssize_t (*writev)(struct giong_stream *s, const struct iovec *iov, int n,
			  unsigned flags);                /* may suspend */
	int (*shutdown)(struct giong_stream *s, int how); /* may suspend */
	/* Frees s (now, or once nothing is in flight on it); must not close
	 * s->lower, which giong_stream_close() closes after it. Returns 0, or
	 * -errno having done nothing. Does not suspend. */
	int (*close)(struct giong_stream *s);
	int (*set_on_readable)(struct giong_stream *s, giong_stream_readable_fn fn,
			       void *ctx); /* optional: NULL */
	/* optional: the older way to answer GIONG_STREAM_QUERY_SOCKET, asked
	 * when query is NULL or returns -ENOTSUP for it: the descriptor, or
	 * -ENOTSUP (asks s->lower), or another -errno (ends the walk). New
	 * tables leave it NULL and answer in query. */
	int (*fd)(const struct giong_stream *s);
	/* optional: NULL gives -ENOTSUP (see giong_stream_send_start()) */
	int (*send_start)(struct giong_stream *s, struct giong_stream_send *req,
			  const struct iovec *iov, int n);
	/*
	 * optional: answer question @what (GIONG_STREAM_QUERY_*) about @s
	 * itself. Returns 0 with the answer in *@out (and *@len where the
	 * question says so; write them only then); -ENOENT: this stream knows
	 * there is none (the walk ends); GIONG_STREAM_QUERY_LOWER: ask s->lower;
	 * -ENOTSUP (or a NULL query): not known here - asks s->lower, except
	 * for GIONG_STREAM_QUERY_SPLICE_FD, which then ends with -ENOENT (a
	 * stream that does not say it passes bytes through unchanged may change
	 * them); any other -errno ends the walk with it (GIONG_ENOTWORKER /
	 * -EPERM off the owner worker). @out is never NULL; @len is not NULL
	 * for GIONG_STREAM_QUERY_ALPN. Must not call giong_stream_query() on
	 * s->lower itself (return GIONG_STREAM_QUERY_LOWER: the walk bounds the
	 * depth). Does not suspend.
	 */
	int (*query)(const struct giong_stream *s, int what, void *out, size_t *len);
	void (*_reserved[4])(void); /* zero: room for later optional operations */
};

/*
 * FIRST member of every implementation, zeroed but for ops (and lower) when
 * the stream is made.
 */
struct giong_stream {
	const struct giong_stream_ops *ops;
	struct giong_stream *lower; /* the stream beneath (TLS over TCP) or NULL */
	void *data;                 /* the user's pointer; giong never touches it */
	unsigned _flags;            /* private: giong_stream_keep_lower() */
};

/*
 * giong_stream_recv() - wait for bytes and borrow the pool buffer holding
 * them. Returns the byte count (> 0) with an owned buffer in *@ret (give it
 * back with giong_recvbuf_release()), 0 at end of stream (*@ret is NULL),
 * or -errno: -ECANCELED, -ETIMEDOUT (nothing is lost), -ECONNRESET, -EINVAL,
 * -EBADF after close, -ENOMEM when bytes arrived that could not be queued
 * (the stream then ends with it, after the bytes queued before: it never
 * goes on past a hole), GIONG_ENOTWORKER / -EPERM off the owner worker.
 * May suspend. Owner worker only.
 */
GIONG_API ssize_t giong_stream_recv(struct giong_stream *s, struct giong_recvbuf **ret);

/*
 * giong_stream_read() - wait for bytes and copy up to @len into @buf.
 * Returns the count (> 0; at most INT_MAX per call), 0 at end of stream, or
 * -errno as giong_stream_recv() (-EINVAL for a zero @len or NULL @buf).
 * May suspend. Owner worker only.
 */
GIONG_API ssize_t giong_stream_read(struct giong_stream *s, void *buf, size_t len);

/* giong_stream_write() - send up to @len bytes of @buf once (the buffer is
 * borrowed until this returns). Returns the count sent (at most INT_MAX per
 * call; 0 for a zero @len, whatever @buf, without a system call) or -errno
 * (-EPIPE once the peer is gone, never SIGPIPE; -EINVAL for a NULL @buf
 * with a non-zero @len). May suspend. Owner worker only. */
GIONG_API ssize_t giong_stream_write(struct giong_stream *s, const void *buf, size_t len);

/* giong_stream_writev() - send from @n buffers once. Returns the count sent
 * or -errno. May suspend. Owner worker only. */
GIONG_API ssize_t giong_stream_writev(struct giong_stream *s, const struct iovec *iov, int n);

/* giong_stream_write_all() - send all @len bytes (for sockets one send
 * with MSG_WAITALL per INT_MAX bytes: the kernel loops, not the task).
 * Returns @len (0 for a zero @len, whatever @buf), or -errno (an unknown
 * part may have been sent then). May suspend. Owner worker only. */
GIONG_API ssize_t giong_stream_write_all(struct giong_stream *s, const void *buf, size_t len);

/*
 * A send that runs without a task waiting for it (giong_stream_send_start()).
 * The caller owns the struct and sets @done (and @data if it likes); the
 * rest is the stream's while the send is in flight.
 */
struct giong_stream_send {
	/* Called once, on the worker and outside any task, when the send is over:
	 * @res is the byte count sent (all of it, unless the connection failed
	 * part way: then fewer) or -errno (-ECANCELED when the stream was closed
	 * first, -EPIPE, -ECONNRESET). May close the stream, and may start the
	 * next send. Must not park. */
	void (*done)(struct giong_stream_send *req, ssize_t res);
	void *data; /* the caller's; giong never touches it */
	/* private to the stream while the send is in flight */
	struct giong_stream *_stream;
	struct msghdr _mh;
	const struct iovec *_iov; /* under kernel TLS, sent in pieces (ktls.h) */
	int _niov;
	size_t _sent, _total;
};

/*
 * giong_stream_send_start() - send all of @n buffers without waiting: the
 * send enters the kernel with the rest of the tick and @req->done reports it.
 * Ownership: @req, the @iov array and the bytes it points to are lent to the
 * kernel from this call until @req->done is called (a close of the stream
 * cancels the send; the lending still ends only at @done). At most one send
 * is in flight per stream, and writes from tasks (giong_stream_write*())
 * wait until it is over, so bytes never interleave. Returns 0 (@done will be
 * called), or -errno having started nothing (@done will not be called):
 * -EINVAL (NULL @s, @req, @req->done or @iov; @n not in 1..IOV_MAX; a total
 * over INT_MAX), -EBUSY (a send or a task's write is in flight), -ENOTSUP
 * (a stream that cannot: write from a task instead), -EBADF after close,
 * GIONG_ESHUTDOWN while the worker drains, GIONG_ENOTWORKER / -EPERM off the
 * owner worker. Does not suspend. Owner worker only.
 */
GIONG_API int giong_stream_send_start(struct giong_stream *s, struct giong_stream_send *req,
				      const struct iovec *iov, int n);

/* giong_stream_shutdown() - shut down reading (SHUT_RD), writing (SHUT_WR:
 * the peer reads end of stream) or both. Returns 0 or -errno. May suspend.
 * Owner worker only. */
GIONG_API int giong_stream_shutdown(struct giong_stream *s, int how);

/*
 * giong_stream_close() - close @s and free it (takes ownership), then the
 * streams beneath it (see Stacking at the top of this header), unless it was
 * told giong_stream_keep_lower(). Buffers queued on it go back to the pool;
 * its pending receive is cancelled and its memory freed only once the
 * kernel confirms. May be called from its own readable callback. Returns 0,
 * -EINVAL for NULL (or a stream with no table), -ENOTSUP (a table without
 * close), -ELOOP (a stack deeper than GIONG_STREAM_MAX_DEPTH), or
 * GIONG_ENOTWORKER (not on a worker) / -EPERM (on another worker): then
 * nothing was done and the caller still owns @s. An error from a stream
 * beneath @s, once @s itself was closed, is returned as it is. Does not
 * suspend. Owner worker only.
 */
GIONG_API int giong_stream_close(struct giong_stream *s);

/*
 * giong_stream_keep_lower() - when @s is closed, leave the stream beneath it
 * open: it is the caller's again from then on (and not before: @s does its
 * I/O through it until then). Stores that stream in *@lower (may be NULL
 * if the caller kept its own pointer). Calling it again changes nothing.
 * Returns 0, -EINVAL (NULL @s), or -ENOTSUP (@s has no lower stream).
 * Owner worker only.
 */
GIONG_API int giong_stream_keep_lower(struct giong_stream *s, struct giong_stream **lower);

/*
 * giong_stream_on_readable() - hold @s with no task on it: its multishot
 * receive stays armed and @fn(@s, @ctx) is called on the worker (outside any
 * task; it must not park, typically it spawns one) when bytes or end of
 * stream arrive while no task waits in recv/read. Called once per arrival
 * until a task reads (and, rarely, with nothing new, when the worker could
 * not re-arm the receive: the task's read re-arms it); @fn may close @s.
 * NULL @fn removes it. An idle stream held this way costs no stack and no
 * pool buffer. Returns 0, -EINVAL, -ENOTSUP for streams that cannot (never
 * passed to the stream beneath, see Stacking), GIONG_ENOTWORKER / -EPERM off
 * the owner worker. Owner worker only.
 */
GIONG_API int giong_stream_on_readable(struct giong_stream *s, giong_stream_readable_fn fn,
				       void *ctx);

/*
 * giong_stream_query() - ask @s question @what (GIONG_STREAM_QUERY_*, or
 * from GIONG_STREAM_QUERY_USER up, a program's own): @s answers if it knows, else the
 * question goes down the stack (s->lower, and so on) to the first stream
 * that does (see giong_stream_ops.query for how each answers). The answer
 * goes to *@out, whose type the question names (@len: the length, for
 * GIONG_STREAM_QUERY_ALPN; may be NULL for the others); both are untouched
 * on failure. What each of giong's streams answers: docs/net.md, "Asking
 * a stream".
 * Returns 0; -ENOENT: a stream in the stack knows there is none (TLS, asked
 * GIONG_STREAM_QUERY_SPLICE_FD; a socket, asked GIONG_STREAM_QUERY_ALPN);
 * -ENOTSUP: no stream in the stack knows; -EINVAL (NULL @s or @out, @what
 * not positive, a NULL @len for GIONG_STREAM_QUERY_ALPN, a stream in the
 * stack with no table); -ELOOP (deeper than GIONG_STREAM_MAX_DEPTH);
 * GIONG_ENOTWORKER (not on a worker) / -EPERM (on another worker than the
 * socket's, for the descriptors: its owner may close them at any time).
 * Does not suspend. Owner worker only.
 */
GIONG_API int giong_stream_query(const struct giong_stream *s, int what, void *out, size_t *len);

/*
 * giong_stream_fd() - the socket descriptor beneath @s: its own, or that of
 * the first stream down the stack that has one (GIONG_STREAM_QUERY_SOCKET).
 * Borrowed: do not close it. A TCP connection accepted into the worker's
 * direct table has none: -EOPNOTSUPP (which is -ENOTSUP on Linux), and so
 * for giong_stream_peer_addr() and giong_stream_local_addr(); its listener
 * gives regular descriptors if asked (tcp.h, "Direct descriptors"), and
 * giong_stream_fd_install() gives it one on Linux 6.8+.
 * Returns the descriptor, -EINVAL (NULL @s, or a stream in the stack with no
 * table), -ENOTSUP (no stream in the stack has one), -ELOOP, GIONG_ENOTWORKER
 * (not on a worker) / -EPERM (on another worker than the socket's: its owner
 * may close the descriptor at any time). Does not suspend. Owner worker only.
 */
GIONG_API int giong_stream_fd(const struct giong_stream *s);

/*
 * giong_stream_fd_install() - the socket descriptor beneath @s (the first
 * socket stream down the stack), made if it has none: a TCP connection in
 * the worker's direct table (tcp.h) is given a regular descriptor with
 * IORING_OP_FIXED_FD_INSTALL (Linux 6.8+) and is a regular socket stream
 * from then on (its slot is closed). Borrowed, as giong_stream_fd()'s.
 * Returns the descriptor, -EOPNOTSUPP (a direct socket on a kernel without
 * the operation: listen with giong_listen_options.regular_fds instead),
 * -ENOTSUP (no socket beneath), -EINVAL, -ELOOP, -EBADF (closed meanwhile),
 * -ETIMEDOUT / -ECANCELED, GIONG_ENOTWORKER / -EPERM, or the kernel's -errno
 * (-EMFILE). May suspend (on a direct socket). Owner worker only.
 */
GIONG_API int giong_stream_fd_install(struct giong_stream *s);

/*
 * giong_stream_splice_fd() - the descriptor that bytes written to @s reach
 * unchanged (GIONG_STREAM_QUERY_SPLICE_FD): a TCP or Unix stream's own
 * socket; none through TLS (it will be the socket under kernel TLS), nor
 * for a socket in the worker's direct table (tcp.h): giong_stream_splice()
 * works on both kinds of socket. Borrowed: do not close it. Writing to it directly bypasses the stream's
 * ordering of writes: only with no write or send of @s in flight, and
 * after what @s was given to send has left.
 * Returns the descriptor, or -ENOENT (none: a stream in the stack changes
 * the bytes, or does not say that it passes them through), or the errors
 * of giong_stream_query(). Does not suspend. Owner worker only.
 */
GIONG_API int giong_stream_splice_fd(const struct giong_stream *s);

/*
 * giong_stream_can_splice() - whether giong_stream_splice() can move bytes
 * into @s: 1 when bytes written to @s reach a socket unchanged (a TCP or
 * Unix stream, also one in the worker's direct table, which has no
 * descriptor for giong_stream_splice_fd(): see tcp.h); -ENOENT when a
 * stream in the stack changes them (TLS), or the errors of
 * giong_stream_query(). Does not suspend. Owner worker only.
 */
GIONG_API int giong_stream_can_splice(const struct giong_stream *s);

/*
 * giong_stream_splice() - move up to @len bytes from the pipe @pipe_fd (its
 * read end, a regular descriptor; borrowed) into the socket that bytes
 * written to @s reach unchanged, without copying them through user space
 * (IORING_OP_SPLICE; a socket in the worker's direct table is named by its
 * slot). Ordered after the writes of @s in flight, as a write is; the
 * caller sends nothing through @s while it runs (send_start included).
 * Returns the bytes moved (a short count is not an error), 0 when the pipe
 * is empty with no writer, -ENOENT (see giong_stream_can_splice()),
 * -EINVAL (NULL @s, negative @pipe_fd, zero @len), -EBADF (closed meanwhile),
 * -ETIMEDOUT / -ECANCELED, or -errno of splice(2). May suspend. Owner
 * worker only.
 */
GIONG_API ssize_t giong_stream_splice(struct giong_stream *s, int pipe_fd, size_t len);

/*
 * giong_stream_peek() - copy into @buf up to @len bytes that have arrived
 * on the socket beneath @s (the first socket stream down the stack: under
 * TLS, the ciphertext) without taking them (MSG_PEEK), waiting for the
 * first. For a header read before the stream is used (a PROXY header).
 * Returns the count, 0 at the peer's end, -EBUSY when the stream has begun
 * receiving (its multishot receive armed, or bytes queued: peeking would
 * skip them), -ENOTSUP (no socket beneath), -EINVAL, -EBADF, -ETIMEDOUT /
 * -ECANCELED, or -errno of recv(2). May suspend. Owner worker only.
 */
GIONG_API ssize_t giong_stream_peek(struct giong_stream *s, void *buf, size_t len);

/*
 * giong_stream_alpn() - the application protocol agreed by ALPN on @s (TLS
 * answers; GIONG_STREAM_QUERY_ALPN): its name in *@name, not NUL-terminated
 * and borrowed from the stream until it is closed, its length in *@len.
 * Returns 0; -ENOENT when none was agreed (a plain socket, or TLS whose
 * peer offered none); -ENOTSUP, or the errors of giong_stream_query()
 * (-EINVAL for a NULL @name or @len). *@name and *@len are untouched on
 * failure. Does not suspend. Owner worker only.
 */
GIONG_API int giong_stream_alpn(const struct giong_stream *s, const char **name, size_t *len);

/*
 * giong_stream_peer_addr() / giong_stream_local_addr() - the peer's and the
 * local address of the socket beneath @s (giong_stream_fd(), so through TLS
 * too) into @out (caller storage). Return 0, -EINVAL (NULL @s or @out),
 * -ENOTSUP (no socket beneath), -ELOOP, GIONG_ENOTWORKER / -EPERM (off the
 * socket's worker, as giong_stream_fd(): *@out untouched), or -errno of
 * getpeername(2) / getsockname(2) (-ENOTCONN once the peer reset the
 * connection, say). Do not suspend. Owner worker only.
 */
GIONG_API int giong_stream_peer_addr(const struct giong_stream *s, struct giong_addr *out);
GIONG_API int giong_stream_local_addr(const struct giong_stream *s, struct giong_addr *out);

/* giong_stream_kind() - "tcp", "unix", ... of @s itself (not of the
 * streams beneath); "invalid" for NULL. */
GIONG_API const char *giong_stream_kind(const struct giong_stream *s);

GIONG_END_DECLS

#endif /* GIONG_NET_STREAM_H */
