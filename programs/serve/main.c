/* SPDX-License-Identifier: MIT */
/*
 * giong-serve - a static-file HTTP and HTTPS server on every core: files read through the
 * ring and spliced to the socket (HTTP), or read into TLS records (HTTPS), one worker per
 * core, each with its own listeners (SO_REUSEPORT) and its own cache of open files.
 *
 *   giong-serve [DIR] [--port N] [--https-port N]
 *               [--tls-cert FILE --tls-key FILE | --self-signed] [--tls-backend NAME] [--tls-ciphers L]
 *               [--workers N] [--bind ADDR] [--log] [--no-listing] [--no-precompressed]
 *               [--cache-control VALUE] [--cache N] [--metrics PATH] [--grace-ms N]
 *               [--reuse-port] [--proxy-protocol] [--no-h2]
 *
 * docs/serve.md says what each does; `giong-serve --help` lists them. This file is the
 * program's frame: arguments, the document root, TLS, listeners (bound here, or handed in
 * by systemd: LISTEN_FDS), the workers. The answers are handler.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <giong/http.h>
#ifdef GIONG_HAVE_HTTP2
#include <giong/http2.h>
#endif

#include "../args.h"
#include "../hosts.h"
#include "../listeners.h"
#include "../stop_signals.h"
#include "accesslog.h"
#include "fcache.h"
#include "mime.h"
#include "serve.h"
#include "tls_setup.h"

#define PROG "giong-serve"
#define MAX_INHERITED 16 /* listeners systemd may hand in */
#define MAX_WORKERS 1024

#ifdef GIONG_HAVE_HTTP2
#define SERVE_H2_BUILT 1
#else
#define SERVE_H2_BUILT 0
#endif

/* Where a server listens: HTTP, and HTTPS when TLS is configured. */
struct endpoint {
	struct giong_http_server *srv;
	int port;
	const char *scheme;
	/* Inherited listeners (LISTEN_FDS): [k][w] is worker w's descriptor of the k-th. */
	int *fds[MAX_INHERITED];
	unsigned nfds;
};

static struct {
	struct giong_config cfg;
	struct endpoint ep[2];
	unsigned neps;
	const char *bind; /* NULL: 127.0.0.1 and [::1] */
	bool reuse_port;  /* --reuse-port: share the port with another process (a restart) */
	bool inherited;   /* listeners from LISTEN_FDS */
	bool log;         /* --log: the access log on standard output (accesslog.c) */
	atomic_bool failed;
} g;

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: " PROG " [DIR] [--port N] [--https-port N]\n"
		"       [--tls-cert FILE --tls-key FILE | --self-signed] [--tls-backend NAME]\n"
		"       [--tls-ciphers LIST]\n"
		"       [--workers N] [--bind ADDR] [--log] [--no-listing] [--no-precompressed]\n"
		"       [--cache-control VALUE] [--cache N] [--metrics PATH] [--grace-ms N]\n"
		"       [--idle-ms N] [--reuse-port] [--proxy-protocol] [--no-h2]\n"
		"\n"
		"Serves the files under DIR (default: the current directory) over HTTP on --port\n"
		"(8080) and, with a certificate, HTTPS on --https-port (8443), on 127.0.0.1 and\n"
		"[::1] unless --bind names another address (0.0.0.0 or :: for every one).\n"
		"HTTP/2 too%s: over HTTPS when the client picks h2 by ALPN, over HTTP when it\n"
		"starts with HTTP/2's preface (prior knowledge, h2c).\n"
		"  --self-signed        make a certificate for localhost now (openssl command)\n"
		"  --tls-backend NAME   %s (default %s)\n"
		"  --tls-ciphers LIST   TLS 1.3 suites, most preferred first, colon-separated\n"
		"  --workers N          worker threads, one per core by default\n"
		"  --log                an access-log line per request on standard output (written\n"
		"                       within 0.1 s, in batches, never blocking a worker)\n"
		"  --no-listing         403 for a directory without index.html\n"
		"  --no-precompressed   never serve file.br / file.gz in place of file\n"
		"  --cache-control V    the Cache-Control value of every file\n"
		"  --cache N            open files cached per worker (default 1024; 0: none)\n"
		"  --metrics PATH       counters in the Prometheus text format at PATH\n"
		"  --grace-ms N         time requests in progress get at Ctrl-C or SIGTERM (5000)\n"
		"  --idle-ms N          a kept-alive connection with no request in N ms is closed\n"
		"                       (15000)\n"
		"  --reuse-port         share the ports with a server running on them already: the\n"
		"                       new one of a restart (then SIGTERM the old one)\n"
		"  --proxy-protocol     every connection starts with a PROXY header (v1 or v2, as\n"
		"                       HAProxy's send-proxy and send-proxy-v2 send it, before any\n"
		"                       TLS), whose client is the one logged; a connection without\n"
		"                       one gets 400. Only behind a balancer that always sends it:\n"
		"                       anyone else could claim any address\n"
		"  --no-h2              HTTP/1.1 only: ALPN offers http/1.1 alone, and a client's\n"
		"                       HTTP/2 preface on plain HTTP gets 505\n"
		"Under systemd, listeners handed in by socket activation (LISTEN_FDS) are used in\n"
		"place of --port and --bind; one named \"https\" (FileDescriptorName=) serves HTTPS.\n"
		"--proxy-protocol holds for them too.\n",
		SERVE_H2_BUILT ? "" : " (not in this build: no libgiong-http2)",
		serve_tls_backends(), serve_tls_default_backend());
	exit(status);
}

