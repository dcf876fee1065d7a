/* SPDX-License-Identifier: MIT */
/*
 * churn - a TCP connection load client for echo servers, and with --http for
 * the example HTTP server (scripts/loadcheck.sh). Plain non-blocking sockets and
 * epoll, one epoll per thread; it does not use giong, so that it tests the
 * server and nothing else.
 *
 *   churn --port N [--host 127.0.0.1] [--threads 4] [--seconds 120]
 *         [--sources K] [--progress-ms 500] [--http]
 *         (--hold N [--hold-seconds S] | --total N [--concurrent C])
 *
 * --http: the message is a request, POST /echo HTTP/1.1 with a body of
 *   1..64 bytes (Content-Length), and what must come back is one response,
 *   200 with Content-Length and that body, byte for byte, and nothing more.
 *   The connection is kept alive (held connections are idle keep-alive
 *   connections: hold them for less than the server's idle timeout).
 *
 * --hold N: open N connections at once, send a short message on each and
 *   check its echo, and keep all N open; once every one is established and
 *   echoed it prints "hold: N connections open, N echoes verified", waits
 *   --hold-seconds (any data or close from the server meanwhile is an
 *   error), then resets them all (SO_LINGER {1, 0}).
 * --total N: open and close N connections, at most C (default 512) at a
 *   time. Each connection, at random: 70% send, check the echo, reset
 *   (SO_LINGER {1, 0}); 10% the same with a plain close (FIN, TIME_WAIT on
 *   our side); 10% send and reset without reading the echo; 10% reset right
 *   after connecting without sending.
 *
 * Resets avoid TIME_WAIT; the plain closes are spread over --sources
 * loopback source addresses (127.0.0.1 .. 127.0.0.K, bound with
 * IP_BIND_ADDRESS_NO_PORT) so that their TIME_WAITs never exhaust the
 * ephemeral ports of one address.
 *
 * It prints "progress opened=.. closed=.. verified=.. errors=.." every
 * --progress-ms (so that a caller who kills it with SIGKILL knows how far it
 * got) and a summary. Every connection must connect, echo exactly what was
 * sent, and finish within 10 s. Exit 0 if all did within --seconds, 1
 * otherwise, 2 for bad arguments.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "args.h"

#define MSG_MAX 64
#define RESP_MAX 512 /* --http: a response, head and body */
#define CONN_TIMEOUT_MS 10000

static struct {
	const char *host;
	int port;
	unsigned threads, sources, progress_ms, hold_seconds, seconds;
	uint64_t hold, total, concurrent;
	bool http;
} opt = {.host = "127.0.0.1",
	 .threads = 4,
	 .sources = 1,
	 .progress_ms = 500,
	 .hold_seconds = 2,
	 .seconds = 120,
	 .concurrent = 512};

static _Atomic uint64_t n_opened, n_closed, n_verified, n_errors, n_established;
static _Atomic uint64_t next_id;
static atomic_bool release_hold, give_up;
static _Atomic unsigned threads_done;
static _Atomic unsigned reports;
static struct sockaddr_in server;

#define REPORT(...)                                                                                \
	do {                                                                                       \
		if (atomic_fetch_add(&reports, 1) < 20)                                            \
			fprintf(stderr, "churn: " __VA_ARGS__);                                    \
	} while (0)

enum state { FREE, CONNECTING, READING, HELD };
enum kind { K_RESET, K_FIN, K_NOREAD, K_NOSEND };

