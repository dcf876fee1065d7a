/* SPDX-License-Identifier: MIT */
/*
 * mime.h - giong-serve: a file's Content-Type from its name's extension.
 *
 * A built-in table (the web's common types) answers first; serve_mime_load() can add the
 * extensions it lacks from a mime.types(5) file. The loaded table is process-wide: load it
 * before the workers start, then only look types up (lookups never write).
 */
#ifndef GIONG_SERVE_MIME_H
#define GIONG_SERVE_MIME_H

#include <stddef.h>

/* The type of a name without a known extension. */
#define SERVE_MIME_DEFAULT "application/octet-stream"

/* Limits of serve_mime_load(): entries kept, bytes per line, bytes of an extension, of a
 * type, and of the file read. */
#define SERVE_MIME_ENTRIES_MAX 4096
#define SERVE_MIME_LINE_MAX 1024
#define SERVE_MIME_EXT_MAX 32
#define SERVE_MIME_TYPE_MAX 255
#define SERVE_MIME_FILE_MAX (16u << 20)

/*
 * serve_mime_type - the Content-Type value for the file name @name (@len bytes; a path
 * works too: only its last '/'-separated component is looked at).
 *
 * The extension is what follows the component's last '.', compared case-insensitively; a
 * name without one, or whose only '.' is its first byte (".profile"), has none. The built-in
 * table is asked first, then the table serve_mime_load() loaded. Text types (text/<any>,
 * application/json, application/javascript, image/svg+xml) carry "; charset=utf-8".
 *
 * Returns a NUL-terminated string that lives until the next serve_mime_load() or
 * serve_mime_reset(); SERVE_MIME_DEFAULT when nothing matches. Never NULL.
 */
const char *serve_mime_type(const char *name, size_t len);

/*
 * serve_mime_load - read @path in mime.types(5) format: per line, a type ("major/minor",
 * token characters) followed by its extensions, separated by spaces or tabs; '#' starts a
 * comment to the end of the line.
 *
 * It replaces the table loaded before (on success; on an open error the old one stays).
 * Extensions the built-in table has are left to it; an extension listed twice keeps its
 * first type. Bad lines are skipped whole, never an error: a malformed type, an extension
 * longer than SERVE_MIME_EXT_MAX - 1 bytes or with a byte other than [A-Za-z0-9+_-], a
 * line longer than SERVE_MIME_LINE_MAX bytes, a NUL byte. At most SERVE_MIME_ENTRIES_MAX
 * extensions are kept and SERVE_MIME_FILE_MAX bytes read; the rest is ignored.
 *
 * Returns the number of extensions added (>= 0), or -errno when @path cannot be opened or
 * is not a regular file (-EINVAL), or memory runs out (-ENOMEM). A server can ignore any
 * error and go on with the built-in table.
 */
int serve_mime_load(const char *path);

/* serve_mime_reset - forget the loaded table (back to the built-in one) and free it. */
void serve_mime_reset(void);

#endif /* GIONG_SERVE_MIME_H */
