/* SPDX-License-Identifier: MIT */
/*
 * fuzz_http2_server.c - libFuzzer target: HTTP/2 frames from a client through
 * the server's HTTP/2 code (libgiong-http2's src/, on libnghttp2, and the
 * common dispatch of libgiong-http, linked from their -internal twins), end
 * to end over a real socket pair.
 *
 * One one-worker runtime serves every input (fuzz_runtime.h). For each
 * input, giong_unix_pair() gives two streams; the server side is served by
 * giong_http_serve_stream() with .protocols = {HTTP/2}; the client side
 * sends the preface and an empty SETTINGS frame (the valid start the issue
 * asks for: what follows reaches the frame layer, not the preface check),
 * then the input's frames in pieces with a yield between them (so that the
 * server receives them in several turns), then half-closes; the main task
 * reads and drops whatever the server sends until it closes (so the server
 * never waits on a full socket), and the input ends when
 * giong_http_serve_stream() returns.
 *
 * Input: a control byte, then the frames (no preface: it is added).
 *   bits 0-3: k, the largest piece is 2^k bytes (k = 15: the whole rest in
 *     one write); each piece's size is 1 + (a xorshift of the input) mod 2^k;
 *   bits 4-6: mixed into the xorshift's seed;
 *   bit 7: the second HTTP/2 configuration (below) instead of the defaults.
 * The seeds (tests/fuzz/corpus/http2_server/) are written by
 * tests/fuzz/http2_seeds.py with python3-h2's hpack: a GET, a POST with DATA,
 * CONTINUATION, RST_STREAM, WINDOW_UPDATE, PING, GOAWAY, PRIORITY, SETTINGS,
 * and one per finding of this target (an empty streamed body; a body that
 * never comes, ended by the client's end or by a GOAWAY).
 *
 * Routes: GET / (a small body), POST /body (reads the whole body, answers its
 * length), POST /echo (reads in pieces and streams each back), GET /stream
 * (24 KiB streamed in 3 writes: past the second configuration's window),
 * GET /file (sendfile from a memfd); anything else 404 or 405.
 *
 * Time per input is bounded by the limits: body and write timeouts of 10 ms
 * (a stream whose body never ends, a response the client's window never lets
 * out: a stream's task waits them out even after the client is gone), head
 * and idle ones of 100 ms, so that an input can never hang; libFuzzer's
 * -timeout catches a bug that would. What must hold, else a trap (ASan and
 * UBSan catch the rest, the leak check any leak): serve_stream returns 0, the
 * client's calls give counts or documented errors, the server closes its
 * side, and nghttp2 holds no memory once the connection is gone.
 *
 * FUZZ_H2_VERBOSE=1 prints, for each input, the frames the server sent and
 * its counters (which stream answered what, timeouts, GOAWAYs).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <giong/core.h>
#include <giong/http/limits.h>
#include <giong/http/request.h>
#include <giong/http/response.h>
#include <giong/http/router.h>
#include <giong/http/server.h>
#include <giong/http2.h>
#include <giong/net/stream.h>
#include <giong/net/unix.h>

#include "fuzz_runtime.h"
#include "fuzz_util.h"

/* Reads of the client side before giving up: a hang guard far past any input. */
#define READS_MAX 100000
#define FILE_LEN 5000
/* The body and write timeouts (ms): short, as a stream's task waits its whole body or
 * write timeout once the client is gone (-DFUZZ_TIMEOUT_MS to try others). */
#ifndef FUZZ_TIMEOUT_MS
#define FUZZ_TIMEOUT_MS 10
#endif
#ifndef QUIET_YIELDS
#define QUIET_YIELDS 8
#endif
#define STREAM_PIECE 8192

static struct giong_http_router *router;
static const struct giong_http_protocol *protos[2]; /* giong_http2(), the small one */
static int file_fd = -1;
static bool verbose; /* FUZZ_H2_VERBOSE=1: the frames each input got back, on stderr */

