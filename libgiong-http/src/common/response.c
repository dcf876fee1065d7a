/* SPDX-License-Identifier: MIT */
/*
 * response.c - the response API (giong/http/response.h), protocol-neutral:
 * the handler's calls checked, the response's state kept (started, ended,
 * streaming, counted), and the wire left to the connection's protocol
 * (proto.h). The library's own responses (errors, 404, 405) and what a
 * handler left unfinished are answered here too, for every protocol.
 */
#include <errno.h>
#include <string.h>

#include <giong/http/status.h>

#include "common/conn.h"
#include "common/request.h"
#include "common/token.h"

bool giong_http_response_started(const struct giong_http_response *res)
{
	return res && res->started;
}

int giong_http_response_close(struct giong_http_response *res)
{
	if (!res)
		return -EINVAL;
	res->close = true;
	return 0;
}

int giong_http_response_status(struct giong_http_response *res, int status)
{
	if (!res || status < 200 || status > 599)
		return -EINVAL;
	if (res->started)
		return -EALREADY;
	res->status = status;
	return 0;
}

/* The head's beginning (the status, Date, Server), once. */
static int start_head(struct giong_http_response *res)
{
	int r;

	if (res->started)
		return 0;
	if ((r = res->ops->head_start(res)))
		return r;
	res->started = true;
	return 0;
}

/* The framing and the end of the head: @length bytes of body, or -1 for a
 * streamed one. Counted as a response of its status. */
static int end_head(struct giong_http_response *res, int64_t length)
{
	int r = res->ops->head_end(res, length);

	if (!r)
		giong__http_count_status(res->c->w, res->status);
	return r;
}

static bool is_framing(const char *name, size_t len)
{
	/* By length first: this runs for every field a handler adds. */
	switch (len) {
	case 4:
		return giong__http_token_eq(name, len, "date");
	case 6:
		return giong__http_token_eq(name, len, "server");
	case 7:
		return giong__http_token_eq(name, len, "upgrade") ||
		       giong__http_token_eq(name, len, "trailer");
	case 10:
		return giong__http_token_eq(name, len, "connection") ||
		       giong__http_token_eq(name, len, "keep-alive");
	case 14:
		return giong__http_token_eq(name, len, "content-length");
	case 17:
		return giong__http_token_eq(name, len, "transfer-encoding");
	default:
		return false;
	}
}

int giong_http_response_header_n(struct giong_http_response *res, const char *name, size_t name_len,
				 const char *value, size_t value_len)
{
	int r;

	if (!res || !name || (!value && value_len) || is_framing(name, name_len))
		return -EINVAL;
	if (res->ended || res->streaming)
		return -EALREADY;
	if (!giong__http_is_token(name, name_len) || !giong__http_is_field_value(value, value_len))
		return -EINVAL;
	if ((r = start_head(res)))
		return r;
	return res->ops->head_field(res, name, name_len, value, value_len);
}

int giong_http_response_header(struct giong_http_response *res, const char *name, const char *value)
{
	if (!name || !value)
		return -EINVAL;
	return giong_http_response_header_n(res, name, strlen(name), value, strlen(value));
}

static bool is_head(const struct giong_http_response *res)
{
	return res->req->head.method_id == GIONG_HTTP_HEAD;
}

/* The head of a response whose body has @len bytes (send and sendfile),
 * which ends it. Returns 1 when the body's bytes are to be written, 0 when
 * none are (HEAD, an empty body), or -errno. */
static int sized_body(struct giong_http_response *res, uint64_t len)
{
	int r;

	if (res->ended || res->streaming)
		return -EALREADY;
	if (len && (res->status == 204 || res->status == 304))
		return -EINVAL;
	if ((r = start_head(res)) || (r = end_head(res, (int64_t)len)))
		return r;
	res->ended = true;
	if (is_head(res) || !len)
		return 0;
	res->body_bytes = len;
	return 1;
}

