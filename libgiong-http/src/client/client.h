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
 *    allocates nothing per request;
 *  - struct giong_http_pipeline: exchanges sent on one connection in one
 *    write; cached the same way, with its arrays.
 */
#ifndef GIONG_HTTP_CLIENT_INTERNAL_H
#define GIONG_HTTP_CLIENT_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <giong/core.h>
#include <giong/http/client.h>
#include <giong/http/limits.h>
#include <giong/http/protocol.h>

#include "h1/chunked.h"
#include "giong_private.h"
#include "common/input.h"
#include "common/out.h"
#include "h1/serialize.h"
#include "h1/reply.h"
#include "client/reply_memo.h"
#include "common/slots.h"

/* The request head's bound (the caller's fields; framing comes after it). */
#define GIONG__HTTP_CLIENT_HEAD_MAX (64u * 1024)
/* Interim (1xx) responses skipped before a final one; past it, -EBADMSG. */
#define GIONG__HTTP_CLIENT_INTERIM_MAX 16u
/* Ended exchanges kept per worker, and the largest body copy one keeps. */
#define GIONG__HTTP_CLIENT_CACHE 64u
#define GIONG__HTTP_CLIENT_COPY_KEEP (64u * 1024)
/* Ended pipelines kept per worker. */
#define GIONG__HTTP_CLIENT_PIPELINE_CACHE 16u

struct giong__http_cworker;

struct giong__http_origin {
	struct giong__list_node link; /* on w->origins */
	struct giong__list idle;      /* its pooled connections, the newest last */
	uint32_t nidle;
	uint32_t refs; /* exchanges and pooled connections that point here */
	/* The connection its exchanges share as streams (another protocol: mux.c),
	 * while it takes them; a reference. */
	struct giong__http_cconn *mux;
	bool opening;              /* an exchange connects: one that may be shared */
	struct giong_waitq opened; /* exchanges waiting for that connection */
	bool tls;                  /* https: through the options' connector */
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
	/* Another protocol (mux.c): the table, its session, the exchanges using it,
	 * and the origin it is shared for (a reference), while it is. */
	const struct giong_http_protocol *proto;
	void *session;
	unsigned users;
	struct giong__http_origin *origin_mux;
};

struct giong__http_cworker {
	struct giong_http_client *cli;
	unsigned index;
	struct giong_http_client_stats stats;
	struct giong__list origins;
	struct giong__list idle;      /* every pooled connection, oldest first */
	struct giong__list exchanges; /* ended ones, for reuse */
	unsigned nexchanges;
	struct giong__list pipelines; /* ended ones, for reuse */
	unsigned npipelines;
	/* The pool's idle timer (client.c): armed while a connection is
	 * pooled; the worker's wheel holds it until it fires or is stopped. */
	struct giong_timer timer;
	bool ending;                        /* the worker's atexit hook runs */
	struct giong__http_reply_memo memo; /* the last head verified (reply_memo.h) */
};

/* Protocols a client takes beside HTTP/1.1 (giong_http_client_options.protocols). */
#define GIONG__HTTP_CLIENT_PROTOCOLS 8u

struct giong_http_client {
	struct giong_http_client_options o; /* with the defaults filled in */
	/* o.protocols' copy, NULL-terminated */
	const struct giong_http_protocol *protocols[GIONG__HTTP_CLIENT_PROTOCOLS + 1];
	struct giong_http_limits lim; /* the response parser's (head, fields, body) */
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
	struct giong_http_pipeline *pl;    /* the pipeline it is in, if any */
	uint8_t state;                     /* enum giong__http_ex_state */
	bool head_request, idempotent, bodiless_method;
	bool framed;      /* the framing field and the empty line are in req */
	bool written;     /* the request (or its head, streaming) was written */
	bool reused;      /* conn came from the pool */
	bool retried;     /* the one retry was used */
	bool got_bytes;   /* a byte of a response came on conn */
	bool streamed;    /* the request body goes in chunks (giong_http_exchange_write()) */
	bool expecting;   /* the head says Expect: 100-continue: the body waits for a go-ahead */
	bool withheld;    /* the server answered before the body, never sent: never pooled */
	int error;        /* sticky, with GIONG__HTTP_EX_FAILED */
	const void *body; /* giong_http_exchange_send()'s, borrowed */
	size_t body_len;
	uint32_t expect_ms; /* giong_http_exchange_expect_continue()'s wait; 0: not asked */
	/* The response. */
	struct giong__http_scan scan;
	struct giong__http_reply reply;
	struct giong_http_field *fields; /* o.fields_max entries */
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
	/* On a connection of another protocol (mux.c): its stream, and the rest of
	 * the body span it lent that the caller has not taken yet. */
	void *pst;
	const char *mrest;
	size_t mrest_len;
};

