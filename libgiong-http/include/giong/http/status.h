/* SPDX-License-Identifier: MIT */
/* giong/http/status.h - HTTP status codes and their reason phrases (RFC 9110). */
#ifndef GIONG_HTTP_STATUS_H
#define GIONG_HTTP_STATUS_H

#include <giong/core/api.h>

GIONG_BEGIN_DECLS

/*
 * giong_http_reason() - the reason phrase RFC 9110 gives @status ("OK",
 * "Not Found"), a static string; "" (never NULL) for a code it does not
 * name, any value outside 100..599 included.
 */
GIONG_API const char *giong_http_reason(int status);

GIONG_END_DECLS

#endif /* GIONG_HTTP_STATUS_H */
