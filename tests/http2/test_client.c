/* SPDX-License-Identifier: MIT */
/*
 * test_client.c - libgiong-http's client speaking HTTP/2 (h2c with prior
 * knowledge) to h2_server (its path is argv[1] or $H2_SERVER; started once per
 * server configuration as a child process): bodies both ways, whole and streamed,
 * HEAD and bodiless statuses, many exchanges multiplexed on one connection,
 * a stream limit of the server's reached, a response head over the client's
 * limit, an exchange ended early, and the client's counters that say it was
 * HTTP/2 and not HTTP/1.1.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "giong_test.h"
#include "../http/client_test.h" /* its socket server: struct rs */

#include <giong/http.h>
#include <giong/http2.h>

static const char *server_bin;

struct server {
	pid_t pid;
	int port;
	char base[64];
};

/* Start h2_server with @args (NULL-terminated), wait for its "port N" line. */
static void server_start(struct server *sv, const char *const *args)
{
	const char *argv[16] = {server_bin, "--host", "127.0.0.1"};
	posix_spawn_file_actions_t fa;
	int pfd[2], n = 3;
	char line[64] = "";
	FILE *f;

	for (; args && *args && n < 15; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	assert_int_equal(posix_spawn(&sv->pid, server_bin, &fa, NULL, (char *const *)argv, environ),
			 0);
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	f = fdopen(pfd[0], "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f); /* its later lines (counters at the exit) go nowhere */
	assert_int_equal(sscanf(line, "port %d", &sv->port), 1);
	snprintf(sv->base, sizeof(sv->base), "http://127.0.0.1:%d", sv->port);
}

/* Stop it with SIGTERM: it exits 0 within 10 s (graceful: the client's connections
 * were closed when the runtime ended), else it is killed and the test fails. */
static void server_stop(struct server *sv)
{
	int st = -1;
	pid_t r = 0;

	if (getenv("H2_STATS")) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "curl -s %s/stats", sv->base);
		(void)system(cmd);
	}
	kill(sv->pid, SIGTERM);
	for (int i = 0; i < 1000 && !(r = waitpid(sv->pid, &st, WNOHANG)); i++)
		usleep(10000);
	if (!r) {
		kill(sv->pid, SIGKILL);
		waitpid(sv->pid, &st, 0);
		fail_msg("h2_server did not stop within 10 s of SIGTERM");
	}
	assert_int_equal(r, sv->pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* The client every case uses: HTTP/2 with prior knowledge. */
static struct giong_http_client *h2_client(uint32_t head_max)
{
	static const struct giong_http_protocol *protos[2];
	struct giong_http_client_options o = {0};
	struct giong_http_client *cli;

	protos[0] = giong_http2();
	o.protocols = protos;
	o.prior_knowledge = true;
	o.head_max = head_max;
	o.body_max = 16u << 20;
	assert_int_equal(giong_http_client_new(&o, &cli), 0);
	return cli;
}

/* One worker: the client's counters are all on worker 0. */
static void run1(giong_main_fn fn, void *arg)
{
	struct giong_config cfg;

	giong_config_init(&cfg);
	cfg.workers = 1;
	gt_run(&cfg, fn, arg, NULL);
}

static bool pattern_ok(const unsigned char *p, size_t n, size_t from)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (from + i) % 251)
			return false;
	return true;
}

struct ctx {
	struct server *sv;
	struct giong_http_client *cli;
	int tasks, each;
	const char *path;
	int ok;
	struct giong_http_client_stats cs; /* read at the end, in the runtime */
};

/* ------------------------------------------------------------ one exchange at a time */

