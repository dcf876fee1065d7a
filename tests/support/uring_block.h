/* SPDX-License-Identifier: MIT */
/*
 * uring_block.h - io_uring_setup(2) made to fail with a chosen errno, as a container's
 * seccomp profile makes it fail (Docker's default: EPERM; others EOPNOTSUPP or ENOSYS), for
 * tests/core/test_ring.c (in a forked child) and tests/serve/uring_blocked.c (which then
 * execs a program).
 */
#ifndef GIONG_TEST_URING_BLOCK_H
#define GIONG_TEST_URING_BLOCK_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * gt_block_uring_setup() - from now on io_uring_setup fails with @err (1..4095) in the
 * calling thread, the threads and children it starts later and what it execs; for good.
 * The architecture is not checked: the programs tested are built for this one. Returns 0,
 * or -1 with errno set when this kernel (or valgrind) takes no seccomp filter.
 */
static inline int gt_block_uring_setup(int err)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)err),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};

	/* NO_NEW_PRIVS: what lets a process without CAP_SYS_ADMIN install a filter. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) ? -1 : 0;
}

#endif /* GIONG_TEST_URING_BLOCK_H */
