/* SPDX-License-Identifier: MIT */
/*
 * test_sendfile.c - giong_http_response_sendfile() end to end, from a
 * temporary file holding a pattern whose every offset is recognisable:
 *  - 0, 1, 16 KiB (read into the batch), 16 KiB + 1, 1 MiB and 8 MiB (spliced
 *    through a pipe), at offset 0 and at an odd offset, on one keep-alive
 *    connection, checked byte for byte; and pipelined with small ones, in
 *    order;
 *  - HEAD: the Content-Length of GET and no body (the next response on the
 *    connection comes right after the head);
 *  - a file shorter than the length asked, on both paths: the connection
 *    closes, what the client got is a prefix of the right bytes, and the
 *    response queued before it in the same batch still arrives whole;
 *  - a reader slower than the write timeout over the whole body (8 MiB at about 3 MB/s
 *    through a small receive buffer, write_timeout_ms 500) still gets all of it: the
 *    timeout bounds a peer that stops reading, not the length of a spliced body;
 *  - the large ones really go through a pipe (a plain TCP stream answers
 *    giong_stream_splice_fd()), and the descriptors are back to the
 *    baseline once the server is freed (the splice pipes it kept are closed).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "http_test.h"

#define FILE_SIZE (8u * 1024 * 1024 + 64 * 1024)
#define ODD_OFF 4097u

static int file_fd = -1;

static unsigned char pat(uint64_t i)
{
	uint64_t x = (i + 0x9E3779B97F4A7C15ull) * 0xD6E8FEB86659FD93ull;

	return (unsigned char)(x >> 56);
}

/* -1 if @buf holds the pattern at @off, else the offset of the first wrong byte. */
static long long pat_check(uint64_t off, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	for (size_t i = 0; i < len; i++)
		if (p[i] != pat(off + i))
			return (long long)(off + i);
	return -1;
}

