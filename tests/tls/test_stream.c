/* SPDX-License-Identifier: MIT */
/*
 * test_stream.c - the TLS stream between two giong endpoints of one backend
 * over a Unix socket pair: handshakes (versions, RSA and ECDSA, ALPN, SNI,
 * client certificates; what the stream's query answers), certificate
 * checks that must refuse, bulk data byte-exact both ways, close_notify and
 * truncation, cancel safety of recv and write, two writers, idle parking,
 * send_start.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <pthread.h>
#include <string.h>

#include "tls_test.h"

static const char *const http11[] = {"http/1.1", NULL};

/* --- the handshake -------------------------------------------------------------------------- */

struct hs_case {
	const char *cert;           /* the server's */
	const char *second;         /* a second server certificate, for SNI */
	const char *name;           /* what the client connects to */
	enum giong_tls_version max; /* the client's highest version */
	int want;                   /* the client's result */
	const char *version;        /* expected on success */
	const char *const *srv_alpn, *const *cli_alpn;
	const char *want_alpn;
};

/* The stream's query (what libgiong-http asks, knowing nothing of TLS):
 * TLS answers the protocol it agreed, or none; its bytes reach no
 * descriptor unchanged, though those of the socket beneath do; the socket
 * question goes down to it. */
/* The ALPN question asked from a plain thread: refused, as every operation off the owner. */
static void *alpn_off_owner(void *arg)
{
	const char *p = NULL;
	size_t len = 0;

	return (void *)(intptr_t)giong_stream_alpn(arg, &p, &len);
}

static void check_query(struct giong_stream *t, const char *want_alpn)
{
	pthread_t th;
	void *off = NULL;

	const char *p = NULL;
	size_t len = 0;
	int r = giong_stream_alpn(t, &p, &len);

	if (want_alpn) {
		gt_check_int_equal(r, 0);
		gt_check_int_equal(len, strlen(want_alpn));
		if (p && len == strlen(want_alpn))
			gt_check_memory_equal(p, want_alpn, len);
	} else {
		gt_check_int_equal(r, -ENOENT);
		gt_check_null(p); /* untouched */
	}
	gt_check_int_equal(giong_stream_splice_fd(t), -ENOENT);
	gt_check_true(giong_stream_splice_fd(t->lower) >= 0);
	gt_check_int_equal(giong_stream_splice_fd(t->lower), giong_stream_fd(t));
	gt_check_int_equal(giong_stream_alpn(t->lower, &p, &len), -ENOENT);
	if (gt_check_int_equal(pthread_create(&th, NULL, alpn_off_owner, t), 0)) {
		pthread_join(th, &off);
		gt_check_int_equal((int)(intptr_t)off, GIONG_ENOTWORKER);
	}
}

static void hs_main(unsigned worker, void *arg)
{
	struct hs_case *c = arg;
	struct giong_tls_config *srv = tt_server(c->cert, c->srv_alpn);
	struct giong_tls_config *cli = tt_client(c->cli_alpn);
	struct giong_stream *s, *k;
	int serr = 0, r;

	(void)worker;
	if (c->second)
		gt_check_int_equal(
			giong_tls_config_add_cert_file(srv, tt_path("sni.pem"), tt_path("sni.key")),
			0);
	if (c->max)
		gt_check_int_equal(giong_tls_config_versions(cli, GIONG_TLS_1_2, c->max), 0);
	r = tt_pair(srv, cli, c->name, &s, &k, &serr);
	gt_check_int_equal(r, c->want);
	if (r == 0) {
		size_t len;
		const char *p;

		gt_check_string_equal(giong_tls_version(k), c->version);
		gt_check_string_equal(giong_tls_version(s), c->version);
		gt_check_non_null(giong_tls_cipher(k));
		gt_check_string_equal(giong_stream_kind(k), "tls");
		gt_check_true(giong_tls_is_tls(k));
		gt_check_string_equal(giong_tls_backend_name(k), tt_backend()->name);
		gt_check_true(giong_stream_fd(k) >= 0); /* asked down the stack */
		p = giong_tls_alpn(k, &len);
		if (c->want_alpn) {
			gt_check_non_null(p);
			gt_check_int_equal(len, strlen(c->want_alpn));
			if (p)
				gt_check_memory_equal(p, c->want_alpn, len);
			p = giong_tls_alpn(s, &len);
			gt_check_true(p && len == strlen(c->want_alpn));
		} else {
			gt_check_null(p);
			gt_check_int_equal(len, 0);
		}
		check_query(k, c->want_alpn);
		check_query(s, c->want_alpn);
		gt_check_int_equal(giong_tls_resumed(k), 0);
	} else {
		gt_check_true(*giong_tls_last_error(NULL) != '\0'); /* the backend's words */
	}
	if (s)
		giong_stream_close(s);
	if (k)
		giong_stream_close(k);
	giong_tls_config_free(srv); /* the streams hold references until closed */
	giong_tls_config_free(cli);
}

static void run_hs(struct hs_case *c)
{
	struct giong_config cfg = gt_config(1);
	int fds = gt_count_fds();

	gt_run(&cfg, hs_main, c, NULL);
	gt_assert_fds(fds);
}

static void test_tls13_ecdsa(void **state)
{
	struct hs_case c = {.cert = "server", .name = "localhost", .version = "TLSv1.3"};

	(void)state;
	run_hs(&c);
}

static void test_tls12(void **state)
{
	struct hs_case c = {
		.cert = "server", .name = "localhost", .max = GIONG_TLS_1_2, .version = "TLSv1.2"};

	(void)state;
	run_hs(&c);
}