/* @in (@len bytes) for a log line: '"', '\\' and bytes outside 0x21..0x7e as \\xHH (the
 * parser lets few through, but a line must not be forgeable), cut with "..." to @cap. */
static void log_escape(char *out, size_t cap, const char *in, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];
		bool plain = c > 0x20 && c < 0x7f && c != '"' && c != '\\';

		if (o + (plain ? 1 : 4) + 4 > cap) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		if (plain)
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
	}
	out[o] = '\0';
}

/* One access-log line in the common log format (CLF): host ident user [time] "request"
 * status bytes, into the worker's access-log buffer (accesslog.c). */
static void log_line(const struct giong_http_log_entry *e, void *ctx)
{
	static _Thread_local time_t last;
	static _Thread_local char when[40];
	struct giong_addr peer;
	char addr[64] = "-", bytes[24] = "-", target[1024], line[SERVE_ALOG_LINE_MAX];
	size_t ml, tl;
	int n;
	const char *m = giong_http_request_method_name(e->req, &ml);
	const char *t = giong_http_request_target(e->req, &tl);
	time_t now = time(NULL);
	struct tm tm;

	(void)ctx;
	if (now != last && gmtime_r(&now, &tm)) { /* once a second per worker */
		strftime(when, sizeof(when), "%d/%b/%Y:%H:%M:%S +0000", &tm);
		last = now;
	}
	/* The client: a refused head's request is empty, the stream still knows who. */
	if (giong_http_request_client_addr(e->req, &peer) == 0 ||
	    (e->stream && giong_stream_peer_addr(e->stream, &peer) == 0))
		giong_addr_format(&peer, addr, sizeof(addr));
	if (strchr(addr, ']')) { /* "[::1]:5000" -> "::1", as CLF hosts are written */
		*strchr(addr, ']') = '\0';
		memmove(addr, addr + 1, strlen(addr));
	} else if (strrchr(addr, ':')) {
		*strrchr(addr, ':') = '\0';
	}
	if (e->body_bytes)
		snprintf(bytes, sizeof(bytes), "%llu", (unsigned long long)e->body_bytes);
	if (!ml) { /* a refused head: nothing of it is shown */
		n = snprintf(line, sizeof(line), "%s - - [%s] \"-\" %d %s\n", addr, when, e->status,
			     bytes);
	} else {
		log_escape(target, sizeof(target), t, tl);
		int v = giong_http_request_version(e->req); /* 10, 11; 20 for an h2 stream */

		n = snprintf(line, sizeof(line), "%s - - [%s] \"%.*s %s HTTP/%d.%d\" %d %s\n", addr,
			     when, (int)ml, m, target, v / 10, v % 10, e->status, bytes);
	}
	if (n <= 0)
		return;
	if ((size_t)n >= sizeof(line)) { /* cut, still a line */
		n = (int)sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	serve_alog_append(line, (size_t)n);
}

/* The listeners of @ep on this worker into @ls; their count, 0 after an error (said). */
static unsigned listen_endpoint(const struct endpoint *ep, struct tool_listener *ls)
{
	/* The access log names each client: its connections need a descriptor to be
	 * asked their peer (a direct one has none: libgiong-net's tcp.h). */
	struct giong_listen_options lo = {.regular_fds = g.log};
	unsigned w = (unsigned)giong_worker_index(), n = 0;
	const char *hosts[2] = {"127.0.0.1", "[::1]"};
	unsigned nhosts = 2;
	char addr[300];
	int r;

	if (g.inherited) {
		for (unsigned k = 0; k < ep->nfds; k++) {
			struct giong_listener *l;
			int fd = ep->fds[k][w];

			if ((r = giong_listener_from_fd(fd, &lo, &l))) {
				if (w == 0)
					fprintf(stderr, PROG ": inherited descriptor %d: %s\n", fd,
						giong_strerror(r));
				close(fd);
				continue;
			}
			ls[n++] = (struct tool_listener){ep->srv, l, PROG};
		}
		return n;
	}
	if (g.bind && (!strcmp(g.bind, "0.0.0.0") || !strcmp(g.bind, "::"))) {
		hosts[0] = "0.0.0.0", hosts[1] = "[::]";
	} else if (g.bind) {
		hosts[0] = g.bind;
		nhosts = 1;
	}
	for (unsigned i = 0; i < nhosts; i++) {
		struct giong_listener *l;

		lo.v6only = i == 1;
		snprintf(addr, sizeof(addr),
			 strchr(hosts[i], ':') && hosts[i][0] != '[' ? "[%s]:%d" : "%s:%d",
			 hosts[i], ep->port);
		r = giong_tcp_listen(addr, &lo, &l);
		if (r == 0) {
			ls[n++] = (struct tool_listener){ep->srv, l, PROG};
			continue;
		}
		if (i == 1 && nhosts == 2 && (r == -EADDRNOTAVAIL || r == -EAFNOSUPPORT))
			continue; /* no IPv6 here: IPv4 alone */
		if (w == 0)
			fprintf(stderr, PROG ": listen on %s: %s%s\n", addr, giong_strerror(r),
				r == -EADDRINUSE ? " (another server has the port: --port N)" : "");
		while (n)
			giong_listener_close(ls[--n].l);
		return 0;
	}
	return n;
}

static void cache_free_hook(void *c)
{
	serve_worker_cache_set(NULL);
	serve_fcache_free(c);
}

static void announce(void)
{
	const char *h = g.bind ? g.bind : "127.0.0.1";
	bool v6 = strchr(h, ':') != NULL;

	fprintf(stderr, PROG ": serving %s on", serve_cfg.root);
	if (g.inherited)
		fprintf(stderr, " %s%s listeners from systemd", g.ep[0].nfds ? "HTTP" : "",
			g.ep[1].nfds ? (g.ep[0].nfds ? " and HTTPS" : "HTTPS") : "");
	else
		for (unsigned i = 0; i < g.neps; i++)
			fprintf(stderr, "%s %s://%s%s%s:%d/", i ? " and" : "", i ? "https" : "http",
				v6 ? "[" : "", h, v6 ? "]" : "", g.ep[i].port);
	fprintf(stderr, "%s%s with %d worker%s; Ctrl-C stops\n",
		!g.inherited && !g.bind ? " (and [::1])" : "",
		serve_cfg.h2 ? ", HTTP/1.1 and HTTP/2" : ", HTTP/1.1 only", giong_worker_count(),
		giong_worker_count() == 1 ? "" : "s");
}

/*
 * Each worker: its cache of open files, its metrics publisher, its listeners (IPv4 and
 * IPv6, for HTTP and HTTPS), served from tasks of their own but the last, which its main
 * task serves (a worker whose main task returns gets the grace period and stops).
 */
static void worker_main(unsigned worker, void *arg)
{
	struct tool_listener ls[2 * (2 + MAX_INHERITED)];
	struct serve_fcache *c = serve_fcache_new(serve_cfg.root_fd, serve_cfg.cache_entries);
	unsigned n = 0;

	(void)arg;
	if (!c || giong_worker_atexit(cache_free_hook, c)) {
		fprintf(stderr, PROG ": worker %u: out of memory\n", worker);
		serve_fcache_free(c);
		atomic_store(&g.failed, true);
		giong_shutdown();
		return;
	}
	serve_worker_cache_set(c);
	for (unsigned i = 0; i < g.neps; i++) {
		unsigned got;

		if (g.inherited && !g.ep[i].nfds)
			continue; /* systemd handed in no socket for it */
		got = listen_endpoint(&g.ep[i], ls + n);

		if (!got) { /* an endpoint that cannot listen at all: the server cannot */
			while (n)
				giong_listener_close(ls[--n].l);
			atomic_store(&g.failed, true);
			giong_shutdown();
			return;
		}
		n += got;
	}
	if (!n) { /* inherited descriptors that were no listeners (said) */
		atomic_store(&g.failed, true);
		giong_shutdown();
		return;
	}
	if (g.log && serve_alog_worker_start(STDOUT_FILENO) && worker == 0)
		fprintf(stderr, PROG ": access log: no writer task; each line is written as it "
				     "comes\n");
	if (serve_metrics_worker_start() && worker == 0)
		fprintf(stderr, PROG ": metrics: no publisher task; this worker's figures only\n");
	if (worker == 0)
		announce();
	tool_serve_all(ls, n);
}

/* The CPUs this process may run on: the default worker count. */
static unsigned cpus_allowed(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && (n = CPU_COUNT(&set)) > 0)
		return (unsigned)n;
	n = (int)sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

/*
 * Socket activation (sd_listen_fds(3)): LISTEN_PID is this process, LISTEN_FDS the count
 * from descriptor 3, LISTEN_FDNAMES their names (colon-separated). One named "https" serves
 * HTTPS; the others HTTP (with no names and TLS on, the second is HTTPS). Each worker gets
 * a dup(2) of each, made now, before any worker runs. Returns whether there were any.
 */
static bool inherit_listeners(bool tls)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	const char *names = getenv("LISTEN_FDNAMES");
	unsigned long n;
	char *end;

	if (!pid || !fds || strtol(pid, &end, 10) != (long)getpid() || *end)
		return false;
	n = strtoul(fds, &end, 10);
	if (*end || n == 0 || n > MAX_INHERITED) {
		fprintf(stderr, PROG ": LISTEN_FDS=%s: from 1 to %d descriptors\n", fds,
			MAX_INHERITED);
		exit(1);
	}
	for (unsigned k = 0; k < n; k++) {
		const char *name = names;
		size_t len = 0;
		struct endpoint *ep;
		int fd = 3 + (int)k;

		for (unsigned j = 0; name && j < k; j++)
			name = strchr(name, ':') ? strchr(name, ':') + 1 : NULL;
		if (name)
			len = strchr(name, ':') ? (size_t)(strchr(name, ':') - name) : strlen(name);
		ep = &g.ep[(name ? len == 5 && !memcmp(name, "https", 5) : k == 1) ? 1 : 0];
		if (ep == &g.ep[1] && !tls) {
			fprintf(stderr,
				PROG ": descriptor %d is for HTTPS: give --tls-cert "
				     "and --tls-key, or --self-signed\n",
				fd);
			exit(2);
		}
		if (!(ep->fds[ep->nfds] = malloc(g.cfg.workers * sizeof(int)))) {
			fprintf(stderr, PROG ": out of memory\n");
			exit(1);
		}
		ep->fds[ep->nfds][0] = fd;
		for (unsigned w = 1; w < g.cfg.workers; w++)
			if ((ep->fds[ep->nfds][w] = fcntl(fd, F_DUPFD_CLOEXEC, 3 + MAX_INHERITED)) <
			    0) {
				fprintf(stderr, PROG ": dup of descriptor %d: %s\n", fd,
					strerror(errno));
				exit(1);
			}
		ep->nfds++;
	}
	unsetenv("LISTEN_PID"); /* not for the children a server might have */
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return true;
}

