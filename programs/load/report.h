/* SPDX-License-Identifier: MIT */
/*
 * report.h - giong-load: the summary of a run, for a person (wrk's layout) or as one JSON
 * object (--json) with the same figures.
 *
 * Pure formatting: the caller gathers the totals (each worker's added up with
 * load_totals_add()) and the merged latency histogram; these functions read them and write
 * text. Deterministic: the same figures always give the same bytes (no clock, no locale:
 * the C locale's printf, which is what a program that never calls setlocale() has).
 */
#ifndef GIONG_LOAD_REPORT_H
#define GIONG_LOAD_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hist.h"

/* Status codes counted one by one: 100 to 599 (RFC 9110 15: three digits, first 1 to 5). */
#define LOAD_STATUS_MIN 100
#define LOAD_STATUS_MAX 599
#define LOAD_STATUS_COUNT (LOAD_STATUS_MAX - LOAD_STATUS_MIN + 1)

/* What went wrong, by kind; the names are load_err_name()'s. */
enum load_err {
	LOAD_ERR_CONNECT, /* "connect": the connection failed (refused, reset during connect) */
	LOAD_ERR_READ,    /* "read": receiving failed, or the response was malformed */
	LOAD_ERR_WRITE,   /* "write": sending failed */
	LOAD_ERR_TIMEOUT, /* "timeout": no response in time */
	LOAD_ERR_STATUS,  /* "status": a response whose status is not 2xx */
	LOAD_ERR_LENGTH,  /* "length": a body of another length than expected */
	LOAD_ERR_COUNT,
};

/* The counters of a run (or of one worker's part of it). */
struct load_totals {
	uint64_t duration_ns;               /* how long the run measured */
	uint64_t requests;                  /* responses received complete */
	uint64_t bytes;                     /* bytes received (heads and bodies) */
	uint64_t status[LOAD_STATUS_COUNT]; /* responses by status, [code - LOAD_STATUS_MIN] */
	uint64_t errors[LOAD_ERR_COUNT];    /* by enum load_err */
};

/* How the run was made: shown in the JSON object (and -R in the human report). */
struct load_run {
	const char *url;      /* borrowed; NULL is "" */
	const char *method;   /* borrowed; NULL is "GET" */
	uint32_t conns;       /* -c */
	uint32_t workers;     /* -t */
	uint32_t depth;       /* -P */
	const char *protocol; /* "http/1.1" (NULL), "h2c" or "h2" (--h2) */
	uint32_t streams;     /* --streams: in flight per HTTP/2 connection; 0 is 1 */
	uint64_t rate;        /* -R, requests/s; 0: not paced */
	bool latency;         /* --latency: the human report shows the percentile table */
};

/* load_err_name - the name of error kind @e ("connect"...), or "?" for another value. */
const char *load_err_name(enum load_err e);

/*
 * load_totals_add - add @src's counters to @dst's (per-worker totals into the run's);
 * the duration is the longer of the two (the workers ran at the same time).
 */
void load_totals_add(struct load_totals *dst, const struct load_totals *src);

/*
 * load_report_text - the human report of @t and the latency histogram @h (borrowed; NULL
 * counts as empty), as snprintf() writes: at most @cap bytes including a NUL, which ends
 * the text whenever @cap > 0, truncated if it has to be. Returns the report's whole length
 * (without the NUL): a return >= @cap means truncated, call again with that + 1.
 *
 * Layout (wrk's, after a first line with the protocol, and with HTTP/2 the streams per
 * connection): latency avg, stdev and max; with @run->latency the percentile table
 * (50, 90, 99, 99.9 %, max); requests, duration and bytes read; the status codes seen;
 * error counts when there are any; Requests/sec and Transfer/sec. Times scale to ns, us, ms
 * or s, sizes to B, KB, MB, GB or TB (powers of 1024, as wrk), two decimals.
 */
int load_report_text(char *buf, size_t cap, const struct load_run *run, const struct load_totals *t,
		     const struct load_hist *h);

/*
 * load_report_json - the same figures as one JSON object (RFC 8259) on one line, with a
 * final newline, written as load_report_text() does. Times are integer nanoseconds (mean
 * and stdev rounded), the two rates have three decimals (0 for a zero duration): no NaN or
 * infinity can appear. Strings are escaped; bytes that are not UTF-8 become U+FFFD.
 *
 * {"url":..., "method":..., "connections":C, "workers":T, "depth":P,
 *  "protocol":"http/1.1" | "h2c" | "h2", "streams":S, "rate":R,
 *  "duration_ns":..., "requests":..., "bytes":..., "requests_per_sec":..., "bytes_per_sec":...,
 *  "latency_ns":{"count","min","mean","stdev","max","p50","p90","p99","p99.9","clamped"},
 *  "status":{"200":n, ...only the codes seen, ascending},
 *  "errors":{"connect","read","write","timeout","status","length"}}
 */
int load_report_json(char *buf, size_t cap, const struct load_run *run, const struct load_totals *t,
		     const struct load_hist *h);

/*
 * load_report_text_file, load_report_json_file - the same, written to @f. Return the bytes
 * written, or -EIO when @f reports an error.
 */
int load_report_text_file(FILE *f, const struct load_run *run, const struct load_totals *t,
			  const struct load_hist *h);
int load_report_json_file(FILE *f, const struct load_run *run, const struct load_totals *t,
			  const struct load_hist *h);

#endif /* GIONG_LOAD_REPORT_H */