static void test_rsa(void **state)
{
	struct hs_case c = {.cert = "server-rsa", .name = "localhost", .version = "TLSv1.3"};
	struct hs_case c12 = {.cert = "server-rsa",
			      .name = "localhost",
			      .max = GIONG_TLS_1_2,
			      .version = "TLSv1.2"};

	(void)state;
	run_hs(&c);
	run_hs(&c12);
}

static void test_ip_address(void **state)
{
	/* A numeric name: no SNI, but the certificate must list the address. */
	struct hs_case c = {.cert = "server", .name = "127.0.0.1", .version = "TLSv1.3"};

	(void)state;
	run_hs(&c);
}

static void test_alpn(void **state)
{
	static const char *const srv[] = {"h2", "http/1.1", NULL};
	static const char *const cli[] = {"http/1.1", "h2", NULL};
	static const char *const h2only[] = {"h2", NULL};
	/* The server's preference wins. */
	struct hs_case both = {.cert = "server",
			       .name = "localhost",
			       .version = "TLSv1.3",
			       .srv_alpn = srv,
			       .cli_alpn = cli,
			       .want_alpn = "h2"};
	struct hs_case one = {.cert = "server",
			      .name = "localhost",
			      .version = "TLSv1.3",
			      .srv_alpn = srv,
			      .cli_alpn = http11,
			      .want_alpn = "http/1.1"};
	/* A client that offers nothing gets nothing, and no failure. */
	struct hs_case none = {
		.cert = "server", .name = "localhost", .version = "TLSv1.3", .srv_alpn = srv};
	struct hs_case mismatch = {.cert = "server",
				   .name = "localhost",
				   .srv_alpn = h2only,
				   .cli_alpn = http11,
				   .want = 1 /* any failure, checked below */};

	(void)state;
	run_hs(&both);
	run_hs(&one);
	run_hs(&none);
	mismatch.want = GIONG_ETLS_ALERT; /* the server says no_application_protocol */
	run_hs(&mismatch);
}

static void test_sni(void **state)
{
	struct hs_case other = {
		.cert = "server", .second = "sni", .name = "other.test", .version = "TLSv1.3"};
	struct hs_case wild = {
		.cert = "server", .second = "sni", .name = "x.wild.test", .version = "TLSv1.3"};
	struct hs_case dflt = {
		.cert = "server", .second = "sni", .name = "localhost", .version = "TLSv1.3"};
	/* Without the second certificate, other.test gets the default one,
	 * which the client refuses: SNI did the choosing above. */
	struct hs_case missing = {.cert = "server", .name = "other.test", .want = GIONG_ETLS_CERT};

	(void)state;
	run_hs(&other);
	run_hs(&wild);
	run_hs(&dflt);
	run_hs(&missing);
}

static void test_refused_certs(void **state)
{
	struct hs_case wrong = {.cert = "server", .name = "wrong.test", .want = GIONG_ETLS_CERT};
	struct hs_case expired = {.cert = "expired", .name = "localhost", .want = GIONG_ETLS_CERT};
	struct hs_case untrusted = {
		.cert = "untrusted", .name = "localhost", .want = GIONG_ETLS_CERT};

	(void)state;
	run_hs(&wrong);
	run_hs(&expired);
	run_hs(&untrusted);
}

/* --- client certificates -------------------------------------------------------------------- */

struct cc_case {
	enum giong_tls_verify mode;
	bool send_cert;
	bool want_ok;
};

static void cc_main(unsigned worker, void *arg)
{
	struct cc_case *c = arg;
	struct giong_tls_config *srv = tt_server("server", NULL);
	struct giong_tls_config *cli = tt_client(NULL);
	struct giong_stream *s, *k;
	unsigned char buf[8];
	int serr = 0, r;

	(void)worker;
	gt_check_int_equal(giong_tls_config_verify(srv, c->mode), 0);
	gt_check_int_equal(giong_tls_config_ca_file(srv, tt_path("ca.pem")), 0);
	if (c->send_cert)
		gt_check_int_equal(giong_tls_config_add_cert_file(cli, tt_path("client.pem"),
								  tt_path("client.key")),
				   0);
	r = tt_pair(srv, cli, "localhost", &s, &k, &serr);
	if (c->want_ok) {
		gt_check_int_equal(r, 0);
		gt_check_int_equal(serr, 0);
	} else if (r == 0) {
		/* TLS 1.3: the client's handshake ends before the server judged
		 * its certificate; the refusal arrives as an alert on its read. */
		gt_check_true(serr < 0);
		r = (int)giong_stream_read(k, buf, sizeof(buf));
		gt_check_true(r < 0);
	} else {
		gt_check_true(serr < 0);
	}
	if (s)
		giong_stream_close(s);
	if (k)
		giong_stream_close(k);
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
}

static void test_client_cert(void **state)
{
	struct cc_case cases[] = {
		{GIONG_TLS_VERIFY_REQUIRE, true, true},
		{GIONG_TLS_VERIFY_REQUIRE, false, false},
		{GIONG_TLS_VERIFY_PEER, false, true},
		{GIONG_TLS_VERIFY_PEER, true, true},
	};
	struct giong_config cfg = gt_config(1);

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		gt_run(&cfg, cc_main, &cases[i], NULL);
}

/* --- data --------------------------------------------------------------------------------- */

#define BULK (4u << 20)

struct pump {
	struct giong_stream *s;
	size_t len;
	size_t done;
	int err;
	bool use_recv;   /* recv (heap buffers) rather than read */
	unsigned tmo_ms; /* a deadline around each call (cancel safety) */
	unsigned timeouts;
	bool pauses; /* writer: stop for 3 ms now and then, so that deadlines expire */
};

