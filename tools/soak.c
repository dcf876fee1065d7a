/* SPDX-License-Identifier: MIT */
/*
 * soak - churn an echo server with many client tasks and check that nothing
 * is lost, corrupted or leaked.
 *
 *   soak [--seconds N] [--connections N] [--seed N] [--workers N]
 *        [--port N] [--connect HOST:PORT] [--quiet] [--no-trim]
 *        [--inject-fault N]
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
 * against the last third; it has settled if last <= first * 1.10 + 2 MiB.
 * Exit 0 only if all of that holds.
 *
 * --inject-fault N makes the in-process server flip one bit in about one of
 * every N echoes it reads with giong_stream_read: a self-test showing that
 * the checks catch corruption (the run must then FAIL).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <giong/net.h>

#define MAX_MSG (64u * 1024u)        /* largest message */
#define MAX_INFLIGHT (64u * 1024u)   /* bytes sent before reading back (echo steps) */
#define WATCHDOG_MS 15000u           /* per step: longer means stalled */
#define QCAP 256                     /* expected-echo queue entries */
#define DRAIN_MS 30000u              /* how long clients get to finish at the end */

/* ---------------------------------------------------------------- options */

static struct {
	unsigned seconds, connections, workers;
	uint64_t seed;
	int port;
	bool quiet;
	bool external; /* --connect */
	unsigned inject; /* --inject-fault N: the server flips a byte of every Nth echo */
	bool no_trim;    /* --no-trim: sample VmRSS without malloc_trim(0) first */
	struct giong_addr addr;
	char addr_text[128];
} opt = {.seconds = 60, .connections = 128, .workers = 2, .seed = 1};

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
	X(srv_other)

static struct {
#define X(n) _Atomic uint64_t n;
	COUNTERS(X)
#undef X
} ctr;

#define INC(n) atomic_fetch_add_explicit(&ctr.n, 1, memory_order_relaxed)
#define ADD(n, v) atomic_fetch_add_explicit(&ctr.n, (v), memory_order_relaxed)
#define GET(n) atomic_load_explicit(&ctr.n, memory_order_relaxed)

static atomic_bool stop;             /* clients: finish the step and leave */
static volatile sig_atomic_t interrupted;
static _Atomic unsigned clients_live;
static _Atomic uint64_t next_conn_id = 1;
static _Atomic unsigned srv_live;    /* server connections open */
static _Atomic unsigned reports;     /* detailed error lines printed */

static struct {
	double *rss_mib; /* one sample per second */
	unsigned n;
	double dur_s;
} mon;

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
static uint32_t rnd_len(uint64_t *s)
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

static void fill(uint8_t *p, uint64_t key, size_t len)
{
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t v = mix(key + (i >> 3));

		memcpy(p + i, &v, 8); /* little-endian: byte k is v >> 8k, as pat() */
	}
	for (; i < len; i++)
		p[i] = pat(key, i);
}

/* First index in [0, n) where p differs from the pattern at offset off, or -1. */
static long check(const uint8_t *p, uint64_t key, size_t off, size_t n)
{
	size_t i = 0;

	while (i < n && ((off + i) & 7))
		if (p[i] != pat(key, off + i))
			return (long)i;
		else
			i++;
	for (; i + 8 <= n; i += 8) {
		uint64_t v = mix(key + ((off + i) >> 3)), got;

		memcpy(&got, p + i, 8);
		if (got != v)
			break;
	}
	for (; i < n; i++)
		if (p[i] != pat(key, off + i))
			return (long)i;
	return -1;
}

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
	size_t qbytes;  /* bytes expected back */
	bool bad;       /* a mismatch, a loss or an error: stop checking */
	bool writes_done;
	int task_err;   /* first error of a helper task */
	uint64_t rng;   /* helper tasks' own random state */
	uint8_t *rbuf, *wbuf;
};

struct client {
	unsigned idx;
	uint64_t rng;
	struct conn c;
};

static struct expect *q_back(struct conn *c)
{
	return c->qn ? &c->q[(c->qh + c->qn - 1) % QCAP] : NULL;
}

