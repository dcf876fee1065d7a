/* SPDX-License-Identifier: MIT */
/*
 * http_test.h - the end-to-end fixture of the http tests: a server on a
 * one-worker runtime (a listener on 127.0.0.1 port 0, or a Unix socket),
 * and a plain blocking-socket client on a thread of its own, which is the
 * test's scenario. The client records what it saw with gt_check_*() (safe
 * off a worker) and, when it returns, the fixture shuts the runtime down;
 * the test asserts after ht_run() returned.
 *
 *	static void scenario(struct ht *h) { ... ht_connect(h) ... }
 *	struct ht h;
 *	ht_init(&h);
 *	giong_http_router_add(h.router, "GET", "/x", handler, NULL);
 *	ht_run(&h, scenario);       // fails the test on any failed check
 *	assert_int_equal(h.stats.requests, 3);
 */
#ifndef GIONG_HTTP_TEST_H
#define GIONG_HTTP_TEST_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "giong_test.h"

#include <giong/http.h>

struct ht;
typedef void (*ht_client_fn)(struct ht *h);

struct ht {
	struct giong_http_router *router;      /* add routes before ht_run() */
	struct giong_http_limits limits;       /* change before ht_run() */
	struct giong_http_server_options opts; /* opts.limits points to limits */
	struct giong_config cfg;               /* gt_config(1) */
	const char *unix_path;                 /* serve on this Unix socket instead */
	bool regular_fds; /* TCP: accept regular descriptors (peer addresses), not direct */
	void *arg;        /* the scenario's */
	/* set by ht_run() */
	struct giong_http_server *srv;
	struct giong_runtime *rt;
	int port;
	ht_client_fn client;
	pthread_t thread;
	int setup; /* 0, or the error that stopped the server from serving */
	int serve_ret;
	struct giong_http_stats stats; /* worker 0's, after the run */
	struct giong_stats rt_stats;   /* worker 0's runtime counters, after the run */
};

static inline void ht_init(struct ht *h)
{
	memset(h, 0, sizeof(*h));
	assert_int_equal(giong_http_router_new(&h->router), 0);
	giong_http_limits_init(&h->limits);
	h->opts.limits = &h->limits;
	h->cfg = gt_config(1);
	h->cfg.shutdown_grace_ms = 5000;
}

static void *ht_client_thread(void *arg)
{
	struct ht *h = arg;

	h->client(h);
	giong_runtime_shutdown(h->rt);
	return NULL;
}

static inline void ht_main(unsigned worker, void *arg)
{
	struct ht *h = arg;
	struct giong_listen_options lo = {.regular_fds = h->regular_fds};
	struct giong_listener *l;
	struct giong_addr a;
	int r;

	(void)worker;
	r = h->unix_path ? giong_unix_listen(h->unix_path, NULL, &l)
			 : giong_tcp_listen("127.0.0.1:0", &lo, &l);
	if (r) {
		h->setup = r;
		return;
	}
	if (!h->unix_path && giong_listener_addr(l, &a) == 0)
		h->port = giong_addr_port(&a);
	if ((r = pthread_create(&h->thread, NULL, ht_client_thread, h))) {
		h->setup = -r;
		giong_listener_close(l);
		return;
	}
	h->serve_ret = giong_http_serve(h->srv, l);
	giong_listener_close(l);
}

/* Run the server with @client as the scenario; fail the test on a failed
 * check, a server that could not start, or memory left behind. */
static inline void ht_run(struct ht *h, ht_client_fn client)
{
	int run;

	h->client = client;
	if (h->unix_path)
		unlink(h->unix_path);
	assert_int_equal(giong_http_server_new(h->router, &h->opts, &h->srv), 0);
	assert_int_equal(giong_runtime_new(&h->cfg, &h->rt), 0);
	run = giong_runtime_run(h->rt, ht_main, h);
	if (h->setup == 0)
		pthread_join(h->thread, NULL);
	giong_runtime_stats(h->rt, 0, &h->rt_stats);
	giong_http_server_stats(h->srv, 0, &h->stats);
	assert_int_equal(giong_runtime_free(h->rt), 0);
	assert_int_equal(giong_http_server_free(h->srv), 0);
	giong_http_router_free(h->router);
	if (h->unix_path)
		unlink(h->unix_path);
	gt_checks_assert();
	assert_int_equal(run, 0);
	assert_int_equal(h->setup, 0);
	assert_int_equal(h->serve_ret, 0);
}

/* ---------------------------------------------------- the plain client */

/* A blocking connection to the server, reads and writes bounded by 10 s.
 * Returns the fd or -errno. */
