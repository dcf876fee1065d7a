/* SPDX-License-Identifier: MIT */
/*
 * handshake.c - a TLS stream's birth (giong_tls_accept(), giong_tls_connect(): the
 * backend's handshake over @lower, then kernel TLS where it can be, ktls.c) and the
 * questions about what it settled (ALPN, version, cipher, resumption, the words of
 * the last error). The stream's operations are stream.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "giong_faults.h"
#include "tls_int.h"

#include <giong/tls/stream.h>

/* Stack kept free beyond what a backend's handshake was measured to use. */
#define STACK_MARGIN (8u * 1024)

/* The words of the calling worker's last failed handshake: the stream that
 * held them is gone (giong_tls_last_error(NULL)). */
_Thread_local char giong__tls_handshake_text[GIONG__TLS_ERRTEXT];

/* A handshake refused before the backend had a say (a bad argument, an
 * allocation): its words are the error's. Returns @err. */
static int handshake_refused(int err)
{
	snprintf(giong__tls_handshake_text, sizeof(giong__tls_handshake_text), "%s",
		 giong_strerror(err));
	return err;
}

static void handshake_failed(struct giong_tls_stream *s, int err)
{
	giong__tls_failed(s, err);
	snprintf(giong__tls_handshake_text, sizeof(giong__tls_handshake_text), "%s",
		 s->errtext ? s->errtext : giong_strerror(err));
}

/* --- the handshake ---------------------------------------------------------------------------- */

static int handshake(struct giong_tls_config *cfg, struct giong_stream *lower, bool server,
		     const char *server_name, struct giong_stream **ret)
{
	const struct giong_tls_backend *be;
	struct giong_tls_stream *s;
	size_t head;
	uint64_t saved = GIONG_NO_DEADLINE;
	void *ctx;
	char why[GIONG__TLS_ERRTEXT] = "";
	bool offered = false;
	long left;
	int r, w;

	if (!ret)
		return handshake_refused(-EINVAL);
	*ret = NULL;
	if (!lower || !cfg || !lower->ops)
		return handshake_refused(-EINVAL);
	if ((w = giong_worker_index()) < 0)
		return handshake_refused(GIONG_ENOTWORKER);
	be = cfg->be;
	/* A stack overflow in a handshake is the one failure not to have. */
	left = giong_task_stack_left();
	if (left < 0)
		return handshake_refused((int)left);
	if ((size_t)left < be->stack_need + STACK_MARGIN) {
		snprintf(giong__tls_handshake_text, sizeof(giong__tls_handshake_text),
			 "a %s handshake needs %zu bytes of stack, the task has %ld left", be->name,
			 be->stack_need + STACK_MARGIN, left);
		return GIONG_ESTACK;
	}
	if ((r = giong__tls_config_ctx(cfg, server, &ctx, why, sizeof(why)))) {
		if (!why[0])
			return handshake_refused(r); /* -ENOMEM: the backend may have no words */
		snprintf(giong__tls_handshake_text, sizeof(giong__tls_handshake_text), "%s", why);
		return r;
	}
	head = (sizeof(*s) + 15) & ~(size_t)15;
	if (!(s = calloc(1, head + be->conn_size)))
		return handshake_refused(-ENOMEM);
	s->base.ops = &giong__tls_ops;
	s->base.lower = lower;
	s->cfg = cfg;
	s->be = be;
	s->conn = (char *)s + head;
	s->worker = w;
	s->server = server;
	giong__tls_config_ref(cfg); /* before the backend uses what cfg holds */
	if (!server && server_name && cfg->tickets && !(s->server_name = strdup(server_name))) {
		giong__tls_free_stream(s);
		return handshake_refused(-ENOMEM);
	}
	if ((r = be->conn_init(ctx, s->conn, s, server_name))) {
		s->conn = NULL; /* conn_free is for a conn that was made */
		giong__tls_free_stream(s);
		snprintf(giong__tls_handshake_text, sizeof(giong__tls_handshake_text), "%s",
			 giong_strerror(r));
		return r;
	}
	if (s->server_name && be->session_set) {
		/* Resume the last session this configuration got from that name. */
		unsigned char *blob;
		size_t len;

		if (giong__tls_session_take(cfg, s->server_name, &blob, &len) == 0) {
			offered = be->session_set(s->conn, blob, len) == 0;
			explicit_bzero(blob, len);
			free(blob);
		}
	}
	if (cfg->handshake_ms)
		saved = giong_deadline_in(cfg->handshake_ms);
	s->busy++;
	RUN_BACKEND(s, r, TLS_STEP(GIONG_ETLS_HANDSHAKE, be->handshake(s->conn)));
	if (giong__tls_error(r))
		handshake_failed(s, r);
	else if (r < 0)
		snprintf(giong__tls_handshake_text, sizeof(giong__tls_handshake_text), "%s",
			 giong_strerror(r));
	/* What is left to send: the last flight, or the alert of a failure
	 * (best effort then, under the same deadline). */
	if (s->out_len) {
		int fr = giong__tls_flush(s);

		if (r == 0)
			r = fr;
	}
	s->busy--;
	if (cfg->handshake_ms)
		giong_deadline_restore(saved);
	if (r < 0) {
		/* A session the server would not take must not fail the next
		 * connection too (some clients cannot fall back within one). */
		if (offered && r != -ETIMEDOUT && r != -ECANCELED)
			giong__tls_session_drop(cfg, s->server_name);
		/* lower goes back to the caller: it must not be closed with us. */
		giong__tls_free_stream(s);
		return r;
	}
	s->handshaken = true;
	giong__tls_held_settle(s); /* the records after the last flight, if any */
	giong__tls_ktls_tx(s);
	giong__tls_ktls_rx(s); /* if nothing came after the last flight */
	*ret = &s->base;
	return 0;
}

