/* SPDX-License-Identifier: MIT */
/*
 * fuzz_http2_client.c - libFuzzer target: HTTP/2 frames from a server through
 * the client's HTTP/2 code (libgiong-http2's src/client*.c on libnghttp2, and
 * libgiong-http's client/, linked from their -internal twins), end to end
 * over a real loopback TCP connection.
 *
 * The client connects by URL only (giong_tcp_connect()), so the "server" is a
 * listening socket on 127.0.0.1, made once in LLVMFuzzerInitialize() and
 * handed to each input's runtime as a dup (giong_listener_from_fd()): one
 * port for the whole run, no bind per input. Connections left in its backlog
 * by an earlier input are drained (poll + accept4) before each input, so the
 * first connection an input accepts is its client's.
 *
 * One one-worker runtime serves every input (fuzz_runtime.h), with one of
 * two clients made once (.protocols = {HTTP/2}, .prior_knowledge: h2c from
 * the first byte; the second with small limits), as a long-lived program
 * keeps its client: each input ends with giong_http_client_close_idle(), so
 * the next one opens its own connection. Four
 * client tasks run at once to one origin, so their exchanges are streams of
 * one connection (1, 3, 5, 7 in the order they start, as a rule):
 *  - GET /a, the body read whole (giong_http_exchange_body());
 *  - GET /b, the body read in pieces of 1..8 bytes (giong_http_exchange_read());
 *  - POST /c, a body streamed in 3 writes (giong_http_exchange_write()), the
 *    response's read span by span (giong_http_exchange_next());
 *  - HEAD /d, or (bit 7) a pipeline of two GETs, /e and /f, which starts once
 *    the first connection is up (pipeline.c does not wait for a connection
 *    being opened, as an exchange does: it would open one of its own).
 * The server side is the fuzzer: a task accepts; on the first connection it
 * reads the client's preface, writes a valid empty SETTINGS frame, then the
 * input's bytes in pieces with a yield between them (the client receives them
 * in several turns), then a few turns, then half-closes; another task reads
 * and drops whatever the client sends until it closes. A later connection
 * (the client opens one after a GOAWAY, or to send a refused stream again)
 * gets the SETTINGS frame and the end of stream, nothing more.
 *
 * Input: a control byte, then the server's frames (no SETTINGS first: it is
 * added).
 *   bits 0-3: k, the largest piece is 2^k bytes (k = 15: the whole rest in
 *     one write); each piece's size is 1 + (a xorshift of the input) mod 2^k;
 *   bit 4: mixed into the xorshift's seed; the POST asks for 100-continue
 *     (which over HTTP/2 does not hold its body back);
 *   bit 5: the server writes its frames as soon as the preface came; else it
 *     first waits (a few ms at most) until the four requests were sent, so
 *     that a seed's responses meet their streams;
 *   bit 6: small client limits: head_max 256, fields_max 8, body_max 4096;
 *   bit 7: a pipeline of two GETs instead of the HEAD.
 * The seeds (tests/fuzz/corpus/http2_client/) are written by
 * tests/fuzz/http2_client_seeds.py with python3-hpack.
 *
 * Time per input is bounded by the client's head and body timeouts (15 ms):
 * a response that never comes or never ends fails with -ETIMEDOUT. What must
 * hold whatever the bytes, else a trap (ASan and UBSan catch the rest,
 * libFuzzer's leak check any leak): every call returns; a status is 200..599
 * or a negative errno (never 1xx); a body read whole is at most body_max
 * bytes, a HEAD's is empty; giong_http_exchange_end() returns 0 or 1; the
 * client closes every connection once its exchanges ended and its pool was
 * closed.
 *
 * FUZZ_H2C_VERBOSE=1 prints, for each input, what each exchange got.
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <giong/core.h>
#include <giong/http/client.h>
#include <giong/http2.h>
#include <giong/net/stream.h>
#include <giong/net/tcp.h>

#include "fuzz_runtime.h"
#include "fuzz_util.h"

/* The client's head and body timeouts (ms): short, so that no input hangs. */
#ifndef FUZZ_TIMEOUT_MS
#define FUZZ_TIMEOUT_MS 15
#endif
#define QUIET_YIELDS 8
/* Connections one input may open: far past what four exchanges, each sent again once,
 * and a pipeline need; more would be a client that reconnects without end. */
