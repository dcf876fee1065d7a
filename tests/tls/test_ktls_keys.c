/* SPDX-License-Identifier: MIT */
/*
 * test_ktls_keys.c - the backends' export_keys (kernel TLS, issue 29), without a kernel:
 * for TLS 1.2 and 1.3 with AES-128-GCM, AES-256-GCM and ChaCha20-Poly1305, a server and a
 * client are handshaken over a socket pair; both directions are exported on both sides
 * right after the handshake (when the kernel would take them over); one side's TX must be
 * the other's RX; then each side sends through TLS and the records are read raw off the
 * peer's socket, beneath its TLS, and opened with libcrypto's AEAD from the exported key,
 * IV and sequence number alone (the nonce and additional data as RFC 5288/7905/8446 build
 * them, as the kernel does). Opening them with the sequence number, key or IV changed by
 * one bit must fail, so a wrong export cannot pass.
 *
 * Built per backend (both sides of that backend) and, with TT_CROSS, once with both
 * backends: a wolfSSL server with an OpenSSL client and the other way round (tls.cross_keys),
 * also after each side updated its TLS 1.3 keys.
 * Links the libraries' white-box twins: giong__tls_export_keys() is internal.
 */
#include <string.h>

#include <openssl/evp.h>

#include "tls_test.h"
#include "tls_int.h"

#ifdef TT_CROSS
#include <openssl/ssl.h>

#include <giong/tls/openssl.h>
#include <giong/tls/wolfssl.h>

/* wolfSSL's, declared here: its headers define OpenSSL's names. */
int wolfSSL_update_keys(void *ssl);
#endif

struct kcase {
	const char *name;
	enum giong_tls_version v;
	const char *suite; /* the one suite both sides allow */
	uint16_t cipher;
};

static const struct kcase cases[] = {
	{"1.2 AES-128-GCM", GIONG_TLS_1_2, "ECDHE-ECDSA-AES128-GCM-SHA256",
	 GIONG_TLS_KEYS_AES_GCM_128},
	{"1.2 AES-256-GCM", GIONG_TLS_1_2, "ECDHE-ECDSA-AES256-GCM-SHA384",
	 GIONG_TLS_KEYS_AES_GCM_256},
	{"1.2 ChaCha20", GIONG_TLS_1_2, "ECDHE-ECDSA-CHACHA20-POLY1305",
	 GIONG_TLS_KEYS_CHACHA20_POLY1305},
	{"1.3 AES-128-GCM", GIONG_TLS_1_3, "TLS_AES_128_GCM_SHA256", GIONG_TLS_KEYS_AES_GCM_128},
	{"1.3 AES-256-GCM", GIONG_TLS_1_3, "TLS_AES_256_GCM_SHA384", GIONG_TLS_KEYS_AES_GCM_256},
	{"1.3 ChaCha20", GIONG_TLS_1_3, "TLS_CHACHA20_POLY1305_SHA256",
	 GIONG_TLS_KEYS_CHACHA20_POLY1305},
};

struct run {
	const struct kcase *kc;
	const struct giong_tls_backend *sbe, *cbe;
	bool tickets;
	int warm;    /* round trips through TLS before the export */
	bool resume; /* on a second connection, resuming the first one's session */
	int records; /* records opened (both directions) */
};

/* The AEAD of @k. */
static const EVP_CIPHER *aead(const struct giong_tls_keys *k)
{
	return k->cipher == GIONG_TLS_KEYS_AES_GCM_128   ? EVP_aes_128_gcm()
	       : k->cipher == GIONG_TLS_KEYS_AES_GCM_256 ? EVP_aes_256_gcm()
							 : EVP_chacha20_poly1305();
}

/*
 * Open record @rec (@len bytes, header included) as the @seq-th of its direction under
 * @k: the plaintext into @out (*@outlen) and the content type (TLS 1.3: the inner one,
 * padding stripped). False when the AEAD refuses it.
 */
