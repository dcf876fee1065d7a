/* SPDX-License-Identifier: MIT */
/*
 * soak - churn an echo server with many client tasks and check that nothing
 * is lost, corrupted or leaked.
 *
 *   soak [--seconds N] [--connections N] [--seed N] [--workers N]
 *        [--port N] [--connect HOST:PORT] [--quiet] [--no-trim]
 *        [--inject-fault N]
 *   soak --http [--tls wolfssl|openssl] [--certs DIR] [--http-bin PATH]
 *        [--server-workers N] [--seconds N] [--connections N] [--seed N]
 *        [--workers N] [--quiet]
 *
 * One process, one runtime (2 workers by default). Every worker listens on
 * 127.0.0.1:PORT (SO_REUSEPORT; a free port is picked when --port is 0, the
 * default) and echoes what it receives, and runs its share of the
 * --connections client tasks. A client connects (the kernel may hand the
 * connection to either worker's listener), runs a session of random steps,
 * closes one way or another, and connects again, until --seconds have passed.
 * With --connect HOST:PORT the clients talk to an echo server elsewhere (for
 * example build/bin/echo) and no listener is made.
 *
 * The steps of a session (each chosen at random):
 *  - echo: 1..4 messages of 1 B .. 64 KiB (at most 64 KiB in flight), sent
 *    with write_all, write or writev (short counts handled), read back with
 *    giong_stream_recv or giong_stream_read at random (random read lengths),
 *    some reads under a 0..3 ms deadline (giong_deadline_in): a timed-out
 *    read must lose nothing, the next read goes on;
 *  - cancel a reader: a second task reads the echo while this one writes it
 *    (in pieces, with pauses); the reader is cancelled with giong_task_cancel
 *    at a random moment, and what it did not read is read by this task;
 *  - writes under a deadline: up to 64 large messages with no reading in
 *    between under a 1..20 ms deadline (they fill the socket buffers, so the
 *    deadline often strikes inside a write);
 *  - cancel a writer: the same flood in a second task, cancelled after
 *    0..5 ms;
 *  - idle for 0..5 ms;
 *  - end: close without reading the echo of a message just sent; or
 *    SO_LINGER {1, 0} (set on giong_stream_fd) and close, a reset; or
 *    shutdown(SHUT_WR), read every echo and then the end of stream; or a
 *    plain close when the session's steps are done.
 *
 * Every byte is checked: message SEQ of connection ID carries a pattern
 * derived from (ID, SEQ, offset), and the echo must come back in order,
 * whole, and nothing more. A write that was cancelled or timed out leaves
 * the stream in an unknown state: the connection is closed and counted as
 * aborted, and nothing more is checked on it.
 *
 * Every step runs under a 15 s watchdog deadline: an operation that should
 * have finished and did not is a stall (a failure), never a hang. At the end
 * clients finish their step, close, and giong_shutdown() ends the run.
 *
 * It prints a progress line every 10 s and a summary: connections, bytes
 * verified, operations cancelled / timed out, mismatches (must be 0),
 * unexpected errors and stalls (must be 0), descriptors in /proc/self/fd
 * before the runtime is made and after it is freed (must be equal), and the
 * resident memory (VmRSS) sampled every second, right after malloc_trim(0)
 * so that it follows live memory rather than the heap's high-water mark
 * (--no-trim samples it as it is): the mean of the first third of the run
 * against the last third; it has settled if last <= first * 1.10 + 2 MiB
 * (not judged in a run shorter than 6 s: too few samples, nor in a build with
 * AddressSanitizer or ThreadSanitizer, whose own memory grows by design).
 * Exit 0 only if all of that holds.
 *
 * --inject-fault N makes the in-process server flip one bit in about one of
 * every N echoes it reads with giong_stream_read: a self-test showing that
 * the checks catch corruption (the run must then FAIL).
 *
 * --http: the example server examples/http (build/bin/http beside this program,
 * or --http-bin) is started as a process of
 * its own on 127.0.0.1 with --server-workers (default --workers) workers;
 * with --tls wolfssl|openssl it
 * serves HTTPS with that backend on a second port and the clients use that
 * one, trusting the test CA in --certs DIR (server.pem, server.key, ca.pem;
 * without it, tests/tls/make-certs.sh makes them in a temporary directory).
 * The client tasks (http.c) run on this process's workers. A quarter of them
 * are the steady stream, well-formed requests through libgiong-http's client
 * (keep-alive) that must all succeed: POST /echo with a sized body (0 B ..
 * 256 KiB) or a chunked one streamed in random pieces, GET /json, /users,
 * /health. The others pick, step by step:
 *  - a steady request as above;
 *  - a pipeline of 2..32 requests through the client (echo bodies of up to
 *    48 KiB in all, /json, /health), every response checked in order;
 *  - a raw pipelined burst: 1..16 requests, sized and chunked (random chunk
 *    sizes, hex in either case, extensions, trailers), written over a raw
 *    stream (TCP, or TLS with giong_tls_connect) in random pieces, the
 *    responses parsed and checked; 1..3 bursts a connection, the last maybe
 *    with Connection: close (the end of stream must follow);
 *  - a request cut off half way, after 0..2 whole ones: then a close, a reset,
 *    a pause and a close, or a half-close after which the server may answer
 *    only 400 or 408 and must close;
 *  - a reset (SO_LINGER {1, 0}) at a random moment: right after connecting
 *    (for TLS before the handshake), part way through a request, with
 *    requests sent and nothing read, with part of the responses read;
 *  - a request under a 0..10 ms deadline (a large echo, or GET /slow): it
 *    must be answered and checked, or time out;
 *  - a request in a task of its own, cancelled after 0..5 ms;
 *  - a pause of 0..20 ms.
 * Every /echo body is the pattern above and comes back checked byte for byte.
 * At the end the clients finish, their pooled connections close, the
 * server's descriptors must come back to what they were before the clients
 * started (within 10 s) and SIGTERM must stop it with exit status 0. The
 * memory judged is the server's VmRSS (as it is: no trim in its process),
 * its thirds taken after a warm-up of 20 s (at most a fifth of the run).
 * Under a fault plan (GIONG_FAULTS set in the environment, which the server
 * inherits) a request that fails is counted and not judged: the plan asked
 * for it; mismatches, stalls, leaks and descriptors still are.
 */
