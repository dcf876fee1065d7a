/* SPDX-License-Identifier: MIT */
/*
 * mime.c - giong-serve: Content-Type from the extension, a built-in table and an optional
 * mime.types(5) file (sorted once when loaded, then binary-searched).
 */
#include "mime.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define UTF8 "; charset=utf-8"

struct mime_builtin {
	const char *ext;
	const char *type;
};

/* Sorted by extension (lower case): binary search. */
static const struct mime_builtin builtin[] = {
	{"css", "text/css" UTF8},
	{"csv", "text/csv" UTF8},
	{"gif", "image/gif"},
	{"gz", "application/gzip"},
	{"htm", "text/html" UTF8},
	{"html", "text/html" UTF8},
	{"ico", "image/vnd.microsoft.icon"},
	{"jpeg", "image/jpeg"},
	{"jpg", "image/jpeg"},
	{"js", "text/javascript" UTF8},
	{"json", "application/json" UTF8},
	{"map", "application/json" UTF8},
	{"md", "text/markdown" UTF8},
	{"mjs", "text/javascript" UTF8},
	{"mp3", "audio/mpeg"},
	{"mp4", "video/mp4"},
	{"ogg", "audio/ogg"},
	{"otf", "font/otf"},
	{"pdf", "application/pdf"},
	{"png", "image/png"},
	{"svg", "image/svg+xml" UTF8},
	{"tar", "application/x-tar"},
	{"ttf", "font/ttf"},
	{"txt", "text/plain" UTF8},
	{"wasm", "application/wasm"},
	{"webm", "video/webm"},
	{"webp", "image/webp"},
	{"woff", "font/woff"},
	{"woff2", "font/woff2"},
	{"xml", "application/xml"},
	{"zip", "application/zip"},
};

struct mime_entry {
	char ext[SERVE_MIME_EXT_MAX]; /* lower case */
	const char *type;             /* into one of the table's strings */
	unsigned order;               /* place in the file: the first of duplicates wins */
};

struct mime_table {
	struct mime_entry *e;
	size_t n;
	char **types; /* one per line that added something: the full Content-Type */
	size_t ntypes;
};

static struct mime_table loaded;

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* strcmp of the lower-case extension @a (NUL-terminated) and @b (@n bytes, any case). */
static int extcmp(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char x = (unsigned char)a[i], y = (unsigned char)lower(b[i]);

		if (x != y)
			return x < y ? -1 : 1;
	}
	return a[n] ? 1 : 0;
}