static bool open_record(const struct giong_tls_keys *k, uint64_t seq, const unsigned char *rec,
			size_t len, unsigned char *out, size_t *outlen, int *type)
{
	const unsigned char *ct = rec + 5;
	unsigned char nonce[12], aad[13];
	size_t ctl = len - 5, aadl = 5;
	EVP_CIPHER_CTX *ctx;
	int l = 0, ok;

	if (len < 5 + 16)
		return false;
	/* RFC 8446 5.3 and RFC 7905: the static IV XOR the sequence number */
	memset(nonce, 0, sizeof(nonce));
	for (int i = 0; i < 8; i++)
		nonce[4 + i] = (unsigned char)(seq >> (56 - 8 * i));
	if (k->iv_len == 12) {
		for (int i = 0; i < 12; i++)
			nonce[i] ^= k->iv[i];
	} else { /* RFC 5288: the 4-byte salt, then the record's explicit 8 bytes */
		if (ctl < 8 + 16)
			return false;
		memcpy(nonce, k->iv, 4);
		memcpy(nonce + 4, ct, 8);
		ct += 8;
		ctl -= 8;
	}
	ctl -= 16; /* the tag */
	if (k->version == GIONG_TLS_KEYS_1_3) {
		memcpy(aad, rec, 5);
	} else { /* seq || type || version || plaintext length */
		for (int i = 0; i < 8; i++)
			aad[i] = (unsigned char)(seq >> (56 - 8 * i));
		memcpy(aad + 8, rec, 3);
		aad[11] = (unsigned char)(ctl >> 8);
		aad[12] = (unsigned char)ctl;
		aadl = 13;
	}
	ctx = EVP_CIPHER_CTX_new();
	ok = ctx && EVP_DecryptInit_ex(ctx, aead(k), NULL, NULL, NULL) == 1 &&
	     EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL) == 1 &&
	     EVP_DecryptInit_ex(ctx, NULL, NULL, k->key, nonce) == 1 &&
	     EVP_DecryptUpdate(ctx, NULL, &l, aad, (int)aadl) == 1 &&
	     EVP_DecryptUpdate(ctx, out, &l, ct, (int)ctl) == 1 &&
	     EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, (void *)(ct + ctl)) == 1 &&
	     EVP_DecryptFinal_ex(ctx, out + l, &l) == 1;
	EVP_CIPHER_CTX_free(ctx);
	if (!ok)
		return false;
	*outlen = ctl;
	*type = rec[0];
	if (k->version == GIONG_TLS_KEYS_1_3) {
		while (*outlen && !out[*outlen - 1])
			(*outlen)--;
		if (!*outlen)
			return false;
		*type = out[--*outlen];
	}
	return true;
}

/* One whole record read raw from @lower into @rec (16 KiB + 256). Its length, or 0. */
static size_t read_record(struct giong_stream *lower, unsigned char *rec)
{
	size_t have = 0, want = 5;

	for (int i = 0; i < 1000 && have < want; i++) {
		ssize_t n = giong_stream_read(lower, rec + have, want - have);

		if (n <= 0)
			return 0;
		have += (size_t)n;
		if (have == 5)
			want = 5 + ((size_t)rec[3] << 8 | rec[4]);
		if (want > 5 + 16384 + 256)
			return 0;
	}
	return have == want ? have : 0;
}

/*
 * @from sends @msg through TLS; the records are read raw off @to_lower and opened under
 * @rx (the receiver's export) from its sequence number on: the application data record
 * must be the @tx_seq-th (the sender's export) and carry @msg. Records before it (a TLS 1.3
 * NewSessionTicket) must open too. Then the record must not open with one bit of the
 * sequence number, key or IV changed.
 */
