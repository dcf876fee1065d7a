/* SPDX-License-Identifier: MIT */
/*
 * test_parse_random.c - 500,000 random and mutated inputs through the head parser and
 * the chunked decoder, checked against small independent models of what must be
 * accepted:
 *  - heads: every valid request the generator builds is accepted, with the same
 *    method, target, fields and framing; after mutations (byte flips, insertions of
 *    CR/LF/SP/HTAB/NUL/0x80, deletions, truncations, duplicated lines), every head
 *    the parser accepts has CRLF line endings, a valid request line, token field
 *    names, exactly one Host for HTTP/1.1 (at most one for 1.0), and the framing the
 *    model reads from its fields; "need more" only when no head end is in the bytes;
 *    every refusal one of the statuses the contract names; every 64th input also fed
 *    byte by byte through one scan state, with the same answer.
 *  - chunked bodies: the decoder, fed in random pieces, against a line-based model
 *    that reads the whole input at once: the same verdict (done, need more, refused),
 *    the same end and the same data.
 * A fixed seed (GIONG_SEED overrides it), printed.
 */
#include <ctype.h>
#include <strings.h>

#include "giong_test.h"

#include <giong/http.h>

#include "h1/chunked.h"
#include "h1/parse.h"
#include "http_parse_test.h"

/* Under valgrind (memory errors, not coverage, are what it adds) a tenth:
 * the full run would cost CI's valgrind check 45 s. */
#define HEADS (RUNNING_ON_VALGRIND ? 25000 : 250000)
#define BODIES (RUNNING_ON_VALGRIND ? 25000 : 250000)
#define MAXF 128

static uint64_t rng;

static uint32_t rnd(uint32_t n) /* [0, n) */
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)((rng >> 11) % n);
}

struct buf {
	char b[8192];
	size_t len;
};

static void put(struct buf *o, const char *s, size_t n)
{
	size_t room = o->len < sizeof(o->b) ? sizeof(o->b) - o->len : 0;

	if (n > room)
		n = room;
	for (size_t i = 0; i < n; i++)
		o->b[o->len + i] = s[i];
	o->len += n;
}

static void puts_(struct buf *o, const char *s)
{
	put(o, s, strlen(s));
}

static void rand_from(struct buf *o, const char *set, uint32_t min, uint32_t max)
{
	uint32_t n = min + rnd(max - min + 1), k = (uint32_t)strlen(set);

	for (uint32_t i = 0; i < n; i++)
		put(o, &set[rnd(k)], 1);
}

static const char tchars[] =
	"!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
static const char pchars[] =
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/%!$&'()*+,;=:@";

/* --- the model of an accepted head (independent of src/h1/parse.c) ------------------------------ */

static bool m_tchar(unsigned char c)
{
	return c && strchr(tchars, c);
}

static bool ieq(const char *a, size_t n, const char *b)
{
	return strlen(b) == n && !strncasecmp(a, b, n);
}

struct expect {
	const char *method;
	char target[512];
	int minor;
	size_t nfields;
	struct {
		char name[40], value[80];
	} f[MAXF];
	int body;
	uint64_t cl;
};

static void trim(const char **p, const char **e)
{
	while (*p < *e && (**p == ' ' || **p == '\t'))
		(*p)++;
	while (*e > *p && ((*e)[-1] == ' ' || (*e)[-1] == '\t'))
		(*e)--;
}

/* Whether head b[0..n), which the parser accepted as *h, is one the model accepts too.
 * Returns NULL or what is wrong with it. */