/* Expect bytes [pos, end) of message (key, seq) back. Push BEFORE sending:
 * a reader task may see the echo before the writer is resumed. */
static int expect_push(struct conn *c, uint64_t key, uint32_t seq, uint32_t pos, uint32_t end)
{
	struct expect *b = q_back(c);

	if (b && b->key == key && b->end == pos) {
		b->end = end;
	} else {
		if (c->qn == QCAP)
			return -ENOSPC;
		c->q[(c->qh + c->qn) % QCAP] = (struct expect){key, seq, pos, end};
		c->qn++;
	}
	c->qbytes += end - pos;
	return 0;
}

/* A send of [pos, end) stopped at new_end: forget the rest. */
static void expect_trim(struct conn *c, uint32_t old_end, uint32_t new_end)
{
	struct expect *b = q_back(c);

	b->end = new_end;
	c->qbytes -= old_end - new_end;
}

/* Check n received bytes against what is expected. 0, or -1 on a mismatch. */
static int consume(struct conn *c, const uint8_t *p, size_t n)
{
	while (n) {
		struct expect *e;
		size_t take;
		long bad;

		while (c->qn && c->q[c->qh].pos == c->q[c->qh].end) {
			c->qh = (c->qh + 1) % QCAP;
			c->qn--;
		}
		if (!c->qn) {
			REPORT("MISMATCH conn %" PRIu64 ": %zu bytes more than were sent\n", c->id, n);
			INC(mismatches);
			c->bad = true;
			return -1;
		}
		e = &c->q[c->qh];
		take = e->end - e->pos < n ? e->end - e->pos : n;
		bad = check(p, e->key, e->pos, take);
		if (bad >= 0) {
			REPORT("MISMATCH conn %" PRIu64 " msg %u offset %" PRIu32
			       ": got 0x%02x, expected 0x%02x\n",
			       c->id, e->seq, e->pos + (uint32_t)bad, p[bad],
			       pat(e->key, e->pos + (size_t)bad));
			INC(mismatches);
			c->bad = true;
			return -1;
		}
		e->pos += (uint32_t)take;
		c->qbytes -= take;
		p += take;
		n -= take;
		ADD(bytes_verified, take);
	}
	return 0;
}

/* One receive, by recv (a pool buffer) or read (our buffer, random length),
 * checked. Returns the count (> 0), 0 at end of stream, -EILSEQ after a
 * mismatch, or the call's -errno. */
static ssize_t read_some(struct conn *c, uint64_t *rng)
{
	ssize_t n;

	if (below(rng, 2)) {
		struct giong_recvbuf *b;

		n = giong_stream_recv(c->s, &b);
		if (n > 0) {
			int r = consume(c, giong_recvbuf_data(b), (size_t)n);

			giong_recvbuf_release(b);
			if (r)
				return -EILSEQ;
		}
	} else {
		n = giong_stream_read(c->s, c->rbuf, rnd_len(rng));
		if (n > 0 && consume(c, c->rbuf, (size_t)n))
			return -EILSEQ;
	}
	return n;
}

static void unexpected(struct conn *c, const char *what, ssize_t r)
{
	if (r == -EILSEQ)
		return; /* counted as a mismatch */
	if (r == -ETIMEDOUT) {
		REPORT("STALL conn %" PRIu64 ": %s did not finish in %u ms\n", c->id, what,
		       WATCHDOG_MS);
		INC(stalls);
	} else if (r == 0) {
		REPORT("LOSS conn %" PRIu64 ": end of stream with %zu bytes still expected (%s)\n",
		       c->id, c->qbytes, what);
		INC(mismatches);
	} else {
		REPORT("ERROR conn %" PRIu64 ": %s: %s\n", c->id, what, giong_err_name((int)r));
		INC(errors);
	}
	c->bad = true;
}

/* Read until every expected byte is back. Some reads under a 0..3 ms
 * deadline: a timed-out read must lose nothing. 0 or -1. */