static void check_direction(struct run *r, struct giong_stream *from, struct giong_stream *to_lower,
			    const struct giong_tls_keys *rx, uint64_t tx_seq, const char *msg)
{
	static unsigned char rec[16384 + 256 + 5], out[16384 + 256];
	struct giong_tls_keys bad;
	uint64_t seq = rx->seq;
	size_t len, outlen;
	int type = 0;

	gt_check_int_equal(giong_stream_write_all(from, msg, strlen(msg)), (ssize_t)strlen(msg));
	for (int i = 0; i < 4; i++, seq++) {
		len = read_record(to_lower, rec);
		if (!gt_check_true(len > 0))
			return;
		if (!open_record(rx, seq, rec, len, out, &outlen, &type)) {
			gt_check_fail_msg(
				"%s: record %d (type %d, %zu bytes) does not open at seq %llu",
				r->kc->name, i, rec[0], len, (unsigned long long)seq);
			return;
		}
		r->records++;
		if (type == 23)
			break;
		gt_check_int_equal(type, 22); /* a NewSessionTicket */
	}
	if (!gt_check_int_equal(type, 23))
		return;
	gt_check_int_equal(seq, tx_seq);
	gt_check_int_equal(outlen, strlen(msg));
	gt_check_memory_equal(out, msg, strlen(msg));

	bad = *rx;
	gt_check_false(open_record(&bad, seq + 1, rec, len, out, &outlen, &type));
	bad.key[bad.key_len - 1] ^= 1;
	gt_check_false(open_record(&bad, seq, rec, len, out, &outlen, &type));
	bad = *rx;
	bad.iv[bad.iv_len - 1] ^= 1;
	gt_check_false(open_record(&bad, seq, rec, len, out, &outlen, &type));
	explicit_bzero(&bad, sizeof(bad));
}

static bool same_material(const struct giong_tls_keys *a, const struct giong_tls_keys *b)
{
	return a->version == b->version && a->cipher == b->cipher && a->key_len == b->key_len &&
	       a->iv_len == b->iv_len && !memcmp(a->key, b->key, a->key_len) &&
	       !memcmp(a->iv, b->iv, a->iv_len);
}

static struct giong_tls_config *make_config(const struct giong_tls_backend *be, bool server,
					    const struct kcase *kc, bool tickets)
{
	struct giong_tls_config *c;

	if (!gt_check_int_equal(giong_tls_config_new(be, &c), 0))
		return NULL;
	if (server)
		gt_check_int_equal(giong_tls_config_add_cert_file(c, tt_path("server.pem"),
								  tt_path("server.key")),
				   0);
	else
		gt_check_int_equal(giong_tls_config_ca_file(c, tt_path("ca.pem")), 0);
	gt_check_int_equal(giong_tls_config_versions(c, kc->v, kc->v), 0);
	gt_check_int_equal(giong_tls_config_ciphers(c, kc->v == GIONG_TLS_1_2 ? kc->suite : NULL,
						    kc->v == GIONG_TLS_1_3 ? kc->suite : NULL),
			   0);
	gt_check_int_equal(giong_tls_config_tickets(c, tickets), 0);
	return c;
}

/* @msg through TLS from @from to @to, read there whole. */
static void through_tls(struct giong_stream *from, struct giong_stream *to, const char *msg)
{
	char buf[128];
	size_t have = 0, len = strlen(msg);

	gt_check_int_equal(giong_stream_write_all(from, msg, len), (ssize_t)len);
	for (int i = 0; i < 100 && have < len; i++) {
		ssize_t n = giong_stream_read(to, buf + have, sizeof(buf) - have);

		if (!gt_check_true(n > 0))
			return;
		have += (size_t)n;
	}
	gt_check_int_equal(have, len);
	gt_check_memory_equal(buf, msg, len);
}

/* A handshaken pair of run @r and the four exports (st: the server's TX, sr: its RX, ...). */
struct pair {
	struct giong_tls_config *srv, *cli;
	struct giong_stream *la, *lb; /* the server's and the client's sockets */
	struct giong_stream *s, *c;
	struct giong_tls_keys st, sr, ct, cr;
};

static bool pair_connect(struct pair *p);

static bool pair_open(struct run *r, struct pair *p)
{
	memset(p, 0, sizeof(*p));
	p->srv = make_config(r->sbe, true, r->kc, r->tickets);
	p->cli = make_config(r->cbe, false, r->kc, r->tickets);
	return p->srv && p->cli && pair_connect(p);
}

/* A connection of @p's configurations; a resumed one when the client kept a session. */
static bool pair_connect(struct pair *p)
{
	return gt_check_int_equal(giong_unix_pair(&p->la, &p->lb), 0) &&
	       gt_check_int_equal(
		       tt_pair_over(p->la, p->lb, p->srv, p->cli, "localhost", &p->s, &p->c, NULL),
		       0);
}

