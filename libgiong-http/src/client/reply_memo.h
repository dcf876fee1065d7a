/* SPDX-License-Identifier: MIT */
/*
 * reply_memo.h - the last response head that passed both of reply.h's passes,
 * kept so that the next head with the very same bytes skips them.
 *
 * Why it is sound: giong__http_parse_reply()'s answer is a function of the
 * head's bytes, the HEAD flag and the limits alone (its scan state only
 * resumes: a prefix gives "need more" or the whole's answer, reply.h). A
 * buffer that begins with the memo's head, byte for byte, therefore has that
 * head at its start (the head ends at its first empty line, which lies inside
 * the compared bytes), and both parsers would say what they said before:
 * the memo replays that answer with the spans moved into the new buffer. Any
 * other byte, another HEAD flag or another client (its limits) parses in full.
 *
 * Why it is worth it: a client that repeats a request (a load generator, a
 * poller) gets heads that differ at most in Date, once a second; the two
 * passes were a quarter of giong-load's CPU at 8 pipelined requests
 * (bench/results/load.md). A miss costs a compare up to the first differing
 * byte and, after a full parse that succeeded, a copy of the head.
 *
 * Internal to libgiong-http; one memo per client and worker (no locking).
 */
#ifndef GIONG_HTTP_REPLY_MEMO_H
#define GIONG_HTTP_REPLY_MEMO_H

#include "h1/reply.h"

/* Heads up to this size with up to this many fields are remembered; larger
 * ones parse in full every time (a memo is per client and worker: 1.3 KiB). */
#define GIONG__HTTP_MEMO_HEAD 512u
#define GIONG__HTTP_MEMO_FIELDS 24u

struct giong__http_reply_memo {
	uint32_t len; /* the head's bytes in buf; 0: nothing remembered */
	bool head_request;
	struct giong__http_reply reply; /* its spans point into buf and fields */
	struct giong_http_field fields[GIONG__HTTP_MEMO_FIELDS];
	char buf[GIONG__HTTP_MEMO_HEAD];
	uint64_t hits; /* heads answered from the memo (tests read it) */
};

/*
 * giong__http_parse_reply_memo() - giong__http_parse_reply() with the memo
 * @m (NULL: none): the same arguments, the same answers, and @r's spans in
 * @buf either way. @lim must be the same for every call on one memo (the
 * client's). A head that parses is remembered if it fits the memo.
 */
int giong__http_parse_reply_memo(struct giong__http_reply_memo *m, const char *buf, size_t len,
				 const struct giong_http_limits *lim, bool head_request,
				 struct giong__http_scan *scan, struct giong__http_reply *r,
				 struct giong_http_field *fields);

#endif /* GIONG_HTTP_REPLY_MEMO_H */
