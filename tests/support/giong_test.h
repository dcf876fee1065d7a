/* SPDX-License-Identifier: MIT */
/*
 * giong_test.h - shared fixtures for giong's CMocka tests.
 *
 * A test exits 77 (skipped) only when the kernel cannot give it a runtime or
 * a feature it needs, and says which; any other failure fails. Where
 * io_uring is refused (a container's seccomp profile) the suite runs on the
 * epoll tier the runtime falls back to: gt_tier_epoll() says so.
 */
#ifndef GIONG_TEST_H
#define GIONG_TEST_H

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include <liburing.h>

#include <cmocka.h>

#include <giong/core.h>

/* RUNNING_ON_VALGRIND: 1 under valgrind (a test may leave out what valgrind
 * changes, saying why), 0 elsewhere or without valgrind's header. */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

#define GT_SKIP 77

#ifdef GIONG_COVERAGE
/* gcov writes each library's counters from its destructor at exit(), which
 * _exit() skips: what a forked child ran of the libraries would be missing
 * from the coverage figures (scripts/check coverage). In coverage builds only,
 * a test's child exits through exit(), and stdio is flushed before a fork so
 * that the child's exit() does not write the parent's buffered output again. */
#define _exit(code) exit(code)
#define fork() (fflush(NULL), fork())
#endif

#ifdef GIONG_FAULTS
#include "giong_faults.h" /* a GIONG_FAULTS=ON build: private/ is on the path */
#endif

/* A GIONG_FAULTS=ON build's plan (docs/testing.md) made this many SQE
 * requests find the ring full and enters fail so far: each may cost one
 * enter more than a test that counts enters expects. 0 in other builds. */
static inline uint64_t gt_faults_ring(void)
{
#ifdef GIONG_FAULTS
	return giong__faults_injected(GIONG__FAULT_SQE) +
	       giong__faults_injected(GIONG__FAULT_ENTER);
#else
	return 0;
#endif
}

/*
 * Tasks do not call CMocka's assert_*(): a failure longjmps to the test
 * runner, which off a fiber stack would leave the runtime behind, the
 * thread still a worker, and every later test of the program failing with
 * -EDEADLK. A task records what it saw instead, either in a struct of its
 * own or with the gt_check_*() macros below, and the test asserts after the
 * runtime returned; a failure then ends only its own test.
 *
 * gt_check_X(...) makes the comparison of CMocka's assert_X(...) (the same
 * arguments, the same meaning) and returns whether it held; a failed check
 * is recorded with its place, its expression and the values seen. A task
 * that cannot go on after a failed check returns:
 *
 *	if (!gt_check_non_null(p))
 *		return;
 *
 * gt_checks_assert() (called by gt_run() and fs_run() once the runtime
 * has returned) prints every failed check and fails the test if there was
 * one. Safe from any worker.
 */
#define GT_CHECKS_KEPT 16

struct gt_checks {
	atomic_uint failed;             /* failed checks since the last gt_checks_assert() */
	char what[GT_CHECKS_KEPT][384]; /* the first GT_CHECKS_KEPT of them */
};

static struct gt_checks gt_checks;

__attribute__((format(printf, 3, 4))) static inline bool gt_check_failed(const char *file, int line,
									 const char *fmt, ...)
{
	unsigned i = atomic_fetch_add(&gt_checks.failed, 1);
	va_list ap;
	int n;

	if (i >= GT_CHECKS_KEPT)
		return false;
	n = snprintf(gt_checks.what[i], sizeof(gt_checks.what[i]), "%s:%d: ", file, line);
	if (n < 0 || (size_t)n >= sizeof(gt_checks.what[i]))
		return false;
	va_start(ap, fmt);
	vsnprintf(gt_checks.what[i] + n, sizeof(gt_checks.what[i]) - (size_t)n, fmt, ap);
	va_end(ap);
	return false;
}

static inline bool gt_check_int(bool ok, intmax_t a, intmax_t b, const char *op, const char *ea,
				const char *eb, const char *file, int line)
{
	return ok || gt_check_failed(file, line,
				     "%s %s %s: %" PRIdMAX " (%#" PRIxMAX ") vs %" PRIdMAX
				     " (%#" PRIxMAX ")",
				     ea, op, eb, a, (uintmax_t)a, b, (uintmax_t)b);
}

static inline bool gt_check_mem(const void *a, const void *b, size_t n, const char *ea,
				const char *eb, const char *file, int line)
{
	const unsigned char *p = a, *q = b;

	for (size_t i = 0; i < n; i++)
		if (p[i] != q[i])
			return gt_check_failed(file, line,
					       "%s == %s (%zu bytes): byte %zu differs: %#x vs %#x",
					       ea, eb, n, i, p[i], q[i]);
	return true;
}

