/* SPDX-License-Identifier: MIT */
/*
 * date.h - the Date header's value (RFC 9110 5.6.7, IMF-fixdate), formatted
 * at most once per second per thread (each worker is one thread), never per
 * request.
 */
#ifndef GIONG_HTTP_DATE_H
#define GIONG_HTTP_DATE_H

#include <stddef.h>
#include <time.h>

/* "Sun, 06 Nov 1994 08:49:37 GMT": always this many bytes, no NUL. */
#define GIONG__HTTP_DATE_LEN 29

/* Write the IMF-fixdate of @t (seconds since the epoch, UTC) to @out. */
void giong__http_date_format(time_t t, char out[GIONG__HTTP_DATE_LEN]);

/*
 * The calling thread's cached Date value for now (the real-time clock, at
 * one-second resolution): reformatted only when the second changed since
 * the thread's last call. Points into thread-local memory, valid until the
 * thread's next call; GIONG__HTTP_DATE_LEN bytes, not NUL-terminated.
 */
const char *giong__http_date_now(void);

/* "Date: " the value "\r\n": the whole field line, as giong__http_date_now()
 * (the same thread-local lifetime), GIONG__HTTP_DATE_LINE_LEN bytes. */
#define GIONG__HTTP_DATE_LINE_LEN (6 + GIONG__HTTP_DATE_LEN + 2)
const char *giong__http_date_line(void);

#endif /* GIONG_HTTP_DATE_H */
