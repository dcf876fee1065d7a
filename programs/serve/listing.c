/* SPDX-License-Identifier: MIT */
/*
 * listing.c - giong-serve's directory listings: the entries of a directory under the root,
 * hidden ones (a leading '.') left out, sorted by name (byte order), each a link with its
 * size and modification time, in HTML. Names are bytes, not text: HTML-escaped where they
 * are shown, percent-encoded where they are linked (path.c), so no name can inject markup
 * or a scheme ("javascript:x" is linked as "javascript%3Ax").
 *
 * The entries come from getdents64(2) and fstatat(2) made directly on the worker (io_uring
 * has neither): on a directory in memory, a few system calls; on a cold one they wait for
 * the disk. At most SERVE_LISTING_MAX entries are read, so memory stays bounded; the page is
 * sent with a Content-Length when it fits in LISTING_BUF, else in chunks of that size.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <giong/fs.h>
#include <giong/http.h>

#include "path.h"
#include "serve.h"

#define LISTING_BUF (64u * 1024)
#define STR_(x) #x
#define STR(x) STR_(x)

struct entry {
	char *name;
	size_t len;
	bool dir;
	bool have_stat;
	uint64_t size;
	int64_t mtime;
};

/* The page being written: a buffer, flushed as a chunk when full. */
struct page {
	struct giong_http_response *res;
	char *buf;
	size_t len;
	bool streamed; /* a chunk was written: the rest follows as chunks */
	int err;
};

static void flush(struct page *p)
{
	if (!p->err && p->len)
		p->err = giong_http_response_write(p->res, p->buf, p->len);
	p->streamed = true;
	p->len = 0;
}

static void put(struct page *p, const char *s, size_t n)
{
	while (n && !p->err) {
		size_t k = LISTING_BUF - p->len < n ? LISTING_BUF - p->len : n;

		memcpy(p->buf + p->len, s, k);
		p->len += k;
		s += k;
		n -= k;
		if (p->len == LISTING_BUF)
			flush(p);
	}
}

static void put_str(struct page *p, const char *s)
{
	put(p, s, strlen(s));
}

/* @s escaped by @esc (serve_html_escape or serve_url_encode). */
static void put_escaped(struct page *p, const char *s, size_t n,
			size_t (*esc)(const char *, size_t, char *, size_t))
{
	char tmp[2048]; /* a name is at most 255 bytes: 8 per byte at worst */
	size_t need = esc(s, n, NULL, 0);

	if (need < sizeof(tmp)) {
		esc(s, n, tmp, sizeof(tmp));
		put(p, tmp, need);
		return;
	}
	for (size_t i = 0; i < n; i += 64) /* a long title: in pieces, escapes kept whole */
		put_escaped(p, s + i, n - i < 64 ? n - i : 64, esc);
}

static int by_name(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = memcmp(x->name, y->name, x->len < y->len ? x->len : y->len);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* The metadata of entry @name of the directory @dfd (root-relative @rel): its own, or for a
 * symbolic link its target's, as a click on it would find it - resolved beneath the root,
 * so that a link out of the root shows nothing of what it points to. 0 or -errno. */
static int entry_stat(int dfd, const char *rel, size_t rel_len, const char *name, size_t len,
		      struct stat *st)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = SERVE_RESOLVE};
	char path[SERVE_PATH_MAX + 1];
	int fd, r;

	if (fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW) != 0)
		return -errno;
	if (!S_ISLNK(st->st_mode))
		return 0;
	if (rel_len + 1 + len >= sizeof(path))
		return -ENAMETOOLONG;
	snprintf(path, sizeof(path), "%.*s%s%s", (int)rel_len, rel, rel_len ? "/" : "", name);
	/* O_PATH opens nothing (no FIFO waits, no device's open): it only resolves. */
	fd = (int)syscall(SYS_openat2, serve_cfg.root_fd, path, &how, sizeof(how));
	if (fd < 0)
		return -errno;
	r = fstat(fd, st) == 0 ? 0 : -errno;
	close(fd);
	return r;
}

/* The entries of @d, hidden ones left out, into *@out (at most SERVE_LISTING_MAX);
 * *@cut set when there were more. Returns their count or -errno. */
static int read_entries(struct giong_dir *d, const char *rel, size_t rel_len, struct entry **out,
			bool *cut)
{
	struct entry *v = NULL;
	size_t n = 0, cap = 0;
	struct giong_dirent de;
	int dfd = giong_dir_fd(d), r;

	*cut = false;
	while ((r = giong_dir_next(d, &de)) == 1) {
		struct stat st;
		struct entry *e;

		if (de.name[0] == '.')
			continue;
		if (n == SERVE_LISTING_MAX) {
			*cut = true;
			break;
		}
		if (n == cap) {
			struct entry *nv = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof(*v));

			if (!nv) {
				r = -ENOMEM;
				break;
			}
			v = nv;
		}
		e = &v[n];
		e->len = strlen(de.name);
		if (!(e->name = malloc(e->len + 1))) {
			r = -ENOMEM;
			break;
		}
		memcpy(e->name, de.name, e->len + 1);
		n++;
		e->have_stat = entry_stat(dfd, rel, rel_len, de.name, e->len, &st) == 0;
		e->dir = e->have_stat ? S_ISDIR(st.st_mode) : de.type == DT_DIR;
		e->size = e->have_stat ? (uint64_t)st.st_size : 0;
		e->mtime = e->have_stat ? st.st_mtim.tv_sec : 0;
	}
	if (r < 0) {
		while (n)
			free(v[--n].name);
		free(v);
		return r;
	}
	*out = v;
	return (int)n;
}

