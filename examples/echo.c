/* SPDX-License-Identifier: MIT */
/*
 * echo - a TCP echo server on giong: one worker per core, each with its own
 * SO_REUSEPORT listeners; a task per connection; Ctrl-C (or SIGTERM) stops
 * accepting at once and gives open connections the grace period.
 *
 *   echo [--port 7000] [--host ADDR] [--workers N] [--spin-us N] [--stats]
 *        [--reuse-port]
 *
 * By default it listens on 127.0.0.1 and [::1] (IPv4 and IPv6 loopback; the
 * IPv6 one left out on a host without IPv6); --host 0.0.0.0 (or ::) listens
 * on every address of both families, any other --host on that one alone
 * (programs/hosts.h).
 *
 * A port another server listens on already is refused ("in use by another server",
 * exit 1) unless --reuse-port asks to share it: the listeners' SO_REUSEPORT would
 * otherwise let a second echo started by mistake take half the connections.
 *
 * --stats prints each worker's counters (system calls, parks, completions,
 * fiber switches) when it stops: what bench/load/echo_bench.sh reads.
 *
 * Try it: `nc 127.0.0.1 7000` (or `nc ::1 7000`), type a line, see it back.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <giong/net.h>

#include "args.h"
#include "hosts.h"
#include "stop_signals.h"

struct opts {
	struct tool_hosts hosts;
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

/* Accept on listener @arg until shutdown, a task per connection; then close it. */
static intptr_t accept_loop(void *arg)
{
	struct giong_listener *l = arg;
	struct giong_stream *s;
	int r;

	/* Other errors (EMFILE and friends) pass: the next accept tries again. */
	while ((r = giong_tcp_accept(l, &s)) != GIONG_ESHUTDOWN && r != -ECANCELED) {
		if (r == 0 && giong_spawn(serve, s, NULL))
			giong_stream_close(s);
	}
	giong_listener_close(l);
	return 0;
}

static int tcp_bind(const char *addr, bool v6only, void **ret)
{
	struct giong_listen_options lo = {.v6only = v6only};
	struct giong_listener *l = NULL;
	int r = giong_tcp_listen(addr, &lo, &l);

	*ret = l;
	return r;
}

static int tcp_local_addr(void *l, struct giong_addr *out)
{
	return giong_listener_addr(l, out);
}

static void tcp_close(void *l)
{
	giong_listener_close(l);
}

static const struct tool_sock_ops tcp_ops = {tcp_bind, tcp_local_addr, tcp_close};

static void worker_main(unsigned worker, void *arg)
{
	struct opts *o = arg;
	char line[TOOL_HOSTS_LINE];
	void *l[2];
	unsigned n = tool_bind_all(&o->hosts, &tcp_ops, "echo", l, line, sizeof(line));

	if (!n) {
		atomic_store(&o->failed, true);
		giong_shutdown();
		return;
	}
	if (worker == 0)
		fprintf(stderr,
			"echo: listening on %s with %d workers (ring tier %d); Ctrl-C stops\n",
			line, giong_worker_count(), giong_ring_tier());
	tool_serve_all_socks(l, n, accept_loop, &tcp_ops, "echo");
}

static void usage(void)
{
	fprintf(stderr, "usage: echo [--port N] [--host ADDR] [--workers N] [--spin-us N]\n"
			"            [--stats] [--reuse-port]\n"
			"Listens on 127.0.0.1 and [::1] unless --host names another address\n"
			"(0.0.0.0 or :: for every one). A port in use by another server is\n"
			"refused unless --reuse-port asks to share it.\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct opts o = {0};
	struct giong_runtime *rt;
	const char *host = NULL; /* 127.0.0.1 and [::1] */
	int port = 7000, r;
	bool stats = false, reuse_port = false;

	giong_config_init(&o.cfg);
	o.cfg.shutdown_on_signals = true;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--stats")) {
			stats = true;
			continue;
		}
		if (!strcmp(argv[i], "--reuse-port")) {
			reuse_port = true;
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
	tool_hosts(&o.hosts, host, port);
	for (unsigned i = 0; !reuse_port && port && i < o.hosts.n; i++) {
		if (tool_port_taken(o.hosts.addr[i], o.hosts.pair && i == 1)) {
			fprintf(stderr,
				"echo: %s is in use by another server (--port N for another; "
				"--reuse-port to share it)\n",
				o.hosts.addr[i]);
			return 1;
		}
	}
	r = giong_runtime_new(&o.cfg, &rt);
	if (r) {
		fprintf(stderr, "echo: %s\n", giong_strerror(r));
		return 1;
	}
	tool_block_stop_signals(); /* to the exit: stop_signals.h says why */
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