/* The document root: a directory, opened O_PATH (it is never read, only opened under). */
static void open_root(const char *dir)
{
	static char real[PATH_MAX];
	struct stat st;
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, PROG ": %s: %s\n", dir,
			errno == ENOTDIR ? "not a directory" : strerror(errno));
		exit(1);
	}
	if (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, PROG ": %s: not a directory\n", dir);
		exit(1);
	}
	serve_cfg.root_fd = fd;
	serve_cfg.root = realpath(dir, real) ? real : dir;
}

/*
 * Is @port free on the addresses the workers will bind? Their listeners share the port
 * with SO_REUSEPORT, which also lets them join another process's listeners on it (of the
 * same user) without a word: a second server started by mistake would take half the
 * connections. So, unless --reuse-port asks for exactly that, a bind without SO_REUSEPORT
 * (with SO_REUSEADDR, as the workers', so that old connections in TIME_WAIT do not count)
 * tries the port first. Exits 1 with a message when it is taken.
 */
static void probe_port(int port, const char *scheme)
{
	const char *hosts[2] = {"127.0.0.1", "::1"};
	unsigned n = 2;

	if (g.bind && (!strcmp(g.bind, "0.0.0.0") || !strcmp(g.bind, "::")))
		hosts[0] = "0.0.0.0", hosts[1] = "::";
	else if (g.bind)
		hosts[0] = g.bind, n = 1;
	for (unsigned i = 0; i < n; i++) {
		char text[300];
		bool v6 = strchr(hosts[i], ':') != NULL;

		snprintf(text, sizeof(text), v6 && hosts[i][0] != '[' ? "[%s]:%d" : "%s:%d",
			 hosts[i], port);
		if (tool_port_taken(text, v6)) {
			fprintf(stderr,
				PROG ": %s port %d on %s is in use by another server (--port N for "
				     "another; --reuse-port to share it, for a restart)\n",
				scheme, port, text);
			exit(1);
		}
	}
}

