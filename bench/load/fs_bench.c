/* SPDX-License-Identifier: MIT */
/*
 * fs_bench - libgiong-fs against its peers, on files held in the page cache.
 *
 *   fs_bench [-d DIR] [-r ROUNDS] [-n OPS] [-f FILTER]
 *
 * Two workloads, each at 1 and at 64 operations in flight:
 *   rand4k  4 KiB reads at random 4 KiB-aligned offsets of one 64 MiB file
 *   small   whole small files (1 to 8 KiB, 1024 of them, visited in a shuffled
 *           order): open, stat, read, close
 * Peers:
 *   block     blocking pread / open+fstat+read+close from one thread (1 only)
 *   liburing  a minimal liburing program: N SQEs, one io_uring_submit_and_wait
 *             per batch (small: three batches per file group: openat; fstat
 *             direct + read; close), SINGLE_ISSUER|DEFER_TASKRUN ring
 *   giong     N fibers on one giong worker: giong_file_read_at (rand4k),
 *             giong_fs_read (small; fstat direct), as the library does them by
 *             default: a direct preadv2(RWF_NOWAIT) first, the ring only on a
 *             page-cache miss, and (small) a direct openat2(RESOLVE_CACHED),
 *             the ring only when the lookup is not cached; "giong-statx" does
 *             open + giong_file_stat (IORING_OP_STATX) + read_at + close
 *   giong-ring-only  the same calls with every read and open an SQE: rand4k
 *             opens the file with giong_open_options.ring_only, small runs
 *             giong_fs_read with GIONG_FS_READ=ring in the environment
 *   uv-1cpu   libuv's uv_fs_* (its thread pool) with the process pinned to CPU 0
 *   uv-2cpu   the same, free on every CPU
 * Every single-threaded peer and giong is pinned to CPU 0. Each measurement
 * runs in a fresh child process; a round runs every measurement once, in
 * order; ratios are taken within a round, and the medians are printed.
 * A helper process maps and mlocks every file for the whole run, and each
 * round first checks with mincore() that every page is resident.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>
#include <uv.h>

#include <giong/fs.h>

#define BIG_SIZE (64u << 20)
#define NSMALL 1024
#define DEPTH_MAX 64
#define BLK 4096

static char dir[512] = "/tmp/giong-fs-bench";
static char big_path[600];
static char small_paths[NSMALL][600];
static unsigned order[NSMALL]; /* shuffled visiting order of the small files */
static long nops = 200000;

/* ------------------------------------------------------------------ utils */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static uint64_t rand_off(uint64_t *s)
{
	return (rnd(s) % (BIG_SIZE / BLK)) * BLK;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "fs_bench: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(2);
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	if (cpu >= 0) {
		CPU_SET(cpu, &set);
	} else {
		for (int i = 0; i < CPU_SETSIZE; i++)
			CPU_SET(i, &set);
	}
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity", errno);
}

/* ---------------------------------------------------------------- files */

