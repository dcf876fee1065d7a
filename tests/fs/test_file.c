/* SPDX-License-Identifier: MIT */
/*
 * test_file.c - struct giong_file: contents intact from 0 B to 8 MiB,
 * positional reads and writes in random order, vectored and stream I/O,
 * sync, metadata against stat(2), len/set_len/allocate, and 200 fibers
 * sharing one file.
 */
#include "fs_test.h"

#include <sys/uio.h>

static const size_t sizes[] = {0,    1,     511,         4095,        4096,
			       4097, 65537, 1024 * 1024, 3000 * 1000, 8 * 1024 * 1024};

static void body_roundtrip(void)
{
	size_t max = 8 * 1024 * 1024;
	char *src = malloc(max), *dst = malloc(max + 16);

	if (!gt_check_non_null(src) || !gt_check_non_null(dst))
		goto out;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		const char *p = fs_path("roundtrip");
		struct giong_file *f;
		struct stat st;
		size_t got = 0;

		fs_fill(src, n, 1000 + i);
		if (!gt_check_int_equal(giong_file_create(p, &f), 0))
			goto out;
		gt_check_int_equal(giong_file_write_all_at(f, src, n, 0), 0);
		gt_check_int_equal(giong_file_close(f), 0);
		gt_check_int_equal(stat(p, &st), 0);
		gt_check_int_equal((size_t)st.st_size, n);

		struct giong_open_options o = {.read = true};
		if (!gt_check_int_equal(giong_file_open(p, &o, &f), 0))
			goto out;
		memset(dst, 0xaa, n + 16);
		for (;;) {
			ssize_t r = giong_file_read_at(f, dst + got, n + 16 - got, (int64_t)got);

			if (!gt_check_true(r >= 0))
				break;
			if (r == 0)
				break;
			got += (size_t)r;
		}
		gt_check_int_equal(got, n);
		gt_check_memory_equal(dst, src, n);
		gt_check_int_equal(giong_file_close(f), 0);

		/* And the whole-file helpers agree. */
		char *all;
		size_t len;
		if (gt_check_int_equal(giong_fs_read(p, &all, &len), 0)) {
			if (gt_check_int_equal(len, n)) {
				gt_check_memory_equal(all, src, n);
				gt_check_int_equal(all[len], '\0');
			}
			giong_fs_free(all);
		}
		gt_check_int_equal(giong_fs_write(p, src, n / 2), 0);
		gt_check_int_equal(stat(p, &st), 0);
		gt_check_int_equal((size_t)st.st_size, n / 2);
	}
out:
	free(src);
	free(dst);
}

static void test_roundtrip(void **state)
{
	(void)state;
	fs_run(body_roundtrip);
}

/* Random positional writes and reads against an in-memory model. */
static void body_random(void)
{
	enum { SIZE = 1 << 20, OPS = 2000 };
	char *model = calloc(1, SIZE), *buf = malloc(SIZE);
	struct giong_open_options o = {
		.read = true, .write = true, .create = true, .truncate = true};
	struct giong_file *f;
	uint64_t s = 42;
	size_t flen = 0;

	if (!gt_check_non_null(model) || !gt_check_non_null(buf) ||
	    !gt_check_int_equal(giong_file_open(fs_path("random"), &o, &f), 0)) {
		free(model);
		free(buf);
		return;
	}
	for (int i = 0; i < OPS; i++) {
		size_t off = fs_rand(&s) % SIZE;
		size_t len = 1 + fs_rand(&s) % 9000;

		if (off + len > SIZE)
			len = SIZE - off;
		if (fs_rand(&s) & 1) {
			fs_fill(buf, len, fs_rand(&s));
			ssize_t w = giong_file_write_at(f, buf, len, (int64_t)off);
			gt_check_int_equal(w, (ssize_t)len);
			memcpy(model + off, buf, len);
			if (off + len > flen)
				flen = off + len;
		} else {
			ssize_t r = giong_file_read_at(f, buf, len, (int64_t)off);
			size_t want = off >= flen ? 0 : (off + len > flen ? flen - off : len);

			gt_check_int_equal(r, (ssize_t)want);
			gt_check_memory_equal(buf, model + off, want);
		}
	}
	gt_check_int_equal(giong_file_len(f), (int64_t)flen);
	gt_check_int_equal(giong_file_close(f), 0);
	free(model);
	free(buf);
}

static void test_random_order(void **state)
{
	(void)state;
	fs_run(body_random);
}

