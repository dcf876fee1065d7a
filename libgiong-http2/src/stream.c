/* SPDX-License-Identifier: MIT */
/*
 * stream.c - an HTTP/2 stream's life (h2.h): made at its first HEADERS,
 * its head checked and answered in a task of its own (from the stack pool)
 * through the common dispatch, freed once the task ended and nghttp2
 * closed it, whichever comes last.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "h2.h"

struct h2_stream *h2_stream_new(struct h2_conn *h, int32_t id)
{
	struct h2_stream *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->h = h;
	st->id = id;
	st->head.content_length = -1;
	st->file_fd = -1;
	st->head.version_major = 2;
	giong_waitq_init(&st->wait);
	st->next = h->streams;
	if (h->streams)
		h->streams->prev = st;
	h->streams = st;
	h->nstreams++;
	return st;
}

static void free_chunks(struct h2_chunk *c)
{
	while (c) {
		struct h2_chunk *n = c->next;

		free(c);
		c = n;
	}
}

void h2_stream_maybe_free(struct h2_stream *st)
{
	struct h2_conn *h = st->h;

	if (st->task || !st->closed || h->splice_st == st)
		return; /* a pending splice's end comes back here */
	if (st->prev)
		st->prev->next = st->next;
	else
		h->streams = st->next;
	if (st->next)
		st->next->prev = st->prev;
	h->nstreams--;
	for (uint32_t i = 0; i < st->nrefs; i++)
		nghttp2_rcbuf_decref(st->refs[i]);
	free(st->refs);
	free(st->fields);
	free_chunks(st->in);
	free_chunks(st->read);
	free(st->nva);
	free(st->nvbuf);
	free(st->out);
	h2_file_drop(st);
	free(st);
	h2_maybe_idle(h);
}

void h2_stream_wake(struct h2_stream *st)
{
	giong_waitq_wake_all(&st->wait, 0);
}

int h2_stream_data(struct h2_stream *st, const uint8_t *p, size_t len)
{
	struct h2_chunk *c;

	/* The connection's window opens at once, the stream's as the handler reads:
	 * one handler that does not read holds back its own stream only, and what
	 * a connection buffers is at most stream_window per running handler. */
	nghttp2_session_consume_connection(st->h->s, len);
	st->received += len;
	if (st->received > st->body_limit || st->over_limit) {
		/* Past the limit nothing is kept: the reader sees -EMSGSIZE. */
		st->over_limit = true;
		nghttp2_session_consume_stream(st->h->s, st->id, len);
		h2_stream_wake(st);
		return 0;
	}
	if (!(c = malloc(sizeof(*c) + len)))
		return -ENOMEM;
	c->next = NULL;
	c->len = len;
	c->off = 0;
	memcpy(c->data, p, len);
	if (st->in_tail)
		st->in_tail->next = c;
	else
		st->in = c;
	st->in_tail = c;
	h2_stream_wake(st);
	return 0;
}

/* Answer the stream: its head checked, the dispatch, its end queued. */
static intptr_t stream_task(void *arg)
{
	struct h2_stream *st = arg;
	struct h2_conn *h = st->h;
	int refuse = st->refuse, r;

	st->head.fields = st->fields;
	st->head.nfields = st->nfields;
	if (!st->head.method || !st->head.path) {
		refuse = 400; /* CONNECT without a path: not served here */
		st->head.method = st->head.method ? st->head.method : "";
		st->head.path = "";
	}
	if (!refuse && (r = giong_http_request_head_set(st->req, &st->head)))
		refuse = r > 0 ? r : 400;
	else if (refuse)
		giong_http_conn_stats(h->c)->refused++;
	r = giong_http_exchange_run(st->req, refuse);
	/* A response that broke, or none at all: the stream is reset. (One answered
	 * before the request's end stays half-closed: what more comes is dropped.) */
	if ((r < 0 || !st->submitted) && !st->closed)
		nghttp2_submit_rst_stream(h->s, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_INTERNAL_ERROR);
	/* A response that asks to close (HTTP/1.1's 413, a handler's choice) ends only
	 * its stream here; shutdown ends the connection (h2_task_ended()). */
	/* Bytes received and never read give their window back. */
	for (struct h2_chunk *c = st->in; c && !st->closed; c = c->next)
		nghttp2_session_consume_stream(h->s, st->id, c->len - c->off);
	giong_http_exchange_free(st->req);
	st->req = NULL;
	st->res = NULL;
	st->task = false;
	h2_want_write(h);
	h2_stream_maybe_free(st);
	h2_task_ended(h);
	return 0;
}

int h2_stream_start(struct h2_stream *st)
{
	struct h2_conn *h = st->h;
	int r;

	if ((r = giong_http_exchange_new(h->c, st, &st->req, &st->res)))
		return r;
	st->body_limit = UINT64_MAX; /* until the dispatch's body_begin() */
	st->task = true;
	h->tasks++;
	if ((r = giong_spawn(stream_task, st, NULL))) {
		giong_http_exchange_free(st->req);
		st->req = NULL;
		st->res = NULL;
		st->task = false;
		h->tasks--;
		return r;
	}
	return 0;
}