static void make_files(void)
{
	char *buf = malloc(1 << 20);
	uint64_t s = 12345;
	struct stat st;
	int fd;

	mkdir(dir, 0755);
	snprintf(big_path, sizeof big_path, "%s/big.dat", dir);
	if (stat(big_path, &st) || st.st_size != BIG_SIZE) {
		fd = open(big_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			die(big_path, errno);
		for (unsigned i = 0; i < BIG_SIZE >> 20; i++) {
			for (size_t j = 0; j < (1 << 20) / 8; j++)
				((uint64_t *)buf)[j] = rnd(&s);
			if (write(fd, buf, 1 << 20) != 1 << 20)
				die("write", errno);
		}
		close(fd);
	}
	s = 777;
	for (unsigned i = 0; i < NSMALL; i++) {
		size_t size = 1024 + rnd(&s) % (7 * 1024 + 1);

		snprintf(small_paths[i], sizeof small_paths[i], "%s/small-%04u", dir, i);
		if (!stat(small_paths[i], &st) && (size_t)st.st_size == size)
			continue;
		fd = open(small_paths[i], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, buf, size) != (ssize_t)size)
			die(small_paths[i], errno);
		close(fd);
	}
	for (unsigned i = 0; i < NSMALL; i++)
		order[i] = i;
	for (unsigned i = NSMALL - 1; i > 0; i--) {
		unsigned j = rnd(&s) % (i + 1), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	free(buf);
}

/* Map (and lock) one file; returns its mapping or NULL. */
static void *map_file(const char *p, size_t *len)
{
	struct stat st;
	void *m;
	int fd = open(p, O_RDONLY);

	if (fd < 0 || fstat(fd, &st))
		die(p, errno);
	*len = (size_t)st.st_size;
	m = mmap(NULL, *len, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
	close(fd);
	return m == MAP_FAILED ? NULL : m;
}

/* The helper: keeps every file mapped and locked until killed. */
static pid_t start_keeper(void)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	int locked = 1;
	size_t len;
	void *m = map_file(big_path, &len);

	if (!m || mlock(m, len))
		locked = 0;
	for (unsigned i = 0; i < NSMALL; i++) {
		m = map_file(small_paths[i], &len);
		if (!m || mlock(m, len))
			locked = 0;
	}
	if (!locked)
		fprintf(stderr,
			"fs_bench: keeper could not mlock everything (%s); pages are "
			"mapped and checked each round\n",
			strerror(errno));
	for (;;)
		pause();
}

/* Pages of the data set not in the page cache (0 expected). */
static long not_resident(void)
{
	long missing = 0;
	const char *p;

	for (unsigned i = 0; i <= NSMALL; i++) {
		size_t len, pages;
		unsigned char *vec;
		void *m;

		p = i == NSMALL ? big_path : small_paths[i];
		m = map_file(p, &len);
		pages = (len + 4095) / 4096;
		vec = malloc(pages);
		if (!m || mincore(m, len, vec))
			die("mincore", errno);
		for (size_t j = 0; j < pages; j++)
			missing += !(vec[j] & 1);
		munmap(m, len);
		free(vec);
	}
	return missing;
}

/* -------------------------------------------------------------- blocking */

static double block_rand4k(int depth)
{
	char buf[BLK];
	uint64_t s = 1;
	int fd = open(big_path, O_RDONLY);
	double t0;

	(void)depth;
	t0 = now_s();
	for (long i = 0; i < nops; i++)
		if (pread(fd, buf, BLK, (off_t)rand_off(&s)) != BLK)
			die("pread", errno);
	t0 = now_s() - t0;
	close(fd);
	return nops / t0;
}

static double block_small(int depth)
{
	static char buf[16384];
	struct stat st;
	double t0;

	(void)depth;
	t0 = now_s();
	for (long i = 0; i < nops; i++) {
		int fd = open(small_paths[order[i % NSMALL]], O_RDONLY | O_CLOEXEC);

		if (fd < 0 || fstat(fd, &st))
			die("open", errno);
		if (read(fd, buf, (size_t)st.st_size + 1) != st.st_size)
			die("read", errno);
		close(fd);
	}
	return nops / (now_s() - t0);
}

/* -------------------------------------------------------------- liburing */

static void ring_init(struct io_uring *r)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SINGLE_ISSUER |
					      IORING_SETUP_DEFER_TASKRUN };
	int ret = io_uring_queue_init_params(256, r, &p);

	if (ret)
		die("io_uring_queue_init", ret);
}

/* Submit what is queued, wait for @n completions, store their results in
 * @res by user_data. */