static const char *model_head(const char *b, size_t n, const struct giong__http_head *h)
{
	const char *p = b, *end = b + n, *eol, *sp1, *sp2;
	unsigned hosts = 0, cls = 0, tes = 0, chunked = 0, others = 0, lines = 0;
	uint64_t cl = 0;
	bool cl_bad = false;

	for (size_t i = 0; i < n; i++) {
		if (b[i] == '\n' && (i == 0 || b[i - 1] != '\r'))
			return "bare LF";
		if (b[i] == '\r' && (i + 1 >= n || b[i + 1] != '\n'))
			return "bare CR";
	}
	if (n < 4 || memcmp(end - 4, "\r\n\r\n", 4))
		return "no empty line at the end";
	while (p + 2 <= end && p[0] == '\r' && p[1] == '\n')
		p += 2;
	eol = memmem(p, (size_t)(end - p), "\r\n", 2);
	sp1 = memchr(p, ' ', (size_t)(eol - p));
	if (!sp1 || sp1 == p)
		return "request line: no method";
	for (const char *q = p; q < sp1; q++)
		if (!m_tchar((unsigned char)*q))
			return "method not a token";
	sp2 = memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1));
	if (!sp2 || sp2 == sp1 + 1)
		return "request line: no target";
	for (const char *q = sp1 + 1; q < sp2; q++)
		if ((unsigned char)*q <= 0x20 || (unsigned char)*q >= 0x7f)
			return "target byte";
	if (eol - sp2 - 1 != 8 ||
	    (memcmp(sp2 + 1, "HTTP/1.1", 8) && memcmp(sp2 + 1, "HTTP/1.0", 8)))
		return "version";
	if (h->method != p || h->method_len != (size_t)(sp1 - p) || h->target != sp1 + 1 ||
	    h->target_len != (size_t)(sp2 - sp1 - 1) || h->version_minor != sp2[8] - '0')
		return "request line spans";
	for (p = eol + 2; p < end - 2; p = eol + 2) {
		const char *colon, *v, *ve;

		eol = memmem(p, (size_t)(end - p), "\r\n", 2);
		colon = memchr(p, ':', (size_t)(eol - p));
		if (!colon || colon == p)
			return "field line without a name";
		for (const char *q = p; q < colon; q++)
			if (!m_tchar((unsigned char)*q))
				return "field name not a token";
		for (const char *q = colon + 1; q < eol; q++)
			if ((unsigned char)*q < 0x20 ? *q != '\t' : *q == 0x7f)
				return "CTL in a value";
		if (lines >= h->nfields || h->fields[lines].name != p ||
		    h->fields[lines].name_len != (size_t)(colon - p))
			return "field spans";
		v = colon + 1;
		ve = eol;
		trim(&v, &ve);
		if (h->fields[lines].value_len != (size_t)(ve - v) ||
		    (ve > v && h->fields[lines].value != v))
			return "field value span";
		lines++;
		if (ieq(p, (size_t)(colon - p), "host")) {
			hosts++;
		} else if (ieq(p, (size_t)(colon - p), "content-length")) {
			cls++;
			if (v == ve)
				cl_bad = true;
			for (const char *q = v; q < ve; q++)
				if (*q < '0' || *q > '9')
					cl_bad = true;
			if (!cl_bad)
				cl = strtoull(v, NULL, 10);
		} else if (ieq(p, (size_t)(colon - p), "transfer-encoding")) {
			tes++;
			/* The model takes only an exact list of one element, chunked. */
			const char *a = v, *e;
			while (a < ve) {
				e = memchr(a, ',', (size_t)(ve - a));
				if (!e)
					e = ve;
				const char *x = a, *y = e;
				trim(&x, &y);
				if (ieq(x, (size_t)(y - x), "chunked"))
					chunked++;
				else if (y > x)
					others++;
				a = e + 1;
			}
		}
	}
	if (lines != h->nfields)
		return "field count";
	if (h->version_minor == 1 ? hosts != 1 : hosts > 1)
		return "Host count";
	if (tes) {
		if (cls || h->version_minor != 1 || chunked != 1 || others)
			return "framing: a Transfer-Encoding the model refuses";
		if (h->body != GIONG__HTTP_BODY_CHUNKED)
			return "framing: not chunked";
	} else if (cls) {
		if (cls > 1 || cl_bad)
			return "framing: a Content-Length the model refuses";
		if (h->body != GIONG__HTTP_BODY_LENGTH || h->content_length != cl)
			return "framing: length";
	} else if (h->body != GIONG__HTTP_BODY_NONE) {
		return "framing: none expected";
	}
	return NULL;
}

/* --- the generator of valid requests ---------------------------------------------------------- */

static const char *const methods[] = {"GET",     "HEAD",  "POST",  "PUT",      "DELETE",
				      "OPTIONS", "PATCH", "TRACE", "PROPFIND", "M-SEARCH"};