/* Export both directions of both sides: one side's TX must be the other's RX. */
static void pair_export(struct pair *p)
{
	gt_check_int_equal(giong__tls_export_keys(p->s, true, &p->st), 0);
	gt_check_int_equal(giong__tls_export_keys(p->s, false, &p->sr), 0);
	gt_check_int_equal(giong__tls_export_keys(p->c, true, &p->ct), 0);
	gt_check_int_equal(giong__tls_export_keys(p->c, false, &p->cr), 0);
	gt_check_true(same_material(&p->st, &p->cr));
	gt_check_true(same_material(&p->ct, &p->sr));
	gt_check_false(same_material(&p->st, &p->ct));
	gt_check_int_equal(p->ct.seq, p->sr.seq);
}

/* Each side sends, the other's socket is read raw and opened under the exports. */
static void pair_check_wire(struct run *r, struct pair *p)
{
	check_direction(r, p->c, p->la, &p->sr, p->ct.seq, "from the client, under its keys");
	check_direction(r, p->s, p->lb, &p->cr, p->st.seq, "from the server, under its keys");
}

static void pair_close(struct pair *p)
{
	explicit_bzero(&p->st, sizeof(p->st));
	explicit_bzero(&p->sr, sizeof(p->sr));
	explicit_bzero(&p->ct, sizeof(p->ct));
	explicit_bzero(&p->cr, sizeof(p->cr));
	if (p->s)
		giong_stream_close(p->s);
	if (p->c)
		giong_stream_close(p->c);
	giong_tls_config_free(p->srv);
	giong_tls_config_free(p->cli);
}

static void keys_main(unsigned worker, void *arg)
{
	struct run *r = arg;
	uint16_t ver = r->kc->v == GIONG_TLS_1_3 ? GIONG_TLS_KEYS_1_3 : GIONG_TLS_KEYS_1_2;
	struct pair p;
	int tickets;

	(void)worker;
	if (!pair_open(r, &p))
		goto out;
	if (r->resume) {
		/* the client reads its ticket (TLS 1.3) with the data */
		through_tls(p.s, p.c, "the first connection");
		giong_stream_close(p.s);
		giong_stream_close(p.c);
		p.s = p.c = NULL;
		if (!pair_connect(&p))
			goto out;
		/* wolfSSL's client keeps TLS 1.3 sessions only (test_stream.c says why) */
		int want = !(ver == GIONG_TLS_KEYS_1_2 && !strcmp(r->cbe->name, "wolfssl"));

		gt_check_int_equal(giong_tls_resumed(p.s), want);
		gt_check_int_equal(giong_tls_resumed(p.c), want);
	}
	for (int i = 0; i < r->warm; i++) {
		through_tls(p.s, p.c, "a request? no: the server speaks first");
		through_tls(p.c, p.s, "and the client answers");
	}
	pair_export(&p);
	gt_check_int_equal(p.st.version, ver);
	gt_check_int_equal(p.st.cipher, r->kc->cipher);
	if (r->warm) {
		/* the client read the ticket (TLS 1.3) and every record since */
		gt_check_int_equal(p.st.seq, p.cr.seq);
		gt_check_int_equal(p.ct.seq, (uint64_t)r->warm + (ver == GIONG_TLS_KEYS_1_2));
		gt_check_int_equal(p.st.seq,
				   (uint64_t)r->warm + (ver == GIONG_TLS_KEYS_1_2 || r->tickets));
	} else if (ver == GIONG_TLS_KEYS_1_2) {
		gt_check_int_equal(p.st.seq, p.cr.seq); /* 1: the Finished */
		gt_check_int_equal(p.st.seq, 1);
	} else {
		/* The server's NewSessionTicket is out, unread by the client. */
		gt_check_int_equal(p.cr.seq, 0);
		if (!r->resume) /* a resumed connection: 0 or 1, the library's choice */
			gt_check_int_equal(p.st.seq, r->tickets ? 1 : 0);
		gt_check_int_equal(p.ct.seq, 0);
	}
	/* each direction's data record, after the tickets still unread */
	tickets = (int)(p.st.seq - p.cr.seq);
	pair_check_wire(r, &p);
	gt_check_int_equal(r->records, 2 + tickets);
	/* Not a TLS stream. */
	gt_check_int_equal(giong__tls_export_keys(p.la, true, &p.st), -EINVAL);
out:
	pair_close(&p);
}

