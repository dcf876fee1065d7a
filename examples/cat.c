/* SPDX-License-Identifier: MIT */
/*
 * cat - print files through the ring, like cat(1) for the simple cases.
 *
 *   giong-cat [FILE | -]...     with no FILE, or with "-", read stdin
 *
 * Every read and write is an io_uring operation of libgiong-fs: named files
 * are opened with giong_file_open() and read with giong_file_read_at() at a
 * running offset; stdin and stdout are wrapped with giong_file_from_fd() and
 * use stream I/O at their own position (they may be pipes or terminals, or a
 * file opened with >> whose writes must go to the end). A file that cannot
 * be read is reported on stderr and skipped; the exit status is then 1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <giong/fs.h>

#define BUF_SIZE (128 * 1024) /* on the heap: as big as a whole fiber stack */

struct cat {
	int argc;
	char **argv;
	char *buf;
	struct giong_file *out;
	int status;
};

static void complain(const char *name, int err)
{
	fprintf(stderr, "cat: %s: %s\n", name, giong_strerror(err));
}

/* Copy @in to stdout; @positional: read at a running offset. Returns 0, or
 * -errno and sets *@out_failed when writing to stdout was what failed. */
static int copy(struct cat *c, struct giong_file *in, bool positional, bool *out_failed)
{
	int64_t off = 0;

	for (;;) {
		ssize_t n = positional ? giong_file_read_at(in, c->buf, BUF_SIZE, off)
				       : giong_file_read(in, c->buf, BUF_SIZE);
		int err;

		if (n <= 0)
			return (int)n;
		off += n;
		err = giong_file_write_all(c->out, c->buf, (size_t)n);
		if (err) {
			*out_failed = true;
			return err;
		}
	}
}

static void cat_main(unsigned worker, void *arg)
{
	struct cat *c = arg;
	const struct giong_open_options ro = {.read = true};
	char *dash[] = {"-"};
	char **names = c->argc > 1 ? c->argv + 1 : dash;
	int count = c->argc > 1 ? c->argc - 1 : 1;
	int err;

	(void)worker;
	err = giong_file_from_fd(1, &c->out);
	if (err) {
		complain("stdout", err);
		c->status = 1;
		return;
	}
	for (int i = 0; i < count; i++) {
		bool stdin_ = strcmp(names[i], "-") == 0, out_failed = false;
		struct giong_file *in;

		if (stdin_)
			err = giong_file_from_fd(0, &in);
		else
			err = giong_file_open(names[i], &ro, &in);
		if (err) {
			complain(names[i], err);
			c->status = 1;
			continue;
		}
		err = copy(c, in, !stdin_, &out_failed);
		if (err) {
			complain(out_failed ? "write error" : names[i], err);
			c->status = 1;
		}
		if (stdin_)
			giong_file_into_fd(in); /* stdin stays open for a later "-" */
		else
			giong_file_close(in);
		if (out_failed)
			break;
	}
	giong_file_into_fd(c->out); /* stdout is closed at exit */
}

int main(int argc, char **argv)
{
	struct cat c = {.argc = argc, .argv = argv, .buf = malloc(BUF_SIZE)};
	int err;

	if (!c.buf) {
		complain("malloc", -ENOMEM);
		return 1;
	}
	err = giong_block_on(cat_main, &c);
	free(c.buf);
	if (err) {
		complain("giong", err);
		return 1;
	}
	return c.status;
}