static void ring_batch(struct io_uring *r, unsigned n, int *res)
{
	struct io_uring_cqe *cqe;
	unsigned head, seen = 0;
	int ret = io_uring_submit_and_wait(r, n);

	if (ret < 0)
		die("submit_and_wait", ret);
	while (seen < n) {
		io_uring_for_each_cqe(r, head, cqe) {
			if (res)
				res[cqe->user_data] = cqe->res;
			else if (cqe->res < 0)
				die("cqe", cqe->res);
			seen++;
		}
		io_uring_cq_advance(r, seen);
		if (seen < n && (ret = io_uring_wait_cqe(r, &cqe)) < 0)
			die("wait_cqe", ret);
	}
}

static double uring_rand4k(int depth)
{
	static char bufs[DEPTH_MAX][BLK];
	struct io_uring r;
	uint64_t s = 1;
	int fd = open(big_path, O_RDONLY);
	double t0;

	ring_init(&r);
	t0 = now_s();
	for (long done = 0; done < nops; done += depth) {
		for (int i = 0; i < depth; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&r);

			io_uring_prep_read(sqe, fd, bufs[i], BLK, rand_off(&s));
			sqe->user_data = (uint64_t)i;
		}
		ring_batch(&r, (unsigned)depth, NULL);
	}
	t0 = now_s() - t0;
	io_uring_queue_exit(&r);
	close(fd);
	return nops / t0;
}

static double uring_small(int depth)
{
	static char bufs[DEPTH_MAX][16384];
	int fds[DEPTH_MAX], res[DEPTH_MAX];
	struct io_uring r;
	struct stat st;
	double t0;
	long next = 0;

	ring_init(&r);
	t0 = now_s();
	while (next < nops) {
		for (int i = 0; i < depth; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&r);

			io_uring_prep_openat(sqe, AT_FDCWD, small_paths[order[(next + i) % NSMALL]],
					     O_RDONLY | O_CLOEXEC, 0);
			sqe->user_data = (uint64_t)i;
		}
		next += depth;
		ring_batch(&r, (unsigned)depth, fds);
		for (int i = 0; i < depth; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&r);

			if (fds[i] < 0 || fstat(fds[i], &st))
				die("openat", fds[i]);
			io_uring_prep_read(sqe, fds[i], bufs[i], (unsigned)st.st_size + 1, 0);
			sqe->user_data = (uint64_t)i;
		}
		ring_batch(&r, (unsigned)depth, res);
		for (int i = 0; i < depth; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&r);

			if (res[i] <= 0)
				die("read", res[i]);
			io_uring_prep_close(sqe, fds[i]);
			sqe->user_data = (uint64_t)i;
		}
		ring_batch(&r, (unsigned)depth, NULL);
	}
	t0 = now_s() - t0;
	io_uring_queue_exit(&r);
	return nops / t0;
}

/* ----------------------------------------------------------------- giong */

struct gjob {
	int depth;
	bool statx;
	bool ring_only;
	long per_task;
	struct giong_file *big;
	double rate;
	double sqes_per_op; /* SQEs the worker submitted per operation */
	int err;
};

static intptr_t g_rand_task(void *arg)
{
	struct gjob *j = arg;
	static char bufs[DEPTH_MAX][BLK];
	static int slot;
	char *buf = bufs[slot++ % DEPTH_MAX];
	uint64_t s = (uint64_t)(uintptr_t)buf | 1;

	for (long i = 0; i < j->per_task; i++) {
		int64_t off = (int64_t)rand_off(&s);

		if (giong_file_read_at(j->big, buf, BLK, off) != BLK)
			return -1;
	}
	return 0;
}

static intptr_t g_small_task(void *arg)
{
	struct gjob *j = arg;
	static long cursor;
	static char bufs[DEPTH_MAX][16384];
	static int slot;
	char *buf = bufs[slot++ % DEPTH_MAX];
	const struct giong_open_options ro = { .read = true };

	for (long i = 0; i < j->per_task; i++) {
		const char *p = small_paths[order[cursor++ % NSMALL]];

		if (!j->statx) {
			char *data;
			size_t len;

			if (giong_fs_read(p, &data, &len))
				return -1;
			free(data);
		} else {
			struct giong_file *f;
			struct giong_stat st;

			if (giong_file_open(p, &ro, &f) || giong_file_stat(f, &st))
				return -2;
			if (giong_file_read_at(f, buf, st.size + 1, 0) != (ssize_t)st.size)
				return -3;
			giong_file_close(f);
		}
	}
	return 0;
}