static void run_all(const struct giong_tls_backend *sbe, const struct giong_tls_backend *cbe)
{
	struct giong_config cfg = gt_config(1);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* tickets on/off, 3 round trips first or none, resumed (tickets on only) */
		for (int t = 0; t < 6; t++) {
			struct run r = {.kc = &cases[i],
					.sbe = sbe,
					.cbe = cbe,
					.tickets = !(t & 1) || t >= 4,
					.warm = t & 1 ? 3 : 0,
					.resume = t >= 4};

			if (t < 4) {
				r.tickets = !(t & 1);
				r.warm = t & 2 ? 3 : 0;
			}
			print_message("%s server, %s client, %s, tickets %s, %d round trips "
				      "first%s\n",
				      sbe->name, cbe->name, cases[i].name, r.tickets ? "on" : "off",
				      r.warm, r.resume ? ", resumed" : "");
			gt_run(&cfg, keys_main, &r, NULL);
		}
	}
}

#ifndef TT_CROSS
static void test_export_keys(void **state)
{
	(void)state;
	run_all(tt_backend(), tt_backend());
}

/* A suite the kernel is not given (CBC): -ENOTSUP, both directions, both sides. */
static const struct kcase cbc = {"1.2 AES-128-CBC", GIONG_TLS_1_2, "ECDHE-ECDSA-AES128-SHA256", 0};

static void cbc_main(unsigned worker, void *arg)
{
	struct run *r = arg;
	struct pair p;

	(void)worker;
	if (pair_open(r, &p)) {
		gt_check_int_equal(giong__tls_export_keys(p.s, true, &p.st), -ENOTSUP);
		gt_check_int_equal(giong__tls_export_keys(p.s, false, &p.sr), -ENOTSUP);
		gt_check_int_equal(giong__tls_export_keys(p.c, true, &p.ct), -ENOTSUP);
		gt_check_int_equal(giong__tls_export_keys(p.c, false, &p.cr), -ENOTSUP);
		r->records = 1; /* reached */
	}
	pair_close(&p);
}

static void test_unsupported_suite(void **state)
{
	struct giong_config cfg = gt_config(1);
	struct run r = {.kc = &cbc, .sbe = tt_backend(), .cbe = tt_backend(), .tickets = true};

	(void)state;
	if (!strcmp(tt_backend()->name, "wolfssl")) {
		/* Debian's wolfSSL has no CBC suite (test_ciphers.c) */
		print_message("wolfssl: no CBC suite here: skipped\n");
		skip();
	}
	gt_run(&cfg, cbc_main, &r, NULL);
	assert_int_equal(r.records, 1);
}

/* A backend built before export_keys existed: its table ends before the member, which
 * must then not be read (here it holds a function that fails the test). */
static struct giong_tls_backend old_backend;

static int poisoned_export(void *conn, bool tx, struct giong_tls_keys *k)
{
	(void)conn;
	(void)tx;
	(void)k;
	gt_check_fail_msg("export_keys read beyond the backend's size");
	return 0;
}

static void old_main(unsigned worker, void *arg)
{
	struct giong_tls_config *srv, *cli;
	struct giong_stream *s = NULL, *c = NULL;
	struct giong_tls_keys k;

	(void)worker;
	(void)arg;
	if (!gt_check_int_equal(giong_tls_config_new(&old_backend, &srv), 0))
		return;
	gt_check_int_equal(
		giong_tls_config_add_cert_file(srv, tt_path("server.pem"), tt_path("server.key")),
		0);
	if (!gt_check_int_equal(giong_tls_config_new(tt_backend(), &cli), 0)) {
		giong_tls_config_free(srv);
		return;
	}
	gt_check_int_equal(giong_tls_config_ca_file(cli, tt_path("ca.pem")), 0);
	if (gt_check_int_equal(tt_pair(srv, cli, "localhost", &s, &c, NULL), 0)) {
		gt_check_int_equal(giong__tls_export_keys(s, true, &k), -EOPNOTSUPP);
		gt_check_int_equal(giong__tls_export_keys(c, true, &k), 0);
		explicit_bzero(&k, sizeof(k));
		giong_stream_close(s);
		giong_stream_close(c);
	}
	giong_tls_config_free(srv);
	giong_tls_config_free(cli);
}

