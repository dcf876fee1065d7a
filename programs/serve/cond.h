/* SPDX-License-Identifier: MIT */
/*
 * cond.h - giong-serve: validators (ETag, Last-Modified), conditional requests (RFC 9110
 * section 13), byte ranges (RFC 9110 section 14) and the choice of a content coding
 * (Accept-Encoding, RFC 9110 12.5.3). Pure functions: no I/O, no clock (the caller passes
 * "now"), no allocation; each reads only the @len bytes of a field value it is given, which
 * need not be NUL-terminated. Leading and trailing spaces and tabs of a value are ignored.
 * Times are seconds since the Unix epoch, in an int64_t.
 */
#ifndef GIONG_SERVE_COND_H
#define GIONG_SERVE_COND_H

#include <stddef.h>
#include <stdint.h>

/* serve_etag()'s longest output: "\"" 16 "-" 16 "-" 16 "\"", without the NUL. */
#define SERVE_ETAG_MAX 52
/* An IMF-fixdate's length ("Sun, 06 Nov 1994 08:49:37 GMT"), without the NUL. */
#define SERVE_HTTP_DATE_LEN 29
/* serve_content_range()'s longest output: "bytes " 20 "-" 20 "/" 20, without the NUL. */
#define SERVE_CONTENT_RANGE_MAX 68

/*
 * serve_etag - the strong entity tag of a file: "\"<size>-<mtime ns>-<ino>\"", each in
 * lower-case hex without leading zeros, the mtime as @mtime_sec * 10^9 + @mtime_nsec
 * (wrapping modulo 2^64: it only has to change when the file does), quotes included.
 *
 * Writes it and a NUL to @out; returns its length (without the NUL), or -ENOSPC when @cap
 * is too small (SERVE_ETAG_MAX + 1 always is enough; nothing is written then).
 */
int serve_etag(char *out, size_t cap, uint64_t size, int64_t mtime_sec, long mtime_nsec,
	       uint64_t ino);

/*
 * serve_http_date - @t as an IMF-fixdate (RFC 9110 5.6.7), "Sun, 06 Nov 1994 08:49:37 GMT",
 * for Last-Modified. Writes SERVE_HTTP_DATE_LEN bytes and a NUL; returns SERVE_HTTP_DATE_LEN,
 * -ENOSPC when @cap < SERVE_HTTP_DATE_LEN + 1, -ERANGE when @t is outside the years 0001 to
 * 9999 (the format's four digits; nothing is written on an error).
 */
int serve_http_date(int64_t t, char *out, size_t cap);

/*
 * serve_http_date_parse - an HTTP-date (RFC 9110 5.6.7) to *@t: IMF-fixdate
 * ("Sun, 06 Nov 1994 08:49:37 GMT") and the two obsolete forms a recipient must accept,
 * RFC 850 ("Sunday, 06-Nov-94 08:49:37 GMT") and asctime ("Sun Nov  6 08:49:37 1994").
 *
 * Exact syntax (single spaces, the case of the names as the RFC writes them); the day name
 * must be a valid one but is not checked against the date; the date must exist (29 February
 * in leap years only); hour 00-23, minute 00-59, second 00-60 (a leap second counts as the
 * next minute's 00). RFC 850's two-digit year is the year with those last two digits that
 * is at most 50 years after @now's year (RFC 9110: "more than 50 years in the future" is in
 * the past). Returns 0, or -EINVAL for anything else (*@t untouched).
 */
int serve_http_date_parse(const char *s, size_t len, int64_t now, int64_t *t);

/*
 * serve_if_none_match - does the If-None-Match value @value (@len bytes) match @etag
 * (@etag_len bytes, an entity-tag as serve_etag() writes it, W/ allowed)?
 *
 * The value is "*" (matches any existing representation) or a list of entity-tags
 * separated by commas with optional spaces (empty elements allowed). Comparison is the weak
 * one (RFC 9110 8.8.3.2, required for If-None-Match by 13.1.2): opaque-tags equal, a "W/"
 * on either side ignored. Returns 1 on a match (for GET and HEAD: 304 Not Modified), 0 on no
 * match, -EINVAL for a malformed value (not a list of entity-tags; treat the field as
 * absent, RFC 9110 13.1.2 leaves this to the server).
 */
int serve_if_none_match(const char *value, size_t len, const char *etag, size_t etag_len);

/*
 * serve_if_modified_since - is the representation, last modified at @mtime, unmodified
 * since the If-Modified-Since value @value (@len bytes)? Returns 1 when @mtime <= the date
 * (for GET and HEAD: 304 Not Modified); 0 when it is later, or the value must be ignored
 * (RFC 9110 13.1.3): not a valid HTTP-date, or a date later than @now.
 */
int serve_if_modified_since(const char *value, size_t len, int64_t mtime, int64_t now);

/*
 * serve_not_modified - the GET/HEAD precondition step of RFC 9110 13.2.2: If-None-Match
 * when present (@inm non-NULL; a malformed one counts as absent), else If-Modified-Since
 * (@ims non-NULL). Returns 1 when the answer is 304 Not Modified, 0 otherwise.
 */
int serve_not_modified(const char *inm, size_t inm_len, const char *ims, size_t ims_len,
		       const char *etag, size_t etag_len, int64_t mtime, int64_t now);

/*
 * serve_if_match - does the If-Match value @value (@len bytes) match @etag by the strong
 * comparison (RFC 9110 13.1.1: opaque-tags equal, neither weak)? "*" matches any existing
 * representation. Returns 1 on a match, 0 on none, -EINVAL for a malformed value (treat
 * the field as absent, as for If-None-Match).
 */
int serve_if_match(const char *value, size_t len, const char *etag, size_t etag_len);