static void basics_main(unsigned worker, void *arg)
{
	struct ctx *c = arg;
	struct giong_http_client_stats cs;
	struct giong_http_exchange *ex;
	char url[128], *body;
	const void *data;
	int status;
	ssize_t n;

	(void)worker;
	/* GET from memory */
	snprintf(url, sizeof(url), "%s/json", c->sv->base);
	n = giong_http_get(c->cli, url, &status, &body);
	gt_check_int_equal(status, 200);
	if (gt_check_int_equal(n, 27))
		gt_check_string_equal(body, "{\"message\":\"Hello, World!\"}");
	free(body);

	/* HEAD: the length, no body */
	gt_check_int_equal(giong_http_exchange_begin(c->cli, "HEAD", url, &ex), 0);
	gt_check_int_equal(giong_http_exchange_response(ex), 200);
	gt_check_int_equal(giong_http_exchange_content_length(ex), 0);
	gt_check_int_equal(giong_http_exchange_body(ex, &data), 0);
	gt_check_int_equal(giong_http_exchange_end(ex), 1);

	/* 204 and 304: no body */
	for (int code = 204; code <= 304; code += 100) {
		snprintf(url, sizeof(url), "%s/status/%d", c->sv->base, code);
		gt_check_int_equal(giong_http_exchange_begin(c->cli, "GET", url, &ex), 0);
		gt_check_int_equal(giong_http_exchange_response(ex), code);
		gt_check_int_equal(giong_http_exchange_body(ex, &data), 0);
		gt_check_int_equal(giong_http_exchange_end(ex), 1);
	}

	/* 3 MB whole, past the windows and frames */
	snprintf(url, sizeof(url), "%s/big?n=3000001", c->sv->base);
	gt_check_int_equal(giong_http_exchange_begin(c->cli, "GET", url, &ex), 0);
	gt_check_int_equal(giong_http_exchange_response(ex), 200);
	gt_check_int_equal(giong_http_exchange_content_length(ex), 3000001);
	n = giong_http_exchange_body(ex, &data);
	if (gt_check_int_equal(n, 3000001))
		gt_check_true(pattern_ok(data, (size_t)n, 0));
	gt_check_int_equal(giong_http_exchange_end(ex), 1);

	/* a file body (sendfile on the server), read in pieces of 1000 */
	snprintf(url, sizeof(url), "%s/file", c->sv->base);
	gt_check_int_equal(giong_http_exchange_begin(c->cli, "GET", url, &ex), 0);
	gt_check_int_equal(giong_http_exchange_response(ex), 200);
	{
		unsigned char buf[1000];
		size_t total = 0;
		bool good = true;

		while ((n = giong_http_exchange_read(ex, buf, sizeof(buf))) > 0) {
			good = good && pattern_ok(buf, (size_t)n, total);
			total += (size_t)n;
		}
		gt_check_int_equal(n, 0);
		gt_check_int_equal(total, 1048576 + 123);
		gt_check_true(good);
	}
	gt_check_int_equal(giong_http_exchange_end(ex), 1);

	/* POST 1 MiB whole, echoed */
	{
		size_t len = 1u << 20;
		unsigned char *up = malloc(len);

		gt_check_non_null(up);
		for (size_t i = 0; up && i < len; i++)
			up[i] = (unsigned char)(i % 251);
		snprintf(url, sizeof(url), "%s/echo", c->sv->base);
		gt_check_int_equal(giong_http_exchange_begin(c->cli, "POST", url, &ex), 0);
		gt_check_int_equal(giong_http_exchange_send(ex, up, len), 0);
		gt_check_int_equal(giong_http_exchange_response(ex), 200);
		n = giong_http_exchange_body(ex, &data);
		if (gt_check_int_equal(n, (ssize_t)len))
			gt_check_memory_equal(data, up, len);
		gt_check_int_equal(giong_http_exchange_end(ex), 1);
		free(up);
	}

	/* a streamed upload to a slow reader: 40 pieces of 16 KiB */
	{
		static char piece[16384];

		memset(piece, 'x', sizeof(piece));
		snprintf(url, sizeof(url), "%s/count?sleep_ms=1", c->sv->base);
		gt_check_int_equal(giong_http_exchange_begin(c->cli, "POST", url, &ex), 0);
		for (int i = 0; i < 40; i++)
			if (!gt_check_int_equal(giong_http_exchange_write(ex, piece, sizeof(piece)),
						0))
				break;
		gt_check_int_equal(giong_http_exchange_response(ex), 200);
		n = giong_http_exchange_body(ex, &data);
		if (gt_check_int_equal(n, 7))
			gt_check_memory_equal(data, "655360\n", 7);
		gt_check_int_equal(giong_http_exchange_end(ex), 1);
	}

	/* a streamed upload abandoned half way (no end, no response read), the last
	 * exchange on its connection: its DATA source is never read again, and the
	 * connection is closed (0), its RST_STREAM not written without waiting */
	{
		static char piece[16384];

		snprintf(url, sizeof(url), "%s/count?sleep_ms=1", c->sv->base);
		gt_check_int_equal(giong_http_exchange_begin(c->cli, "POST", url, &ex), 0);
		gt_check_int_equal(giong_http_exchange_write(ex, piece, sizeof(piece)), 0);
		gt_check_int_equal(giong_http_exchange_write(ex, piece, sizeof(piece)), 0);
		gt_check_int_equal(giong_http_exchange_end(ex), 0);
	}

	/* a streamed response, read as it comes */
	snprintf(url, sizeof(url), "%s/stream?n=5&ms=5", c->sv->base);
	gt_check_int_equal(giong_http_exchange_begin(c->cli, "GET", url, &ex), 0);
	gt_check_int_equal(giong_http_exchange_response(ex), 200);
	gt_check_int_equal(giong_http_exchange_content_length(ex), -1);
	gt_check_int_equal(giong_http_exchange_body(ex, &data), 60);
	gt_check_int_equal(giong_http_exchange_end(ex), 1);

	/* ended with most of its body unread while another exchange shares the
	 * connection: only its stream is reset, the connection goes on (1), and the
	 * other's reads write the reset */
	{
		struct giong_http_exchange *other;

		snprintf(url, sizeof(url), "%s/big?n=8000000", c->sv->base);
		gt_check_int_equal(giong_http_exchange_begin(c->cli, "GET", url, &ex), 0);
		gt_check_int_equal(giong_http_exchange_response(ex), 200);
		gt_check_true(giong_http_exchange_next(ex, &data) > 0);
		snprintf(url, sizeof(url), "%s/json", c->sv->base);
		gt_check_int_equal(giong_http_exchange_begin(c->cli, "GET", url, &other), 0);
		gt_check_int_equal(giong_http_exchange_response(other), 200);
		gt_check_int_equal(giong_http_exchange_end(ex), 1);
		gt_check_int_equal(giong_http_exchange_body(other, &data), 27);
		gt_check_int_equal(giong_http_exchange_end(other), 1);
		n = giong_http_get(c->cli, url, &status, &body);
		gt_check_int_equal(status, 200);
		gt_check_int_equal(n, 27);
		free(body);
	}

	/* a pipeline: its requests go as streams at once, handed back in order, the
	 * second ended unread (only its stream is reset) */
	{
		struct giong_http_pipeline *pl;
		int k = 0;

		gt_check_int_equal(giong_http_pipeline_begin(c->cli, 0, &pl), 0);
		for (int i = 0; i < 5; i++) {
			snprintf(url, sizeof(url), "%s/big?n=%d", c->sv->base, 1000 * (i + 1));
			gt_check_int_equal(giong_http_exchange_begin(c->cli, "GET", url, &ex), 0);
			gt_check_int_equal(giong_http_pipeline_add(pl, ex, NULL, 0), 0);
		}
		while ((status = giong_http_pipeline_next(pl, &ex)) != 0) {
			k++;
			gt_check_int_equal(status, 200);
			if (k != 2) {
				n = giong_http_exchange_body(ex, &data);
				if (gt_check_int_equal(n, 1000 * k))
					gt_check_true(pattern_ok(data, (size_t)n, 0));
			}
			gt_check_int_equal(giong_http_exchange_end(ex), 1);
		}
		gt_check_int_equal(k, 5);
		gt_check_int_equal(giong_http_pipeline_end(pl), 1);
	}

	/* every exchange above was an HTTP/2 stream, on two connections (the abandoned
	 * upload closed the first) */
	gt_check_int_equal(giong_http_client_stats(c->cli, 0, &cs), 0);
	gt_check_int_equal(cs.streams, cs.exchanges);
	gt_check_int_equal(cs.exchanges, 18);
	gt_check_int_equal(cs.connects, 2);
	gt_check_int_equal(giong_http_client_close_idle(c->cli), 1);
}

