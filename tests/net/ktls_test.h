/* SPDX-License-Identifier: MIT */
/*
 * ktls_test.h - what the kTLS units (test_ktls_kernel.c, test_ktls_records.c) share: loopback
 * TCP pairs made kTLS pairs with fixed crypto info, control records sent and received with
 * their SOL_TLS cmsg, /proc/net/tls_stat, and the one allowed skip.
 *
 * The units pin what the kernel's own TLS (issue 29) does, with no TLS library: TCP_ULP "tls"
 * on both ends of a pair, TLS_TX on A and TLS_RX on B with the same key, IV, salt and record
 * sequence number (what a library would export after its handshake). They run where the
 * kernel has TLS: Debian's 6.1 in the guest of scripts/kernel-vm.sh, which loads tls.ko and its
 * crypto modules. On a kernel without it (our 6.18 hosts: no CONFIG_TLS) TCP_ULP fails with
 * ENOENT and they exit 77, saying so; that is their only skip.
 */
#ifndef GIONG_KTLS_TEST_H
#define GIONG_KTLS_TEST_H

#include "giong_test.h"

#include <fcntl.h>
#include <pthread.h>
#include <arpa/inet.h>
#include <linux/tls.h>
#include <sys/uio.h>

#define DATA_LEN (1u << 20) /* bytes each data test moves */
#define IO_TIMEOUT_S 20     /* SO_RCVTIMEO/SNDTIMEO, ring waits: nothing blocks for ever */

static unsigned char *pattern; /* DATA_LEN bytes, not a period of any record size */

/* A connected TCP pair over 127.0.0.1: fd[0] = A (the sender), fd[1] = B (the receiver).
 * Both block, with timeouts. 0 or -errno. */
