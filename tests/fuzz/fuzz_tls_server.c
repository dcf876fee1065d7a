/* SPDX-License-Identifier: MIT */
/*
 * fuzz_tls_server.c - libFuzzer target: bytes from a "client" through the
 * server side of libgiong-tls (src/stream.c, src/io.c and one backend,
 * linked from giong-tls-internal and giong-tls-<backend>-internal). Built
 * twice: FUZZ_TLS_WOLFSSL gives fuzz_tls_wolfssl, FUZZ_TLS_OPENSSL
 * fuzz_tls_openssl.
 *
 * Each input runs giong_tls_accept() in the main task of a fresh one-worker
 * runtime (1 worker, 64 ring entries, 16 receive buffers) over a fake lower
 * stream defined here, which never parks: its recv hands out the input's
 * bytes in heap buffers whose sizes the input chooses, then ends the way
 * the input chooses; its writes only count bytes (or fail, if asked).
 *
 * Input: a control byte, then the chunk sizes, then the ciphertext.
 *   byte 0, bits 0-3: k, the number of chunk-size bytes that follow (0: all
 *     of the ciphertext in one chunk); bits 4-5: how lower ends after the
 *     last byte (0: end of stream, 1: -ECONNRESET, 2: -ETIMEDOUT,
 *     3: -ECANCELED); bit 6: every write of lower fails with -EPIPE;
 *     bit 7: the second configuration (below) instead of the first.
 *   bytes 1..k: chunk sizes, used in turn: b < 0x80 gives b + 1 (1..128)
 *     bytes, b >= 0x80 gives (b - 0x7f) * 128 (128..16384), so record
 *     boundaries fall anywhere.
 *   the rest: what the client sends.
 * The seeds (tests/fuzz/corpus/tls_<backend>/) are real client flights
 * (openssl s_client against openssl s_server, TLS 1.3 and 1.2) behind such
 * a prefix, cut ones, and garbage.
 *
 * What must hold, else a trap (ASan and UBSan catch the rest, libFuzzer's
 * leak check the leaks): accept returns 0 or a code its header documents;
 * a failed accept returns NULL and leaves lower open and unwatched (this
 * file closes it); a successful one owns lower, whose close comes with the
 * TLS stream's; reads give a count, 0 or a documented error; the whole
 * input ends in a bounded number of steps.
 *
 * Two server configurations, made once in LLVMFuzzerInitialize(): the
 * first is the defaults with one certificate; the second has two (the
 * second's subjectAltName *.example.com and giong.test: the SNI callback
 * picks), ALPN "h2" and "http/1.1", asks for a client certificate
 * (VERIFY_PEER, no CA roots: one sent is refused) and issues no tickets.
 * The certificates (ECDSA P-256, self-signed) are made in memory by
 * `openssl req`: no key is committed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <giong/core.h>
#include <giong/core/error.h>
#include <giong/net/stream.h>
#include <giong/tls/config.h>
#include <giong/tls/stream.h>

#if defined(FUZZ_TLS_WOLFSSL)
#include <giong/tls/wolfssl.h>
#define FUZZ_BACKEND giong_tls_wolfssl
#elif defined(FUZZ_TLS_OPENSSL)
#include <giong/tls/openssl.h>
#define FUZZ_BACKEND giong_tls_openssl
#else
#error "define FUZZ_TLS_WOLFSSL or FUZZ_TLS_OPENSSL"
#endif

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "fuzz_tls_server.c:%d: %s\n", __LINE__, #c);               \
			__builtin_trap();                                                          \
		}                                                                                  \
	} while (0)

/* More steps than any input of libFuzzer's sizes can need: a hang guard. */
#define STEPS_MAX 100000

static struct giong_tls_config *cfgs[2];
static bool verbose; /* FUZZ_TLS_VERBOSE=1: what each input came to, on stderr */

/* --- the fake lower stream ------------------------------------------------------------------ */

struct fake {
	struct giong_stream base; /* first */
	const uint8_t *data;      /* the ciphertext left to hand out */
	size_t len;
	const uint8_t *sizes; /* chunk sizes, used in turn */
	size_t nsizes, next;
	int end;          /* what recv gives after the last byte: 0 or -errno */
	bool ended;       /* the end was given */
	bool write_fails; /* writes give -EPIPE */
	size_t written;   /* bytes "sent" */
	unsigned sum;     /* of every byte sent: each one is read */
	unsigned steps;   /* calls, for the hang guard */
	unsigned watches; /* set_on_readable with a callback, minus those without */
	int *closes;      /* where close counts itself (the fake is freed then) */
};

static struct fake *to_fake(struct giong_stream *s)
{
	return (struct fake *)(void *)s;
}

static size_t chunk_size(struct fake *f)
{
	size_t n;
	uint8_t b;

	if (!f->nsizes)
		return f->len;
	b = f->sizes[f->next++ % f->nsizes];
	n = b < 0x80 ? (size_t)b + 1 : (size_t)(b - 0x7f) * 128;
	return n < f->len ? n : f->len;
}