int giong_tls_accept(struct giong_stream *lower, struct giong_tls_config *cfg,
		     struct giong_stream **ret)
{
	return handshake(cfg, lower, true, NULL, ret);
}

int giong_tls_connect(struct giong_stream *lower, struct giong_tls_config *cfg,
		      const char *server_name, struct giong_stream **ret)
{
	if (ret)
		*ret = NULL;
	if (server_name && !*server_name)
		return handshake_refused(-EINVAL);
	if (cfg && !server_name && (cfg->verify_set ? cfg->verify != GIONG_TLS_VERIFY_NONE : true))
		return handshake_refused(-EINVAL); /* verifying needs the name to verify */
	return handshake(cfg, lower, false, server_name, ret);
}

int giong_tls_wrap_accept(struct giong_stream *accepted, void *cfg, struct giong_stream **ret)
{
	return giong_tls_accept(accepted, cfg, ret);
}

/* --- questions ----------------------------------------------------------------------------- */

bool giong_tls_is_tls(const struct giong_stream *s)
{
	return giong__tls_of(s) != NULL;
}

const char *giong_tls_alpn(const struct giong_stream *st, size_t *len)
{
	const struct giong_tls_stream *s = giong__tls_of(st);
	const char *p = NULL;
	size_t l = 0;

	if (s && s->kept_alpn) { /* kernel TLS: the backend's object may be gone */
		p = s->kept_alpn;
		l = s->kept_alpn_len;
	} else if (s && s->conn && s->be->alpn && s->be->alpn(s->conn, &p, &l) != 0) {
		p = NULL;
		l = 0;
	}
	if (len)
		*len = p ? l : 0;
	return p;
}

const char *giong_tls_version(const struct giong_stream *st)
{
	const struct giong_tls_stream *s = giong__tls_of(st);

	if (s && !s->conn)
		return s->kept_version; /* both directions in the kernel */
	return s && s->be->version ? s->be->version(s->conn) : NULL;
}

const char *giong_tls_cipher(const struct giong_stream *st)
{
	const struct giong_tls_stream *s = giong__tls_of(st);

	if (s && !s->conn)
		return s->kept_cipher;
	return s && s->be->cipher ? s->be->cipher(s->conn) : NULL;
}

int giong_tls_resumed(const struct giong_stream *st)
{
	const struct giong_tls_stream *s = giong__tls_of(st);

	if (!s)
		return -EINVAL;
	if (!s->conn)
		return s->kept_resumed;
	return s->be->resumed && s->be->resumed(s->conn) ? 1 : 0;
}

const char *giong_tls_last_error(const struct giong_stream *st)
{
	const struct giong_tls_stream *s = giong__tls_of(st);

	if (!st)
		return giong__tls_handshake_text;
	return s && s->errtext ? s->errtext : "";
}

const char *giong_tls_backend_name(const struct giong_stream *st)
{
	const struct giong_tls_stream *s = giong__tls_of(st);

	return s ? s->be->name : NULL;
}