static void gen_head(struct buf *o, struct expect *e)
{
	struct buf t = {0}, v;
	unsigned nf;

	memset(e, 0, sizeof(*e));
	o->len = 0;
	if (!rnd(8))
		puts_(o, "\r\n");
	e->method = methods[rnd(sizeof(methods) / sizeof(methods[0]))];
	e->minor = (int)rnd(2);
	switch (rnd(6)) {
	case 0:
		puts_(&t, "http://");
		rand_from(&t, "abcdefghijklmnopqrstuvwxyz", 1, 10);
		puts_(&t, ".example");
		if (rnd(2))
			puts_(&t, ":8080");
		if (rnd(3)) {
			puts_(&t, "/");
			rand_from(&t, pchars, 0, 30);
		}
		break;
	case 1:
		if (!strcmp(e->method, "OPTIONS")) {
			puts_(&t, "*");
			break;
		}
		/* fall through */
	default:
		puts_(&t, "/");
		rand_from(&t, pchars, 0, 60);
		if (rnd(2)) {
			puts_(&t, "?");
			rand_from(&t, pchars, 0, 30);
		}
	}
	memcpy(e->target, t.b, t.len);
	e->target[t.len] = 0;
	puts_(o, e->method);
	puts_(o, " ");
	puts_(o, e->target);
	puts_(o, e->minor ? " HTTP/1.1\r\n" : " HTTP/1.0\r\n");
	nf = rnd(12);
	bool host = e->minor || rnd(2);
	int host_at = host ? (int)rnd(nf + 1) : -1;
	e->body = e->minor ? (int)rnd(3) : (int)rnd(2);
	int frame_at = e->body ? (int)rnd(nf + 1) : -1;
	for (unsigned slot = 0; slot < 3 * (nf + 1); slot++) {
		unsigned i = slot / 3, kind = slot % 3;
		char name[40], value[80];

		if (kind == 0 && (int)i == host_at) {
			strcpy(name, rnd(2) ? "Host" : "host");
			v.len = 0;
			rand_from(&v, "abcdefghijklmnopqrstuvwxyz.", 1, 20);
			memcpy(value, v.b, v.len);
			value[v.len] = 0;
		} else if (kind == 1 && (int)i == frame_at) {
			if (e->body == GIONG__HTTP_BODY_LENGTH) {
				e->cl = rnd(2) ? rnd(100000)
					       : ((uint64_t)rnd(1u << 31) << 20 | rnd(1u << 20));
				strcpy(name, rnd(2) ? "Content-Length" : "content-LENGTH");
				snprintf(value, sizeof(value), "%llu", (unsigned long long)e->cl);
			} else {
				strcpy(name, "Transfer-Encoding");
				strcpy(value, rnd(2) ? "chunked" : "Chunked");
			}
		} else if (kind == 2 && i < nf) {
			v.len = 0;
			puts_(&v, "X-");
			rand_from(&v, tchars, 1, 20);
			memcpy(name, v.b, v.len);
			name[v.len] = 0;
			v.len = 0;
			if (rnd(2)) {
				rand_from(&v, "abcXYZ019!\"#~\x80\xfe", 1, 1);
				rand_from(&v, "abc XYZ\t019!\"#~()<>@,;:\\/[]?={}\x80\xfe", 0, 60);
				rand_from(&v, "abcXYZ019!\"#~\x80\xfe", 1, 1);
			}
			memcpy(value, v.b, v.len);
			value[v.len] = 0;
		} else {
			continue;
		}
		if (e->nfields < MAXF) {
			strcpy(e->f[e->nfields].name, name);
			strcpy(e->f[e->nfields].value, value);
			e->nfields++;
		}
		puts_(o, name);
		puts_(o, ":");
		puts_(o, rnd(4) ? " " : rnd(2) ? "" : " \t ");
		puts_(o, value);
		puts_(o, rnd(6) ? "" : " ");
		puts_(o, "\r\n");
	}
	puts_(o, "\r\n");
}

static void mutate(struct buf *o)
{
	static const char ins[] = {'\r', '\n', ' ', '\t', '\0', (char)0x80};
	size_t at = o->len ? rnd((uint32_t)o->len) : 0;

	switch (rnd(6)) {
	case 0: /* a byte flipped */
		if (o->len)
			o->b[at] ^= (char)(1u << rnd(8));
		break;
	case 1: /* a byte replaced */
		if (o->len)
			o->b[at] = (char)rnd(256);
		break;
	case 2: /* an insertion */
		if (o->len < sizeof(o->b)) {
			memmove(o->b + at + 1, o->b + at, o->len - at);
			o->b[at] = ins[rnd(sizeof(ins))];
			o->len++;
		}
		break;
	case 3: /* a deletion */
		if (o->len) {
			memmove(o->b + at, o->b + at + 1, o->len - at - 1);
			o->len--;
		}
		break;
	case 4: /* a truncation */
		o->len = at;
		break;
	default: { /* a line duplicated */
		const char *s = memmem(o->b + at, o->len - at, "\r\n", 2), *e;

		if (!s || (e = memmem(s + 2, o->len - (size_t)(s + 2 - o->b), "\r\n", 2)) == NULL)
			break;
		size_t n = (size_t)(e - s);
		if (o->len + n > sizeof(o->b))
			break;
		memmove((char *)e + n, e, o->len - (size_t)(e - o->b));
		o->len += n;
		break;
	}
	}
}

