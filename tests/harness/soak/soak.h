/* SPDX-License-Identifier: MIT */
/*
 * soak.h - what the parts of tests/harness/soak share: options, counters, the byte
 * pattern every message carries, and a client connection's bookkeeping.
 * main.c describes the program.
 */
#ifndef GIONG_TOOLS_SOAK_H
#define GIONG_TOOLS_SOAK_H

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <giong/net.h>

#define MAX_MSG (64u * 1024u)      /* largest message */
#define MAX_INFLIGHT (64u * 1024u) /* bytes sent before reading back (echo steps) */
#define WATCHDOG_MS 15000u         /* per step: longer means stalled */
#define QCAP 256                   /* expected-echo queue entries */
#define DRAIN_MS 30000u            /* how long clients get to finish at the end */

/* ---------------------------------------------------------------- options */

struct soak_opts {
	unsigned seconds, connections, workers;
	uint64_t seed;
	int port;
	bool quiet;
	bool external;   /* --connect */
	unsigned inject; /* --inject-fault N: the server flips a byte of every Nth echo */
	bool no_trim;    /* --no-trim: sample VmRSS without malloc_trim(0) first */
	struct giong_addr addr;
	char addr_text[128];
	/* --http: the clients talk HTTP to the example server examples/http, which
	 * the soak starts (http.c) */
	bool http;
	const char *tls;         /* --tls wolfssl|openssl: HTTPS; NULL: plain HTTP */
	const char *http_bin;    /* --http-bin: the server's program */
	const char *certs;       /* --certs DIR: server.pem, server.key, ca.pem */
	unsigned server_workers; /* --server-workers (default: --workers) */
	char origin[160];        /* "http://127.0.0.1:PORT" or "https://localhost:PORT" */
	bool lenient;            /* GIONG_FAULTS set: failed requests are the plan's */
};
extern struct soak_opts opt;

/* ---------------------------------------------------------------- counters */

#define COUNTERS(X)                                                                                \
	X(conns_opened)                                                                            \
	X(conns_accepted)                                                                          \
	X(close_normal)                                                                            \
	X(close_half)                                                                              \
	X(close_noread)                                                                            \
	X(close_reset)                                                                             \
	X(close_aborted)                                                                           \
	X(msgs_sent)                                                                               \
	X(bytes_sent)                                                                              \
	X(bytes_verified)                                                                          \
	X(reads_timed_out)                                                                         \
	X(reads_cancelled)                                                                         \
	X(reader_cancels)                                                                          \
	X(reader_cancels_late)                                                                     \
	X(writes_timed_out)                                                                        \
	X(writes_cancelled)                                                                        \
	X(writer_cancels)                                                                          \
	X(writer_cancels_late)                                                                     \
	X(write_deadline_steps)                                                                    \
	X(mismatches)                                                                              \
	X(errors)                                                                                  \
	X(stalls)                                                                                  \
	X(srv_closed)                                                                              \
	X(srv_reset)                                                                               \
	X(srv_pipe)                                                                                \
	X(srv_other)                                                                               \
	X(http_requests)                                                                           \
	X(http_steady)                                                                             \
	X(http_steady_failed)                                                                      \
	X(http_failed)                                                                             \
	X(http_pipelines)                                                                          \
	X(http_pipelined)                                                                          \
	X(http_raw_bursts)                                                                         \
	X(http_chunked)                                                                            \
	X(http_cutoffs)                                                                            \
	X(http_cutoff_answers)                                                                     \
	X(http_resets)                                                                             \
	X(http_timed_out)                                                                          \
	X(http_cancelled)                                                                          \
	X(http_deadline_steps)                                                                     \
	X(http_cancel_steps)

struct soak_counters {
#define X(n) _Atomic uint64_t n;
	COUNTERS(X)
#undef X
};
extern struct soak_counters ctr;

#define INC(n) atomic_fetch_add_explicit(&ctr.n, 1, memory_order_relaxed)
#define ADD(n, v) atomic_fetch_add_explicit(&ctr.n, (v), memory_order_relaxed)
#define GET(n) atomic_load_explicit(&ctr.n, memory_order_relaxed)

