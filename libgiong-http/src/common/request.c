/* SPDX-License-Identifier: MIT */
/*
 * request.c - the request API (giong/http/request.h), protocol-neutral: the
 * head's accessors, and the body whole or in pieces through the protocol's
 * body_next() (proto.h), with 100 Continue sent through its interim() when
 * the client waits for it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/conn.h"
#include "common/proto.h"
#include "common/request.h"

/* A span, its length through @len if asked for; "" or NULL when empty. */
static const char *span(const char *p, size_t n, size_t *len, const char *none)
{
	if (len)
		*len = p ? n : 0;
	return p ? p : none;
}

int giong_http_request_method(const struct giong_http_request *r)
{
	return r ? r->head.method_id : GIONG_HTTP_OTHER;
}

const char *giong_http_request_method_name(const struct giong_http_request *r, size_t *len)
{
	return r ? span(r->head.method, r->head.method_len, len, "") : span(NULL, 0, len, "");
}

const char *giong_http_request_target(const struct giong_http_request *r, size_t *len)
{
	return r ? span(r->head.target, r->head.target_len, len, "") : span(NULL, 0, len, "");
}

const char *giong_http_request_path(const struct giong_http_request *r, size_t *len)
{
	return r ? span(r->head.path, r->head.path_len, len, "") : span(NULL, 0, len, "");
}

const char *giong_http_request_query(const struct giong_http_request *r, size_t *len)
{
	return r ? span(r->head.query, r->head.query_len, len, NULL) : span(NULL, 0, len, NULL);
}

const char *giong_http_request_host(const struct giong_http_request *r, size_t *len)
{
	return r ? span(r->head.host, r->head.host_len, len, NULL) : span(NULL, 0, len, NULL);
}

int giong_http_request_version(const struct giong_http_request *r)
{
	return r ? r->head.version_major * 10 + r->head.version_minor : 0;
}

const char *giong_http_request_header(const struct giong_http_request *r, const char *name,
				      size_t *len)
{
	size_t n = name ? strlen(name) : 0;

	if (len)
		*len = 0;
	if (!r || !name)
		return NULL;
	for (uint32_t i = 0; i < r->head.nfields; i++) {
		const struct giong_http_field *f = &r->head.fields[i];

		if (f->name_len == n && !strncasecmp(f->name, name, n)) {
			if (len)
				*len = f->value_len;
			return f->value;
		}
	}
	return NULL;
}

unsigned giong_http_request_header_count(const struct giong_http_request *r)
{
	return r ? r->head.nfields : 0;
}

int giong_http_request_header_at(const struct giong_http_request *r, unsigned i, const char **name,
				 size_t *name_len, const char **value, size_t *value_len)
{
	const struct giong_http_field *f = r && i < r->head.nfields ? &r->head.fields[i] : NULL;

	if (name)
		*name = f ? f->name : NULL;
	if (name_len)
		*name_len = f ? f->name_len : 0;
	if (value)
		*value = f ? f->value : NULL;
	if (value_len)
		*value_len = f ? f->value_len : 0;
	return f ? 0 : -EINVAL;
}

const char *giong_http_request_param(const struct giong_http_request *r, const char *name,
				     size_t *len)
{
	size_t n = name ? strlen(name) : 0;

	if (len)
		*len = 0;
	if (!r || !name)
		return NULL;
	for (unsigned i = 0; i < r->route.nparams; i++) {
		if (r->route.params[i].name_len == n && !memcmp(r->route.params[i].name, name, n)) {
			if (len)
				*len = r->route.params[i].value_len;
			return r->route.params[i].value;
		}
	}
	return NULL;
}

int giong_http_request_client_addr(const struct giong_http_request *r, struct giong_addr *out)
{
	struct giong_http_conn *c;
	int err;

	if (!r || !out || !r->px)
		return -EINVAL;
	c = r->c;
	if (c->client) {
		*out = *c->client;
		return 0;
	}
	err = giong_stream_peer_addr(c->s, out);
	/* A connection accepted as a direct descriptor has no descriptor to ask:
	 * give it one (once; it is a regular socket from then on). Direct
	 * descriptors are used only where the kernel can (net's tcp.h). */
	if (err == -EOPNOTSUPP && giong_stream_fd_install(c->s) >= 0)
		err = giong_stream_peer_addr(c->s, out);
	if (err)
		return err;
	/* A connection's peer does not change: one getpeername() per connection, not
	 * one per request (an access log asks for every request). Not kept if no
	 * memory: asked again next time. */
	if ((c->client = malloc(sizeof(*c->client))))
		*c->client = *out;
	return 0;
}

