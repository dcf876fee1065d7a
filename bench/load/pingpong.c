// SPDX-License-Identifier: MIT
/*
 * pingpong: the load client of issue 4's echo benchmark.
 *
 * N connections; on each, send S bytes, wait for all S to come back, check every byte, send
 * the next message. The bytes of a message depend on the connection and the message's
 * sequence number, so a reply that is stale, shifted or crossed with another connection's
 * is caught. Runs a warm-up, then a measured window of T seconds, then stops, always.
 *
 * Connections are spread over -t threads; a thread with several connections drives them
 * with level-triggered epoll on non-blocking sockets, a thread with exactly one connection
 * uses plain blocking write/read for messages up to 64 KiB (the cheapest a client can be at
 * 1 connection; -E forces epoll there too).
 *
 * With -P PID the client samples the server's utime+stime from /proc/PID/stat at the start
 * and end of the measured window, so the server CPU per message covers the same window as
 * the message count. With -L it records each message's round-trip time into a log-linear
 * histogram (1.6% resolution) and reports percentiles.
 *
 * With -r RATE a message may start only with a token from a bucket filled at RATE per second
 * (split over the threads); connections whose next message waits for a token queue in order
 * and are started at most 100 us late. Servers are then compared at the same load, where the
 * cost of sleeping and waking counts, instead of each at the limit of two saturated CPUs.
 * The round-trip time is measured from the send, so pacing does not add to it.
 *
 * Output: one line of key=value pairs on stdout. Exit status 0, or 1 on any error, short
 * or wrong byte, early EOF, connect failure, or if no message completed in the window.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
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

#define MAX_SIZE (16u << 20)
#define MAX_EVENTS 512
#define BLOCKING_MAX_SIZE (64u << 10)
#define MAX_CPUS 8
#define POLL_MS 100 /* how often a waiting thread looks at the stop flag */

/* Histogram: values below 64 ns exact, then 32 buckets per power of two. */
#define HIST_SUB_BITS 5
#define HIST_BUCKETS (64 + (64 - 6) * 32)

enum phase { PHASE_WARMUP, PHASE_MEASURE, PHASE_STOP };

struct pconn {
	int fd;
	uint32_t id;
	uint64_t seq;
	uint32_t sent;
	uint32_t rcvd;
	bool want_out;
	uint64_t t0;
	uint8_t *msg; /* the message in flight, as sent: what must come back */
};

struct worker {
	pthread_t tid;
	/* -r pacing: a token bucket, and the connections waiting for a token, in order */
	double tokens;
	uint64_t refilled_ns;
	struct pconn **paced;
	uint32_t paced_head, paced_len;
	int index;
	struct pconn *conns;
	uint32_t nconns;
	uint8_t *scratch;
	uint64_t *hist;
	_Alignas(64) _Atomic uint64_t msgs;
};

static struct {
	const char *host;
	int port;
	uint32_t conns;
	uint32_t size;
	double secs;
	double warmup;
	double grace;
	int threads;
	bool latency;
	bool force_epoll;
	long server_pid;
	double rate; /* -r: messages per second over all connections, 0 = as fast as possible */
	int cpus[MAX_CPUS]; /* -C: report how busy these CPUs were in the window */
	int ncpus;
} opt = {
	.host = "127.0.0.1",
	.port = -1,
	.conns = 1,
	.size = 64,
	.secs = 5.0,
	.warmup = 0.5,
	.grace = 5.0,
	.threads = 1,
};

static _Atomic int phase = PHASE_WARMUP;
static _Atomic int failed;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = { .tv_sec = (time_t)(t / 1000000000u),
			       .tv_nsec = (long)(t % 1000000000u) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* Report the first failure, make every thread stop. */
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	if (atomic_exchange(&failed, 1) == 0) {
		fputs("pingpong: ", stderr);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	atomic_store(&phase, PHASE_STOP);
}

static void on_alarm(int sig)
{
	static const char msg[] = "pingpong: hard deadline passed, giving up\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0) {
		/* nothing more to do */
	}
	_exit(1);
}

/* The bytes of message seq on connection id. */
static void fill_msg(uint8_t *p, uint32_t size, uint32_t id, uint64_t seq)
{
	uint64_t x = ((uint64_t)id << 40) ^ seq ^ 0x9e3779b97f4a7c15ull;
	uint32_t i;

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	for (i = 0; i + 8 <= size; i += 8) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		memcpy(p + i, &x, 8);
	}
	x = x * 6364136223846793005ull + 1442695040888963407ull;
	for (; i < size; i++, x >>= 8)
		p[i] = (uint8_t)(x >> 32);
}