int giong_http_response_send(struct giong_http_response *res, const void *body, size_t len)
{
	int r;

	if (!res || (!body && len))
		return -EINVAL;
	if ((r = sized_body(res, len)) <= 0)
		return r;
	return res->ops->body(res, body, len);
}

/* Begin a streamed body: the head, its end saying so. */
static int start_stream(struct giong_http_response *res)
{
	int r;

	if (res->streaming)
		return 0;
	if (res->status == 204 || res->status == 304)
		return -EINVAL;
	if ((r = start_head(res)) || (r = end_head(res, -1)))
		return r;
	res->streaming = true;
	return 0;
}

int giong_http_response_write(struct giong_http_response *res, const void *buf, size_t len)
{
	int r;

	if (!res || (!buf && len))
		return -EINVAL;
	if (res->ended)
		return -EALREADY;
	if ((r = start_stream(res)))
		return r;
	if (!len || is_head(res))
		return 0;
	res->body_bytes += len;
	return res->ops->body_write(res, buf, len);
}

int giong_http_response_end(struct giong_http_response *res)
{
	int r;

	if (!res)
		return -EINVAL;
	if (res->ended)
		return -EALREADY;
	if ((r = start_stream(res)))
		return r;
	res->ended = true;
	if (is_head(res))
		return 0;
	return res->ops->body_end(res);
}

int giong_http_response_sendfile(struct giong_http_response *res, int fd, off_t offset,
				 uint64_t len)
{
	int r;

	if (!res || fd < 0 || offset < 0 || len > INT64_MAX)
		return -EINVAL;
	if ((r = sized_body(res, len)) <= 0)
		return r;
	return res->ops->sendfile(res, fd, offset, len);
}

int giong__http_response_simple(struct giong_http_response *res, int status, const char *allow,
				const char *text)
{
	size_t len = text ? strlen(text) : 0;
	int r;

	res->status = status;
	if ((r = start_head(res)))
		return r;
	if (allow && (r = res->ops->head_field(res, "Allow", 5, allow, strlen(allow))))
		return r;
	if (text && (r = res->ops->head_field(res, "Content-Type", 12, "text/plain", 10)))
		return r;
	if ((r = end_head(res, (int64_t)len)))
		return r;
	res->ended = true;
	if (text && !is_head(res) && (r = res->ops->body(res, text, len)))
		return r;
	return 0;
}

/* The status a handler's error gets, before anything was sent. */
static int error_status(int err)
{
	switch (err) {
	case -EMSGSIZE:
		return 413;
	case -ETIMEDOUT:
		return 408;
	case -EBADMSG:
	case -ECONNRESET:          /* the body ended early: the request is incomplete */
	case GIONG_ETLS_TRUNCATED: /* the same over TLS, without close_notify */
		return 400;
	default:
		return 500;
	}
}

int giong__http_response_finish(struct giong_http_response *res, int hr)
{
	int r;

	if (hr < 0 && res->c->broken)
		return hr; /* the connection failed under the handler */
	if (hr < 0 && res->ended) {
		/* The response was whole: it stands, but a failed handler's
		 * connection is closed after it (router.h). */
		res->close = true;
		return 0;
	}
	if (hr < 0 && res->started && !res->sent_some) {
		/* Nothing of it left yet: take the begun head back, answer 500. */
		res->ops->head_cancel(res);
		res->started = res->ended = res->streaming = false;
	}
	if (hr < 0 && res->started) {
		/* Half a response went: what follows cannot be trusted; close. */
		res->close = true;
		res->ended = true;
		return hr;
	}
	if (hr < 0 || !res->started) {
		int status = hr < 0 ? error_status(hr) : 500;

		if (status != 500)
			res->close = true; /* the body was not read to its end */
		return giong__http_response_simple(res, status, NULL, NULL);
	}
	if (!res->ended && (r = giong_http_response_end(res)))
		return r;
	return 0;
}