#define CONNS_MAX 32
/* Reads of one exchange's body in pieces: a hang guard far past any input. */
#define READS_MAX 100000
/* The server's reader waits this long for the client's close (ms): a client that keeps a
 * connection once its exchanges ended and its pool was closed is a finding. */
#define CLOSE_WAIT_MS 5000
#define SMALL_BODY 4096
/* The longest wait (ms) of the server for the requests, and of the pipeline for the
 * connection: a few turns in a run that goes well. */
#define WAIT_MS 20

static int listen_fd = -1;
static char base_url[64]; /* http://127.0.0.1:port */
static const struct giong_http_protocol *h2[2];
static struct giong_http_client *clients[2]; /* the defaults, the small limits (bit 6) */
static bool verbose;                         /* FUZZ_H2C_VERBOSE=1 */

/* The server's first frame: an empty SETTINGS (the client's frames come after the preface). */
static const uint8_t settings[] = "\x00\x00\x00\x04\x00\x00\x00\x00\x00";

struct input;

/* One accepted connection: the task that writes, the one that reads and drops. */
struct conn {
	struct input *in;
	struct giong_stream *s;
	struct giong_task *task, *reader;
	bool first;
};

struct input {
	const uint8_t *data; /* the server's frames */
	size_t size;
	unsigned k;    /* the largest piece: 2^k */
	uint64_t rng;  /* xorshift state of the server's pieces */
	uint64_t seed; /* the control byte's, for the client's read sizes */
	bool small;    /* small client limits */
	bool pipeline;
	struct giong_http_client *cli;
	uint64_t body_max;
	uint32_t fields_max;
	bool expect; /* bit 4: the POST asks for 100-continue */
	struct giong_listener *l;
	struct conn conns[CONNS_MAX];
	int nconns;
	int accepted;   /* connections accepted, CONNS_MAX or not */
	bool connected; /* the first connection's preface came */
	bool at_once;   /* bit 5: no wait for the requests */
	int sent;       /* requests sent (or failed to) */
	int status[4];
	ssize_t body[4];
	bool ran;
};

/* --- the server side --------------------------------------------------------------------- */

static intptr_t reader_task(void *arg)
{
	struct conn *c = arg;
	char buf[4096];
	ssize_t n;

	giong_deadline_in(CLOSE_WAIT_MS);
	while ((n = giong_stream_read(c->s, buf, sizeof(buf))) > 0)
		;
	/* The client closed (0), reset (-ECONNRESET), or never did (-ETIMEDOUT: a finding). */
	CHECK(n != -ETIMEDOUT);
	return 0;
}

/* The client's preface (24 bytes): read before the server's SETTINGS, as a server would.
 * Returns false when the client closed or failed first. */
static bool read_preface(struct conn *c)
{
	char buf[4096];
	size_t got = 0;
	ssize_t n;
	uint64_t saved = giong_deadline_in(CLOSE_WAIT_MS);

	while (got < 24 && (n = giong_stream_read(c->s, buf, sizeof(buf))) > 0)
		got += (size_t)n;
	giong_deadline_restore(saved);
	return got >= 24;
}

static intptr_t conn_task(void *arg)
{
	struct conn *c = arg;
	struct input *in = c->in;
	size_t pos = 0;
	ssize_t w;

	if (!read_preface(c))
		goto out;
	in->connected = true;
	CHECK(giong_spawn(reader_task, c, &c->reader) == 0);
	w = giong_stream_write_all(c->s, settings, sizeof(settings) - 1);
	for (int i = 0; c->first && !in->at_once && in->sent < 4 && i < WAIT_MS; i++)
		giong_sleep_ms(1);
	while (w >= 0 && c->first && pos < in->size) {
		size_t n = fuzz_piece(&in->rng, in->k, in->size - pos);

		w = giong_stream_write_all(c->s, in->data + pos, n);
		if (w >= 0)
			CHECK((size_t)w == n);
		pos += n;
		giong_yield(); /* the client's turn: this piece alone, if it came in time */
	}
	/* The client closes first when it refused a frame: -EPIPE, -ECONNRESET. */
	CHECK(w >= 0 || w == -EPIPE || w == -ECONNRESET);
	for (int i = 0; i < QUIET_YIELDS; i++)
		giong_yield();
	giong_stream_shutdown(c->s, SHUT_WR); /* fails if the client closed: no matter */
	CHECK(giong_join(c->reader, NULL) == 0);
out:
	CHECK(giong_stream_close(c->s) == 0);
	return 0;
}