static intptr_t writer_task(void *arg)
{
	struct pump *p = arg;
	unsigned char *buf = malloc(70000);
	size_t chunk = 1;

	while (p->done < p->len) {
		size_t n = p->len - p->done < chunk ? p->len - p->done : chunk;
		ssize_t r;

		tt_pattern(buf, n, p->done);
		r = giong_stream_write_all(p->s, buf, n);
		if (r != (ssize_t)n) {
			p->err = (int)r;
			/* A broken TLS stream tells its peer nothing: end the
			 * socket, or the reader there waits for ever. */
			shutdown(giong_stream_fd(p->s), SHUT_RDWR);
			break;
		}
		p->done += n;
		if (p->pauses && n % 5 == 0)
			giong_sleep_ms(3);
		chunk = chunk * 3 + 7; /* 1, 10, 37, ... up to 70000: odd sizes */
		if (chunk > 70000)
			chunk = 1 + p->done % 1000;
	}
	free(buf);
	return 0;
}

static intptr_t reader_task(void *arg)
{
	struct pump *p = arg;
	unsigned char *buf = malloc(20000);

	while (p->done < p->len) {
		uint64_t saved = p->tmo_ms ? giong_deadline_in(p->tmo_ms) : GIONG_NO_DEADLINE;
		struct giong_recvbuf *b = NULL;
		const unsigned char *data = buf;
		ssize_t r;

		if (p->use_recv) {
			r = giong_stream_recv(p->s, &b);
			data = giong_recvbuf_data(b);
		} else {
			r = giong_stream_read(p->s, buf, 1 + p->done % 20000);
		}
		if (p->tmo_ms)
			giong_deadline_restore(saved);
		if (r == -ETIMEDOUT && p->tmo_ms) {
			p->timeouts++;
			continue;
		}
		if (r <= 0) {
			p->err = r ? (int)r : -ENODATA;
			shutdown(giong_stream_fd(p->s), SHUT_RDWR); /* its writer ends too */
			break;
		}
		if (!tt_pattern_ok(data, (size_t)r, p->done)) {
			p->err = -EBADMSG;
			giong_recvbuf_release(b);
			break;
		}
		p->done += (size_t)r;
		giong_recvbuf_release(b);
	}
	free(buf);
	return 0;
}

struct bulk_case {
	bool use_recv;
	unsigned tmo_ms;
	enum giong_tls_version max;
};

static void bulk_main(unsigned worker, void *arg)
{
	struct bulk_case *c = arg;
	struct giong_tls_config *srv = tt_server("server", NULL);
	struct giong_tls_config *cli = tt_client(NULL);
	struct giong_stream *s, *k;
	struct giong_task *t[4];
	struct pump p[4];
	unsigned char one;

	(void)worker;
	if (c->max)
		gt_check_int_equal(giong_tls_config_versions(cli, GIONG_TLS_1_2, c->max), 0);
	if (!gt_check_int_equal(tt_pair(srv, cli, "localhost", &s, &k, NULL), 0))
		goto out;
	/* Both directions at once: server->client and client->server. */
	p[0] = (struct pump){.s = s, .len = BULK, .pauses = c->tmo_ms != 0};
	p[1] = (struct pump){.s = k, .len = BULK, .use_recv = c->use_recv, .tmo_ms = c->tmo_ms};
	p[2] = (struct pump){.s = k, .len = BULK, .pauses = c->tmo_ms != 0};
	p[3] = (struct pump){.s = s, .len = BULK, .use_recv = c->use_recv, .tmo_ms = c->tmo_ms};
	for (int i = 0; i < 4; i++) {
		if (giong_spawn(i % 2 ? reader_task : writer_task, &p[i], &t[i])) {
			/* Not started: the pumps started end on the socket's end. */
			t[i] = NULL;
			p[i].err = -ENOMEM;
			shutdown(giong_stream_fd(s), SHUT_RDWR);
		}
	}
	for (int i = 0; i < 4; i++) {
		if (t[i])
			giong_join(t[i], NULL);
		gt_check_int_equal(p[i].err, 0);
		gt_check_int_equal(p[i].done, BULK);
	}
	/* close_notify: the client's shutdown is the server's clean end. */
	gt_check_int_equal(giong_stream_shutdown(k, SHUT_WR), 0);
	gt_check_int_equal(giong_stream_read(s, &one, 1), 0);
	gt_check_int_equal(giong_stream_read(s, &one, 1), 0); /* and it stays ended */
	gt_check_int_equal(giong_stream_write(k, "x", 1), -EPIPE);
	/* The server may still answer after the client's half close. */
	gt_check_int_equal(giong_stream_write_all(s, "bye", 3), 3);
	gt_check_int_equal(giong_stream_shutdown(s, SHUT_WR), 0);
	{
		char got[4] = {0};

		gt_check_int_equal(giong_stream_read(k, got, sizeof(got)), 3);
		gt_check_memory_equal(got, "bye", 3);
		gt_check_int_equal(giong_stream_read(k, got, sizeof(got)), 0);
	}
	if (c->tmo_ms)
		gt_check_true(p[1].timeouts + p[3].timeouts > 0); /* the deadlines did cut in */
	giong_stream_close(s);
	giong_stream_close(k);
out:
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
}

static void test_bulk_read(void **state)
{
	struct bulk_case c = {0};
	struct giong_config cfg = gt_config(1);
	int fds = gt_count_fds();

	(void)state;
	gt_run(&cfg, bulk_main, &c, NULL);
	gt_assert_fds(fds);
}

static void test_bulk_recv_tls12(void **state)
{
	struct bulk_case c = {.use_recv = true, .max = GIONG_TLS_1_2};
	struct giong_config cfg = gt_config(1);

	(void)state;
	gt_run(&cfg, bulk_main, &c, NULL);
}

