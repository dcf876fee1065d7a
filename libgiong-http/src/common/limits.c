/* SPDX-License-Identifier: MIT */
/* limits.c - the defaults of struct giong_http_limits, and what can work. */
#include <errno.h>

#include <giong/http/limits.h>

int giong_http_limits_init(struct giong_http_limits *l)
{
	if (!l)
		return -EINVAL;
	*l = (struct giong_http_limits){
		.request_line = GIONG_HTTP_LIMIT_REQUEST_LINE,
		.head = GIONG_HTTP_LIMIT_HEAD,
		.fields = GIONG_HTTP_LIMIT_FIELDS,
		.body = GIONG_HTTP_LIMIT_BODY,
		.head_timeout_ms = GIONG_HTTP_LIMIT_HEAD_TIMEOUT_MS,
		.idle_timeout_ms = GIONG_HTTP_LIMIT_IDLE_TIMEOUT_MS,
		.body_timeout_ms = GIONG_HTTP_LIMIT_BODY_TIMEOUT_MS,
		.write_timeout_ms = GIONG_HTTP_LIMIT_WRITE_TIMEOUT_MS,
		.connections = GIONG_HTTP_LIMIT_CONNECTIONS,
	};
	return 0;
}

int giong_http_limits_check(const struct giong_http_limits *l)
{
	if (!l || !l->request_line || !l->head || !l->fields || !l->body || !l->head_timeout_ms ||
	    !l->idle_timeout_ms || !l->body_timeout_ms || !l->write_timeout_ms || !l->connections)
		return -EINVAL;
	if (l->request_line > l->head || l->head > 16u * 1024 * 1024 || l->fields > 65535)
		return -EINVAL;
	return 0;
}
