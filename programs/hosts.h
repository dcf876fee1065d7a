/* SPDX-License-Identifier: MIT */
/*
 * hosts.h - the addresses the example servers (examples/echo.c, udp_echo.c) bind, from their --host:
 * by default the loopback addresses of both families, 127.0.0.1 and [::1], so that a test
 * server is never on the network by surprise and answers "localhost" whichever family the
 * client tries first; 0.0.0.0, :: or * for every address of both families (0.0.0.0 and [::],
 * the IPv6 socket IPv6-only so that the two do not overlap); any other address alone. As
 * giong-serve's --bind does (programs/serve/main.c). Then the binding of those addresses on a
 * worker, and the serving of what was bound, for a listener or a UDP socket alike.
 */
#ifndef GIONG_TOOLS_HOSTS_H
#define GIONG_TOOLS_HOSTS_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <netinet/in.h>

#include <giong/net.h>

#define TOOL_HOST_LEN 300                       /* one "host:port" text, with its NUL */
#define TOOL_HOSTS_LINE (2 * TOOL_HOST_LEN + 8) /* both, " and "-separated */

/* The "host:port" texts to bind, for giong_tcp_listen() or giong_udp_bind(). */
struct tool_hosts {
	char addr[2][TOOL_HOST_LEN];
	unsigned n; /* 1 or 2 */
	bool pair;  /* two families: addr[1] is the IPv6 one, bound v6only, and may be missing */
};

/* Fill @h for --host @host (NULL: not given) and @port. */
static inline void tool_hosts(struct tool_hosts *h, const char *host, int port)
{
	const char *hosts[2] = {"127.0.0.1", "::1"};

	h->n = 2;
	if (host && (!strcmp(host, "0.0.0.0") || !strcmp(host, "::") || !strcmp(host, "[::]") ||
		     !strcmp(host, "*"))) {
		hosts[0] = "0.0.0.0", hosts[1] = "::";
	} else if (host) {
		hosts[0] = host;
		h->n = 1;
	}
	h->pair = h->n == 2;
	for (unsigned i = 0; i < h->n; i++)
		/* A bare IPv6 address is bracketed; "[::1]" is taken as it is. */
		snprintf(h->addr[i], sizeof(h->addr[i]),
			 strchr(hosts[i], ':') && hosts[i][0] != '[' ? "[%s]:%d" : "%s:%d",
			 hosts[i], port);
}

/* A kind of socket a server binds: a listener, or a UDP socket. */
struct tool_sock_ops {
	int (*bind)(const char *addr, bool v6only, void **ret); /* 0 or -errno */
	int (*local_addr)(void *s, struct giong_addr *out);
	void (*close)(void *s);
};

/*
 * Bind @h's addresses with @ops on the calling worker into @socks (room for 2). Returns how
 * many were bound, and their addresses as bound (with the port the kernel chose for port 0)
 * " and "-separated in @line, of @len bytes (TOOL_HOSTS_LINE holds any); 0 after an error,
 * said with @prog (what was bound is closed again). The IPv6 address of the default pair is
 * left out on a host without IPv6: worker 0 says so, and the server goes on with IPv4.
 */
static inline unsigned tool_bind_all(const struct tool_hosts *h, const struct tool_sock_ops *ops,
				     const char *prog, void **socks, char *line, size_t len)
{
	int worker = giong_worker_index();
	unsigned n = 0;

	line[0] = '\0';
	for (unsigned i = 0; i < h->n; i++) {
		struct giong_addr a;
		char text[TOOL_HOST_LEN]; /* GIONG_ADDR_STRLEN, or one of @h's */
		size_t used = strlen(line);
		int r = ops->bind(h->addr[i], h->pair && i == 1, &socks[n]);

		if (r && h->pair && i == 1 && (r == -EADDRNOTAVAIL || r == -EAFNOSUPPORT)) {
			if (worker == 0)
				fprintf(stderr, "%s: no IPv6 here (%s: %s): IPv4 only\n", prog,
					h->addr[i], giong_strerror(r));
			continue;
		}
		if (r) {
			fprintf(stderr, "%s: worker %d: bind %s: %s\n", prog, worker, h->addr[i],
				giong_strerror(r));
			while (n)
				ops->close(socks[--n]);
			return 0;
		}
		if (ops->local_addr(socks[n], &a) || giong_addr_format(&a, text, sizeof(text)) < 0)
			snprintf(text, sizeof(text), "%s", h->addr[i]);
		snprintf(line + used, len - used, "%s%s", n ? " and " : "", text);
		n++;
	}
	return n;
}

/* Serve the @n (1 or 2) sockets of @socks with @serve until shutdown: the second from a
 * task of its own, the first from the calling task (the worker's main task: a worker whose
 * main task returns is given the grace period and stopped). @serve closes its socket. */
static inline void tool_serve_all_socks(void **socks, unsigned n, giong_task_fn serve,
					const struct tool_sock_ops *ops, const char *prog)
{
	struct giong_task *t = NULL;
	int r;

	if (n == 2 && (r = giong_spawn(serve, socks[1], &t))) {
		fprintf(stderr, "%s: worker %d: %s\n", prog, giong_worker_index(),
			giong_strerror(r));
		ops->close(socks[1]);
		t = NULL;
	}
	serve(socks[0]);
	if (t)
		giong_join(t, NULL);
}

/*
 * Does another server listen on @addr ("host:port"; IPv6 alone if @v6only)? The servers'
 * listeners have SO_REUSEPORT, which also lets them join another process's listeners on
 * the port (of the same user) without a word: a second server started by mistake would
 * take half the connections. So, unless their --reuse-port asks for exactly that, a bind
 * without SO_REUSEPORT (with SO_REUSEADDR, as theirs, so that old connections in TIME_WAIT
 * do not count) tries the port first. False also when @addr is a name or its family is
 * missing here: the real bind says what is wrong then. Two servers starting at the same
 * moment can still both pass.
 */
static inline bool tool_port_taken(const char *addr, bool v6only)
{
	struct giong_addr a;
	int fd, one = 1;
	bool taken;

	if (giong_addr_parse(addr, &a) != 0)
		return false;
	fd = socket(a.ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (v6only)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	taken = bind(fd, (struct sockaddr *)&a.ss, a.len) != 0 && errno == EADDRINUSE;
	close(fd);
	return taken;
}

#endif /* GIONG_TOOLS_HOSTS_H */