static void test_recv_cancelled_over_and_over(void **state)
{
	/* Every receive under a 1 ms deadline while 4 MB flow each way: each
	 * timeout must take nothing, so the pattern stays whole. */
	struct bulk_case c = {.use_recv = true, .tmo_ms = 1};
	struct bulk_case r = {.use_recv = false, .tmo_ms = 1};
	struct giong_config cfg = gt_config(1);

	(void)state;
	gt_run(&cfg, bulk_main, &c, NULL);
	gt_run(&cfg, bulk_main, &r, NULL);
}

/* --- two writers ---------------------------------------------------------------------------- */

#define TAG_CHUNKS 400

struct tagged {
	struct giong_stream *s;
	unsigned char id;
	int err;
};

/* Chunks of [id, seq (2 bytes), len (2 bytes), len bytes of id ^ seq]. */
static intptr_t tagged_writer(void *arg)
{
	struct tagged *w = arg;
	unsigned char buf[5 + 9000];

	for (unsigned seq = 0; seq < TAG_CHUNKS; seq++) {
		size_t len = 1 + (seq * 7919u + w->id * 104729u) % 9000;

		buf[0] = w->id;
		buf[1] = (unsigned char)(seq >> 8);
		buf[2] = (unsigned char)seq;
		buf[3] = (unsigned char)(len >> 8);
		buf[4] = (unsigned char)len;
		memset(buf + 5, w->id ^ (unsigned char)seq, len);
		if (giong_stream_write_all(w->s, buf, 5 + len) != (ssize_t)(5 + len)) {
			w->err = -EIO;
			/* A broken TLS stream tells its peer nothing: end the
			 * socket, or the reader there waits for ever. */
			shutdown(giong_stream_fd(w->s), SHUT_RDWR);
			break;
		}
		if (seq % 16 == 0)
			giong_yield(); /* let the other writer in between */
	}
	return 0;
}

static int read_exact(struct giong_stream *s, void *buf, size_t len)
{
	for (size_t got = 0; got < len;) {
		ssize_t r = giong_stream_read(s, (char *)buf + got, len - got);

		if (r <= 0)
			return r ? (int)r : -ENODATA;
		got += (size_t)r;
	}
	return 0;
}

static void writers_main(unsigned worker, void *arg)
{
	struct giong_tls_config *srv = tt_server("server", NULL);
	struct giong_tls_config *cli = tt_client(NULL);
	struct giong_stream *s, *k;
	struct tagged w[2];
	struct giong_task *t[2];
	unsigned next[2] = {0, 0}, n;
	unsigned char hdr[5], body[9000];

	(void)worker;
	(void)arg;
	if (!gt_check_int_equal(tt_pair(srv, cli, "localhost", &s, &k, NULL), 0))
		goto out;
	for (int i = 0; i < 2; i++) {
		w[i] = (struct tagged){.s = k, .id = (unsigned char)(i + 1)};
		if (!gt_check_int_equal(giong_spawn(tagged_writer, &w[i], &t[i]), 0)) {
			t[i] = NULL; /* the reader gets the end of the socket */
			shutdown(giong_stream_fd(k), SHUT_RDWR);
		}
	}
	for (n = 0; n < 2 * TAG_CHUNKS; n++) {
		unsigned id, seq, len;

		if (!gt_check_int_equal(read_exact(s, hdr, 5), 0))
			break;
		id = hdr[0];
		seq = (unsigned)hdr[1] << 8 | hdr[2];
		len = (unsigned)hdr[3] << 8 | hdr[4];
		if (!gt_check_true((id == 1 || id == 2) && len >= 1 && len <= 9000))
			break;
		gt_check_int_equal(seq, next[id - 1]);
		next[id - 1] = seq + 1;
		if (!gt_check_int_equal(read_exact(s, body, len), 0))
			break;
		for (unsigned i = 0; i < len; i++)
			if (body[i] != (unsigned char)(id ^ seq)) {
				gt_check_fail_msg("writer %u chunk %u corrupt at %u", id, seq, i);
				break;
			}
	}
	/* A reader that stopped early: the writers blocked on a full socket end. */
	if (n < 2 * TAG_CHUNKS)
		shutdown(giong_stream_fd(s), SHUT_RDWR);
	for (int i = 0; i < 2; i++) {
		if (t[i])
			giong_join(t[i], NULL);
		gt_check_int_equal(w[i].err, 0);
	}
	giong_stream_close(s);
	giong_stream_close(k);
out:
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
}

static void test_two_writers(void **state)
{
	struct giong_config cfg = gt_config(1);

	(void)state;
	gt_run(&cfg, writers_main, NULL, NULL);
}

/* --- a write cut short, truncation --------------------------------------------------------- */

static void cut_write_main(unsigned worker, void *arg)
{
	struct giong_tls_config *srv = tt_server("server", NULL);
	struct giong_tls_config *cli = tt_client(NULL);
	struct giong_stream *s, *k;
	unsigned char *big = calloc(1, 16u << 20), buf[4096];
	uint64_t saved;
	ssize_t r;

	(void)worker;
	(void)arg;
	if (!gt_check_int_equal(tt_pair(srv, cli, "localhost", &s, &k, NULL), 0))
		goto out;
	/* Nobody reads: the socket buffers fill, the deadline cuts the write. */
	saved = giong_deadline_in(100);
	r = giong_stream_write_all(k, big, 16u << 20);
	giong_deadline_restore(saved);
	gt_check_int_equal(r, -ETIMEDOUT);
	/* The stream is broken now, not half usable. */
	gt_check_int_equal(giong_stream_write(k, "x", 1), -EPIPE);
	giong_stream_close(k); /* no close_notify on a broken stream */
	/* The peer reads what did arrive, then an error: never a clean end. */
	do {
		r = giong_stream_read(s, buf, sizeof(buf));
	} while (r > 0);
	gt_check_true(r < 0);
	giong_stream_close(s);
out:
	free(big);
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
}