static inline bool gt_check_str(bool want_equal, const char *a, const char *b, const char *ea,
				const char *eb, const char *file, int line)
{
	/* NULL (a call that failed) equals only NULL, and is printed as such. */
	bool equal = a && b ? strcmp(a, b) == 0 : a == b;

	if (equal == want_equal)
		return true;
	return gt_check_failed(file, line, "%s %s %s: \"%s\" vs \"%s\"", ea,
			       want_equal ? "==" : "!=", eb, a ? a : "(null)", b ? b : "(null)");
}

#define gt_check_true(c) ((c) ? true : gt_check_failed(__FILE__, __LINE__, "%s", #c))
#define gt_check_false(c) (!(c) ? true : gt_check_failed(__FILE__, __LINE__, "!(%s)", #c))
#define gt_check_null(p)                                                                           \
	((p) == NULL ? true : gt_check_failed(__FILE__, __LINE__, "%s == NULL", #p))
#define gt_check_non_null(p)                                                                       \
	((p) != NULL ? true : gt_check_failed(__FILE__, __LINE__, "%s != NULL", #p))
#define gt_check_int_equal(a, b)                                                                   \
	({                                                                                         \
		intmax_t gt_a_ = (intmax_t)(a), gt_b_ = (intmax_t)(b);                             \
		gt_check_int(gt_a_ == gt_b_, gt_a_, gt_b_, "==", #a, #b, __FILE__, __LINE__);      \
	})
#define gt_check_int_not_equal(a, b)                                                               \
	({                                                                                         \
		intmax_t gt_a_ = (intmax_t)(a), gt_b_ = (intmax_t)(b);                             \
		gt_check_int(gt_a_ != gt_b_, gt_a_, gt_b_, "!=", #a, #b, __FILE__, __LINE__);      \
	})
/* CMocka's assert_in_range(): @lo <= @v <= @hi, compared unsigned. */
#define gt_check_in_range(v, lo, hi)                                                               \
	({                                                                                         \
		uintmax_t gt_v_ = (uintmax_t)(v), gt_lo_ = (uintmax_t)(lo),                        \
			  gt_hi_ = (uintmax_t)(hi);                                                \
		(gt_v_ >= gt_lo_ && gt_v_ <= gt_hi_)                                               \
			? true                                                                     \
			: gt_check_failed(__FILE__, __LINE__,                                      \
					  "%s in [%s, %s]: %" PRIuMAX " not in [%" PRIuMAX         \
					  ", %" PRIuMAX "]",                                       \
					  #v, #lo, #hi, gt_v_, gt_lo_, gt_hi_);                    \
	})
#define gt_check_ptr_equal(a, b)                                                                   \
	({                                                                                         \
		const void *gt_a_ = (a), *gt_b_ = (b);                                             \
		gt_a_ == gt_b_ ? true                                                              \
			       : gt_check_failed(__FILE__, __LINE__, "%s == %s: %p vs %p", #a, #b, \
						 gt_a_, gt_b_);                                    \
	})
#define gt_check_memory_equal(a, b, n) gt_check_mem((a), (b), (n), #a, #b, __FILE__, __LINE__)
#define gt_check_string_equal(a, b) gt_check_str(true, (a), (b), #a, #b, __FILE__, __LINE__)
#define gt_check_string_not_equal(a, b) gt_check_str(false, (a), (b), #a, #b, __FILE__, __LINE__)
/* CMocka's fail_msg(): always a failed check. */
#define gt_check_fail_msg(...) gt_check_failed(__FILE__, __LINE__, __VA_ARGS__)

/* Print the failed checks recorded since the last call and fail the test
 * if there was one; forget them. Call with no task running. */
static inline void gt_checks_assert(void)
{
	unsigned n = atomic_exchange(&gt_checks.failed, 0);

	for (unsigned i = 0; i < n && i < GT_CHECKS_KEPT; i++)
		print_error("check failed: %s\n", gt_checks.what[i]);
	if (n > GT_CHECKS_KEPT)
		print_error("(%u more failed checks not kept)\n", n - GT_CHECKS_KEPT);
	if (n)
		fail_msg("%u check(s) failed in tasks", n);
}

/* io_uring is refused here: io_uring_setup, io_uring_register or
 * io_uring_enter fails with EPERM, EACCES, EOPNOTSUPP or ENOSYS (a seccomp
 * profile, kernel.io_uring_disabled, gVisor), where a runtime falls back to
 * the epoll tier by itself. Raw system calls, no runtime: callable from any
 * thread, a task's too. Probed once per process. */
static inline bool gt_uring_refused(void)
{
	static atomic_int refused = -1;
	int r = atomic_load(&refused);

	if (r < 0) {
		struct io_uring_params p;
		long fd, e = 0;

		memset(&p, 0, sizeof(p));
		fd = syscall(__NR_io_uring_setup, 4, &p);
		if (fd < 0) {
			e = errno;
		} else {
			/* Unregistering what was never registered: ENXIO where
			 * register is allowed, the profile's errno where not. */
			if (syscall(__NR_io_uring_register, fd, IORING_UNREGISTER_BUFFERS, NULL,
				    0) < 0)
				e = errno;
			if ((e == 0 || e == ENXIO) &&
			    syscall(__NR_io_uring_enter, fd, 0, 0, 0, NULL, 0) < 0)
				e = errno;
			close((int)fd);
		}
		r = e == EPERM || e == EACCES || e == EOPNOTSUPP || e == ENOSYS;
		atomic_store(&refused, r);
	}
	return r;
}

/* True when this process's runtimes run on the epoll tier: forced
 * (GIONG_RING_TIER=epoll), or io_uring refused here, where the runtime
 * falls back to it by itself (unless asked for io_uring only). */
static inline bool gt_tier_epoll(void)
{
	const char *t = getenv("GIONG_RING_TIER");

	if (t && !strcmp(t, "epoll"))
		return true;
	return !(t && !strcmp(t, "uring")) && gt_uring_refused();
}

/* In a test case that forces an io_uring tier through its config: skip the
 * case (CMocka's skip()) where io_uring is refused, saying so; the rest of
 * the program's cases still run, on the epoll tier. */
#define gt_skip_if_uring_refused()                                                                 \
	do {                                                                                       \
		if (gt_uring_refused()) {                                                          \
			print_message("skip: io_uring is refused here (seccomp, "                  \
				      "kernel.io_uring_disabled): this case forces an io_uring "   \
				      "tier\n");                                                   \
			skip();                                                                    \
		}                                                                                  \
	} while (0)

/* Exit 77 if no runtime can start here, naming the reason. Where io_uring
 * is refused the runtime runs on the epoll tier and the test runs there;
 * only GIONG_RING_TIER=uring (io_uring only) or a kernel too old for the
 * io_uring tiers with the fallback off makes this a skip. */
static inline void gt_require_runtime(void)
{
	struct giong_config c;
	struct giong_runtime *rt;
	int err;

	giong_config_init(&c);
	c.workers = 1;
	c.quiet_fallback = true;
	err = giong_runtime_new(&c, &rt);
	if (err == GIONG_EURING_DISABLED || err == GIONG_ENOURING || err == GIONG_EURING_OLD) {
		fprintf(stderr, "SKIP: %s\n", giong_strerror(err));
		exit(GT_SKIP);
	}
	if (err) {
		fprintf(stderr, "giong_runtime_new: %s\n", giong_strerror(err));
		exit(1);
	}
	giong_runtime_free(rt);
}

/* A config for tests: @workers workers, small pools, short grace. */
static inline struct giong_config gt_config(unsigned workers)
{
	struct giong_config c;

	giong_config_init(&c);
	c.workers = workers;
	c.ring_entries = 256;
	c.recv_buffers = 64;
	c.shutdown_grace_ms = 2000;
	return c;
}

/* Run @fn on a runtime made from @cfg; fail the test on any error and on
 * any failed gt_check_*() of its tasks. If @stats is non-NULL, worker 0's
 * final counters are stored there. */
static inline void gt_run(const struct giong_config *cfg, giong_main_fn fn, void *arg,
			  struct giong_stats *stats)
{
	struct giong_runtime *rt;
	int run, st = 0;

	assert_int_equal(giong_runtime_new(cfg, &rt), 0);
	run = giong_runtime_run(rt, fn, arg);
	if (stats)
		st = giong_runtime_stats(rt, 0, stats);
	assert_int_equal(giong_runtime_free(rt), 0);
	gt_checks_assert();
	assert_int_equal(run, 0);
	assert_int_equal(st, 0);
}

/* In a child of gt_fork_run(): the write end of the pipe to the parent. */
static int gt_child_fd = -1;

/*
 * Run @fn on a runtime made from @cfg in a child process (for signals sent
 * to a whole process). The child writes to the parent through gt_child_fd;
 * it exits 42 when the run returned cleanly, 1 if it could not run, and is
 * ended by SIGALRM after 60 s whatever happens. Returns the child's pid and
 * the read end of the pipe in *@from_child.
 */
static inline pid_t gt_fork_run(const struct giong_config *cfg, giong_main_fn fn, void *arg,
				int *from_child)
{
	int p[2];
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct giong_runtime *rt;

		close(p[0]);
		gt_child_fd = p[1];
		alarm(60);
		if (giong_runtime_new(cfg, &rt) || giong_runtime_run(rt, fn, arg))
			_exit(1);
		giong_runtime_free(rt);
		_exit(42);
	}
	close(p[1]);
	*from_child = p[0];
	return pid;
}

/* Open descriptors of this process (entries of /proc/self/fd). */
static inline int gt_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the DIR's own descriptor */
}

#ifdef LIB_URING_H /* the tests that include <liburing.h> (and <fcntl.h>) first */
/* Open @path with giong_io() (the ring, or the epoll tier's helper threads),
 * from a task, and close what it opened: 0, or the open's error. */
static inline int gt_io_open(const char *path, int flags)
{
	struct io_uring_sqe *sqe = giong_sqe();
	int r;

	if (!sqe)
		return -EBUSY;
	io_uring_prep_openat(sqe, AT_FDCWD, path, flags, 0);
	r = giong_io(sqe);
	if (r < 0)
		return r;
	close(r);
	return 0;
}
#endif

/* Send all @len bytes on blocking socket @fd (plain peer threads): @len, or
 * -errno (-EPIPE for a send of 0). */
static inline ssize_t gt_write_all(int fd, const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = send(fd, (const char *)buf + done, len - done, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		done += (size_t)n;
	}
	return (ssize_t)len;
}

/* ------------------------------------ descriptors, for the tests with many */

/* Raise RLIMIT_NOFILE to @n, or as far as the hard limit allows when the
 * process may not raise that (no CAP_SYS_RESOURCE, as in containers).
 * Returns the soft limit now in force, or -errno. */
static inline long gt_raise_nofile(rlim_t n)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	if (rl.rlim_cur >= n)
		return (long)rl.rlim_cur;
	if (rl.rlim_max < n) {
		struct rlimit want = {n, n};

		if (setrlimit(RLIMIT_NOFILE, &want) == 0)
			return (long)n;
	}
	rl.rlim_cur = rl.rlim_max < n ? rl.rlim_max : n;
	return setrlimit(RLIMIT_NOFILE, &rl) ? -errno : (long)rl.rlim_cur;
}

/* Close @fd with a reset instead of a FIN: leaves no TIME_WAIT behind (the
 * tests open many thousands of connections). */
static inline void gt_close_rst(int fd)
{
	struct linger lg = {1, 0};

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
}

/* Assert the process has @before descriptors open again; list them if not.
 * Closes through the ring are asynchronous but done once the runtime ended. */
static inline void gt_assert_fds(int before)
{
	int now = gt_count_fds();

	if (now != before) {
		DIR *d = opendir("/proc/self/fd");
		struct dirent *e;

		while (d && (e = readdir(d))) {
			char path[300], link[256];
			ssize_t n;

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
			n = readlink(path, link, sizeof(link) - 1);
			link[n > 0 ? n : 0] = '\0';
			if (!strncmp(link, "socket:", 7)) {
				struct sockaddr_storage la, pa;
				socklen_t ll = sizeof(la), pl = sizeof(pa);
				struct tcp_info ti;
				socklen_t tl = sizeof(ti);
				int fd = atoi(e->d_name), lp = -1, pp = -1, st = -1;

				if (!getsockname(fd, (struct sockaddr *)&la, &ll) &&
				    la.ss_family == AF_INET)
					lp = ntohs(((struct sockaddr_in *)&la)->sin_port);
				if (!getpeername(fd, (struct sockaddr *)&pa, &pl) &&
				    pa.ss_family == AF_INET)
					pp = ntohs(((struct sockaddr_in *)&pa)->sin_port);
				if (!getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl))
					st = ti.tcpi_state;
				print_message("fd %s -> %s local %d peer %d state %d\n", e->d_name,
					      link, lp, pp, st);
				continue;
			}
			print_message("fd %s -> %s\n", e->d_name, link);
		}
		if (d)
			closedir(d);
		if (getenv("NT_DEBUG")) {
			char cmd[64];

			snprintf(cmd, sizeof(cmd), "ss -tanpe | grep pid=%d, >&2", (int)getpid());
			if (system(cmd) < 0)
				print_message("ss failed\n");
		}
	}
	assert_int_equal(now, before);
}

/* Hold [::1]:@port for TCP: a socket bound there (IPv6 only), not listening:
 * no other process can listen there, and a connect to it is refused. A test
 * connecting to localhost:@port with a listener on 127.0.0.1 only holds it:
 * Happy Eyeballs tries ::1 first, and a foreign listener there would win.
 * Returns the fd (close it after), -EADDRINUSE when another socket has the
 * port on ::1 (take another one), or another -errno (no ::1 on this
 * machine: nothing there to hold). */
static inline int gt_hold_v6_loopback(int port)
{
	struct sockaddr_in6 sa = {.sin6_family = AF_INET6,
				  .sin6_port = htons((uint16_t)port),
				  .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -errno;
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

#endif /* GIONG_TEST_H */