static void test_older_backend(void **state)
{
	struct giong_config cfg = gt_config(1);
	struct giong_tls_config *x;

	(void)state;
	old_backend = *tt_backend();
	old_backend.export_keys = poisoned_export;
	old_backend.size = GIONG_TLS_BACKEND_SIZE_1 - 1; /* cut into a required member */
	assert_int_equal(giong_tls_config_new(&old_backend, &x), -EINVAL);
	old_backend.size = GIONG_TLS_BACKEND_SIZE_1;
	gt_run(&cfg, old_main, NULL, NULL);
}
#else
/* The library object of TLS stream @st: the first member of both backends' per-connection
 * state (white box: struct wolf_conn and struct oconn). */
static void *library_object(struct giong_stream *st)
{
	return *(void **)((struct giong_tls_stream *)st)->conn;
}

/* TLS 1.3 key updates, each side's in turn, then the export as in keys_main(). */
static void update_main(unsigned worker, void *arg)
{
	struct run *r = arg;
	struct giong_stream *o, *w;
	struct pair p;

	(void)worker;
	if (!pair_open(r, &p))
		goto out;
	through_tls(p.s, p.c, "before the updates");
	through_tls(p.c, p.s, "before the updates, back");
	o = !strcmp(giong_tls_backend_name(p.s), "openssl") ? p.s : p.c;
	w = o == p.s ? p.c : p.s;
	/* OpenSSL's goes out with its next write; wolfSSL's is pushed at once (and asks the
	 * peer to update too, which OpenSSL does with its next write). */
	gt_check_int_equal(SSL_key_update(library_object(o), SSL_KEY_UPDATE_NOT_REQUESTED), 1);
	through_tls(o, w, "after OpenSSL's key update");
	gt_check_int_equal(wolfSSL_update_keys(library_object(w)), 1);
	through_tls(w, o, "after wolfSSL's key update");
	through_tls(o, w, "OpenSSL answers");
	through_tls(w, o, "and wolfSSL too");
	pair_export(&p);
	gt_check_int_equal(p.st.seq, p.cr.seq);
	pair_check_wire(r, &p);
out:
	pair_close(&p);
}

static void run_updates(const struct giong_tls_backend *sbe, const struct giong_tls_backend *cbe)
{
	struct giong_config cfg = gt_config(1);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct run r = {.kc = &cases[i], .sbe = sbe, .cbe = cbe, .tickets = true};

		if (cases[i].v != GIONG_TLS_1_3)
			continue;
		print_message("%s server, %s client, %s, key updates\n", sbe->name, cbe->name,
			      cases[i].name);
		gt_run(&cfg, update_main, &r, NULL);
		assert_int_equal(r.records, 2);
	}
}

static void test_key_update(void **state)
{
	(void)state;
	run_updates(giong_tls_wolfssl(), giong_tls_openssl());
	run_updates(giong_tls_openssl(), giong_tls_wolfssl());
}

static void test_wolfssl_server_openssl_client(void **state)
{
	(void)state;
	run_all(giong_tls_wolfssl(), giong_tls_openssl());
}

static void test_openssl_server_wolfssl_client(void **state)
{
	(void)state;
	run_all(giong_tls_openssl(), giong_tls_wolfssl());
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
#ifndef TT_CROSS
		cmocka_unit_test(test_export_keys),
		cmocka_unit_test(test_older_backend),
		cmocka_unit_test(test_unsupported_suite),
#else
		cmocka_unit_test(test_wolfssl_server_openssl_client),
		cmocka_unit_test(test_openssl_server_wolfssl_client),
		cmocka_unit_test(test_key_update),
#endif
	};

	/* The export is checked against the wire, not the kernel: the backends prepare it
	 * even where the kernel has no TLS (the hosts), which they otherwise skip. */
	setenv("GIONG_TLS_KTLS", "force", 1);

	gt_require_runtime();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
