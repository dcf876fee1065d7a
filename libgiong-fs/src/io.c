/* SPDX-License-Identifier: MIT */
/*
 * io.c - the few primitives every fs call is made of: take an SQE, open,
 * read/write, statx and close through the ring.
 *
 * Each is one SQE prepared with liburing's io_uring_prep_*() on giong_sqe()
 * and awaited with giong_io(), which parks the calling task until the
 * operation's final completion, also when the task is cancelled or its
 * deadline passes (the kernel is asked to cancel and its answer awaited).
 * So every pointer handed to the kernel here points into the caller's frame
 * or the caller's buffer, which outlive the operation.
 *
 * The two exceptions are the page-cache fast paths: of positional reads
 * (giong__fs_pread), a direct preadv2(RWF_NOWAIT) first and the ring on a
 * miss, and of opens (giong__fs_openat), a direct openat2(RESOLVE_CACHED)
 * first and the ring when the lookup would need I/O.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fs_internal.h"

/*
 * The run of direct reads of the task running on this worker thread: which
 * task made the last fast-path reads, how many and how many bytes since it
 * last parked in one of our operations or yielded. A task whose reads all
 * hit the page cache never parks; it yields when the run is long enough
 * (see direct_gate()). Per thread, hence per worker; another task's direct
 * read starts a new run. A task that parked elsewhere (a sleep, a socket)
 * keeps its count: at worst it yields a little early.
 */
static __thread struct {
	const struct giong_task *task;
	unsigned reads;
	size_t bytes;
} run;

static int take_sqe(struct io_uring_sqe **out)
{
	/* Outside a task giong_io() would refuse the SQE without discarding it,
	 * and it would go to the kernel with whatever it held: take none. */
	if (!giong_task_current())
		return GIONG_ENOTWORKER;
	*out = giong_sqe();
	return *out ? 0 : -EAGAIN;
}

int giong__fs_sqe(struct io_uring_sqe **out)
{
	run.task = NULL; /* the caller is about to park in giong_io() */
	return take_sqe(out);
}

ssize_t giong__fs_rw(int fd, bool write, void *buf, size_t len, uint64_t off)
{
	struct io_uring_sqe *sqe;
	int err = giong__fs_sqe(&sqe);

	if (err)
		return err;
	if (len > GIONG__FS_MAX_RW)
		len = GIONG__FS_MAX_RW;
	/* @buf: the caller's, lent to the kernel until giong_io() returns; it
	 * is not touched by the kernel after that, even if cancelled. */
	if (write) {
		io_uring_prep_write(sqe, fd, buf, (unsigned)len, off);
		return giong_io(sqe);
	}
	/* (In valgrind builds giong_io() itself marks what the read wrote.) */
	io_uring_prep_read(sqe, fd, buf, (unsigned)len, off);
	return giong_io(sqe);
}

/* ------------------------------------------------ the page-cache fast path */

/* Bytes @iov asks for, capped at GIONG__FS_MAX_RW (what one read moves). */
static size_t iov_want(const struct iovec *iov, int iovcnt)
{
	size_t sum = 0;

	for (int i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len >= GIONG__FS_MAX_RW - sum)
			return GIONG__FS_MAX_RW;
		sum += iov[i].iov_len;
	}
	return sum;
}

/* The read through the ring: one SQE (IORING_OP_READ for one buffer,
 * READV for more), awaited. @iov and its buffers are the caller's, lent to
 * the kernel until giong_io() returns after the final CQE. */
static ssize_t ring_preadv(int fd, const struct iovec *iov, int iovcnt, uint64_t off)
{
	struct io_uring_sqe *sqe;
	int err = giong__fs_sqe(&sqe);

	if (err)
		return err;
	/* The caller's buffers (and, for readv, its iovec array) are lent to
	 * the kernel until giong_io() returns, which is after the final CQE. */
	if (iovcnt == 1) {
		size_t len = iov[0].iov_len < GIONG__FS_MAX_RW ? iov[0].iov_len : GIONG__FS_MAX_RW;

		io_uring_prep_read(sqe, fd, iov[0].iov_base, (unsigned)len, off);
	} else {
		io_uring_prep_readv(sqe, fd, iov, (unsigned)iovcnt, off);
	}
	/* (In valgrind builds giong_io() itself marks what the read wrote.) */
	return giong_io(sqe);
}

