/* SPDX-License-Identifier: MIT */
/*
 * fcache.c - giong-serve's per-worker cache of open files: a hash table of entries keyed by
 * the root-relative path, in least-recently-used order, bounded in count (fcache.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <giong/core.h>
#include <giong/fs.h>

#include "fcache.h"
#include "serve.h"

struct serve_fcache {
	int root_fd;
	unsigned cap;   /* entries kept at most */
	unsigned count; /* entries in the table */
	unsigned mask;  /* buckets - 1 */
	struct serve_file **buckets;
	struct serve_file *lru_head, *lru_tail;
	struct serve_fcache_stats stats;
};

/* FNV-1a: short keys, no adversary able to choose collisions cheaply enough to matter in a
 * table this small that evicts (a chain is as long as the entries that share a bucket). */
static uint64_t path_hash(const char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
	return h;
}

struct serve_fcache *serve_fcache_new(int root_fd, unsigned entries)
{
	struct serve_fcache *c = calloc(1, sizeof(*c));
	unsigned n = 16;

	if (!c)
		return NULL;
	while (n < entries * 2u && n < (1u << 20))
		n <<= 1;
	c->buckets = calloc(n, sizeof(*c->buckets));
	if (!c->buckets) {
		free(c);
		return NULL;
	}
	c->root_fd = root_fd;
	c->cap = entries;
	c->mask = n - 1;
	return c;
}

static void entry_free(struct serve_file *f)
{
	if (f->fd >= 0)
		close(f->fd); /* direct: a close of a file nobody reads costs no wait */
	free(f->path);
	free(f);
}

/* Take @f out of the table and the LRU list; freed now unless a request holds it. */
static void entry_drop(struct serve_fcache *c, struct serve_file *f)
{
	struct serve_file **pp = &c->buckets[f->hash & c->mask];

	while (*pp != f)
		pp = &(*pp)->hnext;
	*pp = f->hnext;
	if (f->lru_prev)
		f->lru_prev->lru_next = f->lru_next;
	else
		c->lru_head = f->lru_next;
	if (f->lru_next)
		f->lru_next->lru_prev = f->lru_prev;
	else
		c->lru_tail = f->lru_prev;
	f->cached = false;
	c->count--;
	if (--f->refs == 0)
		entry_free(f);
}

static void lru_front(struct serve_fcache *c, struct serve_file *f)
{
	if (c->lru_head == f)
		return;
	f->lru_prev->lru_next = f->lru_next; /* not the head: it has a previous one */
	if (f->lru_next)
		f->lru_next->lru_prev = f->lru_prev;
	else
		c->lru_tail = f->lru_prev;
	f->lru_prev = NULL;
	f->lru_next = c->lru_head;
	c->lru_head->lru_prev = f;
	c->lru_head = f;
}

static void entry_insert(struct serve_fcache *c, struct serve_file *f)
{
	struct serve_file **b = &c->buckets[f->hash & c->mask];

	while (c->count >= c->cap && c->lru_tail) {
		entry_drop(c, c->lru_tail);
		c->stats.evictions++;
	}
	f->hnext = *b;
	*b = f;
	f->lru_prev = NULL;
	f->lru_next = c->lru_head;
	if (c->lru_head)
		c->lru_head->lru_prev = f;
	else
		c->lru_tail = f;
	c->lru_head = f;
	f->cached = true;
	f->refs++; /* the table's reference */
	c->count++;
}

/* The validators of @f from its stat. */
static void meta_fill(struct serve_file *f)
{
	int n = serve_etag(f->etag, sizeof(f->etag), (uint64_t)f->st.st_size, f->st.st_mtim.tv_sec,
			   f->st.st_mtim.tv_nsec, (uint64_t)f->st.st_ino);

	f->etag_len = n > 0 ? (size_t)n : 0;
	if (serve_http_date(f->st.st_mtim.tv_sec, f->last_modified, sizeof(f->last_modified)) < 0)
		f->last_modified[0] = '\0';
}

