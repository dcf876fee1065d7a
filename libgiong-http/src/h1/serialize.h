/* SPDX-License-Identifier: MIT */
/*
 * serialize.h - HTTP/1.1 head lines appended to an output batch (out.h), for
 * the server's responses and the client's requests. Append only: nothing here
 * writes or waits.
 *
 * What a handler gives (header names and values) is checked here: a name
 * must be a token and a value may hold no CR, LF, NUL or other control byte
 * but HTAB, so that no handler can split a response or inject a header.
 */
#ifndef GIONG_HTTP_SERIALIZE_H
#define GIONG_HTTP_SERIALIZE_H

#include <stddef.h>
#include <stdint.h>

#include "common/out.h"

/* "HTTP/1.1 <status> <reason>\r\n". -EINVAL for a status outside 100..599. */
int giong__http_out_status(struct giong__http_out *o, int status);
/* "<name>: <value>\r\n" after checking both (see the top). -EINVAL for a bad
 * name or value, and nothing is appended. */
int giong__http_out_header(struct giong__http_out *o, const char *name, size_t name_len,
			   const char *value, size_t value_len);
/* "Content-Length: <n>\r\n". */
int giong__http_out_content_length(struct giong__http_out *o, uint64_t n);
/* "Date: <this second's IMF-fixdate>\r\n" (date.h: formatted once a second). */
int giong__http_out_date(struct giong__http_out *o);

#endif /* GIONG_HTTP_SERIALIZE_H */
