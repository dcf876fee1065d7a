/* SPDX-License-Identifier: MIT */
/* serialize.c - HTTP/1.1 head lines appended to an output batch (serialize.h). */
#include <errno.h>
#include <string.h>

#include <giong/http/status.h>

#include "common/date.h"
#include "common/token.h"
#include "h1/serialize.h"

/* Several pieces as one append: all or nothing. */
static int append_pieces(struct giong__http_out *o, const void *const *p, const size_t *n,
			 unsigned count)
{
	size_t total = 0;
	char *tail;
	int err;

	for (unsigned i = 0; i < count; i++)
		total += n[i];
	err = giong__http_out_grow(o, total, &tail);
	if (err)
		return err;
	for (unsigned i = 0; i < count; i++) {
		memcpy(tail, p[i], n[i]);
		tail += n[i];
	}
	o->len += total;
	return 0;
}

int giong__http_out_status(struct giong__http_out *o, int status)
{
	static const char ok[] = "HTTP/1.1 200 OK\r\n";
	char code[4];
	const char *reason;

	if (status == 200) /* most responses: one copy, no reason lookup */
		return giong__http_out_append(o, ok, sizeof(ok) - 1);
	reason = giong_http_reason(status);

	if (status < 100 || status > 599)
		return -EINVAL;
	code[0] = (char)('0' + status / 100);
	code[1] = (char)('0' + status / 10 % 10);
	code[2] = (char)('0' + status % 10);
	code[3] = ' ';
	const void *p[] = {"HTTP/1.1 ", code, reason, "\r\n"};
	size_t n[] = {9, 4, strlen(reason), 2};
	return append_pieces(o, p, n, 4);
}

int giong__http_out_header(struct giong__http_out *o, const char *name, size_t name_len,
			   const char *value, size_t value_len)
{
	if (!giong__http_is_token(name, name_len) || !giong__http_is_field_value(value, value_len))
		return -EINVAL;
	const void *p[] = {name, ": ", value ? value : "", "\r\n"};
	size_t n[] = {name_len, 2, value_len, 2};
	return append_pieces(o, p, n, 4);
}

int giong__http_out_content_length(struct giong__http_out *o, uint64_t v)
{
	char digits[20];
	size_t i = sizeof(digits);

	do
		digits[--i] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	const void *p[] = {"Content-Length: ", digits + i, "\r\n"};
	size_t n[] = {16, sizeof(digits) - i, 2};
	return append_pieces(o, p, n, 3);
}

int giong__http_out_date(struct giong__http_out *o)
{
	return giong__http_out_append(o, giong__http_date_line(), GIONG__HTTP_DATE_LINE_LEN);
}
