/* SPDX-License-Identifier: MIT */
/* error.c - giong_strerror() and giong_err_name(): static strings only. */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include <giong/core.h>

/* errno names for the codes giong returns most; others fall back to
 * strerrordesc_np() for the text and "unknown" for the name. */
#define GIONG__ERRNO_NAMES(XX)                                                                     \
	XX(EPERM)                                                                                  \
	XX(ENOENT)                                                                                 \
	XX(EINTR)                                                                                  \
	XX(EIO)                                                                                    \
	XX(EBADF)                                                                                  \
	XX(EAGAIN)                                                                                 \
	XX(ENOMEM)                                                                                 \
	XX(EACCES)                                                                                 \
	XX(EFAULT)                                                                                 \
	XX(EBUSY)                                                                                  \
	XX(EEXIST)                                                                                 \
	XX(ENOTDIR)                                                                                \
	XX(EISDIR)                                                                                 \
	XX(EINVAL)                                                                                 \
	XX(EMFILE)                                                                                 \
	XX(ENFILE)                                                                                 \
	XX(ENOSPC)                                                                                 \
	XX(ESPIPE)                                                                                 \
	XX(EPIPE)                                                                                  \
	XX(ERANGE)                                                                                 \
	XX(ENOSYS)                                                                                 \
	XX(ENOTSUP)                                                                                \
	XX(ENAMETOOLONG)                                                                           \
	XX(ENOTSOCK)                                                                               \
	XX(EDESTADDRREQ)                                                                           \
	XX(EMSGSIZE)                                                                               \
	XX(EPROTOTYPE)                                                                             \
	XX(EPROTONOSUPPORT)                                                                        \
	XX(EAFNOSUPPORT)                                                                           \
	XX(EADDRINUSE)                                                                             \
	XX(EADDRNOTAVAIL)                                                                          \
	XX(ENETDOWN)                                                                               \
	XX(ENETUNREACH)                                                                            \
	XX(ECONNABORTED)                                                                           \
	XX(ECONNRESET)                                                                             \
	XX(ENOBUFS)                                                                                \
	XX(EISCONN)                                                                                \
	XX(ENOTCONN)                                                                               \
	XX(ETIMEDOUT)                                                                              \
	XX(ECONNREFUSED)                                                                           \
	XX(EHOSTUNREACH)                                                                           \
	XX(EALREADY)                                                                               \
	XX(EINPROGRESS)                                                                            \
	XX(ECANCELED)                                                                              \
	XX(ETIME)                                                                                  \
	XX(EOVERFLOW)                                                                              \
	XX(ENXIO)                                                                                  \
	XX(E2BIG)                                                                                  \
	XX(ENOTEMPTY)                                                                              \
	XX(ELOOP)                                                                                  \
	XX(EROFS)                                                                                  \
	XX(EXDEV)                                                                                  \
	XX(EFBIG)

const char *giong_strerror(int err)
{
	if (err == INT_MIN)
		return "unknown error"; /* no errno, and -INT_MIN would overflow */
	if (err > 0)
		err = -err;
	switch (err) {
	case 0:
		return "success";
#define GIONG__ERR_MSG(name, val, msg)                                                             \
	case (val):                                                                                \
		return msg;
		GIONG_ERROR_MAP(GIONG__ERR_MSG)
#undef GIONG__ERR_MSG
	default:
		break;
	}
	/* strerrordesc_np() returns a static string (unlike strerror(), which may
	 * write a shared buffer for unknown codes) or NULL. */
	const char *s = strerrordesc_np(-err);
	return s ? s : "unknown error";
}

const char *giong_err_name(int err)
{
	if (err > 0)
		err = -err;
	switch (err) {
	case 0:
		return "OK";
#define GIONG__ERR_NAME(name, val, msg)                                                            \
	case (val):                                                                                \
		return "GIONG_" #name;
		GIONG_ERROR_MAP(GIONG__ERR_NAME)
#undef GIONG__ERR_NAME
#define GIONG__ERRNO_NAME(name)                                                                    \
	case -(name):                                                                              \
		return #name;
		GIONG__ERRNO_NAMES(GIONG__ERRNO_NAME)
#undef GIONG__ERRNO_NAME
	default:
		return "unknown";
	}
}

const char *giong_version(void)
{
	return GIONG_VERSION_STRING;
}
