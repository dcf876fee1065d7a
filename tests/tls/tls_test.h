/* SPDX-License-Identifier: MIT */
/*
 * tls_test.h - the fixture of the tls tests. Each test source is built once
 * per TLS backend (tests/tls/CMakeLists.txt defines TT_BACKEND, the
 * function returning it, and TT_BACKEND_HEADER); the certificates come from
 * make-certs.sh, run by the CTest fixture tls.certs into the directory in
 * $GIONG_TLS_CERTS.
 *
 *	struct giong_tls_config *srv = tt_server("server", NULL);
 *	struct giong_tls_config *cli = tt_client(NULL);
 *	tt_pair(srv, cli, "localhost", &a, &b);    // in a task: both handshakes
 */
#ifndef GIONG_TLS_TEST_H
#define GIONG_TLS_TEST_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "giong_test.h"

#include <giong/net.h>
#include <giong/tls.h>
#include <giong/tls/backend.h>
#include TT_BACKEND_HEADER

static inline const struct giong_tls_backend *tt_backend(void)
{
	return TT_BACKEND();
}

/* The path of certificate file @name ("server.pem") in $GIONG_TLS_CERTS.
 * Static storage, one of 8 in turn. */
static inline const char *tt_path(const char *name)
{
	static char paths[8][PATH_MAX];
	static unsigned next;
	const char *dir = getenv("GIONG_TLS_CERTS");
	char *p = paths[next++ % 8];

	if (!dir) {
		fprintf(stderr,
			"GIONG_TLS_CERTS is not set (run through ctest: fixture tls.certs)\n");
		exit(1);
	}
	snprintf(p, PATH_MAX, "%s/%s", dir, name);
	return p;
}

/* A server configuration presenting certificate @cert ("server" for
 * server.pem + server.key), offering ALPN @alpn (NULL-terminated list, or
 * NULL for none). */
static inline struct giong_tls_config *tt_server(const char *cert, const char *const *alpn)
{
	struct giong_tls_config *c;
	char pem[64], key[64];
	size_t n = 0;

	assert_int_equal(giong_tls_config_new(tt_backend(), &c), 0);
	snprintf(pem, sizeof(pem), "%s.pem", cert);
	snprintf(key, sizeof(key), "%s.key", cert);
	assert_int_equal(giong_tls_config_add_cert_file(c, tt_path(pem), tt_path(key)), 0);
	while (alpn && alpn[n])
		n++;
	if (n)
		assert_int_equal(giong_tls_config_alpn(c, alpn, n), 0);
	return c;
}

/* A client configuration trusting the test CA, offering @alpn. */
static inline struct giong_tls_config *tt_client(const char *const *alpn)
{
	struct giong_tls_config *c;
	size_t n = 0;

	assert_int_equal(giong_tls_config_new(tt_backend(), &c), 0);
	assert_int_equal(giong_tls_config_ca_file(c, tt_path("ca.pem")), 0);
	while (alpn && alpn[n])
		n++;
	if (n)
		assert_int_equal(giong_tls_config_alpn(c, alpn, n), 0);
	return c;
}

/* --- a server task and a client task over a Unix socket pair ------------- */

struct tt_accept {
	struct giong_tls_config *cfg;
	struct giong_stream *lower;
	struct giong_stream *tls; /* result */
	int err;
};

static inline intptr_t tt_accept_task(void *arg)
{
	struct tt_accept *a = arg;

	a->err = giong_tls_accept(a->lower, a->cfg, &a->tls);
	/* Closed now, not after the client's handshake: a handshake that
	 * failed without an alert (a TLS step failed by GIONG_FAULTS) tells
	 * the client nothing, which would wait out its handshake timeout. */
	if (a->err) {
		giong_stream_close(a->lower);
		a->lower = NULL;
	}
	return 0;
}

/* The client's giong_tls_last_error(NULL) of the calling worker's last
 * tt_pair*() whose connect failed (the server's failure that follows
 * replaces the thread's). Per thread: tests pair on several workers. */