static struct giong_http_field fields[MAXF + 8], fields2[MAXF + 8];

static void check_valid(const struct buf *o, const struct expect *e,
			const struct giong__http_head *h)
{
	assert_int_equal(h->method_len, strlen(e->method));
	assert_memory_equal(h->method, e->method, h->method_len);
	assert_int_equal(h->target_len, strlen(e->target));
	assert_memory_equal(h->target, e->target, h->target_len);
	assert_int_equal(h->version_minor, e->minor);
	assert_int_equal(h->nfields, e->nfields);
	for (size_t i = 0; i < e->nfields; i++) {
		assert_int_equal(h->fields[i].name_len, strlen(e->f[i].name));
		assert_memory_equal(h->fields[i].name, e->f[i].name, h->fields[i].name_len);
		assert_int_equal(h->fields[i].value_len, strlen(e->f[i].value));
		assert_memory_equal(h->fields[i].value, e->f[i].value, h->fields[i].value_len);
	}
	assert_int_equal(h->body, e->body);
	assert_int_equal(h->content_length, e->body == GIONG__HTTP_BODY_LENGTH ? e->cl : 0);
	(void)o;
}

static void test_heads(void **state)
{
	static struct buf o;
	static struct expect e;
	struct giong_http_limits lim;
	unsigned long accepted = 0, refused = 0, more = 0, valid = 0;

	(void)state;
	giong_http_limits_init(&lim);
	lim.fields = MAXF + 8;
	for (int it = 0; it < HEADS; it++) {
		struct giong__http_head h;
		bool mutated = rnd(5) != 0;
		char *copy;
		int r;

		gen_head(&o, &e);
		if (mutated)
			for (uint32_t k = 1 + rnd(3); k; k--)
				mutate(&o);
		copy = malloc(o.len ? o.len : 1); /* exact size: ASan sees a read past it */
		memcpy(copy, o.b, o.len);
		r = ht_parse_head(copy, o.len, &lim, NULL, &h, fields);
		if (!mutated) {
			if (r != (int)o.len)
				fail_msg("iteration %d: a valid request gave %d: %.*s", it, r,
					 (int)o.len, o.b);
			check_valid(&o, &e, &h);
			valid++;
		}
		if (r > 0) {
			const char *why = model_head(copy, (size_t)r, &h);

			if (why)
				fail_msg("iteration %d: accepted, but %s: %.*s", it, why, r, o.b);
			accepted++;
		} else if (r == 0) {
			const char *p = copy, *end = copy + o.len;

			while (p + 2 <= end && p[0] == '\r' && p[1] == '\n')
				p += 2;
			if (memmem(p, (size_t)(end - p), "\r\n\r\n", 4))
				fail_msg("iteration %d: need more with a whole head: %.*s", it,
					 (int)o.len, o.b);
			more++;
		} else {
			if (r != -400 && r != -414 && r != -431 && r != -501 && r != -505 &&
			    r != -417)
				fail_msg("iteration %d: refused with %d", it, r);
			refused++;
		}
		if (it % 64 == 0) { /* byte by byte, one scan state: the same answer */
			struct giong__http_scan sc = {0};
			struct giong__http_head h2;
			int r2 = 0;

			for (size_t n = 0; n <= o.len && r2 == 0; n++)
				r2 = ht_parse_head(copy, n, &lim, &sc, &h2, fields2);
			if (r2 != r)
				fail_msg("iteration %d: byte by byte %d, whole %d", it, r2, r);
		}
		free(copy);
	}
	print_message("heads: %d inputs, %lu valid ones accepted as built; %lu accepted, %lu "
		      "refused, %lu need more\n",
		      HEADS, valid, accepted, refused, more);
}

/* --- chunked bodies --------------------------------------------------------------------------- */

/* The model: reads the whole input line by line. Returns 2 done (*end, data), 0 need
 * more, -1 refused. */
