/* SPDX-License-Identifier: MIT */
/*
 * config.c - struct giong_tls_config: the settings a program fills, and the
 * backend's library contexts built from them once per role.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tls_int.h"

#define CERT_FILE_MAX (1u << 20) /* a PEM chain or key bigger than 1 MiB is a mistake */
#define ALPN_MAX_NAMES 16

int giong_tls_config_new(const struct giong_tls_backend *be, struct giong_tls_config **ret)
{
	struct giong_tls_config *cfg;

	if (!ret)
		return -EINVAL;
	*ret = NULL;
	if (!be || be->abi != GIONG_TLS_BACKEND_ABI || be->size < GIONG_TLS_BACKEND_SIZE_1 ||
	    !be->ctx_new || !be->conn_init || !be->handshake || !be->read || !be->write)
		return -EINVAL;
	cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		return -ENOMEM;
	atomic_init(&cfg->refs, 1);
	cfg->be = be;
	cfg->min_version = GIONG_TLS_1_2;
	cfg->max_version = GIONG_TLS_1_3;
	cfg->tickets = true;
	cfg->ktls = giong__tls_ktls_default() != GIONG__TLS_KTLS_OFF;
	cfg->ktls_force = giong__tls_ktls_default() == GIONG__TLS_KTLS_FORCE;
	cfg->handshake_ms = 10000;
	cfg->ca_files = calloc(1, sizeof(char *));
	cfg->ca_dirs = calloc(1, sizeof(char *));
	if (!cfg->ca_files || !cfg->ca_dirs) {
		free(cfg->ca_files);
		free(cfg->ca_dirs);
		free(cfg);
		return -ENOMEM;
	}
	pthread_mutex_init(&cfg->lock, NULL);
	pthread_mutex_init(&cfg->sess_lock, NULL);
	*ret = cfg;
	return 0;
}

void giong__tls_config_ref(struct giong_tls_config *cfg)
{
	atomic_fetch_add_explicit(&cfg->refs, 1, memory_order_relaxed);
}

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void giong_tls_config_free(struct giong_tls_config *cfg)
{
	if (!cfg || atomic_fetch_sub_explicit(&cfg->refs, 1, memory_order_acq_rel) != 1)
		return;
	for (int role = 0; role < 2; role++)
		if (cfg->ctx[role] && cfg->be->ctx_free)
			cfg->be->ctx_free(cfg->ctx[role]);
	for (size_t i = 0; i < cfg->ncerts; i++) {
		/* Keys are secrets: do not leave them in freed memory. */
		explicit_bzero((void *)cfg->certs[i].key_pem, cfg->certs[i].key_len);
		free((void *)cfg->certs[i].key_pem);
		free((void *)cfg->certs[i].chain_pem);
	}
	free(cfg->certs);
	free_strv(cfg->ca_files, cfg->nca_files);
	free_strv(cfg->ca_dirs, cfg->nca_dirs);
	free(cfg->alpn);
	free(cfg->ciphers12);
	free(cfg->ciphers13);
	for (size_t i = 0; i < GIONG__TLS_SESSIONS; i++) {
		free(cfg->sessions[i].name);
		if (cfg->sessions[i].blob) /* a session's secrets */
			explicit_bzero(cfg->sessions[i].blob, cfg->sessions[i].len);
		free(cfg->sessions[i].blob);
	}
	pthread_mutex_destroy(&cfg->sess_lock);
	pthread_mutex_destroy(&cfg->lock);
	free(cfg);
}

/* Setters refuse a frozen configuration: workers read it without a lock.
 * Each runs whole under the lock, so that a first handshake on another
 * worker never snapshots a half-made change. 0 with the lock held, or an
 * error without it. */
static int lock_settable(struct giong_tls_config *cfg)
{
	if (!cfg)
		return -EINVAL;
	pthread_mutex_lock(&cfg->lock);
	if (cfg->frozen) {
		pthread_mutex_unlock(&cfg->lock);
		return -EBUSY;
	}
	return 0;
}