static inline int ht_connect(const struct ht *h)
{
	struct timeval tv = {10, 0};
	int fd;

	if (h->unix_path) {
		struct sockaddr_un sa = {.sun_family = AF_UNIX};

		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", h->unix_path);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			close(fd);
			return -errno;
		}
	} else {
		struct sockaddr_in sa = {.sin_family = AF_INET,
					 .sin_port = htons((uint16_t)h->port)};
		int one = 1;

		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			int e = -errno;

			close(fd);
			return e;
		}
		if (fd >= 0)
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
}

/* Send all @len bytes. Returns 0 or -errno. */
static inline int ht_send(int fd, const void *buf, size_t len)
{
	ssize_t r = gt_write_all(fd, buf, len);

	return r < 0 ? (int)r : 0;
}

static inline int ht_send_str(int fd, const char *s)
{
	return ht_send(fd, s, strlen(s));
}

/* What the client keeps of a connection: bytes read past one response
 * (the next pipelined one's) stay in buf. */
struct ht_conn {
	int fd;
	char *buf;
	size_t len, cap;
	bool eof;
};

struct ht_resp {
	int status;
	char head[16384]; /* status line and fields, NUL-terminated */
	char *body;       /* malloc'd (free with ht_resp_free()), NUL-terminated */
	size_t body_len;
	bool chunked;
};

static inline void ht_conn_init(struct ht_conn *c, int fd)
{
	memset(c, 0, sizeof(*c));
	c->fd = fd;
}

static inline void ht_conn_close(struct ht_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->buf);
	c->fd = -1;
	c->buf = NULL;
}

static inline void ht_resp_free(struct ht_resp *r)
{
	free(r->body);
	r->body = NULL;
}

/* Read more into c->buf. 1, 0 at end of stream, -errno. */
static inline int ht_fill(struct ht_conn *c)
{
	ssize_t n;

	if (c->len + 1 >= c->cap) { /* one byte kept for a NUL after the data */
		size_t cap = c->cap ? c->cap * 2 : 65536;
		char *b = realloc(c->buf, cap);

		if (!b)
			return -ENOMEM;
		c->buf = b;
		c->cap = cap;
	}
	do
		n = recv(c->fd, c->buf + c->len, c->cap - c->len - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0) {
		c->eof = true;
		return 0;
	}
	c->len += (size_t)n;
	c->buf[c->len] = '\0'; /* sscanf() and strtoull() stop there */
	return 1;
}

static inline void ht_drop(struct ht_conn *c, size_t n)
{
	memmove(c->buf, c->buf + n, c->len - n);
	c->len -= n;
	c->buf[c->len] = '\0';
}

/* The value of field @name (case-insensitive) in @r's head into @out;
 * 1 if found, 0 if not. */
static inline int ht_header(const struct ht_resp *r, const char *name, char *out, size_t size)
{
	size_t nl = strlen(name);

	for (const char *p = strstr(r->head, "\r\n"); p && p[2]; p = strstr(p + 2, "\r\n")) {
		const char *line = p + 2;

		if (!strncasecmp(line, name, nl) && line[nl] == ':') {
			const char *v = line + nl + 1, *e = strstr(v, "\r\n");

			while (*v == ' ' || *v == '\t')
				v++;
			if (!e)
				e = v + strlen(v);
			snprintf(out, size, "%.*s", (int)(e - v), v);
			return 1;
		}
	}
	return 0;
}

/*
 * Read one response (@head_request: to a HEAD, without a body). Returns 0,
 * or -errno: -ECONNRESET/-EPIPE, 0 bytes before a status line is -ENODATA
 * (the server closed), -EBADMSG for a response this reader cannot parse.
 * Interim 1xx responses are returned like any other.
 */