static ssize_t fake_recv(struct giong_stream *s, struct giong_recvbuf **ret)
{
	struct fake *f = to_fake(s);
	struct giong_recvbuf *b;
	size_t n, room;
	void *tail;
	int r;

	*ret = NULL;
	CHECK(++f->steps < STEPS_MAX);
	if (!f->len) {
		/* The TLS stream remembers an end or a fatal error: it must not
		 * ask again after one (a transient one it may). */
		CHECK(!f->ended || f->end == -ETIMEDOUT || f->end == -ECANCELED);
		f->ended = true;
		return f->end;
	}
	n = chunk_size(f);
	if ((r = giong_recvbuf_alloc(n, &b)))
		return r;
	tail = giong_recvbuf_tail(b, &room);
	CHECK(tail && room >= n);
	memcpy(tail, f->data, n);
	CHECK(giong_recvbuf_commit(b, n) == (long)n);
	f->data += n;
	f->len -= n;
	*ret = b;
	return (ssize_t)n;
}

static ssize_t fake_read(struct giong_stream *s, void *buf, size_t len)
{
	struct giong_recvbuf *b;
	ssize_t n = fake_recv(s, &b);

	if (n <= 0)
		return n;
	/* Not used by the TLS stream (it receives): the rest of a chunk that
	 * does not fit is dropped in this toy. */
	if ((size_t)n > len)
		n = (ssize_t)len;
	memcpy(buf, giong_recvbuf_data(b), (size_t)n);
	giong_recvbuf_release(b);
	return n;
}

static ssize_t fake_writev(struct giong_stream *s, const struct iovec *iov, int n, unsigned flags)
{
	struct fake *f = to_fake(s);
	size_t total = 0;

	(void)flags;
	CHECK(++f->steps < STEPS_MAX);
	if (f->write_fails)
		return -EPIPE;
	for (int i = 0; i < n; i++) {
		CHECK(iov[i].iov_base || !iov[i].iov_len);
		/* Read every byte: ASan checks that what TLS lends is alive. */
		for (size_t k = 0; k < iov[i].iov_len; k++)
			f->sum += ((const uint8_t *)iov[i].iov_base)[k];
		total += iov[i].iov_len;
	}
	f->written += total;
	return (ssize_t)total;
}

static int fake_shutdown(struct giong_stream *s, int how)
{
	(void)s;
	(void)how;
	return 0;
}

static int fake_close(struct giong_stream *s)
{
	struct fake *f = to_fake(s);

	CHECK(f->watches == 0); /* TLS unhooks its readable callback first */
	(*f->closes)++;
	free(f);
	return 0;
}

static int fake_on_readable(struct giong_stream *s, giong_stream_readable_fn fn, void *ctx)
{
	struct fake *f = to_fake(s);

	(void)ctx;
	/* Never readable later: everything is there at once. */
	if (fn)
		f->watches = 1;
	else
		f->watches = 0;
	return 0;
}

static const struct giong_stream_ops fake_ops = {
	.name = "fuzz",
	.recv = fake_recv,
	.read = fake_read,
	.writev = fake_writev,
	.shutdown = fake_shutdown,
	.close = fake_close,
	.set_on_readable = fake_on_readable,
};

/* --- one input -------------------------------------------------------------------------------- */

struct input {
	const uint8_t *data;
	size_t size;
	bool ran;
};

/* What accept may return (<giong/tls/stream.h>), the fake's injected ends
 * and write failures included. GIONG_ETLS_CONFIG, GIONG_ESTACK, -EINVAL
 * and GIONG_ENOTWORKER would be this file's mistakes: not allowed. */
static bool accept_error(int r)
{
	return r == GIONG_ETLS_HANDSHAKE || r == GIONG_ETLS_CERT || r == GIONG_ETLS_ALERT ||
	       r == GIONG_ETLS_TRUNCATED || r == GIONG_ETLS || r == -ETIMEDOUT || r == -ECANCELED ||
	       r == -ECONNRESET || r == -EPIPE || r == -ENOMEM;
}

static bool read_error(ssize_t r)
{
	return accept_error((int)r);
}

