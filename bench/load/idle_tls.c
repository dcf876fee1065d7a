// SPDX-License-Identifier: MIT
/*
 * idle_tls: holds N idle HTTPS (HTTP/1.1 over TLS 1.3) keep-alive connections to a server,
 * each of which has made a full handshake and one request and read its whole response, for
 * the HTTPS benchmark's memory per idle connection (https_bench.sh): the caller reads the
 * server's resident memory before and after. The TLS counterpart of idle_conns.c.
 *
 * usage: idle_tls -p PORT [-H ADDR] [-n N] [-u PATH] [-c SUITES] [-t HOLD_S]
 *   -n N       connections (default 10000)         -u PATH    the request's path (/json)
 *   -c SUITES  the TLS 1.3 cipher suites offered (default TLS_AES_128_GCM_SHA256)
 *   -t HOLD_S  hold them at most HOLD_S seconds (default 60), or until SIGTERM or SIGINT
 *              (the default action: the process ends and the kernel closes them all)
 * Prints "ready N SECONDS" on stdout once all N have been answered (SECONDS: how long the
 * N handshakes and requests took), or "failed K" and exits 1 if any connect, handshake,
 * write or response failed or timed out (5 s per read). The server's certificate is not
 * checked (a benchmark on loopback). Connections are made one at a time with blocking
 * sockets; once answered, a connection's OpenSSL object is freed (no close_notify is sent:
 * the server still holds a live TLS connection) and only its descriptor is kept, so that
 * the client stays small. No session is resumed: every handshake is a full one.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

/* Reads one response over @ssl: its head, then Content-Length more bytes. 0: a complete
 * 200 response; -1: anything else (an error, EOF, a timeout, another status). */
static int tls_read_response(SSL *ssl)
{
	char buf[32768];
	size_t have = 0, need = 0; /* need: the whole response's length, once the head is in */

	for (;;) {
		int got;

		if (need && have >= need)
			return have == need ? 0 : -1;
		if (have == sizeof(buf) - 1)
			return -1; /* a head this large is not the benchmark's */
		got = SSL_read(ssl, buf + have, (int)(sizeof(buf) - 1 - have));
		if (got <= 0)
			return -1;
		have += (size_t)got;
		buf[have] = '\0';
		if (!need) {
			char *eoh = strstr(buf, "\r\n\r\n"), *cl;

			if (!eoh)
				continue;
			cl = strcasestr(buf, "\r\ncontent-length:");
			if (strncmp(buf, "HTTP/1.1 200", 12) != 0 || !cl || cl > eoh)
				return -1;
			need = (size_t)(eoh + 4 - buf) + strtoul(cl + 17, NULL, 10);
			if (need > sizeof(buf) - 1)
				return -1;
		}
	}
}

/* One connection: connect, handshake, request, response. The descriptor, or -1. */
static int open_one(SSL_CTX *ctx, const struct sockaddr_in *sa, const char *req, int reqlen)
{
	struct timeval tmo = {.tv_sec = 5};
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	SSL *ssl = NULL;
	int ok = 0;

	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo)) == 0 &&
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tmo, sizeof(tmo)) == 0 &&
	    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == 0 &&
	    connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0 && (ssl = SSL_new(ctx)) &&
	    SSL_set_fd(ssl, fd) == 1 && SSL_set_tlsext_host_name(ssl, "localhost") == 1 &&
	    SSL_connect(ssl) == 1 && SSL_write(ssl, req, reqlen) == reqlen)
		ok = tls_read_response(ssl) == 0;
	SSL_free(ssl); /* no SSL_shutdown: the connection stays open, idle */
	if (!ok) {
		close(fd);
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	const char *host = "127.0.0.1", *path = "/json", *suites = "TLS_AES_128_GCM_SHA256";
	int n = 10000, port = 0, hold = 60, opt, failed = 0, reqlen, *fds;
	struct timespec t0, t1;
	struct rlimit rl;
	SSL_CTX *ctx;
	char req[512];

	while ((opt = getopt(argc, argv, "p:H:n:u:c:t:")) != -1) {
		if (opt == 'p')
			port = atoi(optarg);
		else if (opt == 'H')
			host = optarg;
		else if (opt == 'n')
			n = atoi(optarg);
		else if (opt == 'u')
			path = optarg;
		else if (opt == 'c')
			suites = optarg;
		else if (opt == 't')
			hold = atoi(optarg);
		else {
			fprintf(stderr, "usage: idle_tls -p PORT [-H ADDR] [-n N] [-u PATH] "
					"[-c SUITES] [-t HOLD_S]\n");
			return 2;
		}
	}
	if (port <= 0 || port > 65535 || n <= 0 || hold < 0 ||
	    inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		fprintf(stderr, "idle_tls: bad arguments\n");
		return 2;
	}
	sa.sin_port = htons((uint16_t)port);
	reqlen = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n", path);
	if (reqlen <= 0 || (size_t)reqlen >= sizeof(req)) {
		fprintf(stderr, "idle_tls: path too long\n");
		return 2;
	}
	ctx = SSL_CTX_new(TLS_client_method());
	if (!ctx || SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) != 1 ||
	    SSL_CTX_set_ciphersuites(ctx, suites) != 1) {
		fprintf(stderr, "idle_tls: TLS context (suites \"%s\"):\n", suites);
		ERR_print_errors_fp(stderr);
		return 2;
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	/* N descriptors and a few more. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (!(fds = calloc((size_t)n, sizeof(*fds))))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < n; i++) {
		int e;

		errno = 0;
		fds[i] = open_one(ctx, &sa, req, reqlen);
		e = errno;
		if (fds[i] < 0 && failed++ == 0) {
			fprintf(stderr, "idle_tls: connection %d failed (errno: %s)\n", i,
				strerror(e));
			ERR_print_errors_fp(stderr);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (failed) {
		printf("failed %d\n", failed);
		return 1; /* the kernel closes the others */
	}
	printf("ready %d %.2f\n", n,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	fflush(stdout);
	poll(NULL, 0, hold * 1000); /* until a signal ends us, or HOLD_S */
	return 0;
}