static int drain(struct conn *c, uint64_t *rng, bool deadlines)
{
	while (c->qbytes) {
		ssize_t n;

		if (deadlines && below(rng, 2)) {
			uint64_t saved = giong_deadline_in(below(rng, 4));

			n = read_some(c, rng);
			giong_deadline_restore(saved);
			if (n == -ETIMEDOUT && giong_now_ms() < saved) {
				INC(reads_timed_out);
				continue;
			}
		} else {
			n = read_some(c, rng);
		}
		if (n <= 0) {
			unexpected(c, "read", n);
			return -1;
		}
	}
	return 0;
}

/* Send message len bytes long (the next seq) by write_all, write or writev.
 * Returns 0 or the -errno of the send (the stream state is then unknown). */
static ssize_t send_msg(struct conn *c, uint64_t *rng, uint32_t len)
{
	uint32_t seq = c->seq++;
	uint64_t key = msg_key(c->id, seq);
	uint32_t off = 0;
	unsigned mode = below(rng, 3);

	fill(c->wbuf, key, len);
	INC(msgs_sent);
	while (off < len) {
		ssize_t n;

		if (expect_push(c, key, seq, off, len))
			return -ENOSPC;
		if (mode == 0) {
			n = giong_stream_write_all(c->s, c->wbuf + off, len - off);
		} else if (mode == 1 || len - off < 3) {
			n = giong_stream_write(c->s, c->wbuf + off, len - off);
		} else {
			struct iovec iov[3];
			uint32_t rest = len - off, a = 1 + below(rng, rest - 2);
			uint32_t b2 = 1 + below(rng, rest - a - 1);

			iov[0] = (struct iovec){c->wbuf + off, a};
			iov[1] = (struct iovec){c->wbuf + off + a, b2};
			iov[2] = (struct iovec){c->wbuf + off + a + b2, rest - a - b2};
			n = giong_stream_writev(c->s, iov, 3);
		}
		if (n <= 0)
			return n ? n : -EIO;
		if ((uint32_t)n < len - off)
			expect_trim(c, len, off + (uint32_t)n);
		off += (uint32_t)n;
		ADD(bytes_sent, (uint64_t)n);
	}
	return 0;
}

static void close_conn(struct conn *c)
{
	giong_stream_close(c->s);
	c->s = NULL;
}

/* A write failed: the byte stream is unknown from here; close and count. */
static void abort_conn(struct conn *c, ssize_t r, bool task_cancel)
{
	if (r == -ETIMEDOUT && !task_cancel) {
		INC(writes_timed_out);
	} else if (r == -ECANCELED && task_cancel) {
		INC(writes_cancelled);
	} else {
		unexpected(c, "write", r);
		close_conn(c);
		return;
	}
	INC(close_aborted);
	close_conn(c);
}

/* The flood: up to 64 large messages and no reading (so the socket
 * buffers fill and writes park). */
static ssize_t flood(struct conn *c, uint64_t *rng)
{
	unsigned k = 1 + below(rng, 64);

	for (unsigned i = 0; i < k; i++) {
		ssize_t r = send_msg(c, rng, 4096 + below(rng, MAX_MSG - 4096 + 1));

		if (r)
			return r;
	}
	return 0;
}

/* Wait for a helper task with no deadline (a join that times out would
 * detach a task that still uses the connection). */
static void join_nodl(struct giong_task *t)
{
	uint64_t saved = giong_deadline();

	giong_deadline_restore(GIONG_NO_DEADLINE);
	giong_join(t, NULL);
	giong_deadline_restore(saved);
}

static void pause_ms(uint64_t *rng, unsigned max)
{
	unsigned ms = below(rng, max + 1);

	if (ms)
		giong_sleep_ms(ms);
	else
		giong_yield();
}

/* Step results. */
enum { GO_ON, ENDED };

static int step_echo(struct conn *c, uint64_t *rng)
{
	unsigned k = 1 + below(rng, 4);
	uint32_t budget = MAX_INFLIGHT;

	for (unsigned i = 0; i < k && budget; i++) {
		uint32_t len = rnd_len(rng);
		ssize_t r;

		if (len > budget)
			len = budget;
		budget -= len;
		if ((r = send_msg(c, rng, len))) {
			abort_conn(c, r, false);
			return ENDED;
		}
	}
	if (drain(c, rng, below(rng, 3) == 0)) {
		close_conn(c);
		return ENDED;
	}
	return GO_ON;
}