static void g_main(unsigned worker, void *arg)
{
	struct gjob *j = arg;
	struct giong_task *t[DEPTH_MAX];
	struct giong_stats s0, s1;
	const struct giong_open_options ro = { .read = true, .ring_only = j->ring_only };
	giong_task_fn fn = j->big ? g_rand_task : g_small_task;
	double t0;

	(void)worker;
	if (j->big && (j->err = giong_file_open(big_path, &ro, &j->big)))
		return;
	giong_stats(&s0);
	t0 = now_s();
	for (int i = 0; i < j->depth; i++)
		if ((j->err = giong_spawn(fn, j, &t[i])))
			return;
	for (int i = 0; i < j->depth; i++) {
		intptr_t res = 0;

		giong_join(t[i], &res);
		if (res)
			j->err = (int)res;
	}
	j->rate = (double)j->per_task * j->depth / (now_s() - t0);
	giong_stats(&s1);
	j->sqes_per_op =
		(double)(s1.sqes_submitted - s0.sqes_submitted) / ((double)j->per_task * j->depth);
	if (j->big)
		giong_file_close(j->big);
}

static double giong_run(int depth, bool rand4k, bool statx, bool ring_only)
{
	struct gjob j = { .depth = depth,
			  .statx = statx,
			  .ring_only = ring_only,
			  .per_task = nops / depth,
			  .big = rand4k ? (struct giong_file *)1 : NULL };
	int err = giong_block_on(g_main, &j);

	if (err || j.err)
		die("giong", err ? err : j.err);
	/* Which paths ran: with the data in the page cache the fast paths make
	 * no SQE for a read or an open (rand4k: ~0 per op; small: the close,
	 * ~1), the ring one per read and per open (rand4k 1; small 3). */
	if (!statx) {
		bool ring = ring_only || getenv("GIONG_FS_READ");
		double expect = rand4k ? (ring ? 1 : 0) : (ring ? 3 : 1);

		if (j.sqes_per_op < expect - 0.05 || j.sqes_per_op > expect + 0.05) {
			fprintf(stderr, "fs_bench: %.2f SQEs per operation, expected %.0f\n",
				j.sqes_per_op, expect);
			exit(2);
		}
	}
	return j.rate;
}

static double giong_rand4k(int d)
{
	return giong_run(d, true, false, false);
}

static double g_rand4k_ro(int d)
{
	return giong_run(d, true, false, true); /* giong_open_options.ring_only */
}

static double giong_small(int d)
{
	return giong_run(d, false, false, false);
}

static double g_small_ro(int d)
{
	/* giong_fs_read has no options: the process-wide switch, read once by
	 * the library (each measurement is a fresh child process). */
	setenv("GIONG_FS_READ", "ring", 1);
	return giong_run(d, false, false, true);
}

static double giong_small_statx(int d)
{
	return giong_run(d, false, true, false);
}

/* ------------------------------------------------------------------ libuv */

struct uslot {
	uv_fs_t req;
	char buf[16384];
	uv_file fd;
	int64_t size;
	uint64_t seed;
};

static uv_loop_t *uloop;
static long u_issued, u_done;
static int u_fd;

static void u_rand_cb(uv_fs_t *req);

static void u_rand_issue(struct uslot *s)
{
	uv_buf_t b = uv_buf_init(s->buf, BLK);

	u_issued++;
	uv_fs_read(uloop, &s->req, u_fd, &b, 1, (int64_t)rand_off(&s->seed), u_rand_cb);
}