/* The public setter: @call run under the lock. */
#define LOCKED(cfg, call)                                                                          \
	do {                                                                                       \
		int r_ = lock_settable(cfg);                                                       \
                                                                                                   \
		if (r_)                                                                            \
			return r_;                                                                 \
		r_ = (call);                                                                       \
		pthread_mutex_unlock(&(cfg)->lock);                                                \
		return r_;                                                                         \
	} while (0)

static char *dup_mem(const void *p, size_t n)
{
	char *c = malloc(n + 1);

	if (c) {
		memcpy(c, p, n);
		c[n] = '\0'; /* PEM parsers like a terminator; the length stays exact */
	}
	return c;
}

static int add_cert_mem_locked(struct giong_tls_config *cfg, const void *chain, size_t chain_len,
			       const void *key, size_t key_len)
{
	struct giong_tls_cert *certs, *c;

	if (!chain || !key || !chain_len || !key_len)
		return -EINVAL;
	if (chain_len > CERT_FILE_MAX || key_len > CERT_FILE_MAX)
		return -EFBIG;
	certs = realloc(cfg->certs, (cfg->ncerts + 1) * sizeof(*certs));
	if (!certs)
		return -ENOMEM;
	cfg->certs = certs;
	c = &certs[cfg->ncerts];
	c->chain_pem = dup_mem(chain, chain_len);
	c->key_pem = dup_mem(key, key_len);
	if (!c->chain_pem || !c->key_pem) {
		free((void *)c->chain_pem);
		free((void *)c->key_pem);
		return -ENOMEM;
	}
	c->chain_len = chain_len;
	c->key_len = key_len;
	cfg->ncerts++;
	return 0;
}

/* Read all of @path (at most CERT_FILE_MAX bytes) into a heap buffer. */
static int read_file(const char *path, char **buf, size_t *len)
{
	struct stat st;
	ssize_t n;
	size_t got = 0;
	int fd, r = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = -EINVAL;
		goto out;
	}
	if (st.st_size > (off_t)CERT_FILE_MAX) {
		r = -EFBIG;
		goto out;
	}
	*buf = malloc((size_t)st.st_size + 1);
	if (!*buf) {
		r = -ENOMEM;
		goto out;
	}
	while (got < (size_t)st.st_size) {
		n = read(fd, *buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	*len = got;
	if (got == 0) {
		free(*buf);
		*buf = NULL;
		r = -EINVAL; /* an empty file holds no certificate */
	}
out:
	close(fd);
	return r;
}

int giong_tls_config_add_cert_file(struct giong_tls_config *cfg, const char *chain_path,
				   const char *key_path)
{
	char *chain = NULL, *key = NULL;
	size_t chain_len = 0, key_len = 0;
	int r;

	if (!chain_path || !key_path)
		return -EINVAL;
	if ((r = read_file(chain_path, &chain, &chain_len)) == 0 &&
	    (r = read_file(key_path, &key, &key_len)) == 0)
		r = giong_tls_config_add_cert_mem(cfg, chain, chain_len, key, key_len);
	if (key) {
		explicit_bzero(key, key_len);
		free(key);
	}
	free(chain);
	return r;
}

static int add_path(char ***v, size_t *n, const char *path, bool dir)
{
	struct stat st;
	char **nv;

	if (!path || !*path)
		return -EINVAL;
	if (stat(path, &st) < 0)
		return -errno;
	if (dir ? !S_ISDIR(st.st_mode) : S_ISDIR(st.st_mode))
		return dir ? -ENOTDIR : -EISDIR;
	nv = realloc(*v, (*n + 2) * sizeof(char *));
	if (!nv)
		return -ENOMEM;
	*v = nv;
	if (!(nv[*n] = strdup(path)))
		return -ENOMEM;
	nv[++*n] = NULL;
	return 0;
}

static int ca_file_locked(struct giong_tls_config *cfg, const char *path)
{
	return add_path(&cfg->ca_files, &cfg->nca_files, path, false);
}

static int ca_dir_locked(struct giong_tls_config *cfg, const char *path)
{
	return add_path(&cfg->ca_dirs, &cfg->nca_dirs, path, true);
}

static int ca_system_locked(struct giong_tls_config *cfg)
{
	cfg->ca_system = true;
	return 0;
}

static int verify_locked(struct giong_tls_config *cfg, enum giong_tls_verify mode)
{
	if (mode != GIONG_TLS_VERIFY_NONE && mode != GIONG_TLS_VERIFY_PEER &&
	    mode != GIONG_TLS_VERIFY_REQUIRE)
		return -EINVAL;
	cfg->verify = mode;
	cfg->verify_set = true;
	return 0;
}

static int alpn_locked(struct giong_tls_config *cfg, const char *const *protocols, size_t n)
{
	unsigned char *wire, *p;
	size_t len = 0;

	if ((n && !protocols) || n > ALPN_MAX_NAMES)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		size_t l = protocols[i] ? strlen(protocols[i]) : 0;

		if (l == 0 || l > 255)
			return -EINVAL;
		len += 1 + l;
	}
	wire = NULL;
	if (n) {
		if (!(wire = malloc(len)))
			return -ENOMEM;
		p = wire;
		for (size_t i = 0; i < n; i++) {
			size_t l = strlen(protocols[i]);

			*p++ = (unsigned char)l;
			memcpy(p, protocols[i], l);
			p += l;
		}
	}
	free(cfg->alpn);
	cfg->alpn = wire;
	cfg->alpn_len = n ? len : 0;
	return 0;
}

