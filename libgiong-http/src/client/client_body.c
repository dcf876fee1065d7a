/* SPDX-License-Identifier: MIT */
/*
 * client_body.c - the response body of an exchange (giong/http/client.h):
 * de-framed in place from the connection's receive buffers (sized, chunked
 * through the server's decoder, or to the end of the connection), whole or
 * in pieces, under the body deadline; the end of the exchange, which puts
 * the connection back in the pool or closes it; giong_http_get().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"

/* The next span of body bytes (in place, valid until the next call): its
 * length, 0 at the end, or -errno (sticky). */
static ssize_t body_next(struct giong_http_exchange *ex, const char **data, size_t max)
{
	struct giong__http_cconn *c = ex->conn;
	uint64_t saved;
	ssize_t ret = 0;

	if (ex->body_done || ex->body_error)
		return ex->body_error;
	saved = giong_deadline_set(ex->body_deadline);
	if (ex->pst) {
		ret = giong__http_mux_body_next(ex, data, max);
		ex->body_done = ret == 0;
	}
	for (; !ex->pst;) {
		const char *p;
		ssize_t n = giong__http_input_peek(&c->in, c->s, &p);
		size_t used, off, len;
		int d;

		if (n == 0 && ex->to_close) {
			ex->body_done = true; /* the end of the connection is the body's */
			break;
		}
		if (n <= 0) {
			ret = n ? n : -ECONNRESET; /* it ended before the body did */
			break;
		}
		if (!ex->chunked) {
			size_t k = (size_t)n;

			if (!ex->to_close && (uint64_t)k > ex->left)
				k = (size_t)ex->left;
			if (k > max)
				k = max;
			*data = p;
			giong__http_input_consume(&c->in, k);
			if (!ex->to_close) {
				ex->left -= k;
				ex->body_done = ex->left == 0;
			}
			ret = (ssize_t)k;
			break;
		}
		d = giong__http_chunked_feed(&ex->dec, p, (size_t)n < max ? (size_t)n : max, &used,
					     &off, &len);
		giong__http_input_consume(&c->in, used);
		if (d == GIONG__HTTP_CHUNKED_DATA) {
			*data = p + off;
			ret = (ssize_t)len;
			break;
		}
		if (d == GIONG__HTTP_CHUNKED_DONE) {
			ex->body_done = true;
			break;
		}
		if (d < 0) {
			/* trailers past head_max: too large, not malformed */
			ret = d == -EBADMSG && ex->dec.error == 431 ? -EMSGSIZE : -EBADMSG;
			break;
		}
		/* MORE: all of it was framing; read on */
	}
	giong_deadline_restore(saved);
	if (ret < 0) {
		ex->body_error = (int)ret;
		if (ret == -ETIMEDOUT)
			ex->w->stats.timeouts++;
		else if (ret == -EBADMSG || ret == -EMSGSIZE)
			ex->w->stats.bad_responses++;
	}
	return ret;
}

/* Whether the body may be read: the head is in and nothing failed. */
static int body_ready(const struct giong_http_exchange *ex)
{
	if (ex->state == GIONG__HTTP_EX_FAILED)
		return ex->error;
	return ex->state == GIONG__HTTP_EX_HEAD ? 0 : -EAGAIN;
}

