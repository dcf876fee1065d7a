/* SPDX-License-Identifier: MIT */
/*
 * accesslog.h - giong-serve's access log (--log) without a system call per request and
 * without blocking a worker on a stalled reader: each worker appends its lines to a buffer
 * of its own, and a task of that worker writes the buffer when it is half full or a tenth
 * of a second after its first line, whichever comes first: through its ring to a pipe, a
 * socket or a file opened to append (a write that must wait parks that task, not the
 * worker), with write(2) to a file opened at its position, whose position the ring's
 * writes from several workers would race on (accesslog.c). While one buffer is in the
 * kernel's hands the lines go to the other; a line that finds both full waits for room, in
 * its request's task, when the output is a file (a slow disk slows those requests; no line
 * is lost), and is dropped and counted when it is a pipe, a socket or a terminal, whose
 * reader may never read again: never held in memory that grows. Lines are written whole: to a pipe, FIFO or
 * socket at most PIPE_BUF bytes a write, which the kernel does not interleave with other
 * workers' writes (to a file, each write is whole as it is).
 */
#ifndef GIONG_SERVE_ACCESSLOG_H
#define GIONG_SERVE_ACCESSLOG_H

#include <stddef.h>
#include <stdint.h>

/* The bytes of one buffer (two per worker). */
#define SERVE_ALOG_BUF (64 * 1024)

/* The longest line serve_alog_append() takes (longer ones are cut, ending in "\n"). */
#define SERVE_ALOG_LINE_MAX 2048

/* serve_alog_worker_start - on each worker, before it serves: its buffers (written to
 * descriptor @fd) and the task that writes them, and the hook that writes what is left when
 * the worker ends (with write(2) then, the ring gone, waiting a second at most in all: a stalled output does not keep a stopping server, the rest is dropped) and says on
 * stderr how many lines were dropped, if any. After shutdown, when the task has ended,
 * lines are written as they come if the output takes them at once, else dropped. Returns
 * 0 or -errno (the worker then writes each line as it comes, the same way). */
int serve_alog_worker_start(int fd);

/* serve_alog_append - one line (@len bytes, its "\n" included) of the calling worker. */
void serve_alog_append(const char *line, size_t len);

/* serve_alog_dropped - the lines dropped so far by all workers (for --metrics). */
uint64_t serve_alog_dropped(void);

#endif /* GIONG_SERVE_ACCESSLOG_H */