extern atomic_bool stop; /* clients: finish the step and leave */
extern volatile sig_atomic_t interrupted;
extern _Atomic unsigned clients_live;
extern _Atomic uint64_t next_conn_id;
extern _Atomic unsigned srv_live; /* server connections open */
extern _Atomic unsigned reports;  /* detailed error lines printed */

/* Print at most 20 detailed problem lines. */
#define REPORT(...)                                                                                \
	do {                                                                                       \
		if (atomic_fetch_add(&reports, 1) < 20)                                            \
			fprintf(stderr, "soak: " __VA_ARGS__);                                     \
	} while (0)

/* ------------------------------------------------------------------ random */

static inline uint64_t mix(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

static inline uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1Dull;
}

static inline uint32_t below(uint64_t *s, uint32_t n)
{
	return n ? (uint32_t)(rnd(s) % n) : 0;
}

/* 1 .. 64 KiB, spread over the orders of magnitude. */
static inline uint32_t rnd_len(uint64_t *s)
{
	return 1 + below(s, 1u << below(s, 17));
}

/* ----------------------------------------------------------------- pattern */

static inline uint64_t msg_key(uint64_t conn, uint32_t seq)
{
	return mix(mix(conn) ^ ((uint64_t)seq << 1 | 1));
}

static inline uint8_t pat(uint64_t key, size_t i)
{
	return (uint8_t)(mix(key + (i >> 3)) >> ((i & 7) * 8));
}

/* Write the pattern of message @key into p[0, len). */
void fill(uint8_t *p, uint64_t key, size_t len);
/* First index in [0, n) where p differs from the pattern at offset off, or -1. */
long check(const uint8_t *p, uint64_t key, size_t off, size_t n);

/* ------------------------------------------------------------- connection */

struct expect {
	uint64_t key;
	uint32_t seq;
	uint32_t pos, end; /* bytes [pos, end) of message seq are still to come back */
};

struct conn {
	struct giong_stream *s;
	uint64_t id;
	uint32_t seq;
	struct expect q[QCAP];
	unsigned qh, qn;
	size_t qbytes; /* bytes expected back */
	bool bad;      /* a mismatch, a loss or an error: stop checking */
	bool writes_done;
	int task_err; /* first error of a helper task */
	uint64_t rng; /* helper tasks' own random state */
	uint8_t *rbuf, *wbuf;
};

struct client {
	unsigned idx;
	uint64_t rng;
	struct conn c;
};

/* check.c: the queue of echoes a connection still expects, and checking them. */
struct expect *q_back(struct conn *c);
int expect_push(struct conn *c, uint64_t key, uint32_t seq, uint32_t pos, uint32_t end);
void expect_trim(struct conn *c, uint32_t old_end, uint32_t new_end);
int consume(struct conn *c, const uint8_t *p, size_t n);

/* client.c: one client task, sessions of random steps until stop. */
intptr_t client_task(void *arg);

/* http.c: --http, the server process and the HTTP client tasks. */
#define HTTP_MAX_BODY (256u * 1024u) /* largest request body */
struct soak_server {
	int pid;
	char dir[64];  /* the temporary directory: the server's log, certificates */
	char log[128]; /* its standard error */
};
/* Its temporary directory, and the certificates when --tls has no --certs.
 * 0, or -1 (said). */
int http_server_prepare(struct soak_server *srv);
/* Start examples/http as @opt asks, wait until it listens. 0, or -1 (said). */
int http_server_start(struct soak_server *srv);
/* SIGTERM, wait (bounded); the exit status (0 clean), -1 after a kill. */
int http_server_stop(struct soak_server *srv);
/* Print the server's --stats lines; remove the directory. */
void http_server_cleanup(struct soak_server *srv, bool show_log);
/* The client settings, once (before the runtime runs); their end. 0, -1
 * (said), or 77: a backend (or HTTP) this build does not have (said). */
int http_clients_init(void);
void http_clients_free(void);
/* One worker's end: its pooled connections closed. */
void http_clients_worker_done(void);
/* One HTTP client task (struct client *), until stop. */
intptr_t http_client_task(void *arg);
/* proc.c: a free loopback port; descriptors and VmRSS (KiB) of process
 * @pid (0: this one), -1 when gone. */
int soak_pick_port(void);
int count_fds_of(int pid);
long rss_kib_of(int pid);

#endif /* GIONG_TOOLS_SOAK_H */
