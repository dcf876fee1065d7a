/* SPDX-License-Identifier: MIT */
/*
 * handler.c - giong-serve's answer to a GET or HEAD: the target's path decoded (path.c),
 * opened beneath the root through the worker's open-file cache (fcache.c), then a file
 * (with its validators, conditionals, a range, a precompressed sibling), a directory's
 * index.html or listing, a redirect to the directory's URL, or an error status.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <giong/http.h>

#include "cond.h"
#include "fcache.h"
#include "mime.h"
#include "path.h"
#include "serve.h"

struct serve_settings serve_cfg;

/* The calling worker's open-file cache (serve_worker_cache_set()). */
static _Thread_local struct serve_fcache *worker_cache;

void serve_worker_cache_set(struct serve_fcache *c)
{
	worker_cache = c;
}

struct serve_fcache *serve_worker_cache(void)
{
	return worker_cache;
}

int serve_answer_status(struct giong_http_response *res, int status)
{
	char body[64];
	int n = snprintf(body, sizeof(body), "%d %s\n", status, giong_http_reason(status));
	int r = giong_http_response_status(res, status);

	if (!r)
		r = giong_http_response_header(res, "Content-Type", "text/plain; charset=utf-8");
	return r ? r : giong_http_response_send(res, body, (size_t)n);
}

/* The status for an open's error: whatever the reason, a path the kernel refused to
 * resolve beneath the root is "not found", as a missing one. */
static int status_for(int err)
{
	switch (err) {
	case -ENOENT:
	case -ENOTDIR:
	case -EXDEV:        /* RESOLVE_BENEATH: it leaves the root */
	case -ELOOP:        /* too many links, or a magic link */
	case -ENAMETOOLONG: /* longer than a name can be */
		return 404;
	case -EACCES:
	case -EPERM:
	case -ENXIO: /* a socket, a device without a driver */
		return 403;
	case -EMFILE:
	case -ENFILE:
		return 503;
	default:
		return 500;
	}
}

/* Does the root-relative @rel name something hidden: a segment starting with '.' (".git",
 * ".env", "a/.htpasswd")? "/.well-known/" at the root is not hidden (RFC 8615). */
static bool is_hidden(const char *rel, size_t len)
{
	static const char wk[] = ".well-known";
	size_t i = 0;

	if (len >= sizeof(wk) - 1 && !memcmp(rel, wk, sizeof(wk) - 1) &&
	    (len == sizeof(wk) - 1 || rel[sizeof(wk) - 1] == '/'))
		i = sizeof(wk) - 1; /* past it: what is inside is judged as anything else */
	for (; i < len; i++)
		if (rel[i] == '.' && (i == 0 || rel[i - 1] == '/'))
			return true;
	return false;
}

/* 301 to the directory's URL: its normalised path, percent-encoded, with a '/' added, and
 * the query. Never the path as sent: "//host/dir" (a directory "host/dir" under the root)
 * would be a Location a browser reads as another host's. */
static int redirect_dir(struct giong_http_request *req, struct giong_http_response *res,
			const char *rel, size_t len)
{
	size_t qlen, elen = serve_url_encode(rel, len, NULL, 0);
	const char *q = giong_http_request_query(req, &qlen);
	size_t cap = elen + qlen + 4;
	char *loc = malloc(cap);
	int r;

	if (!loc)
		return -ENOMEM;
	loc[0] = '/';
	serve_url_encode(rel, len, loc + 1, elen + 1);
	snprintf(loc + 1 + elen, cap - 1 - elen, "/%s%.*s", q ? "?" : "", (int)qlen, q ? q : "");
	r = giong_http_response_status(res, 301);
	if (!r)
		r = giong_http_response_header(res, "Location", loc);
	free(loc);
	if (!r)
		r = giong_http_response_header(res, "Content-Type", "text/plain; charset=utf-8");
	return r ? r : giong_http_response_send(res, "301 Moved Permanently\n", 22);
}

/* A field of the request as a span; NULL when absent. */
static const char *field(const struct giong_http_request *req, const char *name, size_t *len)
{
	return giong_http_request_header(req, name, len);
}