#include <malloc.h>

/* Under ASan or TSan (and so, with --http, the server built beside it)
 * memory is not judged: ASan's quarantine holds freed blocks, TSan keeps
 * its history; VmRSS grows by design. */
#if defined(__SANITIZE_ADDRESS__)
#define SOAK_SANITIZER "AddressSanitizer (its quarantine keeps freed memory)"
#elif defined(__SANITIZE_THREAD__)
#define SOAK_SANITIZER "ThreadSanitizer (its shadow and history grow)"
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SOAK_SANITIZER "AddressSanitizer (its quarantine keeps freed memory)"
#elif __has_feature(thread_sanitizer)
#define SOAK_SANITIZER "ThreadSanitizer (its shadow and history grow)"
#endif
#endif
#ifndef SOAK_SANITIZER
#define SOAK_SANITIZER NULL
#endif

#include "soak.h"
#include "args.h" /* programs/args.h */

struct soak_opts opt = {.seconds = 60, .connections = 128, .workers = 2, .seed = 1};
struct soak_counters ctr;
atomic_bool stop; /* clients: finish the step and leave */
volatile sig_atomic_t interrupted;
_Atomic unsigned clients_live;
_Atomic uint64_t next_conn_id = 1;
_Atomic unsigned srv_live; /* server connections open */
_Atomic unsigned reports;  /* detailed error lines printed */

static struct soak_server server; /* --http */

#define WARM_S 20u /* --http: the server's warm-up, not judged (s) */