static intptr_t accept_task(void *arg)
{
	struct input *in = arg;
	struct giong_stream *s;
	int r;

	while ((r = giong_tcp_accept(in->l, &s)) == 0) {
		struct conn *c;

		in->accepted++;
		if (in->nconns == CONNS_MAX) {
			giong_stream_close(s);
			continue;
		}
		c = &in->conns[in->nconns];
		c->in = in;
		c->s = s;
		c->first = in->nconns == 0;
		CHECK(giong_spawn(conn_task, c, &c->task) == 0);
		in->nconns++;
	}
	CHECK(r == -EBADF); /* the listener closed by the main task */
	return 0;
}

/* --- the client side --------------------------------------------------------------------- */

/* A request sent, or failed: 0 or -errno (1: expect-continue only). */
static void sent(struct input *in, int r)
{
	CHECK(r <= 0);
	in->sent++;
}

/* A status: a final one, or an error; never 1xx. */
static void check_status(int st)
{
	CHECK(st < 0 || (st >= 200 && st <= 599));
}

static void check_end(struct giong_http_exchange *ex)
{
	int r = giong_http_exchange_end(ex);

	CHECK(r == 0 || r == 1);
}

static struct giong_http_exchange *begin(struct input *in, const char *method, const char *path)
{
	struct giong_http_exchange *ex;
	char url[96];

	snprintf(url, sizeof(url), "%s%s", base_url, path);
	CHECK(giong_http_exchange_begin(in->cli, method, url, &ex) == 0);
	CHECK(giong_http_exchange_header(ex, "x-fuzz", path + 1) == 0);
	return ex;
}

/* What a final head read must show, whatever the bytes: the same status again, at most
 * fields_max fields, each with a name, and a Content-Length of 0 or more, or -1 (not
 * known), 0 for a HEAD. Returns it. */
static int64_t check_head(struct input *in, struct giong_http_exchange *ex, int st, bool head)
{
	const char *name, *value;
	size_t nl, vl;
	int64_t cl;
	int n;

	CHECK(giong_http_exchange_status(ex) == st);
	n = giong_http_exchange_field_count(ex);
	CHECK(n >= 0 && (uint32_t)n <= in->fields_max);
	for (int i = 0; i < n; i++) {
		CHECK(giong_http_exchange_field_at(ex, (unsigned)i, &name, &nl, &value, &vl) == 0);
		CHECK(name && nl > 0 && (value || !vl));
	}
	CHECK(giong_http_exchange_field_at(ex, (unsigned)n, &name, &nl, &value, &vl) == -ENOENT);
	(void)giong_http_exchange_field(ex, "content-type", &vl);
	cl = giong_http_exchange_content_length(ex);
	CHECK(cl >= -1);
	CHECK(!head || cl == 0);
	return cl;
}

/* Exchange @i: @method @path with no request body, the response's read whole (a HEAD's
 * is empty). */
static void whole(struct input *in, int i, const char *method, const char *path)
{
	struct giong_http_exchange *ex = begin(in, method, path);
	ssize_t max = strcmp(method, "HEAD") ? (ssize_t)in->body_max : 0;
	const void *data = NULL;
	int64_t cl;

	sent(in, giong_http_exchange_send(ex, NULL, 0));
	in->status[i] = giong_http_exchange_response(ex);
	check_status(in->status[i]);
	if (in->status[i] > 0) {
		cl = check_head(in, ex, in->status[i], max == 0);
		in->body[i] = giong_http_exchange_body(ex, &data);
		CHECK(in->body[i] <= max);
		CHECK(in->body[i] <= 0 || data);
		CHECK(in->body[i] < 0 || cl < 0 || in->body[i] == cl); /* nghttp2 checks it */
	}
	check_end(ex);
}

