// SPDX-License-Identifier: MIT
/*
 * idle_conns: holds N idle HTTP/1.1 keep-alive connections to a server, each of which has
 * made one request and read its whole response, for the memory-per-idle-connection
 * measurement of issue 12: the caller reads the server's resident memory before and after.
 *
 * usage: idle_conns -p PORT [-H ADDR] [-n N] [-u PATH] [-t HOLD_S]
 *   -n N       connections (default 10000)         -u PATH  the request's path (default /json)
 *   -t HOLD_S  hold them at most HOLD_S seconds (default 60), or until stdin closes or
 *              a line arrives on it, then close them all and exit
 * Prints "ready N" on stdout once all N have been answered (the caller reads RSS then),
 * "failed K" and exits 1 if any connect, write or response failed or timed out (5 s per
 * read). Connections are opened one at a time with blocking sockets: on loopback that is
 * fast enough (10,000 in well under a second) and keeps the client simple.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* Reads one whole response (head, then Content-Length bytes) from @fd; 0 on success. */
static int read_response(int fd)
{
	char buf[16384];
	size_t len = 0;
	char *end = NULL, *cl;
	long want;

	while (!end) {
		ssize_t n;

		if (len == sizeof(buf) - 1)
			return -1;
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			return -1;
		len += (size_t)n;
		buf[len] = '\0';
		end = strstr(buf, "\r\n\r\n");
	}
	cl = strcasestr(buf, "\r\ncontent-length:");
	if (!cl || cl > end || strncmp(buf, "HTTP/1.1 200", 12) != 0)
		return -1;
	want = strtol(cl + 17, NULL, 10) - (long)(len - (size_t)(end + 4 - buf));
	while (want > 0) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n <= 0)
			return -1;
		want -= n;
	}
	return want == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	const char *host = "127.0.0.1", *path = "/json";
	int n = 10000, port = 0, hold = 60, opt, failed = 0, *fds;
	struct timeval tmo = {.tv_sec = 5};
	struct rlimit rl;
	char req[512];
	int reqlen;

	while ((opt = getopt(argc, argv, "p:H:n:u:t:")) != -1) {
		switch (opt) {
		case 'p':
			port = atoi(optarg);
			break;
		case 'H':
			host = optarg;
			break;
		case 'n':
			n = atoi(optarg);
			break;
		case 'u':
			path = optarg;
			break;
		case 't':
			hold = atoi(optarg);
			break;
		default:
			fprintf(stderr,
				"usage: %s -p PORT [-H ADDR] [-n N] [-u PATH] [-t HOLD_S]\n",
				argv[0]);
			return 2;
		}
	}
	if (port <= 0 || port > 65535 || n <= 0 || hold < 0 ||
	    inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		fprintf(stderr, "idle_conns: bad arguments\n");
		return 2;
	}
	sa.sin_port = htons((uint16_t)port);
	reqlen = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, host);
	if (reqlen <= 0 || (size_t)reqlen >= sizeof(req)) {
		fprintf(stderr, "idle_conns: path too long\n");
		return 2;
	}
	/* N descriptors and a few more. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	fds = calloc((size_t)n, sizeof(*fds));
	if (!fds)
		return 1;

	for (int i = 0; i < n; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		fds[i] = fd;
		if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo)) < 0 ||
		    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
		    write(fd, req, (size_t)reqlen) != reqlen || read_response(fd) < 0) {
			if (failed++ == 0)
				fprintf(stderr, "idle_conns: connection %d: %s\n", i,
					strerror(errno));
			if (fd >= 0)
				close(fd);
			fds[i] = -1;
		}
	}
	if (failed) {
		printf("failed %d\n", failed);
	} else {
		struct pollfd pfd = {.fd = 0, .events = POLLIN};

		printf("ready %d\n", n);
		fflush(stdout);
		/* Hold until the caller says so (a line or EOF on stdin) or HOLD_S seconds. */
		poll(&pfd, 1, hold * 1000);
	}
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	return failed ? 1 : 0;
}