/* An unlinked temporary file of FILE_SIZE pattern bytes, or -1. */
static int make_file(void)
{
	const char *dir = getenv("TMPDIR");
	char path[512];
	static unsigned char chunk[65536];
	int fd;

	snprintf(path, sizeof(path), "%s/giong-sendfile-XXXXXX", dir && *dir ? dir : "/var/tmp");
	if ((fd = mkstemp(path)) < 0)
		return -1;
	unlink(path);
	for (uint64_t off = 0; off < FILE_SIZE; off += sizeof(chunk)) {
		for (size_t i = 0; i < sizeof(chunk); i++)
			chunk[i] = pat(off + i);
		if (pwrite(fd, chunk, sizeof(chunk), (off_t)off) != (ssize_t)sizeof(chunk)) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

/* GET /f?o=<offset>&n=<length>: that part of the file. */
static int file_handler(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	unsigned long long off, n;
	size_t qlen;
	const char *q = giong_http_request_query(req, &qlen);
	char buf[64];

	(void)ctx;
	snprintf(buf, sizeof(buf), "%.*s", (int)qlen, q ? q : "");
	if (sscanf(buf, "o=%llu&n=%llu", &off, &n) != 2)
		return giong_http_response_status(res, 400) ?: giong_http_response_send(res, "", 0);
	return giong_http_response_sendfile(res, file_fd, (off_t)off, n);
}

static int small(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	(void)req;
	(void)ctx;
	return giong_http_response_send(res, "small", 5);
}

static int get_file(struct ht_conn *c, const char *method, uint64_t off, uint64_t n)
{
	char req[128];

	snprintf(req, sizeof(req), "%s /f?o=%llu&n=%llu HTTP/1.1\r\nHost: t\r\n\r\n", method,
		 (unsigned long long)off, (unsigned long long)n);
	return ht_send_str(c->fd, req);
}

/* The response to get_file(): 200, its Content-Length, the right bytes. */
static void check_file(struct ht_conn *c, uint64_t off, uint64_t n, bool head)
{
	struct ht_resp r;
	char v[64], want[32];

	if (!gt_check_int_equal(ht_read_response(c, &r, head), 0))
		return;
	snprintf(want, sizeof(want), "%llu", (unsigned long long)n);
	gt_check_int_equal(r.status, 200);
	gt_check_true(ht_header(&r, "Content-Length", v, sizeof(v)));
	gt_check_string_equal(v, want);
	gt_check_int_equal(r.body_len, head ? 0 : n);
	if (!head && r.body_len == n)
		gt_check_int_equal(pat_check(off, r.body, n), -1);
	ht_resp_free(&r);
}

static void check_small(struct ht_conn *c)
{
	struct ht_resp r;

	if (gt_check_int_equal(ht_read_response(c, &r, false), 0))
		gt_check_string_equal(r.body, "small");
	ht_resp_free(&r);
}

static const uint64_t sizes[] = {0, 1, 16384, 16385, 1024 * 1024, 8 * 1024 * 1024};

/* Pipes open in the process: the worker keeps the ones it spliced through. */
static int count_pipes(void)
{
	char path[64], target[64];
	int n = 0;

	for (int fd = 0; fd < 1024; fd++) {
		ssize_t l;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		l = readlink(path, target, sizeof(target) - 1);
		if (l > 5 && !memcmp(target, "pipe:", 5))
			n++;
	}
	return n;
}

static void sizes_client(struct ht *h)
{
	static const char sm[] = "GET /small HTTP/1.1\r\nHost: t\r\n\r\n";
	struct ht_conn c;
	int pipes = count_pipes(), fd = ht_connect(h);

	if (!gt_check_true(fd >= 0))
		return;
	ht_conn_init(&c, fd);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (int odd = 0; odd < 2; odd++) {
			uint64_t off = odd ? ODD_OFF : 0;

			gt_check_int_equal(get_file(&c, "GET", off, sizes[i]), 0);
			check_file(&c, off, sizes[i], false);
		}
	}
	/* Pipelined: small, 1 MiB, 16 KiB, small in one go, answered in order. */
	gt_check_int_equal(ht_send_str(fd, sm), 0);
	gt_check_int_equal(get_file(&c, "GET", 3, 1024 * 1024), 0);
	gt_check_int_equal(get_file(&c, "GET", 5, 16384), 0);
	gt_check_int_equal(ht_send_str(fd, sm), 0);
	check_small(&c);
	check_file(&c, 3, 1024 * 1024, false);
	check_file(&c, 5, 16384, false);
	check_small(&c);
	/* HEAD: the length, no body; the next answer follows the head. */
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		gt_check_int_equal(get_file(&c, "HEAD", 7, sizes[i]), 0);
		gt_check_int_equal(ht_send_str(fd, sm), 0);
		check_file(&c, 7, sizes[i], true);
		check_small(&c);
	}
	gt_check_int_equal(ht_closed_within(&c, 50), 0);
	ht_conn_close(&c);
	/* The large bodies were spliced (the TCP stream gave its descriptor to
	 * giong_stream_splice_fd()), not read and written: a pipe was made
	 * (counted against those inherited, ctest's output say). */
	gt_check_true(count_pipes() > pipes);
}

/* Serve @client from a fresh file; the descriptors are back after. */
static void run(ht_client_fn client, struct ht *h)
{
	int fds = gt_count_fds();

	file_fd = make_file();
	if (file_fd < 0)
		skip();
	ht_init(h);
	assert_int_equal(giong_http_router_add(h->router, "GET", "/f", file_handler, NULL), 0);
	assert_int_equal(giong_http_router_add(h->router, "GET", "/small", small, NULL), 0);
	ht_run(h, client);
	close(file_fd);
	assert_int_equal(h->stats.open, 0);
	gt_assert_fds(fds);
}

static void test_sendfile_sizes(void **state)
{
	struct ht h;

	(void)state;
	run(sizes_client, &h);
	assert_int_equal(h.stats.responses[1], 12 + 4 + 12);
	assert_int_equal(h.stats.handler_errors, 0);
}

/* A file shorter than asked: the head promised @n bytes, fewer come, then
 * the end of the connection; the ones that came are the right ones. */
