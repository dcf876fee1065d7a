/* SPDX-License-Identifier: MIT */
/* method.c - a method token's enum giong_http_method, for every protocol. */
#include <string.h>

#include <giong/http/method.h>

#include "common/request.h"

int giong__http_method_id(const char *m, size_t len)
{
	static const struct {
		const char *name;
		int id;
	} ids[] = {
		{"GET", GIONG_HTTP_GET},         {"HEAD", GIONG_HTTP_HEAD},
		{"POST", GIONG_HTTP_POST},       {"PUT", GIONG_HTTP_PUT},
		{"DELETE", GIONG_HTTP_DELETE},   {"CONNECT", GIONG_HTTP_CONNECT},
		{"OPTIONS", GIONG_HTTP_OPTIONS}, {"TRACE", GIONG_HTTP_TRACE},
		{"PATCH", GIONG_HTTP_PATCH},
	};
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		if (strlen(ids[i].name) == len && !memcmp(ids[i].name, m, len))
			return ids[i].id;
	return GIONG_HTTP_OTHER;
}