/* As many descriptors as the hard limit allows: cached files and connections add up. */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int main(int argc, char **argv)
{
	struct serve_tls_args tls = {.backend = serve_tls_default_backend()};
	/* The protocols besides HTTP/1.1 the servers speak: HTTP/2 unless --no-h2. */
	const struct giong_http_protocol *protocols[2] = {NULL, NULL};
	struct giong_http_limits lim;
	struct giong_http_server_options so = {.limits = &lim, .server_name = PROG};
	struct giong_http_router *router;
	struct giong_runtime *rt;
	const char *dir = ".";
	bool have_dir = false;
	int r;

	g.ep[0] = (struct endpoint){.port = 8080, .scheme = "HTTP"};
	g.ep[1] = (struct endpoint){.port = 8443, .scheme = "HTTPS"};
	serve_cfg.listing = true;
	serve_cfg.precompressed = true;
	serve_cfg.cache_entries = 1024;
	serve_cfg.h2 = SERVE_H2_BUILT;
	giong_config_init(&g.cfg);
	giong_http_limits_init(&lim);
	g.cfg.shutdown_on_signals = true;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			usage(0);
		else if (!strcmp(a, "--log"))
			so.log = log_line, g.log = true;
		else if (!strcmp(a, "--no-listing"))
			serve_cfg.listing = false;
		else if (!strcmp(a, "--no-precompressed"))
			serve_cfg.precompressed = false;
		else if (!strcmp(a, "--self-signed"))
			tls.self_signed = true;
		else if (!strcmp(a, "--reuse-port"))
			g.reuse_port = true;
		else if (!strcmp(a, "--proxy-protocol"))
			so.proxy_protocol = true; /* HTTP's and HTTPS's, listened or inherited */
		else if (!strcmp(a, "--no-h2"))
			serve_cfg.h2 = false; /* accepted without libgiong-http2 too: a no-op */
		else if (a[0] != '-' && !have_dir)
			dir = a, have_dir = true;
		else if (a[0] != '-' || i + 1 >= argc)
			usage(2);
		else if (!strcmp(a, "--port"))
			g.ep[0].port = (int)tool_number(PROG, a, argv[++i], 1, 65535);
		else if (!strcmp(a, "--https-port"))
			g.ep[1].port = (int)tool_number(PROG, a, argv[++i], 1, 65535);
		else if (!strcmp(a, "--tls-cert"))
			tls.cert = argv[++i];
		else if (!strcmp(a, "--tls-key"))
			tls.key = argv[++i];
		else if (!strcmp(a, "--tls-backend"))
			tls.backend = argv[++i];
		else if (!strcmp(a, "--tls-ciphers"))
			tls.ciphers13 = argv[++i];
		else if (!strcmp(a, "--workers"))
			g.cfg.workers = (unsigned)tool_number(PROG, a, argv[++i], 1, MAX_WORKERS);
		else if (!strcmp(a, "--bind"))
			g.bind = argv[++i];
		else if (!strcmp(a, "--cache-control"))
			serve_cfg.cache_control = argv[++i];
		else if (!strcmp(a, "--cache"))
			serve_cfg.cache_entries =
				(unsigned)tool_number(PROG, a, argv[++i], 0, 1u << 20);
		else if (!strcmp(a, "--metrics"))
			serve_cfg.metrics_path = argv[++i];
		else if (!strcmp(a, "--grace-ms"))
			g.cfg.shutdown_grace_ms =
				(uint32_t)tool_number(PROG, a, argv[++i], 1, 3600u * 1000);
		else if (!strcmp(a, "--idle-ms"))
			lim.idle_timeout_ms =
				(uint32_t)tool_number(PROG, a, argv[++i], 1, 24u * 3600 * 1000);
		else
			usage(2);
	}
	if (!tls.cert != !tls.key || (tls.cert && tls.self_signed)) {
		fprintf(stderr,
			PROG ": give --tls-cert and --tls-key together, or --self-signed\n");
		usage(2);
	}
	if ((tls.cert || tls.self_signed) && g.ep[0].port == g.ep[1].port) {
		fprintf(stderr, PROG ": --port and --https-port are both %d\n", g.ep[0].port);
		usage(2);
	}
	if (serve_cfg.metrics_path && serve_cfg.metrics_path[0] != '/') {
		fprintf(stderr, PROG ": --metrics %s: a path starting with '/'\n",
			serve_cfg.metrics_path);
		usage(2);
	}
	if (!g.cfg.workers)
		g.cfg.workers = cpus_allowed() < MAX_WORKERS ? cpus_allowed() : MAX_WORKERS;
	open_root(dir);
	raise_nofile();
	signal(SIGPIPE, SIG_IGN);
	serve_mime_load("/etc/mime.types"); /* the extensions the built-in table lacks */