static struct {
	double *rss_mib; /* one sample per second */
	unsigned n;
	double dur_s;
} mon;

/* ------------------------------------------------------------------ server */

static intptr_t serve(void *arg)
{
	struct giong_stream *s = arg;
	uint64_t rng = mix((uint64_t)(uintptr_t)s ^ giong_now_ms());
	unsigned mode = below(&rng, 3); /* 0 recv, 1 read, 2 either */
	uint8_t *buf = malloc(MAX_MSG);
	ssize_t n, w = 0;

	giong_task_set_name("soak-serve");
	for (;;) {
		if (buf && (mode == 1 || (mode == 2 && below(&rng, 2)))) {
			n = giong_stream_read(s, buf, rnd_len(&rng));
			if (n > 0 && opt.inject && below(&rng, opt.inject) == 0)
				buf[below(&rng, (uint32_t)n)] ^= 0x20; /* self-test of the checks */
			if (n > 0)
				w = giong_stream_write_all(s, buf, (size_t)n);
		} else {
			struct giong_recvbuf *b;

			n = giong_stream_recv(s, &b);
			if (n > 0) {
				w = giong_stream_write_all(s, giong_recvbuf_data(b), (size_t)n);
				giong_recvbuf_release(b);
			}
		}
		if (n <= 0 || w < 0)
			break;
	}
	if (n < 0 || w < 0) {
		ssize_t e = n < 0 ? n : w;

		if (e == -ECONNRESET)
			INC(srv_reset);
		else if (e == -EPIPE)
			INC(srv_pipe);
		else
			INC(srv_other);
	}
	free(buf);
	giong_stream_close(s);
	INC(srv_closed);
	atomic_fetch_sub(&srv_live, 1);
	return 0;
}

/* ----------------------------------------------------------------- monitor */

static void progress(uint64_t t0)
{
	double t = (double)(giong_now_ms() - t0) / 1000.0;
	struct giong_stats st = {0};

	giong_stats(&st); /* worker 0's */

	if (opt.http) {
		printf("soak: t=%4.0fs requests %" PRIu64 " (steady %" PRIu64 ", failed %" PRIu64
		       ") verified %.1f MiB timed out %" PRIu64 " cancelled %" PRIu64
		       " cut off %" PRIu64 " resets %" PRIu64 " mismatches %" PRIu64
		       " errors %" PRIu64 " stalls %" PRIu64 " server fds %d rss %.1f MiB\n",
		       t, GET(http_requests), GET(http_steady), GET(http_steady_failed),
		       (double)GET(bytes_verified) / 1048576.0, GET(http_timed_out),
		       GET(http_cancelled), GET(http_cutoffs), GET(http_resets), GET(mismatches),
		       GET(errors), GET(stalls), count_fds_of(server.pid),
		       mon.n ? mon.rss_mib[mon.n - 1] : 0.0);
		fflush(stdout);
		return;
	}
	printf("soak: t=%4.0fs conns %" PRIu64 " verified %.1f MiB (%.1f MiB/s) "
	       "reads cancelled/timed out %" PRIu64 "/%" PRIu64
	       " writes cancelled/timed out %" PRIu64 "/%" PRIu64 " aborted %" PRIu64
	       " mismatches %" PRIu64 " errors %" PRIu64 " stalls %" PRIu64
	       " fds %d rss %.1f MiB (worker 0: %u tasks, stacks %u in use + %u pooled)\n",
	       t, GET(conns_opened), (double)GET(bytes_verified) / 1048576.0,
	       t > 0 ? (double)GET(bytes_verified) / 1048576.0 / t : 0.0, GET(reads_cancelled),
	       GET(reads_timed_out), GET(writes_cancelled), GET(writes_timed_out),
	       GET(close_aborted), GET(mismatches), GET(errors), GET(stalls), count_fds_of(0),
	       mon.n ? mon.rss_mib[mon.n - 1] : (double)rss_kib_of(0) / 1024.0, st.fibers_live,
	       st.stacks_live, st.stacks_pooled);
	fflush(stdout);
}