ssize_t giong_http_exchange_body(struct giong_http_exchange *ex, const void **data)
{
	uint64_t max;
	const char *p;
	ssize_t n;
	int e;

	if (!ex || !data)
		return -EINVAL;
	*data = "";
	if ((e = body_ready(ex)))
		return e;
	if (ex->pieces)
		return -EALREADY;
	if (ex->whole) {
		*data = ex->whole_data;
		return ex->body_error ? ex->body_error : (ssize_t)ex->whole_len;
	}
	ex->whole = true;
	ex->whole_data = "";
	max = ex->w->cli->o.body_max;
	if (!ex->chunked && !ex->to_close && ex->left > max) {
		ex->w->stats.bad_responses++;
		return ex->body_error = -EMSGSIZE; /* refused before any of it is read */
	}
	/* A sized body already buffered in one piece is lent in place. */
	if (!ex->pst && !ex->chunked && !ex->to_close && !ex->body_done &&
	    ex->conn->in.len >= ex->left) {
		n = body_next(ex, &p, (size_t)ex->left);
		if (n < 0)
			return n;
		ex->whole_data = p;
		ex->whole_len = (size_t)n;
		*data = p;
		return n;
	}
	ex->copy_len = 0;
	while ((n = body_next(ex, &p, SIZE_MAX)) > 0) {
		size_t want = ex->copy_len + (size_t)n;

		if (want > max) {
			ex->w->stats.bad_responses++;
			return ex->body_error = -EMSGSIZE;
		}
		if (want > ex->copy_cap) {
			/* Grown as bytes come, not sized by the length the server
			 * claims. */
			size_t cap = want < 16384 ? 16384 : want + want / 2;
			char *b = realloc(ex->copy, cap > max ? (size_t)max : cap);

			if (!b)
				return ex->body_error = -ENOMEM;
			ex->copy = b;
			ex->copy_cap = cap > max ? (size_t)max : cap;
		}
		memcpy(ex->copy + ex->copy_len, p, (size_t)n);
		ex->copy_len = want;
	}
	if (n < 0)
		return n;
	ex->whole_data = ex->copy_len ? ex->copy : "";
	ex->whole_len = ex->copy_len;
	*data = ex->whole_data;
	return (ssize_t)ex->whole_len;
}

ssize_t giong_http_exchange_next(struct giong_http_exchange *ex, const void **data)
{
	const char *p = "";
	ssize_t n;
	int e;

	if (!ex || !data)
		return -EINVAL;
	*data = "";
	if ((e = body_ready(ex)))
		return e;
	if (ex->whole)
		return -EALREADY;
	ex->pieces = true;
	n = body_next(ex, &p, SIZE_MAX);
	if (n > 0)
		*data = p;
	return n;
}

ssize_t giong_http_exchange_read(struct giong_http_exchange *ex, void *buf, size_t len)
{
	const char *p;
	ssize_t n;
	int e;

	if (!ex || (!buf && len))
		return -EINVAL;
	if ((e = body_ready(ex)))
		return e;
	if (ex->whole)
		return -EALREADY;
	ex->pieces = true;
	if (!len)
		return 0;
	n = body_next(ex, &p, len);
	if (n > 0)
		memcpy(buf, p, (size_t)n);
	return n;
}

int giong_http_exchange_end(struct giong_http_exchange *ex)
{
	struct giong__http_cworker *w;
	struct giong__http_cconn *c;
	int pooled = 0;

	if (!ex)
		return 0;
	if (giong__http_ex_queued(ex))
		return -EBUSY; /* the pipeline's: giong_http_pipeline_end() ends it */
	w = ex->w;
	if (ex->pl) {
		pooled = giong__http_pipeline_ex_end(ex);
	} else if ((c = ex->conn) && c->session) {
		pooled = giong__http_mux_release(ex); /* its stream ends, never its peers' */
	} else if (c) {
		giong__http_input_message_done(&c->in);
		/* Anything past the response is not a boundary to trust: close. So
		 * is a request whose body was withheld (expect-continue): the
		 * server may still wait for it. */
		if (ex->state == GIONG__HTTP_EX_HEAD && ex->body_done && !ex->body_error &&
		    !ex->withheld && ex->reply.keep_alive && !w->cli->o.no_keep_alive &&
		    !c->in.len && !c->in.blen && !c->in.eof)
			pooled = giong__http_pool_put(c, ex->origin);
		else
			giong__http_cconn_close(c);
	}
	giong__http_origin_put(w, ex->origin);
	giong__http_ex_put(w, ex);
	return pooled;
}

ssize_t giong_http_get(struct giong_http_client *cli, const char *url, int *status, char **body)
{
	struct giong_http_exchange *ex;
	const void *data;
	ssize_t n;
	int r;

	if (!status || !body)
		return -EINVAL;
	*body = NULL;
	*status = 0;
	if ((r = giong_http_exchange_begin(cli, "GET", url, &ex)))
		return r;
	r = giong_http_exchange_response(ex);
	n = r < 0 ? r : giong_http_exchange_body(ex, &data);
	if (n >= 0) {
		if ((*body = malloc((size_t)n + 1))) {
			memcpy(*body, data, (size_t)n);
			(*body)[n] = '\0';
			*status = r;
		} else {
			n = -ENOMEM;
		}
	}
	giong_http_exchange_end(ex);
	return n;
}
