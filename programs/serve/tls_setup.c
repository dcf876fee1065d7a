/* SPDX-License-Identifier: MIT */
/*
 * tls_setup.c - giong-serve's HTTPS configuration (tls_setup.h). --self-signed runs the
 * openssl command (Debian's package openssl) in a private temporary directory: the key and
 * certificate are read into memory and the files removed at once, so the key lives only in
 * this process. The backends themselves could make one, but each in its own API: the
 * command keeps this program on libgiong-tls's public interface alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <giong/core.h>

#include "tls_setup.h"

#ifdef GIONG_HAVE_TLS
#include <giong/tls.h>
#endif
#include "../tls_backends.h"

#define PROG "giong-serve"

extern char **environ;

const char *serve_tls_backends(void)
{
	return tool_tls_backend_names();
}

const char *serve_tls_default_backend(void)
{
#if defined(GIONG_HAVE_TLS_WOLFSSL)
	return "wolfssl";
#elif defined(GIONG_HAVE_TLS_OPENSSL)
	return "openssl";
#else
	return "none";
#endif
}

#ifdef GIONG_HAVE_TLS

giong_http_wrap_fn serve_tls_wrap(void)
{
	return giong_tls_wrap_accept;
}

/* Run @argv (a program looked up in PATH) with its standard output into @out_path (NULL:
 * /dev/null) and its errors into @err_path; 0 when it exited 0, -ENOENT when it is not
 * installed, -EIO when it failed. */
static int run(char *const argv[], const char *out_path, const char *err_path)
{
	posix_spawn_file_actions_t fa;
	int r, status;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, out_path ? out_path : "/dev/null",
					 O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	r = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (r)
		return -r;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0
		       ? 0
		       : (WIFEXITED(status) && WEXITSTATUS(status) == 127 ? -ENOENT : -EIO);
}

/* The whole file @path (at most 1 MiB) in a NUL-terminated heap buffer; NULL on error. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *buf = f ? malloc(1u << 20) : NULL;
	size_t n = buf ? fread(buf, 1, (1u << 20) - 1, f) : 0;

	if (f)
		fclose(f);
	if (!buf || !n) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* Make a key and a certificate for localhost, 127.0.0.1 and ::1 (ECDSA P-256, 30 days)
 * into @c; print the fingerprint. 0, or -errno after saying why. */
static int self_signed(struct giong_tls_config *c)
{
	char dir[] = "/tmp/giong-serve-XXXXXX", key[64], crt[64], fp[64], err[64];
	char *req[] = {"openssl",
		       "req",
		       "-x509",
		       "-newkey",
		       "ec",
		       "-pkeyopt",
		       "ec_paramgen_curve:prime256v1",
		       "-nodes",
		       "-keyout",
		       key,
		       "-out",
		       crt,
		       "-days",
		       "30",
		       "-subj",
		       "/CN=localhost",
		       "-addext",
		       "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1",
		       NULL};
	char *x509[] = {"openssl", "x509", "-in", crt, "-noout", "-fingerprint", "-sha256", NULL};
	char *k = NULL, *p = NULL, *f = NULL, *eq;
	size_t klen = 0, plen = 0, flen = 0;
	int r;

	if (!mkdtemp(dir)) { /* mode 0700: the key is never readable by another user */
		fprintf(stderr, PROG ": --self-signed: %s: %s\n", dir, strerror(errno));
		return -errno;
	}
	snprintf(key, sizeof(key), "%s/key.pem", dir);
	snprintf(crt, sizeof(crt), "%s/cert.pem", dir);
	snprintf(fp, sizeof(fp), "%s/fingerprint", dir);
	snprintf(err, sizeof(err), "%s/errors", dir);
	r = run(req, NULL, err);
	if (!r)
		r = run(x509, fp, err);
	if (r) {
		char *why = slurp(err, &flen);

		fprintf(stderr, PROG ": --self-signed: %s%s%s\n",
			r == -ENOENT ? "the openssl command is not installed (Debian: apt-get "
				       "install openssl), or give --tls-cert and --tls-key"
				     : "openssl failed",
			why ? ":\n" : "", why ? why : "");
		free(why);
	} else if (!(k = slurp(key, &klen)) || !(p = slurp(crt, &plen)) ||
		   !(f = slurp(fp, &flen))) {
		fprintf(stderr, PROG ": --self-signed: openssl wrote no certificate\n");
		r = -EIO;
	}
	unlink(key);
	unlink(crt);
	unlink(fp);
	unlink(err);
	rmdir(dir);
	if (!r && (r = giong_tls_config_add_cert_mem(c, p, plen, k, klen)))
		fprintf(stderr, PROG ": --self-signed: %s\n", giong_strerror(r));
	if (!r) {
		f[strcspn(f, "\r\n")] = '\0';
		eq = strchr(f, '=');
		fprintf(stderr,
			PROG ": self-signed certificate for localhost, SHA-256 fingerprint %s\n",
			eq ? eq + 1 : f);
	}
	if (k)
		explicit_bzero(k, klen); /* the key stays in the configuration's copy only */
	free(k);
	free(p);
	free(f);
	return r;
}

void *serve_tls_config(const struct serve_tls_args *a)
{
	/* h2 first: a client that offers both gets HTTP/2 (RFC 9113 3.2). */
	static const char *const alpn[] = {"h2", "http/1.1"};
	const struct giong_tls_backend *be;
	struct giong_tls_config *c;
	char why[200] = "";
	int r;

	be = tool_tls_backend(a->backend);
	if (!be) {
		fprintf(stderr, PROG ": --tls-backend %s: not built in (this build has %s)\n",
			a->backend, serve_tls_backends());
		return NULL;
	}
	if ((r = giong_tls_config_new(be, &c))) {
		fprintf(stderr, PROG ": TLS: %s\n", giong_strerror(r));
		return NULL;
	}
	if (a->self_signed) {
		r = self_signed(c);
	} else if ((r = giong_tls_config_add_cert_file(c, a->cert, a->key))) {
		fprintf(stderr, PROG ": --tls-cert %s --tls-key %s: %s\n", a->cert, a->key,
			giong_strerror(r));
	}
	if (!r && ((r = giong_tls_config_alpn(c, a->h2 ? alpn : alpn + 1, a->h2 ? 2 : 1)) ||
		   (a->ciphers13 && (r = giong_tls_config_ciphers(c, NULL, a->ciphers13))) ||
		   (r = giong_tls_config_check(c, why, sizeof(why))))) {
		/* The files are read by now; what is wrong with them shows here. */
		if (a->cert)
			fprintf(stderr, PROG ": --tls-cert %s --tls-key %s (%s): %s%s%s\n", a->cert,
				a->key, a->backend, giong_strerror(r), why[0] ? ": " : "", why);
		else
			fprintf(stderr, PROG ": TLS (%s): %s%s%s\n", a->backend, giong_strerror(r),
				why[0] ? ": " : "", why);
	}
	if (r) {
		giong_tls_config_free(c);
		return NULL;
	}
	return c;
}

void serve_tls_free(void *cfg)
{
	giong_tls_config_free(cfg);
}

#else /* !GIONG_HAVE_TLS */

giong_http_wrap_fn serve_tls_wrap(void)
{
	return NULL;
}

void *serve_tls_config(const struct serve_tls_args *a)
{
	(void)a;
	fprintf(stderr, PROG ": built without libgiong-tls: no HTTPS\n");
	return NULL;
}

void serve_tls_free(void *cfg)
{
	(void)cfg;
}

#endif
