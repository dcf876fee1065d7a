/* SPDX-License-Identifier: MIT */
/*
 * udp_echo - a UDP echo server on giong: one worker per core, each with its
 * own SO_REUSEPORT socket on the same port (the kernel spreads senders
 * across them); every datagram goes back to where it came from. Ctrl-C (or
 * SIGTERM) starts a graceful shutdown: each worker answers what is already
 * queued, then recv_from returns GIONG_ESHUTDOWN and the worker ends.
 *
 *   udp_echo [--port 7001] [--host ADDR] [--workers N] [--spin-us N]
 *
 * By default it binds 127.0.0.1 and [::1] (IPv4 and IPv6 loopback; the IPv6
 * one left out on a host without IPv6); --host 0.0.0.0 (or ::) binds every
 * address of both families, any other --host that one alone (programs/hosts.h).
 *
 * Try it: `socat - UDP:127.0.0.1:7001` or `socat - UDP6:[::1]:7001`, type a
 * line, see it back (each line is one datagram).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <giong/net.h>

#include "args.h"
#include "stop_signals.h"
#include "hosts.h"

struct opts {
	struct tool_hosts hosts;
	struct giong_config cfg;
	atomic_bool failed; /* a worker could not listen */
};

/* Echo every datagram of UDP socket @arg until shutdown; then close it. */
static intptr_t echo_loop(void *arg)
{
	struct giong_udp *u = arg;
	unsigned worker = (unsigned)giong_worker_index();
	struct giong_recvbuf *b;
	struct giong_addr from;
	ssize_t n;
	int r;

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
	return 0;
}

static int udp_bind(const char *addr, bool v6only, void **ret)
{
	struct giong_udp_options uo = {.reuseport = true, .v6only = v6only};
	struct giong_udp *u = NULL;
	int r = giong_udp_bind(addr, &uo, &u);

	*ret = u;
	return r;
}

static int udp_local_addr(void *u, struct giong_addr *out)
{
	return giong_udp_local_addr(u, out);
}

static void udp_close(void *u)
{
	giong_udp_close(u);
}

static const struct tool_sock_ops udp_ops = {udp_bind, udp_local_addr, udp_close};

static void worker_main(unsigned worker, void *arg)
{
	struct opts *o = arg;
	char line[TOOL_HOSTS_LINE];
	void *u[2];
	unsigned n = tool_bind_all(&o->hosts, &udp_ops, "udp_echo", u, line, sizeof(line));

	if (!n) {
		atomic_store(&o->failed, true);
		giong_shutdown();
		return;
	}
	if (worker == 0)
		fprintf(stderr,
			"udp_echo: on %s with %d workers (ring tier %d, payloads up to %ld bytes); "
			"Ctrl-C stops\n",
			line, giong_worker_count(), giong_ring_tier(), giong_udp_max_payload());
	tool_serve_all_socks(u, n, echo_loop, &udp_ops, "udp_echo");
}

static void usage(void)
{
	fprintf(stderr, "usage: udp_echo [--port N] [--host ADDR] [--workers N] [--spin-us N]\n"
			"Binds 127.0.0.1 and [::1] unless --host names another address\n"
			"(0.0.0.0 or :: for every one).\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct opts o = {0};
	struct giong_runtime *rt;
	const char *host = NULL; /* 127.0.0.1 and [::1] */
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
	tool_hosts(&o.hosts, host, port);
	r = giong_runtime_new(&o.cfg, &rt);
	if (r) {
		fprintf(stderr, "udp_echo: %s\n", giong_strerror(r));
		return 1;
	}
	tool_block_stop_signals(); /* to the exit: stop_signals.h says why */
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