/* The precompressed sibling of @rel to send instead of the file, if any: "rel.br" or
 * "rel.gz" when it is a regular file and the client accepts its coding (br first: smaller).
 * *@vary is set when a sibling exists at all, accepted or not: the answer then depends on
 * Accept-Encoding. Returns the sibling held (release it) or NULL, and its coding in *@enc. */
static struct serve_file *sibling(const struct giong_http_request *req, const char *rel, size_t len,
				  const char **enc, bool *vary)
{
	static const struct {
		const char *ext, *coding;
	} kinds[] = {{".br", "br"}, {".gz", "gzip"}};
	struct serve_fcache *c = worker_cache;
	struct serve_file *pick = NULL, *g;
	char name[SERVE_PATH_MAX + 4];
	size_t aelen;
	const char *ae = field(req, "Accept-Encoding", &aelen);

	*vary = false;
	if (len + 4 > sizeof(name))
		return NULL;
	memcpy(name, rel, len);
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		memcpy(name + len, kinds[k].ext, 4); /* 3 bytes and the NUL */
		if (serve_fcache_get(c, name, len + 3, SERVE_FCACHE_NEGATIVE, &g) != 0)
			continue;
		if (S_ISREG(g->st.st_mode)) {
			*vary = true;
			if (!pick && ae && serve_accept_encoding(ae, aelen, kinds[k].coding) == 1) {
				pick = g;
				*enc = kinds[k].coding;
				continue;
			}
		}
		serve_fcache_release(c, g);
	}
	return pick;
}

/* The fields every answer about the file has: validators, caching, the coding. */
static int file_fields(struct giong_http_response *res, const struct serve_file *f, const char *enc,
		       bool vary)
{
	int r = giong_http_response_header_n(res, "ETag", 4, f->etag, f->etag_len);

	if (!r && f->last_modified[0])
		r = giong_http_response_header(res, "Last-Modified", f->last_modified);
	if (!r && serve_cfg.cache_control)
		r = giong_http_response_header(res, "Cache-Control", serve_cfg.cache_control);
	if (!r && vary)
		r = giong_http_response_header(res, "Vary", "Accept-Encoding");
	if (!r && enc)
		r = giong_http_response_header(res, "Content-Encoding", enc);
	return r;
}

/* Answer with the regular file @f, named @rel (for its type): 200, 206, 304, 412 or 416. */
static int send_file(struct giong_http_request *req, struct giong_http_response *res,
		     struct serve_file *f, const char *rel, size_t len)
{
	const char *enc = NULL, *im, *ius, *inm, *ims, *range, *ifr;
	size_t im_len, ius_len, inm_len, ims_len, range_len, ifr_len;
	struct serve_file *sib = NULL, *use = f;
	bool vary = false;
	int64_t now = time(NULL);
	uint64_t size;
	struct serve_range rg;
	int r, kind = SERVE_RANGE_IGNORE;
	char cr[SERVE_CONTENT_RANGE_MAX + 1];