struct conn {
	int fd;
	enum state st;
	enum kind kind;
	uint64_t id;
	uint64_t started_ms;
	unsigned len, got;
	char *resp; /* --http: RESP_MAX bytes, the response so far */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t mix(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

static uint8_t pat(uint64_t id, unsigned i)
{
	return (uint8_t)((mix(id) >> ((i & 7) * 8)) + i);
}

struct worker {
	unsigned idx;
	int ep;
	struct conn *c;
	unsigned slots;
	uint64_t quota;   /* connections this thread opens in all */
	uint64_t started; /* connections this thread has started */
	uint64_t rng;
	bool ok;
};

static void fail(struct worker *w, struct conn *c, const char *what, int err)
{
	REPORT("conn %" PRIu64 ": %s: %s\n", c->id, what, err ? strerror(err) : "failed");
	atomic_fetch_add(&n_errors, 1);
	w->ok = false;
}

static void finish(struct worker *w, struct conn *c, bool reset)
{
	if (reset) {
		struct linger lg = {1, 0};

		setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	}
	close(c->fd); /* also takes it out of the epoll set */
	c->fd = -1;
	c->st = FREE;
	atomic_fetch_add(&n_closed, 1);
	(void)w;
}

/* --http: the response in c->resp[0, c->got): 1 whole and right, 0 not
 * whole yet, -1 wrong. */
static int http_response(struct conn *c)
{
	char *end = memmem(c->resp, c->got, "\r\n\r\n", 4), *cl;
	unsigned hlen;
	unsigned long clen;

	if (!end)
		return c->got >= RESP_MAX ? -1 : 0;
	hlen = (unsigned)(end + 4 - c->resp);
	if (c->got < 13 || memcmp(c->resp, "HTTP/1.1 200 ", 13))
		return -1;
	*end = '\0'; /* the head as a string, for a moment */
	cl = strcasestr(c->resp, "\r\ncontent-length:");
	clen = cl ? strtoul(cl + 17, NULL, 10) : ~0ul;
	*end = '\r';
	if (clen != c->len || c->got - hlen > c->len)
		return -1;
	if (c->got - hlen < c->len)
		return 0;
	for (unsigned i = 0; i < c->len; i++)
		if ((uint8_t)c->resp[hlen + i] != pat(c->id, i))
			return -1;
	return 1;
}

static int start(struct worker *w, struct conn *c)
{
	struct sockaddr_in src = {.sin_family = AF_INET};
	struct epoll_event ev = {.events = EPOLLOUT};
	int one = 1, fd;
	uint64_t r;

	c->id = atomic_fetch_add(&next_id, 1);
	r = mix(c->id ^ w->rng);
	c->len = 1 + (unsigned)(r % MSG_MAX);
	c->got = 0;
	if (opt.hold) {
		c->kind = K_RESET;
	} else {
		unsigned p = (unsigned)((r >> 32) % 10);

		c->kind = p < 7 ? K_RESET : p == 7 ? K_FIN : p == 8 ? K_NOREAD : K_NOSEND;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		c->fd = -1;
		fail(w, c, "socket", errno);
		return -1;
	}
	c->fd = fd;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (opt.sources > 1) {
		setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
		src.sin_addr.s_addr = htonl(0x7f000001u + (uint32_t)(c->id % opt.sources));
		if (bind(fd, (struct sockaddr *)&src, sizeof(src))) {
			fail(w, c, "bind", errno);
			close(fd);
			c->fd = -1;
			return -1;
		}
	}
	if (connect(fd, (struct sockaddr *)&server, sizeof(server)) && errno != EINPROGRESS) {
		fail(w, c, "connect", errno);
		close(fd);
		c->fd = -1;
		return -1;
	}
	c->st = CONNECTING;
	c->started_ms = now_ms();
	ev.data.ptr = c;
	if (epoll_ctl(w->ep, EPOLL_CTL_ADD, fd, &ev)) {
		fail(w, c, "epoll_ctl", errno);
		close(fd);
		c->fd = -1;
		c->st = FREE;
		return -1;
	}
	w->started++;
	return 0;
}

/* The echo (or response) came back whole and right: hold the connection, or close it. */
static void verified(struct worker *w, struct conn *c)
{
	atomic_fetch_add(&n_verified, 1);
	if (opt.hold) {
		c->st = HELD;
		atomic_fetch_add(&n_established, 1);
		return; /* stays registered for EPOLLIN: anything now is an error */
	}
	finish(w, c, c->kind != K_FIN);
}

static void on_event(struct worker *w, struct conn *c, uint32_t events)
{
	uint8_t buf[MSG_MAX * 2];

	if (c->st == CONNECTING) {
		int err = 0;
		socklen_t len = sizeof(err);
		struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = c};

		getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
		if (err) {
			fail(w, c, "connect", err);
			finish(w, c, true);
			return;
		}
		atomic_fetch_add(&n_opened, 1);
		if (c->kind == K_NOSEND) {
			finish(w, c, true);
			return;
		}
		unsigned n = 0;
		char req[256];

		if (opt.http)
			n = (unsigned)snprintf(req, sizeof(req),
					       "POST /echo HTTP/1.1\r\nHost: churn\r\n"
					       "Content-Length: %u\r\n\r\n",
					       c->len);
		for (unsigned i = 0; i < c->len; i++)
			req[n + i] = (char)pat(c->id, i);
		n += c->len;
		if (send(c->fd, req, n, MSG_NOSIGNAL) != (ssize_t)n) {
			fail(w, c, "send", errno);
			finish(w, c, true);
			return;
		}
		if (c->kind == K_NOREAD) {
			finish(w, c, true);
			return;
		}
		c->st = READING;
		epoll_ctl(w->ep, EPOLL_CTL_MOD, c->fd, &ev);
		return;
	}
	if (c->st == READING && opt.http) {
		ssize_t n = recv(c->fd, c->resp + c->got, RESP_MAX - c->got, 0);
		int v;

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			fail(w, c, n == 0 ? "end of stream before the whole response" : "recv",
			     n == 0 ? 0 : errno);
			finish(w, c, true);
			return;
		}
		c->got += (unsigned)n;
		if ((v = http_response(c)) < 0) {
			fail(w, c, "response mismatch", 0);
			finish(w, c, true);
			return;
		}
		if (v)
			verified(w, c);
		return;
	}
	if (c->st == READING) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), 0);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			fail(w, c, n == 0 ? "end of stream before the whole echo" : "recv",
			     n == 0 ? 0 : errno);
			finish(w, c, true);
			return;
		}
		for (ssize_t i = 0; i < n; i++) {
			if (c->got + (unsigned)i >= c->len ||
			    buf[i] != pat(c->id, c->got + (unsigned)i)) {
				fail(w, c, "echo mismatch", 0);
				finish(w, c, true);
				return;
			}
		}
		c->got += (unsigned)n;
		if (c->got == c->len)
			verified(w, c);
		return;
	}
	if (c->st == HELD) {
		fail(w, c,
		     (events & (EPOLLRDHUP | EPOLLHUP)) ? "closed by the server while held"
							: "data while held",
		     0);
		finish(w, c, true);
	}
}