static const char *builtin_find(const char *ext, size_t n)
{
	size_t lo = 0, hi = sizeof(builtin) / sizeof(builtin[0]);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = extcmp(builtin[mid].ext, ext, n);

		if (!c)
			return builtin[mid].type;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static const char *loaded_find(const char *ext, size_t n)
{
	size_t lo = 0, hi = loaded.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = extcmp(loaded.e[mid].ext, ext, n);

		if (!c)
			return loaded.e[mid].type;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const char *serve_mime_type(const char *name, size_t len)
{
	size_t base = 0, dot = len;
	const char *t;

	if (!name)
		return SERVE_MIME_DEFAULT;
	for (size_t i = 0; i < len; i++) {
		if (name[i] == '/') {
			base = i + 1;
			dot = len;
		} else if (name[i] == '.') {
			dot = i;
		}
	}
	if (dot == len || dot == base || len - dot - 1 == 0 || len - dot - 1 >= SERVE_MIME_EXT_MAX)
		return SERVE_MIME_DEFAULT;
	t = builtin_find(name + dot + 1, len - dot - 1);
	if (!t)
		t = loaded_find(name + dot + 1, len - dot - 1);
	return t ? t : SERVE_MIME_DEFAULT;
}

static void table_free(struct mime_table *t)
{
	for (size_t i = 0; i < t->ntypes; i++)
		free(t->types[i]);
	free(t->types);
	free(t->e);
	memset(t, 0, sizeof(*t));
}

void serve_mime_reset(void)
{
	table_free(&loaded);
}

static bool tchar(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool extchar(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '+' || c == '_' || c == '-';
}

/* A type "token/token", lower-cased copy plus the charset of text types. NULL if bad. */
static char *parse_type(const char *s, size_t n)
{
	size_t slash = n;
	char *t;

	if (!n || n > SERVE_MIME_TYPE_MAX)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '/' && slash == n && i > 0)
			slash = i;
		else if (!tchar((unsigned char)s[i]))
			return NULL;
	}
	if (slash == n || slash == n - 1)
		return NULL;
	t = malloc(n + sizeof(UTF8));
	if (!t)
		return NULL;
	for (size_t i = 0; i < n; i++)
		t[i] = lower(s[i]);
	t[n] = '\0';
	if (!strncmp(t, "text/", 5) || !strcmp(t, "application/json") ||
	    !strcmp(t, "application/javascript") || !strcmp(t, "image/svg+xml"))
		memcpy(t + n, UTF8, sizeof(UTF8));
	return t;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* One line (no '\n', @n <= SERVE_MIME_LINE_MAX): its extensions into @t. 0, or -ENOMEM. */
static int load_line(struct mime_table *t, char *line, size_t n, unsigned *order)
{
	const char *w[SERVE_MIME_LINE_MAX / 2 + 1];
	size_t wl[SERVE_MIME_LINE_MAX / 2 + 1], nw = 0, i = 0, added = 0;
	char *type;

	if (memchr(line, '\0', n))
		return 0;
	for (size_t k = 0; k < n; k++)
		if (line[k] == '#') {
			n = k;
			break;
		}
	while (i < n) {
		size_t s;

		while (i < n && blank(line[i]))
			i++;
		if (i == n)
			break;
		s = i;
		while (i < n && !blank(line[i]))
			i++;
		w[nw] = line + s;
		wl[nw++] = i - s;
	}
	if (nw < 2)
		return 0; /* blank, or a type without extensions */
	for (size_t k = 1; k < nw; k++) {
		if (wl[k] >= SERVE_MIME_EXT_MAX)
			return 0;
		for (size_t j = 0; j < wl[k]; j++)
			if (!extchar((unsigned char)w[k][j]))
				return 0;
	}
	type = parse_type(w[0], wl[0]);
	if (!type)
		return 0; /* a bad type, or no memory: the line is skipped either way */
	for (size_t k = 1; k < nw && t->n < SERVE_MIME_ENTRIES_MAX; k++) {
		struct mime_entry *e;

		if (builtin_find(w[k], wl[k]))
			continue;
		e = &t->e[t->n++];
		for (size_t j = 0; j < wl[k]; j++)
			e->ext[j] = lower(w[k][j]);
		e->ext[wl[k]] = '\0';
		e->type = type;
		e->order = (*order)++;
		added++;
	}
	if (!added) {
		free(type);
		return 0;
	}
	if (t->ntypes % 64 == 0) {
		char **nt = realloc(t->types, (t->ntypes + 64) * sizeof(*nt));

		if (!nt) {
			t->n -= added;
			free(type);
			return -ENOMEM;
		}
		t->types = nt;
	}
	t->types[t->ntypes++] = type;
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct mime_entry *x = a, *y = b;
	int c = strcmp(x->ext, y->ext);

	return c ? c : (x->order < y->order ? -1 : x->order > y->order);
}

int serve_mime_load(const char *path)
{
	struct mime_table t = {0};
	char line[SERVE_MIME_LINE_MAX + 1];
	size_t n = 0, total = 0;
	unsigned order = 0;
	bool skip = false;
	struct stat st;
	FILE *f;
	int c, r = 0;

	if (!path)
		return -EINVAL;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode)) {
		fclose(f);
		return -EINVAL;
	}
	t.e = malloc(SERVE_MIME_ENTRIES_MAX * sizeof(*t.e));
	if (!t.e) {
		fclose(f);
		return -ENOMEM;
	}
	while (total < SERVE_MIME_FILE_MAX && t.n < SERVE_MIME_ENTRIES_MAX && r == 0) {
		c = getc(f);
		total++;
		if (c == EOF || c == '\n') {
			if (!skip)
				r = load_line(&t, line, n, &order);
			n = 0;
			skip = false;
			if (c == EOF)
				break;
			continue;
		}
		if (skip)
			continue;
		if (n == SERVE_MIME_LINE_MAX) {
			skip = true; /* too long: the whole line goes */
			continue;
		}
		line[n++] = (char)c;
	}
	fclose(f);
	if (r < 0) {
		table_free(&t);
		return r;
	}
	/* Sort, then keep the first of each extension. */
	qsort(t.e, t.n, sizeof(*t.e), entry_cmp);
	size_t k = 0;
	for (size_t i = 0; i < t.n; i++)
		if (!k || strcmp(t.e[k - 1].ext, t.e[i].ext))
			t.e[k++] = t.e[i];
	t.n = k;
	table_free(&loaded);
	loaded = t;
	return (int)t.n;
}