static intptr_t reader_task(void *arg)
{
	struct conn *c = arg;
	uint64_t saved = giong_deadline_in(WATCHDOG_MS);

	giong_task_set_name("soak-reader");
	while (!(c->writes_done && !c->qbytes) && !c->bad) {
		ssize_t n = read_some(c, &c->rng);

		if (n <= 0) {
			c->task_err = n == 0 ? -EPIPE : (int)n;
			break;
		}
	}
	giong_deadline_restore(saved);
	return 0;
}

static int step_cancel_reader(struct conn *c, uint64_t *rng)
{
	struct giong_task *t;
	unsigned k = 1 + below(rng, 4);
	uint32_t budget = MAX_INFLIGHT;
	bool cancel_first = below(rng, 3) == 0;
	ssize_t r = 0;

	c->writes_done = false;
	c->task_err = 0;
	c->rng = rnd(rng);
	if (giong_spawn(reader_task, c, &t)) {
		INC(errors);
		close_conn(c);
		return ENDED;
	}
	if (cancel_first) {
		pause_ms(rng, 3);
		giong_task_cancel(t);
		INC(reader_cancels);
	}
	for (unsigned i = 0; i < k && !r; i++) {
		uint32_t len = rnd_len(rng);

		if (len > budget)
			len = budget;
		budget -= len;
		r = len ? send_msg(c, rng, len) : 0;
		if (below(rng, 2))
			pause_ms(rng, 2);
	}
	c->writes_done = true;
	if (!cancel_first) {
		pause_ms(rng, 3);
		giong_task_cancel(t);
		INC(reader_cancels);
	}
	join_nodl(t);
	if (r) {
		abort_conn(c, r, false);
		return ENDED;
	}
	if (c->bad) { /* a mismatch seen by the reader */
		close_conn(c);
		return ENDED;
	}
	if (c->task_err == -ECANCELED)
		INC(reads_cancelled);
	else if (c->task_err == 0)
		INC(reader_cancels_late); /* it had read everything already */
	else {
		unexpected(c, "read (reader task)", c->task_err == -EPIPE ? 0 : c->task_err);
		close_conn(c);
		return ENDED;
	}
	if (drain(c, rng, false)) {
		close_conn(c);
		return ENDED;
	}
	return GO_ON;
}

static int step_write_deadline(struct conn *c, uint64_t *rng)
{
	uint64_t saved = giong_deadline_in(1 + below(rng, 20));
	ssize_t r = flood(c, rng);

	giong_deadline_restore(saved);
	INC(write_deadline_steps);
	if (r) {
		abort_conn(c, r, false);
		return ENDED;
	}
	if (drain(c, rng, false)) {
		close_conn(c);
		return ENDED;
	}
	return GO_ON;
}

static intptr_t writer_task(void *arg)
{
	struct conn *c = arg;
	uint64_t saved = giong_deadline_in(WATCHDOG_MS);

	giong_task_set_name("soak-writer");
	c->task_err = (int)flood(c, &c->rng);
	giong_deadline_restore(saved);
	return 0;
}

static int step_cancel_writer(struct conn *c, uint64_t *rng)
{
	struct giong_task *t;

	c->task_err = 0;
	c->rng = rnd(rng);
	if (giong_spawn(writer_task, c, &t)) {
		INC(errors);
		close_conn(c);
		return ENDED;
	}
	pause_ms(rng, 5);
	giong_task_cancel(t);
	INC(writer_cancels);
	join_nodl(t);
	if (c->task_err) {
		abort_conn(c, c->task_err, true);
		return ENDED;
	}
	INC(writer_cancels_late);
	if (drain(c, rng, false)) {
		close_conn(c);
		return ENDED;
	}
	return GO_ON;
}

/* Send a message and close without reading its echo. */
static int step_close_noread(struct conn *c, uint64_t *rng)
{
	ssize_t r = send_msg(c, rng, rnd_len(rng));

	if (r) {
		abort_conn(c, r, false);
		return ENDED;
	}
	if (below(rng, 2))
		giong_yield(); /* sometimes let the echo start arriving */
	INC(close_noread);
	close_conn(c);
	return ENDED;
}

