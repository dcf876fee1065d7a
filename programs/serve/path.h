/* SPDX-License-Identifier: MIT */
/*
 * path.h - giong-serve: the request target's path, decoded and made safe to open under the
 * document root; the escapes a directory listing needs. Pure functions: no I/O, no
 * allocation, no global state; every one reads only the bytes it is given and writes only
 * inside the buffer it is given.
 */
#ifndef GIONG_SERVE_PATH_H
#define GIONG_SERVE_PATH_H

#include <stddef.h>

/* serve_path_decode()'s positive answer: the path names a directory by its form. */
#define SERVE_PATH_DIR 1

/*
 * serve_path_decode - the request target @target (@len bytes, origin-form: "/a/b?q") as a
 * path relative to the document root, for openat2(root, out, RESOLVE_BENEATH | ...).
 *
 * The path is the bytes before the first '?' or '#' (the query is ignored); it must start
 * with '/'. It is percent-decoded once, segment by segment: repeated '/' collapse, "."
 * segments are dropped, and the result has no leading or trailing '/' ("" for the root).
 * Refused, never resolved: a ".." segment anywhere (also spelled "%2e%2e"), a decoded '/'
 * ("%2f") and any '\\' (literal or "%5c"), any NUL or control byte (0x00-0x1f, 0x7f;
 * literal or decoded). Bytes >= 0x80 are kept as they are (file names need not be UTF-8).
 *
 * @out receives the path and a terminating NUL: a path of n bytes needs @cap >= n + 1.
 * Nothing is written at or past @out[@cap] and nothing read at or past @target[@len];
 * @out's contents are unspecified after an error. *@out_len (may be NULL) is the path's
 * length without the NUL, set on success only.
 *
 * Returns SERVE_PATH_DIR when the path ends in '/' or in a "." segment ("/", "/a/",
 * "/a/."), 0 for any other accepted path, -EINVAL for a malformed target (empty, not
 * starting with '/', a '%' not followed by two hex digits), -EACCES for a refused one,
 * -ENAMETOOLONG when the result does not fit @cap.
 */
int serve_path_decode(const char *target, size_t len, char *out, size_t cap, size_t *out_len);

/*
 * serve_html_escape - @in (@len bytes) as HTML text or a quoted attribute value: '&' '<' '>'
 * '"' '\'' become "&amp;" "&lt;" "&gt;" "&quot;" "&#39;", and the control bytes 0x00-0x1f
 * and 0x7f (which HTML does not allow as characters) "&#xFFFD;". Other bytes, non-UTF-8
 * ones included, are copied.
 *
 * Like snprintf(): returns the length of the whole escaped text (without a NUL), whatever
 * @cap is; writes at most @cap bytes: as many whole escapes as fit in @cap - 1, then a NUL
 * (nothing when @cap is 0). The output is complete when the return value is < @cap.
 */
size_t serve_html_escape(const char *in, size_t len, char *out, size_t cap);

/*
 * serve_url_encode - @in (@len bytes) as a URL path for an href: the unreserved characters
 * (A-Z a-z 0-9 - . _ ~) and '/' are copied, every other byte (bytes >= 0x80 included) is
 * written "%XX" with upper-case hex digits. serve_path_decode() of "/" followed by the
 * encoding of one of its accepted outputs gives that output back.
 *
 * Bounds and return value as serve_html_escape(): a "%XX" is written whole or not at all.
 */
size_t serve_url_encode(const char *in, size_t len, char *out, size_t cap);

#endif /* GIONG_SERVE_PATH_H */