static unsigned int hist_index(uint64_t v)
{
	unsigned int e;

	if (v < 64)
		return (unsigned int)v;
	e = 63u - (unsigned int)__builtin_clzll(v);
	return (e - HIST_SUB_BITS) * 32u + (unsigned int)(v >> (e - HIST_SUB_BITS));
}

static uint64_t hist_value(unsigned int idx)
{
	unsigned int e;
	uint64_t m;

	if (idx < 64)
		return idx;
	e = idx / 32u + 4u;
	m = idx % 32u + 32u;
	return (m << (e - HIST_SUB_BITS)) + ((1ull << (e - HIST_SUB_BITS)) >> 1);
}

static double hist_percentile(const uint64_t *h, uint64_t total, double p)
{
	uint64_t target = (uint64_t)(p * (double)total + 0.999999), sum = 0;

	if (target == 0)
		target = 1;
	for (unsigned int i = 0; i < HIST_BUCKETS; i++) {
		sum += h[i];
		if (sum >= target)
			return (double)hist_value(i) / 1000.0;
	}
	return 0.0;
}

static void complete_msg(struct worker *w, struct pconn *c)
{
	if (opt.latency && atomic_load_explicit(&phase, memory_order_relaxed) == PHASE_MEASURE)
		w->hist[hist_index(now_ns() - c->t0)]++;
	atomic_store_explicit(&w->msgs, atomic_load_explicit(&w->msgs, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	c->seq++;
	c->sent = 0;
	c->rcvd = 0;
}

/* Account for n bytes read into buf; false (and fail()) on a wrong or extra byte. */
static bool check_bytes(struct pconn *c, const uint8_t *buf, size_t n)
{
	if (n > opt.size - c->rcvd) {
		fail("conn %u msg %llu: %zu bytes beyond the %u sent", c->id,
		     (unsigned long long)c->seq, n - (opt.size - c->rcvd), opt.size);
		return false;
	}
	if (memcmp(buf, c->msg + c->rcvd, n) != 0) {
		size_t i = 0;

		while (buf[i] == c->msg[c->rcvd + i])
			i++;
		fail("conn %u msg %llu: byte %zu is 0x%02x, expected 0x%02x", c->id,
		     (unsigned long long)c->seq, c->rcvd + i, buf[i], c->msg[c->rcvd + i]);
		return false;
	}
	c->rcvd += (uint32_t)n;
	return true;
}

/* --- one connection, blocking sockets ---------------------------------------------------- */

static void run_blocking(struct worker *w)
{
	struct pconn *c = &w->conns[0];
	struct timeval tv = { .tv_sec = 0, .tv_usec = POLL_MS * 1000 };
	int fl = fcntl(c->fd, F_GETFL);

	fcntl(c->fd, F_SETFL, fl & ~O_NONBLOCK);
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));

	while (atomic_load_explicit(&phase, memory_order_relaxed) != PHASE_STOP) {
		fill_msg(c->msg, opt.size, c->id, c->seq);
		if (opt.latency)
			c->t0 = now_ns();
		while (c->sent < opt.size) {
			ssize_t n = write(c->fd, c->msg + c->sent, opt.size - c->sent);

			if (n > 0) {
				c->sent += (uint32_t)n;
			} else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
				if (atomic_load_explicit(&phase, memory_order_relaxed) ==
				    PHASE_STOP)
					return;
			} else {
				fail("conn %u: write: %s", c->id, n < 0 ? strerror(errno) : "0");
				return;
			}
		}
		while (c->rcvd < opt.size) {
			ssize_t n = read(c->fd, w->scratch, opt.size - c->rcvd + 1);

			if (n > 0) {
				if (!check_bytes(c, w->scratch, (size_t)n))
					return;
			} else if (n == 0) {
				fail("conn %u: EOF after %u of %u bytes of msg %llu", c->id,
				     c->rcvd, opt.size, (unsigned long long)c->seq);
				return;
			} else if (errno == EAGAIN || errno == EINTR) {
				if (atomic_load_explicit(&phase, memory_order_relaxed) ==
				    PHASE_STOP)
					return;
			} else {
				fail("conn %u: read: %s", c->id, strerror(errno));
				return;
			}
		}
		complete_msg(w, c);
	}
}

