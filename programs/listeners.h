/* SPDX-License-Identifier: MIT */
/*
 * listeners.h - the HTTP programs (examples/http, programs/serve): one worker serving several
 * listeners (IPv4 and IPv6, HTTP and HTTPS), each from a task of its own but the last, which
 * the worker's main task serves: a worker whose main task returns is given the grace period
 * and stopped, so the main task must be the one that lasts until shutdown.
 */
#ifndef GIONG_TOOLS_LISTENERS_H
#define GIONG_TOOLS_LISTENERS_H

#include <stdio.h>
#include <stdlib.h>

#include <giong/http.h>

/* A listener and the server that answers its connections. */
struct tool_listener {
	struct giong_http_server *srv;
	struct giong_listener *l;
	const char *prog; /* for messages */
};

/* Serve @t's listener until shutdown, then close it. */
static inline void tool_serve_one(const struct tool_listener *t)
{
	int r = giong_http_serve(t->srv, t->l);

	if (r && r != GIONG_ESHUTDOWN)
		fprintf(stderr, "%s: worker %d: serving stopped: %s\n", t->prog,
			giong_worker_index(), giong_strerror(r));
	giong_listener_close(t->l);
}

static inline intptr_t tool_serve_task(void *arg)
{
	tool_serve_one(arg);
	free(arg);
	return 0;
}

/* Serve the @n (>= 1) listeners of @ls on the calling worker, until shutdown: all but the
 * last from tasks of their own (a listener whose task cannot start is closed), the last from
 * the calling task. */
static inline void tool_serve_all(const struct tool_listener *ls, unsigned n)
{
	for (unsigned i = 0; i + 1 < n; i++) {
		struct tool_listener *t = malloc(sizeof(*t));

		if (t)
			*t = ls[i];
		if (!t || giong_spawn(tool_serve_task, t, NULL)) {
			free(t);
			giong_listener_close(ls[i].l);
		}
	}
	tool_serve_one(&ls[n - 1]);
}

#endif /* GIONG_TOOLS_LISTENERS_H */