static void *run(void *arg)
{
	struct worker *w = arg;
	struct epoll_event evs[256];
	uint64_t last_scan = now_ms();

	w->ep = epoll_create1(EPOLL_CLOEXEC);
	if (w->ep < 0) {
		w->ok = false;
		return NULL;
	}
	while (!atomic_load(&give_up)) {
		unsigned busy = 0;
		int n;

		/* Keep the slots full while this thread's quota lasts. */
		for (unsigned i = 0; i < w->slots; i++) {
			struct conn *c = &w->c[i];

			if (c->st == FREE && w->started < w->quota)
				start(w, c);
			if (c->st != FREE)
				busy++;
		}
		if (opt.hold && atomic_load(&release_hold))
			break;
		if (!busy && w->started >= w->quota && !opt.hold)
			break;
		n = epoll_wait(w->ep, evs, 256, 100);
		for (int i = 0; i < n; i++)
			on_event(w, evs[i].data.ptr, evs[i].events);
		if (now_ms() - last_scan >= 1000) {
			uint64_t t = now_ms();

			last_scan = t;
			for (unsigned i = 0; i < w->slots; i++) {
				struct conn *c = &w->c[i];

				if ((c->st == CONNECTING || c->st == READING) &&
				    t - c->started_ms > CONN_TIMEOUT_MS) {
					fail(w, c,
					     c->st == CONNECTING ? "connect timed out"
								 : "echo timed out",
					     0);
					finish(w, c, true);
				}
			}
		}
	}
	for (unsigned i = 0; i < w->slots; i++)
		if (w->c[i].st != FREE)
			finish(w, &w->c[i], true);
	close(w->ep);
	atomic_fetch_add(&threads_done, 1);
	return NULL;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: churn --port N [--host 127.0.0.1] [--threads 4] [--seconds 120]\n"
		"             [--sources K] [--progress-ms 500] [--http]\n"
		"             (--hold N [--hold-seconds S] | --total N [--concurrent C])\n");
	exit(2);
}