/*
 * The direct attempt. RWF_NOWAIT: the kernel copies what is in the page
 * cache and returns; where it would have to read from the disk or wait for
 * a lock it returns EAGAIN instead (after starting to read the missing
 * pages). It never blocks the worker on I/O: it is the very attempt io_uring
 * makes inline when it issues a read SQE (IOCB_NOWAIT), minus the ring round
 * trip. What it shares with that inline attempt: a page fault on the
 * caller's buffer, and the time the copy itself takes. Not for O_DIRECT
 * descriptors: a synchronous direct read waits for the device even with
 * RWF_NOWAIT (those files are marked GIONG__FS_NO_NOWAIT when opened).
 */
static ssize_t nowait_preadv(int fd, const struct iovec *iov, int iovcnt, uint64_t off)
{
	ssize_t n = preadv2(fd, iov, iovcnt, (off_t)off, RWF_NOWAIT);

	return n < 0 ? -errno : n;
}

/*
 * Before a direct read: what giong_io() checks before it takes an SQE (a
 * cancelled task gets -ECANCELED, one past its deadline -ETIMEDOUT, with no
 * I/O), and the yield that keeps a task whose reads all hit the cache from
 * starving the worker: after GIONG_FS_DIRECT_READS_PER_YIELD direct reads
 * (or GIONG_FS_DIRECT_BYTES_PER_YIELD bytes) in a row, giong_yield() lets
 * every other ready task run and the worker tick (timers, completions, and
 * the clock the deadline check reads). Returns 0 or the error to return.
 */
static int direct_gate(void)
{
	const struct giong_task *t = giong_task_current();
	uint64_t dl;

	if (!t)
		return GIONG_ENOTWORKER;
	if (run.task == t && (run.reads >= GIONG_FS_DIRECT_READS_PER_YIELD ||
			      run.bytes >= GIONG_FS_DIRECT_BYTES_PER_YIELD)) {
		int r = giong_yield(); /* -ECANCELED if cancelled meanwhile */

		run.task = NULL;
		if (r)
			return r;
	}
	if (run.task != t) {
		run.task = t;
		run.reads = 0;
		run.bytes = 0;
	}
	if (giong_task_cancelled())
		return -ECANCELED;
	dl = giong_deadline();
	if (dl != GIONG_NO_DEADLINE && dl <= giong_now_ms())
		return -ETIMEDOUT;
	return 0;
}

/*
 * A direct read of @want bytes stopped at @done: the end of the file, or a
 * page that is not in the cache (RWF_NOWAIT returns what it copied before
 * it). Read on to the end of the request, as io_uring does for a regular
 * file, so that a short count still means the end of the file: directly
 * while the cache has the pages, through the ring from the first miss on.
 * At the end of the file the next direct read returns 0 at once. Each step
 * reads either the rest of one partly filled iovec entry or the untouched
 * entries after it (the caller's array is never modified). An error or a
 * cancel after some data returns the data.
 */