static void one(unsigned worker, void *arg)
{
	struct input *in = arg;
	const uint8_t *d = in->data;
	size_t size = in->size, k;
	struct giong_stream *tls = NULL;
	struct fake *f;
	int closes = 0, r;
	static const int ends[4] = {0, -ECONNRESET, -ETIMEDOUT, -ECANCELED};

	(void)worker;
	in->ran = true;
	if (size < 1)
		return;
	k = d[0] & 0x0f;
	if (k > size - 1)
		k = size - 1;
	f = calloc(1, sizeof(*f));
	CHECK(f);
	f->base.ops = &fake_ops;
	f->sizes = d + 1;
	f->nsizes = k;
	f->data = d + 1 + k;
	f->len = size - 1 - k;
	f->end = ends[(d[0] >> 4) & 3];
	f->write_fails = d[0] & 0x40;
	f->closes = &closes;

	r = giong_tls_accept(&f->base, cfgs[d[0] >> 7], &tls);
	if (verbose)
		fprintf(stderr, "accept: %d %s (%s), %zu bytes left, %zu written\n", r,
			r ? giong_strerror(r) : "", r ? giong_tls_last_error(NULL) : "", f->len,
			f->written);
	if (r != 0) {
		if (!accept_error(r) && !verbose)
			fprintf(stderr, "accept: %d (%s): %s\n", r, giong_strerror(r),
				giong_tls_last_error(NULL));
		CHECK(accept_error(r));
		CHECK(tls == NULL);
		/* lower is still ours, open and unwatched */
		CHECK(closes == 0 && f->watches == 0 && f->base.ops == &fake_ops);
		CHECK(giong_stream_close(&f->base) == 0 && closes == 1);
		return;
	}
	CHECK(tls && giong_tls_is_tls(tls) && tls->lower == &f->base);
	CHECK(giong_tls_version(tls) && giong_tls_cipher(tls));
	for (unsigned i = 0;; i++) {
		char buf[4096];
		ssize_t n = giong_stream_read(tls, buf, sizeof(buf));

		CHECK(i < STEPS_MAX);
		CHECK(n <= (ssize_t)sizeof(buf));
		if (n > 0) {
			if (i == 0) /* an answer: encrypt_iov and the flush */
				giong_stream_write_all(tls, "HTTP/1.1 204 \r\n\r\n", 17);
			continue;
		}
		CHECK(n == 0 || read_error(n));
		break;
	}
	CHECK(closes == 0);
	CHECK(giong_stream_close(tls) == 0 && closes == 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct giong_config c;
	struct giong_runtime *rt;
	struct input in = {data, size, false};

	giong_config_init(&c);
	c.workers = 1;
	c.ring_entries = 64;
	c.recv_buffers = 16;
	c.stack_size = 128 * 1024; /* the wolfSSL handshake needs 52 KiB + 8 */
	c.stack_pool = 1;
	c.shutdown_grace_ms = 1;
	CHECK(giong_runtime_new(&c, &rt) == 0);
	CHECK(giong_runtime_run(rt, one, &in) == 0);
	CHECK(giong_runtime_free(rt) == 0);
	CHECK(in.ran);
	return 0;
}

/* --- the certificates and configurations, once ------------------------------------------ */

/* The PEM block of @label ("CERTIFICATE", "PRIVATE KEY") in @pem. */
static const char *pem_block(const char *pem, const char *label, size_t *len)
{
	char begin[64], end[64];
	const char *b, *e;

	snprintf(begin, sizeof(begin), "-----BEGIN %s-----", label);
	snprintf(end, sizeof(end), "-----END %s-----", label);
	if (!(b = strstr(pem, begin)) || !(e = strstr(b, end)))
		return NULL;
	e += strlen(end);
	*len = (size_t)(e - b);
	return b;
}

/* A self-signed ECDSA P-256 certificate and its key from `openssl req`
 * (@ext: more arguments), added to @c. */
static void add_cert(struct giong_tls_config *c, const char *ext)
{
	char cmd[512], pem[16384];
	const char *crt, *key;
	size_t n = 0, crt_len, key_len;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
		 "-keyout - -out - -subj /CN=localhost -days 2 %s 2>/dev/null",
		 ext);
	p = popen(cmd, "r");
	CHECK(p);
	while (n < sizeof(pem) - 1) {
		size_t got = fread(pem + n, 1, sizeof(pem) - 1 - n, p);

		if (!got)
			break;
		n += got;
	}
	pem[n] = '\0';
	CHECK(pclose(p) == 0);
	crt = pem_block(pem, "CERTIFICATE", &crt_len);
	key = pem_block(pem, "PRIVATE KEY", &key_len);
	if (!crt || !key) {
		fprintf(stderr, "fuzz_tls_server: `%s` gave no certificate and key\n", cmd);
		abort();
	}
	CHECK(giong_tls_config_add_cert_mem(c, crt, crt_len, key, key_len) == 0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const alpn[] = {"h2", "http/1.1"};
	char err[160];

	(void)argc;
	(void)argv;
	verbose = getenv("FUZZ_TLS_VERBOSE") && *getenv("FUZZ_TLS_VERBOSE") == '1';
	for (int i = 0; i < 2; i++) {
		struct giong_tls_config *c;

		CHECK(giong_tls_config_new(FUZZ_BACKEND(), &c) == 0);
		add_cert(c, "");
		if (i == 1) {
			add_cert(c, "-addext subjectAltName=DNS:*.example.com,DNS:giong.test");
			CHECK(giong_tls_config_alpn(c, alpn, 2) == 0);
			CHECK(giong_tls_config_verify(c, GIONG_TLS_VERIFY_PEER) == 0);
			CHECK(giong_tls_config_tickets(c, false) == 0);
		}
		/* The fake never parks: this only bounds what a bug could make wait. */
		CHECK(giong_tls_config_handshake_timeout(c, 200) == 0);
		/* Built now, not in the first input: the contexts live as long as
		 * the configuration (to the end: reachable, no leak report). */
		if (giong_tls_config_check(c, err, sizeof(err)) != 0) {
			fprintf(stderr, "fuzz_tls_server: config_check: %s\n", err);
			abort();
		}
		cfgs[i] = c;
	}
	return 0;
}
