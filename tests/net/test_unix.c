/* SPDX-License-Identifier: MIT */
/*
 * test_unix.c - Unix stream sockets: echo over a socket file in a temporary
 * directory (a stale socket file is replaced, a regular file is refused and
 * kept, the file goes away when the listener closes, and closing one
 * listener never removes the file of the next one on the same path),
 * abstract "@names", 4 MB each way over giong_unix_pair(), and connect
 * errors. Every test checks that it leaves no descriptor open.
 */
#include <sys/stat.h>

#include "net_test.h"

static char tmpdir[64];

static int setup_dir(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/giong-unix-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_dir(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static bool is_socket(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* ------------------------------------------------------ echo over a path */

#define UNIX_ECHO (1u << 20)

struct uecho {
	char path[100];
	int listen_ret, connect_ret, accept_ret;
	char laddr[GIONG_ADDR_STRLEN];
	const char *kind;
	long long srv_bytes, cli_bytes, cli_bad;
	ssize_t srv_end, cli_end;
	int file_while_listening;
	int file_after_close; /* checked right after giong_listener_close() */
	int file_after_ticks;
};

struct uecho_srv {
	struct uecho *u;
	struct giong_listener *l;
};

static intptr_t uecho_server(void *arg)
{
	struct uecho_srv *sv = arg;
	struct uecho *u = sv->u;
	struct giong_stream *s;
	struct giong_recvbuf *b;
	ssize_t n;

	u->accept_ret = giong_listener_accept(sv->l, &s);
	if (u->accept_ret)
		return 0;
	u->kind = giong_stream_kind(s);
	while ((n = giong_stream_recv(s, &b)) > 0) {
		ssize_t w = giong_stream_write_all(s, giong_recvbuf_data(b), (size_t)n);

		giong_recvbuf_release(b);
		if (w != n)
			break;
		u->srv_bytes += n;
	}
	u->srv_end = n;
	giong_stream_close(s);
	return 0;
}

struct uwriter {
	struct giong_stream *s;
	uint64_t seed;
	size_t total;
	ssize_t ret;
};

static intptr_t uwriter(void *arg)
{
	struct uwriter *w = arg;
	char *buf = malloc(65536);
	size_t off = 0;

	w->ret = -ENOMEM;
	if (!buf)
		return 0;
	while (off < w->total) {
		size_t n = w->total - off < 65536 ? w->total - off : 65536;

		nt_fill(w->seed, off, buf, n);
		if (giong_stream_write_all(w->s, buf, n) != (ssize_t)n) {
			w->ret = -EIO;
			break;
		}
		off += n;
	}
	if (off == w->total)
		w->ret = (ssize_t)off;
	giong_stream_shutdown(w->s, SHUT_WR);
	free(buf);
	return 0;
}

/* Read and check until the end of stream. */
static void check_reader(struct giong_stream *s, uint64_t seed, long long *bytes, long long *bad,
			 ssize_t *end)
{
	char *buf = malloc(65536);
	ssize_t n;

	*bad = -1;
	while ((n = giong_stream_read(s, buf, 65536)) > 0) {
		if (*bad < 0)
			*bad = nt_check(seed, (uint64_t)*bytes, buf, (size_t)n);
		*bytes += n;
	}
	*end = n;
	free(buf);
}

static void uecho_main(unsigned w, void *arg)
{
	struct uecho *u = arg;
	struct uecho_srv sv = {u, NULL};
	struct giong_task *ts, *tw;
	struct giong_addr a;
	struct uwriter wr = {.seed = 7, .total = UNIX_ECHO};

	(void)w;
	u->listen_ret = giong_unix_listen(u->path, NULL, &sv.l);
	if (u->listen_ret)
		return;
	u->file_while_listening = is_socket(u->path);
	giong_listener_addr(sv.l, &a);
	giong_addr_format(&a, u->laddr, sizeof(u->laddr));
	giong_spawn(uecho_server, &sv, &ts);
	u->connect_ret = giong_unix_connect(u->path, &wr.s);
	if (!u->connect_ret) {
		giong_spawn(uwriter, &wr, &tw);
		check_reader(wr.s, 7, &u->cli_bytes, &u->cli_bad, &u->cli_end);
		giong_join(tw, NULL);
		giong_stream_close(wr.s);
	}
	giong_join(ts, NULL);
	giong_listener_close(sv.l);
	u->file_after_close = exists(u->path);
	giong_sleep_ms(5);
	u->file_after_ticks = exists(u->path);
}

static void run_uecho(struct uecho *u)
{
	struct giong_config c = gt_config(1);

	gt_run(&c, uecho_main, u, NULL);
	assert_int_equal(u->listen_ret, 0);
	assert_true(u->file_while_listening);
	assert_string_equal(u->laddr, u->path);
	assert_int_equal(u->connect_ret, 0);
	assert_int_equal(u->accept_ret, 0);
	assert_string_equal(u->kind, "unix");
	assert_int_equal(u->srv_bytes, UNIX_ECHO);
	assert_int_equal(u->srv_end, 0);
	assert_int_equal(u->cli_bytes, UNIX_ECHO);
	assert_int_equal(u->cli_bad, -1);
	assert_int_equal(u->cli_end, 0);
	assert_false(u->file_after_close); /* removed on close, not later */
	assert_false(u->file_after_ticks);
}

static void test_echo_socket_file(void **state)
{
	struct uecho u;
	int fds = gt_count_fds();

	(void)state;
	memset(&u, 0, sizeof(u));
	snprintf(u.path, sizeof(u.path), "%s/echo.sock", tmpdir);
	run_uecho(&u);
	gt_assert_fds(fds);
}

/* A socket file left by a listener that is gone is replaced. */
static void test_stale_socket_file_replaced(void **state)
{
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	struct uecho u;
	int fd, fds = gt_count_fds();

	(void)state;
	memset(&u, 0, sizeof(u));
	snprintf(u.path, sizeof(u.path), "%s/stale.sock", tmpdir);
	snprintf(un.sun_path, sizeof(un.sun_path), "%s", u.path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&un, sizeof(un)), 0);
	assert_int_equal(listen(fd, 1), 0);
	close(fd); /* the file stays: a previous run that crashed */
	assert_true(is_socket(u.path));
	run_uecho(&u);
	gt_assert_fds(fds);
}

/* ------------------------------------- files that are not ours, live peers */

struct notours {
	char file[100], live[100];
	int file_ret, live_ret, second_ret;
	int live_connect_ret;
	int nolisten_ret, toolong_ret, empty_ret, null_ret, noent_ret, refused_ret;
	int relisten_ret, relisten_connect_ret, relisten_file_later;
	char stale[100];
};

static void notours_main(unsigned w, void *arg)
{
	struct notours *n = arg;
	struct giong_listener *l = (void *)1, *l2;
	struct giong_stream *s;
	char longname[200];

	(void)w;
	/* A regular file: refused, and left alone. */
	n->file_ret = giong_unix_listen(n->file, NULL, &l);
	if (l)
		n->file_ret = -1000;
	/* A live listener's socket: refused, not stolen. */
	if (giong_unix_listen(n->live, NULL, &l) == 0) {
		n->second_ret = giong_unix_listen(n->live, NULL, &l2);
		if (!n->second_ret)
			giong_listener_close(l2);
		n->live_connect_ret = giong_unix_connect(n->live, &s);
		if (!n->live_connect_ret)
			giong_stream_close(s);
		/* Close and listen again on the same path at once: the old
		 * listener's late clean-up must not remove the new file. */
		giong_listener_close(l);
		n->relisten_ret = giong_unix_listen(n->live, NULL, &l);
		if (!n->relisten_ret) {
			giong_sleep_ms(10);
			n->relisten_file_later = is_socket(n->live);
			n->relisten_connect_ret = giong_unix_connect(n->live, &s);
			if (!n->relisten_connect_ret)
				giong_stream_close(s);
			giong_listener_close(l);
		}
	} else {
		n->second_ret = -1001;
	}
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	n->toolong_ret = giong_unix_listen(longname, NULL, &l);
	n->empty_ret = giong_unix_listen("", NULL, &l);
	n->null_ret = giong_unix_listen(NULL, NULL, &l);
	n->noent_ret = giong_unix_connect("/nonexistent/giong.sock", &s);
	n->refused_ret = giong_unix_connect(n->stale, &s);
}

static void test_not_our_files(void **state)
{
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	struct notours n;
	struct giong_config c = gt_config(1);
	struct giong_listener *l;
	char content[8] = {0};
	int fd, fds = gt_count_fds();

	(void)state;
	memset(&n, 0, sizeof(n));
	snprintf(n.file, sizeof(n.file), "%s/regular", tmpdir);
	snprintf(n.live, sizeof(n.live), "%s/live.sock", tmpdir);
	snprintf(n.stale, sizeof(n.stale), "%s/stale2.sock", tmpdir);
	fd = open(n.file, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	assert_int_equal(write(fd, "keep", 4), 4);
	close(fd);
	snprintf(un.sun_path, sizeof(un.sun_path), "%s", n.stale);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&un, sizeof(un)), 0);
	close(fd);
	gt_run(&c, notours_main, &n, NULL);

	assert_int_equal(n.file_ret, -EADDRINUSE);
	fd = open(n.file, O_RDONLY);
	assert_true(fd >= 0); /* not removed */
	assert_int_equal(read(fd, content, sizeof(content)), 4);
	assert_memory_equal(content, "keep", 4);
	close(fd);
	assert_int_equal(n.second_ret, -EADDRINUSE);
	assert_int_equal(n.live_connect_ret, 0);
	assert_int_equal(n.relisten_ret, 0);
	assert_true(n.relisten_file_later);
	assert_int_equal(n.relisten_connect_ret, 0);
	assert_false(exists(n.live));
	assert_int_equal(n.toolong_ret, -EINVAL);
	assert_int_equal(n.empty_ret, -EINVAL);
	assert_int_equal(n.null_ret, -EINVAL);
	assert_int_equal(n.noent_ret, -ENOENT);
	assert_int_equal(n.refused_ret, -ECONNREFUSED);
	assert_int_equal(giong_unix_listen(n.live, NULL, &l), GIONG_ENOTWORKER);
	assert_true(strlen(giong_strerror(-EADDRINUSE)) > 3);
	assert_true(strlen(giong_strerror(-ENOENT)) > 3);
	unlink(n.stale);
	gt_assert_fds(fds);
}

/* ------------------------------------------------------------- abstract */

struct abstract {
	char name[64];
	int listen_ret, dup_ret, connect_ret, accept_ret;
	char laddr[GIONG_ADDR_STRLEN];
	ssize_t wrote, got_n;
	char got[16];
	int missing_ret;
};

static void abstract_main(unsigned w, void *arg)
{
	struct abstract *a = arg;
	struct giong_listener *l, *l2;
	struct giong_stream *c, *s;
	struct giong_addr ad;
	char missing[80];

	(void)w;
	a->listen_ret = giong_unix_listen(a->name, NULL, &l);
	if (a->listen_ret)
		return;
	giong_listener_addr(l, &ad);
	giong_addr_format(&ad, a->laddr, sizeof(a->laddr));
	a->dup_ret = giong_unix_listen(a->name, NULL, &l2);
	if (!a->dup_ret)
		giong_listener_close(l2);
	a->connect_ret = giong_unix_connect(a->name, &c);
	if (!a->connect_ret) {
		a->accept_ret = giong_listener_accept(l, &s);
		a->wrote = giong_stream_write(c, "abstract!", 9);
		if (!a->accept_ret) {
			a->got_n = nt_stream_read_exact(s, a->got, 9);
			giong_stream_close(s);
		}
		giong_stream_close(c);
	}
	giong_listener_close(l);
	snprintf(missing, sizeof(missing), "%s-nobody", a->name);
	a->missing_ret = giong_unix_connect(missing, &c);
}

static void test_abstract_names(void **state)
{
	struct giong_config c = gt_config(1);
	struct abstract a;
	int fds = gt_count_fds();

	(void)state;
	memset(&a, 0, sizeof(a));
	snprintf(a.name, sizeof(a.name), "@giong-test-%d", (int)getpid());
	gt_run(&c, abstract_main, &a, NULL);
	assert_int_equal(a.listen_ret, 0);
	assert_string_equal(a.laddr, a.name);
	assert_int_equal(a.dup_ret, -EADDRINUSE);
	assert_int_equal(a.connect_ret, 0);
	assert_int_equal(a.accept_ret, 0);
	assert_int_equal(a.wrote, 9);
	assert_int_equal(a.got_n, 9);
	assert_memory_equal(a.got, "abstract!", 9);
	assert_int_equal(a.missing_ret, -ECONNREFUSED);
	assert_false(exists(a.name)); /* no file named "@..." */
	gt_assert_fds(fds);
}

/* ------------------------------------------------ 4 MB each way over pair */

#define PAIR_BYTES (4u << 20)

struct pairrun {
	int pair_ret;
	struct uwriter wa, wb;
	long long got_a, got_b, bad_a, bad_b;
	ssize_t end_a, end_b;
	const char *kind;
	int fd_a;
};

struct preader {
	struct giong_stream *s;
	uint64_t seed;
	long long *bytes, *bad;
	ssize_t *end;
};

static intptr_t preader(void *arg)
{
	struct preader *r = arg;

	check_reader(r->s, r->seed, r->bytes, r->bad, r->end);
	return 0;
}

static void pair_main(unsigned w, void *arg)
{
	struct pairrun *p = arg;
	struct giong_stream *a, *b;
	struct giong_task *t[4];
	struct preader ra, rb;

	(void)w;
	p->pair_ret = giong_unix_pair(&a, &b);
	if (p->pair_ret)
		return;
	p->kind = giong_stream_kind(a);
	p->fd_a = giong_stream_fd(a);
	p->wa = (struct uwriter){.s = a, .seed = 11, .total = PAIR_BYTES};
	p->wb = (struct uwriter){.s = b, .seed = 12, .total = PAIR_BYTES};
	/* b reads what a writes (seed 11), a reads what b writes (seed 12). */
	rb = (struct preader){b, 11, &p->got_b, &p->bad_b, &p->end_b};
	ra = (struct preader){a, 12, &p->got_a, &p->bad_a, &p->end_a};
	giong_spawn(uwriter, &p->wa, &t[0]);
	giong_spawn(uwriter, &p->wb, &t[1]);
	giong_spawn(preader, &rb, &t[2]);
	giong_spawn(preader, &ra, &t[3]);
	for (int i = 0; i < 4; i++)
		giong_join(t[i], NULL);
	giong_stream_close(a);
	giong_stream_close(b);
}

static void test_pair_4mb(void **state)
{
	struct giong_config c = gt_config(1);
	struct pairrun p;
	int fds = gt_count_fds();

	(void)state;
	memset(&p, 0, sizeof(p));
	gt_run(&c, pair_main, &p, NULL);
	assert_int_equal(p.pair_ret, 0);
	assert_string_equal(p.kind, "unix");
	assert_true(p.fd_a >= 0);
	assert_int_equal(p.wa.ret, PAIR_BYTES);
	assert_int_equal(p.wb.ret, PAIR_BYTES);
	assert_int_equal(p.got_a, PAIR_BYTES);
	assert_int_equal(p.got_b, PAIR_BYTES);
	assert_int_equal(p.bad_a, -1);
	assert_int_equal(p.bad_b, -1);
	assert_int_equal(p.end_a, 0);
	assert_int_equal(p.end_b, 0);
	gt_assert_fds(fds);
}

/* ---- refusals: bad arguments, and no worker to own the socket ---------- */

struct refusals {
	int listen_null, connect_null, connect_empty, connect_long, pair_null_a, pair_null_b;
};

static void refusals_main(unsigned w, void *arg)
{
	struct refusals *r = arg;
	struct giong_stream *s = (struct giong_stream *)1;
	char longname[200];

	(void)w;
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	r->listen_null = giong_unix_listen("@giong-refusals", NULL, NULL);
	r->connect_null = giong_unix_connect("@giong-refusals", NULL);
	r->connect_empty = giong_unix_connect("", &s);
	r->connect_long = giong_unix_connect(longname, &s);
	r->pair_null_a = giong_unix_pair(NULL, &s);
	r->pair_null_b = giong_unix_pair(&s, NULL);
}

static void test_refusals(void **state)
{
	struct giong_config c = gt_config(1);
	struct giong_listener *l = (struct giong_listener *)1;
	struct giong_stream *a = (struct giong_stream *)1, *b = (struct giong_stream *)1;
	struct refusals r;
	char path[300];
	int fds = gt_count_fds();

	(void)state;
	/* Off any worker: nothing is made, no file is left behind. */
	snprintf(path, sizeof(path), "%s/offworker.sock", tmpdir);
	assert_int_equal(giong_unix_listen(path, NULL, &l), GIONG_ENOTWORKER);
	assert_null(l);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(giong_unix_connect(path, &a), GIONG_ENOTWORKER);
	assert_null(a);
	assert_int_equal(giong_unix_pair(&a, &b), GIONG_ENOTWORKER);
	assert_null(a);
	assert_null(b);
	gt_assert_fds(fds);

	memset(&r, 0, sizeof(r));
	gt_run(&c, refusals_main, &r, NULL);
	assert_int_equal(r.listen_null, -EINVAL);
	assert_int_equal(r.connect_null, -EINVAL);
	assert_int_equal(r.connect_empty, -EINVAL);
	assert_int_equal(r.connect_long, -EINVAL); /* longer than sun_path */
	assert_int_equal(r.pair_null_a, -EINVAL);
	assert_int_equal(r.pair_null_b, -EINVAL);
	gt_assert_fds(fds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_echo_socket_file),
		cmocka_unit_test(test_stale_socket_file_replaced),
		cmocka_unit_test(test_not_our_files),
		cmocka_unit_test(test_abstract_names),
		cmocka_unit_test(test_pair_4mb),
		cmocka_unit_test(test_refusals),
	};

	gt_require_runtime();
	if (getenv("NT_FILTER"))
		cmocka_set_test_filter(getenv("NT_FILTER"));
	return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