static void put_entry(struct page *p, const struct entry *e)
{
	char num[64];
	struct tm tm;
	time_t t = (time_t)e->mtime;

	put_str(p, "<tr><td><a href=\"");
	put_escaped(p, e->name, e->len, serve_url_encode);
	put_str(p, e->dir ? "/\">" : "\">");
	put_escaped(p, e->name, e->len, serve_html_escape);
	put_str(p, e->dir ? "/</a></td><td>" : "</a></td><td>");
	if (e->have_stat && !e->dir) {
		snprintf(num, sizeof(num), "%llu", (unsigned long long)e->size);
		put_str(p, num);
	} else {
		put_str(p, "-");
	}
	put_str(p, "</td><td>");
	if (e->have_stat && gmtime_r(&t, &tm) && strftime(num, sizeof(num), "%Y-%m-%d %H:%M", &tm))
		put_str(p, num);
	put_str(p, "</td></tr>\n");
}

static void put_page(struct page *p, const char *rel, size_t rel_len, const struct entry *v, int n,
		     bool cut)
{
	put_str(p, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Index of /");
	put_escaped(p, rel, rel_len, serve_html_escape);
	put_str(p, rel_len ? "/</title>\n" : "</title>\n");
	put_str(p, "<style>body{font-family:sans-serif}td,th{padding:0 1em;text-align:left}"
		   "</style></head>\n<body><h1>Index of /");
	put_escaped(p, rel, rel_len, serve_html_escape);
	put_str(p, rel_len ? "/</h1>\n" : "</h1>\n");
	put_str(p, "<table>\n<tr><th>Name</th><th>Size</th><th>Modified (UTC)</th></tr>\n");
	if (rel_len)
		put_str(p, "<tr><td><a href=\"../\">../</a></td><td>-</td><td></td></tr>\n");
	for (int i = 0; i < n; i++)
		put_entry(p, &v[i]);
	put_str(p, "</table>\n");
	if (cut)
		put_str(p, "<p>This directory has more entries than a listing shows "
			   "(" STR(SERVE_LISTING_MAX) "): the first ones read are shown.</p>\n");
	put_str(p, "</body></html>\n");
}

/* Listings being sent by this worker's tasks. */
static _Thread_local unsigned listings_running;

static int listing_answer(struct giong_http_response *res, const char *rel, size_t rel_len,
			  const struct giong_open_options *oo);

int serve_listing(struct giong_http_request *req, struct giong_http_response *res, const char *rel,
		  size_t rel_len)
{
	struct giong_open_options o = {
		.read = true,
		.custom_flags = O_DIRECTORY,
		.resolve = SERVE_RESOLVE,
	};
	int r;

	(void)req;
	/* A listing holds its names (up to SERVE_LISTING_MAX) and its page while a slow
	 * client reads it: a few at once per worker, the others 503, so that clients that
	 * never read cannot pin memory without bound. */
	if (listings_running >= SERVE_LISTINGS_PER_WORKER) {
		r = giong_http_response_header(res, "Retry-After", "1");
		return r ? r : serve_answer_status(res, 503);
	}
	listings_running++;
	r = listing_answer(res, rel, rel_len, &o);
	listings_running--;
	return r;
}

/* serve_listing()'s work, once it may run. */
static int listing_answer(struct giong_http_response *res, const char *rel, size_t rel_len,
			  const struct giong_open_options *oo)
{
	struct giong_open_options o = *oo;
	struct page p = {.res = res};
	struct entry *v = NULL;
	struct giong_file *f;
	struct giong_dir *d;
	bool cut;
	int n, r;

	if ((r = giong_file_open_at(serve_cfg.root_fd, rel_len ? rel : ".", &o, &f)) ||
	    (r = giong_dir_from_fd(giong_file_into_fd(f), &d)))
		return serve_answer_status(res, r == -ENOENT || r == -ENOTDIR ? 404 : 403);
	n = read_entries(d, rel, rel_len, &v, &cut);
	giong_dir_close(d);
	if (n < 0)
		return n; /* 500 */
	if (n > 1)        /* qsort's base must not be NULL, even for nothing to sort */
		qsort(v, (size_t)n, sizeof(*v), by_name);
	if (!(p.buf = malloc(LISTING_BUF))) {
		r = -ENOMEM;
		goto out;
	}
	if ((r = giong_http_response_header(res, "Content-Type", "text/html; charset=utf-8")))
		goto out;
	put_page(&p, rel, rel_len, v, n, cut);
	if (p.err)
		r = p.err;
	else if (!p.streamed)
		r = giong_http_response_send(res, p.buf, p.len); /* all of it: a Content-Length */
	else if (!(flush(&p), p.err))
		r = giong_http_response_end(res);
	else
		r = p.err;
out:
	for (int i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	free(p.buf);
	return r;
}
