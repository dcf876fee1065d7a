/* SPDX-License-Identifier: MIT */
/*
 * protocol.c - the calls a protocol library makes back into the server
 * (giong/http/protocol.h): its connection's stream, batch, parking and
 * closing, and its exchanges: a request head checked as HTTP/1.1 checks its
 * own, then answered by the common dispatch.
 *
 * Each is a thin door onto what conn.c, request.c and dispatch.c do for
 * HTTP/1.1, with the arguments checked: a protocol is another library, and
 * a bad pointer from it is answered with -EINVAL, not followed.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <giong/http/method.h>

#include "common/authority.h"
#include "common/conn.h"
#include "common/date.h"
#include "common/request.h"
#include "common/token.h"

struct giong_stream *giong_http_conn_stream(struct giong_http_conn *c)
{
	return c ? c->s : NULL;
}

const struct giong_http_limits *giong_http_conn_limits(const struct giong_http_conn *c)
{
	return c ? &c->w->srv->limits : NULL;
}

struct giong_http_stats *giong_http_conn_stats(struct giong_http_conn *c)
{
	return c ? &c->w->stats : NULL;
}

bool giong_http_conn_shutting_down(const struct giong_http_conn *c)
{
	return c ? giong__http_shutting_down(c) : giong_is_shutting_down();
}

const char *giong_http_date_now(void)
{
	_Static_assert(GIONG_HTTP_DATE_LEN == GIONG__HTTP_DATE_LEN, "one Date length");
	return giong__http_date_now();
}

const struct giong_http_protocol *giong_http_conn_protocol(const struct giong_http_conn *c)
{
	return c ? c->proto : NULL;
}

void *giong_http_conn_state(const struct giong_http_conn *c)
{
	return c ? c->pstate : NULL;
}

void giong_http_conn_set_state(struct giong_http_conn *c, void *state)
{
	if (c)
		c->pstate = state;
}

size_t giong_http_conn_handed_input(struct giong_http_conn *c, const char **p)
{
	if (!c || !p)
		return 0;
	if (!c->handed) {
		*p = "";
		return 0;
	}
	*p = c->handed->data;
	return c->handed->len;
}

void giong_http_conn_handed_input_done(struct giong_http_conn *c)
{
	if (c)
		giong__http_conn_drop_handed(c);
}

int giong_http_conn_append(struct giong_http_conn *c, const void *p, size_t len)
{
	struct giong__http_batch *b;

	if (!c || (!p && len))
		return -EINVAL;
	if (c->broken || !c->s)
		return -EPIPE;
	if (c->sending)
		return -EBUSY; /* the kernel reads the batch until batch_sent() */
	if (!(b = giong__http_conn_batch(c)))
		return -ENOMEM;
	return len ? giong__http_out_append(&b->out, p, len) : 0;
}

size_t giong_http_conn_queued(const struct giong_http_conn *c)
{
	return c && c->batch && !c->sending ? c->batch->out.len : 0;
}

bool giong_http_conn_sending(const struct giong_http_conn *c)
{
	return c && c->sending;
}

int giong_http_conn_flush(struct giong_http_conn *c)
{
	if (!c)
		return -EINVAL;
	if (!c->s)
		return -EPIPE;
	return giong__http_conn_send_start(c);
}

/* The calling task's own wait queue for the connection's waits. */
int giong_http_conn_write(struct giong_http_conn *c)
{
	struct giong_waitq wq;

	if (!c)
		return -EINVAL;
	if (!c->s)
		return -EPIPE;
	if (!giong__http_conn_batch(c))
		return -ENOMEM;
	giong_waitq_init(&wq);
	return giong__http_conn_write(c, &wq, NULL, 0);
}

int giong_http_conn_splice(struct giong_http_conn *c, int fd, off_t off, size_t len)
{
	struct giong_waitq wq;

	if (!c || fd < 0 || off < 0)
		return -EINVAL;
	if (!c->s || c->broken)
		return -EPIPE;
	if (!giong__http_conn_batch(c))
		return -ENOMEM;
	if (!len)
		return 0;
	giong_waitq_init(&wq);
	return giong__http_conn_splice(c, &wq, fd, (uint64_t)off, len);
}

int giong_http_conn_wait_sent(struct giong_http_conn *c)
{
	struct giong_waitq wq;

	if (!c)
		return -EINVAL;
	giong_waitq_init(&wq);
	return giong__http_conn_wait_sent(c, &wq);
}

int giong_http_conn_park(struct giong_http_conn *c, bool idle)
{
	if (!c || !c->s)
		return -EINVAL;
	return idle ? giong__http_conn_park(c) : giong__http_conn_wait_bytes(c);
}

int giong_http_conn_idle(struct giong_http_conn *c)
{
	if (!c || !c->s)
		return -EINVAL;
	return giong__http_conn_make_idle(c);
}

void giong_http_conn_close(struct giong_http_conn *c)
{
	if (c)
		giong__http_conn_close(c);
}

void giong_http_conn_linger(struct giong_http_conn *c)
{
	if (c)
		giong__http_conn_linger(c);
}