static void body_vectored(void)
{
	char a[100], b[5000], c[1], r1[100], r2[5000], r3[1];
	struct iovec wv[] = {{a, sizeof a}, {b, sizeof b}, {c, sizeof c}};
	struct iovec rv[] = {{r1, sizeof r1}, {r2, sizeof r2}, {r3, sizeof r3}};
	struct giong_open_options o = {.read = true, .write = true, .create = true};
	struct giong_file *f;

	fs_fill(a, sizeof a, 1);
	fs_fill(b, sizeof b, 2);
	fs_fill(c, sizeof c, 3);
	if (!gt_check_int_equal(giong_file_open(fs_path("vec"), &o, &f), 0))
		return;
	gt_check_int_equal(giong_file_writev_at(f, wv, 3, 10), 5101);
	gt_check_int_equal(giong_file_readv_at(f, rv, 3, 10), 5101);
	gt_check_memory_equal(r1, a, sizeof a);
	gt_check_memory_equal(r2, b, sizeof b);
	gt_check_memory_equal(r3, c, sizeof c);
	gt_check_int_equal(giong_file_readv_at(f, rv, 0, 0), 0);
	gt_check_int_equal(giong_file_len(f), 5111);
	/* The 10-byte hole reads as zeros. */
	gt_check_int_equal(giong_file_read_at(f, r1, 10, 0), 10);
	for (int i = 0; i < 10; i++)
		gt_check_int_equal(r1[i], 0);
	gt_check_int_equal(giong_file_close(f), 0);
}

static void test_vectored(void **state)
{
	(void)state;
	fs_run(body_vectored);
}

/* Stream I/O uses the descriptor's position, like read(2)/write(2). */
static void body_stream(void)
{
	struct giong_open_options o = {
		.read = true, .write = true, .create = true, .truncate = true};
	struct giong_file *f;
	char buf[16];

	if (!gt_check_int_equal(giong_file_open(fs_path("stream"), &o, &f), 0))
		return;
	gt_check_int_equal(giong_file_write_all(f, "hello ", 6), 0);
	gt_check_int_equal(giong_file_write(f, "world", 5), 5);
	gt_check_int_equal(lseek(giong_file_fd(f), 0, SEEK_CUR), 11);
	gt_check_int_equal(lseek(giong_file_fd(f), 6, SEEK_SET), 6);
	gt_check_int_equal(giong_file_read(f, buf, sizeof buf), 5);
	gt_check_memory_equal(buf, "world", 5);
	gt_check_int_equal(giong_file_read(f, buf, sizeof buf), 0);
	/* Positional calls leave the position alone. */
	gt_check_int_equal(giong_file_read_at(f, buf, 5, 0), 5);
	gt_check_int_equal(lseek(giong_file_fd(f), 0, SEEK_CUR), 11);
	gt_check_int_equal(giong_file_close(f), 0);

	/* from_fd / into_fd */
	int fd = open(fs_path("stream"), O_RDONLY | O_CLOEXEC);
	if (!gt_check_true(fd >= 0) || !gt_check_int_equal(giong_file_from_fd(fd, &f), 0))
		return;
	gt_check_int_equal(giong_file_fd(f), fd);
	gt_check_int_equal(giong_file_read_at(f, buf, 5, 0), 5);
	gt_check_memory_equal(buf, "hello", 5);
	gt_check_int_equal(giong_file_into_fd(f), fd);
	gt_check_int_equal(fcntl(fd, F_GETFD) >= 0, 1); /* still open, ours */
	if (!gt_check_int_equal(giong_file_from_fd(fd, &f), 0))
		return;
	gt_check_int_equal(giong_file_close(f), 0);
	gt_check_int_equal(fcntl(fd, F_GETFD), -1);
	gt_check_int_equal(errno, EBADF);
}

static void test_stream(void **state)
{
	(void)state;
	fs_run(body_stream);
}