static void test_write_cut_short(void **state)
{
	struct giong_config cfg = gt_config(1);

	(void)state;
	gt_run(&cfg, cut_write_main, NULL, NULL);
}

static void truncated_main(unsigned worker, void *arg)
{
	struct giong_tls_config *srv = tt_server("server", NULL);
	struct giong_tls_config *cli = tt_client(NULL);
	struct giong_stream *s, *k;
	char buf[16];

	(void)worker;
	(void)arg;
	if (!gt_check_int_equal(tt_pair(srv, cli, "localhost", &s, &k, NULL), 0))
		goto out;
	gt_check_int_equal(giong_stream_write_all(s, "hello", 5), 5);
	/* The end of the socket beneath, with no close_notify (what an attacker
	 * cutting the connection does). Test only: the lower is s's. */
	gt_check_int_equal(giong_stream_shutdown(s->lower, SHUT_WR), 0);
	gt_check_int_equal(giong_stream_read(k, buf, sizeof(buf)), 5);
	gt_check_int_equal(giong_stream_read(k, buf, sizeof(buf)), GIONG_ETLS_TRUNCATED);
	giong_stream_close(s);
	giong_stream_close(k);
out:
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
}

static void test_truncation(void **state)
{
	struct giong_config cfg = gt_config(1);

	(void)state;
	gt_run(&cfg, truncated_main, NULL, NULL);
}

/* --- hostile handshakes ------------------------------------------------------------------- */

enum hostile { GARBAGE, CUT_SHORT, STALL };

static void hostile_main(unsigned worker, void *arg)
{
	enum hostile how = (enum hostile)(intptr_t)arg;
	struct giong_tls_config *srv = tt_server("server", NULL);
	struct giong_stream *a, *b, *s = NULL;
	unsigned char junk[600];
	uint64_t t0;
	int r;

	(void)worker;
	gt_check_int_equal(giong_tls_config_handshake_timeout(srv, 300), 0);
	if (!gt_check_int_equal(giong_unix_pair(&a, &b), 0))
		goto out;
	switch (how) {
	case GARBAGE:
		tt_pattern(junk, sizeof(junk), 1);
		giong_stream_write_all(b, junk, sizeof(junk));
		break;
	case CUT_SHORT:
		/* A record header that promises 512 bytes of ClientHello, then 10. */
		memcpy(junk, "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03", 10);
		giong_stream_write_all(b, junk, 10);
		giong_stream_shutdown(b, SHUT_WR);
		break;
	case STALL:
		break;
	}
	t0 = giong_now_ms();
	r = giong_tls_accept(a, srv, &s);
	gt_check_null(s);
	switch (how) {
	case GARBAGE:
		gt_check_true(r == GIONG_ETLS || r == GIONG_ETLS_HANDSHAKE);
		break;
	case CUT_SHORT:
		gt_check_true(r == GIONG_ETLS_TRUNCATED || r == -ECONNRESET);
		break;
	case STALL:
		gt_check_int_equal(r, -ETIMEDOUT);
		gt_check_true(giong_now_ms() - t0 >= 250);
		break;
	}
	gt_check_true(giong_now_ms() - t0 < 5000); /* never a hang */
	/* The lower stream is the caller's again, and still works. */
	gt_check_int_equal(giong_stream_write(a, "x", 1), 1);
	giong_stream_close(a);
	giong_stream_close(b);
out:
	giong_tls_config_free(srv);
}

static void test_hostile_handshakes(void **state)
{
	struct giong_config cfg = gt_config(1);
	int fds = gt_count_fds();

	(void)state;
	gt_run(&cfg, hostile_main, (void *)(intptr_t)GARBAGE, NULL);
	gt_run(&cfg, hostile_main, (void *)(intptr_t)CUT_SHORT, NULL);
	gt_run(&cfg, hostile_main, (void *)(intptr_t)STALL, NULL);
	gt_assert_fds(fds);
}

/* --- idle parking and send_start ----------------------------------------------------------- */

struct park {
	int calls;
	struct giong_waitq q;
};

static void on_readable(struct giong_stream *s, void *ctx)
{
	struct park *p = ctx;

	(void)s;
	p->calls++;
	giong_waitq_wake_all(&p->q, 0);
}