/* ------------------------------------------------------------ exchanges */

struct exchange {
	struct giong_http_request req;
	struct giong_http_response res;
};

int giong_http_exchange_new(struct giong_http_conn *c, void *px, struct giong_http_request **req,
			    struct giong_http_response **res)
{
	struct exchange *x;

	if (!c || !req || !res || !c->proto)
		return -EINVAL;
	if (!(x = calloc(1, sizeof(*x))))
		return -ENOMEM;
	giong__http_exchange_begin(&x->req, &x->res, c->proto, px, c);
	*req = &x->req;
	*res = &x->res;
	return 0;
}

void *giong_http_exchange_state(const struct giong_http_request *req)
{
	return req ? req->px : NULL;
}

void *giong_http_response_exchange_state(const struct giong_http_response *res)
{
	return res ? res->px : NULL;
}

int giong_http_response_status_code(const struct giong_http_response *res)
{
	return res ? res->status : -EINVAL;
}

struct giong_http_request *giong_http_response_request(struct giong_http_response *res)
{
	return res ? res->req : NULL;
}

/* An origin-form path (and query), or "*": visible ASCII without '#'. */
static bool path_valid(const char *p, size_t n)
{
	if (!n || (p[0] != '/' && !(n == 1 && p[0] == '*')))
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)p[i] <= 0x20 || (unsigned char)p[i] >= 0x7f || p[i] == '#')
			return false;
	return true;
}

int giong_http_request_head_set(struct giong_http_request *req, const struct giong_http_head_in *h)
{
	struct giong__http_head *d;
	const char *q;

	if (!req || !h || !h->method || !h->path || (!h->fields && h->nfields))
		return -EINVAL;
	d = &req->head;
	memset(d, 0, sizeof(*d));
	d->method = h->method;
	d->method_len = (uint32_t)h->method_len;
	d->method_id = giong__http_method_id(h->method, h->method_len);
	d->target = h->path;
	d->target_len = (uint32_t)h->path_len;
	d->fields = (struct giong_http_field *)h->fields;
	d->nfields = h->nfields;
	d->version_major = h->version_major;
	d->version_minor = h->version_minor;
	d->keep_alive = true; /* the protocol's connection outlives its exchanges */
	if (h->content_length >= 0) {
		d->body = GIONG__HTTP_BODY_LENGTH;
		d->content_length = (uint64_t)h->content_length;
	} else if (h->has_body) {
		d->body = GIONG__HTTP_BODY_CHUNKED; /* a length only its end will tell */
	}
	if (!h->method_len || h->method_len > UINT32_MAX || h->path_len > UINT32_MAX ||
	    !giong__http_is_token(h->method, h->method_len) || !path_valid(h->path, h->path_len))
		goto bad;
	if (d->method_id == GIONG_HTTP_CONNECT)
		goto bad; /* a tunnel (extended CONNECT or not) is not served here */
	if (h->path[0] == '*') {
		if (d->method_id != GIONG_HTTP_OPTIONS)
			goto bad;
		d->form = GIONG__HTTP_ASTERISK_FORM;
	} else {
		d->form = GIONG__HTTP_ORIGIN_FORM;
		d->path = h->path;
		q = memchr(h->path, '?', h->path_len);
		d->path_len = q ? (uint32_t)(q - h->path) : (uint32_t)h->path_len;
		if (q) {
			d->query = q + 1;
			d->query_len = (uint32_t)(h->path_len - d->path_len - 1);
		}
	}
	/* RFC 9113 8.3.1: :authority, or Host; the same grammar as HTTP/1.1's Host. */
	if (h->authority) {
		if (h->authority_len > UINT32_MAX ||
		    !giong__http_authority_valid(h->authority, h->authority_len))
			goto bad;
		d->host = h->authority;
		d->host_len = (uint32_t)h->authority_len;
	}
	return 0;
bad:
	req->c->w->stats.refused++;
	return 400;
}

int giong_http_exchange_run(struct giong_http_request *req, int refuse)
{
	struct giong_http_response *res;
	int r;

	if (!req || !req->px || (refuse && (refuse < 400 || refuse > 599)))
		return -EINVAL;
	res = req->res;
	req->c->w->stats.requests++;
	if (!refuse)
		return giong__http_dispatch(req, res);
	req->body.done = true; /* the head was not taken: nor is its body */
	r = giong__http_response_simple(res, refuse, NULL, NULL);
	if (r == 0)
		giong__http_log(req, res);
	return r;
}

bool giong_http_response_wants_close(const struct giong_http_response *res)
{
	return res && res->close;
}

void giong_http_response_set_sent(struct giong_http_response *res)
{
	if (res)
		res->sent_some = true;
}

void giong_http_request_body_done(struct giong_http_request *req)
{
	if (req)
		req->body.done = true;
}

void giong_http_exchange_free(struct giong_http_request *req)
{
	struct exchange *x;

	if (!req)
		return;
	x = (struct exchange *)((char *)req - offsetof(struct exchange, req));
	giong__http_exchange_end(req);
	free(x);
}
