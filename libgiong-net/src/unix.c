/* SPDX-License-Identifier: MIT */
/* unix.c - Unix stream sockets: listen, connect, pair. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "listener.h"
#include "sock.h"

/* "@name" is abstract (leading NUL, no file), anything else a path. */
static int unix_addr(const char *name, struct giong_addr *a)
{
	struct sockaddr_un *un = (struct sockaddr_un *)&a->ss;
	size_t n;

	if (!name || !name[0])
		return -EINVAL;
	n = strlen(name);
	if (n >= sizeof(un->sun_path))
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	un->sun_family = AF_UNIX;
	memcpy(un->sun_path, name, n);
	if (name[0] == '@')
		un->sun_path[0] = '\0';
	a->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (name[0] != '@'));
	return 0;
}

/* A socket file nobody listens on any more is stale: connecting is refused.
 * Non-blocking: a live listener whose backlog is full would hold a blocking
 * connect, and the worker with it, until it accepts (EAGAIN: alive). */
static bool stale_socket(const struct giong_addr *a, const char *path)
{
	struct stat st;
	int fd, r;

	if (lstat(path, &st) || !S_ISSOCK(st.st_mode))
		return false;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return false;
	r = connect(fd, (const struct sockaddr *)&a->ss, a->len) ? errno : 0;
	close(fd);
	return r == ECONNREFUSED;
}

int giong_unix_listen(const char *name, const struct giong_listen_options *opts,
		      struct giong_listener **ret)
{
	struct giong_addr a;
	bool path;
	int fd, r;

	if (!ret)
		return -EINVAL;
	*ret = NULL;
	r = unix_addr(name, &a);
	if (r)
		return r;
	if (giong_worker_index() < 0)
		return GIONG_ENOTWORKER;
	path = name[0] != '@';
	fd = giong__net_listen_socket(&a, opts);
	if (fd == -EADDRINUSE && path && stale_socket(&a, name)) {
		unlink(name);
		fd = giong__net_listen_socket(&a, opts);
	}
	if (fd < 0)
		return fd;
	r = giong__net_listener_new(fd, true, path ? name : NULL, opts, ret);
	if (r) {
		close(fd);
		if (path)
			unlink(name);
	}
	return r;
}

int giong_unix_connect(const char *name, struct giong_stream **ret)
{
	struct giong_addr a;
	int r;

	if (!ret)
		return -EINVAL;
	*ret = NULL;
	r = unix_addr(name, &a);
	if (r)
		return r;
	if (giong_worker_index() < 0)
		return GIONG_ENOTWORKER;
	return giong__net_sock_connect(AF_UNIX, (const struct sockaddr *)&a.ss, a.len,
				       &giong__net_unix_ops, ret);
}

int giong_unix_pair(struct giong_stream **a, struct giong_stream **b)
{
	int sv[2], r;

	if (!a || !b)
		return -EINVAL;
	*a = *b = NULL;
	if (giong_worker_index() < 0)
		return GIONG_ENOTWORKER;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	r = giong__net_sock_new(sv[0], false, &giong__net_unix_ops, a);
	if (r) {
		close(sv[1]);
		return r;
	}
	r = giong__net_sock_new(sv[1], false, &giong__net_unix_ops, b);
	if (r) {
		giong_stream_close(*a);
		*a = NULL;
	}
	return r;
}