static void u_rand_cb(uv_fs_t *req)
{
	struct uslot *s = (struct uslot *)req;

	if (req->result != BLK)
		die("uv read", (int)req->result);
	uv_fs_req_cleanup(req);
	u_done++;
	if (u_issued < nops)
		u_rand_issue(s);
}

static void u_open_cb(uv_fs_t *req);

static void u_small_issue(struct uslot *s)
{
	u_issued++;
	uv_fs_open(uloop, &s->req, small_paths[order[u_issued % NSMALL]], O_RDONLY | O_CLOEXEC, 0,
		   u_open_cb);
}

static void u_close_cb(uv_fs_t *req)
{
	struct uslot *s = (struct uslot *)req;

	uv_fs_req_cleanup(req);
	u_done++;
	if (u_issued < nops)
		u_small_issue(s);
}

static void u_read_cb(uv_fs_t *req)
{
	struct uslot *s = (struct uslot *)req;

	if (req->result != s->size)
		die("uv read", (int)req->result);
	uv_fs_req_cleanup(req);
	uv_fs_close(uloop, &s->req, s->fd, u_close_cb);
}

static void u_stat_cb(uv_fs_t *req)
{
	struct uslot *s = (struct uslot *)req;
	uv_buf_t b;

	if (req->result < 0)
		die("uv fstat", (int)req->result);
	s->size = (int64_t)req->statbuf.st_size;
	uv_fs_req_cleanup(req);
	b = uv_buf_init(s->buf, (unsigned)s->size + 1);
	uv_fs_read(uloop, &s->req, s->fd, &b, 1, 0, u_read_cb);
}

static void u_open_cb(uv_fs_t *req)
{
	struct uslot *s = (struct uslot *)req;

	if (req->result < 0)
		die("uv open", (int)req->result);
	s->fd = (uv_file)req->result;
	uv_fs_req_cleanup(req);
	uv_fs_fstat(uloop, &s->req, s->fd, u_stat_cb);
}

static double uv_run_(int depth, bool rand4k)
{
	static struct uslot slots[DEPTH_MAX];
	double t0;

	uloop = uv_default_loop();
	u_issued = u_done = 0;
	u_fd = open(big_path, O_RDONLY);
	t0 = now_s();
	for (int i = 0; i < depth; i++) {
		slots[i].seed = (uint64_t)i * 7919 + 1;
		if (rand4k)
			u_rand_issue(&slots[i]);
		else
			u_small_issue(&slots[i]);
	}
	uv_run(uloop, UV_RUN_DEFAULT);
	t0 = now_s() - t0;
	close(u_fd);
	return u_done / t0;
}

static double uv_rand4k(int d)
{
	return uv_run_(d, true);
}

static double uv_small(int d)
{
	return uv_run_(d, false);
}

/* ------------------------------------------------------------ the matrix */

struct meas {
	const char *work; /* rand4k | small */
	int depth;
	const char *peer;
	int cpu; /* CPU to pin to, -1: free */
	double (*fn)(int depth);
	double v[64]; /* ops/s per round */
};

