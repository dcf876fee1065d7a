/* SPDX-License-Identifier: MIT */
/*
 * punts.c - which operations this kernel runs inline and which it hands to
 * its io-wq worker threads ("punts"), and what a cancelled blocking open
 * returns. Each operation runs on a thread of its own with a ring of its
 * own: io-wq workers belong to the submitting thread and are named
 * iou-wrk-<its tid>, so counting those after the operation tells whether it
 * needed one.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <liburing.h>

#include "ring_info.h"

enum probe_kind {
	READ_CACHED,
	READ_UNCACHED,
	WRITE_BUFFERED,
	FSYNC,
	OPEN_CACHED,
	STATX,
	RECV_EMPTY,
	OPEN_FIFO_CANCELLED,
	CLOSE,
};

static const char *const probe_names[] = {
	[READ_CACHED] = "read, page cache hit",
	[READ_UNCACHED] = "read, page cache miss",
	[WRITE_BUFFERED] = "write, buffered",
	[FSYNC] = "fsync",
	[OPEN_CACHED] = "openat2, cached path",
	[STATX] = "statx",
	[RECV_EMPTY] = "recv, nothing to read yet",
	[OPEN_FIFO_CANCELLED] = "FIFO open, blocked, cancelled",
	[CLOSE] = "close",
};

struct probe {
	enum probe_kind kind;
	const char *dir;
	int res;
	int workers;
	int err; /* set-up failed: -errno */
};

/* io-wq workers of thread @tid: their comm is "iou-wrk-<tid>". */
static int count_workers(pid_t tid)
{
	char want[32], path[300], comm[32];
	struct dirent *d;
	DIR *dir = opendir("/proc/self/task");
	int n = 0;

	if (!dir)
		return -1;
	snprintf(want, sizeof(want), "iou-wrk-%d", (int)tid);
	while ((d = readdir(dir))) {
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strncmp(comm, want, strlen(want)))
			n++;
		fclose(f);
	}
	closedir(dir);
	return n;
}

/* The result of the CQE with @user_data, waiting up to @ms for it (other
 * CQEs, such as a cancel's own, are passed over). */
static int wait_for(struct io_uring *ring, uint64_t user_data, int ms)
{
	struct __kernel_timespec ts = {ms / 1000, (long long)(ms % 1000) * 1000000};

	for (int i = 0; i < 4; i++) {
		struct io_uring_cqe *cqe;
		int r = io_uring_wait_cqe_timeout(ring, &cqe, &ts);
		uint64_t ud;

		if (r < 0)
			return r;
		r = cqe->res;
		ud = cqe->user_data;
		io_uring_cqe_seen(ring, cqe);
		if (ud == user_data)
			return r;
	}
	return -ETIME;
}