#ifdef GIONG_HAVE_HTTP2
	if (serve_cfg.h2) {
		protocols[0] = giong_http2(); /* h2 by ALPN, h2c by its preface */
		so.protocols = protocols;
	}
#endif
	tls.h2 = serve_cfg.h2;
	g.neps = 1;
	if (tls.cert || tls.self_signed) {
		so.wrap = serve_tls_wrap();
		if (!(so.wrap_ctx = serve_tls_config(&tls)))
			return 1; /* said why */
		g.neps = 2;
	}
	g.inherited = inherit_listeners(g.neps == 2);
	for (unsigned i = 0; !g.inherited && !g.reuse_port && i < g.neps; i++)
		probe_port(g.ep[i].port, g.ep[i].scheme);
	if (g.inherited && g.neps == 2 && !g.ep[1].nfds)
		fprintf(stderr, PROG ": no socket named \"https\" was handed in: HTTP only\n");
	if (giong_http_router_new(&router) ||
	    (serve_cfg.metrics_path && giong_http_router_add(router, "GET", serve_cfg.metrics_path,
							     serve_metrics_handle, NULL)) ||
	    giong_http_router_add(router, "GET", "/*", serve_handle, NULL) ||
	    serve_metrics_init(g.cfg.workers)) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	for (unsigned i = 0; i < g.neps; i++) {
		struct giong_http_server_options o = so;

		if (i == 0) /* the wrap (a TLS handshake) is HTTPS's */
			o.wrap = NULL, o.wrap_ctx = NULL;
		if ((r = giong_http_server_new(router, &o, &g.ep[i].srv))) {
			fprintf(stderr, PROG ": %s\n", giong_strerror(r));
			return 1;
		}
		serve_cfg.servers[serve_cfg.nservers++] = g.ep[i].srv;
	}
	if ((r = giong_runtime_new(&g.cfg, &rt))) {
		fprintf(stderr, PROG ": %s\n", giong_strerror(r));
		return 1;
	}
	tool_block_stop_signals(); /* to the exit: ../stop_signals.h says why */
	r = giong_runtime_run(rt, worker_main, NULL);
	giong_runtime_free(rt);
	for (unsigned i = 0; i < g.neps; i++)
		giong_http_server_free(g.ep[i].srv);
	serve_tls_free(so.wrap_ctx);
	giong_http_router_free(router);
	serve_metrics_free();
	serve_mime_reset();
	for (unsigned i = 0; i < 2; i++)
		for (unsigned k = 0; k < g.ep[i].nfds; k++)
			free(g.ep[i].fds[k]);
	close(serve_cfg.root_fd);
	if (r) {
		fprintf(stderr, PROG ": %s\n", giong_strerror(r));
		return 1;
	}
	if (atomic_load(&g.failed))
		return 1; /* the worker said why */
	fprintf(stderr, PROG ": stopped\n");
	return 0;
}