static int versions_locked(struct giong_tls_config *cfg, enum giong_tls_version min,
			   enum giong_tls_version max)
{
	if ((min != GIONG_TLS_1_2 && min != GIONG_TLS_1_3) ||
	    (max != GIONG_TLS_1_2 && max != GIONG_TLS_1_3) || min > max)
		return -EINVAL;
	cfg->min_version = min;
	cfg->max_version = max;
	return 0;
}

static int set_str(char **dst, const char *s)
{
	char *c = NULL;

	if (s && !*s)
		return -EINVAL;
	if (s && !(c = strdup(s)))
		return -ENOMEM;
	free(*dst);
	*dst = c;
	return 0;
}

static int ciphers_locked(struct giong_tls_config *cfg, const char *tls12, const char *tls13)
{
	char *old12;
	int r;

	if ((tls12 && !*tls12) || (tls13 && !*tls13))
		return -EINVAL;
	old12 = cfg->ciphers12 ? strdup(cfg->ciphers12) : NULL;
	if ((r = set_str(&cfg->ciphers12, tls12)))
		goto out;
	if ((r = set_str(&cfg->ciphers13, tls13))) {
		free(cfg->ciphers12); /* all or nothing */
		cfg->ciphers12 = old12;
		old12 = NULL;
	}
out:
	free(old12);
	return r;
}

static int tickets_locked(struct giong_tls_config *cfg, bool on)
{
	cfg->tickets = on;
	return 0;
}

static int ktls_locked(struct giong_tls_config *cfg, bool on)
{
	cfg->ktls = on;
	return 0;
}

static int handshake_timeout_locked(struct giong_tls_config *cfg, uint32_t ms)
{
	cfg->handshake_ms = ms;
	return 0;
}

/* --- the public setters ------------------------------------------------------------------------ */

int giong_tls_config_add_cert_mem(struct giong_tls_config *cfg, const void *chain, size_t chain_len,
				  const void *key, size_t key_len)
{
	LOCKED(cfg, add_cert_mem_locked(cfg, chain, chain_len, key, key_len));
}

int giong_tls_config_ca_file(struct giong_tls_config *cfg, const char *path)
{
	LOCKED(cfg, ca_file_locked(cfg, path));
}