static bool same_version(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_dev == b->st_dev && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* Open @path under the root: the kernel resolves it beneath the root (SERVE_RESOLVE), and
 * O_NONBLOCK keeps a FIFO's open from waiting for a writer. Returns the descriptor or
 * -errno. */
static int open_beneath(int root_fd, const char *path)
{
	struct giong_open_options o = {
		.read = true,
		.custom_flags = O_NONBLOCK | O_NOCTTY,
		.resolve = SERVE_RESOLVE,
	};
	struct giong_file *f;
	int r = giong_file_open_at(root_fd, *path ? path : ".", &o, &f);

	return r ? r : giong_file_into_fd(f);
}

static struct serve_file *entry_new(const char *path, size_t len, uint64_t hash)
{
	struct serve_file *f = calloc(1, sizeof(*f));

	if (!f || !(f->path = malloc(len + 1))) {
		free(f);
		return NULL;
	}
	memcpy(f->path, path, len + 1);
	f->path_len = len;
	f->hash = hash;
	f->fd = -1;
	return f;
}

/* Is the cached @f still what @f->path names? Its descriptor's stat now, and the path's
 * once a second. false: drop it and open again. */
static bool entry_valid(struct serve_fcache *c, struct serve_file *f, uint64_t now)
{
	struct stat st, pst;

	if (fstat(f->fd, &st) != 0 || st.st_nlink == 0)
		return false; /* deleted: the inode lives on only for us */
	if (now - f->checked_ms >= SERVE_FCACHE_RECHECK_MS) {
		/* A comparison only: whatever the path resolves to now, what is served is
		 * opened again beneath the root when it differs. */
		if (fstatat(c->root_fd, f->path_len ? f->path : ".", &pst, 0) != 0 ||
		    pst.st_ino != st.st_ino || pst.st_dev != st.st_dev)
			return false;
		f->checked_ms = now;
	}
	if (st.st_ctim.tv_sec != f->st.st_ctim.tv_sec ||
	    st.st_ctim.tv_nsec != f->st.st_ctim.tv_nsec)
		return false; /* changed (its bytes, or its mode or owner: a chmod 600 must take
			       * effect at once): opened again, with the permissions of now */
	if (!same_version(&st, &f->st)) {
		f->st = st;
		meta_fill(f);
	}
	return true;
}

int serve_fcache_get(struct serve_fcache *c, const char *path, size_t len, unsigned flags,
		     struct serve_file **out)
{
	uint64_t h = path_hash(path, len), now = giong_now_ms();
	struct serve_file *f;
	int fd, fl;

	*out = NULL;
	for (f = c->buckets[h & c->mask]; f; f = f->hnext)
		if (f->hash == h && f->path_len == len && !memcmp(f->path, path, len))
			break;
	if (f && f->fd < 0 && (flags & SERVE_FCACHE_NEGATIVE) &&
	    now - f->checked_ms < SERVE_FCACHE_RECHECK_MS) {
		lru_front(c, f);
		c->stats.hits++;
		return f->err;
	}
	if (f && f->fd >= 0 && entry_valid(c, f, now)) {
		lru_front(c, f);
		c->stats.hits++;
		f->refs++;
		*out = f;
		return 0;
	}
	if (f)
		entry_drop(c, f);
	c->stats.misses++;
	fd = open_beneath(c->root_fd, path);
	if (fd == -EMFILE || fd == -ENFILE) {
		/* Out of descriptors: the cache gives back half of what it holds (least
		 * recently used first), and the open is tried once more. */
		for (unsigned n = c->count / 2 + 1; n && c->lru_tail; n--)
			entry_drop(c, c->lru_tail);
		fd = open_beneath(c->root_fd, path);
	}
	if (fd < 0) {
		if ((flags & SERVE_FCACHE_NEGATIVE) && c->cap &&
		    (fd == -ENOENT || fd == -ENOTDIR) && (f = entry_new(path, len, h))) {
			f->err = fd;
			f->checked_ms = now;
			entry_insert(c, f);
		}
		return fd;
	}
	if (!(f = entry_new(path, len, h))) {
		close(fd);
		return -ENOMEM;
	}
	f->fd = fd;
	f->checked_ms = now;
	if (fstat(fd, &f->st) != 0) {
		int e = -errno;

		entry_free(f);
		return e;
	}
	meta_fill(f);
	f->refs = 1; /* the caller's */
	if (S_ISREG(f->st.st_mode)) {
		/* io_uring honours O_NONBLOCK on a regular file too: a read of pages not in
		 * memory would come back -EAGAIN instead of waiting for the disk. */
		if ((fl = fcntl(fd, F_GETFL)) >= 0)
			fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
		if (c->cap)
			entry_insert(c, f);
	}
	*out = f;
	return 0;
}

void serve_fcache_release(struct serve_fcache *c, struct serve_file *f)
{
	(void)c;
	if (f && --f->refs == 0)
		entry_free(f);
}

void serve_fcache_stats(const struct serve_fcache *c, struct serve_fcache_stats *out)
{
	*out = c->stats;
	out->entries = c->count;
}

void serve_fcache_free(struct serve_fcache *c)
{
	if (!c)
		return;
	while (c->lru_head)
		entry_drop(c, c->lru_head);
	free(c->buckets);
	free(c);
}