static int model_chunked(const char *b, size_t n, size_t *end, struct buf *data)
{
	size_t p = 0;

	data->len = 0;
	for (;;) {
		const char *lf = memchr(b + p, '\n', n - p), *cr;
		uint64_t size = 0;
		size_t i = p, digits = 0;

		cr = memchr(b + p, '\r', n - p);
		if (cr && (!lf || cr < lf) && (size_t)(cr - b) + 1 < n && cr[1] != '\n')
			return -1; /* bare CR */
		if (lf && (lf == b + p || lf[-1] != '\r'))
			return -1; /* bare LF */
		if (!lf) {
			/* An incomplete line: refused already if what is there cannot start one. */
			size_t j, count = n - p;

			for (; i < n && isxdigit((unsigned char)b[i]); i++) {
				if (size >> 60)
					return -1;
				size = size << 4 | 1;
			}
			if (i == p && i < n)
				return -1;
			for (j = i; j < n && (b[j] == ' ' || b[j] == '\t'); j++)
				;
			if (j < n && b[j] == '\r') {
				if (j > i || j + 1 < n)
					return -1;
			} else if (j < n && b[j] != ';') {
				return -1;
			} else {
				for (size_t k = j + 1; k < n; k++) {
					if (b[k] == '\r') {
						if (k + 1 < n)
							return -1;
					} else if ((unsigned char)b[k] < 0x20 ? b[k] != '\t'
									      : b[k] == 0x7f) {
						return -1;
					}
				}
			}
			if (n > p && b[n - 1] == '\r')
				count--;
			return count > 4096 ? -1 : 0;
		}
		size_t le = (size_t)(lf - b) - 1; /* the CR */
		if (le - p > 4096)
			return -1;
		for (; i < le && isxdigit((unsigned char)b[i]); i++, digits++) {
			if (size >> 60)
				return -1;
			size = size << 4 | (uint64_t)(isdigit((unsigned char)b[i])
							      ? b[i] - '0'
							      : (tolower(b[i]) - 'a' + 10));
		}
		if (!digits)
			return -1;
		while (i < le && (b[i] == ' ' || b[i] == '\t'))
			i++;
		if (i < le && b[i] != ';')
			return -1;
		if (i == le && i > p + digits)
			return -1; /* BWS without an extension */
		for (; i < le; i++)
			if ((unsigned char)b[i] < 0x20 ? b[i] != '\t' : b[i] == 0x7f)
				return -1;
		p = le + 2;
		if (size == 0)
			break;
		if (size > 1024 * 1024 || data->len + size > 1024 * 1024)
			return -1; /* the default body limit */
		if (n - p < size) {
			put(data, b + p, n - p);
			return 0;
		}
		put(data, b + p, (size_t)size);
		p += (size_t)size;
		if (n - p < 2) {
			if (n - p == 1 && b[p] != '\r')
				return -1;
			return 0;
		}
		if (b[p] != '\r' || b[p + 1] != '\n')
			return -1;
		p += 2;
	}
	/* Trailers. */
	for (;;) {
		const char *lf = memchr(b + p, '\n', n - p), *colon;
		size_t q;

		if (!lf) {
			bool in_value = false;

			for (q = p; q < n; q++) {
				unsigned char ch = (unsigned char)b[q];

				if (ch == '\r')
					return q + 1 < n || (!in_value && q > p) ? -1 : 0;
				if (in_value) {
					if (ch < 0x20 ? ch != '\t' : ch == 0x7f)
						return -1;
				} else if (ch == ':') {
					if (q == p)
						return -1;
					in_value = true;
				} else if (!m_tchar(ch)) {
					return -1;
				}
			}
			return 0;
		}
		if (lf == b + p || lf[-1] != '\r')
			return -1;
		if (lf == b + p + 1) {
			*end = p + 2;
			return 2;
		}
		size_t le = (size_t)(lf - b) - 1;
		if (memchr(b + p, '\r', le - p))
			return -1;
		colon = memchr(b + p, ':', le - p);
		if (!colon || colon == b + p)
			return -1;
		for (q = p; q < (size_t)(colon - b); q++)
			if (!m_tchar((unsigned char)b[q]))
				return -1;
		for (q = (size_t)(colon - b) + 1; q < le; q++)
			if ((unsigned char)b[q] < 0x20 ? b[q] != '\t' : b[q] == 0x7f)
				return -1;
		p = le + 2;
	}
}

