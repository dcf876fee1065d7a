/* SPDX-License-Identifier: MIT */
/*
 * mux.c - exchanges on a connection that speaks another protocol (HTTP/2,
 * giong_http_client_options.protocols): the request handed to the protocol's
 * client calls as a stream of the connection's session, the response's head
 * and body taken back from them, and the connection shared by every exchange
 * to its origin (origin->mux) while it takes streams, pooled when the last
 * one ends.
 *
 * The request is built as for HTTP/1.1 (exchange.c writes its head into
 * ex->req as it goes, checked there); here it is read back into the fields a
 * protocol sends: the request line gives the method and the path, the Host
 * line the authority, and the fields that only frame an HTTP/1.1 message
 * (Content-Length, Transfer-Encoding, Connection, Expect) are left out: the
 * protocol frames the body itself.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "common/token.h"

/* Fields of ex->req that a protocol does not send. */
static bool framing_field(const char *name, size_t len)
{
	return giong__http_token_eq(name, len, "content-length") ||
	       giong__http_token_eq(name, len, "transfer-encoding") ||
	       giong__http_token_eq(name, len, "connection") ||
	       giong__http_token_eq(name, len, "expect");
}

/* The end of the line at @p (its CR), within @end. */
static const char *line_end(const char *p, const char *end)
{
	const char *q = memchr(p, '\r', (size_t)(end - p));

	return q ? q : end;
}

/* Read ex->req back into @rq (spans into it) and the fields into *@fields (owned:
 * free() it). 0, -ENOMEM, -EINVAL (a head this file did not write: never). */
static int request_out(struct giong_http_exchange *ex, struct giong_http_request_out *rq,
		       struct giong_http_field **fields)
{
	const char *p = ex->req.data, *end = p + ex->req.len, *e, *sp;
	struct giong_http_field *f = NULL;
	uint32_t n = 0, cap = 0;

	memset(rq, 0, sizeof(*rq));
	*fields = NULL;
	/* "METHOD target HTTP/1.1" */
	e = line_end(p, end);
	if (!(sp = memchr(p, ' ', (size_t)(e - p))) || e - sp < 10)
		return -EINVAL;
	rq->method = p;
	rq->method_len = (size_t)(sp - p);
	rq->path = sp + 1;
	rq->path_len = (size_t)(e - 9 - rq->path);
	rq->scheme = ex->origin->tls ? "https" : "http";
	rq->scheme_len = ex->origin->tls ? 5 : 4;
	for (const char *q = e + 2; q < end; q = line_end(q, end) + 2)
		cap++;
	if (cap && !(f = calloc(cap, sizeof(*f))))
		return -ENOMEM;
	for (p = e + 2; p < end; p = e + 2) {
		const char *colon, *v;

		e = line_end(p, end);
		if (e == p)
			break; /* the empty line that ends the head */
		if (!(colon = memchr(p, ':', (size_t)(e - p))))
			continue;
		for (v = colon + 1; v < e && (*v == ' ' || *v == '\t'); v++)
			;
		if (giong__http_token_eq(p, (size_t)(colon - p), "host")) {
			rq->authority = v;
			rq->authority_len = (size_t)(e - v);
			continue;
		}
		if (framing_field(p, (size_t)(colon - p)))
			continue;
		f[n++] = (struct giong_http_field){p, v, (uint32_t)(colon - p), (uint32_t)(e - v)};
	}
	rq->fields = cap ? f : NULL;
	rq->nfields = n;
	*fields = cap ? f : NULL;
	return 0;
}

/* ------------------------------------------------------------ the connection */

bool giong__http_mux_usable(struct giong__http_cconn *c)
{
	int r = c->proto->client_usable(c->session);

	if (r < 0 && c->origin_mux) {
		/* No stream more (a GOAWAY, a failure): new exchanges go elsewhere; it
		 * is closed when its last exchange ends. */
		c->origin_mux->mux = NULL;
		giong__http_origin_put(c->w, c->origin_mux);
		c->origin_mux = NULL;
	}
	return r >= 0;
}

void giong__http_mux_share(struct giong__http_cconn *c, struct giong__http_origin *o)
{
	if (o->mux || c->origin_mux)
		return; /* one shared connection per origin: this one serves its exchange only */
	o->mux = c;
	o->refs++;
	c->origin_mux = o;
}

