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

int giong__http_options_asterisk(struct giong_http_request *req, struct giong_http_response *res,
				 const struct giong_http_router *r)
{
	char allow[GIONG__HTTP_OPTIONS_ALLOW_MAX] = "";
	size_t used;

	if (!req || !res)
		return -EINVAL;
	memset(&req->route, 0, sizeof(req->route));
	/* Room is kept for OPTIONS at the end: a list cut short still names it. */
	giong__http_router_methods(r, allow, sizeof(allow) - sizeof(", OPTIONS") + 1);
	used = strlen(allow);
	if (!listed(allow, "OPTIONS"))
		memcpy(allow + used, used ? ", OPTIONS" : "OPTIONS",
		       used ? sizeof(", OPTIONS") : sizeof("OPTIONS"));
	return giong__http_response_simple(res, 200, allow, NULL);
}