static void test_basics(void **state)
{
	struct server sv;
	struct ctx c = {.sv = &sv};

	(void)state;
	server_start(&sv, NULL);
	c.cli = h2_client(0);
	run1(basics_main, &c);
	assert_int_equal(giong_http_client_free(c.cli), 0);
	server_stop(&sv);
}

/* ------------------------------------------------------------ many at once */

static intptr_t getter(void *arg)
{
	struct ctx *c = arg;
	char url[128], *body;
	int status, good = 0;

	snprintf(url, sizeof(url), "%s%s", c->sv->base, c->path);
	for (int i = 0; i < c->each; i++) {
		ssize_t n = giong_http_get(c->cli, url, &status, &body);

		good += n == 6 && status == 200 && !memcmp(body, "slept\n", 6);
		free(body);
	}
	return good;
}

static void many_main(unsigned worker, void *arg)
{
	struct ctx *c = arg;
	struct giong_task *t[100];
	intptr_t got;

	(void)worker;
	for (int i = 0; i < c->tasks; i++)
		gt_check_int_equal(giong_spawn(getter, c, &t[i]), 0);
	for (int i = 0; i < c->tasks; i++) {
		gt_check_int_equal(giong_join(t[i], &got), 0);
		c->ok += (int)got;
	}
	gt_check_int_equal(giong_http_client_stats(c->cli, 0, &c->cs), 0);
}