/* The preface and an empty SETTINGS frame: every input starts past them. */
static const uint8_t start[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
			       "\x00\x00\x00\x04\x00\x00\x00\x00\x00";

/* --- handlers ------------------------------------------------------------------------------ */

static int h_root(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	(void)req;
	(void)ctx;
	giong_http_response_header(res, "x-fuzz", "1");
	return giong_http_response_send(res, "hello\n", 6);
}

static int h_body(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	const void *data;
	ssize_t n = giong_http_request_body(req, &data);
	char line[32];

	(void)ctx;
	if (n < 0)
		return (int)n;
	CHECK(data);
	snprintf(line, sizeof(line), "%zd\n", n);
	return giong_http_response_send(res, line, strlen(line));
}

static int h_echo(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	char buf[1500];
	ssize_t n;
	int r;

	(void)ctx;
	while ((n = giong_http_request_read(req, buf, sizeof(buf))) > 0)
		if ((r = giong_http_response_write(res, buf, (size_t)n)))
			return r;
	if (n < 0)
		return (int)n;
	return giong_http_response_end(res);
}

static int h_stream(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	static char piece[STREAM_PIECE];
	int r;

	(void)req;
	(void)ctx;
	memset(piece, 'x', sizeof(piece));
	for (int i = 0; i < 3; i++)
		if ((r = giong_http_response_write(res, piece, sizeof(piece))))
			return r;
	return giong_http_response_end(res);
}

static int h_file(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	(void)req;
	(void)ctx;
	return giong_http_response_sendfile(res, file_fd, 0, FILE_LEN);
}

/* --- one input ------------------------------------------------------------------------------ */

struct input {
	const uint8_t *data; /* the frames */
	size_t size;
	unsigned k;   /* the largest piece: 2^k */
	uint64_t rng; /* xorshift state */
	int proto;    /* protos[] index */
	struct giong_stream *client, *server;
	struct giong_http_server *srv;
	int served; /* giong_http_serve_stream()'s return */
	bool ran;
};

static intptr_t serve_task(void *arg)
{
	struct input *in = arg;

	in->served = giong_http_serve_stream(in->srv, in->server);
	return 0;
}

/* The client's writes: the start, the frames in pieces, then the half-close. */
static intptr_t write_task(void *arg)
{
	struct input *in = arg;
	size_t pos = 0;
	ssize_t w;

	w = giong_stream_write_all(in->client, start, sizeof(start) - 1);
	/* The server may close first (a GOAWAY after a bad frame): -EPIPE, -ECONNRESET. */
	if (w < 0) {
		CHECK(w == -EPIPE || w == -ECONNRESET);
		return 0;
	}
	while (pos < in->size) {
		size_t n = fuzz_piece(&in->rng, in->k, in->size - pos);

		w = giong_stream_write_all(in->client, in->data + pos, n);
		if (w < 0) {
			CHECK(w == -EPIPE || w == -ECONNRESET);
			return 0;
		}
		CHECK((size_t)w == n);
		pos += n;
		giong_yield(); /* the server's turn: this piece alone, if it came in time */
	}
	/* A few turns before the end of stream: the server's answers to the last frames
	 * go out before it sees the end (which ends the connection, dropping them). */
	for (int i = 0; i < QUIET_YIELDS; i++)
		giong_yield();
	giong_stream_shutdown(in->client, SHUT_WR); /* fails if the server closed: no matter */
	return 0;
}

/* What the server sent, frame by frame, and its counters (FUZZ_H2_VERBOSE=1). */
static void show(const uint8_t *p, size_t len, ssize_t end, struct giong_http_server *srv)
{
	static const char *const names[] = {
		"DATA", "HEADERS", "PRIORITY", "RST_STREAM",    "SETTINGS",
		"PUSH", "PING",    "GOAWAY",   "WINDOW_UPDATE", "CONTINUATION"};
	struct giong_http2_stats h2;
	struct giong_http_stats hs;
	size_t off = 0;

	fprintf(stderr, "server sent %zu bytes, then %zd:", len, end);
	while (off + 9 <= len) {
		size_t flen = (size_t)p[off] << 16 | (size_t)p[off + 1] << 8 | p[off + 2];
		uint32_t id = ((uint32_t)p[off + 5] << 24 | (uint32_t)p[off + 6] << 16 |
			       (uint32_t)p[off + 7] << 8 | p[off + 8]) &
			      0x7fffffffu;

		fprintf(stderr, " %s/%u/%x/%zu", p[off + 3] < 10 ? names[p[off + 3]] : "?", id,
			p[off + 4], flen);
		if (p[off + 3] == 1 && flen >= 1) /* HEADERS: the first byte, an indexed :status */
			fprintf(stderr, "(%02x)", p[off + 9]);
		off += 9 + flen;
	}
	giong_http2_stats(&h2);
	giong_http_server_stats(srv, 0, &hs);
	fprintf(stderr,
		"\n  h2: streams %llu refused %llu resets %llu calm %llu protocol_errors %llu; "
		"http: requests %llu 2xx %llu 4xx %llu 5xx %llu body_timeouts %llu "
		"write_timeouts %llu\n",
		(unsigned long long)h2.streams, (unsigned long long)h2.refused_streams,
		(unsigned long long)h2.resets_received, (unsigned long long)h2.goaway_calm,
		(unsigned long long)h2.protocol_errors, (unsigned long long)hs.requests,
		(unsigned long long)hs.responses[1], (unsigned long long)hs.responses[3],
		(unsigned long long)hs.responses[4], (unsigned long long)hs.body_timeouts,
		(unsigned long long)hs.write_timeouts);
}

static void one(void *arg)
{
	struct input *in = arg;
	struct giong_task *serve, *writer;
	struct giong_http2_stats h2;
	char buf[16384];
	uint8_t *got = NULL;
	size_t ngot = 0;
	ssize_t n;
	int i;

	in->ran = true;
	CHECK(giong_unix_pair(&in->client, &in->server) == 0);
	CHECK(giong_spawn(serve_task, in, &serve) == 0);
	CHECK(giong_spawn(write_task, in, &writer) == 0);
	for (i = 0; i < READS_MAX; i++) {
		n = giong_stream_read(in->client, buf, sizeof(buf));
		if (n <= 0)
			break;
		if (verbose) {
			got = realloc(got, ngot + (size_t)n);
			CHECK(got);
			memcpy(got + ngot, buf, (size_t)n);
			ngot += (size_t)n;
		}
	}
	CHECK(i < READS_MAX);
	CHECK(n == 0 || n == -ECONNRESET);
	CHECK(giong_join(writer, NULL) == 0);
	CHECK(giong_join(serve, NULL) == 0);
	CHECK(in->served == 0);
	CHECK(giong_stream_close(in->client) == 0);
	/* The session is gone with the connection: nghttp2 holds nothing more on this
	 * worker (mem.c's count, back at 0 after every input: the next one starts
	 * from there on the same worker). */
	CHECK(giong_http2_stats(&h2) == 0);
	CHECK(h2.session_bytes == 0);
	if (verbose)
		show(got, ngot, n, in->srv);
	free(got);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct giong_http_server_options o = {0};
	struct giong_http_limits lim;
	struct input in = {0};
	const struct giong_http_protocol *list[2] = {NULL, NULL};

	if (size < 1)
		return 0;
	in.k = data[0] & 0x0f;
	in.rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)(data[0] >> 4 & 7) << 32) ^ size;
	in.proto = data[0] >> 7;
	in.data = data + 1;
	in.size = size - 1;

	giong_http_limits_init(&lim);
	lim.body = 64 * 1024;
	lim.head = 16 * 1024;
	/* Never reached while the client writes (it half-closes at its end): longer, so
	 * that a busy machine does not close the connection between two pieces. */
	lim.head_timeout_ms = 10 * FUZZ_TIMEOUT_MS;
	lim.idle_timeout_ms = 10 * FUZZ_TIMEOUT_MS;
	lim.body_timeout_ms = FUZZ_TIMEOUT_MS;
	lim.write_timeout_ms = FUZZ_TIMEOUT_MS;
	list[0] = protos[in.proto];
	o.limits = &lim;
	o.server_name = "fuzz";
	o.protocols = list;
	CHECK(giong_http_server_new(router, &o, &in.srv) == 0);

	fuzz_runtime_run(&in);
	CHECK(in.ran);
	CHECK(giong_http_server_free(in.srv) == 0);
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct giong_http2_options small;
	char fill[FILE_LEN];

	(void)argc;
	(void)argv;
	verbose = getenv("FUZZ_H2_VERBOSE") && *getenv("FUZZ_H2_VERBOSE") == '1';
	CHECK(giong_http_router_new(&router) == 0);
	CHECK(giong_http_router_add(router, "GET", "/", h_root, NULL) == 0);
	CHECK(giong_http_router_add(router, "POST", "/body", h_body, NULL) == 0);
	CHECK(giong_http_router_add(router, "POST", "/echo", h_echo, NULL) == 0);
	CHECK(giong_http_router_add(router, "GET", "/stream", h_stream, NULL) == 0);
	CHECK(giong_http_router_add(router, "GET", "/file", h_file, NULL) == 0);

	/* Small everything: flow control, the stream cap, the header budget and the glitch
	 * bucket are reached inside libFuzzer's input sizes. */
	CHECK(giong_http2_options_init(&small) == 0);
	small.max_concurrent_streams = 4;
	small.stream_window = 1024;
	small.header_list_max = 512;
	small.streams_per_read = 6;
	small.glitch_burst = 8;
	small.glitch_rate = 1;
	protos[0] = giong_http2();
	CHECK(giong_http2_new(&small, &protos[1]) == 0);

	file_fd = memfd_create("fuzz_http2_file", 0);
	CHECK(file_fd >= 0);
	memset(fill, 'f', sizeof(fill));
	CHECK(write(file_fd, fill, sizeof(fill)) == (ssize_t)sizeof(fill));

	fuzz_runtime_start(one, 4);
	return 0;
}
