/* SPDX-License-Identifier: MIT */
/*
 * fetch - the HTTP client example on libgiong-http: fetch every URL given, all
 * at once (one task each, on one worker), over HTTP/1.1 or HTTP/2.
 *
 *   fetch [--h2] [--prior-knowledge] [--repeat N] [--output FILE] [--head]
 *         [--insecure] [--cacert FILE] [--tls-backend wolfssl|openssl] URL...
 *
 * For each fetch a line on standard error: the URL, the status, the body's
 * length, and the protocol ("h2" or "http/1.1"); the bodies go to standard
 * output (or --output FILE), one after another in the order of the URLs.
 * At the end a line with the client's counters: exchanges, connections made,
 * requests sent as HTTP/2 streams and, of those, sent beside other streams
 * on one connection. Exit status 0 when every fetch got a status, 1 when one
 * failed (its error is on its line), 2 for bad arguments.
 *
 * --h2 lets the client speak HTTP/2 (libgiong-http2, when built): over
 * https:// when the server picks "h2" by ALPN (offered as "h2,http/1.1"), and
 * over http:// with --prior-knowledge (h2c: the server must speak it).
 * --repeat N fetches each URL N times (at once: on HTTP/2 they are streams of
 * one connection). --head sends HEAD. --insecure skips the certificate check;
 * --cacert trusts FILE's CAs instead of the system's.
 *
 * Try it: `make run` in one terminal, then
 *   build/bin/fetch --h2 --prior-knowledge --repeat 10 http://127.0.0.1:8080/
 *   build/bin/fetch --h2 --insecure https://127.0.0.1:8443/
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <giong/http.h>
#ifdef GIONG_HAVE_HTTP2
#include <giong/http2.h>
#endif
#ifdef GIONG_HAVE_TLS
#include <giong/tls.h>
#endif

#include "args.h"
#ifdef GIONG_HAVE_TLS
#include "tls_backends.h"
#endif

#define PROG "fetch"
#define FETCH_MAX 10000

struct fetch {
	const char *url;
	int status; /* or -errno */
	bool h2;
	char *body;
	size_t len;
};

struct run {
	struct giong_http_client *cli;
	const char *method;
	struct fetch *f;
	unsigned n;
	struct giong_http_client_stats stats;
};

static struct run run;

/* One fetch, in its own task: the status and the whole body, kept for main() to print. */
static intptr_t fetch_one(void *arg)
{
	struct fetch *f = arg;
	struct giong_http_client_stats before, after;
	struct giong_http_exchange *ex;
	const void *data;
	ssize_t n;

	if ((f->status = giong_http_exchange_begin(run.cli, run.method, f->url, &ex)))
		return 0;
	giong_http_client_stats(run.cli, 0, &before);
	f->status = giong_http_exchange_response(ex);
	giong_http_client_stats(run.cli, 0, &after);
	/* Not exact with many tasks (another's stream may count meanwhile), but a
	 * connection speaks one protocol: any stream sent then was on it. */
	f->h2 = after.streams > before.streams;
	if (f->status > 0 && (n = giong_http_exchange_body(ex, &data)) >= 0) {
		if ((f->body = malloc((size_t)n + 1))) {
			memcpy(f->body, data, (size_t)n);
			f->len = (size_t)n;
		} else {
			f->status = -ENOMEM;
		}
	} else if (f->status > 0) {
		f->status = (int)n;
	}
	giong_http_exchange_end(ex);
	return 0;
}

static void fetch_main(unsigned worker, void *arg)
{
	struct giong_task **t = calloc(run.n, sizeof(*t));

	(void)worker;
	(void)arg;
	for (unsigned i = 0; t && i < run.n; i++)
		if (giong_spawn(fetch_one, &run.f[i], &t[i]))
			run.f[i].status = -ENOMEM;
	for (unsigned i = 0; t && i < run.n; i++)
		if (t[i])
			giong_join(t[i], NULL);
	giong_http_client_stats(run.cli, 0, &run.stats); /* before the worker ends */
	free(t);
}

static void usage(void)
{
	fprintf(stderr, "usage: " PROG " [--h2] [--prior-knowledge] [--repeat N] [--output FILE]"
			" [--head] [--insecure] [--cacert FILE] [--tls-backend NAME] URL...\n");
}

#ifdef GIONG_HAVE_TLS
static int connector(struct giong_stream *tcp, const char *host, void *ctx,
		     struct giong_stream **out)
{
	return giong_tls_connect(tcp, ctx, host, out);
}