/*
 * A pipeline: its exchanges' requests went in one write on conn, and their
 * responses are read in the same order. The exchange handed back (out)
 * borrows conn until it ends; the last one's end pools conn or closes it. A
 * failure closes conn at once and is kept in error for every exchange after.
 */
struct giong_http_pipeline {
	struct giong__http_cworker *w;
	struct giong__http_origin *origin; /* a reference, from the first add */
	struct giong__http_cconn *conn;    /* from the send to the last response's end */
	struct giong__list_node link;      /* on w->pipelines, once ended */
	struct giong_http_exchange **ex;   /* ex[0..n), in the order added */
	struct iovec *iov;                 /* the write's pieces: 2 per exchange */
	unsigned n, cap;
	unsigned next;                   /* the index of the next to hand back */
	struct giong_http_exchange *out; /* handed back, not yet ended */
	unsigned flags;                  /* enum giong_http_pipeline_flags */
	bool sent, reused, retried;
	bool unsafe; /* a method that is not idempotent is in: never sent again */
	bool mux;    /* conn speaks another protocol: each exchange is a stream of it */
	int pooled;  /* what the last exchange's end did with conn */
	int error;   /* sticky: every later exchange fails with it */
};

/* Whether @ex waits in a pipeline (not handed back): only the pipeline may
 * send it, read its response or end it. */
static inline bool giong__http_ex_queued(const struct giong_http_exchange *ex)
{
	return ex->pl && ex->pl->out != ex;
}

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
/* The framing field for a body of @len bytes and the empty line, once: 0 or -errno. */
int giong__http_ex_frame(struct giong_http_exchange *ex, size_t len);

/* pipeline.c */
/* The end of @ex, handed back by its pipeline: the connection goes on to the
 * next response (1), to the pool after the last (1), or is closed (0). */
int giong__http_pipeline_ex_end(struct giong_http_exchange *ex);
/* Free the pipelines cached by @w (the worker ends). The client's one upcall
 * (libgiong-http/CMakeLists.txt's call order, build.http_order): client.c,
 * below pipeline.c, frees the worker's share and with it this cache. */
void giong__http_pipeline_cache_free(struct giong__http_cworker *w);

/* mux.c: exchanges on a connection of another protocol, as its streams */
/* Whether @c takes new streams (unshared from its origin once it cannot). */
bool giong__http_mux_usable(struct giong__http_cconn *c);
/* Share @c (a new or pooled connection with a session) for @o's exchanges. */
void giong__http_mux_share(struct giong__http_cconn *c, struct giong__http_origin *o);
/* Send @ex's request as a stream: its head, and its body unless @streamed. 0 or
 * -errno. May suspend. */
int giong__http_mux_send(struct giong_http_exchange *ex, bool streamed);
/* A piece of a streamed body (@last: the end). 0 or -errno. May suspend. */
int giong__http_mux_write(struct giong_http_exchange *ex, const void *buf, size_t len, bool last);
/* The response head into ex->reply: the status or -errno. May suspend. */
int giong__http_mux_head(struct giong_http_exchange *ex);
/* The next span of body, at most @max: its length, 0 at the end, -errno. */
ssize_t giong__http_mux_body_next(struct giong_http_exchange *ex, const char **data, size_t max);
/* @ex is done with its connection: its stream ends; the connection stays shared
 * (1), goes to the pool after its last exchange (1), or is closed (0); 0 too for one
 * that takes no new stream, closed when the last exchange on it ends. */
int giong__http_mux_release(struct giong_http_exchange *ex);

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