static _Thread_local char tt_connect_error[160];

/* The calling worker's last tt_pair*()'s giong_tls_connect() result (1: it
 * was not called, the socket pair or the server's task could not be made). */
static _Thread_local int tt_connect_result = 1;

/*
 * tt_pair_over() - in a task: the server handshake over @a in a task of its
 * own, the client's over @b here. Returns 0 with both TLS streams
 * (*@server, *@client); or the client's error in the low half and the
 * server's via *@server_err (both lowers closed then). Either may be NULL
 * on failure.
 */
static inline int tt_pair_over(struct giong_stream *a, struct giong_stream *b,
			       struct giong_tls_config *srv, struct giong_tls_config *cli,
			       const char *name, struct giong_stream **server,
			       struct giong_stream **client, int *server_err)
{
	struct tt_accept acc = {.cfg = srv, .lower = a};
	struct giong_task *t;
	int r;

	*server = *client = NULL;
	tt_connect_result = 1;
	if ((r = giong_spawn(tt_accept_task, &acc, &t))) {
		giong_stream_close(a);
		giong_stream_close(b);
		return r;
	}
	r = tt_connect_result = giong_tls_connect(b, cli, name, client);
	if (r) {
		snprintf(tt_connect_error, sizeof(tt_connect_error), "%s",
			 giong_tls_last_error(NULL));
		if (getenv("TT_VERBOSE"))
			fprintf(stderr, "tt_pair: connect: %s: %s\n", giong_strerror(r),
				giong_tls_last_error(NULL));
		giong_stream_close(b); /* the server's handshake then fails */
		b = NULL;
	}
	giong_join(t, NULL);
	if (acc.err && getenv("TT_VERBOSE"))
		fprintf(stderr, "tt_pair: accept: %s\n", giong_strerror(acc.err));
	if (server_err)
		*server_err = acc.err;
	*server = acc.tls; /* acc.lower (a) closed by the task on failure */
	if (!r && acc.err) {
		giong_stream_close(*client);
		*client = NULL;
		r = acc.err;
	}
	return r;
}

/* tt_pair() - tt_pair_over() a Unix socket pair made here. */
static inline int tt_pair(struct giong_tls_config *srv, struct giong_tls_config *cli,
			  const char *name, struct giong_stream **server,
			  struct giong_stream **client, int *server_err)
{
	struct giong_stream *a, *b;
	int r;

	*server = *client = NULL;
	tt_connect_result = 1;
	if ((r = giong_unix_pair(&a, &b)))
		return r;
	return tt_pair_over(a, b, srv, cli, name, server, client, server_err);
}

/* A giong_stream_send_start() request that records its completion. */
struct tt_sent {
	struct giong_stream_send req;
	ssize_t res;
	bool done;
};

static inline void tt_sent_done(struct giong_stream_send *req, ssize_t res)
{
	struct tt_sent *s = (struct tt_sent *)req;

	s->res = res;
	s->done = true;
}

/* Fill @buf with a pattern that depends on the offset @off (so a lost,
 * doubled or reordered chunk shows). */
static inline void tt_pattern(unsigned char *buf, size_t len, uint64_t off)
{
	for (size_t i = 0; i < len; i++) {
		uint64_t x = (off + i) * 0x9E3779B97F4A7C15ull;

		buf[i] = (unsigned char)(x >> 56);
	}
}

static inline bool tt_pattern_ok(const unsigned char *buf, size_t len, uint64_t off)
{
	for (size_t i = 0; i < len; i++) {
		uint64_t x = (off + i) * 0x9E3779B97F4A7C15ull;

		if (buf[i] != (unsigned char)(x >> 56))
			return false;
	}
	return true;
}

/* Write all of @buf to descriptor @fd (a file). @len or -errno. */
static inline ssize_t gt_write_all_fd(int fd, const void *buf, size_t len)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = write(fd, (const char *)buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	return (ssize_t)len;
}

#endif /* GIONG_TLS_TEST_H */