/* --- many connections, epoll --------------------------------------------------------------- */

static bool set_out(int ep, struct pconn *c, bool on)
{
	struct epoll_event ev = { .events = EPOLLIN | (on ? EPOLLOUT : 0), .data.ptr = c };

	if (c->want_out == on)
		return true;
	c->want_out = on;
	if (epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev) < 0) {
		fail("epoll_ctl: %s", strerror(errno));
		return false;
	}
	return true;
}

/* Send what is left of the message in flight; asks for EPOLLOUT when the socket is full. */
static bool send_some(int ep, struct pconn *c)
{
	while (c->sent < opt.size) {
		ssize_t n = write(c->fd, c->msg + c->sent, opt.size - c->sent);

		if (n > 0) {
			c->sent += (uint32_t)n;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && errno == EAGAIN) {
			return set_out(ep, c, true);
		} else {
			fail("conn %u: write: %s", c->id, n < 0 ? strerror(errno) : "0");
			return false;
		}
	}
	return set_out(ep, c, false);
}

static bool start_msg(int ep, struct pconn *c)
{
	fill_msg(c->msg, opt.size, c->id, c->seq);
	if (opt.latency)
		c->t0 = now_ns();
	return send_some(ep, c);
}

static bool on_in(struct worker *w, int ep, struct pconn *c)
{
	size_t room = opt.size - c->rcvd + 1; /* +1 to see a byte too many */
	ssize_t n = read(c->fd, w->scratch, room);

	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return true;
		fail("conn %u: read: %s", c->id, strerror(errno));
		return false;
	}
	if (n == 0) {
		fail("conn %u: EOF after %u of %u bytes of msg %llu", c->id, c->rcvd, opt.size,
		     (unsigned long long)c->seq);
		return false;
	}
	if (!check_bytes(c, w->scratch, (size_t)n))
		return false;
	if (c->rcvd < opt.size)
		return true;
	if (c->sent < opt.size) {
		fail("conn %u: got %u bytes back but sent only %u", c->id, c->rcvd, c->sent);
		return false;
	}
	complete_msg(w, c);
	if (opt.rate > 0) {
		if (w->tokens < 1.0) {
			w->paced[(w->paced_head + w->paced_len++) % w->nconns] = c;
			return true;
		}
		w->tokens -= 1.0;
	}
	return start_msg(ep, c);
}

/* -r: add the tokens earned since the last refill (at most one millisecond's worth beyond
 * what waits, so an idle spell does not turn into a burst) and start waiting messages. */
static bool pace(struct worker *w, int ep)
{
	uint64_t now = now_ns();
	double per_thread = opt.rate / opt.threads;
	double cap = per_thread / 1000.0 + 1.0;

	w->tokens += per_thread * (double)(now - w->refilled_ns) / 1e9;
	w->refilled_ns = now;
	if (w->tokens > cap)
		w->tokens = cap;
	while (w->paced_len && w->tokens >= 1.0) {
		struct pconn *c = w->paced[w->paced_head];

		w->paced_head = (w->paced_head + 1) % w->nconns;
		w->paced_len--;
		w->tokens -= 1.0;
		if (!start_msg(ep, c))
			return false;
	}
	return true;
}

static void run_epoll(struct worker *w)
{
	struct epoll_event evs[MAX_EVENTS];
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep < 0) {
		fail("epoll_create1: %s", strerror(errno));
		return;
	}
	for (uint32_t i = 0; i < w->nconns; i++) {
		struct pconn *c = &w->conns[i];
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };

		if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) < 0) {
			fail("epoll_ctl: %s", strerror(errno));
			goto out;
		}
	}
	for (uint32_t i = 0; i < w->nconns; i++)
		if (!start_msg(ep, &w->conns[i]))
			goto out;

	w->refilled_ns = now_ns();
	while (atomic_load_explicit(&phase, memory_order_relaxed) != PHASE_STOP) {
		/* Paced messages wait at most 100 us past their due time. */
		struct timespec tmo = { .tv_sec = 0, .tv_nsec = 100000 };
		int n;

		if (!w->paced_len) {
			tmo.tv_sec = POLL_MS / 1000;
			tmo.tv_nsec = (POLL_MS % 1000) * 1000000L;
		}
		n = epoll_pwait2(ep, evs, MAX_EVENTS, &tmo, NULL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			fail("epoll_wait: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++) {
			struct pconn *c = evs[i].data.ptr;

			if ((evs[i].events & EPOLLOUT) && !send_some(ep, c))
				goto out;
			if ((evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) && !on_in(w, ep, c))
				goto out;
		}
		if (opt.rate > 0 && !pace(w, ep))
			goto out;
	}
out:
	close(ep);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	/*
	 * Blocking mode writes the whole message before reading, so it is only used while a
	 * message fits in the socket buffers; past that, epoll drives both directions at once.
	 */
	if (w->nconns == 1 && !opt.force_epoll && opt.rate <= 0 && opt.size <= BLOCKING_MAX_SIZE)
		run_blocking(w);
	else
		run_epoll(w);
	return NULL;
}