static void park_main(unsigned worker, void *arg)
{
	struct giong_tls_config *srv = tt_server("server", NULL);
	struct giong_tls_config *cli = tt_client(NULL);
	struct giong_stream *s, *k;
	struct park p = {0};
	struct tt_sent snd = {.req.done = tt_sent_done};
	struct iovec iov[3] = {{"GET ", 4}, {"/ HTTP/1.1\r\n", 12}, {"\r\n", 2}};
	/* Every wait bounded: a write that failed (GIONG_FAULTS) leaves its
	 * reader nothing to wait for. */
	uint64_t outer = giong_deadline_in(20000);
	char buf[64];

	(void)worker;
	(void)arg;
	if (!gt_check_int_equal(tt_pair(srv, cli, "localhost", &s, &k, NULL), 0))
		goto out;
	/* Parked with nothing held: no call until the peer writes. */
	gt_check_int_equal(giong_stream_on_readable(s, on_readable, &p), 0);
	giong_sleep_ms(20);
	gt_check_int_equal(p.calls, 0);
	/* Two records in one go: the first call is for the arrival... */
	gt_check_int_equal(giong_stream_write_all(k, "one", 3), 3);
	gt_check_int_equal(giong_stream_write_all(k, "two", 3), 3);
	if (p.calls == 0) { /* the arrival's callback wakes us (2 s at most) */
		uint64_t saved = giong_deadline_in(2000);

		giong_waitq_wait(&p.q, 0);
		giong_deadline_restore(saved);
	}
	gt_check_true(p.calls >= 1);
	gt_check_int_equal(giong_stream_read(s, buf, sizeof(buf)), 3);
	/* ...and parking again with the second record held calls at once. */
	p.calls = 0;
	gt_check_int_equal(giong_stream_on_readable(s, on_readable, &p), 0);
	giong_waitq_wait(&p.q, 0);
	gt_check_int_equal(p.calls, 1);
	gt_check_int_equal(giong_stream_read(s, buf, sizeof(buf)), 3);
	gt_check_memory_equal(buf, "two", 3);
	gt_check_int_equal(giong_stream_on_readable(s, NULL, NULL), 0);

	/* send_start: encrypted now, sent without a task waiting. */
	snd.done = !gt_check_int_equal(giong_stream_send_start(s, &snd.req, iov, 3), 0);
	gt_check_int_equal(giong_stream_send_start(s, &snd.req, iov, 3), -EBUSY);
	gt_check_int_equal(read_exact(k, buf, 18), 0);
	gt_check_memory_equal(buf, "GET / HTTP/1.1\r\n\r\n", 18);
	while (!snd.done)
		giong_sleep_ms(1);
	gt_check_int_equal(snd.res, 18);
	/* A task's write after it is in order. */
	gt_check_int_equal(giong_stream_write_all(s, "after", 5), 5);
	gt_check_int_equal(read_exact(k, buf, 5), 0);
	gt_check_memory_equal(buf, "after", 5);
	giong_stream_close(s);
	giong_stream_close(k);
out:
	giong_deadline_restore(outer);
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
}

static void test_park_and_send_start(void **state)
{
	struct giong_config cfg = gt_config(1);

	(void)state;
	gt_run(&cfg, park_main, NULL, NULL);
}

/* --- close with operations in flight --------------------------------------------------------- */

static intptr_t blocked_reader(void *arg)
{
	char buf[8];

	return giong_stream_read(arg, buf, sizeof(buf));
}

static void close_main(unsigned worker, void *arg)
{
	struct giong_tls_config *srv = tt_server("server", NULL);
	struct giong_tls_config *cli = tt_client(NULL);
	struct giong_stream *s, *k;
	struct giong_task *t;
	struct tt_sent snd = {.req.done = tt_sent_done};
	struct iovec iov = {"late", 4};
	intptr_t res = 0;

	(void)worker;
	(void)arg;
	if (!gt_check_int_equal(tt_pair(srv, cli, "localhost", &s, &k, NULL), 0))
		goto out;
	/* A task parked in the TLS read when the stream is closed. */
	if (!gt_check_int_equal(giong_spawn(blocked_reader, s, &t), 0))
		t = NULL;
	giong_yield();
	snd.done = !gt_check_int_equal(giong_stream_send_start(s, &snd.req, &iov, 1), 0);
	gt_check_int_equal(giong_stream_close(s), 0);
	if (t) {
		giong_join(t, &res);
		gt_check_true(res == -ECANCELED || res == -EBADF);
	}
	while (!snd.done)
		giong_sleep_ms(1);
	gt_check_true(snd.res == 4 || snd.res == -ECANCELED);
	giong_stream_close(k);
out:
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
}

static void test_close_in_flight(void **state)
{
	struct giong_config cfg = gt_config(1);
	int fds = gt_count_fds();

	(void)state;
	gt_run(&cfg, close_main, NULL, NULL);
	gt_assert_fds(fds);
}

/* --- two readers, and a lower stream kept after close ------------------------------------------- */

#define READERS_BYTES (300u * 1000)

struct counted {
	struct giong_stream *s;
	size_t *total;
	int err;
};

static intptr_t counting_reader(void *arg)
{
	struct counted *c = arg;
	char buf[700];

	while (*c->total < READERS_BYTES) {
		ssize_t r = giong_stream_read(c->s, buf, sizeof(buf));

		if (r <= 0) {
			c->err = r ? (int)r : -ENODATA;
			break;
		}
		*c->total += (size_t)r;
		giong_sleep_ms(1); /* the other reader waits in the stream meanwhile */
	}
	return 0;
}

static void readers_main(unsigned worker, void *arg)
{
	struct giong_tls_config *srv = tt_server("server", NULL);
	struct giong_tls_config *cli = tt_client(NULL);
	struct giong_stream *s, *k;
	struct giong_task *t[2];
	struct counted c[2];
	struct giong_stats st;
	size_t total = 0;
	char chunk[1000];

	(void)worker;
	(void)arg;
	memset(chunk, 'r', sizeof(chunk));
	if (!gt_check_int_equal(tt_pair(srv, cli, "localhost", &s, &k, NULL), 0))
		goto out;
	/* Two tasks read one stream at once: they take turns in the library,
	 * and no pool buffer is lost or bytes dropped between them. */
	for (int i = 0; i < 2; i++) {
		c[i] = (struct counted){.s = s, .total = &total};
		if (!gt_check_int_equal(giong_spawn(counting_reader, &c[i], &t[i]), 0))
			t[i] = NULL;
	}
	for (unsigned i = 0; i < READERS_BYTES / sizeof(chunk); i++) {
		if (!gt_check_int_equal(giong_stream_write_all(k, chunk, sizeof(chunk)),
					sizeof(chunk)))
			break; /* a broken writer: the readers get the end below */
		if (i % 8 == 0)
			giong_sleep_ms(1); /* records arrive a few per receive */
	}
	/* The one still reading ends. A TLS stream that broke (a failed
	 * allocation or TLS step under GIONG_FAULTS) sends no close_notify and
	 * tells its peer nothing: the socket beneath is shut then, or the
	 * readers would wait for ever. */
	if (!gt_check_int_equal(giong_stream_shutdown(k, SHUT_WR), 0))
		shutdown(giong_stream_fd(k), SHUT_WR);
	for (int i = 0; i < 2; i++) {
		if (t[i])
			giong_join(t[i], NULL);
		gt_check_true(c[i].err == 0 || c[i].err == -ENODATA);
	}
	gt_check_int_equal(total, READERS_BYTES);
	giong_stream_close(s);
	giong_stream_close(k);
	giong_sleep_ms(10);
	gt_check_int_equal(giong_stats(&st), 0);
	gt_check_int_equal(st.recvbufs_free, st.recvbufs_total);
out:
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
}