static ssize_t read_on(int fd, const struct iovec *iov, int iovcnt, uint64_t off, size_t done,
		       size_t want)
{
	bool ring = false;

	while (done < want) {
		size_t skip = done;
		int i = 0;

		while (skip >= iov[i].iov_len) {
			skip -= iov[i].iov_len;
			i++;
		}
		struct iovec part = {(char *)iov[i].iov_base + skip, iov[i].iov_len - skip};
		const struct iovec *v = skip ? &part : &iov[i];
		int vcnt = skip ? 1 : iovcnt - i;
		ssize_t n = -EAGAIN;

		if (!ring) {
			n = nowait_preadv(fd, v, vcnt, off + done);
			ring = n == -EAGAIN;
		}
		if (ring)
			n = ring_preadv(fd, v, vcnt, off + done);
		if (n <= 0)
			break; /* 0: the end of the file; < 0: keep what we have */
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/* GIONG_FS_READ=ring in the environment: every read of the process through
 * the ring, giong_fs_read() included (read once; 0 unknown, 1 fast path
 * allowed, 2 ring only). Threads racing to fill it in agree. */
static int read_env;

static bool env_ring_only(void)
{
	int s = __atomic_load_n(&read_env, __ATOMIC_RELAXED);

	if (!s) {
		const char *env = getenv("GIONG_FS_READ");

		s = env && strcmp(env, "ring") == 0 ? 2 : 1;
		__atomic_store_n(&read_env, s, __ATOMIC_RELAXED);
	}
	return s == 2;
}

static int ring_openat(const char *path, int flags, unsigned mode)
{
	struct io_uring_sqe *sqe;
	int err = giong__fs_sqe(&sqe);

	if (err)
		return err;
	/* @path: borrowed from the caller, whose frame lives until giong_io()
	 * returns after the final CQE (the kernel copies it when it issues). */
	io_uring_prep_openat(sqe, AT_FDCWD, path, flags, (mode_t)mode);
	/* If the task is cancelled while the open is in flight and the open
	 * wins the race, giong_io() returns the new descriptor: we own it and
	 * the caller closes it, so nothing leaks. */
	return giong_io(sqe);
}

/*
 * The same with IORING_OP_OPENAT2 relative to @dirfd, with @how->resolve.
 * @path (the caller's) and @how (on the calling task's stack, in the frame
 * of giong__fs_openat2()) stay valid while the task is parked in giong_io(),
 * which returns only after the final CQE (the kernel copies both when it
 * takes the SQE; nothing reads them after the completion).
 */
static int ring_openat2(int dirfd, const char *path, struct open_how *how)
{
	struct io_uring_sqe *sqe;
	int err = giong__fs_sqe(&sqe);

	if (err)
		return err;
	io_uring_prep_openat2(sqe, dirfd, path, how);
	/* A descriptor won in a race with a cancel is returned and owned, as
	 * in ring_openat(). */
	return giong_io(sqe);
}

/* 1 once openat2(2) turned out to be missing here (ENOSYS): every open
 * through the ring from then on. Threads racing to set it agree. */
static int no_openat2;

/*
 * The attempt io_uring makes inline before it hands an open to its worker
 * threads, made directly, relative to @dirfd with @resolve (RESOLVE_*, 0 for
 * none) added: a lookup that must not block (openat2(2) with
 * RESOLVE_CACHED succeeds only if every component of @path is in the
 * kernel's lookup cache, and fails with EAGAIN when resolving it would need
 * I/O or revalidation), with O_NONBLOCK so that a FIFO or a device does not
 * make the open wait, then O_NONBLOCK taken off again unless the caller
 * asked for it, as io_uring does. Returns a descriptor, -errno (a final
 * answer, the one the ring would give), or -EAGAIN: open through the ring.
 * The kernel never completes O_CREAT, O_TRUNC or O_TMPFILE this way: not
 * tried. EINVAL (openat2 is stricter about unknown flag bits than openat)
 * and EPERM (a seccomp policy, or a real refusal) go to the ring, which
 * gives openat's answer (openat2's, with the same open_how, for
 * giong__fs_openat2()).
 */
static int cached_openat(int dirfd, const char *path, int flags, uint64_t resolve)
{
	struct open_how how = {.flags = (uint64_t)(unsigned)(flags | O_NONBLOCK),
			       .resolve = RESOLVE_CACHED | resolve};
	long fd;

	/* O_TMPFILE's own bit: O_TMPFILE includes O_DIRECTORY (so does glibc's
	 * __O_TMPFILE), and a directory must take the fast path. */
	if ((flags & (O_CREAT | O_TRUNC | (O_TMPFILE & ~O_DIRECTORY))) ||
	    __atomic_load_n(&no_openat2, __ATOMIC_RELAXED))
		return -EAGAIN;
	/* @path and @how: read by the kernel during the call only. */
	fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	if (fd < 0) {
		if (errno == ENOSYS)
			__atomic_store_n(&no_openat2, 1, __ATOMIC_RELAXED);
		if (errno == ENOSYS || errno == EINVAL || errno == EPERM || errno == E2BIG)
			return -EAGAIN;
		return -errno;
	}
	/* Left on, O_NONBLOCK would make the ring's reads of a regular file
	 * fail with EAGAIN on a page-cache miss instead of waiting for it.
	 * F_SETFL only changes O_APPEND, O_NONBLOCK, O_DIRECT and O_NOATIME,
	 * the others as the open set them. */
	if (!(flags & O_NONBLOCK) && fcntl((int)fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		close((int)fd);
		return -EAGAIN;
	}
	return (int)fd;
}

int giong__fs_openat(const char *path, int flags, unsigned mode, bool ring_only)
{
	int fd, err;

	if (ring_only || env_ring_only())
		return ring_openat(path, flags, mode);
	err = direct_gate();
	if (err)
		return err;
	fd = cached_openat(AT_FDCWD, path, flags, 0);
	if (fd == -EAGAIN)
		return ring_openat(path, flags, mode);
	run.reads++; /* a direct call that did not park: counts toward the yield */
	return fd;
}

int giong__fs_openat2(int dirfd, const char *path, int flags, unsigned mode, uint64_t resolve,
		      bool ring_only)
{
	/* openat2(2) refuses a mode without O_CREAT or O_TMPFILE (EINVAL),
	 * where openat(2) ignores it. @how lives in this frame until the open
	 * is over (see ring_openat2()). */
	struct open_how how = {
		.flags = (uint64_t)(unsigned)flags,
		.mode = ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) ? mode : 0,
		.resolve = resolve,
	};
	int fd, err;

	if (ring_only || env_ring_only())
		return ring_openat2(dirfd, path, &how);
	err = direct_gate();
	if (err)
		return err;
	fd = cached_openat(dirfd, path, flags, resolve);
	if (fd == -EAGAIN)
		return ring_openat2(dirfd, path, &how);
	run.reads++; /* as in giong__fs_openat() */
	return fd;
}

ssize_t giong__fs_pread(int fd, unsigned char *direct, const struct iovec *iov, int iovcnt,
			uint64_t off, bool complete)
{
	size_t want = iov_want(iov, iovcnt);
	ssize_t n, r;
	int err;

	/* Nothing to read: the ring gives the answer it always gave. */
	/* At the kernel's MAX_RW_COUNT or past it (iov_want() stops there; past
	 * SSIZE_MAX preadv2 says EINVAL): the ring caps the request, the fast
	 * path would not. */
	if (__atomic_load_n(direct, __ATOMIC_RELAXED) || want == 0 || want >= GIONG__FS_MAX_RW ||
	    env_ring_only())
		return ring_preadv(fd, iov, iovcnt, off);
	err = direct_gate();
	if (err)
		return err;
	n = nowait_preadv(fd, iov, iovcnt, off);
	if (n >= 0) {
		run.reads++;
		run.bytes += (size_t)n;
		if (complete && n > 0 && (size_t)n < want)
			n = read_on(fd, iov, iovcnt, off, (size_t)n, want);
		return n;
	}
	switch (n) {
	case -EOPNOTSUPP: /* no RWF_NOWAIT here (tmpfs, /proc, FUSE, a directory) */
	case -ESPIPE:     /* a pipe, FIFO, socket or terminal: the ring ignores @off */
		__atomic_fetch_or(direct, GIONG__FS_NO_NOWAIT, __ATOMIC_RELAXED);
		return ring_preadv(fd, iov, iovcnt, off);
	case -EINVAL:
		/* A filesystem that refuses the flag, or a request the ring will
		 * refuse as well: remember only the former. */
		r = ring_preadv(fd, iov, iovcnt, off);
		if (r != -EINVAL)
			__atomic_fetch_or(direct, GIONG__FS_NO_NOWAIT, __ATOMIC_RELAXED);
		return r;
	default:
		/* -EAGAIN: not (all) in the cache, the ring waits for the disk.
		 * Any other error: let the ring give its own answer, as before. */
		return ring_preadv(fd, iov, iovcnt, off);
	}
}

static void ts_from_statx(struct giong_timestamp *t, const struct statx_timestamp *s)
{
	t->sec = s->tv_sec;
	t->nsec = s->tv_nsec;
}

int giong__fs_statx(int dfd, const char *path, int flags, struct giong_stat *st)
{
	struct io_uring_sqe *sqe;
	struct statx stx;
	int err = giong__fs_sqe(&sqe);

	if (err)
		return err;
	memset(&stx, 0, sizeof(stx));
	/* @path (the caller's, or a string literal) and &stx (this frame) are
	 * lent to the kernel until giong_io() returns after the final CQE. */
	io_uring_prep_statx(sqe, dfd, path, flags | AT_STATX_SYNC_AS_STAT,
			    STATX_BASIC_STATS | STATX_BTIME, &stx);
	err = giong_io(sqe);
	if (err < 0)
		return err;
	GIONG__FS_KERNEL_WROTE(&stx, sizeof(stx));
	memset(st, 0, sizeof(*st));
	st->size = stx.stx_size;
	st->blocks = stx.stx_blocks;
	st->ino = stx.stx_ino;
	st->dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	st->rdev = makedev(stx.stx_rdev_major, stx.stx_rdev_minor);
	st->mode = stx.stx_mode;
	st->nlink = stx.stx_nlink;
	st->uid = stx.stx_uid;
	st->gid = stx.stx_gid;
	st->blksize = stx.stx_blksize;
	ts_from_statx(&st->atime, &stx.stx_atime);
	ts_from_statx(&st->mtime, &stx.stx_mtime);
	ts_from_statx(&st->ctime, &stx.stx_ctime);
	if (stx.stx_mask & STATX_BTIME) {
		ts_from_statx(&st->btime, &stx.stx_btime);
		st->mask |= GIONG_STAT_BTIME;
	}
	return 0;
}

/* close(2) for a descriptor the ring did not close. Linux releases the
 * descriptor even when close(2) fails (EINTR included): never retry. */
static int close_direct(int fd)
{
	return close(fd) ? -errno : 0;
}

int giong__fs_close_direct(int fd)
{
	return close_direct(fd);
}

/*
 * Closing exactly once.
 *
 * giong_io() of an IORING_OP_CLOSE can end in three ways:
 *  - The kernel ran the close: any result but -ECANCELED (0, -EIO, -EBADF,
 *    ...). The descriptor is gone; a second close could hit a descriptor
 *    number another thread has just been given.
 *  - The SQE never reached the kernel: the task was already cancelled or
 *    past its deadline (giong_io() discards the SQE and returns -ECANCELED /
 *    -ETIMEDOUT at once), the worker is draining (GIONG_ESHUTDOWN), or no
 *    operation slot (-ENOMEM). We check the first case ourselves before
 *    submitting, and take the deadline off for the close, so these codes
 *    after a submit can only mean "not submitted".
 *  - The task was cancelled while parked and the kernel cancelled the close
 *    before it ran: -ECANCELED. A close runs inline at submission unless the
 *    file has a ->flush method (NFS, FUSE, some devices), in which case it
 *    is queued to a kernel worker, and only a queued close can be cancelled;
 *    io_close() removes the descriptor from the table only when it runs. So
 *    -ECANCELED from the kernel means the descriptor is still open.
 * In the last two cases we close(2) directly, and only if fcntl(F_GETFD)
 * still finds the descriptor (the residual race: another thread reusing
 * the number in that window). The ring refuses to close an io_uring
 * instance's own descriptor (-EBADF, still open): giong_file_from_fd()
 * spots those and giong__fs_close_direct() closes them. A -EBADF from the
 * ring is otherwise final: the kernel may already have released the number
 * (a ->flush that failed), and closing it again could close a stranger.
 */
int giong__fs_close_fd(int fd)
{
	struct io_uring_sqe *sqe;
	uint64_t saved;
	int ret;

	if (fd < 0)
		return -EBADF;
	if (giong_task_cancelled() || giong__fs_sqe(&sqe))
		return close_direct(fd);
	/* A deadline would only turn a slow close into a blocking one. */
	saved = giong_deadline();
	giong_deadline_restore(GIONG_NO_DEADLINE);
	io_uring_prep_close(sqe, fd); /* no memory is lent */
	ret = giong_io(sqe);
	giong_deadline_restore(saved);
	if (ret == -ECANCELED || ret == -ETIMEDOUT || ret == GIONG_ESHUTDOWN || ret == -ENOMEM) {
		if (fcntl(fd, F_GETFD) >= 0)
			return close_direct(fd);
		return 0;
	}
	return ret;
}