static void gen_body(struct buf *o, struct buf *data)
{
	static const char hexd[] = "0123456789abcdefABCDEF";
	char line[64];

	o->len = data->len = 0;
	for (uint32_t k = rnd(5); k; k--) {
		uint32_t size = 1 + rnd(300);
		int w = snprintf(line, sizeof(line), rnd(2) ? "%s%x" : "%s%X", rnd(4) ? "" : "00",
				 size);
		put(o, line, (size_t)w);
		if (!rnd(3)) {
			puts_(o, rnd(2) ? ";" : " ;");
			rand_from(o, "abc=\"xyz\" ;", 0, 20);
		}
		puts_(o, "\r\n");
		for (uint32_t i = 0; i < size; i++) {
			char c = (char)rnd(256);
			put(o, &c, 1);
			put(data, &c, 1);
		}
		puts_(o, "\r\n");
	}
	puts_(o, rnd(3) ? "0\r\n" : "000;end\r\n");
	for (uint32_t t = rnd(3); t; t--) {
		rand_from(o, tchars, 1, 10);
		puts_(o, ": ");
		rand_from(o, "abc xyz\t", 0, 20);
		puts_(o, "\r\n");
	}
	puts_(o, "\r\n");
	(void)hexd;
}

static void test_bodies(void **state)
{
	static struct buf o, data, got, mdata;
	unsigned long done = 0, refused = 0, more = 0;

	(void)state;
	for (int it = 0; it < BODIES; it++) {
		struct giong__http_chunked c;
		bool mutated = rnd(4) != 0;
		size_t pos = 0, mend = 0;
		int r = GIONG__HTTP_CHUNKED_MORE, m;

		gen_body(&o, &data);
		if (mutated)
			for (uint32_t k = 1 + rnd(3); k; k--)
				mutate(&o);
		if (!mutated || rnd(4)) /* something after the body, most of the time */
			puts_(&o, "GET / HTTP/1.1\r\n");
		giong__http_chunked_init(&c, NULL);
		got.len = 0;
		while (pos < o.len || r == GIONG__HTTP_CHUNKED_DATA) {
			size_t n = 1 + rnd(rnd(2) ? 8 : 600), used, off, dl;
			char *piece;

			if (n > o.len - pos)
				n = o.len - pos;
			piece = malloc(n ? n : 1);
			memcpy(piece, o.b + pos, n);
			r = giong__http_chunked_feed(&c, piece, n, &used, &off, &dl);
			if (r == GIONG__HTTP_CHUNKED_DATA)
				put(&got, piece + off, dl);
			free(piece);
			pos += used;
			if (r < 0 || r == GIONG__HTTP_CHUNKED_DONE)
				break;
		}
		m = model_chunked(o.b, o.len, &mend, &mdata);
		if (!mutated && (r != GIONG__HTTP_CHUNKED_DONE || got.len != data.len ||
				 memcmp(got.b, data.b, data.len)))
			fail_msg("iteration %d: a valid body gave %d", it, r);
		if (r == GIONG__HTTP_CHUNKED_DONE) {
			if (m != 2 || mend != pos || mdata.len != got.len ||
			    memcmp(mdata.b, got.b, got.len))
				fail_msg(
					"iteration %d: done at %zu, the model says %d at %zu: %.*s",
					it, pos, m, mend, (int)o.len, o.b);
			done++;
		} else if (r < 0) {
			if (m != -1)
				fail_msg(
					"iteration %d: refused %d at %zu (byte 0x%02x), the model says %d: %.*s",
					it, r, pos, pos < o.len ? (unsigned char)o.b[pos] : 0, m,
					(int)o.len, o.b);
			refused++;
		} else {
			if (m != 0)
				fail_msg("iteration %d: need more, the model says %d: %.*s", it, m,
					 (int)o.len, o.b);
			more++;
		}
	}
	print_message("bodies: %d inputs: %lu done, %lu refused, %lu need more\n", BODIES, done,
		      refused, more);
}

int main(void)
{
	const char *s = getenv("GIONG_SEED");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_heads),
		cmocka_unit_test(test_bodies),
	};

	rng = s ? strtoull(s, NULL, 0) : 0x9e3779b97f4a7c15ull;
	if (!rng)
		rng = 1;
	printf("seed 0x%016llx (GIONG_SEED to change it)\n", (unsigned long long)rng);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