/* 50 tasks of 4 GETs each that take 20 ms at the server: streams side by side on
 * one connection. Then against a server that allows 4 streams at once. */
static void test_many(void **state)
{
	static const char *const four[] = {"--h2-streams", "4", NULL};
	struct giong_http_client_stats cs;
	struct server sv;
	struct ctx c = {.sv = &sv, .tasks = 50, .each = 4, .path = "/sleep?ms=20"};

	(void)state;
	for (int round = 0; round < 2; round++) {
		server_start(&sv, round ? four : NULL);
		c.cli = h2_client(0);
		c.ok = 0;
		run1(many_main, &c);
		assert_int_equal(c.ok, c.tasks * c.each);
		cs = c.cs;
		printf("round %d: streams %llu connects %llu multiplexed %llu retries %llu\n",
		       round, (unsigned long long)cs.streams, (unsigned long long)cs.connects,
		       (unsigned long long)cs.multiplexed, (unsigned long long)cs.retries);
		/* a stream refused before the server's SETTINGS came is sent again */
		assert_int_equal(cs.streams, (uint64_t)(c.tasks * c.each) + cs.retries);
		assert_int_equal(cs.connects, 1);
		assert_true(cs.multiplexed >= (uint64_t)(c.tasks * c.each) / 2);
		assert_int_equal(giong_http_client_free(c.cli), 0);
		server_stop(&sv);
	}
}

/* ------------------------------------------------------------ limits */

static void limits_main(unsigned worker, void *arg)
{
	struct ctx *c = arg;
	char url[128], *body;
	int status;
	ssize_t n;

	(void)worker;
	snprintf(url, sizeof(url), "%s/json", c->sv->base);
	/* The head's fields (date, content-type, content-length, each + 32) are past 96
	 * bytes: refused, the stream reset, the connection kept. */
	n = giong_http_get(c->cli, url, &status, &body);
	gt_check_int_equal(n, -EMSGSIZE);
	gt_check_null(body);
	gt_check_int_equal(giong_http_client_stats(c->cli, 0, &c->cs), 0);
}

