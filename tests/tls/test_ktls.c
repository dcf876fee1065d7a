/* SPDX-License-Identifier: MIT */
/*
 * test_ktls.c - kernel TLS through the TLS stream (issue 29), per backend, over TCP on
 * loopback (TLS 1.3 and 1.2, each with the backend's default suite):
 *  - where the kernel has TLS (the 6.1 guest loads the module), both sides hand their send
 *    direction over after the handshake (giong_tls_ktls_stats().tx counts two), then their
 *    receive direction (rx counts two; a TLS 1.3 client after the server's ticket) and free
 *    the library's object (released counts two: version and cipher still answer), the splice
 *    question answers with the socket, and 4 MiB each way (writes, a send of three buffers,
 *    a body spliced from a pipe into the TLS stream) arrive byte for byte through the other
 *    side's TLS library; close_notify sent by the kernel ends the peer's reads cleanly (0,
 *    not a truncation);
 *  - where it has none (this machine), the same exchange runs in user space, the fallback
 *    is counted (fallback_module), and the splice question has no answer;
 *  - with giong_tls_config_ktls(cfg, false), nothing is handed over and no count moves;
 *  - a suite the export does not describe (TLS 1.3 AES-128-CCM) stays in user space and
 *    works, counted as fallback_cipher (where the kernel has no TLS: fallback_module);
 *  - in the guest, records of other types sent by the peer through its own kernel TLS
 *    (giong_stream_ktls_send_record()) reach a server whose receive is in the kernel: a
 *    ticket is skipped and data after it arrives, and so does a TLS 1.2 renegotiation
 *    (refused with a warning) and a warning alert; a fatal alert ends the reads with
 *    GIONG_ETLS_ALERT and its number in the words; a TLS 1.3 KeyUpdate ends them with
 *    GIONG_ETLS (Linux before 6.14 cannot follow it), counted; a second connection resumes
 *    the first one's session with both directions in the kernel on both sides.
 * Labels ktls and tls_<backend>: the guest runs it (it leaves label tls out).
 */
#include <fcntl.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <giong/net/ktls.h>

#include "tls_test.h"

#define EACH (4u << 20)

struct kt {
	enum giong_tls_version v;
	bool on; /* giong_tls_config_ktls() */
	int has; /* giong_ktls_probe() */
	struct giong_tls_ktls_stats before, after;
};

/* A connected TCP pair of giong streams, in a task. */
static int tcp_pair(struct giong_stream **c, struct giong_stream **s)
{
	struct giong_listen_options lo = {.regular_fds = true};
	struct giong_listener *l;
	struct giong_addr a;
	char addr[64];
	int r;

	if ((r = giong_tcp_listen("127.0.0.1:0", &lo, &l)))
		return r;
	if ((r = giong_listener_addr(l, &a)) == 0) {
		snprintf(addr, sizeof(addr), "127.0.0.1:%d", giong_addr_port(&a));
		if ((r = giong_tcp_connect(addr, c)) == 0 && (r = giong_tcp_accept(l, s)))
			giong_stream_close(*c);
	}
	giong_listener_close(l);
	return r;
}

/* @n bytes of the pattern from @off, read through @s and checked. */
static void read_checked(struct giong_stream *s, unsigned char *buf, size_t n, uint64_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = giong_stream_read(s, buf + got, n - got);

		if (!gt_check_true(r > 0))
			return;
		got += (size_t)r;
	}
	gt_check_true(tt_pattern_ok(buf, n, off));
}

struct writer {
	struct giong_stream *s;
	const unsigned char *buf;
	size_t len;
	ssize_t res;
};

static intptr_t write_task(void *arg)
{
	struct writer *w = arg;

	w->res = giong_stream_write_all(w->s, w->buf, w->len);
	return 0;
}

