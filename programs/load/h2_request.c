/* SPDX-License-Identifier: MIT */
/*
 * h2_request.c - giong-load --h2: the URL and the options as the fields every stream sends
 * (RFC 9113 8.3: the pseudo-fields, then the -H fields lowercased), checked once at start-up.
 */
#include "h2.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2_request.h"

#define PROG "giong-load"

#ifdef GIONG_LOAD_HAVE_H2

#define NV_FIXED 5 /* :method :scheme :authority :path, content-length */

bool load_h2_available(void)
{
	return true;
}

const char *load_h2_protocol(const struct load_h2 *h)
{
	return h && h->tls ? "h2" : "h2c";
}

/* Split @url into @h's addresses and its path. 0, -EINVAL or -ENOMEM. */
static int parse_url(struct load_h2 *h, const char *url)
{
	const char *p, *end, *host, *port = NULL;
	size_t hlen;

	if (!strncmp(url, "http://", 7))
		p = url + 7;
	else if (!strncmp(url, "https://", 8))
		p = url + 8, h->tls = true;
	else
		return -EINVAL;
	end = p + strcspn(p, "/?#");
	if (end == p || memchr(p, '@', (size_t)(end - p)))
		return -EINVAL; /* no host, or userinfo (RFC 9110 4.2.4: not sent) */
	if (*p == '[') {
		const char *rb = memchr(p, ']', (size_t)(end - p));

		if (!rb || (rb + 1 != end && rb[1] != ':'))
			return -EINVAL;
		host = p + 1, hlen = (size_t)(rb - host);
		port = rb + 1 < end ? rb + 2 : NULL;
	} else {
		const char *colon = memchr(p, ':', (size_t)(end - p));

		host = p, hlen = (size_t)((colon ? colon : end) - p);
		port = colon ? colon + 1 : NULL;
	}
	if (!hlen || hlen >= sizeof(h->host) || (size_t)(end - p) >= sizeof(h->authority) ||
	    (port && (port == end || strspn(port, "0123456789") != (size_t)(end - port))))
		return -EINVAL;
	memcpy(h->host, host, hlen);
	h->host[hlen] = '\0';
	memcpy(h->authority, p, (size_t)(end - p));
	h->authority[end - p] = '\0';
	snprintf(h->addr, sizeof(h->addr), *p == '[' ? "[%s]:%.*s" : "%s:%.*s", h->host,
		 port ? (int)(end - port) : 3, port ? port : (h->tls ? "443" : "80"));
	/* The path and query, without a fragment (RFC 9113 8.3.1: never empty) */
	hlen = strcspn(end, "#");
	if (!(h->path = malloc(hlen + 2)))
		return -ENOMEM;
	snprintf(h->path, hlen + 2, "%s%.*s", *end == '/' ? "" : "/", (int)hlen, end);
	return 0;
}

static nghttp2_nv nv_of(const char *n, size_t nl, const char *v, size_t vl)
{
	return (nghttp2_nv){(uint8_t *)n, (uint8_t *)v, nl, vl, NGHTTP2_NV_FLAG_NONE};
}

/* Field @i of @a into @h->nv, lowercased (RFC 9113 8.2.1); 1 when Host took :authority. */
static int add_field(struct load_h2 *h, const struct load_h2_args *a, unsigned i)
{
	static const char *const banned[] = {"connection", "keep-alive", "proxy-connection",
					     "transfer-encoding", "upgrade"};
	size_t nl = a->field_len[i][0], vl = a->field_len[i][1];
	char *name = malloc(nl + 1);

	if (!name)
		return -ENOMEM;
	for (size_t j = 0; j < nl; j++)
		name[j] = (char)(a->fields[i][0][j] |
				 ((a->fields[i][0][j] >= 'A' && a->fields[i][0][j] <= 'Z') ? 0x20
											   : 0));
	name[nl] = '\0';
	for (size_t j = 0; j < sizeof(banned) / sizeof(banned[0]); j++)
		if (!strcmp(name, banned[j])) {
			fprintf(stderr,
				PROG ": --h2: -H %s: not a field of HTTP/2 (RFC 9113 8.2.2)\n",
				name);
			free(name);
			return -EINVAL;
		}
	if (!strcmp(name, "host")) {
		free(name);
		if (vl >= sizeof(h->authority))
			return -EINVAL;
		memcpy(h->authority, a->fields[i][1], vl);
		h->authority[vl] = '\0';
		return 1;
	}
	if (!strcmp(name, "content-length"))
		h->clen[0] = '\0'; /* the caller's, not ours */
	h->nv[h->nvlen++] = nv_of(name, nl, a->fields[i][1], vl);
	return 0;
}

int load_h2_new(const struct load_h2_args *a, struct load_h2 **ret)
{
	struct load_h2 *h = calloc(1, sizeof(*h));
	const char *method = a->method ? a->method : "GET";
	int r = -ENOMEM;

	if (!h || !(h->nv = calloc(a->nfields + NV_FIXED, sizeof(*h->nv))))
		goto fail;
	if ((r = parse_url(h, a->url)) == -EINVAL) {
		fprintf(stderr, PROG ": --h2: %s: not an http:// or https:// URL\n", a->url);
		goto fail;
	}
	if (r)
		goto fail;
	h->head = !strcmp(method, "HEAD");
	if (a->body)
		snprintf(h->clen, sizeof(h->clen), "%zu", a->body_len);
	/* The pseudo-fields first (RFC 9113 8.3); :authority's text is final once -H is read. */
	h->nv[0] = nv_of(":method", 7, method, strlen(method));
	h->nv[1] = nv_of(":scheme", 7, h->tls ? "https" : "http", h->tls ? 5 : 4);
	h->nv[2] = nv_of(":authority", 10, h->authority, 0);
	h->nv[3] = nv_of(":path", 5, h->path, strlen(h->path));
	h->nvlen = 4;
	for (unsigned i = 0; i < a->nfields; i++)
		if ((r = add_field(h, a, i)) < 0)
			goto fail;
	h->nv[2].valuelen = strlen(h->authority);
	if (h->clen[0])
		h->nv[h->nvlen++] = nv_of("content-length", 14, h->clen, strlen(h->clen));
	h->body = a->body;
	h->body_len = a->body_len;
	h->streams = a->streams;
	h->timeout_ms = a->timeout_ms;
	h->connect = a->connect;
	h->connect_ctx = a->connect_ctx;
	*ret = h;
	return 0;
fail:
	if (r == -ENOMEM)
		fprintf(stderr, PROG ": out of memory\n");
	load_h2_free(h);
	return r;
}

void load_h2_free(struct load_h2 *h)
{
	if (!h)
		return;
	for (size_t i = 4; i < h->nvlen; i++)
		if (h->nv[i].value != (uint8_t *)h->clen)
			free(h->nv[i].name); /* add_field()'s lowercased copy */
	free(h->nv);
	free(h->path);
	free(h);
}

#else /* !GIONG_LOAD_HAVE_H2 */

struct load_h2 {
	int unused;
};

bool load_h2_available(void)
{
	return false;
}

const char *load_h2_protocol(const struct load_h2 *h)
{
	(void)h;
	return "h2c";
}

int load_h2_new(const struct load_h2_args *a, struct load_h2 **ret)
{
	(void)a, (void)ret;
	fprintf(stderr, PROG ": --h2: this build has no HTTP/2 (built without libnghttp2: "
			     "apt-get install libnghttp2-dev, and rebuild)\n");
	return -ENOTSUP;
}

void load_h2_free(struct load_h2 *h)
{
	(void)h;
}

#endif