/* SO_LINGER {1, 0}: close sends a reset. Sometimes with data in flight. */
static int step_reset(struct conn *c, uint64_t *rng)
{
	struct linger lg = {1, 0};
	ssize_t r = below(rng, 2) ? send_msg(c, rng, rnd_len(rng)) : 0;

	if (r) {
		abort_conn(c, r, false);
		return ENDED;
	}
	if (setsockopt(giong_stream_fd(c->s), SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)))
		unexpected(c, "setsockopt(SO_LINGER)", -errno);
	else
		INC(close_reset);
	close_conn(c);
	return ENDED;
}

/* shutdown(SHUT_WR), every echo back, then the end of stream. */
static int step_half_close(struct conn *c, uint64_t *rng)
{
	unsigned k = below(rng, 4);
	uint32_t budget = MAX_INFLIGHT;
	ssize_t r = 0;
	int e;

	for (unsigned i = 0; i < k && budget && !r; i++) {
		uint32_t len = rnd_len(rng);

		if (len > budget)
			len = budget;
		budget -= len;
		r = send_msg(c, rng, len);
	}
	if (r) {
		abort_conn(c, r, false);
		return ENDED;
	}
	if ((e = giong_stream_shutdown(c->s, SHUT_WR))) {
		unexpected(c, "shutdown", e);
		close_conn(c);
		return ENDED;
	}
	if (drain(c, rng, true)) {
		close_conn(c);
		return ENDED;
	}
	r = read_some(c, rng); /* now the end of stream, and nothing else */
	if (r != 0) {
		if (r > 0) {
			REPORT("MISMATCH conn %" PRIu64 ": %zd bytes after the last echo\n", c->id, r);
			INC(mismatches);
		} else {
			unexpected(c, "read of the end of stream", r);
		}
	} else {
		INC(close_half);
	}
	close_conn(c);
	return ENDED;
}

static void session(struct client *cl)
{
	struct conn *c = &cl->c;
	uint64_t *rng = &cl->rng;
	uint64_t saved = giong_deadline_in(WATCHDOG_MS);
	unsigned steps = 1 + below(rng, 200);
	int r;

	r = giong_tcp_connect_addr(&opt.addr, &c->s);
	giong_deadline_restore(saved);
	if (r) {
		REPORT("ERROR connect %s: %s\n", opt.addr_text, giong_err_name(r));
		INC(errors);
		giong_sleep_ms(10);
		return;
	}
	INC(conns_opened);
	c->id = atomic_fetch_add(&next_conn_id, 1);
	c->seq = 0;
	c->qh = c->qn = 0;
	c->qbytes = 0;
	c->bad = false;
	for (unsigned i = 0; i < steps && !atomic_load(&stop) && !giong_task_cancelled(); i++) {
		unsigned p = below(rng, 100);
		int res;

		saved = giong_deadline_in(WATCHDOG_MS);
		if (p < 45)
			res = step_echo(c, rng);
		else if (p < 60)
			res = step_cancel_reader(c, rng);
		else if (p < 67)
			res = step_write_deadline(c, rng);
		else if (p < 74)
			res = step_cancel_writer(c, rng);
		else if (p < 86) {
			pause_ms(rng, 5);
			res = GO_ON;
		} else if (p < 90)
			res = step_close_noread(c, rng);
		else if (p < 94)
			res = step_reset(c, rng);
		else
			res = step_half_close(c, rng);
		giong_deadline_restore(saved);
		if (res == ENDED)
			return;
	}
	INC(close_normal);
	close_conn(c);
}

static intptr_t client_task(void *arg)
{
	struct client *cl = arg;

	giong_task_set_name("soak-client");
	/* A cancelled task (the runtime ending it after the grace period)
	 * must leave: its sleeps no longer park. */
	while (!atomic_load(&stop) && !giong_task_cancelled())
		session(cl);
	atomic_fetch_sub(&clients_live, 1);
	return 0;
}

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

