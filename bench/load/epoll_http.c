// SPDX-License-Identifier: MIT
/*
 * epoll_http: the hand-written epoll HTTP/1.1 server that giong's HTTP example is measured
 * against (issue 12, "Benchmark"). One thread, level-triggered epoll, non-blocking sockets.
 *
 * Level-triggered, as epoll_echo: a readable connection gets exactly one read() per wakeup,
 * into a 16 KiB buffer, and no second read() to see EAGAIN (edge-triggered epoll needs that
 * drain loop, one more system call per request at the request sizes measured here, or a
 * "short read means empty" guess). Whatever the read left in the socket makes the next
 * epoll_wait report the connection again, so one busy connection cannot starve the others.
 *
 * Per wakeup: one read; every complete request in what was read is parsed and answered in
 * order; all their responses leave in one write(). A request costs read + write + a share of
 * epoll_wait when requests come one at a time, and 1/16 of that when 16 are pipelined.
 *
 * Memory: reads go into one shared buffer and responses are built in one shared buffer. A
 * connection keeps memory of its own only while it has an unfinished request (the partial
 * bytes, copied to a 16 KiB buffer of its own) or unsent response bytes (a copy of them,
 * the connection then waits for EPOLLOUT and reads nothing more). An idle keep-alive
 * connection costs its 56-byte struct and the kernel's socket.
 *
 * The parser is minimal but bounded: request line "METHOD SP TARGET SP HTTP/1.x", header
 * lines "name: value" ending in CRLF up to the empty line, Content-Length bodies (read and
 * discarded: no route takes a body), no chunked bodies (501). Limits: 16 KiB for the head
 * (431), 100 header lines (431), 1 MiB for a body (413). A malformed request gets its 4xx
 * with Connection: close and the connection closes once that is sent; nothing after it in
 * the buffer is looked at. There are no timeouts: it is a benchmark peer, not an exposed server.
 *
 * Routes (GET, and HEAD for the same headers without the body; other methods get 405):
 *   /json    200 {"message":"Hello, World!"}   (27 bytes, application/json)
 *   /users   200 the users document (8,173 bytes, application/json), built per request;
 *            see users_build() for its definition, which giong's example repeats byte for
 *            byte and http-peers/make_bodies.sh writes into a file for nginx and h2o
 *   /health  200 ok   (text/plain)
 *   else     404
 * The Date header is formatted at most once per second (when epoll_wait returns in a new
 * second), from the vDSO's coarse clock: no system call.
 *
 * usage: epoll_http [--port] PORT [--host ADDR]     (default host 127.0.0.1)
 * SIGINT/SIGTERM close everything and exit 0. Nothing is printed per request.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "peer.h"

#define IN_CAP (16 * 1024)   /* read size, and the largest request head */
#define OUT_CAP (256 * 1024) /* the shared response buffer */
#define RESP_MAX (16 * 1024) /* the largest single response (head + body) */
#define OUT_HIGH (OUT_CAP - RESP_MAX)
#define BODY_MAX (1024 * 1024) /* the largest Content-Length accepted */
#define MAX_FIELDS 100
#define MAX_EVENTS 256
#define USERS_COUNT 144

struct conn {
	int fd;
	bool closing;    /* a response with Connection: close is queued: close once it is sent */
	uint32_t in_len; /* bytes of an unfinished request in in */
	uint64_t skip;   /* body bytes still to be read and discarded */
	char *in;        /* IN_CAP bytes while a partial request is kept, else NULL */
	char *pend;      /* unsent response bytes (malloc'ed), NULL when all is sent */
	size_t pend_off; /* first unsent byte in pend */
	size_t pend_len; /* bytes in pend */
};

static volatile sig_atomic_t stop_requested;
static int listen_fd = -1;
static int epfd = -1;
static struct conn **conns; /* indexed by fd */
static size_t conns_cap;
static char rbuf[IN_CAP];  /* where a connection without a partial request reads */
static char obuf[OUT_CAP]; /* where the responses of one wakeup are built */
static size_t olen;
static char date_hdr[64]; /* "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n" */
static size_t date_len;
static time_t date_sec = -1;
static size_t users_len; /* the users document's length, fixed: measured at start */

