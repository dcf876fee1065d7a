/* SPDX-License-Identifier: MIT */
/* options.c - the library's answer to `OPTIONS *` (options.h). */
#include <errno.h>
#include <string.h>

#include "common/options.h"
#include "common/request.h"

/* Whether @list (", "-separated) holds @name as a whole item. */
static bool listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; (p = strstr(p, name)); p++)
		if ((p == list || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0'))
			return true;
	return false;
}

/* The server's Allow list: the methods @r has routes for, and OPTIONS (which the
 * server itself answers for `*`), into @allow (GIONG__HTTP_OPTIONS_ALLOW_MAX bytes). */
static void server_allow(const struct giong_http_router *r, char *allow)
{
	size_t used;

	/* Room is kept for OPTIONS at the end: a list cut short still names it. */
	giong__http_router_methods(r, allow,
				   GIONG__HTTP_OPTIONS_ALLOW_MAX - sizeof(", OPTIONS") + 1);
	used = strlen(allow);
	if (!listed(allow, "OPTIONS"))
		memcpy(allow + used, used ? ", OPTIONS" : "OPTIONS",
		       used ? sizeof(", OPTIONS") : sizeof("OPTIONS"));
}

/* Answer @req on @res with @status and the server's Allow: no route ran (the log sees
 * none), and nothing of a body. */
static int answer_allow(struct giong_http_request *req, struct giong_http_response *res,
			const struct giong_http_router *r, int status)
{
	char allow[GIONG__HTTP_OPTIONS_ALLOW_MAX] = "";

	if (!req || !res)
		return -EINVAL;
	memset(&req->route, 0, sizeof(req->route));
	server_allow(r, allow);
	return giong__http_response_simple(res, status, allow, NULL);
}

int giong__http_options_asterisk(struct giong_http_request *req, struct giong_http_response *res,
				 const struct giong_http_router *r)
{
	return answer_allow(req, res, r, 200);
}

int giong__http_refuse_connect(struct giong_http_request *req, struct giong_http_response *res,
			       const struct giong_http_router *r)
{
	/* What follows a CONNECT may be the tunnel's first bytes, sent before the answer
	 * (RFC 9110 9.3.6 lets a client hope): never read as a request. */
	if (res)
		res->close = true;
	return answer_allow(req, res, r, 405);
}
