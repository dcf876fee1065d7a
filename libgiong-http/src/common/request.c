/* SPDX-License-Identifier: MIT */
/* request.c - the request accessors (giong/http/request.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/conn.h"
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
		const struct giong__http_field *f = &r->head.fields[i];

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
	const struct giong__http_field *f = r && i < r->head.nfields ? &r->head.fields[i] : NULL;

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
	struct giong__http_conn *c;
	int err;

	if (!r || !out || !r->frame)
		return -EINVAL;
	c = r->frame->c;
	if (c->client) {
		*out = *c->client;
		return 0;
	}
	if ((err = giong_stream_peer_addr(c->s, out)))
		return err;
	/* A connection's peer does not change: one getpeername() per connection, not
	 * one per request (an access log asks for every request). Not kept if no
	 * memory: asked again next time. */
	if ((c->client = malloc(sizeof(*c->client))))
		*c->client = *out;
	return 0;
}