static void ktls_main(unsigned w, void *arg)
{
	struct kt *k = arg;
	struct giong_tls_config *srv = tt_server("server", NULL), *cli = tt_client(NULL);
	struct giong_stream *a, *b, *server = NULL, *client = NULL;
	unsigned char *out = malloc(EACH), *in = malloc(EACH);
	struct tt_sent sent = {.req.done = tt_sent_done};
	struct writer wr;
	struct giong_task *t;
	struct iovec three[3];
	size_t third = EACH / 3;
	bool kernel = k->on && k->has == 0;
	int p[2] = {-1, -1}, err = 0;
	char end;
	(void)w;

	gt_check_int_equal(giong_tls_config_versions(srv, k->v, k->v), 0);
	gt_check_int_equal(giong_tls_config_ktls(srv, k->on), 0);
	gt_check_int_equal(giong_tls_config_ktls(cli, k->on), 0);
	giong_tls_ktls_stats(&k->before);
	if (!gt_check_non_null(out) || !gt_check_non_null(in) ||
	    !gt_check_int_equal(tcp_pair(&b, &a), 0) ||
	    !gt_check_int_equal(tt_pair_over(a, b, srv, cli, "localhost", &server, &client, &err),
				0))
		goto out;
	tt_pattern(out, EACH, 0);
	/* The splice question: the socket under kernel TLS, none in user space. */
	gt_check_int_equal(giong_stream_can_splice(server), kernel ? 1 : -ENOENT);

	/* Server to client: a write, a send of three buffers, a spliced body. */
	wr = (struct writer){server, out, third, 0};
	if (gt_check_int_equal(giong_spawn(write_task, &wr, &t), 0)) {
		read_checked(client, in, third, 0);
		giong_join(t, NULL);
		gt_check_int_equal(wr.res, (ssize_t)third);
	}
	three[0] = (struct iovec){out + third, 1};
	three[1] = (struct iovec){out + third + 1, third - 100};
	three[2] = (struct iovec){out + 2 * third - 99, 99};
	if (gt_check_int_equal(giong_stream_send_start(server, &sent.req, three, 3), 0)) {
		read_checked(client, in, third, third);
		while (!sent.done)
			giong_sleep_ms(1);
		gt_check_int_equal(sent.res, (ssize_t)third);
	}
	if (kernel && gt_check_int_equal(pipe(p), 0)) {
		size_t rest = EACH - 2 * third, done = 0;

		fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
		wr = (struct writer){NULL, NULL, 0, 0};
		while (done < rest) {
			size_t chunk = rest - done < 65536 ? rest - done : 65536;
			ssize_t n;

			gt_check_int_equal(write(p[1], out + 2 * third + done, chunk),
					   (ssize_t)chunk);
			for (size_t moved = 0; moved < chunk; moved += (size_t)n) {
				n = giong_stream_splice(server, p[0], chunk - moved);
				if (!gt_check_true(n > 0))
					goto out;
			}
			read_checked(client, in, chunk, 2 * third + done);
			done += chunk;
		}
	} else {
		wr = (struct writer){server, out + 2 * third, EACH - 2 * third, 0};
		if (gt_check_int_equal(giong_spawn(write_task, &wr, &t), 0)) {
			read_checked(client, in, EACH - 2 * third, 2 * third);
			giong_join(t, NULL);
		}
	}

	/* Client to server: 4 MiB in one write. */
	wr = (struct writer){client, out, EACH, 0};
	if (gt_check_int_equal(giong_spawn(write_task, &wr, &t), 0)) {
		read_checked(server, in, EACH, 0);
		giong_join(t, NULL);
		gt_check_int_equal(wr.res, (ssize_t)EACH);
	}

	/* close_notify from the server (the kernel's record under kernel TLS): a
	 * clean end for the client, then for the server the same way back. */
	gt_check_int_equal(giong_stream_shutdown(server, SHUT_WR), 0);
	gt_check_int_equal(giong_stream_read(client, &end, 1), 0);
	gt_check_int_equal(giong_stream_shutdown(client, SHUT_WR), 0);
	gt_check_int_equal(giong_stream_read(server, &end, 1), 0);
	/* The questions still answer once the library's object is gone. */
	gt_check_true(giong_tls_version(server) && giong_tls_version(client));
	gt_check_true(giong_tls_cipher(server) && giong_tls_cipher(client));
out:
	giong_tls_ktls_stats(&k->after);
	if (p[0] >= 0) {
		close(p[0]);
		close(p[1]);
	}
	if (server)
		giong_stream_close(server);
	if (client)
		giong_stream_close(client);
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
	free(out);
	free(in);
}