int giong_tls_config_ca_dir(struct giong_tls_config *cfg, const char *path)
{
	LOCKED(cfg, ca_dir_locked(cfg, path));
}

int giong_tls_config_ca_system(struct giong_tls_config *cfg)
{
	LOCKED(cfg, ca_system_locked(cfg));
}

int giong_tls_config_verify(struct giong_tls_config *cfg, enum giong_tls_verify mode)
{
	LOCKED(cfg, verify_locked(cfg, mode));
}

int giong_tls_config_alpn(struct giong_tls_config *cfg, const char *const *protocols, size_t n)
{
	LOCKED(cfg, alpn_locked(cfg, protocols, n));
}

int giong_tls_config_versions(struct giong_tls_config *cfg, enum giong_tls_version min,
			      enum giong_tls_version max)
{
	LOCKED(cfg, versions_locked(cfg, min, max));
}

int giong_tls_config_ciphers(struct giong_tls_config *cfg, const char *tls12, const char *tls13)
{
	LOCKED(cfg, ciphers_locked(cfg, tls12, tls13));
}

int giong_tls_config_tickets(struct giong_tls_config *cfg, bool on)
{
	LOCKED(cfg, tickets_locked(cfg, on));
}

int giong_tls_config_ktls(struct giong_tls_config *cfg, bool on)
{
	LOCKED(cfg, ktls_locked(cfg, on));
}

int giong_tls_config_handshake_timeout(struct giong_tls_config *cfg, uint32_t ms)
{
	LOCKED(cfg, handshake_timeout_locked(cfg, ms));
}

const struct giong_tls_backend *giong_tls_config_backend(const struct giong_tls_config *cfg)
{
	return cfg ? cfg->be : NULL;
}

static void copy_text(char *dst, size_t cap, const char *src)
{
	if (dst && cap) {
		strncpy(dst, src, cap - 1);
		dst[cap - 1] = '\0';
	}
}

int giong__tls_config_ctx(struct giong_tls_config *cfg, bool server, void **ctx, char *err,
			  size_t errlen)
{
	int role = server ? 1 : 0, r;

	if (atomic_load_explicit(&cfg->ready[role], memory_order_acquire)) {
		*ctx = cfg->ctx[role];
		return 0;
	}
	pthread_mutex_lock(&cfg->lock);
	cfg->frozen = true;
	if (!cfg->built[role]) {
		struct giong_tls_settings *set = &cfg->settings[role];

		/* Kept in cfg: a backend may point into it until ctx_free. */
		*set = (struct giong_tls_settings){
			.server = server,
			.certs = cfg->certs,
			.ncerts = cfg->ncerts,
			.ca_files = (const char *const *)cfg->ca_files,
			.ca_dirs = (const char *const *)cfg->ca_dirs,
			.ca_system = cfg->ca_system,
			.verify = cfg->verify_set ? cfg->verify
				  : server        ? GIONG_TLS_VERIFY_NONE
						  : GIONG_TLS_VERIFY_PEER,
			.alpn = cfg->alpn,
			.alpn_len = cfg->alpn_len,
			.min_version = cfg->min_version,
			.max_version = cfg->max_version,
			.ciphers12 = cfg->ciphers12,
			.ciphers13 = cfg->ciphers13,
			.tickets = cfg->tickets,
			/* Asked of the kernel here, once: a backend prepares the
			 * export only where it can be used (OpenSSL's callbacks). */
			.ktls = cfg->ktls && (cfg->ktls_force || giong__tls_kernel_has_tls()),
		};

		cfg->build_text[role][0] = '\0';
		if (server && cfg->ncerts == 0) {
			r = GIONG_ETLS_CONFIG;
			copy_text(cfg->build_text[role], sizeof(cfg->build_text[role]),
				  "a TLS server needs a certificate and key "
				  "(giong_tls_config_add_cert_file())");
		} else {
			r = cfg->be->ctx_new(set, &cfg->ctx[role], cfg->build_text[role],
					     sizeof(cfg->build_text[role]));
		}
		/* -ENOMEM may pass: try again next time. A bad setting stays bad. */
		if (r != -ENOMEM) {
			cfg->built[role] = true;
			cfg->build_err[role] = r;
		}
		if (r == 0)
			atomic_store_explicit(&cfg->ready[role], true, memory_order_release);
	} else {
		r = cfg->build_err[role];
	}
	*ctx = r == 0 ? cfg->ctx[role] : NULL;
	if (r)
		copy_text(err, errlen, cfg->build_text[role]);
	pthread_mutex_unlock(&cfg->lock);
	return r;
}