static void test_two_readers(void **state)
{
	struct giong_config cfg = gt_config(1);

	(void)state;
	gt_run(&cfg, readers_main, NULL, NULL);
}

static void never_called(struct giong_stream *s, void *ctx)
{
	(void)s;
	*(int *)ctx += 1;
}

static void keep_lower_main(unsigned worker, void *arg)
{
	struct giong_tls_config *srv = tt_server("server", NULL);
	struct giong_tls_config *cli = tt_client(NULL);
	struct giong_stream *s, *k, *lower = NULL;
	int calls = 0;
	char buf[256];

	(void)worker;
	(void)arg;
	if (!gt_check_int_equal(tt_pair(srv, cli, "localhost", &s, &k, NULL), 0))
		goto out;
	/* Parked: the TLS stream watches its lower stream... */
	gt_check_int_equal(giong_stream_on_readable(s, never_called, &calls), 0);
	gt_check_int_equal(giong_stream_keep_lower(s, &lower), 0);
	/* ...and closing it with the lower kept stops that watch. */
	gt_check_int_equal(giong_stream_close(s), 0);
	if (!gt_check_int_equal(giong_stream_write_all(k, "after", 5), 5))
		shutdown(giong_stream_fd(k), SHUT_RDWR); /* broken: the read below ends */
	giong_sleep_ms(20);
	gt_check_int_equal(calls, 0);
	/* The lower stream is the caller's: the record arrives there, as it is. */
	gt_check_true(giong_stream_read(lower, buf, sizeof(buf)) > 5);
	giong_stream_close(lower);
	giong_stream_close(k);
out:
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
}

static void test_keep_lower(void **state)
{
	struct giong_config cfg = gt_config(1);

	(void)state;
	gt_run(&cfg, keep_lower_main, NULL, NULL);
}

/* --- one configuration, two workers at once ---------------------------------------------------- */

struct shared_cfgs {
	struct giong_tls_config *srv, *cli;
	atomic_int ok;
};

static void workers_main(unsigned worker, void *arg)
{
	struct shared_cfgs *c = arg;

	(void)worker;
	/* The first handshakes of both workers race to build the contexts;
	 * then both share them read-only. */
	for (int i = 0; i < 20; i++) {
		struct giong_stream *s, *k;
		char b[4];

		if (!gt_check_int_equal(tt_pair(c->srv, c->cli, "localhost", &s, &k, NULL), 0))
			break;
		if (!gt_check_int_equal(giong_stream_write_all(k, "ping", 4), 4))
			shutdown(giong_stream_fd(k), SHUT_RDWR); /* broken: the read ends */
		gt_check_int_equal(read_exact(s, b, 4), 0);
		giong_stream_close(s);
		giong_stream_close(k);
		atomic_fetch_add(&c->ok, 1);
	}
}

static void test_shared_config_two_workers(void **state)
{
	struct shared_cfgs c = {.srv = tt_server("server", NULL), .cli = tt_client(NULL)};
	struct giong_config cfg = gt_config(2);

	(void)state;
	gt_run(&cfg, workers_main, &c, NULL);
	assert_int_equal(atomic_load(&c.ok), 40);
	assert_int_equal(giong_tls_config_tickets(c.srv, false), -EBUSY); /* frozen */
	giong_tls_config_free(c.srv);
	giong_tls_config_free(c.cli);
}

/* --- session resumption ------------------------------------------------------------------------ */

struct resume_case {
	enum giong_tls_version version;
	bool client_tickets;
	int want_second; /* giong_tls_resumed() of the second connection */
};

static void resume_main(unsigned worker, void *arg)
{
	struct resume_case *c = arg;
	struct giong_tls_config *srv = tt_server("server", NULL);
	struct giong_tls_config *cli = tt_client(NULL);
	int got[3] = {-1, -1, -1};

	(void)worker;
	gt_check_int_equal(giong_tls_config_versions(cli, c->version, c->version), 0);
	gt_check_int_equal(giong_tls_config_tickets(cli, c->client_tickets), 0);
	for (int i = 0; i < 3; i++) {
		struct giong_stream *s, *k;
		char b[4];

		if (!gt_check_int_equal(tt_pair(srv, cli, "localhost", &s, &k, NULL), 0))
			break;
		got[i] = giong_tls_resumed(k);
		gt_check_int_equal(giong_tls_resumed(s), got[i]); /* both sides agree */
		/* Traffic the client reads: a TLS 1.3 ticket comes with it. */
		/* A broken TLS stream (GIONG_FAULTS) tells its peer nothing: the
		 * socket beneath is ended then, or the peer's read waits for ever. */
		if (!gt_check_int_equal(giong_stream_write_all(s, "pong", 4), 4))
			shutdown(giong_stream_fd(s), SHUT_RDWR);
		gt_check_int_equal(read_exact(k, b, 4), 0);
		if (!gt_check_int_equal(giong_stream_shutdown(k, SHUT_WR), 0))
			shutdown(giong_stream_fd(k), SHUT_RDWR);
		gt_check_int_equal(giong_stream_read(s, b, 1), 0);
		giong_stream_close(s);
		giong_stream_close(k);
	}
	gt_check_int_equal(got[0], 0); /* the first is always a full handshake */
	gt_check_int_equal(got[1], c->want_second);
	gt_check_int_equal(got[2], c->want_second);
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
}

