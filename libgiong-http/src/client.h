/* SPDX-License-Identifier: MIT */
/*
 * client.h - the client's insides (giong/http/client.h). Internal to
 * libgiong-http.
 *
 * Memory, by how long it lives:
 *  - struct giong_http_client: the settings, read-only, shared by workers;
 *  - struct giong__http_cworker: a worker's share (its pool, its counters,
 *    its cache of exchanges), made on the worker's first exchange and freed
 *    by a worker_atexit hook when the worker ends;
 *  - struct giong__http_origin: per worker, while an exchange or a pooled
 *    connection refers to it;
 *  - struct giong__http_cconn: one connection, from its connect to its close;
 *  - struct giong_http_exchange: one request and response; kept in the
 *    worker's cache after it ends, with its buffers, so that a warm worker
 *    allocates nothing per request.
 */
#ifndef GIONG_HTTP_CLIENT_INTERNAL_H
#define GIONG_HTTP_CLIENT_INTERNAL_H

#include <linux/time_types.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <giong/core.h>
#include <giong/http/client.h>
#include <giong/http/limits.h>

#include "chunked.h"
#include "giong_private.h"
#include "input.h"
#include "out.h"
#include "reply.h"
#include "slots.h"

/* The request head's bound (the caller's fields; framing comes after it). */
#define GIONG__HTTP_CLIENT_HEAD_MAX (64u * 1024)
/* Interim (1xx) responses skipped before a final one; past it, -EBADMSG. */
#define GIONG__HTTP_CLIENT_INTERIM_MAX 16u
/* Ended exchanges kept per worker, and the largest body copy one keeps. */
#define GIONG__HTTP_CLIENT_CACHE 64u
#define GIONG__HTTP_CLIENT_COPY_KEEP (64u * 1024)

struct giong__http_cworker;

struct giong__http_origin {
	struct giong__list_node link; /* on w->origins */
	struct giong__list idle;      /* its pooled connections, the newest last */
	uint32_t nidle;
	uint32_t refs; /* exchanges and pooled connections that point here */
	bool tls;      /* https: through the options' connector */
	uint16_t port;
	size_t host_len;
	char host[]; /* as in the URL, lower case ("[::1]" keeps its brackets) */
};

struct giong__http_cconn {
	struct giong_stream *s;
	struct giong__http_cworker *w;
	struct giong__http_origin *origin; /* a reference, while pooled */
	struct giong__list_node olink;     /* on origin->idle, while pooled */
	struct giong__list_node wlink;     /* on w->idle, while pooled (park order) */
	uint64_t parked_at;
	struct giong__http_input in;
	uint32_t uses; /* requests sent on it */
	bool pooled;
};

struct giong__http_cworker {
	struct giong_http_client *cli;
	unsigned index;
	struct giong_http_client_stats stats;
	struct giong__list origins;
	struct giong__list idle;      /* every pooled connection, oldest first */
	struct giong__list exchanges; /* ended ones, for reuse */
	unsigned nexchanges;
	/* The idle timer's timeout: lent to the kernel from its giong_op_start()
	 * until idle_timer() runs (timer_armed says so). */
	struct __kernel_timespec ts;
	bool timer_armed;
	bool ending; /* the worker's atexit hook runs */
};

struct giong_http_client {
	struct giong_http_client_options o; /* with the defaults filled in */
	struct giong_http_limits lim;       /* the response parser's (head, fields, body) */
	_Atomic(struct giong__http_slots *) workers;
};

enum giong__http_ex_state {
	GIONG__HTTP_EX_BEGUN,     /* the head is being built */
	GIONG__HTTP_EX_STREAMING, /* the head went, chunks go */
	GIONG__HTTP_EX_SENT,      /* the request went (or is ready to, on a retry) */
	GIONG__HTTP_EX_HEAD,      /* the response head is in */
	GIONG__HTTP_EX_FAILED,    /* error says why: only the end is left */
};

struct giong_http_exchange {
	struct giong__http_cworker *w;
	struct giong__http_origin *origin; /* a reference */
	struct giong__http_cconn *conn;    /* from the send on */
	struct giong__list_node link;      /* on w->exchanges, once ended */
	struct giong__http_out req;        /* the request head */
	uint8_t state;                     /* enum giong__http_ex_state */
	bool head_request, idempotent, bodiless_method;
	bool framed;      /* the framing field and the empty line are in req */
	bool written;     /* the request (or its head, streaming) was written */
	bool reused;      /* conn came from the pool */
	bool retried;     /* the one retry was used */
	bool got_bytes;   /* a byte of a response came on conn */
	bool streamed;    /* the request body goes in chunks (giong_http_exchange_write()) */
	int error;        /* sticky, with GIONG__HTTP_EX_FAILED */
	const void *body; /* giong_http_exchange_send()'s, borrowed */
	size_t body_len;
	/* The response. */
	struct giong__http_scan scan;
	struct giong__http_reply reply;
	struct giong__http_field *fields; /* o.fields_max entries */
	unsigned interim;
	/* Its body. */
	uint64_t left; /* Content-Length bytes not yet taken */
	bool chunked, to_close, body_done;
	bool whole, pieces; /* read by giong_http_exchange_body(), or _next() / _read() */
	int body_error;     /* sticky */
	struct giong__http_chunked dec;
	uint64_t body_deadline;
	char *copy; /* the whole body, when it had to be copied */
	size_t copy_len, copy_cap;
	const char *whole_data;
	size_t whole_len;
};

/* client.c */
/* The calling worker's share of @cli, made on first use; NULL with *@err. */
struct giong__http_cworker *giong__http_cworker_get(struct giong_http_client *cli, int *err);
/* An origin of @w (found or made) with a reference for the caller. */
struct giong__http_origin *giong__http_origin_get(struct giong__http_cworker *w, bool tls,
						  const char *host, size_t host_len, uint16_t port);
void giong__http_origin_put(struct giong__http_cworker *w, struct giong__http_origin *o);
/* The newest pooled connection to @o, taken out of the pool; or NULL. */
struct giong__http_cconn *giong__http_pool_take(struct giong__http_cworker *w,
						struct giong__http_origin *o);
/* Put @c back in the pool of @o (or close it when the pool is full). 1 pooled,
 * 0 closed. */
int giong__http_pool_put(struct giong__http_cconn *c, struct giong__http_origin *o);
/* A new connection to @o, under the connect deadline: 0 or -errno. May suspend. */
int giong__http_cconn_open(struct giong__http_cworker *w, struct giong__http_origin *o,
			   struct giong__http_cconn **ret);
/* Close @c (not pooled) and free it. */
void giong__http_cconn_close(struct giong__http_cconn *c);

/* exchange.c */
/* An exchange done with: back to @w's cache with its buffers (freed past it). */
void giong__http_ex_put(struct giong__http_cworker *w, struct giong_http_exchange *ex);

/* A URL taken apart (spans into it, but for the defaulted target). */
struct giong__http_url {
	bool tls;
	const char *host; /* the authority's host, brackets of an IPv6 literal kept */
	size_t host_len;
	uint16_t port;
	bool port_given;
	const char *target; /* path and query: "/" when the URL has neither, "?q" alone
			     * when it has a query only (a "/" goes before it) */
	size_t target_len;
};

/* Parse @url (client.h says what is accepted): 0, -EINVAL, -EPROTONOSUPPORT. */
int giong__http_url_parse(const char *url, struct giong__http_url *u);

#endif /* GIONG_HTTP_CLIENT_INTERNAL_H */