static inline int tcp_pair(int fd[2])
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct timeval tv = {.tv_sec = IO_TIMEOUT_S};
	socklen_t len = sizeof(sa);
	int l, rc = 0;

	fd[0] = fd[1] = -1;
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0)
		return -errno;
	if (bind(l, (struct sockaddr *)&sa, sizeof(sa)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&sa, &len))
		goto fail;
	fd[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd[0] < 0 || connect(fd[0], (struct sockaddr *)&sa, sizeof(sa)))
		goto fail;
	fd[1] = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	if (fd[1] < 0)
		goto fail;
	close(l);
	for (int i = 0; i < 2; i++)
		if (setsockopt(fd[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
		    setsockopt(fd[i], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
			return -errno;
	return 0;
fail:
	rc = -errno;
	close(l);
	if (fd[0] >= 0)
		close(fd[0]);
	fd[0] = -1;
	return rc;
}

static inline void pair_close(int fd[2])
{
	for (int i = 0; i < 2; i++)
		if (fd[i] >= 0)
			close(fd[i]);
}

/* The ULP on one socket: 0 or errno. */
static inline int ulp_tls(int fd)
{
	return setsockopt(fd, SOL_TCP, TCP_ULP, "tls", sizeof("tls")) ? errno : 0;
}

struct kcipher {
	const char *name;
	uint16_t version, cipher;
	bool required; /* the kernel must take it (TLS 1.3 AES-128-GCM); others may be refused */
};

static const struct kcipher kciphers[] = {
	{"TLS 1.3 AES-128-GCM", TLS_1_3_VERSION, TLS_CIPHER_AES_GCM_128, true},
	{"TLS 1.3 AES-256-GCM", TLS_1_3_VERSION, TLS_CIPHER_AES_GCM_256, false},
	{"TLS 1.3 ChaCha20-Poly1305", TLS_1_3_VERSION, TLS_CIPHER_CHACHA20_POLY1305, false},
	{"TLS 1.2 AES-128-GCM", TLS_1_2_VERSION, TLS_CIPHER_AES_GCM_128, false},
	{"TLS 1.2 AES-256-GCM", TLS_1_2_VERSION, TLS_CIPHER_AES_GCM_256, false},
	{"TLS 1.2 ChaCha20-Poly1305", TLS_1_2_VERSION, TLS_CIPHER_CHACHA20_POLY1305, false},
};

union kinfo {
	struct tls_crypto_info info;
	struct tls12_crypto_info_aes_gcm_128 g128;
	struct tls12_crypto_info_aes_gcm_256 g256;
	struct tls12_crypto_info_chacha20_poly1305 cc;
};

static inline void fill(unsigned char *p, size_t n, unsigned char base)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(base + i * 7);
}

/* Fill one cipher's crypto info (key, IV, salt: ChaCha20's is empty) with fixed bytes and the
 * sequence number `seq`; its size. */
#define KINFO_FILL(ci, seq)                                                                        \
	(fill((ci).key, sizeof((ci).key), 0x10), fill((ci).iv, sizeof((ci).iv), 0x40),             \
	 fill((ci).salt, sizeof((ci).salt), 0x60), memcpy((ci).rec_seq, (seq), 8),                 \
	 (socklen_t)sizeof(ci))

/* The crypto info both ends get: fixed key, IV and salt, and a record sequence number of 5
 * (not 0: a connection after its handshake). Returns its size. */
static inline socklen_t kinfo_fill(union kinfo *k, const struct kcipher *c)
{
	static const unsigned char seq[8] = {0, 0, 0, 0, 0, 0, 0, 5};

	memset(k, 0, sizeof(*k));
	k->info.version = c->version;
	k->info.cipher_type = c->cipher;
	switch (c->cipher) {
	case TLS_CIPHER_AES_GCM_128:
		return KINFO_FILL(k->g128, seq);
	case TLS_CIPHER_AES_GCM_256:
		return KINFO_FILL(k->g256, seq);
	default:
		return KINFO_FILL(k->cc, seq);
	}
}

/* A kTLS pair: ULP on both, TX on A, RX on B. 0, or -errno of the SOL_TLS call refused (the
 * ULP itself must be taken: main() found the module). */
static inline int ktls_pair(int fd[2], const struct kcipher *c)
{
	union kinfo k;
	socklen_t len = kinfo_fill(&k, c);

	assert_int_equal(tcp_pair(fd), 0);
	assert_int_equal(ulp_tls(fd[0]), 0);
	assert_int_equal(ulp_tls(fd[1]), 0);
	if (setsockopt(fd[0], SOL_TLS, TLS_TX, &k, len))
		return -errno;
	if (setsockopt(fd[1], SOL_TLS, TLS_RX, &k, len))
		return -errno;
	return 0;
}

/* EINTRs the blocking calls saw. Not a kTLS matter: when a ring is torn down, 6.1's exit work
 * (io_ring_exit_work) queues task work with TWA_SIGNAL on every thread that used it, so a thread
 * blocked in recv() a moment later wakes with EINTR (seen in the 6.1 guest: a reader blocked
 * while earlier tests' rings went away). Retried, a bounded number of times. */
static atomic_uint eintrs;
#define EINTR_MAX 100

static inline bool retry_eintr(void)
{
	return errno == EINTR && atomic_fetch_add(&eintrs, 1) < EINTR_MAX;
}

/* A counter of /proc/net/tls_stat (this network namespace's kTLS sockets), -1 without it. */
static inline long tls_stat(const char *name)
{
	FILE *f = fopen("/proc/net/tls_stat", "r");
	char key[64];
	long v, found = -1;

	if (!f)
		return -1;
	while (found < 0 && fscanf(f, "%63s %ld", key, &v) == 2)
		if (!strcmp(key, name))
			found = v;
	fclose(f);
	return found;
}

/* An errno's name for the messages, "0" for none. */
static inline const char *ename(int e)
{
	return e ? strerrorname_np(e) : "0";
}

/* One record of `type` (an alert is 21) through sendmsg's SOL_TLS cmsg. */
static inline ssize_t send_record(int fd, unsigned char type, const void *p, size_t n)
{
	union {
		char buf[CMSG_SPACE(1)];
		struct cmsghdr align;
	} c = {0};
	struct iovec iov = {(void *)p, n};
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = c.buf,
			   .msg_controllen = sizeof(c.buf)};
	struct cmsghdr *h = CMSG_FIRSTHDR(&m);

	h->cmsg_level = SOL_TLS;
	h->cmsg_type = TLS_SET_RECORD_TYPE;
	h->cmsg_len = CMSG_LEN(1);
	*CMSG_DATA(h) = type;
	return sendmsg(fd, &m, 0);
}

/* A recvmsg with room for the record type, as a plain call or through the ring. */
struct rmsg {
	union {
		char buf[CMSG_SPACE(1)];
		struct cmsghdr align;
	} c;
	struct iovec iov;
	struct msghdr m;
};

static inline void rmsg_init(struct rmsg *r, void *buf, size_t n)
{
	memset(r, 0, sizeof(*r));
	r->iov = (struct iovec){buf, n};
	r->m = (struct msghdr){.msg_iov = &r->iov,
			       .msg_iovlen = 1,
			       .msg_control = r->c.buf,
			       .msg_controllen = sizeof(r->c.buf)};
}

/* The record type its cmsg gave, -1 without one. */
static inline int rmsg_type(struct rmsg *r)
{
	struct cmsghdr *h = CMSG_FIRSTHDR(&r->m);

	if (!h || h->cmsg_level != SOL_TLS || h->cmsg_type != TLS_GET_RECORD_TYPE)
		return -1;
	return *CMSG_DATA(h);
}

static const unsigned char alert[2] = {1, 0}; /* warning, close_notify */

/* The tests' main: exit 77 where the kernel has no TLS (TCP_ULP "tls" refused with ENOENT),
 * else the pattern made and the group run; its status. */
#define ktls_run_tests(name, tests) ktls_run_((name), (tests), sizeof(tests) / sizeof((tests)[0]))

static inline int ktls_run_(const char *name, const struct CMUnitTest *tests, size_t n)
{
	int fd[2], err, rc;

	if ((err = -tcp_pair(fd))) {
		fprintf(stderr, "%s: no loopback TCP pair: %s\n", name, strerror(err));
		return 1;
	}
	err = ulp_tls(fd[0]);
	pair_close(fd);
	if (err == ENOENT) {
		printf("kernel lacks TLS (CONFIG_TLS / tls module): TCP_ULP tls: %s (%s)\n",
		       strerrorname_np(err), strerror(err));
		return GT_SKIP;
	}
	if (err) {
		fprintf(stderr, "%s: TCP_ULP tls: %s\n", name, strerror(err));
		return 1;
	}
	pattern = malloc(DATA_LEN);
	if (!pattern)
		return 1;
	for (size_t i = 0; i < DATA_LEN; i++)
		pattern[i] = (unsigned char)(i * 131 + (i >> 12));
	rc = _cmocka_run_group_tests(name, tests, n, NULL, NULL);
	printf("EINTR retried: %u\n", atomic_load(&eintrs));
	free(pattern);
	return rc;
}

#endif