/* The TLS configuration of https:// URLs: ALPN h2 first when HTTP/2 is asked for. */
static struct giong_tls_config *tls_config(const char *backend, bool h2, bool insecure,
					   const char *cacert)
{
	const char *alpn[] = {"h2", "http/1.1"};
	const struct giong_tls_backend *be = tool_tls_backend(backend);
	struct giong_tls_config *c;
	char why[200] = "";
	int r;

	if (!be) {
		fprintf(stderr, PROG ": --tls-backend %s: not built in (this build has %s)\n",
			backend, tool_tls_backend_names());
		return NULL;
	}
	if ((r = giong_tls_config_new(be, &c))) {
		fprintf(stderr, PROG ": TLS: %s\n", giong_strerror(r));
		return NULL;
	}
	if ((r = giong_tls_config_alpn(c, h2 ? alpn : alpn + 1, h2 ? 2 : 1)) ||
	    (r = insecure ? giong_tls_config_verify(c, GIONG_TLS_VERIFY_NONE)
		 : cacert ? giong_tls_config_ca_file(c, cacert)
			  : giong_tls_config_ca_system(c)) ||
	    (r = giong_tls_config_check(c, why, sizeof(why)))) {
		fprintf(stderr, PROG ": TLS (%s): %s%s%s\n", backend, giong_strerror(r),
			why[0] ? ": " : "", why);
		giong_tls_config_free(c);
		return NULL;
	}
	return c;
}
#endif

int main(int argc, char **argv)
{
	const struct giong_http_protocol *protos[2] = {NULL, NULL};
	struct giong_http_client_options o = {0};
	const char *output = NULL, *cacert = NULL, *backend = "openssl";
	unsigned long long repeat = 1;
	bool h2 = false, insecure = false;
	FILE *out = stdout;
	int first = 1, failed = 0, r;
	void *tls = NULL;

	run.method = "GET";
	for (; first < argc && !strncmp(argv[first], "--", 2); first++) {
		const char *a = argv[first], *v = first + 1 < argc ? argv[first + 1] : NULL;

		if (!strcmp(a, "--h2")) {
			h2 = true;
		} else if (!strcmp(a, "--prior-knowledge")) {
			o.prior_knowledge = true;
		} else if (!strcmp(a, "--head")) {
			run.method = "HEAD";
		} else if (!strcmp(a, "--insecure")) {
			insecure = true;
		} else if (v && !strcmp(a, "--repeat")) {
			repeat = tool_number(PROG, a, v, 1, FETCH_MAX);
			first++;
		} else if (v && !strcmp(a, "--output")) {
			output = v;
			first++;
		} else if (v && !strcmp(a, "--cacert")) {
			cacert = v;
			first++;
		} else if (v && !strcmp(a, "--tls-backend")) {
			backend = v;
			first++;
		} else {
			usage();
			return 2;
		}
	}
	if (first == argc || (o.prior_knowledge && !h2) ||
	    (unsigned long long)(argc - first) * repeat > FETCH_MAX) {
		usage();
		return 2;
	}
	if (h2) {
#ifdef GIONG_HAVE_HTTP2
		protos[0] = giong_http2();
		o.protocols = protos;
#else
		fprintf(stderr, PROG ": --h2: built without libgiong-http2\n");
		return 2;
#endif
	}
	for (int i = first; i < argc; i++)
		if (!strncmp(argv[i], "https://", 8) && !tls) {
#ifdef GIONG_HAVE_TLS
			if (!(tls = tls_config(backend, h2, insecure, cacert)))
				return 1;
			o.connect = connector;
			o.connect_ctx = tls;
#endif
		}
	if ((r = giong_http_client_new(&o, &run.cli))) {
		fprintf(stderr, PROG ": %s\n", giong_strerror(r));
		return 1;
	}
	run.n = (unsigned)((unsigned long long)(argc - first) * repeat);
	run.f = calloc(run.n, sizeof(*run.f));
	if (!run.f || (output && !(out = fopen(output, "w")))) {
		perror(PROG);
		return 1;
	}
	for (unsigned i = 0; i < run.n; i++)
		run.f[i].url = argv[first + i / repeat];
	/* One worker: one pool of connections, so the streams of an origin share one. */
	if ((r = giong_block_on(fetch_main, NULL))) {
		fprintf(stderr, PROG ": %s\n", giong_strerror(r));
		return 1;
	}
	for (unsigned i = 0; i < run.n; i++) {
		struct fetch *f = &run.f[i];

		if (f->status < 0) {
			fprintf(stderr, "%s: %s\n", f->url, giong_strerror(f->status));
			failed = 1;
			continue;
		}
		fprintf(stderr, "%s: %d, %zu bytes, %s\n", f->url, f->status, f->len,
			f->h2 ? "h2" : "http/1.1");
		fwrite(f->body, 1, f->len, out);
		free(f->body);
	}
	fprintf(stderr,
		PROG ": %llu exchanges, %llu connections, %llu HTTP/2 streams (%llu beside "
		     "others)\n",
		(unsigned long long)run.stats.exchanges, (unsigned long long)run.stats.connects,
		(unsigned long long)run.stats.streams, (unsigned long long)run.stats.multiplexed);
	if (out != stdout)
		fclose(out);
	free(run.f);
	giong_http_client_free(run.cli);
#ifdef GIONG_HAVE_TLS
	giong_tls_config_free(tls);
#endif
	return failed;
}