/*
 * serve_if_unmodified_since - has the representation, last modified at @mtime, stayed
 * unmodified since the If-Unmodified-Since value @value (@len bytes)? Returns 1 when
 * @mtime <= the date, 0 when it is later, -EINVAL when the value is no valid HTTP-date
 * (RFC 9110 13.1.4: ignore the field then).
 */
int serve_if_unmodified_since(const char *value, size_t len, int64_t mtime, int64_t now);

/*
 * serve_precondition_failed - the first steps of RFC 9110 13.2.2: If-Match when present
 * (@im non-NULL; malformed counts as absent), else If-Unmodified-Since (@ius non-NULL,
 * ignored beside If-Match, as 13.1.4 says). Returns 1 when the condition is false, the
 * answer 412 Precondition Failed; 0 otherwise (go on with serve_not_modified()).
 */
int serve_precondition_failed(const char *im, size_t im_len, const char *ius, size_t ius_len,
			      const char *etag, size_t etag_len, int64_t mtime, int64_t now);

/* A byte range to send: bytes @start to @end of the file, both included. */
struct serve_range {
	uint64_t start;
	uint64_t end;
};

/* serve_range_parse()'s answers. */
enum serve_range_result {
	SERVE_RANGE_IGNORE = 0,        /* answer 200 with the whole file */
	SERVE_RANGE_OK = 1,            /* answer 206 with *r */
	SERVE_RANGE_UNSATISFIABLE = 2, /* answer 416 with "Content-Range: bytes * /size" */
};

/*
 * serve_range_parse - the Range value @value (@len bytes) against a file of @size bytes
 * (RFC 9110 14.1.2, 14.2).
 *
 * The unit is "bytes" (any case) followed by "=" and one range-spec: "first-last",
 * "first-" or "-suffix", decimal. Empty list elements ("bytes=0-1,") and spaces around
 * commas are allowed, nothing else between the tokens. Numbers past 2^64 - 1 saturate
 * there. A last past the end is clamped to @size - 1; a suffix longer than the file means
 * the whole file.
 *
 * Returns SERVE_RANGE_OK with 0 <= r->start <= r->end < @size; SERVE_RANGE_UNSATISFIABLE
 * when first >= @size or the suffix is 0 (*@r untouched); SERVE_RANGE_IGNORE (*@r
 * untouched) when the value is malformed (also "bytes=5-2"), another unit, or has more
 * than one range, and for any range of an empty file that would not be unsatisfiable
 * (a suffix of an empty file: there is no byte to send, the whole file is the answer).
 */
int serve_range_parse(const char *value, size_t len, uint64_t size, struct serve_range *r);

/*
 * serve_if_range - should the Range be honoured given the If-Range value @value (@len
 * bytes)? RFC 9110 13.1.5: an entity-tag must match @etag by the strong comparison (a weak
 * tag on either side never matches); an HTTP-date must equal @mtime exactly, and @mtime must
 * be before @now (a modification time in the current second is a weak validator, RFC 9110
 * 8.8.2.2). Returns 1 when the range applies, 0 when the whole file is to be sent (no match,
 * or a malformed value).
 */
int serve_if_range(const char *value, size_t len, const char *etag, size_t etag_len, int64_t mtime,
		   int64_t now);

/*
 * serve_content_range - the Content-Range value: "bytes <start>-<end>/<size>" for @r, or
 * "bytes * /<size>" (without the space) when @r is NULL (the 416 answer). Writes it and a
 * NUL; returns its length, or -ENOSPC when @cap is too small (SERVE_CONTENT_RANGE_MAX + 1
 * always is enough; nothing is written then).
 */
int serve_content_range(char *out, size_t cap, const struct serve_range *r, uint64_t size);

/*
 * serve_accept_encoding - does the Accept-Encoding value @value (@len bytes, not
 * NUL-terminated) accept the content coding @coding (NUL-terminated: "gzip", "br")?
 * RFC 9110 12.5.3.
 *
 * The value is a list of codings separated by commas, empty elements allowed, each a token
 * optionally followed by one weight: OWS ";" OWS "q=" qvalue, the qvalue of RFC 9110 12.4.2
 * ("0" to "0.999" with at most three decimals, "1", "1.", "1.0" to "1.000"), the "q" in
 * either case, nothing around its "=". Any other parameter, a second weight, a qvalue outside
 * that syntax ("q=2", "q=0.1234", "q=.5") or a byte that is neither a token's, OWS, ',' nor
 * ';' makes the whole value malformed: the grammar has no other parameter, and a server that
 * cannot tell what was meant is safe with the identity coding (no content coding). Names
 * compare without regard to ASCII case; "x-gzip" is "gzip" and "x-compress" is "compress"
 * (RFC 9110 8.4.1.1, 8.4.1.3), in the value and in @coding.
 *
 * Returns 1 when @coding is acceptable: listed with q > 0, or not listed and "*" listed with
 * q > 0. Returns 0 when it is not: listed with q = 0 (an explicit entry overrides "*"), not
 * listed and no "*", or "*" with q = 0; and 0 for an empty value, a malformed one, a NULL
 * @value, or an empty or NULL @coding: the server then sends the identity coding. A coding
 * listed twice ("gzip" and "x-gzip" being one) is refused when either entry says q = 0, and
 * "*" likewise: a contradiction read the cautious way.
 *
 * For @coding "identity" the rule is RFC 9110's for it: acceptable (1) unless refused by
 * "identity;q=0", or by "*;q=0" without an entry for identity; so 1 for an empty, malformed
 * or NULL value too.
 */
int serve_accept_encoding(const char *value, size_t len, const char *coding);

#endif /* GIONG_SERVE_COND_H */