static struct meas M[] = {
	{ .work = "rand4k", .depth = 1, .peer = "block", .cpu = 0, .fn = block_rand4k },
	{ .work = "rand4k", .depth = 1, .peer = "liburing", .cpu = 0, .fn = uring_rand4k },
	{ .work = "rand4k", .depth = 1, .peer = "giong", .cpu = 0, .fn = giong_rand4k },
	{ .work = "rand4k", .depth = 1, .peer = "giong-ring-only", .cpu = 0, .fn = g_rand4k_ro },
	{ .work = "rand4k", .depth = 1, .peer = "uv-1cpu", .cpu = 0, .fn = uv_rand4k },
	{ .work = "rand4k", .depth = 1, .peer = "uv-2cpu", .cpu = -1, .fn = uv_rand4k },
	{ .work = "rand4k", .depth = 64, .peer = "liburing", .cpu = 0, .fn = uring_rand4k },
	{ .work = "rand4k", .depth = 64, .peer = "giong", .cpu = 0, .fn = giong_rand4k },
	{ .work = "rand4k", .depth = 64, .peer = "giong-ring-only", .cpu = 0, .fn = g_rand4k_ro },
	{ .work = "rand4k", .depth = 64, .peer = "uv-1cpu", .cpu = 0, .fn = uv_rand4k },
	{ .work = "rand4k", .depth = 64, .peer = "uv-2cpu", .cpu = -1, .fn = uv_rand4k },
	{ .work = "small", .depth = 1, .peer = "block", .cpu = 0, .fn = block_small },
	{ .work = "small", .depth = 1, .peer = "liburing", .cpu = 0, .fn = uring_small },
	{ .work = "small", .depth = 1, .peer = "giong", .cpu = 0, .fn = giong_small },
	{ .work = "small", .depth = 1, .peer = "giong-ring-only", .cpu = 0, .fn = g_small_ro },
	{ .work = "small", .depth = 1, .peer = "giong-statx", .cpu = 0, .fn = giong_small_statx },
	{ .work = "small", .depth = 1, .peer = "uv-1cpu", .cpu = 0, .fn = uv_small },
	{ .work = "small", .depth = 1, .peer = "uv-2cpu", .cpu = -1, .fn = uv_small },
	{ .work = "small", .depth = 64, .peer = "liburing", .cpu = 0, .fn = uring_small },
	{ .work = "small", .depth = 64, .peer = "giong", .cpu = 0, .fn = giong_small },
	{ .work = "small", .depth = 64, .peer = "giong-ring-only", .cpu = 0, .fn = g_small_ro },
	{ .work = "small", .depth = 64, .peer = "giong-statx", .cpu = 0, .fn = giong_small_statx },
	{ .work = "small", .depth = 64, .peer = "uv-1cpu", .cpu = 0, .fn = uv_small },
	{ .work = "small", .depth = 64, .peer = "uv-2cpu", .cpu = -1, .fn = uv_small },
};
#define NM (sizeof(M) / sizeof(M[0]))

/* Run one measurement in a fresh child process; returns ops/s. */
static double measure(struct meas *m)
{
	int pfd[2];
	double v = 0;
	pid_t pid;
	int st;

	if (pipe(pfd))
		die("pipe", errno);
	pid = fork();
	if (pid == 0) {
		long saved = nops;

		close(pfd[0]);
		pin(m->cpu);
		nops = saved / 20 > 2000 ? 2000 : saved / 20; /* warm-up */
		nops = nops < m->depth ? m->depth : nops;
		m->fn(m->depth);
		nops = saved;
		v = m->fn(m->depth);
		if (write(pfd[1], &v, sizeof v) != sizeof v)
			_exit(3);
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], &v, sizeof v) != sizeof v)
		v = 0;
	close(pfd[0]);
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fprintf(stderr, "fs_bench: %s/%d/%s failed\n", m->work, m->depth, m->peer);
	return v;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
	double t[64];

	memcpy(t, v, sizeof(double) * (size_t)n);
	qsort(t, (size_t)n, sizeof(double), cmp_d);
	return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

static struct meas *find(const char *work, int depth, const char *peer)
{
	for (size_t i = 0; i < NM; i++)
		if (!strcmp(M[i].work, work) && M[i].depth == depth && !strcmp(M[i].peer, peer))
			return &M[i];
	return NULL;
}

/* Median over rounds of giong / peer within each round. */
static double ratio(const struct meas *g, const struct meas *p, int rounds)
{
	double r[64];

	for (int i = 0; i < rounds; i++)
		r[i] = p->v[i] > 0 ? g->v[i] / p->v[i] : 0;
	return median(r, rounds);
}