	if (serve_cfg.precompressed && (sib = sibling(req, rel, len, &enc, &vary)))
		use = sib;
	size = (uint64_t)use->st.st_size;
	im = field(req, "If-Match", &im_len);
	ius = field(req, "If-Unmodified-Since", &ius_len);
	if ((im || ius) && serve_precondition_failed(im, im_len, ius, ius_len, use->etag,
						     use->etag_len, use->st.st_mtim.tv_sec, now)) {
		r = serve_answer_status(res, 412); /* the client's copy is another version */
		goto out;
	}
	inm = field(req, "If-None-Match", &inm_len);
	ims = field(req, "If-Modified-Since", &ims_len);
	if (serve_not_modified(inm, inm_len, ims, ims_len, use->etag, use->etag_len,
			       use->st.st_mtim.tv_sec, now)) {
		r = giong_http_response_status(res, 304);
		if (!r) /* no Content-Encoding: a 304 carries no content (RFC 9110 15.4.5) */
			r = file_fields(res, use, NULL, vary);
		if (!r)
			r = giong_http_response_send(res, "", 0);
		goto out;
	}
	if ((range = field(req, "Range", &range_len))) {
		kind = serve_range_parse(range, range_len, size, &rg);
		ifr = field(req, "If-Range", &ifr_len);
		if (kind != SERVE_RANGE_IGNORE && ifr &&
		    !serve_if_range(ifr, ifr_len, use->etag, use->etag_len, use->st.st_mtim.tv_sec,
				    now))
			kind = SERVE_RANGE_IGNORE; /* the client's copy is another version: all of it */
	}
	r = giong_http_response_status(res, kind == SERVE_RANGE_OK              ? 206
					    : kind == SERVE_RANGE_UNSATISFIABLE ? 416
										: 200);
	if (!r)
		r = giong_http_response_header(res, "Content-Type", serve_mime_type(rel, len));
	if (!r)
		r = giong_http_response_header(res, "Accept-Ranges", "bytes");
	if (!r)
		r = file_fields(res, use, enc, vary);
	if (!r && kind != SERVE_RANGE_IGNORE) {
		serve_content_range(cr, sizeof(cr), kind == SERVE_RANGE_OK ? &rg : NULL, size);
		r = giong_http_response_header(res, "Content-Range", cr);
	}
	if (r)
		goto out;
	if (kind == SERVE_RANGE_OK)
		r = giong_http_response_sendfile(res, use->fd, (off_t)rg.start,
						 rg.end - rg.start + 1);
	else if (kind == SERVE_RANGE_UNSATISFIABLE || size == 0)
		r = giong_http_response_send(res, "", 0);
	else
		r = giong_http_response_sendfile(res, use->fd, 0, size);
out:
	serve_fcache_release(worker_cache, sib);
	return r;
}

/* A directory asked for with its '/': its index.html, else its listing (or 403). */
static int send_dir(struct giong_http_request *req, struct giong_http_response *res,
		    const char *rel, size_t len)
{
	static const char index[] = "index.html";
	char name[SERVE_PATH_MAX + 1];
	struct serve_file *f;
	size_t n = len ? len + 1 : 0;
	int r;

	if (n + sizeof(index) > sizeof(name))
		return serve_answer_status(res, 404);
	memcpy(name, rel, len);
	if (len)
		name[len] = '/';
	memcpy(name + n, index, sizeof(index));
	n += sizeof(index) - 1;
	r = serve_fcache_get(worker_cache, name, n, 0, &f);
	if (r == 0 && S_ISREG(f->st.st_mode)) {
		r = send_file(req, res, f, name, n);
		serve_fcache_release(worker_cache, f);
		return r;
	}
	serve_fcache_release(worker_cache, f);
	if (r && r != -ENOENT)
		return serve_answer_status(res, status_for(r));
	if (!serve_cfg.listing)
		return serve_answer_status(res, 403);
	return serve_listing(req, res, rel, len);
}

int serve_handle(struct giong_http_request *req, struct giong_http_response *res, void *ctx)
{
	char rel[SERVE_PATH_MAX + 1];
	size_t plen, len = 0;
	const char *path = giong_http_request_path(req, &plen);
	struct serve_file *f;
	int kind, r;

	(void)ctx;
	if (!plen)
		return serve_answer_status(res, 400); /* "*" or an authority: no file is named */
	kind = serve_path_decode(path, plen, rel, sizeof(rel), &len);
	if (kind == -EINVAL)
		return serve_answer_status(res, 400);
	if (kind == -ENAMETOOLONG)
		return serve_answer_status(res, 414);
	if (kind < 0 || is_hidden(rel, len))
		return serve_answer_status(
			res, 404); /* "..", an encoded separator, a NUL: never there */
	if ((r = serve_fcache_get(worker_cache, rel, len, 0, &f)))
		return serve_answer_status(res, status_for(r));
	if (S_ISDIR(f->st.st_mode)) {
		serve_fcache_release(worker_cache, f);
		if (kind != SERVE_PATH_DIR)
			return redirect_dir(req, res, rel, len);
		return send_dir(req, res, rel, len);
	}
	if (S_ISREG(f->st.st_mode) && kind != SERVE_PATH_DIR)
		r = send_file(req, res, f, rel, len);
	else /* a FIFO, a socket, a device; or a file asked for as a directory */
		r = serve_answer_status(res, S_ISREG(f->st.st_mode) ? 404 : 403);
	serve_fcache_release(worker_cache, f);
	return r;
}
