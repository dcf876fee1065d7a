// SPDX-License-Identifier: MIT
/* Uses libgiong-net through the installed headers and library: address text
 * both ways, and (where io_uring works) a Unix socket pair on a one-worker
 * runtime. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <giong/core/version.h>
#include <giong/net.h>

struct run {
	int pair, wrote, got;
	char buf[8];
};

static void pair_main(unsigned worker, void *arg)
{
	struct run *r = arg;
	struct giong_stream *a, *b;

	(void)worker;
	r->pair = giong_unix_pair(&a, &b);
	if (r->pair)
		return;
	r->wrote = (int)giong_stream_write_all(a, "ping", 4);
	r->got = (int)giong_stream_read(b, r->buf, sizeof(r->buf));
	giong_stream_close(a);
	giong_stream_close(b);
}

int main(void)
{
	struct giong_addr a;
	struct run r = {0};
	char text[GIONG_ADDR_STRLEN];
	int err;

	if (giong_addr_parse("[::1]:7000", &a) || giong_addr_format(&a, text, sizeof(text)) < 0 ||
	    strcmp(text, "[::1]:7000") != 0 || giong_addr_parse("::1:7000", &a) != -EINVAL ||
	    strcmp(giong_stream_kind(NULL), "invalid") != 0) {
		fprintf(stderr, "unexpected address handling\n");
		return 1;
	}
	err = giong_block_on(pair_main, &r);
	if (err == GIONG_EURING_DISABLED || err == GIONG_ENOURING || err == GIONG_EURING_OLD) {
		printf("giong %s: net linked; no io_uring here (%s)\n", giong_version(),
		       giong_strerror(err));
		return 0;
	}
	if (err || r.pair || r.wrote != 4 || r.got != 4 || memcmp(r.buf, "ping", 4) != 0) {
		fprintf(stderr, "unix pair: run %d pair %d wrote %d got %d\n", err, r.pair, r.wrote,
			r.got);
		return 1;
	}
	printf("giong %s: net %s, a unix pair said \"%.4s\"\n", giong_version(), text, r.buf);
	return 0;
}
