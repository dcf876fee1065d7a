/* SPDX-License-Identifier: MIT */
/*
 * giong/core/api.h - export and attribute macros shared by every giong library.
 *
 * The libraries are built with hidden visibility; only declarations marked
 * GIONG_API are exported. A build-hygiene test checks that every exported
 * symbol starts with "giong_".
 */
#ifndef GIONG_CORE_API_H
#define GIONG_CORE_API_H

#if defined(__GNUC__) || defined(__clang__)
#define GIONG_API __attribute__((visibility("default")))
#define GIONG_WARN_UNUSED __attribute__((warn_unused_result))
#else
#define GIONG_API
#define GIONG_WARN_UNUSED
#endif

#ifdef __cplusplus
#define GIONG_BEGIN_DECLS extern "C" {
#define GIONG_END_DECLS }
#else
#define GIONG_BEGIN_DECLS
#define GIONG_END_DECLS
#endif

#endif /* GIONG_CORE_API_H */
