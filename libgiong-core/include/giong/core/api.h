/* SPDX-License-Identifier: MIT */
/*
 * giong/core/api.h - export and attribute macros shared by every giong library.
 *
 * The libraries are built with hidden visibility; only declarations marked
 * GIONG_API are exported, and each shared library's linker version script
 * (libgiong-<lib>/giong-<lib>.sym) lists them by name. The build.exports test
 * checks that every exported symbol starts with "giong_", and that the
 * script, the library's exports and its GIONG_API declarations agree.
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

/*
 * The link types of giong's intrusive lists, here because public structs
 * (struct giong_waitq, struct giong_bufpool_waiter, ...) embed them. Their
 * fields are private: only giong's own code links and unlinks them. A zeroed
 * list is empty and a zeroed node is unlinked.
 */
struct giong__list_node {
	struct giong__list_node *next, *prev;
};

struct giong__list {
	struct giong__list_node *first, *last;
};

#endif /* GIONG_CORE_API_H */
