/* SPDX-License-Identifier: MIT */
/*
 * giong/core.h - libgiong-core: workers, fibers, the ring driver, timers,
 * loop callbacks, the receive buffer pool, channels, helper threads for
 * blocking calls and shutdown. Include this one header.
 */
#ifndef GIONG_CORE_H
#define GIONG_CORE_H

#include <giong/core/api.h>
#include <giong/core/buf.h>
#include <giong/core/callback.h>
#include <giong/core/chan.h>
#include <giong/core/direct.h>
#include <giong/core/error.h>
#include <giong/core/offload.h>
#include <giong/core/op.h>
#include <giong/core/runtime.h>
#include <giong/core/task.h>
#include <giong/core/time.h>
#include <giong/core/version.h>
#include <giong/core/waitq.h>

GIONG_BEGIN_DECLS

/* giong_version() - the library's version, "MAJOR.MINOR.PATCH". Static. */
GIONG_API const char *giong_version(void);

GIONG_END_DECLS

#endif /* GIONG_CORE_H */