static void short_one(struct ht *h, uint64_t off, uint64_t n)
{
	struct ht_conn c;
	struct ht_resp r;
	int fd = ht_connect(h);

	if (!gt_check_true(fd >= 0))
		return;
	ht_conn_init(&c, fd);
	/* A whole response before it in the same batch still goes. */
	gt_check_int_equal(ht_send_str(fd, "GET /small HTTP/1.1\r\nHost: t\r\n\r\n"), 0);
	gt_check_int_equal(get_file(&c, "GET", off, n), 0);
	check_small(&c);
	if (gt_check_int_equal(ht_read_response(&c, &r, false), -EBADMSG)) {
		gt_check_int_equal(r.status, 200);
		gt_check_true(c.eof);
		gt_check_true(c.len < n);
		gt_check_true(c.len <= FILE_SIZE - off);
		gt_check_int_equal(pat_check(off, c.buf, c.len), -1);
	}
	ht_resp_free(&r);
	ht_conn_close(&c);
}

static void short_client(struct ht *h)
{
	short_one(h, FILE_SIZE - 100, 1000);            /* into the batch */
	short_one(h, FILE_SIZE, 10);                    /* nothing at all */
	short_one(h, FILE_SIZE - 100000, 1024 * 1024);  /* spliced */
	short_one(h, FILE_SIZE - 65536, 65536 + 16384); /* the file ends on a chunk */
	/* The server goes on serving. */
	struct ht_conn c;
	int fd = ht_connect(h);

	if (!gt_check_true(fd >= 0))
		return;
	ht_conn_init(&c, fd);
	gt_check_int_equal(get_file(&c, "GET", 11, 100000), 0);
	check_file(&c, 11, 100000, false);
	ht_conn_close(&c);
}

static void test_sendfile_short_file(void **state)
{
	struct ht h;

	(void)state;
	run(short_client, &h);
	assert_int_equal(h.stats.responses[1], 4 + 4 + 1);
	assert_int_equal(h.stats.handler_errors, 4);
}

/* 8 MiB read 16 KiB at a time, 5 ms apart, through a 16 KiB receive buffer: about 2.5 s,
 * five times the server's write timeout, with every move into the socket well inside it. */
static void slow_client(struct ht *h)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)h->port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	const uint64_t n = 8 * 1024 * 1024;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), rcv = 16384;
	size_t cap = (size_t)n + 4096, got = 0;
	char *buf = malloc(cap), *body;
	struct ht_conn c;

	if (!gt_check_true(fd >= 0) || !gt_check_non_null(buf))
		goto out;
	gt_check_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv)), 0);
	if (!gt_check_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0))
		goto out;
	ht_conn_init(&c, fd);
	gt_check_int_equal(get_file(&c, "GET", 0, n), 0);
	for (;;) {
		ssize_t r = recv(fd, buf + got, cap - got < 16384 ? cap - got : 16384, 0);

		if (r <= 0)
			break;
		got += (size_t)r;
		if ((body = memmem(buf, got, "\r\n\r\n", 4)) && got - (size_t)(body + 4 - buf) >= n)
			break;
		usleep(5000);
	}
	body = memmem(buf, got, "\r\n\r\n", 4);
	if (gt_check_non_null(body)) {
		body += 4;
		if (gt_check_int_equal(got - (size_t)(body - buf), n))
			gt_check_int_equal(pat_check(0, body, (size_t)n), -1);
	}
out:
	if (fd >= 0)
		close(fd);
	free(buf);
}

static void test_sendfile_slow_reader(void **state)
{
	struct ht h;

	(void)state;
	file_fd = make_file();
	if (file_fd < 0)
		skip();
	ht_init(&h);
	h.limits.write_timeout_ms = 500;
	assert_int_equal(giong_http_router_add(h.router, "GET", "/f", file_handler, NULL), 0);
	ht_run(&h, slow_client);
	close(file_fd);
	assert_int_equal(h.stats.write_timeouts, 0);
	assert_int_equal(h.stats.responses[1], 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sendfile_sizes),
		cmocka_unit_test(test_sendfile_short_file),
		cmocka_unit_test(test_sendfile_slow_reader),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