static void *probe_thread(void *arg)
{
	struct probe *p = arg;
	/* What the operation lends the kernel (the buffer, the statx record, the
	 * paths) is on the heap: freed once its completion came, leaked on purpose
	 * if it did not within the wait (the kernel may still write it). */
	struct lent {
		char path[256], fifo[300], link[64], buf[4096];
		struct statx stx;
	} *m = calloc(1, sizeof(*m));
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	int fd = -1, fifo_fd = -1, sv[2] = {-1, -1};

	if (!m) {
		p->err = -ENOMEM;
		return NULL;
	}
	if (snprintf(m->path, sizeof(m->path), "%s/giong-ring-info-%d", p->dir, (int)getpid()) >=
	    (int)sizeof(m->path)) {
		p->err = -ENAMETOOLONG;
		free(m);
		return NULL;
	}
	snprintf(m->fifo, sizeof(m->fifo), "%s.fifo", m->path);
	fd = open(m->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, m->buf, sizeof(m->buf)) != (ssize_t)sizeof(m->buf) || fsync(fd)) {
		p->err = -errno;
		goto out;
	}
	if (p->kind == READ_UNCACHED)
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	if (p->kind == READ_CACHED && pread(fd, m->buf, sizeof(m->buf), 0) < 0) {
		p->err = -errno;
		goto out;
	}
	if (p->kind == RECV_EMPTY && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		p->err = -errno;
		goto out;
	}
	/* The FIFO as giong's own test reaches it: through a magic link, whose
	 * lookup is never cached, so the open cannot be tried inline; opened
	 * for writing with no reader, it blocks. */
	if (p->kind == OPEN_FIFO_CANCELLED) {
		if (mkfifo(m->fifo, 0600) || (fifo_fd = open(m->fifo, O_PATH | O_CLOEXEC)) < 0) {
			p->err = -errno;
			goto out;
		}
		snprintf(m->link, sizeof(m->link), "/proc/self/fd/%d", fifo_fd);
	}
	p->err = io_uring_queue_init(8, &ring, 0);
	if (p->err)
		goto out;
	sqe = io_uring_get_sqe(&ring);
	/* m's buffer, record and paths are the kernel's until the completion
	 * (see m above). */
	switch (p->kind) {
	case READ_CACHED:
	case READ_UNCACHED:
		io_uring_prep_read(sqe, fd, m->buf, sizeof(m->buf), 0);
		break;
	case WRITE_BUFFERED:
		io_uring_prep_write(sqe, fd, m->buf, sizeof(m->buf), sizeof(m->buf));
		break;
	case FSYNC:
		io_uring_prep_fsync(sqe, fd, 0);
		break;
	case OPEN_CACHED:
		io_uring_prep_openat(sqe, AT_FDCWD, m->path, O_RDONLY | O_CLOEXEC, 0);
		break;
	case STATX:
		io_uring_prep_statx(sqe, AT_FDCWD, m->path, 0, STATX_BASIC_STATS, &m->stx);
		break;
	case RECV_EMPTY:
		io_uring_prep_recv(sqe, sv[0], m->buf, sizeof(m->buf), 0);
		break;
	case OPEN_FIFO_CANCELLED:
		io_uring_prep_openat(sqe, AT_FDCWD, m->link, O_WRONLY | O_CLOEXEC, 0);
		break;
	case CLOSE:
		io_uring_prep_close(sqe, dup(fd));
		break;
	}
	io_uring_sqe_set_data64(sqe, 1);
	io_uring_submit(&ring);
	if (p->kind == RECV_EMPTY) {
		usleep(50000); /* armed, then fed */
		if (write(sv[1], "x", 1) != 1)
			p->err = -errno;
	}
	if (p->kind == OPEN_FIFO_CANCELLED) {
		usleep(100000); /* blocked waiting for a writer: cancel it */
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_cancel64(sqe, 1, 0);
		io_uring_sqe_set_data64(sqe, 2);
		io_uring_submit(&ring);
	}
	p->res = wait_for(&ring, 1, 2000);
	p->workers = count_workers((pid_t)syscall(SYS_gettid));
	if ((p->kind == OPEN_CACHED || p->kind == OPEN_FIFO_CANCELLED) && p->res >= 0)
		close(p->res);
	io_uring_queue_exit(&ring);
out:
	if (fd >= 0)
		close(fd);
	if (fifo_fd >= 0)
		close(fifo_fd);
	if (sv[0] >= 0) {
		close(sv[0]);
		close(sv[1]);
	}
	unlink(m->path);
	unlink(m->fifo);
	if (p->res != -ETIME)
		free(m);
	return NULL;
}

void ring_info_punts(const char *dir)
{
	printf("operations (in %s): result, and whether a kernel worker ran it\n", dir);
	for (size_t k = 0; k < sizeof(probe_names) / sizeof(probe_names[0]); k++) {
		struct probe p = {.kind = (enum probe_kind)k, .dir = dir};
		pthread_t t;

		if (pthread_create(&t, NULL, probe_thread, &p) || pthread_join(t, NULL)) {
			printf("  %-30s cannot start a thread\n", probe_names[k]);
			continue;
		}
		if (p.err)
			printf("  %-30s not measured: %s\n", probe_names[k], strerror(-p.err));
		else
			printf("  %-30s res %-6d %s\n", probe_names[k], p.res,
			       p.workers > 0 ? "kernel worker" : "inline (no kernel worker)");
	}
}