/* GET /a, read whole. */
static intptr_t get_whole(void *arg)
{
	whole(arg, 0, "GET", "/a");
	return 0;
}

/* GET /b, read in pieces of 1..8 bytes. */
static intptr_t get_pieces(void *arg)
{
	struct input *in = arg;
	struct giong_http_exchange *ex = begin(in, "GET", "/b");
	uint64_t rng = in->seed ^ 0x5555;
	char buf[8];
	ssize_t n = 0, total = 0;
	int i;

	sent(in, giong_http_exchange_send(ex, NULL, 0));
	in->status[1] = giong_http_exchange_response(ex);
	check_status(in->status[1]);
	if (in->status[1] > 0) {
		int64_t cl = check_head(in, ex, in->status[1], false);

		for (i = 0; i < READS_MAX; i++) {
			size_t want = 1 + (size_t)(fuzz_rng(&rng) & 7);

			n = giong_http_exchange_read(ex, buf, want);
			CHECK(n <= (ssize_t)want);
			if (n <= 0)
				break;
			total += n;
		}
		CHECK(i < READS_MAX);
		in->body[1] = n < 0 ? n : total;
		CHECK(n < 0 || cl < 0 || total == cl);
	}
	check_end(ex);
	return 0;
}

/* POST /c, the body streamed in 3 writes, the response's read span by span. */
static intptr_t post_streamed(void *arg)
{
	static const char *const pieces[] = {"first piece, ", "second, ", "and the last\n"};
	struct input *in = arg;
	struct giong_http_exchange *ex = begin(in, "POST", "/c");
	const void *data = NULL;
	ssize_t n = 0, total = 0;
	int r = 0, i;

	if (in->expect)
		CHECK(giong_http_exchange_expect_continue(ex, FUZZ_TIMEOUT_MS) == 0);
	for (i = 0; i < 3 && r == 0; i++)
		r = giong_http_exchange_write(ex, pieces[i], strlen(pieces[i]));
	CHECK(r <= 0 || (in->expect && r == 1)); /* 1: answered before the body */
	in->sent++;
	in->status[2] = giong_http_exchange_response(ex);
	check_status(in->status[2]);
	CHECK(r >= 0 || in->status[2] < 0); /* a write that failed fails the exchange */
	if (in->status[2] > 0) {
		int64_t cl = check_head(in, ex, in->status[2], false);

		for (i = 0; i < READS_MAX; i++) {
			if ((n = giong_http_exchange_next(ex, &data)) <= 0)
				break;
			CHECK(data);
			total += n;
		}
		CHECK(i < READS_MAX);
		in->body[2] = n < 0 ? n : total;
		CHECK(n < 0 || cl < 0 || total == cl);
	}
	check_end(ex);
	return 0;
}

/* GET /e and /f in a pipeline: handed back in order, each failing alone. */
static void pipeline(struct input *in)
{
	struct giong_http_pipeline *pl;
	struct giong_http_exchange *ex;
	const void *data;
	int st, i = 0;

	CHECK(giong_http_pipeline_begin(in->cli, 0, &pl) == 0);
	CHECK(giong_http_pipeline_add(pl, begin(in, "GET", "/e"), NULL, 0) == 0);
	CHECK(giong_http_pipeline_add(pl, begin(in, "GET", "/f"), NULL, 0) == 0);
	st = giong_http_pipeline_send(pl);
	CHECK(st <= 0);
	in->sent++;
	while ((st = giong_http_pipeline_next(pl, &ex)) != 0) {
		CHECK(ex);
		CHECK(i++ < 2);
		check_status(st);
		if (verbose)
			fprintf(stderr, "pipeline %d: %d\n", i, st);
		in->status[3] = st;
		if (st > 0) {
			in->body[3] = giong_http_exchange_body(ex, &data);
			CHECK(in->body[3] <= (ssize_t)in->body_max);
		}
		check_end(ex);
	}
	CHECK(i == 2);
	st = giong_http_pipeline_end(pl);
	CHECK(st == 0 || st == 1);
}

