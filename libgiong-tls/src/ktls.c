// SPDX-License-Identifier: MIT
/*
 * ktls.c - kernel TLS: the generic side of the backends' export_keys (issue 29).
 * This is the first layer only: it asks the backend and checks the answer; the
 * hand-over to the socket (setsockopt TCP_ULP / SOL_TLS) comes later.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <giong/tls/stream.h>

#include "tls_int.h"

/* Whether @k is something <linux/tls.h> can describe: a backend's slip must not
 * reach a setsockopt as a short key. */
static bool keys_sane(const struct giong_tls_keys *k)
{
	if (k->version != GIONG_TLS_KEYS_1_2 && k->version != GIONG_TLS_KEYS_1_3)
		return false;
	switch (k->cipher) {
	case GIONG_TLS_KEYS_AES_GCM_128:
		return k->key_len == 16 && k->iv_len == (k->version == GIONG_TLS_KEYS_1_3 ? 12 : 4);
	case GIONG_TLS_KEYS_AES_GCM_256:
		return k->key_len == 32 && k->iv_len == (k->version == GIONG_TLS_KEYS_1_3 ? 12 : 4);
	case GIONG_TLS_KEYS_CHACHA20_POLY1305:
		return k->key_len == 32 && k->iv_len == 12;
	default:
		return false;
	}
}

int giong__tls_export_keys(struct giong_stream *st, bool tx, struct giong_tls_keys *k)
{
	struct giong_tls_stream *s;
	int r;

	if (!st || !k || !giong_tls_is_tls(st))
		return -EINVAL;
	s = (struct giong_tls_stream *)st; /* base is the first member */
	memset(k, 0, sizeof(*k));
	if (s->be->size <
		    offsetof(struct giong_tls_backend, export_keys) + sizeof(s->be->export_keys) ||
	    !s->be->export_keys)
		return -EOPNOTSUPP;
	if (!s->handshaken || s->closed)
		return -ENOTCONN;
	r = s->be->export_keys(s->conn, tx, k);
	if (r == 0 && !keys_sane(k))
		r = -EPROTO;
	if (r)
		explicit_bzero(k, sizeof(*k));
	return r;
}