static intptr_t monitor_task(void *arg)
{
	uint64_t t0 = giong_now_ms(), end = t0 + (uint64_t)opt.seconds * 1000;
	unsigned i = 0;

	(void)arg;
	giong_task_set_name("soak-monitor");
	while (!interrupted) {
		uint64_t next = t0 + (uint64_t)(i + 1) * 1000;

		if (next > end)
			break;
		if (giong_sleep_until(next) < 0)
			break; /* cancelled: the runtime is ending */
		/* Give glibc's free pages back first, so that the sample follows
		 * live memory rather than the heap's high-water mark (a leak
		 * stays: leaked blocks are not free). */
		if (!opt.no_trim && !opt.http)
			malloc_trim(0);
		/* --http: the server's, as it is (its heap is its own) */
		mon.rss_mib[mon.n++] = (double)rss_kib_of(opt.http ? server.pid : 0) / 1024.0;
		i++;
		if (!opt.quiet && i % 10 == 0)
			progress(t0);
	}
	mon.dur_s = (double)(giong_now_ms() - t0) / 1000.0;
	atomic_store(&stop, true);
	/* Every client finishes its step (each is bounded by its watchdog). */
	for (uint64_t until = giong_now_ms() + DRAIN_MS;
	     atomic_load(&clients_live) && giong_now_ms() < until;)
		if (giong_sleep_ms(10) < 0)
			break;
	if (atomic_load(&clients_live)) {
		REPORT("STALL: %u clients did not finish within %u ms of the end\n",
		       atomic_load(&clients_live), DRAIN_MS);
		INC(stalls);
	}
	giong_shutdown(); /* accept loops end; leftovers get the grace period */
	return 0;
}

/* ------------------------------------------------------------------ workers */

static struct client *clients;

static void worker_main(unsigned worker, void *arg)
{
	struct giong_listener *l = NULL;
	struct giong_stream *s;
	int r;

	(void)arg;
	if (!opt.external && !opt.http) {
		r = giong_tcp_listen_addr(&opt.addr, NULL, &l);
		if (r) {
			fprintf(stderr, "soak: worker %u: listen on %s: %s\n", worker,
				opt.addr_text, giong_strerror(r));
			INC(errors);
			atomic_store(&stop, true);
			giong_shutdown();
			return;
		}
	}
	for (unsigned i = worker; i < opt.connections; i += opt.workers) {
		atomic_fetch_add(&clients_live, 1);
		if (giong_spawn(opt.http ? http_client_task : client_task, &clients[i], NULL)) {
			atomic_fetch_sub(&clients_live, 1);
			INC(errors);
		}
	}
	if (worker == 0 && giong_spawn(monitor_task, NULL, NULL)) {
		fprintf(stderr, "soak: cannot start the monitor\n");
		atomic_store(&stop, true);
		giong_shutdown();
	}
	if (!l) {
		/* --connect: stay until the monitor shuts down. A run whose main
		 * tasks have all returned gives the other tasks only the grace
		 * period before cancelling them. */
		giong_shutdown_wait();
		if (opt.http)
			http_clients_worker_done();
		return;
	}
	while ((r = giong_tcp_accept(l, &s)) != GIONG_ESHUTDOWN) {
		if (r) {
			REPORT("ERROR accept: %s\n", giong_err_name(r));
			INC(errors);
			if (r == -EBADF || r == -EINVAL)
				break;
			continue;
		}
		INC(conns_accepted);
		atomic_fetch_add(&srv_live, 1);
		if (giong_spawn(serve, s, NULL)) {
			atomic_fetch_sub(&srv_live, 1);
			giong_stream_close(s);
			INC(errors);
		}
	}
	giong_listener_close(l);
}