static void run(enum giong_tls_version v, bool on)
{
	struct giong_config cfg = gt_config(1);
	struct kt k = {.v = v, .on = on, .has = giong_ktls_probe()};

	gt_run(&cfg, ktls_main, &k, NULL);
	if (!on) {
		assert_memory_equal(&k.before, &k.after, sizeof(k.before));
	} else if (k.has == 0) {
		assert_int_equal(k.after.tx - k.before.tx, 2); /* server and client */
#ifdef GIONG_FAULTS
		/* A fault plan's full ring may put the receive's hand-over off past its
		 * tries while 4 MiB come in: in the kernel or counted, then. */
		assert_int_equal(
			k.after.rx + k.after.rx_fallback - k.before.rx - k.before.rx_fallback, 2);
#else
		assert_int_equal(k.after.rx - k.before.rx, 2);
		assert_int_equal(k.after.released - k.before.released, 2);
		assert_int_equal(k.after.rx_fallback, k.before.rx_fallback);
#endif
	} else {
		fprintf(stderr, "the kernel lacks TLS (TCP_ULP tls: %s): user space, counted\n",
			strerror(-k.has));
		assert_int_equal(k.after.fallback_module - k.before.fallback_module, 2);
		assert_int_equal(k.after.tx, k.before.tx);
	}
}

static void test_tls13(void **state)
{
	(void)state;
	run(GIONG_TLS_1_3, true);
}

static void test_tls12(void **state)
{
	(void)state;
	run(GIONG_TLS_1_2, true);
}

static void test_off(void **state)
{
	(void)state;
	run(GIONG_TLS_1_3, false);
}

/* --- records of other types from the peer (the guest) --------------------------------------- */

struct peer {
	enum giong_tls_version v;
	struct giong_tls_ktls_stats before, after;
	int resumed[2]; /* the second connection's, server and client */
};

/* @n bytes read through @s (a fault plan's short receives may split them): @n, or the
 * first read's failure. */
static ssize_t read_n(struct giong_stream *s, char *buf, size_t n)
{
	for (size_t got = 0; got < n;) {
		ssize_t r = giong_stream_read(s, buf + got, n - got);

		if (r <= 0)
			return r;
		got += (size_t)r;
	}
	return (ssize_t)n;
}

/* A connected TLS pair over TCP with both configurations, in a task. */
static int tls_tcp_pair(struct giong_tls_config *srv, struct giong_tls_config *cli,
			struct giong_stream **server, struct giong_stream **client)
{
	struct giong_stream *a, *b;
	int err = 0, r;

	*server = *client = NULL;
	if ((r = tcp_pair(&b, &a)))
		return r;
	return tt_pair_over(a, b, srv, cli, "localhost", server, client, &err);
}

/* The client sends @type's record through its kernel TLS; the server then reads @want. */
static void record_then(struct giong_tls_config *srv, struct giong_tls_config *cli, uint8_t type,
			const char *rec, size_t len, ssize_t want, const char *words)
{
	struct giong_stream *server, *client;
	struct giong_tls_ktls_stats a, b;
	char buf[8];

	giong_tls_ktls_stats(&a);
	if (!gt_check_int_equal(tls_tcp_pair(srv, cli, &server, &client), 0))
		return;
	/* Each side's reads hand its receive over, if the handshake did not (a TLS 1.3
	 * client's once the server's ticket came); a fault plan's full ring may put a
	 * hand-over off to the next read: exchange until both have. */
	for (int i = 0; i < 16; i++) {
		gt_check_int_equal(giong_stream_write_all(server, "hi", 2), 2);
		gt_check_int_equal(read_n(client, buf, 2), 2);
		gt_check_int_equal(giong_stream_write_all(client, "go", 2), 2);
		gt_check_int_equal(read_n(server, buf, 2), 2);
		giong_tls_ktls_stats(&b);
		if (b.rx - a.rx == 2)
			break;
	}
	gt_check_int_equal(b.rx - a.rx, 2);
	gt_check_int_equal(giong_stream_ktls_send_record(client, type, rec, len), (ssize_t)len);
	gt_check_int_equal(giong_stream_write_all(client, "ok", 2), 2);
	gt_check_int_equal(want > 0 ? read_n(server, buf, (size_t)want)
				    : giong_stream_read(server, buf, sizeof(buf)),
			   want);
	if (words && !gt_check_non_null(strstr(giong_tls_last_error(server), words)))
		fprintf(stderr, "the server's words: %s\n", giong_tls_last_error(server));
	if (want < 0) /* the end stays */
		gt_check_int_equal(giong_stream_read(server, buf, sizeof(buf)), want);
	giong_stream_close(server);
	giong_stream_close(client);
}