static intptr_t fourth(void *arg)
{
	struct input *in = arg;

	/* A pipeline takes the origin's connection only once it is up (it opens its own while
	 * the first exchange still connects): it waits for the preface, a few ms at most. */
	for (int i = 0; in->pipeline && !in->connected && i < WAIT_MS; i++)
		giong_sleep_ms(1);
	if (in->pipeline)
		pipeline(in);
	else
		whole(in, 3, "HEAD", "/d"); /* a response without a body */
	return 0;
}

static void one(void *arg)
{
	static giong_task_fn const fns[4] = {get_whole, get_pieces, post_streamed, fourth};
	struct input *in = arg;
	struct giong_task *acc, *tasks[4];
	int fd;

	in->ran = true;
	CHECK((fd = dup(listen_fd)) >= 0);
	CHECK(giong_listener_from_fd(fd, NULL, &in->l) == 0);
	CHECK(giong_spawn(accept_task, in, &acc) == 0);
	for (int i = 0; i < 4; i++)
		CHECK(giong_spawn(fns[i], in, &tasks[i]) == 0);
	for (int i = 0; i < 4; i++)
		CHECK(giong_join(tasks[i], NULL) == 0);
	/* Every exchange ended: the pool's connection (if any) closes, the rest are closed. */
	CHECK(giong_http_client_close_idle(in->cli) >= 0);
	CHECK(giong_listener_close(in->l) == 0);
	CHECK(giong_join(acc, NULL) == 0);
	for (int i = 0; i < in->nconns; i++)
		CHECK(giong_join(in->conns[i].task, NULL) == 0);
	CHECK(in->accepted < CONNS_MAX);
	if (verbose)
		fprintf(stderr, "conns %d: a %d/%zd b %d/%zd c %d/%zd %s %d/%zd\n", in->accepted,
			in->status[0], in->body[0], in->status[1], in->body[1], in->status[2],
			in->body[2], in->pipeline ? "pipeline(last)" : "head", in->status[3],
			in->body[3]);
}

/* Connections an earlier input's client made that its server never took: closed, so
 * that this input's first connection is its own client's. */
static void drain_backlog(void)
{
	struct pollfd p = {.fd = listen_fd, .events = POLLIN};

	for (int i = 0; i < 64 && poll(&p, 1, 0) == 1; i++) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0)
			break;
		close(fd);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input *in;

	if (size < 1)
		return 0;
	CHECK((in = calloc(1, sizeof(*in))));
	in->k = data[0] & 0x0f;
	in->rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)(data[0] >> 4 & 1) << 32) ^ size;
	in->expect = data[0] >> 4 & 1;
	in->at_once = data[0] >> 5 & 1;
	in->seed = in->rng;
	in->small = data[0] >> 6 & 1;
	in->pipeline = data[0] >> 7;
	in->data = data + 1;
	in->size = size - 1;
	in->cli = clients[in->small];
	in->body_max = in->small ? SMALL_BODY : GIONG_HTTP_CLIENT_BODY;
	in->fields_max = in->small ? 8 : GIONG_HTTP_CLIENT_FIELDS;

	drain_backlog();
	fuzz_runtime_run(in);
	CHECK(in->ran);
	free(in);
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);

	(void)argc;
	(void)argv;
	verbose = getenv("FUZZ_H2C_VERBOSE") && *getenv("FUZZ_H2C_VERBOSE") == '1';
	h2[0] = giong_http2();
	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(listen_fd >= 0);
	CHECK(bind(listen_fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	CHECK(listen(listen_fd, 128) == 0);
	CHECK(getsockname(listen_fd, (struct sockaddr *)&a, &len) == 0);
	snprintf(base_url, sizeof(base_url), "http://127.0.0.1:%u", ntohs(a.sin_port));

	for (int small = 0; small < 2; small++) {
		struct giong_http_client_options o = {0};

		o.protocols = h2;
		o.prior_knowledge = true;
		o.connect_timeout_ms = 1000;
		o.head_timeout_ms = FUZZ_TIMEOUT_MS;
		o.body_timeout_ms = FUZZ_TIMEOUT_MS;
		if (small) {
			o.head_max = 256;
			o.fields_max = 8;
			o.body_max = SMALL_BODY;
		}
		CHECK(giong_http_client_new(&o, &clients[small]) == 0);
	}
	fuzz_runtime_start(one, 8);
	return 0;
}
