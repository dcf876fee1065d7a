/* SPDX-License-Identifier: MIT */
/*
 * test_resolve.c - giong_resolve() and the names giong_tcp_connect() takes,
 * without the network: a hosts file of the test's own (c-ares's
 * CARES_HOSTS), a resolv.conf of its own, a DNS server on 127.0.0.1 run by
 * a task of the same worker (so it can only answer if the lookup does not
 * block the worker), and a UDP socket that drops every query. Numeric
 * addresses are checked never to reach the resolver.
 *
 * Built without c-ares, only the numeric and argument tests run (the others
 * say so and pass): getaddrinfo() cannot be pointed at these files.
 */
#include "net_test.h"

static char hosts_path[64], resolv_path[64];

static bool have_cares(void)
{
	return !strcmp(giong_resolver_backend(), "c-ares");
}

/* A plain UDP socket on 127.0.0.1 that nobody reads: every query sent to it
 * is dropped. Returns the fd and its port in *@port. */
static int drop_server(int *port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	assert_true(fd >= 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	*port = ntohs(sa.sin_port);
	return fd;
}

/* Datagrams queued on @fd (the queries the drop server got). */
static int drain_count(int fd)
{
	char buf[512];
	int n = 0;

	while (recv(fd, buf, sizeof(buf), 0) >= 0)
		n++;
	return n;
}

static int configure(const char *servers, const char *lookups, unsigned timeout_ms, unsigned tries)
{
	struct giong_resolver_options o = {
		.resolv_conf = resolv_path,
		.servers = servers,
		.lookups = lookups,
		.timeout_ms = timeout_ms,
		.tries = tries,
	};

	return giong_resolver_configure(&o);
}

static bool is_addr(const struct giong_addr *a, const char *text)
{
	char buf[GIONG_ADDR_STRLEN];

	return giong_addr_format(a, buf, sizeof(buf)) > 0 && !strcmp(buf, text);
}

/* ------------------------------------------ numeric: never the resolver */

struct numeric {
	int v4, v6, local, star, wrong_family, resolve_addr, connect;
	bool v4_ok, v6_ok, local_ok, resolve_ok;
	int bad[6];
	int stats;
	struct giong_resolver_stats st;
	int drop_port;
};

static void numeric_main(unsigned w, void *arg)
{
	struct numeric *t = arg;
	struct giong_addr a[4];
	struct giong_listener *l;
	struct giong_stream *c, *s;
	char servers[32], addr[64];

	(void)w;
	/* Every name would go to a server that never answers. */
	snprintf(servers, sizeof(servers), "127.0.0.1:%d", t->drop_port);
	if (have_cares())
		gt_check_int_equal(configure(servers, "b", 5000, 3), 0);
	t->v4 = giong_resolve("192.0.2.1", 80, AF_UNSPEC, a, 4);
	t->v4_ok = is_addr(&a[0], "192.0.2.1:80");
	t->v6 = giong_resolve("2001:db8::1", 443, AF_INET6, a, 4);
	t->v6_ok = is_addr(&a[0], "[2001:db8::1]:443");
	t->local = giong_resolve("localhost", 8, AF_INET, a, 1);
	t->local_ok = is_addr(&a[0], "127.0.0.1:8");
	t->star = giong_resolve("*", 0, AF_UNSPEC, a, 1);
	t->wrong_family = giong_resolve("192.0.2.1", 80, AF_INET6, a, 4);
	t->resolve_addr = giong_addr_resolve("127.0.0.1:80", &a[0]);
	t->resolve_ok = is_addr(&a[0], "127.0.0.1:80");
	t->bad[0] = giong_resolve(NULL, 80, AF_UNSPEC, a, 4);
	t->bad[1] = giong_resolve("x", 80, AF_UNSPEC, NULL, 4);
	t->bad[2] = giong_resolve("x", 80, AF_UNSPEC, a, 0);
	t->bad[3] = giong_resolve("x", 65536, AF_UNSPEC, a, 4);
	t->bad[4] = giong_resolve("x", 80, AF_UNIX, a, 4);
	{
		char longname[300];

		memset(longname, 'a', sizeof(longname) - 1);
		longname[sizeof(longname) - 1] = '\0';
		t->bad[5] = giong_resolve(longname, 80, AF_UNSPEC, a, 4);
	}
	if (giong_tcp_listen("127.0.0.1:0", NULL, &l) == 0) {
		snprintf(addr, sizeof(addr), "127.0.0.1:%d", nt_listener_port(l));
		t->connect = giong_tcp_connect(addr, &c);
		if (!t->connect && giong_tcp_accept(l, &s) == 0) {
			giong_stream_close(s);
			giong_stream_close(c);
		} else if (!t->connect) {
			giong_stream_close(c);
		}
		giong_listener_close(l);
	}
	t->stats = giong_resolver_stats(&t->st);
}

static void test_numeric(void **state)
{
	struct numeric t = {0};
	struct giong_config c = gt_config(1);
	int fd = drop_server(&t.drop_port), fds;

	(void)state;
	fds = gt_count_fds();
	gt_run(&c, numeric_main, &t, NULL);
	assert_int_equal(t.v4, 1);
	assert_true(t.v4_ok);
	assert_int_equal(t.v6, 1);
	assert_true(t.v6_ok);
	assert_int_equal(t.local, 1);
	assert_true(t.local_ok);
	assert_int_equal(t.star, 1);
	assert_int_equal(t.wrong_family, -EHOSTUNREACH);
	assert_int_equal(t.resolve_addr, 0);
	assert_true(t.resolve_ok);
	for (int i = 0; i < 6; i++)
		assert_int_equal(t.bad[i], -EINVAL);
	assert_int_equal(t.connect, 0);
	if (have_cares()) {
		assert_int_equal(t.stats, 0);
		assert_int_equal(t.st.lookups, 0); /* not one name reached c-ares */
		assert_int_equal(drain_count(fd), 0);
	} else {
		assert_int_equal(t.stats, -ENOTSUP);
	}
	gt_assert_fds(fds);
	close(fd);
}

/* ------------------------------------------------------ the hosts file */

struct hosts {
	int v4, v6, both, v6_of_v4, missing, addr_resolve, connect;
	bool v4_ok, v6_ok, both_families, addr_ok;
	struct giong_resolver_stats st;
};

static void hosts_main(unsigned w, void *arg)
{
	struct hosts *t = arg;
	struct giong_addr a[4], one;
	struct giong_listener *l;
	struct giong_stream *c, *s;
	char addr[64];

	(void)w;
	/* "f": the hosts file only, no DNS at all. */
	if (!gt_check_int_equal(configure(NULL, "f", 0, 0), 0))
		return;
	t->v4 = giong_resolve("v4only.giong.test", 80, AF_UNSPEC, a, 4);
	t->v4_ok = is_addr(&a[0], "127.0.0.1:80");
	t->v6 = giong_resolve("V6ONLY.giong.test", 81, AF_UNSPEC, a, 4); /* names are case-blind */
	t->v6_ok = is_addr(&a[0], "[::1]:81");
	t->both = giong_resolve("both.giong.test", 82, AF_UNSPEC, a, 4);
	if (t->both == 2)
		t->both_families = a[0].ss.ss_family != a[1].ss.ss_family;
	t->v6_of_v4 = giong_resolve("v4only.giong.test", 80, AF_INET6, a, 4);
	t->missing = giong_resolve("missing.giong.test", 80, AF_UNSPEC, a, 4);
	t->addr_resolve = giong_addr_resolve("alias.giong.test:99", &one);
	t->addr_ok = is_addr(&one, "127.0.0.1:99");
	if (giong_tcp_listen("127.0.0.1:0", NULL, &l) == 0) {
		snprintf(addr, sizeof(addr), "v4only.giong.test:%d", nt_listener_port(l));
		t->connect = giong_tcp_connect(addr, &c);
		if (!t->connect) {
			if (giong_tcp_accept(l, &s) == 0)
				giong_stream_close(s);
			giong_stream_close(c);
		}
		giong_listener_close(l);
	}
	giong_resolver_stats(&t->st);
}

static void test_hosts(void **state)
{
	struct hosts t = {0};
	struct giong_config c = gt_config(1);

	(void)state;
	if (!have_cares()) {
		print_message("built without c-ares: the hosts file test needs it\n");
		return;
	}
	gt_run(&c, hosts_main, &t, NULL);
	assert_int_equal(t.v4, 1);
	assert_true(t.v4_ok);
	assert_int_equal(t.v6, 1);
	assert_true(t.v6_ok);
	assert_int_equal(t.both, 2);
	assert_true(t.both_families);
	assert_int_equal(t.v6_of_v4, -EHOSTUNREACH);
	assert_int_equal(t.missing, -EHOSTUNREACH);
	assert_int_equal(t.addr_resolve, 0);
	assert_true(t.addr_ok);
	assert_int_equal(t.connect, 0);
	assert_int_equal(t.st.lookups, 7);
	assert_int_equal(t.st.in_flight, 0);
	assert_int_equal(t.st.sockets, 0);
}

/* ------------------------------------- a DNS server on the same worker */

/* The DNS name at @p (labels) as dotted lower-case text; the offset after
 * it, or -1. */
static int dns_name(const unsigned char *msg, int len, int p, char *out, size_t outlen)
{
	size_t o = 0;

	while (p < len && msg[p]) {
		int l = msg[p++];

		if (l > 63 || p + l > len || o + (size_t)l + 2 > outlen)
			return -1;
		if (o)
			out[o++] = '.';
		for (int i = 0; i < l; i++)
			out[o++] = (char)((msg[p + i] >= 'A' && msg[p + i] <= 'Z') ? msg[p + i] + 32
										   : msg[p + i]);
		p += l;
	}
	out[o] = '\0';
	return p < len ? p + 1 : -1;
}

struct dns {
	struct giong_udp *u;
	int queries;
	int answered;
};

/* Answer @q (@len bytes): www.dns.giong.test has A 192.0.2.7 and no AAAA;
 * every other name does not exist. Returns the reply's length, or -1. */
static int dns_reply(const unsigned char *q, int len, unsigned char *r, size_t rlen)
{
	char name[256];
	int end = len >= 12 ? dns_name(q, len, 12, name, sizeof(name)) : -1;
	int qtype, n;
	bool known;

	if (end < 0 || end + 4 > len || (size_t)end + 4 + 16 > rlen)
		return -1;
	qtype = q[end] << 8 | q[end + 1];
	known = !strcmp(name, "www.dns.giong.test");
	memcpy(r, q, (size_t)end + 4); /* id, flags, counts, the question */
	r[2] = 0x81;                   /* QR, RD */
	r[3] = known ? 0x80 : 0x83;    /* RA; NXDOMAIN for unknown names */
	memset(r + 6, 0, 6);           /* AN, NS, AR */
	n = end + 4;
	if (known && qtype == 1) {
		static const unsigned char a[] = {0xc0, 12, 0, 1, 0,   1, 0, 0,
						  0,    60, 0, 4, 192, 0, 2, 7};

		r[7] = 1;
		memcpy(r + n, a, sizeof(a));
		n += (int)sizeof(a);
	}
	return n;
}

static intptr_t dns_task(void *arg)
{
	struct dns *d = arg;
	unsigned char q[512], r[600];
	struct giong_addr from;
	unsigned flags;

	for (;;) {
		ssize_t n = giong_udp_read_from(d->u, q, sizeof(q), &from, &flags);
		int m;

		if (n < 0)
			break; /* cancelled at the end of the test */
		d->queries++;
		m = dns_reply(q, (int)n, r, sizeof(r));
		if (m > 0 && giong_udp_send_to(d->u, r, (size_t)m, &from) == m)
			d->answered++;
	}
	return 0;
}

struct dnstest {
	int www, nosuch, conf_bad_lookups, conf_bad_servers;
	bool www_ok;
	struct dns dns;
	struct giong_resolver_stats st;
};

static void dns_main(unsigned w, void *arg)
{
	struct dnstest *t = arg;
	struct giong_addr a[4], la;
	struct giong_task *srv;
	char servers[32];

	(void)w;
	if (!gt_check_int_equal(giong_udp_bind("127.0.0.1:0", NULL, &t->dns.u), 0))
		return;
	giong_udp_local_addr(t->dns.u, &la);
	snprintf(servers, sizeof(servers), "127.0.0.1:%d", giong_addr_port(&la));
	if (!gt_check_int_equal(giong_spawn(dns_task, &t->dns, &srv), 0))
		return;
	t->conf_bad_lookups = configure(servers, "x", 0, 0);
	t->conf_bad_servers = configure("not a server", "b", 0, 0);
	/* resolv.conf's search list makes "www" www.dns.giong.test. */
	if (gt_check_int_equal(configure(servers, "b", 5000, 2), 0)) {
		t->www = giong_resolve("www", 53, AF_UNSPEC, a, 4);
		t->www_ok = is_addr(&a[0], "192.0.2.7:53");
		t->nosuch = giong_resolve("nosuch", 53, AF_UNSPEC, a, 4);
	}
	giong_task_cancel(srv);
	giong_join(srv, NULL);
	giong_udp_close(t->dns.u);
	giong_yield(); /* the watchers of the closed sockets end */
	giong_resolver_stats(&t->st);
}

static void test_dns(void **state)
{
	struct dnstest t = {0};
	struct giong_config c = gt_config(1);
	int fds;

	(void)state;
	if (!have_cares()) {
		print_message("built without c-ares: the DNS test needs it\n");
		return;
	}
	fds = gt_count_fds();
	gt_run(&c, dns_main, &t, NULL);
	assert_int_equal(t.conf_bad_lookups, -EINVAL);
	assert_int_equal(t.conf_bad_servers, -EINVAL);
	assert_int_equal(t.www, 1);
	assert_true(t.www_ok);
	assert_int_equal(t.nosuch, -EHOSTUNREACH);
	/* www: A and AAAA; nosuch: both, for the search name and as it is. */
	assert_int_equal(t.dns.queries, 6);
	assert_int_equal(t.dns.answered, 6);
	assert_int_equal(t.st.in_flight, 0);
	assert_int_equal(t.st.sockets, 0);
	assert_int_equal(t.st.watchers, 0);
	gt_assert_fds(fds);
}

/* ------------------------- a server that never answers: -ETIMEDOUT */

struct ticker {
	bool stop;
	unsigned ticks;
};

static intptr_t ticker_task(void *arg)
{
	struct ticker *k = arg;

	while (!k->stop && giong_sleep_ms(5) == 0)
		k->ticks++;
	return 0;
}

struct slow {
	int drop_port;
	int first, second, busy, after_hosts, own_timeout, cancelled;
	uint64_t first_ms, second_ms, own_ms;
	unsigned ticks_during;
	struct giong_resolver_stats mid, end;
	bool after_ok;
};

struct waiter {
	uint64_t deadline_ms;
	int ret;
	uint64_t took;
};

static intptr_t waiter_task(void *arg)
{
	struct waiter *wt = arg;
	struct giong_addr a[2];
	uint64_t t0 = giong_now_ms(), saved = giong_deadline_in(wt->deadline_ms);

	wt->ret = giong_resolve("slow.giong.test", 80, AF_UNSPEC, a, 2);
	giong_deadline_restore(saved);
	wt->took = giong_now_ms() - t0;
	return 0;
}

static void slow_main(unsigned w, void *arg)
{
	struct slow *t = arg;
	struct ticker k = {0};
	struct giong_task *tick, *a, *b;
	struct waiter wa = {.deadline_ms = 200}, wb = {.deadline_ms = 600};
	struct giong_addr one[2];
	char servers[32];
	unsigned ticks0;

	(void)w;
	snprintf(servers, sizeof(servers), "127.0.0.1:%d", t->drop_port);
	/* c-ares itself would wait 3 x 5 s: only the deadlines end these. */
	if (!gt_check_int_equal(configure(servers, "fb", 5000, 3), 0))
		return;
	if (!gt_check_int_equal(giong_spawn(ticker_task, &k, &tick), 0))
		return;
	giong_spawn(waiter_task, &wa, &a);
	giong_spawn(waiter_task, &wb, &b);
	giong_yield(); /* both lookups are in flight now */
	t->busy = configure(servers, "fb", 5000, 3);
	ticks0 = k.ticks;
	giong_join(a, NULL);
	/* a gave up; b's lookup (and a's abandoned one) go on. */
	giong_resolver_stats(&t->mid);
	giong_join(b, NULL);
	t->ticks_during = k.ticks - ticks0;
	t->first = wa.ret;
	t->first_ms = wa.took;
	t->second = wb.ret;
	t->second_ms = wb.took;

	/* A cancelled lookup returns at once; nothing writes to its task after. */
	giong_spawn(waiter_task, &wa, &a);
	wa.deadline_ms = 10000;
	giong_sleep_ms(20);
	giong_task_cancel(a);
	giong_join(a, NULL);
	t->cancelled = wa.ret;

	/* The hosts file still answers at once ("fb": the file first). */
	t->after_hosts = giong_resolve("v4only.giong.test", 1, AF_INET, one, 2);
	t->after_ok = is_addr(&one[0], "127.0.0.1:1");

	/* c-ares's own timeout, with no deadline: one try of 100 ms. */
	if (gt_check_int_equal(configure(servers, "b", 100, 1), 0)) {
		uint64_t t0 = giong_now_ms();

		t->own_timeout = giong_resolve("slow.giong.test", 80, AF_UNSPEC, one, 2);
		t->own_ms = giong_now_ms() - t0;
	}
	k.stop = true;
	giong_join(tick, NULL);
	giong_sleep_ms(1); /* the watchers of the closed sockets end */
	giong_resolver_stats(&t->end);
}

static void test_slow_server(void **state)
{
	struct slow t = {0};
	struct giong_config c = gt_config(1);
	int fd, fds;

	(void)state;
	if (!have_cares()) {
		print_message("built without c-ares: the timeout test needs it\n");
		return;
	}
	fd = drop_server(&t.drop_port);
	fds = gt_count_fds();
	gt_run(&c, slow_main, &t, NULL);
	assert_int_equal(t.busy, -EBUSY);
	/* Ended by the deadlines: c-ares's first try alone would take 5 s. The
	 * upper bounds only say that, with room for a slow machine. */
	assert_int_equal(t.first, -ETIMEDOUT);
	assert_in_range(t.first_ms, 200, 4000);
	assert_int_equal(t.second, -ETIMEDOUT);
	assert_in_range(t.second_ms, 600, 4000);
	/* The worker ran its other tasks all along: 600 ms of 5 ms sleeps. */
	assert_true(t.ticks_during >= 20);
	/* While b waited, a's lookup was still c-ares's (abandoned, not freed). */
	assert_int_equal(t.mid.in_flight, 2);
	assert_true(t.mid.sockets >= 1);
	assert_int_equal(t.cancelled, -ECANCELED);
	assert_int_equal(t.after_hosts, 1);
	assert_true(t.after_ok);
	assert_int_equal(t.own_timeout, -ETIMEDOUT);
	assert_in_range(t.own_ms, 100, 5000); /* not hung */
	assert_int_equal(t.end.abandoned, 3);
	assert_int_equal(t.end.in_flight, 0);
	assert_int_equal(t.end.sockets, 0);
	assert_int_equal(t.end.watchers, 0);
	assert_true(drain_count(fd) >= 4); /* the queries did reach the server */
	gt_assert_fds(fds);
	close(fd);
}

/* ------------------------------------------- Happy Eyeballs (RFC 8305) */

struct race_test {
	int port;
	int listen, lookup, connect, peer;
	bool v6_first, peer_ok;
	uint64_t took;
};

static void race_main(unsigned w, void *arg)
{
	struct race_test *t = arg;
	struct giong_addr a[4], peer;
	struct giong_listener *l;
	struct giong_stream *c, *s;
	char addr[64];
	uint64_t t0, saved;

	(void)w;
	if (!gt_check_int_equal(configure(NULL, "f", 0, 0), 0))
		return;
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", t->port);
	t->listen = giong_tcp_listen(addr, NULL, &l);
	if (t->listen == -EADDRINUSE)
		return; /* the caller tries another port */
	if (!gt_check_int_equal(t->listen, 0))
		return;
	t->lookup = giong_resolve("race.giong.test", 0, AF_UNSPEC, a, 4);
	t->v6_first = t->lookup == 2 && a[0].ss.ss_family == AF_INET6;
	snprintf(addr, sizeof(addr), "race.giong.test:%d", t->port);
	t0 = giong_now_ms();
	saved = giong_deadline_in(10000);
	t->connect = giong_tcp_connect(addr, &c);
	giong_deadline_restore(saved);
	t->took = giong_now_ms() - t0;
	if (!t->connect) {
		t->peer = giong_stream_peer_addr(c, &peer);
		snprintf(addr, sizeof(addr), "127.0.0.1:%d", t->port);
		t->peer_ok = is_addr(&peer, addr);
		if (giong_tcp_accept(l, &s) == 0)
			giong_stream_close(s);
		giong_stream_close(c);
	}
	giong_listener_close(l);
	giong_sleep_ms(5); /* the cancelled try's close runs */
}

/* A [::1] listener that takes no connection: a backlog of 0, filled by two
 * connects that are never accepted, so the kernel drops further SYNs. Gives
 * its descriptor and port, or -1 when this machine has no ::1. */
static int black_hole_v6(int *port, int fill[2])
{
	struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	socklen_t len = sizeof(sa);
	int hole, one = 1;

	hole = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(hole >= 0);
	setsockopt(hole, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(hole, (struct sockaddr *)&sa, sizeof(sa))) {
		print_message("no ::1 here (%s): race test skipped\n", strerror(errno));
		close(hole);
		return -1;
	}
	assert_int_equal(listen(hole, 0), 0);
	assert_int_equal(getsockname(hole, (struct sockaddr *)&sa, &len), 0);
	*port = ntohs(sa.sin6_port);
	for (int i = 0; i < 2; i++) {
		fill[i] = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		assert_true(fill[i] >= 0);
		connect(fill[i], (struct sockaddr *)&sa, sizeof(sa));
	}
	usleep(50 * 1000); /* the first filler's handshake fills the queue */
	return hole;
}

/* [::1]:port takes no connection (its accept queue is full, so the kernel
 * drops the SYNs), 127.0.0.1:port does: the IPv4 try, started 250 ms after
 * the IPv6 one, wins long before the deadline. */
static void test_happy_eyeballs(void **state)
{
	struct race_test t = {0};
	struct giong_config c = gt_config(1);
	int hole, fill[2], fds, tries = 0;

	(void)state;
	if (!have_cares()) {
		print_message("built without c-ares: the race test needs the hosts file\n");
		return;
	}
	fds = gt_count_fds();
	/* The port is one the kernel picked free on ::1; on 127.0.0.1 another
	 * test's connection may hold it (a CI run: EADDRINUSE). Then another. */
	do {
		if (tries++) {
			for (int i = 0; i < 2; i++)
				close(fill[i]);
			close(hole);
		}
		hole = black_hole_v6(&t.port, fill);
		if (hole < 0)
			return;
		t = (struct race_test){.port = t.port};
		gt_run(&c, race_main, &t, NULL);
	} while (t.listen == -EADDRINUSE && tries < 10);
	print_message("race: connected in %" PRIu64 " ms (IPv6 first: %d)\n", t.took, t.v6_first);
	assert_int_equal(t.listen, 0);
	assert_int_equal(t.lookup, 2);
	assert_int_equal(t.connect, 0);
	assert_int_equal(t.peer, 0);
	assert_true(t.peer_ok);
	if (t.v6_first) /* at the fallback delay, long before the 10 s deadline */
		assert_in_range(t.took, 250, 5000);
	for (int i = 0; i < 2; i++)
		close(fill[i]);
	close(hole);
	gt_assert_fds(fds);
}

/* ------------------------------------------------ outside any worker */

static void test_off_worker(void **state)
{
	struct giong_addr a;
	struct giong_resolver_stats st;

	(void)state;
	assert_int_equal(giong_resolve("127.0.0.1", 80, AF_INET, &a, 1), 1);
	assert_int_equal(giong_addr_resolve("[::1]:80", &a), 0);
	/* localhost off any task: the loopback address with the port asked for
	 * (answered without a resolver, as on a worker). */
	assert_int_equal(giong_resolve("localhost", 8080, AF_INET, &a, 1), 1);
	assert_int_equal(a.ss.ss_family, AF_INET);
	assert_int_equal(((struct sockaddr_in *)&a.ss)->sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	assert_int_equal(ntohs(((struct sockaddr_in *)&a.ss)->sin_port), 8080);
	assert_int_equal(giong_resolver_configure(NULL), GIONG_ENOTWORKER);
	assert_int_equal(giong_resolver_stats(&st), GIONG_ENOTWORKER);
	assert_int_equal(giong_resolver_stats(NULL), -EINVAL);
}

static int write_file(char *path, const char *text)
{
	int fd = mkstemp(path);

	if (fd < 0)
		return -1;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		close(fd);
		return -1;
	}
	return close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* clang-format off */
		cmocka_unit_test(test_numeric),
		cmocka_unit_test(test_hosts),
		cmocka_unit_test(test_dns),
		cmocka_unit_test(test_slow_server),
		cmocka_unit_test(test_happy_eyeballs),
		cmocka_unit_test(test_off_worker),
		/* clang-format on */
	};
	int r;

	gt_require_runtime();
	strcpy(hosts_path, "/tmp/giong-hosts-XXXXXX");
	strcpy(resolv_path, "/tmp/giong-resolv-XXXXXX");
	if (write_file(hosts_path, "# giong test hosts\n"
				   "127.0.0.1 v4only.giong.test alias.giong.test\n"
				   "::1\tv6only.giong.test\n"
				   "127.0.0.1 both.giong.test\n"
				   "::1 both.giong.test\n"
				   "::1 race.giong.test\n"
				   "127.0.0.1 race.giong.test\n") ||
	    write_file(resolv_path, "search dns.giong.test\n"
				    "options ndots:1\n"
				    "nameserver 192.0.2.53\n")) {
		perror("test files");
		return 1;
	}
	/* c-ares reads this hosts file instead of /etc/hosts. */
	setenv("CARES_HOSTS", hosts_path, 1);
	print_message("resolver: %s\n", giong_resolver_backend());
	r = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(hosts_path);
	unlink(resolv_path);
	return r;
}