int giong__http_mux_release(struct giong_http_exchange *ex)
{
	struct giong__http_cconn *c = ex->conn;
	struct giong__http_origin *o;

	if (ex->pst)
		(void)c->proto->client_end(ex->pst); /* reset unless whole: the others go on */
	ex->pst = NULL;
	ex->conn = NULL;
	ex->mrest_len = 0;
	if (--c->users)
		return giong__http_mux_usable(c);
	/* Its last exchange: idle, it goes to the pool while it can take streams. */
	o = c->origin_mux;
	if (o) {
		o->mux = NULL;
		c->origin_mux = NULL;
	}
	/* Pooled when it takes streams and has nothing queued (an exchange ended early
	 * leaves its RST_STREAM unwritten: the server would go on sending, and the pool
	 * close the connection at its first byte anyway). */
	if (c->proto->client_usable(c->session) >= 0 && !c->proto->client_streams(c->session) &&
	    !ex->w->cli->o.no_keep_alive) {
		int pooled = giong__http_pool_put(c, ex->origin);

		if (o)
			giong__http_origin_put(ex->w, o);
		return pooled;
	}
	if (o)
		giong__http_origin_put(ex->w, o);
	giong__http_cconn_close(c);
	return 0;
}

/* ------------------------------------------------------------ the request */

int giong__http_mux_send(struct giong_http_exchange *ex, bool streamed)
{
	struct giong__http_cconn *c = ex->conn;
	struct giong_http_request_out rq;
	struct giong_http_field *fields;
	bool body = streamed || ex->body_len;
	int r;

	if ((r = request_out(ex, &rq, &fields)))
		return r;
	rq.has_body = body;
	/* A sized body says its length (an empty one too, for a method that has a
	 * body, as HTTP/1.1 sends Content-Length: 0). */
	rq.content_length = streamed                         ? -1
			    : (body || !ex->bodiless_method) ? (int64_t)ex->body_len
							     : -1;
	r = c->proto->client_request(c->session, &rq, &ex->pst);
	free(fields);
	if (r)
		return r;
	ex->w->stats.streams++;
	if (c->users > 1)
		ex->w->stats.multiplexed++; /* another exchange uses the connection too */
	if (!streamed && ex->body_len)
		r = c->proto->client_body(ex->pst, ex->body, ex->body_len, true);
	return r;
}

int giong__http_mux_write(struct giong_http_exchange *ex, const void *buf, size_t len, bool last)
{
	return ex->conn->proto->client_body(ex->pst, buf, len, last);
}

/* ------------------------------------------------------------ the response */

int giong__http_mux_head(struct giong_http_exchange *ex)
{
	struct giong__http_reply *rp = &ex->reply;
	struct giong_http_reply_in in;
	int r;

	if (!ex->pst)
		return -ECONNRESET;
	r = ex->conn->proto->client_response(ex->pst, &in);
	if (r < 0)
		return r;
	memset(rp, 0, sizeof(*rp));
	rp->status = in.status;
	rp->version_minor = 1;
	rp->reason = "";
	rp->fields = (struct giong_http_field *)in.fields; /* read-only from here */
	rp->nfields = in.nfields;
	rp->keep_alive = true;
	if (ex->head_request || in.status == 204 || in.status == 304) {
		rp->body = GIONG__HTTP_REPLY_NONE;
	} else if (in.content_length >= 0) {
		rp->body = GIONG__HTTP_REPLY_LENGTH;
		rp->content_length = (uint64_t)in.content_length;
	} else {
		rp->body = GIONG__HTTP_REPLY_CHUNKED; /* the length is not known: -1 */
	}
	return r;
}

ssize_t giong__http_mux_body_next(struct giong_http_exchange *ex, const char **data, size_t max)
{
	const void *p;
	ssize_t n;

	if (!ex->mrest_len) {
		n = ex->conn->proto->client_next(ex->pst, &p);
		if (n <= 0)
			return n;
		ex->mrest = p;
		ex->mrest_len = (size_t)n;
	}
	n = (ssize_t)(ex->mrest_len < max ? ex->mrest_len : max);
	*data = ex->mrest;
	ex->mrest += n;
	ex->mrest_len -= (size_t)n;
	return n;
}