static inline int ht_read_response(struct ht_conn *c, struct ht_resp *r, bool head_request)
{
	char v[64];
	char *end;
	size_t hl;
	int f;

	memset(r, 0, sizeof(*r));
	while (!(end = c->len ? memmem(c->buf, c->len, "\r\n\r\n", 4) : NULL)) {
		if ((f = ht_fill(c)) <= 0)
			return f == 0 ? (c->len ? -EBADMSG : -ENODATA) : f;
	}
	hl = (size_t)(end - c->buf) + 4;
	if (hl >= sizeof(r->head) || sscanf(c->buf, "HTTP/1.1 %d ", &r->status) != 1)
		return -EBADMSG;
	memcpy(r->head, c->buf, hl);
	r->head[hl] = '\0';
	ht_drop(c, hl);
	if (head_request || r->status < 200 || r->status == 204 || r->status == 304) {
		r->body = calloc(1, 1);
		return 0;
	}
	if (ht_header(r, "Transfer-Encoding", v, sizeof(v))) {
		r->chunked = true;
		for (;;) {
			char *le;
			unsigned long long n;

			while (!(le = c->len ? memmem(c->buf, c->len, "\r\n", 2) : NULL))
				if ((f = ht_fill(c)) <= 0)
					return f ? f : -EBADMSG;
			n = strtoull(c->buf, NULL, 16);
			ht_drop(c, (size_t)(le - c->buf) + 2);
			while (c->len < n + 2)
				if ((f = ht_fill(c)) <= 0)
					return f ? f : -EBADMSG;
			if (n == 0) {
				ht_drop(c, 2); /* no trailers from this server */
				break;
			}
			char *b = realloc(r->body, r->body_len + n + 1);
			if (!b)
				return -ENOMEM;
			r->body = b;
			memcpy(r->body + r->body_len, c->buf, n);
			r->body_len += n;
			r->body[r->body_len] = '\0';
			ht_drop(c, (size_t)n + 2);
		}
		if (!r->body)
			r->body = calloc(1, 1);
		return 0;
	}
	if (ht_header(r, "Content-Length", v, sizeof(v))) {
		size_t n = (size_t)strtoull(v, NULL, 10);

		while (c->len < n)
			if ((f = ht_fill(c)) <= 0)
				return f ? f : -EBADMSG;
		r->body = malloc(n + 1);
		if (!r->body)
			return -ENOMEM;
		memcpy(r->body, c->buf, n);
		r->body[n] = '\0';
		r->body_len = n;
		ht_drop(c, n);
		return 0;
	}
	/* Close-delimited (HTTP/1.0 streaming). */
	while ((f = ht_fill(c)) > 0)
		;
	if (f < 0)
		return f;
	r->body = malloc(c->len + 1);
	if (!r->body)
		return -ENOMEM;
	memcpy(r->body, c->buf, c->len);
	r->body[c->len] = '\0';
	r->body_len = c->len;
	ht_drop(c, c->len);
	return 0;
}

/* Whether the server closed the connection (end of stream, or a reset)
 * within @ms, with no byte more. 1 closed, 0 still open, -1 bytes came. */
static inline int ht_closed_within(struct ht_conn *c, int ms)
{
	struct pollfd p = {.fd = c->fd, .events = POLLIN};
	char b;
	ssize_t n;

	if (c->len)
		return -1;
	if (c->eof)
		return 1;
	if (poll(&p, 1, ms) <= 0)
		return 0;
	n = recv(c->fd, &b, 1, MSG_DONTWAIT);
	if (n == 0 || (n < 0 && errno == ECONNRESET))
		return 1;
	return n > 0 ? -1 : 0;
}

/* One request on a new connection, its response, and whether the server
 * closed after it (within 500 ms): 1, 0, or -1 (more bytes). -errno if the
 * exchange failed. */
static inline int ht_exchange(const struct ht *h, const char *req, size_t len, struct ht_resp *r,
			      bool head_request)
{
	struct ht_conn c;
	int fd = ht_connect(h), ret;

	if (fd < 0)
		return fd;
	ht_conn_init(&c, fd);
	ret = ht_send(fd, req, len);
	if (!ret)
		ret = ht_read_response(&c, r, head_request);
	if (!ret)
		ret = ht_closed_within(&c, 500);
	ht_conn_close(&c);
	return ret;
}

/* ------------------------------------- descriptors, memory, counters */

