/* SPDX-License-Identifier: MIT */
/* method.c - a method token's enum giong_http_method, for every protocol. */
#include <string.h>

#include <giong/http/method.h>

#include "common/request.h"

int giong__http_method_id(const char *m, size_t len)
{
	/* with their lengths: every request comes here */
	static const struct {
		const char *name;
		size_t len;
		int id;
	} ids[] = {
		{"GET", 3, GIONG_HTTP_GET},         {"HEAD", 4, GIONG_HTTP_HEAD},
		{"POST", 4, GIONG_HTTP_POST},       {"PUT", 3, GIONG_HTTP_PUT},
		{"DELETE", 6, GIONG_HTTP_DELETE},   {"CONNECT", 7, GIONG_HTTP_CONNECT},
		{"OPTIONS", 7, GIONG_HTTP_OPTIONS}, {"TRACE", 5, GIONG_HTTP_TRACE},
		{"PATCH", 5, GIONG_HTTP_PATCH},
	};
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		if (ids[i].len == len && !memcmp(ids[i].name, m, len))
			return ids[i].id;
	return GIONG_HTTP_OTHER;
}