void giong__http_exchange_begin(struct giong_http_request *req, struct giong_http_response *res,
				const struct giong_http_protocol *ops, void *px,
				struct giong_http_conn *c)
{
	memset(&req->body, 0, sizeof(req->body));
	req->ops = ops;
	req->px = px;
	req->c = c;
	req->res = res;
	memset(res, 0, sizeof(*res));
	res->ops = ops;
	res->px = px;
	res->req = req;
	res->c = c;
	res->status = 200;
}

void giong__http_exchange_end(struct giong_http_request *req)
{
	free(req->body.copy);
	req->body.copy = NULL;
	req->px = NULL;
}

/* Whether the body may be read now: 100 Continue first if it is owed (the
 * client waits for it before it sends the body). */
static int body_ready(struct giong_http_request *r)
{
	struct giong__http_body_read *b = &r->body;

	if (b->error)
		return b->error;
	if (!b->done && r->head.expect_continue && !b->continue_sent) {
		b->continue_sent = true;
		/* The final head already left (a streamed response): a 1xx after it would
		 * be a second status line inside the response. The client has its answer
		 * and sends the body or not (RFC 9110 10.1.1); the read waits for it under
		 * the body timeout. */
		if (r->res->sent_some)
			return 0;
		b->error = r->ops->interim(r, 100);
		giong__http_count_status(r->c->w, 100);
		return b->error;
	}
	return 0;
}

ssize_t giong_http_request_body(struct giong_http_request *r, const void **data)
{
	struct giong__http_body_read *b;
	const char *p;
	ssize_t n;
	int e;

	if (!r || !data || !r->px)
		return -EINVAL;
	b = &r->body;
	*data = "";
	if (b->streamed)
		return -EALREADY;
	if (b->whole) {
		*data = b->whole_data;
		return b->error ? b->error : (ssize_t)b->whole_len;
	}
	b->whole = true;
	b->whole_data = "";
	if ((e = body_ready(r)))
		return e;
	/* A body whose first span is all of it (a sized body already buffered in
	 * one piece) is lent in place. */
	if ((n = r->ops->body_next(r, &p, SIZE_MAX)) < 0)
		return n;
	if (n == 0 || b->done) {
		b->whole_data = n ? p : "";
		b->whole_len = (size_t)n;
		*data = b->whole_data;
		return n;
	}
	/* Grown as bytes come, not sized by the length the client claims: a
	 * client that declares the limit and sends one byte holds 64 KiB, not
	 * the limit. */
	size_t cap = r->head.body == GIONG__HTTP_BODY_LENGTH && r->head.content_length < 65536
			     ? (size_t)r->head.content_length
			     : 65536;

	for (; n > 0; n = r->ops->body_next(r, &p, SIZE_MAX)) {
		if (!b->copy || b->copy_len + (size_t)n > cap) {
			size_t want = b->copy_len + (size_t)n;
			char *c;

			if (want > cap)
				cap = want > cap * 2 ? want : cap * 2;
			if (!(c = realloc(b->copy, cap)))
				return b->error = -ENOMEM;
			b->copy = c;
		}
		memcpy(b->copy + b->copy_len, p, (size_t)n);
		b->copy_len += (size_t)n;
	}
	if (n < 0)
		return n;
	b->whole_data = b->copy ? b->copy : "";
	b->whole_len = b->copy_len;
	*data = b->whole_data;
	return (ssize_t)b->whole_len;
}

ssize_t giong_http_request_read(struct giong_http_request *r, void *buf, size_t len)
{
	struct giong__http_body_read *b;
	const char *p;
	ssize_t n;
	int e;

	if (!r || !r->px || (!buf && len))
		return -EINVAL;
	b = &r->body;
	if (b->whole)
		return -EALREADY;
	b->streamed = true;
	if (!len)
		return 0;
	if ((e = body_ready(r)))
		return e;
	n = r->ops->body_next(r, &p, len);
	if (n > 0)
		memcpy(buf, p, (size_t)n);
	return n;
}

int64_t giong_http_request_content_length(const struct giong_http_request *r)
{
	if (!r)
		return -EINVAL;
	if (r->head.body == GIONG__HTTP_BODY_CHUNKED)
		return -1;
	return r->head.body == GIONG__HTTP_BODY_LENGTH ? (int64_t)r->head.content_length : 0;
}