static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6)) {
			kib = strtol(line + 6, NULL, 10);
			break;
		}
	fclose(f);
	return kib;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* not the directory's own descriptor */
}

static void progress(uint64_t t0)
{
	double t = (double)(giong_now_ms() - t0) / 1000.0;
	struct giong_stats st = {0};

	giong_stats(&st); /* worker 0's */

	printf("soak: t=%4.0fs conns %" PRIu64 " verified %.1f MiB (%.1f MiB/s) "
	       "reads cancelled/timed out %" PRIu64 "/%" PRIu64 " writes cancelled/timed out %" PRIu64
	       "/%" PRIu64 " aborted %" PRIu64 " mismatches %" PRIu64 " errors %" PRIu64
	       " stalls %" PRIu64 " fds %d rss %.1f MiB (worker 0: %u tasks, stacks %u in use + %u pooled)\n",
	       t, GET(conns_opened), (double)GET(bytes_verified) / 1048576.0,
	       t > 0 ? (double)GET(bytes_verified) / 1048576.0 / t : 0.0, GET(reads_cancelled),
	       GET(reads_timed_out), GET(writes_cancelled), GET(writes_timed_out), GET(close_aborted),
	       GET(mismatches), GET(errors), GET(stalls), count_fds(),
	       mon.n ? mon.rss_mib[mon.n - 1] : (double)rss_kib() / 1024.0, st.fibers_live,
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
		if (!opt.no_trim)
			malloc_trim(0);
		mon.rss_mib[mon.n++] = (double)rss_kib() / 1024.0;
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
	if (!opt.external) {
		r = giong_tcp_listen_addr(&opt.addr, NULL, &l);
		if (r) {
			fprintf(stderr, "soak: worker %u: listen on %s: %s\n", worker, opt.addr_text,
				giong_strerror(r));
			INC(errors);
			atomic_store(&stop, true);
			giong_shutdown();
			return;
		}
	}
	for (unsigned i = worker; i < opt.connections; i += opt.workers) {
		atomic_fetch_add(&clients_live, 1);
		if (giong_spawn(client_task, &clients[i], NULL)) {
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
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(3);
}

static int pick_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;

	if (fd < 0)
		return -1;
	if (!bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

static void usage(void)
{
	fprintf(stderr, "usage: soak [--seconds N] [--connections N] [--seed N] [--workers N]\n"
			"            [--port N] [--connect HOST:PORT] [--quiet] [--no-trim]\n"
			"            [--inject-fault N]\n");
	exit(2);
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
	unsigned third;
	double first, last, peak = 0, limit;
	bool fds_ok, mem_ok, ok;

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
		if (i + 1 >= argc)
			usage();
		if (!strcmp(a, "--seconds"))
			opt.seconds = (unsigned)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(a, "--connections"))
			opt.connections = (unsigned)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(a, "--seed"))
			opt.seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(a, "--workers"))
			opt.workers = (unsigned)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(a, "--port"))
			opt.port = atoi(argv[++i]);
		else if (!strcmp(a, "--inject-fault"))
			opt.inject = (unsigned)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(a, "--connect")) {
			opt.external = true;
			snprintf(opt.addr_text, sizeof(opt.addr_text), "%s", argv[++i]);
		} else
			usage();
	}
	if (!opt.seconds || !opt.connections || !opt.workers)
		usage();
	if (!opt.external) {
		if (!opt.port)
			opt.port = pick_port();
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
		clients[i].c.wbuf = malloc(MAX_MSG);
		if (!clients[i].c.rbuf || !clients[i].c.wbuf)
			return 1;
	}

	printf("soak: %u s, %u client connections, %u workers, seed %" PRIu64 ", %s %s\n",
	       opt.seconds, opt.connections, opt.workers, opt.seed,
	       opt.external ? "external echo server at" : "in-process echo server on",
	       opt.addr_text);
	fflush(stdout);

	fds_before = count_fds();
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
	fds_after = count_fds();
	alarm(0);

	third = mon.n / 3;
	first = mean(mon.rss_mib, third);
	last = mean(mon.rss_mib + mon.n - third, third);
	for (unsigned i = 0; i < mon.n; i++)
		peak = mon.rss_mib[i] > peak ? mon.rss_mib[i] : peak;
	limit = first * 1.10 + 2.0;
	fds_ok = fds_before == fds_after;
	mem_ok = third > 0 && last <= limit;
	ok = !r && fds_ok && mem_ok && !GET(mismatches) && !GET(errors) && !GET(stalls) && !leaked;

	printf("soak: summary after %.1f s (%u client connections, %u workers, seed %" PRIu64 ")%s\n",
	       mon.dur_s, opt.connections, opt.workers, opt.seed,
	       interrupted ? " (interrupted)" : "");
	printf("  connections opened        %" PRIu64 " (accepted by the server: %" PRIu64 ")\n",
	       GET(conns_opened), GET(conns_accepted));
	printf("  closed                    normal %" PRIu64 ", half-close+EOF %" PRIu64
	       ", without reading %" PRIu64 ", reset (SO_LINGER 0) %" PRIu64
	       ", aborted after a cancelled/timed-out write %" PRIu64 "\n",
	       GET(close_normal), GET(close_half), GET(close_noread), GET(close_reset),
	       GET(close_aborted));
	printf("  messages sent             %" PRIu64 " (%.1f MiB)\n", GET(msgs_sent),
	       (double)GET(bytes_sent) / 1048576.0);
	printf("  bytes verified            %" PRIu64 " (%.1f MiB, %.1f MiB/s)\n", GET(bytes_verified),
	       (double)GET(bytes_verified) / 1048576.0,
	       mon.dur_s > 0 ? (double)GET(bytes_verified) / 1048576.0 / mon.dur_s : 0.0);
	printf("  reads  cancelled (task)   %" PRIu64 " of %" PRIu64 " cancels (%" PRIu64
	       " came after the reader was done); timed out (deadline) %" PRIu64 "\n",
	       GET(reads_cancelled), GET(reader_cancels), GET(reader_cancels_late),
	       GET(reads_timed_out));
	printf("  writes cancelled (task)   %" PRIu64 " of %" PRIu64 " cancels (%" PRIu64
	       " came after the writer was done); timed out (deadline) %" PRIu64 " of %" PRIu64
	       " deadline floods\n",
	       GET(writes_cancelled), GET(writer_cancels), GET(writer_cancels_late),
	       GET(writes_timed_out), GET(write_deadline_steps));
	printf("  operations cancelled/timed out  %" PRIu64 "\n",
	       GET(reads_cancelled) + GET(reads_timed_out) + GET(writes_cancelled) +
		       GET(writes_timed_out));
	printf("  server                    %" PRIu64 " closed; ended by reset %" PRIu64
	       ", broken pipe %" PRIu64 ", other %" PRIu64 "; still open %u\n",
	       GET(srv_closed), GET(srv_reset), GET(srv_pipe), GET(srv_other),
	       atomic_load(&srv_live));
	printf("  mismatches                %" PRIu64 "%s\n", GET(mismatches),
	       GET(mismatches) ? "  <-- FAIL" : "");
	printf("  unexpected errors         %" PRIu64 ", stalls %" PRIu64 ", operations leaked %u%s\n",
	       GET(errors), GET(stalls), leaked,
	       GET(errors) || GET(stalls) || leaked ? "  <-- FAIL" : "");
	printf("  descriptors               before %d, after %d%s\n", fds_before, fds_after,
	       fds_ok ? " (equal)" : "  <-- FAIL");
	printf("  resident memory           %u samples; first third mean %.1f MiB, last third "
	       "mean %.1f MiB, peak %.1f MiB; limit %.1f MiB: %s\n",
	       mon.n, first, last, peak, limit, mem_ok ? "settled" : "NOT settled  <-- FAIL");
	printf("soak: %s\n", ok ? "PASS" : "FAIL");

	for (unsigned i = 0; i < opt.connections; i++) {
		free(clients[i].c.rbuf);
		free(clients[i].c.wbuf);
	}
	free(clients);
	free(mon.rss_mib);
	return ok ? 0 : 1;
}
