/* SPDX-License-Identifier: MIT */
/*
 * noring - runs a program where io_uring is refused, as a container's seccomp profile refuses
 * it, so that what giong does there is tested on any machine without root or Docker.
 *
 *   noring [--errno EPERM|ENOSYS|EOPNOTSUPP] -- PROGRAM [ARGS...]   (build/bin/noring)
 *
 * io_uring_setup, io_uring_enter and io_uring_register fail with the errno chosen (default
 * EPERM: Docker's and containerd's default profiles; ENOSYS: gVisor; EOPNOTSUPP: some other
 * profiles); every other call is allowed. The filter (tests/support/uring_block.h) is
 * installed here and then PROGRAM is exec'd: a seccomp filter survives execve and is inherited
 * by every thread and child PROGRAM starts, so the whole program runs under it, and nothing
 * it does can lift it. Never installed.
 *
 * Exit: PROGRAM's own status once exec'd; 2 on bad usage; 77 (the suite's "skipped") when
 * this kernel, or valgrind, takes no seccomp filter (PROGRAM is then not run at all: never
 * run it unfiltered); 127 when PROGRAM cannot be exec'd.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "uring_block.h"

static const struct {
	const char *name;
	int err;
} errnos[] = {
	{"EPERM", EPERM},
	{"ENOSYS", ENOSYS},
	{"EOPNOTSUPP", EOPNOTSUPP},
};

static int usage(const char *why)
{
	fprintf(stderr,
		"noring: %s\n"
		"usage: noring [--errno EPERM|ENOSYS|EOPNOTSUPP] -- PROGRAM [ARGS...]\n"
		"  runs PROGRAM with io_uring_setup, io_uring_enter and io_uring_register\n"
		"  failing with the errno given (default EPERM), through a seccomp filter\n",
		why);
	return 2;
}

/* The errno named @s, or 0 when it is none of those a profile is known to answer. */
static int errno_named(const char *s)
{
	for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
		if (!strcmp(s, errnos[i].name))
			return errnos[i].err;
	return 0;
}

int main(int argc, char **argv)
{
	int err = EPERM, i = 1;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage("io_uring refused, as under a container's seccomp profile");
		return 0;
	}
	if (i < argc && !strcmp(argv[i], "--errno")) {
		if (i + 1 >= argc)
			return usage("--errno needs a value");
		err = errno_named(argv[i + 1]);
		if (!err)
			return usage("--errno: not one of EPERM, ENOSYS, EOPNOTSUPP");
		i += 2;
	}
	/* "--" is required: PROGRAM's own options can never be taken for ours. */
	if (i >= argc || strcmp(argv[i], "--"))
		return usage(i < argc ? "expected -- before PROGRAM" : "no PROGRAM given");
	if (++i >= argc)
		return usage("no PROGRAM given after --");
	if (gt_block_uring(err)) {
		fprintf(stderr, "noring: no seccomp filter here (%s): %s not run\n",
			strerror(errno), argv[i]);
		return 77;
	}
	execvp(argv[i], argv + i);
	fprintf(stderr, "noring: %s: %s\n", argv[i], strerror(errno));
	return 127;
}
