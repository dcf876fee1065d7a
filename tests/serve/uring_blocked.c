/* SPDX-License-Identifier: MIT */
/*
 * uring_blocked ERRNO PROGRAM [ARGS...] - runs PROGRAM with io_uring_setup(2) failing with
 * ERRNO (a number), as a container's seccomp profile makes it fail: a seccomp filter that
 * answers that one system call with SECCOMP_RET_ERRNO (../support/uring_block.h), kept
 * through the execv. What a program prints then is uring_blocked.sh's to check. Exits 77
 * when this kernel (or valgrind) takes no seccomp filter, 2 on bad arguments, 1 when the
 * exec fails.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uring_block.h"

int main(int argc, char **argv)
{
	char *end;
	long err = argc >= 3 ? strtol(argv[1], &end, 10) : 0;

	if (argc < 3 || *end || err <= 0 || err > 4095) {
		fprintf(stderr, "usage: uring_blocked ERRNO PROGRAM [ARGS...]\n");
		return 2;
	}
	if (gt_block_uring_setup((int)err)) {
		fprintf(stderr, "uring_blocked: no seccomp filter here: %s\n", strerror(errno));
		return 77;
	}
	execv(argv[2], argv + 2);
	fprintf(stderr, "uring_blocked: %s: %s\n", argv[2], strerror(errno));
	return 1;
}