static void peer_main(unsigned w, void *arg)
{
	struct peer *p = arg;
	struct giong_tls_config *srv = tt_server("server", NULL), *cli = tt_client(NULL);
	struct giong_stream *server, *client;
	char buf[4];
	(void)w;

	gt_check_int_equal(giong_tls_config_versions(srv, p->v, p->v), 0);
	/* On whatever GIONG_TLS_KTLS says (the suite also runs with it off). */
	gt_check_int_equal(giong_tls_config_ktls(srv, true), 0);
	gt_check_int_equal(giong_tls_config_ktls(cli, true), 0);
	giong_tls_ktls_stats(&p->before);
	/* A ticket (an empty NewSessionTicket): for a library that is gone, skipped. */
	record_then(srv, cli, 22, "\x04\x00\x00\x00", 4, 2, NULL);
	/* TLS 1.2: a renegotiation asked (a ClientHello's head) is refused with a warning
	 * no_renegotiation alert and the connection goes on; a warning ends nothing. */
	if (p->v == GIONG_TLS_1_2) {
		record_then(srv, cli, 22, "\x01\x00\x00\x00", 4, 2, NULL);
		record_then(srv, cli, 21, "\x01\x64", 2, 2, NULL);
	}
	/* A fatal alert (handshake_failure, 40). */
	record_then(srv, cli, 21, "\x02\x28", 2, GIONG_ETLS_ALERT, "alert 40");
	/* A KeyUpdate (update_not_requested): TLS 1.3's, which 6.1 cannot follow. */
	if (p->v == GIONG_TLS_1_3)
		record_then(srv, cli, 22, "\x18\x00\x00\x01\x00", 5, GIONG_ETLS, "KeyUpdate");
	/* Resumption: the first connection's session (its ticket read before the
	 * client's receive went to the kernel), taken by a second one. */
	for (int i = 0; i < 2; i++) {
		if (!gt_check_int_equal(tls_tcp_pair(srv, cli, &server, &client), 0))
			break;
		gt_check_int_equal(giong_stream_write_all(server, "hi", 2), 2);
		gt_check_int_equal(read_n(client, buf, 2), 2);
		gt_check_int_equal(giong_stream_write_all(client, "yo", 2), 2);
		gt_check_int_equal(read_n(server, buf, 2), 2);
		p->resumed[0] = giong_tls_resumed(server);
		p->resumed[1] = giong_tls_resumed(client);
		giong_stream_close(server);
		giong_stream_close(client);
	}
	giong_tls_ktls_stats(&p->after);
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
}

static void run_peer(enum giong_tls_version v)
{
	struct giong_config cfg = gt_config(1);
	struct peer p = {.v = v};
	int has = giong_ktls_probe();

	if (has) {
		fprintf(stderr, "SKIP: the kernel lacks TLS (CONFIG_TLS, the tls module): %s\n",
			strerror(-has));
		skip();
	}
	gt_run(&cfg, peer_main, &p, NULL);
	assert_int_equal(p.after.key_update - p.before.key_update, v == GIONG_TLS_1_3);
	/* wolfSSL's client keeps no TLS 1.2 session (libgiong-tls-wolfssl: its 5.5.4
	 * fails the handshake on a ticket the server does not take). */
	if (v == GIONG_TLS_1_3 || strcmp(tt_backend()->name, "wolfssl")) {
		assert_int_equal(p.resumed[0], 1);
		assert_int_equal(p.resumed[1], 1);
	}
	/* Both sides of every connection: 5 under TLS 1.3, 6 under 1.2. */
	assert_int_equal(p.after.rx - p.before.rx, v == GIONG_TLS_1_3 ? 10 : 12);
	assert_int_equal(p.after.released - p.before.released, v == GIONG_TLS_1_3 ? 10 : 12);
	assert_int_equal(p.after.rx_fallback, p.before.rx_fallback);
}