/* --- setup ---------------------------------------------------------------------------------- */

static void raise_nofile(uint64_t need)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_max < need) {
		struct rlimit want = { .rlim_cur = need, .rlim_max = need };

		if (setrlimit(RLIMIT_NOFILE, &want) == 0)
			return;
	}
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

/* Blocking connect bounded by the time left until deadline; the socket ends non-blocking. */
static int connect_one(const struct sockaddr_in *sa, uint64_t deadline)
{
	int fd, one = 1;
	uint64_t now = now_ns();
	uint64_t left = deadline > now ? deadline - now : 1000000;
	struct timeval tv = { .tv_sec = (time_t)(left / 1000000000u),
			      .tv_usec = (long)(left % 1000000000u / 1000u) };

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0) {
		if (errno == EINTR)
			continue;
		close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return fd;
}

/* utime + stime of a process (all its threads), in seconds; negative if unreadable. */
static double proc_cpu_seconds(long pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1.0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* comm may hold spaces and parentheses */
	if (!p)
		return -1.0;
	/* after ") ": state(3) ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
	 * utime(14) stime(15) */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1.0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* Busy (user..softirq) and steal seconds of one CPU from /proc/stat; false if unreadable. */
static bool cpu_busy_seconds(int cpu, double *busy, double *steal)
{
	unsigned long long v[8];
	char line[256], name[16];
	bool found = false;
	FILE *f = fopen("/proc/stat", "r");

	if (!f)
		return false;
	snprintf(name, sizeof(name), "cpu%d ", cpu);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, name, strlen(name)) != 0)
			continue;
		/* user nice system idle iowait irq softirq steal */
		if (sscanf(line + strlen(name), "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
			   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
			double hz = (double)sysconf(_SC_CLK_TCK);

			*busy = (double)(v[0] + v[1] + v[2] + v[5] + v[6]) / hz;
			*steal = (double)v[7] / hz;
			found = true;
		}
		break;
	}
	fclose(f);
	return found;
}

/* This process's user+system time, all threads, in seconds. */
static double self_cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static uint64_t total_msgs(struct worker *ws)
{
	uint64_t sum = 0;

	for (int i = 0; i < opt.threads; i++)
		sum += atomic_load_explicit(&ws[i].msgs, memory_order_relaxed);
	return sum;
}