static void report(int rounds)
{
	static const char *works[] = { "rand4k", "small" };
	static const char *peers[] = { "block",	      "liburing", "giong",  "giong-ring-only",
				       "giong-statx", "uv-1cpu",  "uv-2cpu" };

	printf("\n| workload | in flight | peer | median kops/s | min | max | giong / peer (median of per-round ratios) |\n");
	printf("|---|---:|---|---:|---:|---:|---:|\n");
	for (int w = 0; w < 2; w++) {
		for (int d = 1; d <= 64; d *= 64) {
			struct meas *g = find(works[w], d, "giong");

			for (size_t p = 0; p < sizeof(peers) / sizeof(peers[0]); p++) {
				struct meas *m = find(works[w], d, peers[p]);
				double lo = 1e18, hi = 0;

				if (!m)
					continue;
				for (int i = 0; i < rounds; i++) {
					lo = m->v[i] < lo ? m->v[i] : lo;
					hi = m->v[i] > hi ? m->v[i] : hi;
				}
				printf("| %s | %d | %s | %.0f | %.0f | %.0f | ", works[w], d,
				       peers[p], median(m->v, rounds) / 1e3, lo / 1e3, hi / 1e3);
				if (m == g)
					printf("- |\n");
				else
					printf("%.2f |\n", ratio(g, m, rounds));
			}
		}
	}
	/* What the ring itself gives, for scale: the minimal liburing program
	 * against the same peers, same rounds. */
	printf("\nceilings (median of per-round ratios):\n");
	for (int w = 0; w < 2; w++) {
		struct meas *u1 = find(works[w], 1, "liburing"), *b1 = find(works[w], 1, "block");
		struct meas *u64 = find(works[w], 64, "liburing"),
			    *v64 = find(works[w], 64, "uv-1cpu");
		struct meas *r1 = find(works[w], 1, "giong-ring-only"),
			    *r64 = find(works[w], 64, "giong-ring-only");

		printf("  %s: liburing/block at 1 = %.2f; liburing/uv-1cpu at 64 = %.2f; "
		       "giong-ring-only/block at 1 = %.2f; giong-ring-only/liburing at 64 = %.2f; "
		       "giong-ring-only/uv-1cpu at 64 = %.2f\n",
		       works[w], ratio(u1, b1, rounds), ratio(u64, v64, rounds),
		       ratio(r1, b1, rounds), ratio(r64, u64, rounds), ratio(r64, v64, rounds));
	}
}

int main(int argc, char **argv)
{
	int rounds = 5, opt;
	const char *filter = NULL;
	struct utsname u;
	pid_t keeper;

	while ((opt = getopt(argc, argv, "d:r:n:f:h")) != -1) {
		switch (opt) {
		case 'd':
			snprintf(dir, sizeof dir, "%s", optarg);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'n':
			nops = atol(optarg);
			break;
		case 'f':
			filter = optarg;
			break;
		default:
			fprintf(stderr,
				"usage: %s [-d DIR] [-r ROUNDS(1..64)] [-n OPS] [-f FILTER]\n",
				argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (rounds < 1 || rounds > 64 || nops < DEPTH_MAX)
		die("bad -r or -n", EINVAL);
	uname(&u);
	printf("fs_bench: %s %s, %ld CPUs online, %d rounds x %ld ops, dir %s\n", u.sysname,
	       u.release, sysconf(_SC_NPROCESSORS_ONLN), rounds, nops, dir);
	make_files();
	keeper = start_keeper();
	sleep(1);
	for (int r = 0; r < rounds; r++) {
		long missing = not_resident();

		printf("round %d: %ld pages of the data set not resident\n", r + 1, missing);
		for (size_t i = 0; i < NM; i++) {
			char name[64];

			snprintf(name, sizeof name, "%s/%d/%s", M[i].work, M[i].depth, M[i].peer);
			if (filter && !strstr(name, filter))
				continue;
			M[i].v[r] = measure(&M[i]);
			printf("  %-24s %10.0f ops/s\n", name, M[i].v[r]);
			fflush(stdout);
		}
	}
	kill(keeper, SIGKILL);
	waitpid(keeper, NULL, 0);
	report(rounds);
	return 0;
}
