/* SPDX-License-Identifier: MIT */
/*
 * client.c - soak's client task: sessions of random steps (echo, cancelled
 * readers and writers, writes under deadlines, resets, half-closes), each
 * under a watchdog; see main.c for the list.
 */
#include <sys/socket.h>

#include "soak.h"

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
			REPORT("MISMATCH conn %" PRIu64 ": %zd bytes after the last echo\n", c->id,
			       r);
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

intptr_t client_task(void *arg)
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