static void test_peer13(void **state)
{
	(void)state;
	run_peer(GIONG_TLS_1_3);
}

static void test_peer12(void **state)
{
	(void)state;
	run_peer(GIONG_TLS_1_2);
}

/* --- a suite the kernel is not given ------------------------------------------------------ */

struct cf {
	struct giong_tls_ktls_stats before, after;
	bool ok;
};

/* TLS 1.3 with AES-128-CCM, which both libraries have and the export does not describe
 * (Linux takes CCM only from 5.2 and not for every version: left to user space). */
static void cipher_main(unsigned w, void *arg)
{
	struct cf *c = arg;
	bool wolf = !strcmp(tt_backend()->name, "wolfssl");
	const char *ccm = wolf ? "TLS13-AES128-CCM-SHA256" : "TLS_AES_128_CCM_SHA256";
	struct giong_tls_config *srv = tt_server("server", NULL), *cli = tt_client(NULL);
	struct giong_stream *server, *client;
	char buf[2];
	(void)w;

	for (int i = 0; i < 2; i++) {
		struct giong_tls_config *cfg = i ? cli : srv;

		gt_check_int_equal(giong_tls_config_versions(cfg, GIONG_TLS_1_3, GIONG_TLS_1_3), 0);
		gt_check_int_equal(giong_tls_config_ciphers(cfg, NULL, ccm), 0);
		gt_check_int_equal(giong_tls_config_ktls(cfg, true), 0);
	}
	giong_tls_ktls_stats(&c->before);
	if (gt_check_int_equal(tls_tcp_pair(srv, cli, &server, &client), 0)) {
		gt_check_int_equal(giong_stream_write_all(server, "hi", 2), 2);
		c->ok = read_n(client, buf, 2) == 2 && !memcmp(buf, "hi", 2);
		gt_check_int_equal(giong_stream_write_all(client, "yo", 2), 2);
		c->ok = c->ok && read_n(server, buf, 2) == 2 && !memcmp(buf, "yo", 2);
		giong_stream_close(server);
		giong_stream_close(client);
	}
	giong_tls_ktls_stats(&c->after);
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
}

static void test_cipher_fallback(void **state)
{
	struct giong_config cfg = gt_config(1);
	struct cf c = {0};

	(void)state;
	gt_run(&cfg, cipher_main, &c, NULL);
	assert_true(c.ok); /* in user space, both ways */
	assert_int_equal(c.after.tx, c.before.tx);
	if (giong_ktls_probe() == 0) /* the kernel has TLS: the suite is why not */
		assert_int_equal(c.after.fallback_cipher - c.before.fallback_cipher, 2);
	else
		assert_int_equal(c.after.fallback_module - c.before.fallback_module, 2);
}

/* The switch: NULL refused, and like every setting it is frozen by the first use. */
static void test_switch(void **state)
{
	struct giong_tls_config *cfg = tt_server("server", NULL);
	struct giong_tls_ktls_stats st;

	(void)state;
	assert_int_equal(giong_tls_config_ktls(NULL, true), -EINVAL);
	assert_int_equal(giong_tls_ktls_stats(NULL), -EINVAL);
	assert_int_equal(giong_tls_ktls_stats(&st), 0);
	assert_int_equal(giong_tls_config_ktls(cfg, false), 0);
	assert_int_equal(giong_tls_config_ktls(cfg, true), 0);
	assert_int_equal(giong_tls_config_check(cfg, NULL, 0), 0);
	assert_int_equal(giong_tls_config_ktls(cfg, false), -EBUSY);
	giong_tls_config_free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_switch),          cmocka_unit_test(test_tls13),
		cmocka_unit_test(test_tls12),           cmocka_unit_test(test_off),
		cmocka_unit_test(test_cipher_fallback), cmocka_unit_test(test_peer13),
		cmocka_unit_test(test_peer12),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
