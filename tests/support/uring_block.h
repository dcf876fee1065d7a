/* SPDX-License-Identifier: MIT */
/*
 * uring_block.h - io_uring made to fail with a chosen errno, as a container's seccomp profile
 * makes it fail (Docker's default: EPERM; gVisor ENOSYS; others EOPNOTSUPP), for
 * tests/core/test_ring.c (in a forked child) and tests/harness/noring (which then execs a
 * program).
 */
#ifndef GIONG_TEST_URING_BLOCK_H
#define GIONG_TEST_URING_BLOCK_H

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The architecture the filter was built for: system call numbers differ per architecture,
 * so a call made through another ABI (x32, a 32-bit compat call) must not be matched with
 * this one's numbers. Not one of these two: no AUDIT_ARCH, and the filter kills every call
 * (see below) rather than let io_uring through unnoticed. */
#if defined(__x86_64__)
#define GT_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define GT_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#define GT_AUDIT_ARCH 0
#endif

#ifndef __NR_io_uring_setup /* old headers: the numbers are the same on both ABIs */
#define __NR_io_uring_setup 425
#define __NR_io_uring_enter 426
#define __NR_io_uring_register 427
#endif

/*
 * gt_block_uring_calls() - from now on the system calls numbered @a, @b and @c fail with
 * @err (1..4095) in the calling thread, the threads and children it starts later and
 * what it execs: a seccomp filter is inherited across fork, clone and execve and cannot be
 * removed, which is what lets a launcher apply it to a whole program. A call made through
 * another architecture's ABI kills the process. Returns 0, or -1 with errno set when this
 * kernel (or valgrind) takes no seccomp filter.
 */
static inline int gt_block_uring_calls(int err, unsigned a, unsigned b, unsigned c)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, GT_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, a, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, b, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, c, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned)err & SECCOMP_RET_DATA)),
	};
	struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};

	/* NO_NEW_PRIVS: what lets a process without CAP_SYS_ADMIN install a filter (it can then
	 * never gain privileges through a set-user-ID exec that the filter could subvert). */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	/* TSYNC: the threads already running get the filter too, not only those started
	 * later (a launcher has none; a test child might). */
	long ret = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
	if (ret > 0) /* the ID of a thread that could not be synchronised */
		errno = EBUSY;
	return ret ? -1 : 0;
}

/* gt_block_uring() - io_uring_setup, io_uring_enter and io_uring_register fail with @err
 * from now on (see gt_block_uring_calls()): Docker's, containerd's and gVisor's way. */
static inline int gt_block_uring(int err)
{
	return gt_block_uring_calls(err, __NR_io_uring_setup, __NR_io_uring_enter,
				    __NR_io_uring_register);
}

/* gt_block_uring_call() - only the system call numbered @nr fails with @err from now on: a
 * profile that lets a ring be made but not registered or entered. */
static inline int gt_block_uring_call(int err, unsigned nr)
{
	return gt_block_uring_calls(err, nr, nr, nr);
}

#endif /* GIONG_TEST_URING_BLOCK_H */