static void progress(void)
{
	printf("progress opened=%" PRIu64 " closed=%" PRIu64 " verified=%" PRIu64 " errors=%" PRIu64
	       "\n",
	       atomic_load(&n_opened), atomic_load(&n_closed), atomic_load(&n_verified),
	       atomic_load(&n_errors));
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct worker *ws;
	pthread_t *th;
	struct rlimit rl;
	uint64_t t0, deadline, want, last_progress;
	bool ok = true, held = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--http")) {
			opt.http = true;
			continue;
		}
		if (i + 1 >= argc)
			usage();
		if (!strcmp(a, "--host"))
			opt.host = argv[++i];
		else if (!strcmp(a, "--port"))
			opt.port = (int)tool_number("churn", a, argv[++i], 1, 65535);
		else if (!strcmp(a, "--threads"))
			opt.threads = (unsigned)tool_number("churn", a, argv[++i], 1, 1024);
		else if (!strcmp(a, "--seconds"))
			opt.seconds = (unsigned)tool_number("churn", a, argv[++i], 0, 86400 * 7);
		else if (!strcmp(a, "--sources"))
			opt.sources = (unsigned)tool_number("churn", a, argv[++i], 1, 254);
		else if (!strcmp(a, "--progress-ms"))
			opt.progress_ms = (unsigned)tool_number("churn", a, argv[++i], 1, 3600000);
		else if (!strcmp(a, "--hold"))
			opt.hold = tool_number("churn", a, argv[++i], 0, 10000000);
		else if (!strcmp(a, "--hold-seconds"))
			opt.hold_seconds = (unsigned)tool_number("churn", a, argv[++i], 0, 86400);
		else if (!strcmp(a, "--total"))
			opt.total = tool_number("churn", a, argv[++i], 0, UINT64_MAX);
		else if (!strcmp(a, "--concurrent"))
			opt.concurrent = tool_number("churn", a, argv[++i], 1, 10000000);
		else
			usage();
	}
	if (opt.port <= 0 || !opt.threads || !opt.progress_ms || !opt.sources ||
	    opt.sources > 254 || (!opt.hold == !opt.total) || (opt.total && !opt.concurrent))
		usage();
	server.sin_family = AF_INET;
	server.sin_port = htons((uint16_t)opt.port);
	if (inet_pton(AF_INET, opt.host, &server.sin_addr) != 1)
		usage();
	signal(SIGPIPE, SIG_IGN);
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	want = opt.hold ? opt.hold : opt.total;
	if (opt.hold && opt.hold + 64 > rl.rlim_cur) {
		fprintf(stderr, "churn: --hold %" PRIu64 " needs more descriptors than %llu\n",
			opt.hold, (unsigned long long)rl.rlim_cur);
		return 2;
	}
	ws = calloc(opt.threads, sizeof(*ws));
	th = calloc(opt.threads, sizeof(*th));
	next_id = mix((uint64_t)getpid() ^ now_ms()) & 0xffffffffffull; /* ids differ per run */
	for (unsigned i = 0; i < opt.threads; i++) {
		uint64_t share = want / opt.threads + (i < want % opt.threads);
		uint64_t conc = opt.hold ? share
					 : opt.concurrent / opt.threads +
						   (i < opt.concurrent % opt.threads);

		ws[i].idx = i;
		ws[i].quota = share;
		ws[i].slots = (unsigned)(conc < share ? conc : share);
		ws[i].c = calloc(ws[i].slots ? ws[i].slots : 1, sizeof(struct conn));
		ws[i].rng = mix(i + 1);
		ws[i].ok = true;
		for (unsigned k = 0; k < ws[i].slots; k++) {
			ws[i].c[k].fd = -1;
			if (opt.http && !(ws[i].c[k].resp = malloc(RESP_MAX))) {
				fprintf(stderr, "churn: out of memory\n");
				return 1;
			}
		}
	}
	t0 = now_ms();
	deadline = t0 + (uint64_t)opt.seconds * 1000;
	last_progress = t0;
	for (unsigned i = 0; i < opt.threads; i++)
		pthread_create(&th[i], NULL, run, &ws[i]);

	for (;;) {
		uint64_t t = now_ms();

		usleep(20000);
		if (t - last_progress >= opt.progress_ms) {
			last_progress = t;
			progress();
		}
		if (opt.hold && !held && atomic_load(&n_established) == opt.hold) {
			printf("hold: %" PRIu64 " connections open, %" PRIu64
			       " %s verified (%.1f s)\n",
			       opt.hold, atomic_load(&n_verified),
			       opt.http ? "responses" : "echoes", (double)(t - t0) / 1000.0);
			fflush(stdout);
			held = true;
			for (uint64_t until = now_ms() + (uint64_t)opt.hold_seconds * 1000;
			     now_ms() < until && !atomic_load(&n_errors);)
				usleep(20000);
			atomic_store(&release_hold, true);
			break;
		}
		if (opt.hold && atomic_load(&n_errors)) {
			atomic_store(&give_up, true);
			break;
		}
		if (!opt.hold && atomic_load(&threads_done) == opt.threads)
			break;
		if (t >= deadline) {
			fprintf(stderr, "churn: not done within %u s\n", opt.seconds);
			ok = false;
			atomic_store(&give_up, true);
			break;
		}
	}
	for (unsigned i = 0; i < opt.threads; i++) {
		pthread_join(th[i], NULL);
		ok = ok && ws[i].ok;
		for (unsigned k = 0; k < ws[i].slots; k++)
			free(ws[i].c[k].resp);
		free(ws[i].c);
	}
	progress();
	if (opt.hold && !held)
		ok = false;
	if (!opt.hold && atomic_load(&n_closed) < opt.total)
		ok = false;
	printf("churn: %s: opened %" PRIu64 ", closed %" PRIu64 ", %s verified %" PRIu64
	       ", errors %" PRIu64 " in %.1f s\n",
	       ok && !atomic_load(&n_errors) ? "ok" : "FAILED", atomic_load(&n_opened),
	       atomic_load(&n_closed), opt.http ? "responses" : "echoes", atomic_load(&n_verified),
	       atomic_load(&n_errors), (double)(now_ms() - t0) / 1000.0);
	free(ws);
	free(th);
	return ok && !atomic_load(&n_errors) ? 0 : 1;
}