static void test_resumption(void **state)
{
	/* wolfSSL's client keeps TLS 1.3 sessions only (its TLS 1.2 fallback
	 * when a ticket is refused is broken: the backend says why). */
	bool wolf = !strcmp(tt_backend()->name, "wolfssl");
	struct resume_case cases[] = {
		{GIONG_TLS_1_3, true, 1},
		{GIONG_TLS_1_2, true, wolf ? 0 : 1},
		{GIONG_TLS_1_3, false, 0},
	};
	struct giong_config cfg = gt_config(1);

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		gt_run(&cfg, resume_main, &cases[i], NULL);
}

/* --- bad arguments ----------------------------------------------------------------------------- */

static void test_bad_arguments(void **state)
{
	struct giong_tls_config *c;
	struct giong_stream *out = (struct giong_stream *)1;
	static const char *const bad[] = {""};
	char err[128];

	(void)state;
	assert_int_equal(giong_tls_config_new(NULL, &c), -EINVAL);
	assert_int_equal(giong_tls_config_new(tt_backend(), NULL), -EINVAL);
	assert_int_equal(giong_tls_config_new(tt_backend(), &c), 0);
	assert_int_equal(giong_tls_config_add_cert_file(c, "/nonexistent.pem", "/x.key"), -ENOENT);
	assert_int_equal(giong_tls_config_add_cert_mem(c, "", 0, "k", 1), -EINVAL);
	assert_int_equal(giong_tls_config_ca_file(c, "/nonexistent"), -ENOENT);
	assert_int_equal(giong_tls_config_ca_dir(c, tt_path("ca.pem")), -ENOTDIR);
	assert_int_equal(giong_tls_config_ca_dir(c, tt_path("ca-dir")), 0);
	assert_int_equal(giong_tls_config_alpn(c, bad, 1), -EINVAL);
	assert_int_equal(giong_tls_config_alpn(c, NULL, 1), -EINVAL);
	assert_int_equal(giong_tls_config_versions(c, GIONG_TLS_1_3, GIONG_TLS_1_2), -EINVAL);
	assert_int_equal(giong_tls_config_versions(c, 0x0301, GIONG_TLS_1_3), -EINVAL);
	assert_int_equal(giong_tls_config_verify(c, 7), -EINVAL);
	assert_int_equal(giong_tls_config_ciphers(c, "", NULL), -EINVAL);
	/* A key that does not match its certificate is a configuration error. */
	assert_int_equal(
		giong_tls_config_add_cert_file(c, tt_path("server.pem"), tt_path("sni.key")), 0);
	assert_int_equal(giong_tls_config_check(c, err, sizeof(err)), GIONG_ETLS_CONFIG);
	assert_true(err[0] != '\0');
	/* Frozen by the check. */
	assert_int_equal(giong_tls_config_tickets(c, false), -EBUSY);
	giong_tls_config_free(c);
	giong_tls_config_free(NULL);

	/* A server needs a certificate; a bad cipher string does not load. */
	assert_int_equal(giong_tls_config_new(tt_backend(), &c), 0);
	assert_int_equal(giong_tls_config_ciphers(c, "NO-SUCH-CIPHER", "TLS_NO_SUCH"), 0);
	assert_int_equal(giong_tls_config_ca_file(c, tt_path("ca.pem")), 0);
	assert_int_equal(giong_tls_config_check(c, err, sizeof(err)), GIONG_ETLS_CONFIG);
	giong_tls_config_free(c);

	assert_int_equal(giong_tls_accept(NULL, NULL, &out), -EINVAL);
	assert_null(out);
	assert_int_equal(giong_tls_accept(NULL, NULL, NULL), -EINVAL);
	assert_null(giong_tls_alpn(NULL, NULL));
	assert_null(giong_tls_version(NULL));
	assert_int_equal(giong_tls_resumed(NULL), -EINVAL);
	assert_false(giong_tls_is_tls(NULL));
	assert_string_equal(giong_err_name(GIONG_ETLS_CERT), "GIONG_ETLS_CERT");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_tls13_ecdsa),
		cmocka_unit_test(test_tls12),
		cmocka_unit_test(test_rsa),
		cmocka_unit_test(test_ip_address),
		cmocka_unit_test(test_alpn),
		cmocka_unit_test(test_sni),
		cmocka_unit_test(test_refused_certs),
		cmocka_unit_test(test_client_cert),
		cmocka_unit_test(test_bulk_read),
		cmocka_unit_test(test_bulk_recv_tls12),
		cmocka_unit_test(test_recv_cancelled_over_and_over),
		cmocka_unit_test(test_two_writers),
		cmocka_unit_test(test_write_cut_short),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_hostile_handshakes),
		cmocka_unit_test(test_park_and_send_start),
		cmocka_unit_test(test_close_in_flight),
		cmocka_unit_test(test_two_readers),
		cmocka_unit_test(test_keep_lower),
		cmocka_unit_test(test_shared_config_two_workers),
		cmocka_unit_test(test_resumption),
	};

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