/* -------------------------------------------------------------------- main */

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void on_alarm(int sig)
{
	static const char msg[] = "soak: FAIL: the run did not end within its time bound\n";

	(void)sig;
	if (server.pid > 0)
		kill(server.pid, SIGKILL); /* not left behind */
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(3);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: soak [--seconds N] [--connections N] [--seed N] [--workers N]\n"
		"            [--port N] [--connect HOST:PORT] [--quiet] [--no-trim]\n"
		"            [--inject-fault N]\n"
		"       soak --http [--tls wolfssl|openssl] [--certs DIR] [--http-bin PATH]\n"
		"            [--server-workers N] [--seconds N] [--connections N] [--seed N]\n"
		"            [--workers N] [--quiet]\n");
	exit(2);
}

static void print_http_summary(void)
{
	printf("  requests answered, checked %" PRIu64 " (steady stream %" PRIu64
	       " of which failed %" PRIu64 "%s; pipelined %" PRIu64 " in %" PRIu64
	       " pipelines; %" PRIu64 " raw pipelined bursts; %" PRIu64 " chunked bodies)\n",
	       GET(http_requests), GET(http_steady), GET(http_steady_failed),
	       GET(http_steady_failed) && !opt.lenient ? "  <-- FAIL" : "", GET(http_pipelined),
	       GET(http_pipelines), GET(http_raw_bursts), GET(http_chunked));
	printf("  other requests failed     %" PRIu64 "%s\n", GET(http_failed),
	       GET(http_failed) && !opt.lenient ? "  <-- FAIL"
	       : opt.lenient                    ? " (GIONG_FAULTS: not judged)"
						: "");
	printf("  bytes verified            %" PRIu64 " (%.1f MiB, %.1f MiB/s)\n",
	       GET(bytes_verified), (double)GET(bytes_verified) / 1048576.0,
	       mon.dur_s > 0 ? (double)GET(bytes_verified) / 1048576.0 / mon.dur_s : 0.0);
	printf("  raw connections           %" PRIu64 "; requests cut off half way %" PRIu64
	       " (answered 400/408 after a half-close: %" PRIu64 "); resets (SO_LINGER 0) %" PRIu64
	       "\n",
	       GET(conns_opened), GET(http_cutoffs), GET(http_cutoff_answers), GET(http_resets));
	printf("  deadlines                 %" PRIu64 " of %" PRIu64
	       " requests under a 0..10 ms deadline timed out; %" PRIu64 " of %" PRIu64
	       " cancelled tasks' requests cancelled\n",
	       GET(http_timed_out), GET(http_deadline_steps), GET(http_cancelled),
	       GET(http_cancel_steps));
}

static double mean(const double *v, unsigned n)
{
	double s = 0;

	for (unsigned i = 0; i < n; i++)
		s += v[i];
	return n ? s / n : 0;
}

