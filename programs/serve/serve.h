/* SPDX-License-Identifier: MIT */
/*
 * serve.h - giong-serve's shared state: the settings made once by main() before the
 * workers start and only read after, and the entry points of its parts (handler.c: the
 * request handler; listing.c: directory listings; metrics.c: the Prometheus counters;
 * fcache.c: the per-worker cache of open files, in fcache.h).
 */
#ifndef GIONG_SERVE_SERVE_H
#define GIONG_SERVE_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct giong_http_request;
struct giong_http_response;
struct giong_http_server;
struct serve_fcache;

/* The longest root-relative path giong-serve opens (bytes, without the NUL). */
#define SERVE_PATH_MAX 4095

/* Entries a listing shows at most: a directory with more is cut there (and says so), so a
 * huge directory costs bounded memory and time. */
#define SERVE_LISTING_MAX 10000

/* Listings a worker sends at once; more get 503 with Retry-After (listing.c). */
#define SERVE_LISTINGS_PER_WORKER 8

/* The flags every open under the root uses: the kernel refuses any path, symbolic link
 * included, that leaves the root (RESOLVE_BENEATH), and /proc-style magic links. */
#define SERVE_RESOLVE (RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)

struct serve_settings {
	int root_fd;        /* the document root, O_PATH | O_DIRECTORY: every open is relative */
	const char *root;   /* its path as given, for messages */
	bool listing;       /* directory listings (false: 403) */
	bool precompressed; /* serve file.br / file.gz siblings to clients that accept them */
	const char *cache_control; /* the Cache-Control value of files; NULL: none */
	unsigned cache_entries;    /* open files cached per worker; 0: no cache */
	const char *metrics_path;  /* the path of the Prometheus text; NULL: none */
	bool h2;                   /* HTTP/2 served (built with libgiong-http2 and no --no-h2) */
	struct giong_http_server *servers[2]; /* HTTP and HTTPS (NULL when absent): metrics */
	unsigned nservers;
};

/* The settings (main.c fills them before the runtime starts). */
extern struct serve_settings serve_cfg;

/* serve_handle - the handler of every GET and HEAD (the router's catch-all route): a file, a
 * directory's index.html or listing, a redirect, or an error status. Returns 0 or -errno as
 * a giong_http_handler_fn. */
int serve_handle(struct giong_http_request *req, struct giong_http_response *res, void *ctx);

/* serve_worker_cache_set / serve_worker_cache - the calling worker's open-file cache
 * (set by the worker before it serves; NULL after). */
void serve_worker_cache_set(struct serve_fcache *c);
struct serve_fcache *serve_worker_cache(void);

/* serve_answer_status - answer @status (an error, a 403) with a one-line text body
 * ("404 Not Found"). Returns as giong_http_response_send(). */
int serve_answer_status(struct giong_http_response *res, int status);

/* serve_listing - answer with the listing of the directory @rel (root-relative, "" for the
 * root; @rel_len bytes) in HTML. Returns as serve_handle(). */
int serve_listing(struct giong_http_request *req, struct giong_http_response *res, const char *rel,
		  size_t rel_len);

/* serve_metrics_handle - the --metrics route: every worker's counters in the Prometheus
 * text format (the calling worker's live, the others' as they published them, at most a
 * second old). */
int serve_metrics_handle(struct giong_http_request *req, struct giong_http_response *res,
			 void *ctx);

/* serve_metrics_worker_start - on each worker once it serves: allocate its slot and spawn
 * the task that publishes its counters once a second until shutdown. Returns 0 or -errno
 * (the server then runs without that worker's figures). */
int serve_metrics_worker_start(void);

/* serve_metrics_init / _free - the slots for @workers workers (main(), before and after
 * the runtime). Return 0 or -ENOMEM. */
int serve_metrics_init(unsigned workers);
void serve_metrics_free(void);

#endif /* GIONG_SERVE_SERVE_H */