/* Sleep until t, waking early if a thread failed. */
static bool wait_until(uint64_t t)
{
	while (!atomic_load(&failed)) {
		uint64_t now = now_ns();

		if (now >= t)
			return true;
		sleep_until(t - now > POLL_MS * 1000000ull ? now + POLL_MS * 1000000ull : t);
	}
	return false;
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s -p PORT [-H HOST] [-c CONNS] [-s SIZE] [-d SECS] [-w WARMUP_SECS]\n"
		"          [-t THREADS] [-g CONNECT_GRACE_SECS] [-P SERVER_PID] [-C CPU,..] [-L] [-E] [-r RATE]\n"
		"  -c connections (1)   -s message bytes (64)   -d measured seconds (5)\n"
		"  -w warm-up seconds (0.5)   -t client threads (1)   -g connect grace (5)\n"
		"  -P sample this server's utime+stime over the measured window\n"
		"  -C report how busy (and stolen) these CPUs were over the window, as fractions\n"
		"  -L latency percentiles   -E epoll even for a single connection per thread\n"
		"  -r at most RATE messages per second over all connections (a token bucket, 100 us steps):\n"
		"     compares servers at the same load instead of each at its limit\n",
		argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct worker *ws;
	struct pconn *conns;
	uint64_t t_begin, deadline, m0, m1, t0, t1;
	double cpu0 = -1.0, cpu1 = -1.0, secs;
	double busy0[MAX_CPUS], busy1[MAX_CPUS], steal0[MAX_CPUS], steal1[MAX_CPUS];
	double self0 = 0, self1 = 0;
	bool busy_ok;
	char *tok, *save;
	int ch, rc = 0;

	while ((ch = getopt(argc, argv, "H:p:c:s:d:w:t:g:P:C:LEr:")) != -1) {
		switch (ch) {
		case 'H':
			opt.host = optarg;
			break;
		case 'p':
			opt.port = atoi(optarg);
			break;
		case 'c':
			opt.conns = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 's':
			opt.size = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'd':
			opt.secs = atof(optarg);
			break;
		case 'w':
			opt.warmup = atof(optarg);
			break;
		case 't':
			opt.threads = atoi(optarg);
			break;
		case 'g':
			opt.grace = atof(optarg);
			break;
		case 'P':
			opt.server_pid = atol(optarg);
			break;
		case 'C':
			for (tok = strtok_r(optarg, ",", &save); tok && opt.ncpus < MAX_CPUS;
			     tok = strtok_r(NULL, ",", &save))
				opt.cpus[opt.ncpus++] = atoi(tok);
			break;
		case 'L':
			opt.latency = true;
			break;
		case 'E':
			opt.force_epoll = true;
			break;
		case 'r':
			opt.rate = atof(optarg);
			break;
		default:
			usage(argv[0]);
		}
	}
	if (optind != argc || opt.port <= 0 || opt.port > 65535 || opt.conns == 0 ||
	    opt.size == 0 || opt.size > MAX_SIZE || opt.secs <= 0 || opt.warmup < 0 ||
	    opt.threads <= 0 || opt.grace <= 0 || opt.rate < 0)
		usage(argv[0]);
	if ((uint32_t)opt.threads > opt.conns)
		opt.threads = (int)opt.conns;
	sa.sin_port = htons((uint16_t)opt.port);
	if (inet_pton(AF_INET, opt.host, &sa.sin_addr) != 1) {
		fprintf(stderr, "pingpong: bad IPv4 address '%s'\n", opt.host);
		return 2;
	}

	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, on_alarm);
	/* Whatever happens, the process ends: grace + warm-up + window + 5 s. */
	alarm((unsigned int)(opt.grace + opt.warmup + opt.secs + 5.999));
	raise_nofile((uint64_t)opt.conns + 64);

	conns = calloc(opt.conns, sizeof(*conns));
	ws = aligned_alloc(64, sizeof(*ws) * (size_t)opt.threads);
	if (!conns || !ws) {
		fprintf(stderr, "pingpong: out of memory\n");
		return 1;
	}
	memset(ws, 0, sizeof(*ws) * (size_t)opt.threads);

	t_begin = now_ns();
	deadline = t_begin + (uint64_t)(opt.grace * 1e9);
	for (uint32_t i = 0; i < opt.conns; i++) {
		conns[i].id = i;
		conns[i].fd = connect_one(&sa, deadline);
		if (conns[i].fd < 0) {
			fprintf(stderr, "pingpong: connect %u of %u to %s:%d: %s\n", i + 1,
				opt.conns, opt.host, opt.port,
				errno == EINPROGRESS || errno == EAGAIN ? "timed out (-g)" :
									  strerror(errno));
			for (uint32_t j = 0; j < i; j++)
				close(conns[j].fd);
			return 1;
		}
		conns[i].msg = malloc(opt.size);
		if (!conns[i].msg) {
			fprintf(stderr, "pingpong: out of memory\n");
			return 1;
		}
	}

	/* Connection i goes to thread i % threads; each thread's are contiguous in a copy. */
	for (int t = 0; t < opt.threads; t++) {
		struct worker *w = &ws[t];
		uint32_t k = 0;

		w->index = t;
		w->nconns = opt.conns / (uint32_t)opt.threads +
			    ((uint32_t)t < opt.conns % (uint32_t)opt.threads ? 1 : 0);
		w->conns = calloc(w->nconns, sizeof(*w->conns));
		w->scratch = malloc((size_t)opt.size + 1);
		w->hist = calloc(HIST_BUCKETS, sizeof(*w->hist));
		w->paced = calloc(w->nconns, sizeof(*w->paced));
		w->tokens = 0.0;
		w->paced_head = w->paced_len = 0;
		if (!w->conns || !w->scratch || !w->hist || !w->paced) {
			fprintf(stderr, "pingpong: out of memory\n");
			return 1;
		}
		for (uint32_t i = (uint32_t)t; i < opt.conns; i += (uint32_t)opt.threads)
			w->conns[k++] = conns[i];
	}
	for (int t = 0; t < opt.threads; t++) {
		if (pthread_create(&ws[t].tid, NULL, worker_main, &ws[t]) != 0) {
			fprintf(stderr, "pingpong: pthread_create failed\n");
			_exit(1);
		}
	}

	busy_ok = opt.ncpus > 0;
	t0 = now_ns() + (uint64_t)(opt.warmup * 1e9);
	m0 = m1 = 0;
	t1 = t0;
	if (wait_until(t0)) {
		if (opt.server_pid)
			cpu0 = proc_cpu_seconds(opt.server_pid);
		for (int i = 0; i < opt.ncpus && busy_ok; i++)
			busy_ok = cpu_busy_seconds(opt.cpus[i], &busy0[i], &steal0[i]);
		self0 = self_cpu_seconds();
		t0 = now_ns();
		m0 = total_msgs(ws);
		atomic_store(&phase, PHASE_MEASURE);
		if (wait_until(t0 + (uint64_t)(opt.secs * 1e9))) {
			m1 = total_msgs(ws);
			t1 = now_ns();
			self1 = self_cpu_seconds();
			if (opt.server_pid)
				cpu1 = proc_cpu_seconds(opt.server_pid);
			for (int i = 0; i < opt.ncpus && busy_ok; i++)
				busy_ok = cpu_busy_seconds(opt.cpus[i], &busy1[i], &steal1[i]);
		}
	}
	atomic_store(&phase, PHASE_STOP);
	for (int t = 0; t < opt.threads; t++)
		pthread_join(ws[t].tid, NULL);

	if (atomic_load(&failed))
		rc = 1;
	secs = (double)(t1 - t0) / 1e9;
	if (rc == 0 && m1 == m0) {
		fprintf(stderr, "pingpong: no message completed in the measured window\n");
		rc = 1;
	}
	if (rc == 0) {
		uint64_t msgs = m1 - m0;

		printf("conns=%u size=%u threads=%d secs=%.3f msgs=%llu msgs_total=%llu "
		       "msgs_per_s=%.1f",
		       opt.conns, opt.size, opt.threads, secs, (unsigned long long)msgs,
		       (unsigned long long)total_msgs(ws), (double)msgs / secs);
		printf(" client_cpu_util=%.3f", (self1 - self0) / secs);
		for (int i = 0; busy_ok && i < opt.ncpus; i++)
			printf(" cpu%d_busy=%.3f cpu%d_steal=%.3f", opt.cpus[i],
			       (busy1[i] - busy0[i]) / secs, opt.cpus[i],
			       (steal1[i] - steal0[i]) / secs);
		if (opt.server_pid) {
			if (cpu0 < 0 || cpu1 < 0) {
				fprintf(stderr, "pingpong: cannot read /proc/%ld/stat\n",
					opt.server_pid);
				rc = 1;
			} else {
				printf(" server_cpu_s=%.2f server_cpu_util=%.3f "
				       "server_cpu_us_per_msg=%.4f",
				       cpu1 - cpu0, (cpu1 - cpu0) / secs,
				       (cpu1 - cpu0) * 1e6 / (double)msgs);
			}
		}
		if (opt.latency) {
			uint64_t *h = ws[0].hist, n = 0;

			for (int t = 1; t < opt.threads; t++)
				for (unsigned int i = 0; i < HIST_BUCKETS; i++)
					h[i] += ws[t].hist[i];
			for (unsigned int i = 0; i < HIST_BUCKETS; i++)
				n += h[i];
			printf(" p50_us=%.1f p90_us=%.1f p99_us=%.1f p999_us=%.1f",
			       hist_percentile(h, n, 0.50), hist_percentile(h, n, 0.90),
			       hist_percentile(h, n, 0.99), hist_percentile(h, n, 0.999));
		}
		printf("\n");
	}

	for (uint32_t i = 0; i < opt.conns; i++) {
		close(conns[i].fd);
		free(conns[i].msg);
	}
	for (int t = 0; t < opt.threads; t++) {
		free(ws[t].conns);
		free(ws[t].scratch);
		free(ws[t].hist);
	}
	free(ws);
	free(conns);
	return rc;
}
