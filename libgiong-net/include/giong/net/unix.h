/* SPDX-License-Identifier: MIT */
/*
 * giong/net/unix.h - Unix stream sockets.
 *
 * A name starting with '@' is abstract ("@giong-test": no file is made);
 * any other is a path. Binding a path removes a stale socket file left by a
 * process that is gone (a path that is not a socket is never removed: the
 * call fails with -EADDRINUSE), and closing the listener removes the file it
 * made. Accept with giong_listener_accept(); streams are giong_streams.
 */
#ifndef GIONG_NET_UNIX_H
#define GIONG_NET_UNIX_H

#include <giong/core/api.h>
#include <giong/net/stream.h>
#include <giong/net/tcp.h>

GIONG_BEGIN_DECLS

/*
 * giong_unix_listen() - listen on the Unix socket @name (path or "@abstract").
 * Returns 0 and an owned listener in *@ret (free with
 * giong_listener_close()), or -errno: -EINVAL (NULL, empty or longer than
 * sun_path), -EADDRINUSE (a live socket or another file is there), -EACCES,
 * GIONG_ENOTWORKER. Owner worker only.
 */
GIONG_API int giong_unix_listen(const char *name, const struct giong_listen_options *opts,
				struct giong_listener **ret);

/* giong_unix_connect() - connect to @name. Returns 0 and an owned stream in
 * *@ret, or -errno (-ENOENT, -ECONNREFUSED, -EINVAL). May suspend. */
GIONG_API int giong_unix_connect(const char *name, struct giong_stream **ret);

/* giong_unix_pair() - two connected streams (socketpair(2)). Returns 0 with
 * two owned streams, or -errno. Owner worker only. */
GIONG_API int giong_unix_pair(struct giong_stream **a, struct giong_stream **b);

GIONG_END_DECLS

#endif /* GIONG_NET_UNIX_H */
