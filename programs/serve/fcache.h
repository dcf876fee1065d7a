/* SPDX-License-Identifier: MIT */
/*
 * fcache.h - giong-serve's per-worker cache of open files (nginx's open_file_cache is the
 * model): a hot file costs no open, statx and close per request, only an fstat(2).
 *
 * Never a stale answer for a file changed in place: the cached descriptor is fstat'ed on
 * every request, and its ETag and Last-Modified follow its size, modification time and
 * change time. A file replaced by a rename (a new inode at the path) is noticed by a
 * stat of the path itself, made at most once a second per entry; a file deleted (no link
 * left) is noticed by the fstat at once. Entries are the worker's own: no lock, no atomics.
 * An entry in use by a request that parked (a sendfile waiting for the peer) is never
 * closed under it: it is reference-counted, and one evicted or replaced meanwhile is
 * closed by its last release.
 */
#ifndef GIONG_SERVE_FCACHE_H
#define GIONG_SERVE_FCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "cond.h"

/* How long (ms) a path's stat is trusted before it is made again. */
#define SERVE_FCACHE_RECHECK_MS 1000

struct serve_file {
	int fd;         /* the open file (O_RDONLY; owned by the entry); -1 for a negative entry */
	struct stat st; /* as of this request's fstat */
	char etag[SERVE_ETAG_MAX + 1];
	size_t etag_len;
	char last_modified[SERVE_HTTP_DATE_LEN + 1]; /* "" when the time cannot be written */
	/* The cache's own: */
	char *path; /* the key: root-relative, NUL-terminated */
	size_t path_len;
	uint64_t hash;
	uint64_t checked_ms;      /* when the path was last stat'ed (or opened) */
	int err;                  /* a negative entry's -errno */
	unsigned refs;            /* requests holding it, plus one while it is in the table */
	bool cached;              /* in the table */
	struct serve_file *hnext; /* the table's chain */
	struct serve_file *lru_prev, *lru_next; /* most recently used first */
};

struct serve_fcache_stats {
	uint64_t hits;      /* answered by a cached descriptor */
	uint64_t misses;    /* opened (not cached, or cached and changed) */
	uint64_t evictions; /* entries dropped to make room */
	uint32_t entries;   /* in the table now */
};

struct serve_fcache;

/* serve_fcache_new - a cache of at most @entries files (0: nothing is kept, every lookup
 * opens) that opens under the directory @root_fd (borrowed). Returns NULL without memory. */
struct serve_fcache *serve_fcache_new(int root_fd, unsigned entries);

/* serve_fcache_free - close every entry nobody holds and free the cache (a worker's
 * end, when no request runs). */
void serve_fcache_free(struct serve_fcache *c);

/* Flags of serve_fcache_get(). */
#define SERVE_FCACHE_NEGATIVE 1u /* remember "not there" too (for siblings: file.gz) */

/*
 * serve_fcache_get - the file at @path (@len bytes, root-relative, NUL-terminated) with its
 * metadata as of now, held for the caller in *@out (release it with serve_fcache_release()
 * once its response is sent). Regular files are cached; anything else (a directory, a FIFO)
 * is opened for this caller alone and closed by the release; a FIFO, socket or device never
 * blocks the open (O_NONBLOCK). Returns 0; -ENOENT, -EXDEV (the path or a link in it leaves
 * the root), -ELOOP, -EACCES, ... as giong_file_open_at() says; with SERVE_FCACHE_NEGATIVE,
 * a remembered -ENOENT or -ENOTDIR for up to SERVE_FCACHE_RECHECK_MS. May suspend (an open
 * through the ring).
 */
int serve_fcache_get(struct serve_fcache *c, const char *path, size_t len, unsigned flags,
		     struct serve_file **out);

/* serve_fcache_release - give back what serve_fcache_get() gave (NULL: nothing). */
void serve_fcache_release(struct serve_fcache *c, struct serve_file *f);

/* serve_fcache_stats - the counters of @c. */
void serve_fcache_stats(const struct serve_fcache *c, struct serve_fcache_stats *out);

#endif /* GIONG_SERVE_FCACHE_H */