/* The resident memory of the process, in KiB (0 if unknown). */
static inline long ht_rss_kb(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

/* What GET /stats (ht_add_stats()) answers: the counters of the worker
 * that served it, read while it ran. */
struct ht_live {
	unsigned open, idle, fibers, stacks, bufs_total, bufs_free;
	unsigned long long accepted, requests, write_timeouts, idle_timeouts, limit_pauses;
};

static int ht_stats_handler(struct giong_http_request *req, struct giong_http_response *res,
			    void *ctx)
{
	const struct ht *h = ctx;
	struct giong_http_stats hs;
	struct giong_stats s;
	char body[512];
	int n;

	(void)req;
	if (giong_stats(&s) || giong_http_server_stats(h->srv, (unsigned)giong_worker_index(), &hs))
		return -EIO;
	n = snprintf(body, sizeof(body), "%u %u %u %u %u %u %llu %llu %llu %llu %llu", hs.open,
		     hs.idle, s.fibers_live, s.stacks_live, s.recvbufs_total, s.recvbufs_free,
		     (unsigned long long)hs.accepted, (unsigned long long)hs.requests,
		     (unsigned long long)hs.write_timeouts, (unsigned long long)hs.idle_timeouts,
		     (unsigned long long)hs.limit_pauses);
	return giong_http_response_send(res, body, (size_t)n);
}

/* Route GET /stats to the counters (before ht_run()). */
static inline void ht_add_stats(struct ht *h)
{
	assert_int_equal(giong_http_router_add(h->router, "GET", "/stats", ht_stats_handler, h), 0);
}

/* The counters, asked on a connection of their own (which is one of the
 * open ones and not idle while they are read). 0 or -errno. */
static inline int ht_get_stats(const struct ht *h, struct ht_live *o)
{
	static const char req[] = "GET /stats HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
	struct ht_resp r;
	int ret = ht_exchange(h, req, sizeof(req) - 1, &r, false);

	if (ret < 0)
		return ret;
	memset(o, 0, sizeof(*o));
	if (r.status != 200 ||
	    sscanf(r.body, "%u %u %u %u %u %u %llu %llu %llu %llu %llu", &o->open, &o->idle,
		   &o->fibers, &o->stacks, &o->bufs_total, &o->bufs_free, &o->accepted,
		   &o->requests, &o->write_timeouts, &o->idle_timeouts, &o->limit_pauses) != 11)
		ret = -EBADMSG;
	ht_resp_free(&r);
	return ret < 0 ? ret : 0;
}

/* Ask the counters until @ok(live) holds or @ms pass: 1 if it held, 0 if
 * not (*o is the last answer), -errno. */
static inline int ht_wait_stats(const struct ht *h, struct ht_live *o,
				bool (*ok)(const struct ht_live *o, const void *arg),
				const void *arg, int ms)
{
	for (int waited = 0;; waited += 10) {
		int r = ht_get_stats(h, o);

		/* A server busy with thousands of closes (slow under TSan) may
		 * answer after the client's 10 s receive timeout: ask again. */
		if (r == -EAGAIN && waited < ms) {
			waited += 10000;
			continue;
		}
		if (r)
			return r;
		if (ok(o, arg))
			return 1;
		if (waited >= ms)
			return 0;
		usleep(10000);
	}
}

/* ------------------------------------------- helpers of the protocol tests */

/* Send @req on @c and read its response into @r. 0 or -errno. */
static inline int ht_request(struct ht_conn *c, const char *req, struct ht_resp *r,
			     bool head_request)
{
	int ret = ht_send_str(c->fd, req);

	return ret ? ret : ht_read_response(c, r, head_request);
}

/* Send @req on @c, read its response, and check its @status and (unless
 * NULL) its @body. Whether all held. */
static inline bool ht_expect(struct ht_conn *c, const char *req, int status, const char *body)
{
	struct ht_resp r;
	bool ok = gt_check_int_equal(ht_request(c, req, &r, false), 0) &&
		  gt_check_int_equal(r.status, status) &&
		  (!body || gt_check_string_equal(r.body, body));

	ht_resp_free(&r);
	return ok;
}

/* A connection to the server, in @c. false (a failed check) if none. */
static inline bool ht_open(const struct ht *h, struct ht_conn *c)
{
	int fd = ht_connect(h);

	ht_conn_init(c, fd);
	return gt_check_true(fd >= 0);
}

/* Fill @buf[0..n) with a pattern that depends on the offset and @seed, so
 * that a byte out of place, lost or doubled shows. */
static inline void ht_pattern(char *buf, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = (char)('A' + (i * 7 + i / 251 + seed) % 53);
}

/* A handler that answers with the whole request body (giong_http_request_body()),
 * or returns its error; counts its calls in the atomic int @ctx (may be NULL). */
static inline int ht_echo(struct giong_http_request *req, struct giong_http_response *res,
			  void *ctx)
{
	const void *data;
	ssize_t n = giong_http_request_body(req, &data);

	if (ctx)
		atomic_fetch_add((atomic_int *)ctx, 1);
	if (n < 0)
		return (int)n;
	return giong_http_response_send(res, data, (size_t)n);
}

/* @n body bytes from @body as a chunked body into a new string (free it):
 * chunks of the sizes in @sizes[0..nsizes), cycled. */
static inline char *ht_chunked(const char *body, size_t n, const size_t *sizes, size_t nsizes,
			       size_t *out_len)
{
	char *out = malloc(n + (n + 1) * 20 + 16), *p = out;

	*out_len = 0;
	size_t off = 0;

	if (!out)
		return NULL;
	for (size_t i = 0; off < n; i++) {
		size_t k = sizes[i % nsizes];

		if (k > n - off)
			k = n - off;
		if (!k)
			k = 1;
		p += sprintf(p, "%zx\r\n", k);
		memcpy(p, body + off, k);
		p += k;
		memcpy(p, "\r\n", 2);
		p += 2;
		off += k;
	}
	memcpy(p, "0\r\n\r\n", 5);
	p += 5;
	*out_len = (size_t)(p - out);
	return out;
}

#endif /* GIONG_HTTP_TEST_H */