int giong_tls_config_check(struct giong_tls_config *cfg, char *err, size_t errlen)
{
	void *ctx;
	int r;

	if (!cfg)
		return -EINVAL;
	if (err && errlen)
		err[0] = '\0';
	/* A configuration with a certificate may serve; one with CA roots or
	 * none may connect. Check the roles it can play. */
	if (cfg->ncerts && (r = giong__tls_config_ctx(cfg, true, &ctx, err, errlen)))
		return r;
	return giong__tls_config_ctx(cfg, false, &ctx, err, errlen);
}

/* --- the clients' sessions ------------------------------------------------------------------- */

static struct giong__tls_session *session_find(struct giong_tls_config *cfg, const char *name)
{
	for (size_t i = 0; i < GIONG__TLS_SESSIONS; i++)
		if (cfg->sessions[i].name && !strcmp(cfg->sessions[i].name, name))
			return &cfg->sessions[i];
	return NULL;
}

static void session_clear(struct giong__tls_session *e)
{
	free(e->name);
	if (e->blob)
		explicit_bzero(e->blob, e->len);
	free(e->blob);
	memset(e, 0, sizeof(*e));
}

int giong__tls_session_take(struct giong_tls_config *cfg, const char *name, unsigned char **blob,
			    size_t *len)
{
	struct giong__tls_session *e;
	int r = -ENOENT;

	*blob = NULL;
	pthread_mutex_lock(&cfg->sess_lock);
	if ((e = session_find(cfg, name)) && (*blob = malloc(e->len))) {
		memcpy(*blob, e->blob, e->len);
		*len = e->len;
		e->used = ++cfg->sess_clock;
		r = 0;
	}
	pthread_mutex_unlock(&cfg->sess_lock);
	return r;
}

int giong__tls_session_put(struct giong_tls_config *cfg, const char *name, const void *blob,
			   size_t len)
{
	struct giong__tls_session *e, *oldest = &cfg->sessions[0];
	unsigned char *copy = malloc(len);
	char *key = NULL;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, blob, len);
	pthread_mutex_lock(&cfg->sess_lock);
	if (!(e = session_find(cfg, name))) {
		/* A free slot, or the one used longest ago. */
		for (size_t i = 0; i < GIONG__TLS_SESSIONS && !e; i++) {
			if (!cfg->sessions[i].name)
				e = &cfg->sessions[i];
			else if (cfg->sessions[i].used < oldest->used)
				oldest = &cfg->sessions[i];
		}
		if (!e)
			e = oldest;
		if (!(key = strdup(name))) {
			pthread_mutex_unlock(&cfg->sess_lock);
			free(copy);
			return -ENOMEM;
		}
		session_clear(e);
		e->name = key;
	} else {
		explicit_bzero(e->blob, e->len);
		free(e->blob);
	}
	e->blob = copy;
	e->len = len;
	e->used = ++cfg->sess_clock;
	pthread_mutex_unlock(&cfg->sess_lock);
	return 0;
}

void giong__tls_session_drop(struct giong_tls_config *cfg, const char *name)
{
	struct giong__tls_session *e;

	pthread_mutex_lock(&cfg->sess_lock);
	if ((e = session_find(cfg, name)))
		session_clear(e);
	pthread_mutex_unlock(&cfg->sess_lock);
}
