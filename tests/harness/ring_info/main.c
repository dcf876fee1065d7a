/* SPDX-License-Identifier: MIT */
/*
 * ring_info - what giong gets from this kernel: its release, the ring tier a
 * worker is set up with (GIONG_RING_TIER may force one), the io_uring
 * features the kernel reports, and which of the operations giong uses it
 * supports. scripts/kernel-vm.sh prints it for each guest kernel.
 *
 *   ring_info [--ops [DIR]]        (build/bin/ring_info; never installed)
 *
 * With --ops, also which operations the kernel runs inline and which it
 * hands to its worker threads, on a file in DIR (default $TMPDIR or /tmp:
 * the filesystem matters). Exit 0, or 1 when no runtime could be made
 * (io_uring blocked or too old: the reason is printed).
 */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include <liburing.h>
#include <stdlib.h>

#include <giong/core.h>

#include "ring_info.h"

static const char *tier_name(int t)
{
	switch (t) {
	case GIONG_TIER_DEFER:
		return "defer (SINGLE_ISSUER | DEFER_TASKRUN)";
	case GIONG_TIER_COOP:
		return "coop (COOP_TASKRUN | TASKRUN_FLAG)";
	case GIONG_TIER_BASIC:
		return "basic (no set-up flags)";
	case GIONG_TIER_EPOLL:
		return "epoll (no io_uring: epoll and non-blocking calls)";
	default:
		return "unknown";
	}
}

static void report_tier(unsigned index, void *arg)
{
	int *tier = arg;

	if (index == 0)
		*tier = giong_ring_tier();
}

/* The kernel's own answer, from a plain ring: feature bits and opcodes. */
static void report_kernel(void)
{
	static const struct {
		int op;
		const char *name;
	} ops[] = {
		{IORING_OP_ACCEPT, "accept"},     {IORING_OP_RECV, "recv"},
		{IORING_OP_RECVMSG, "recvmsg"},   {IORING_OP_SEND, "send"},
		{IORING_OP_SENDMSG, "sendmsg"},   {IORING_OP_READ, "read"},
		{IORING_OP_WRITE, "write"},       {IORING_OP_OPENAT2, "openat2"},
		{IORING_OP_CLOSE, "close"},       {IORING_OP_STATX, "statx"},
		{IORING_OP_POLL_ADD, "poll"},     {IORING_OP_ASYNC_CANCEL, "cancel"},
		{IORING_OP_MSG_RING, "msg_ring"},
	};
	struct io_uring_params p;
	struct io_uring ring;
	struct io_uring_probe *probe;

	memset(&p, 0, sizeof(p));
	if (io_uring_queue_init_params(4, &ring, &p) < 0) {
		printf("io_uring: cannot set up a plain ring\n");
		return;
	}
	printf("io_uring features: 0x%x\n", p.features);
	probe = io_uring_get_probe_ring(&ring);
	if (probe) {
		printf("opcodes giong uses:");
		for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
			printf(" %s%s", ops[i].name,
			       io_uring_opcode_supported(probe, ops[i].op) ? "" : "(no)");
		printf("\n");
		io_uring_free_probe(probe);
	}
	io_uring_queue_exit(&ring);
}

int main(int argc, char **argv)
{
	struct giong_config cfg;
	struct giong_runtime *rt;
	struct utsname u;
	int tier = 0, r;

	if (uname(&u) == 0)
		printf("kernel: %s %s\n", u.release, u.version);
	report_kernel();
	giong_config_init(&cfg);
	cfg.workers = 1;
	r = giong_runtime_new(&cfg, &rt);
	if (r == 0) {
		r = giong_runtime_run(rt, report_tier, &tier);
		giong_runtime_free(rt);
	}
	if (r < 0) {
		printf("giong: no runtime: %s\n", giong_strerror(r));
		return 1;
	}
	printf("giong ring tier: %s\n", tier_name(tier));
	if (argc > 1 && !strcmp(argv[1], "--ops")) {
		const char *dir = argc > 2 ? argv[2] : getenv("TMPDIR");

		ring_info_punts(dir && *dir ? dir : "/tmp");
	} else if (argc > 1) {
		fprintf(stderr, "usage: ring_info [--ops [DIR]]\n");
		return 2;
	}
	return 0;
}