static void body_meta(void)
{
	struct giong_open_options o = {
		.read = true, .write = true, .create = true, .truncate = true};
	struct giong_file *f;
	struct giong_stat gs;
	struct stat st;
	char buf[12345];

	fs_fill(buf, sizeof buf, 9);
	if (!gt_check_int_equal(giong_file_open(fs_path("meta"), &o, &f), 0))
		return;
	gt_check_int_equal(giong_file_write_all_at(f, buf, sizeof buf, 0), 0);
	gt_check_int_equal(giong_file_sync_data(f), 0);
	gt_check_int_equal(giong_file_sync_all(f), 0);
	gt_check_int_equal(giong_file_stat(f, &gs), 0);
	gt_check_int_equal(fstat(giong_file_fd(f), &st), 0);
	gt_check_int_equal(gs.size, (uint64_t)st.st_size);
	gt_check_int_equal(gs.ino, (uint64_t)st.st_ino);
	gt_check_int_equal(gs.dev, (uint64_t)st.st_dev);
	gt_check_int_equal(gs.mode, (uint32_t)st.st_mode);
	gt_check_int_equal(gs.nlink, (uint32_t)st.st_nlink);
	gt_check_int_equal(gs.uid, (uint32_t)st.st_uid);
	gt_check_int_equal(gs.gid, (uint32_t)st.st_gid);
	gt_check_int_equal(gs.blocks, (uint64_t)st.st_blocks);
	gt_check_int_equal(gs.blksize, (uint32_t)st.st_blksize);
	gt_check_int_equal(gs.mtime.sec, st.st_mtim.tv_sec);
	gt_check_int_equal(gs.mtime.nsec, st.st_mtim.tv_nsec);
	gt_check_int_equal(gs.ctime.sec, st.st_ctim.tv_sec);
	gt_check_int_equal(gs.atime.sec, st.st_atim.tv_sec);
	gt_check_int_equal(giong_file_len(f), (int64_t)sizeof buf);

	/* set_len: shrink, grow (zeros), whichever path this kernel takes. */
	gt_check_int_equal(giong_file_set_len(f, 100), 0);
	gt_check_int_equal(giong_file_len(f), 100);
	gt_check_int_equal(giong_file_set_len(f, 5000), 0);
	gt_check_int_equal(giong_file_len(f), 5000);
	char z[4900];
	gt_check_int_equal(giong_file_read_at(f, z, sizeof z, 100), (ssize_t)sizeof z);
	for (size_t i = 0; i < sizeof z; i++)
		gt_check_int_equal(z[i], 0);
	gt_check_int_equal(giong_file_set_len(f, -1), -EINVAL);
	print_message("set_len goes through the ring: %d (GIONG_FS_FTRUNCATE=%s)\n",
		      giong_file_set_len_uses_ring(),
		      getenv("GIONG_FS_FTRUNCATE") ? getenv("GIONG_FS_FTRUNCATE") : "unset");

	/* allocate: mode 0 extends the size; KEEP_SIZE does not. */
	gt_check_int_equal(giong_file_allocate(f, 0, 0, 1 << 20), 0);
	gt_check_int_equal(giong_file_len(f), 1 << 20);
	gt_check_int_equal(giong_file_allocate(f, FALLOC_FL_KEEP_SIZE, 1 << 20, 1 << 20), 0);
	gt_check_int_equal(giong_file_len(f), 1 << 20);
	gt_check_int_equal(giong_file_allocate(f, 0, -1, 10), -EINVAL);
	gt_check_int_equal(giong_file_allocate(f, 0, 0, 0), -EINVAL);
	gt_check_int_equal(giong_file_close(f), 0);

	/* A read-only file cannot be truncated. */
	struct giong_open_options ro = {.read = true};
	if (!gt_check_int_equal(giong_file_open(fs_path("meta"), &ro, &f), 0))
		return;
	int r = giong_file_set_len(f, 1);
	gt_check_true(r == -EINVAL || r == -EBADF);
	gt_check_int_equal(giong_file_close(f), 0);
}

static void test_metadata(void **state)
{
	(void)state;
	fs_run(body_meta);
}

/* 200 fibers share one file; each writes its own region in pieces, yielding
 * between them, then checks it. */
enum { SHARERS = 200, REGION = 6000 };
static struct giong_file *shared;

static intptr_t sharer(void *arg)
{
	intptr_t i = (intptr_t)arg;
	char buf[REGION], back[REGION];
	int64_t base = (int64_t)i * REGION;

	fs_fill(buf, sizeof buf, (uint64_t)i + 7);
	for (size_t off = 0; off < REGION; off += 1500) {
		if (giong_file_write_all_at(shared, buf + off, 1500, base + (int64_t)off))
			return -1;
		giong_yield();
	}
	if (giong_file_read_at(shared, back, REGION, base) != REGION)
		return -2;
	return memcmp(buf, back, REGION) ? -3 : 0;
}

static void body_shared(void)
{
	struct giong_open_options o = {
		.read = true, .write = true, .create = true, .truncate = true};
	struct giong_task *t[SHARERS];
	int spawned = 0;

	if (!gt_check_int_equal(giong_file_open(fs_path("shared"), &o, &shared), 0))
		return;
	for (intptr_t i = 0; i < SHARERS; i++, spawned++)
		if (!gt_check_int_equal(giong_spawn(sharer, (void *)i, &t[i]), 0))
			break;
	for (int i = 0; i < spawned; i++) {
		intptr_t res = 1;

		gt_check_int_equal(giong_join(t[i], &res), 0);
		gt_check_int_equal(res, 0);
	}
	gt_check_int_equal(giong_file_len(shared), (int64_t)SHARERS * REGION);
	gt_check_int_equal(giong_file_close(shared), 0);

	/* Check every region again from outside. */
	char *all;
	size_t len;
	char want[REGION];
	if (!gt_check_int_equal(giong_fs_read(fs_path("shared"), &all, &len), 0))
		return;
	if (gt_check_int_equal(len, (size_t)SHARERS * REGION)) {
		for (int i = 0; i < SHARERS; i++) {
			fs_fill(want, REGION, (uint64_t)i + 7);
			gt_check_memory_equal(all + (size_t)i * REGION, want, REGION);
		}
	}
	free(all);
}

static void test_shared_200(void **state)
{
	(void)state;
	fs_run(body_shared);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip), cmocka_unit_test(test_random_order),
		cmocka_unit_test(test_vectored),  cmocka_unit_test(test_stream),
		cmocka_unit_test(test_metadata),  cmocka_unit_test(test_shared_200),
	};

	return fs_test_main("file", tests, sizeof(tests) / sizeof(tests[0]));
}