int main(int argc, char **argv)
{
	struct giong_config cfg;
	struct giong_runtime *rt;
	struct sigaction sa = {0};
	int fds_before, fds_after, r;
	uint32_t leaked = 0;
	unsigned third, warm;
	double first, last, peak = 0, limit;
	bool fds_ok, mem_ok, mem_judged, ok;
	const char *sanitizer = SOAK_SANITIZER;
	int srv_fds_before = -1, srv_fds_after = -1, srv_exit = 0;
	char self_dir[4096];
	const char *faults = getenv("GIONG_FAULTS");

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--quiet")) {
			opt.quiet = true;
			continue;
		}
		if (!strcmp(a, "--no-trim")) {
			opt.no_trim = true;
			continue;
		}
		if (!strcmp(a, "--http")) {
			opt.http = true;
			continue;
		}
		if (i + 1 >= argc)
			usage();
		if (!strcmp(a, "--seconds"))
			opt.seconds = (unsigned)tool_number("soak", a, argv[++i], 1, 86400 * 7);
		else if (!strcmp(a, "--connections"))
			opt.connections = (unsigned)tool_number("soak", a, argv[++i], 1, 100000);
		else if (!strcmp(a, "--seed"))
			opt.seed = tool_number("soak", a, argv[++i], 0, UINT64_MAX);
		else if (!strcmp(a, "--workers"))
			opt.workers = (unsigned)tool_number("soak", a, argv[++i], 1, 1024);
		else if (!strcmp(a, "--port"))
			opt.port = (int)tool_number("soak", a, argv[++i], 0, 65535);
		else if (!strcmp(a, "--inject-fault"))
			opt.inject = (unsigned)tool_number("soak", a, argv[++i], 1, UINT32_MAX);
		else if (!strcmp(a, "--tls"))
			opt.tls = argv[++i];
		else if (!strcmp(a, "--certs"))
			opt.certs = argv[++i];
		else if (!strcmp(a, "--http-bin"))
			opt.http_bin = argv[++i];
		else if (!strcmp(a, "--server-workers"))
			opt.server_workers = (unsigned)tool_number("soak", a, argv[++i], 1, 1024);
		else if (!strcmp(a, "--connect")) {
			opt.external = true;
			snprintf(opt.addr_text, sizeof(opt.addr_text), "%s", argv[++i]);
		} else
			usage();
	}
	if (!opt.seconds || !opt.connections || !opt.workers)
		usage();
	if ((opt.tls || opt.certs || opt.http_bin || opt.server_workers) && !opt.http) {
		fprintf(stderr,
			"soak: --tls, --certs, --http-bin and --server-workers go with --http\n");
		usage();
	}
	if (opt.http && (opt.external || opt.inject)) {
		fprintf(stderr,
			"soak: --http starts its own server: no --connect, no --inject-fault\n");
		usage();
	}
	opt.lenient = faults && *faults;
	if (opt.http && !opt.server_workers)
		opt.server_workers = opt.workers;
	if (opt.http && !opt.http_bin) {
		/* examples/http beside this program: build/bin/http (soak is never installed) */
		ssize_t n = readlink("/proc/self/exe", self_dir, sizeof(self_dir) - 8);
		char *slash;

		self_dir[n > 0 ? n : 0] = '\0';
		slash = strrchr(self_dir, '/');
		if (!slash) {
			fprintf(stderr, "soak: where is the http program? (--http-bin)\n");
			return 2;
		}
		strcpy(slash + 1, "http");
		opt.http_bin = self_dir;
	}
	if (!opt.external) {
		if (!opt.port)
			opt.port = soak_pick_port();
		if (opt.port <= 0) {
			fprintf(stderr, "soak: no free port\n");
			return 1;
		}
		snprintf(opt.addr_text, sizeof(opt.addr_text), "127.0.0.1:%d", opt.port);
	}
	if (giong_addr_parse(opt.addr_text, &opt.addr)) {
		fprintf(stderr, "soak: bad address %s\n", opt.addr_text);
		return 2;
	}

	sa.sa_handler = on_sigint;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	alarm(opt.seconds + DRAIN_MS / 1000 + 60); /* hard bound on the whole run */

	mon.rss_mib = calloc(opt.seconds + 1, sizeof(double));
	clients = calloc(opt.connections, sizeof(*clients));
	if (!mon.rss_mib || !clients)
		return 1;
	for (unsigned i = 0; i < opt.connections; i++) {
		clients[i].idx = i;
		clients[i].rng = mix(opt.seed * 0x100000001B3ull + i) | 1;
		clients[i].c.rbuf = malloc(MAX_MSG);
		clients[i].c.wbuf = malloc(opt.http ? HTTP_MAX_BODY : MAX_MSG);
		if (!clients[i].c.rbuf || !clients[i].c.wbuf)
			return 1;
	}

	if (opt.http) {
		r = 0;
		if (http_server_prepare(&server) || (r = http_clients_init()) ||
		    http_server_start(&server)) {
			http_server_cleanup(&server, !r);
			return r == 77 ? 77 : 1;
		}
		usleep(500000); /* settled: its listeners and their tasks are up */
		srv_fds_before = count_fds_of(server.pid);
		printf("soak: %u s, %u client tasks, %u workers, seed %" PRIu64
		       ", %s server %s (pid %d, %u workers) on %s%s%s\n",
		       opt.seconds, opt.connections, opt.workers, opt.seed,
		       opt.tls ? "HTTPS" : "HTTP", opt.http_bin, server.pid, opt.server_workers,
		       opt.origin, opt.tls ? ", backend " : "", opt.tls ? opt.tls : "");
		if (opt.lenient)
			printf("soak: GIONG_FAULTS=%s: failed requests are the plan's (counted, "
			       "not fatal); mismatches, stalls, leaks still fail\n",
			       faults);
	} else {
		printf("soak: %u s, %u client connections, %u workers, seed %" PRIu64 ", %s %s\n",
		       opt.seconds, opt.connections, opt.workers, opt.seed,
		       opt.external ? "external echo server at" : "in-process echo server on",
		       opt.addr_text);
	}
	fflush(stdout);

	fds_before = count_fds_of(0);
	giong_config_init(&cfg);
	cfg.workers = opt.workers;
	cfg.shutdown_grace_ms = 3000;
	r = giong_runtime_new(&cfg, &rt);
	if (r) {
		fprintf(stderr, "soak: %s\n", giong_strerror(r));
		return 1;
	}
	r = giong_runtime_run(rt, worker_main, NULL);
	if (r)
		fprintf(stderr, "soak: run: %s\n", giong_strerror(r));
	for (unsigned w = 0; w < opt.workers; w++) {
		struct giong_stats st;

		if (!giong_runtime_stats(rt, w, &st))
			leaked += st.ops_leaked;
	}
	giong_runtime_free(rt);
	fds_after = count_fds_of(0);
	if (opt.http) {
		http_clients_free();
		/* The server closes its side of each connection once it sees the
		 * client's close: give it up to 10 s to be back where it began. */
		for (unsigned i = 0; i < 100; i++) {
			srv_fds_after = count_fds_of(server.pid);
			if (srv_fds_after <= srv_fds_before)
				break;
			usleep(100000);
		}
		srv_exit = http_server_stop(&server);
	}
	alarm(0);

	/* --http: the server is a fresh process that warms up (its fiber stack
	 * pool, its allocator's arenas, the TLS library) over its first tens of
	 * seconds; the thirds are taken after the first WARM_S seconds (at
	 * most a fifth of the run). */
	warm = opt.http ? (mon.n / 5 < WARM_S ? mon.n / 5 : WARM_S) : 0;
	third = (mon.n - warm) / 3;
	first = mean(mon.rss_mib + warm, third);
	last = mean(mon.rss_mib + mon.n - third, third);
	for (unsigned i = 0; i < mon.n; i++)
		peak = mon.rss_mib[i] > peak ? mon.rss_mib[i] : peak;
	limit = first * 1.10 + 2.0;
	fds_ok = fds_before == fds_after;
	/* Thirds of fewer than two samples say nothing: not judged. */
	mem_judged = third >= 2 && !sanitizer;
	mem_ok = !mem_judged || last <= limit;
	ok = !r && fds_ok && mem_ok && !GET(mismatches) && !GET(errors) && !GET(stalls) && !leaked;
	if (opt.http)
		ok = ok && srv_fds_after == srv_fds_before && srv_exit == 0;

	printf("soak: summary after %.1f s (%u client connections, %u workers, seed %" PRIu64
	       ")%s\n",
	       mon.dur_s, opt.connections, opt.workers, opt.seed,
	       interrupted ? " (interrupted)" : "");
	if (opt.http) {
		print_http_summary();
	} else {
		printf("  connections opened        %" PRIu64 " (accepted by the server: %" PRIu64
		       ")\n",
		       GET(conns_opened), GET(conns_accepted));
		printf("  closed                    normal %" PRIu64 ", half-close+EOF %" PRIu64
		       ", without reading %" PRIu64 ", reset (SO_LINGER 0) %" PRIu64
		       ", aborted after a cancelled/timed-out write %" PRIu64 "\n",
		       GET(close_normal), GET(close_half), GET(close_noread), GET(close_reset),
		       GET(close_aborted));
		printf("  messages sent             %" PRIu64 " (%.1f MiB)\n", GET(msgs_sent),
		       (double)GET(bytes_sent) / 1048576.0);
		printf("  bytes verified            %" PRIu64 " (%.1f MiB, %.1f MiB/s)\n",
		       GET(bytes_verified), (double)GET(bytes_verified) / 1048576.0,
		       mon.dur_s > 0 ? (double)GET(bytes_verified) / 1048576.0 / mon.dur_s : 0.0);
		printf("  reads  cancelled (task)   %" PRIu64 " of %" PRIu64 " cancels (%" PRIu64
		       " came after the reader was done); timed out (deadline) %" PRIu64 "\n",
		       GET(reads_cancelled), GET(reader_cancels), GET(reader_cancels_late),
		       GET(reads_timed_out));
		printf("  writes cancelled (task)   %" PRIu64 " of %" PRIu64 " cancels (%" PRIu64
		       " came after the writer was done); timed out (deadline) %" PRIu64
		       " of %" PRIu64 " deadline floods\n",
		       GET(writes_cancelled), GET(writer_cancels), GET(writer_cancels_late),
		       GET(writes_timed_out), GET(write_deadline_steps));
		printf("  operations cancelled/timed out  %" PRIu64 "\n",
		       GET(reads_cancelled) + GET(reads_timed_out) + GET(writes_cancelled) +
			       GET(writes_timed_out));
		printf("  server                    %" PRIu64 " closed; ended by reset %" PRIu64
		       ", broken pipe %" PRIu64 ", other %" PRIu64 "; still open %u\n",
		       GET(srv_closed), GET(srv_reset), GET(srv_pipe), GET(srv_other),
		       atomic_load(&srv_live));
	}
	printf("  mismatches                %" PRIu64 "%s\n", GET(mismatches),
	       GET(mismatches) ? "  <-- FAIL" : "");
	printf("  unexpected errors         %" PRIu64 ", stalls %" PRIu64
	       ", operations leaked %u%s\n",
	       GET(errors), GET(stalls), leaked,
	       GET(errors) || GET(stalls) || leaked ? "  <-- FAIL" : "");
	printf("  descriptors               before %d, after %d%s\n", fds_before, fds_after,
	       fds_ok ? " (equal)" : "  <-- FAIL");
	if (opt.http) {
		printf("  server descriptors        before %d, after %d%s\n", srv_fds_before,
		       srv_fds_after, srv_fds_after == srv_fds_before ? " (equal)" : "  <-- FAIL");
		printf("  server exit               %d after SIGTERM%s\n", srv_exit,
		       srv_exit ? "  <-- FAIL" : " (clean)");
	}
	printf("  %s %u samples%s; first third mean %.1f MiB, last third "
	       "mean %.1f MiB, peak %.1f MiB; limit %.1f MiB: %s\n",
	       opt.http ? "server resident memory   " : "resident memory          ", mon.n,
	       warm ? " (thirds after a warm-up)" : "", first, last, peak, limit,
	       sanitizer     ? "not judged under a sanitizer"
	       : !mem_judged ? "not judged (a run under 6 s)"
	       : mem_ok      ? "settled"
			     : "NOT settled  <-- FAIL");
	if (opt.http)
		http_server_cleanup(&server, !ok);
	if (sanitizer && third >= 2)
		printf("  (memory not judged: built with %s)\n", sanitizer);
	printf("soak: %s\n", ok ? "PASS" : "FAIL");

	for (unsigned i = 0; i < opt.connections; i++) {
		free(clients[i].c.rbuf);
		free(clients[i].c.wbuf);
	}
	free(clients);
	free(mon.rss_mib);
	return ok ? 0 : 1;
}
