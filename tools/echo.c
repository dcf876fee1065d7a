/* SPDX-License-Identifier: MIT */
/*
 * echo - a TCP echo server on giong: one worker per core, each with its own
 * SO_REUSEPORT listener; a task per connection; Ctrl-C (or SIGTERM) stops
 * accepting at once and gives open connections the grace period.
 *
 *   echo [--port 7000] [--host 0.0.0.0] [--workers N] [--spin-us N] [--stats]
 *
 * --stats prints each worker's counters (system calls, parks, completions,
 * fiber switches) when it stops: what bench/load/echo_bench.sh reads.
 *
 * Try it: `nc 127.0.0.1 7000`, type a line, see it back.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <giong/net.h>

#include "args.h"

struct opts {
	char addr[128];
	struct giong_config cfg;
	atomic_bool failed; /* a worker could not listen */
};

static intptr_t serve(void *arg)
{
	struct giong_stream *s = arg;
	struct giong_recvbuf *b;
	ssize_t n;

	while ((n = giong_stream_recv(s, &b)) > 0) {
		ssize_t w = giong_stream_write_all(s, giong_recvbuf_data(b), (size_t)n);

		giong_recvbuf_release(b); /* back to the worker's pool */
		if (w < 0)
			break;
	}
	giong_stream_close(s);
	return 0;
}

static void worker_main(unsigned worker, void *arg)
{
	struct opts *o = arg;
	struct giong_listener *l;
	struct giong_stream *s;
	int r;

	r = giong_tcp_listen(o->addr, NULL, &l);
	if (r) {
		fprintf(stderr, "echo: worker %u: listen on %s: %s\n", worker, o->addr,
			giong_strerror(r));
		atomic_store(&o->failed, true);
		giong_shutdown();
		return;
	}
	if (worker == 0)
		fprintf(stderr,
			"echo: listening on %s with %d workers (ring tier %d); Ctrl-C stops\n",
			o->addr, giong_worker_count(), giong_ring_tier());
	while ((r = giong_tcp_accept(l, &s)) != GIONG_ESHUTDOWN) {
		if (r == 0 && giong_spawn(serve, s, NULL))
			giong_stream_close(s);
	}
	giong_listener_close(l);
}

static void usage(void)
{
	fprintf(stderr, "usage: echo [--port N] [--host ADDR] [--workers N] [--spin-us N]\n"
			"            [--stats]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct opts o = {0};
	struct giong_runtime *rt;
	const char *host = "0.0.0.0";
	int port = 7000, r;
	bool stats = false;

	giong_config_init(&o.cfg);
	o.cfg.shutdown_on_signals = true;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--stats")) {
			stats = true;
			continue;
		}
		if (i + 1 >= argc)
			usage();
		if (!strcmp(argv[i], "--port"))
			port = (int)tool_number("echo", "--port", argv[++i], 0, 65535);
		else if (!strcmp(argv[i], "--host"))
			host = argv[++i];
		else if (!strcmp(argv[i], "--workers"))
			o.cfg.workers =
				(unsigned)tool_number("echo", "--workers", argv[++i], 1, 1024);
		else if (!strcmp(argv[i], "--spin-us"))
			o.cfg.spin_before_park_us =
				(uint32_t)tool_number("echo", "--spin-us", argv[++i], 0, 10000000);
		else
			usage();
	}
	snprintf(o.addr, sizeof(o.addr), strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
	r = giong_runtime_new(&o.cfg, &rt);
	if (r) {
		fprintf(stderr, "echo: %s\n", giong_strerror(r));
		return 1;
	}
	r = giong_runtime_run(rt, worker_main, &o);
	for (unsigned i = 0; stats && r == 0 && i < o.cfg.workers; i++) {
		struct giong_stats st;

		if (giong_runtime_stats(rt, i, &st) == 0)
			fprintf(stderr,
				"echo: worker %u: ticks %llu enters %llu parks %llu cqes %llu "
				"switches %llu\n",
				i, (unsigned long long)st.ticks, (unsigned long long)st.enters,
				(unsigned long long)st.parks, (unsigned long long)st.cqes_reaped,
				(unsigned long long)st.switches);
	}
	giong_runtime_free(rt);
	if (r) {
		fprintf(stderr, "echo: %s\n", giong_strerror(r));
		return 1;
	}
	if (atomic_load(&o.failed))
		return 1; /* the worker said why */
	fprintf(stderr, "echo: stopped\n");
	return 0;
}
