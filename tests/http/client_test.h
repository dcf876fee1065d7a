/* SPDX-License-Identifier: MIT */
/*
 * client_test.h - fixtures of the client tests: a plain socket server on a
 * thread of its own that answers each connection with a script (exact bytes,
 * whatever a real server would send), and counting the process's open
 * descriptors (a test ends with as many as it began with).
 */
#ifndef GIONG_HTTP_CLIENT_TEST_H
#define GIONG_HTTP_CLIENT_TEST_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

#include "giong_test.h"

#include <giong/http.h>

struct rs;
/* Serve connection number @i (from 0) on @fd; the fixture closes @fd after. */
typedef void (*rs_serve_fn)(struct rs *rs, int fd, int i);

struct rs {
	int lfd, port;
	pthread_t thread;
	rs_serve_fn serve;
	void *arg;
	atomic_int conns; /* accepted */
	atomic_bool stop;
	char url[64]; /* "http://127.0.0.1:<port>" */
};

static void *rs_thread(void *arg)
{
	struct rs *rs = arg;

	while (!atomic_load(&rs->stop)) {
		struct pollfd p = {.fd = rs->lfd, .events = POLLIN};
		struct timeval tv = {5, 0};
		int fd;

		if (poll(&p, 1, 50) <= 0)
			continue;
		fd = accept4(rs->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		rs->serve(rs, fd, atomic_fetch_add(&rs->conns, 1));
		close(fd);
	}
	return NULL;
}

static inline void rs_start(struct rs *rs, rs_serve_fn serve, void *arg)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);

	memset(rs, 0, sizeof(*rs));
	rs->serve = serve;
	rs->arg = arg;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	rs->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(rs->lfd >= 0);
	assert_int_equal(bind(rs->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(rs->lfd, 64), 0);
	assert_int_equal(getsockname(rs->lfd, (struct sockaddr *)&sa, &sl), 0);
	rs->port = ntohs(sa.sin_port);
	snprintf(rs->url, sizeof(rs->url), "http://127.0.0.1:%d", rs->port);
	assert_int_equal(pthread_create(&rs->thread, NULL, rs_thread, rs), 0);
}

static inline void rs_stop(struct rs *rs)
{
	atomic_store(&rs->stop, true);
	pthread_join(rs->thread, NULL);
	close(rs->lfd);
}

/* Read one request head (and a Content-Length body) into @buf (NUL-terminated).
 * Returns its length, 0 at end of stream, -1 on error or timeout. */
static inline ssize_t rs_read_request(int fd, char *buf, size_t cap)
{
	size_t len = 0;
	char *end;

	buf[0] = '\0';
	while (!(end = strstr(buf, "\r\n\r\n"))) {
		ssize_t n = recv(fd, buf + len, cap - 1 - len, 0);

		if (n <= 0)
			return n == 0 && len == 0 ? 0 : -1;
		len += (size_t)n;
		buf[len] = '\0';
	}
	{
		const char *cl = strcasestr(buf, "\r\ncontent-length:");
		size_t want = (size_t)(end + 4 - buf) + (cl ? strtoul(cl + 17, NULL, 10) : 0);

		while (len < want) {
			ssize_t n = recv(fd, buf + len, cap - 1 - len, 0);

			if (n <= 0)
				return -1;
			len += (size_t)n;
			buf[len] = '\0';
		}
	}
	return (ssize_t)len;
}

static inline void rs_send(int fd, const char *s)
{
	gt_write_all(fd, s, strlen(s));
}

/* Wait (up to 5 s) for the peer to close @fd. */
static inline void rs_wait_close(int fd)
{
	char b[256];

	while (recv(fd, b, sizeof(b), 0) > 0)
		;
}

/* After @r, what sending gave (< 0: it failed), read @ex's response (the status,
 * or -errno) and its body, NUL-terminated, into
 * @out[0..cap) if @out; end it: *@pooled (if non-NULL) is what end() said. */
static inline int ct_finish(struct giong_http_exchange *ex, int r, char *out, size_t cap,
			    int *pooled)
{
	const void *data;
	ssize_t n;

	if (r >= 0)
		r = giong_http_exchange_response(ex);
	if (r >= 0) {
		n = giong_http_exchange_body(ex, &data);
		if (n < 0)
			r = (int)n;
		else if (out)
			snprintf(out, cap, "%.*s", (int)n, (const char *)data);
	}
	n = giong_http_exchange_end(ex);
	if (pooled)
		*pooled = (int)n;
	return r;
}

/* One exchange of @method on @url with @body (NULL: none): the status, or
 * -errno; the body, if @out, NUL-terminated into @out[0..cap). Ends it;
 * *@pooled (if non-NULL) says whether its connection was kept. */
static inline int ct_exchange(struct giong_http_client *cli, const char *method, const char *url,
			      const char *body, char *out, size_t cap, int *pooled)
{
	struct giong_http_exchange *ex;
	int r;

	if (pooled)
		*pooled = -1; /* set on every path: the callers compare it */
	if ((r = giong_http_exchange_begin(cli, method, url, &ex)))
		return r;
	if (body)
		r = giong_http_exchange_send(ex, body, strlen(body));
	return ct_finish(ex, r, out, cap, pooled);
}

/* An exchange of @method on @url with expect-continue (a wait of @wait ms, 0:
 * the default) and @body[0..@len): sent from memory when @more is NULL, else
 * streamed in two writes, @body then @more. The status, or -errno; what send()
 * (or each write) returned in @sent[0..2), how long the first took (the wait)
 * in *@ms; the rest as ct_finish(). */
static inline int ct_expect(struct giong_http_client *cli, const char *method, const char *url,
			    uint32_t wait, const void *body, size_t len, const char *more,
			    int sent[2], uint64_t *ms, char *out, size_t cap, int *pooled)
{
	struct giong_http_exchange *ex;
	uint64_t t0;
	int r;

	*pooled = sent[0] = sent[1] = -1;
	if ((r = giong_http_exchange_begin(cli, method, url, &ex)))
		return r;
	gt_check_int_equal(giong_http_exchange_expect_continue(ex, wait), 0);
	t0 = giong_now_ms();
	if (!more)
		r = sent[0] = giong_http_exchange_send(ex, body, len);
	else
		r = sent[0] = giong_http_exchange_write(ex, body, len);
	*ms = giong_now_ms() - t0;
	if (r >= 0) /* once sent it is too late to ask */
		gt_check_int_equal(giong_http_exchange_expect_continue(ex, wait), -EALREADY);
	if (r >= 0 && more)
		r = sent[1] = giong_http_exchange_write(ex, more, strlen(more));
	return ct_finish(ex, r, out, cap, pooled);
}

#endif /* GIONG_HTTP_CLIENT_TEST_H */