static void test_head_limit(void **state)
{
	struct server sv;
	struct ctx c = {.sv = &sv};

	(void)state;
	server_start(&sv, NULL);
	c.cli = h2_client(96);
	run1(limits_main, &c);
	assert_int_equal(c.cs.bad_responses, 1);
	assert_int_equal(giong_http_client_free(c.cli), 0);
	server_stop(&sv);
}

/* ------------------------------------------------------------ one task writes, another reads */

static intptr_t slow_get(void *arg)
{
	struct ctx *c = arg;
	char url[128], *body;
	int status;
	ssize_t n;

	snprintf(url, sizeof(url), "%s/sleep?ms=1500", c->sv->base);
	n = giong_http_get(c->cli, url, &status, &body);
	free(body);
	return n == 6 && status == 200;
}

/* While one exchange's task reads the connection (its response takes 1.5 s), another
 * streams an upload: each write returns once its bytes left, not when the server
 * happens to send something for the reader. */
static void write_beside_read_main(unsigned worker, void *arg)
{
	struct ctx *c = arg;
	struct giong_http_exchange *ex;
	struct giong_task *t;
	static char piece[1024];
	const void *data;
	char url[128];
	intptr_t got = 0;
	uint64_t t0, worst = 0;

	(void)worker;
	gt_check_int_equal(giong_spawn(slow_get, c, &t), 0);
	giong_sleep_ms(100); /* the GET's task is the connection's reader by now */
	snprintf(url, sizeof(url), "%s/count", c->sv->base);
	gt_check_int_equal(giong_http_exchange_begin(c->cli, "POST", url, &ex), 0);
	for (int i = 0; i < 4; i++) {
		t0 = giong_now_ms();
		gt_check_int_equal(giong_http_exchange_write(ex, piece, sizeof(piece)), 0);
		if (giong_now_ms() - t0 > worst)
			worst = giong_now_ms() - t0;
	}
	gt_check_int_equal(giong_http_exchange_response(ex), 200);
	gt_check_int_equal(giong_http_exchange_body(ex, &data), 5);
	gt_check_int_equal(giong_http_exchange_end(ex), 1);
	gt_check_int_equal(giong_join(t, &got), 0);
	gt_check_int_equal(got, 1);
	gt_check_true(worst < 700); /* not held until the sleeping response came */
	gt_check_int_equal(giong_http_client_stats(c->cli, 0, &c->cs), 0);
}

static void test_write_beside_read(void **state)
{
	struct server sv;
	struct ctx c = {.sv = &sv};

	(void)state;
	server_start(&sv, NULL);
	c.cli = h2_client(0);
	run1(write_beside_read_main, &c);
	assert_int_equal(c.cs.connects, 1);
	assert_int_equal(giong_http_client_free(c.cli), 0);
	server_stop(&sv);
}

/* ------------------------------------------------------------ a raw server */

/* A server of a few frames (tests/http/client_test.h's socket server): it reads the
 * client's preface and settings, sends its own SETTINGS and then the script, then keeps
 * the connection open for its hold_ms (or closes it at once). */
struct raw {
	const unsigned char *script;
	size_t len;
	int hold_ms;
};

static void raw_serve(struct rs *rs, int fd, int i)
{
	static const unsigned char settings[9] = {0, 0, 0, 4, 0, 0, 0, 0, 0};
	const struct raw *r = rs->arg;
	char buf[4096];

	(void)i;
	if (read(fd, buf, sizeof(buf)) > 0 && write(fd, settings, sizeof(settings)) == 9 &&
	    write(fd, r->script, r->len) == (ssize_t)r->len && r->hold_ms)
		usleep((useconds_t)r->hold_ms * 1000);
}

struct raw_ctx {
	struct giong_http_client *cli;
	int port;
	ssize_t n;
	int status;
	uint64_t ms;
	char *body;
};