static const char JSON_BODY[] = "{\"message\":\"Hello, World!\"}";

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void die(const char *what)
{
	fprintf(stderr, "epoll_http: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Re-formats the Date header when the second has changed since the last call. */
static void date_refresh(void)
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME_COARSE, &ts);
	if (ts.tv_sec == date_sec)
		return;
	date_sec = ts.tv_sec;
	gmtime_r(&ts.tv_sec, &tm);
	date_len = strftime(date_hdr, sizeof(date_hdr), "Date: %a, %d %b %Y %H:%M:%S GMT\r\n", &tm);
}

/* Writes @v in decimal at @p; returns the number of digits. */
static size_t put_u64(char *p, uint64_t v)
{
	char tmp[20];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

/* Copies the @n bytes of @s to @p; returns @p after them. */
static char *put(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

#define PUT_LIT(p, lit) put((p), (lit), sizeof(lit) - 1)

/*
 * The users document, written at @p (at least 8,173 bytes); returns its length. It is, with
 * no whitespace anywhere, a JSON array of USERS_COUNT (144) objects for i = 1, 2, ..., 144:
 *   {"id":i,"name":"User i","email":"useri@example.com"}
 * separated by "," and enclosed in "[" "]", i in decimal without leading zeros: 8,173 bytes.
 * Built per request on purpose (the example builds it per request): integer
 * formatting and copies, no printf.
 */
static size_t users_build(char *p)
{
	char *s = p;

	*p++ = '[';
	for (uint64_t i = 1; i <= USERS_COUNT; i++) {
		if (i > 1)
			*p++ = ',';
		p = PUT_LIT(p, "{\"id\":");
		p += put_u64(p, i);
		p = PUT_LIT(p, ",\"name\":\"User ");
		p += put_u64(p, i);
		p = PUT_LIT(p, "\",\"email\":\"user");
		p += put_u64(p, i);
		p = PUT_LIT(p, "@example.com\"}");
	}
	*p++ = ']';
	return (size_t)(p - s);
}

enum body_kind { BODY_NONE, BODY_STATIC, BODY_USERS };

/*
 * Appends one response to obuf (the caller leaves RESP_MAX bytes free): the status line,
 * Server, Date, Content-Type, Content-Length, a Connection header when @close or when an
 * HTTP/1.0 client asked for keep-alive (@ka10), and unless @head_only the body (@body of
 * @blen bytes, or the users document for BODY_USERS).
 */
static void respond(const char *status, const char *ctype, enum body_kind kind, const char *body,
		    size_t blen, bool close, bool ka10, bool head_only)
{
	char *p = obuf + olen;

	if (kind == BODY_USERS)
		blen = users_len;
	p = PUT_LIT(p, "HTTP/1.1 ");
	p = put(p, status, strlen(status));
	p = PUT_LIT(p, "\r\nServer: epoll_http\r\n");
	p = put(p, date_hdr, date_len);
	p = PUT_LIT(p, "Content-Type: ");
	p = put(p, ctype, strlen(ctype));
	p = PUT_LIT(p, "\r\nContent-Length: ");
	p += put_u64(p, blen);
	if (close)
		p = PUT_LIT(p, "\r\nConnection: close");
	else if (ka10)
		p = PUT_LIT(p, "\r\nConnection: keep-alive");
	p = PUT_LIT(p, "\r\n\r\n");
	if (!head_only) {
		if (kind == BODY_USERS)
			p += users_build(p);
		else if (kind == BODY_STATIC)
			p = put(p, body, blen);
	}
	olen = (size_t)(p - obuf);
}

/* A refusal: @status with a short text body, and the connection closes after it. */
static void refuse(struct conn *c, const char *status)
{
	respond(status, "text/plain", BODY_STATIC, status, strlen(status), true, false, false);
	c->closing = true;
}

/* tchar of RFC 9110 section 5.6.2: the bytes of a method and of a field name. */
static bool is_tchar(unsigned char ch)
{
	static const char extra[] = "!#$%&'*+-.^_`|~";

	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch != 0 && memchr(extra, ch, sizeof(extra) - 1));
}

/* Whether the @n bytes at @s equal the NUL-terminated @lit, ignoring ASCII case. */
static bool eq_nocase(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && strncasecmp(s, lit, n) == 0;
}

/* Whether the comma-separated list of @n bytes at @v holds the token @tok (any case). */
static bool has_token(const char *v, size_t n, const char *tok)
{
	size_t i = 0;

	while (i < n) {
		size_t b, e;

		while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		b = i;
		while (i < n && v[i] != ',')
			i++;
		e = i;
		while (e > b && (v[e - 1] == ' ' || v[e - 1] == '\t'))
			e--;
		if (e > b && eq_nocase(v + b, e - b, tok))
			return true;
	}
	return false;
}

/*
 * Parses one request at @p (@n bytes available) and appends its response to obuf.
 * Returns the bytes of the head consumed (its body is left to c->skip), 0 when the head is
 * not complete yet. A refused request sets c->closing.
 */
static size_t handle_one(struct conn *c, const char *p, size_t n)
{
	const char *end = memmem(p, n, "\r\n\r\n", 4);
	const char *line, *eol, *sp1, *sp2, *q;
	size_t head_len, mlen, tlen, plen;
	bool v11, close, head = false, has_cl = false;
	unsigned hosts = 0, fields = 0;
	uint64_t cl = 0;

	if (!end)
		return 0;
	head_len = (size_t)(end - p) + 4;

	/* The request line, up to the first CRLF (the head's end is a CRLF, so there is one). */
	eol = memchr(p, '\n', head_len);
	if (eol == p || eol[-1] != '\r') {
		refuse(c, "400 Bad Request");
		return head_len;
	}
	sp1 = memchr(p, ' ', (size_t)(eol - p));
	sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
	if (!sp1 || !sp2 || sp1 == p || sp2 == sp1 + 1) {
		refuse(c, "400 Bad Request");
		return head_len;
	}
	mlen = (size_t)(sp1 - p);
	for (size_t i = 0; i < mlen; i++)
		if (!is_tchar((unsigned char)p[i])) {
			refuse(c, "400 Bad Request");
			return head_len;
		}
	tlen = (size_t)(sp2 - sp1 - 1);
	for (size_t i = 0; i < tlen; i++)
		if ((unsigned char)sp1[1 + i] <= ' ' || (unsigned char)sp1[1 + i] == 0x7f) {
			refuse(c, "400 Bad Request");
			return head_len;
		}
	/* The version: HTTP/1.1 or HTTP/1.0; another HTTP/D.D is 505, anything else 400. */
	q = sp2 + 1;
	if ((size_t)(eol - 1 - q) != 8 || memcmp(q, "HTTP/", 5) != 0 || q[6] != '.' || q[5] < '0' ||
	    q[5] > '9' || q[7] < '0' || q[7] > '9') {
		refuse(c, "400 Bad Request");
		return head_len;
	}
	if (q[5] != '1' || (q[7] != '0' && q[7] != '1')) {
		refuse(c, "505 HTTP Version Not Supported");
		return head_len;
	}
	v11 = q[7] == '1';
	close = !v11;

	/* The header lines, each "name: value" CRLF, until the empty line at end + 2. */
	for (line = eol + 1; line < end + 2; line = eol + 1) {
		const char *colon, *vb, *ve;

		eol = memchr(line, '\n', (size_t)(end + 4 - line));
		if (eol[-1] != '\r' || eol == line) {
			refuse(c, "400 Bad Request");
			return head_len;
		}
		if (++fields > MAX_FIELDS) {
			refuse(c, "431 Request Header Fields Too Large");
			return head_len;
		}
		colon = memchr(line, ':', (size_t)(eol - 1 - line));
		if (!colon || colon == line) {
			refuse(c, "400 Bad Request");
			return head_len;
		}
		for (q = line; q < colon; q++)
			if (!is_tchar((unsigned char)*q)) {
				refuse(c, "400 Bad Request");
				return head_len;
			}
		vb = colon + 1;
		ve = eol - 1;
		while (vb < ve && (*vb == ' ' || *vb == '\t'))
			vb++;
		while (ve > vb && (ve[-1] == ' ' || ve[-1] == '\t'))
			ve--;
		for (q = vb; q < ve; q++)
			if (((unsigned char)*q < ' ' && *q != '\t') || *q == 0x7f) {
				refuse(c, "400 Bad Request");
				return head_len;
			}
		if (eq_nocase(line, (size_t)(colon - line), "content-length")) {
			uint64_t v = 0;

			if (vb == ve) {
				refuse(c, "400 Bad Request");
				return head_len;
			}
			for (q = vb; q < ve; q++) {
				if (*q < '0' || *q > '9') {
					refuse(c, "400 Bad Request");
					return head_len;
				}
				v = v * 10 + (uint64_t)(*q - '0');
				if (v > BODY_MAX) {
					refuse(c, "413 Content Too Large");
					return head_len;
				}
			}
			if (has_cl && v != cl) {
				refuse(c, "400 Bad Request");
				return head_len;
			}
			has_cl = true;
			cl = v;
		} else if (eq_nocase(line, (size_t)(colon - line), "transfer-encoding")) {
			refuse(c, "501 Not Implemented");
			return head_len;
		} else if (eq_nocase(line, (size_t)(colon - line), "host")) {
			hosts++;
		} else if (eq_nocase(line, (size_t)(colon - line), "connection")) {
			if (has_token(vb, (size_t)(ve - vb), "close"))
				close = true;
			else if (!v11 && has_token(vb, (size_t)(ve - vb), "keep-alive"))
				close = false;
		}
	}
	if (v11 && hosts != 1) {
		refuse(c, "400 Bad Request");
		return head_len;
	}
	c->skip = cl;
	c->closing = close;

	/* The route: the path is the target up to '?'. */
	q = memchr(sp1 + 1, '?', tlen);
	plen = q ? (size_t)(q - sp1 - 1) : tlen;
	if (mlen == 4 && memcmp(p, "HEAD", 4) == 0) /* methods are case-sensitive */
		head = true;
	else if (mlen != 3 || memcmp(p, "GET", 3) != 0)
		mlen = 0; /* not GET nor HEAD */
	{
		const char *path = sp1 + 1;
		bool ka10 = !v11 && !close;
		bool known = (plen == 5 && memcmp(path, "/json", 5) == 0) ||
			     (plen == 6 && memcmp(path, "/users", 6) == 0) ||
			     (plen == 7 && memcmp(path, "/health", 7) == 0);

		if (!known)
			respond("404 Not Found", "text/plain", BODY_STATIC, "not found", 9, close,
				ka10, head);
		else if (mlen == 0) /* the Allow line rides in the status argument */
			respond("405 Method Not Allowed\r\nAllow: GET, HEAD", "text/plain",
				BODY_STATIC, "method not allowed", 18, close, ka10, false);
		else if (path[1] == 'j')
			respond("200 OK", "application/json", BODY_STATIC, JSON_BODY,
				sizeof(JSON_BODY) - 1, close, ka10, head);
		else if (path[1] == 'u')
			respond("200 OK", "application/json", BODY_USERS, NULL, 0, close, ka10,
				head);
		else
			respond("200 OK", "text/plain", BODY_STATIC, "ok", 2, close, ka10, head);
	}
	return head_len;
}

static void conn_close(struct conn *c)
{
	/* close() also removes the fd from the epoll set: it is not dup'ed anywhere. */
	close(c->fd);
	conns[c->fd] = NULL;
	free(c->in);
	free(c->pend);
	free(c);
}

static int conn_set_events(struct conn *c, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = c};

	return epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

/*
 * Writes obuf's olen bytes to @c in one write(); what the socket does not take is copied
 * to c->pend and the connection switches to EPOLLOUT. Returns 1 when all is sent, 0 when
 * some is pending, -1 when the connection must be closed.
 */
static int send_out(struct conn *c)
{
	size_t off = 0;

	while (off < olen) {
		ssize_t n = write(c->fd, obuf + off, olen - off);

		if (n > 0) {
			off += (size_t)n;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && errno == EAGAIN) {
			c->pend = malloc(olen - off);
			if (!c->pend)
				return -1;
			memcpy(c->pend, obuf + off, olen - off);
			c->pend_off = 0;
			c->pend_len = olen - off;
			olen = 0;
			return conn_set_events(c, EPOLLOUT) < 0 ? -1 : 0;
		} else {
			return -1;
		}
	}
	olen = 0;
	return 1;
}

/*
 * Answers every complete request in the @len bytes at @data (rbuf, or c->in), sends the
 * responses, and keeps what is left of an unfinished request in c->in. May close @c;
 * returns false when it did.
 */
static bool serve(struct conn *c, char *data, size_t len)
{
	size_t pos = 0, left;
	int r;

	olen = 0;
	for (;;) {
		size_t used;

		if (c->skip) {
			size_t take = len - pos < c->skip ? len - pos : (size_t)c->skip;

			pos += take;
			c->skip -= take;
			if (c->skip)
				break;
		}
		if (pos == len)
			break;
		used = handle_one(c, data + pos, len - pos);
		if (used == 0) {
			if (len - pos >= IN_CAP)
				refuse(c, "431 Request Header Fields Too Large");
			break;
		}
		pos += used;
		if (c->closing)
			break;
		if (olen > OUT_HIGH) {
			/* Full: send what is built; if the socket is full too, stop here. */
			r = send_out(c);
			if (r < 0) {
				conn_close(c);
				return false;
			}
			if (r == 0)
				break;
		}
	}
	if (c->closing) {
		/* Nothing after a closing response counts: drop the rest. */
		pos = len;
		c->skip = 0;
	}

	/* Keep the unfinished rest, at the front of c->in. */
	left = len - pos;
	if (left == 0) {
		free(c->in);
		c->in = NULL;
		c->in_len = 0;
	} else {
		if (!c->in) {
			c->in = malloc(IN_CAP);
			if (!c->in) {
				conn_close(c);
				return false;
			}
		}
		memmove(c->in, data + pos, left);
		c->in_len = (uint32_t)left;
	}

	if (olen > 0 && !c->pend) {
		r = send_out(c);
		if (r < 0 || (r == 1 && c->closing)) {
			conn_close(c);
			return false;
		}
	}
	return true;
}

static void on_readable(struct conn *c)
{
	char *dst = c->in ? c->in + c->in_len : rbuf;
	size_t room = c->in ? IN_CAP - c->in_len : IN_CAP; /* > 0: a full c->in got its 431 */
	ssize_t n = read(c->fd, dst, room);

	if (n == 0) {
		conn_close(c);
		return;
	}
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			conn_close(c);
		return;
	}
	if (c->in)
		serve(c, c->in, c->in_len + (size_t)n);
	else
		serve(c, rbuf, (size_t)n);
}

