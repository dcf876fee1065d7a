/* SPDX-License-Identifier: MIT */
/*
 * noring_probe - what this process gets from each io_uring system call, one line each:
 *
 *   io_uring_queue_init: OK | <ERRNO NAME>     (liburing's set-up, its return as it is)
 *   io_uring_enter: <ERRNO NAME>               (on a closed descriptor: EBADF)
 *   io_uring_register: <ERRNO NAME>            (on a closed descriptor: EBADF)
 *
 * tests/harness/noring/noring.sh runs it under noring with each errno and without it, to
 * show that the launcher refuses all three calls with the errno chosen, and nothing else
 * (build/bin/noring_probe; never installed). Exit 0 once it has printed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <liburing.h>

#define CLOSED_FD (1 << 20) /* past any descriptor limit a test runs with */

/* "OK" for 0, else the errno's name ("EPERM"): what the script compares. */
static const char *result(long ret, int err)
{
	const char *name;

	if (ret >= 0)
		return "OK";
	name = strerrorname_np(err);
	return name ? name : "unknown errno";
}

int main(void)
{
	struct io_uring ring;
	long ret;

	/* liburing returns the system call's error negated, as it is: -EPERM, not a mapping. */
	ret = io_uring_queue_init(4, &ring, 0);
	printf("io_uring_queue_init: %s\n", result(ret, (int)-ret));
	if (ret == 0)
		io_uring_queue_exit(&ring);
	/* Raw calls on a descriptor that is not open: the filter answers before the kernel
	 * looks at the descriptor, so EBADF here means the call was let through. Not -1: newer
	 * kernels take io_uring_register(-1) as a "blind" registration (EINVAL). */
	ret = syscall(__NR_io_uring_enter, CLOSED_FD, 0, 0, 0, NULL, 0);
	printf("io_uring_enter: %s\n", result(ret, errno));
	ret = syscall(__NR_io_uring_register, CLOSED_FD, 0, NULL, 0);
	printf("io_uring_register: %s\n", result(ret, errno));
	return 0;
}
