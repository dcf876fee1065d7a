/* SPDX-License-Identifier: MIT */
/*
 * udp_echo - a UDP echo server on giong: one worker per core, each with its
 * own SO_REUSEPORT socket on the same port (the kernel spreads senders
 * across them); every datagram goes back to where it came from. Ctrl-C (or
 * SIGTERM) starts a graceful shutdown: each worker answers what is already
 * queued, then recv_from returns GIONG_ESHUTDOWN and the worker ends.
 *
 *   udp_echo [--port 7001] [--host 0.0.0.0] [--workers N] [--spin-us N]
 *
 * Try it: `socat - UDP:127.0.0.1:7001`, type a line, see it back (each
 * line is one datagram). IPv6: `udp_echo --host ::` and
 * `socat - UDP6:[::1]:7001`.
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

static void worker_main(unsigned worker, void *arg)
{
	struct opts *o = arg;
	struct giong_udp_options uo = {.reuseport = true};
	struct giong_udp *u;
	struct giong_recvbuf *b;
	struct giong_addr from;
	ssize_t n;
	int r;

	r = giong_udp_bind(o->addr, &uo, &u);
	if (r) {
		fprintf(stderr, "udp_echo: worker %u: bind %s: %s\n", worker, o->addr,
			giong_strerror(r));
		atomic_store(&o->failed, true);
		giong_shutdown();
		return;
	}
	if (worker == 0)
		fprintf(stderr,
			"udp_echo: on %s with %d workers (ring tier %d, payloads up to %ld bytes); "
			"Ctrl-C stops\n",
			o->addr, giong_worker_count(), giong_ring_tier(), giong_udp_max_payload());
	for (;;) {
		n = giong_udp_recv_from(u, &b, &from, NULL);
		if (n == GIONG_ESHUTDOWN || n == -ECANCELED)
			break;
		if (n < 0) {
			fprintf(stderr, "udp_echo: worker %u: recv: %s\n", worker,
				giong_strerror((int)n));
			continue;
		}
		/* A truncated datagram goes back truncated: that is what arrived. */
		r = (int)giong_udp_send_to(u, giong_recvbuf_data(b), (size_t)n, &from);
		giong_recvbuf_release(b); /* back to the worker's pool */
		if (r < 0)
			fprintf(stderr, "udp_echo: worker %u: send: %s\n", worker,
				giong_strerror(r));
	}
	giong_udp_close(u);
}

static void usage(void)
{
	fprintf(stderr, "usage: udp_echo [--port N] [--host ADDR] [--workers N] [--spin-us N]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct opts o = {0};
	struct giong_runtime *rt;
	const char *host = "0.0.0.0";
	int port = 7001, r;

	giong_config_init(&o.cfg);
	o.cfg.shutdown_on_signals = true;
	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		if (!strcmp(argv[i], "--port"))
			port = (int)tool_number("udp_echo", "--port", argv[++i], 0, 65535);
		else if (!strcmp(argv[i], "--host"))
			host = argv[++i];
		else if (!strcmp(argv[i], "--workers"))
			o.cfg.workers =
				(unsigned)tool_number("udp_echo", "--workers", argv[++i], 1, 1024);
		else if (!strcmp(argv[i], "--spin-us"))
			o.cfg.spin_before_park_us = (uint32_t)tool_number("udp_echo", "--spin-us",
									  argv[++i], 0, 10000000);
		else
			usage();
	}
	snprintf(o.addr, sizeof(o.addr), strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
	r = giong_runtime_new(&o.cfg, &rt);
	if (r) {
		fprintf(stderr, "udp_echo: %s\n", giong_strerror(r));
		return 1;
	}
	r = giong_runtime_run(rt, worker_main, &o);
	giong_runtime_free(rt);
	if (r) {
		fprintf(stderr, "udp_echo: %s\n", giong_strerror(r));
		return 1;
	}
	if (atomic_load(&o.failed))
		return 1; /* the worker said why */
	fprintf(stderr, "udp_echo: stopped\n");
	return 0;
}