static void on_writable(struct conn *c)
{
	while (c->pend_off < c->pend_len) {
		ssize_t n = write(c->fd, c->pend + c->pend_off, c->pend_len - c->pend_off);

		if (n > 0) {
			c->pend_off += (size_t)n;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && errno == EAGAIN) {
			return;
		} else {
			conn_close(c);
			return;
		}
	}
	free(c->pend);
	c->pend = NULL;
	if (c->closing || conn_set_events(c, EPOLLIN) < 0) {
		conn_close(c);
		return;
	}
	/* Requests that arrived while the responses were stuck may be complete already. */
	if (c->in_len > 0)
		serve(c, c->in, c->in_len);
}

static void on_accept(void)
{
	int fd;

	while ((fd = peer_accept("epoll_http", listen_fd)) >= 0) {
		struct conn *c;
		struct epoll_event ev;
		void *table = peer_fd_table_fit(conns, &conns_cap, sizeof(*conns), fd);

		if (!table) {
			close(fd);
			continue;
		}
		conns = table;
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		ev.events = EPOLLIN;
		ev.data.ptr = c;
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			close(fd);
			free(c);
			continue;
		}
		conns[fd] = c;
	}
}

int main(int argc, char **argv)
{
	static char probe[RESP_MAX];
	struct epoll_event events[MAX_EVENTS];
	sigset_t waitmask;
	const char *host;
	int port;

	peer_args(argc, argv, &port, &host);
	peer_raise_nofile();

	/* The users document has a fixed length; its response must fit in RESP_MAX. */
	users_len = users_build(probe);
	if (users_len + 512 > RESP_MAX) {
		fprintf(stderr, "epoll_http: users document too large (%zu)\n", users_len);
		return 1;
	}
	date_refresh();

	peer_signals(on_signal, &waitmask);

	conns_cap = 1024;
	conns = calloc(conns_cap, sizeof(*conns));
	if (!conns)
		die("calloc");

	listen_fd = peer_listen("epoll_http", host, port, SOCK_NONBLOCK, 1);

	epfd = peer_epoll("epoll_http", listen_fd);

	while (!stop_requested) {
		int n = epoll_pwait(epfd, events, MAX_EVENTS, -1, &waitmask);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("epoll_pwait");
		}
		date_refresh();
		for (int i = 0; i < n; i++) {
			struct conn *c = events[i].data.ptr;
			uint32_t ev = events[i].events;

			if (!c) {
				on_accept();
				continue;
			}
			/* Each fd shows up once per batch and is closed only by its own handler. */
			if (ev & EPOLLOUT)
				on_writable(c);
			else if (ev & (EPOLLIN | EPOLLERR | EPOLLHUP))
				on_readable(c);
		}
	}

	for (size_t fd = 0; fd < conns_cap; fd++)
		if (conns[fd])
			conn_close(conns[fd]);
	free(conns);
	close(epfd);
	close(listen_fd);
	return 0;
}