static void raw_get_main(unsigned worker, void *arg)
{
	struct raw_ctx *c = arg;
	char url[64];
	uint64_t t0 = giong_now_ms();

	(void)worker;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", c->port);
	c->n = giong_http_get(c->cli, url, &c->status, &c->body);
	c->ms = giong_now_ms() - t0;
}

/* A connection error nghttp2 answers itself (a DATA frame on stream 0, the server
 * keeping the connection open): the exchange fails at once with -EBADMSG, not at its
 * head timeout (5 s). */
static void test_connection_error(void **state)
{
	static const unsigned char script[] = {0, 0, 1, 0, 0, 0, 0, 0, 0, 'x'};
	struct raw r = {script, sizeof(script), 3000};
	struct raw_ctx c = {0};
	struct rs rs;

	(void)state;
	rs_start(&rs, raw_serve, &r);
	c.cli = h2_client(0);
	c.port = rs.port;
	run1(raw_get_main, &c);
	assert_int_equal(c.n, -EBADMSG);
	assert_true(c.ms < 2000);
	assert_int_equal(giong_http_client_free(c.cli), 0);
	rs_stop(&rs);
}

/* A response whole (HEADERS :status 200, then 20,000 bytes of DATA, the last frame with
 * END_STREAM) and then the server's close in the same read: the body is all there. */
static void test_whole_then_close(void **state)
{
	static unsigned char script[10 + 2 * 9 + 20000];
	unsigned char *p = script;
	struct raw r = {script, sizeof(script), 0};
	struct raw_ctx c = {0};
	struct rs rs;

	(void)state;
	/* HEADERS, stream 1, END_HEADERS: ":status: 200" is HPACK's static entry 8 */
	memcpy(p, (unsigned char[]){0, 0, 1, 1, 4, 0, 0, 0, 1, 0x88}, 10);
	p += 10;
	/* DATA 16,384 + 3,616, stream 1, END_STREAM on the second */
	memcpy(p, (unsigned char[]){0, 0x40, 0, 0, 0, 0, 0, 0, 1}, 9);
	memset(p + 9, 'a', 16384);
	p += 9 + 16384;
	memcpy(p, (unsigned char[]){0, 0x0e, 0x20, 0, 1, 0, 0, 0, 1}, 9);
	memset(p + 9, 'b', 3616);
	rs_start(&rs, raw_serve, &r);
	c.cli = h2_client(0);
	c.port = rs.port;
	run1(raw_get_main, &c);
	assert_int_equal(c.status, 200);
	assert_int_equal(c.n, 20000);
	free(c.body);
	assert_int_equal(giong_http_client_free(c.cli), 0);
	rs_stop(&rs);
}

/* ------------------------------------------------------------ bad options */

static void test_options(void **state)
{
	static const struct giong_http_protocol *none[1] = {NULL};
	struct giong_http_client_options o = {0};
	struct giong_http_client *cli;
	struct giong_http_protocol fake;

	(void)state;
	o.prior_knowledge = true; /* with no protocol to speak */
	assert_int_equal(giong_http_client_new(&o, &cli), -EINVAL);
	o.protocols = none;
	assert_int_equal(giong_http_client_new(&o, &cli), -EINVAL);
	/* a table without the client's calls */
	memcpy(&fake, giong_http2(), sizeof(fake));
	fake.client_next = NULL;
	const struct giong_http_protocol *bad[2] = {&fake, NULL};
	o.protocols = bad;
	assert_int_equal(giong_http_client_new(&o, &cli), -EINVAL);
	fake.client_next = giong_http2()->client_next;
	fake.size = offsetof(struct giong_http_protocol, client_open);
	assert_int_equal(giong_http_client_new(&o, &cli), -EINVAL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_basics),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_head_limit),
		cmocka_unit_test(test_write_beside_read),
		cmocka_unit_test(test_connection_error),
		cmocka_unit_test(test_whole_then_close),
	};

	server_bin = argc > 1 ? argv[1] : getenv("H2_SERVER");
	if (!server_bin) {
		fprintf(stderr, "usage: %s H2_SERVER (or H2_SERVER in the environment)\n", argv[0]);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
