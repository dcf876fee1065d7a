/* SPDX-License-Identifier: MIT */
/*
 * giong_private.h - the few things every giong library writes the same way:
 * branch hints, container_of, and one intrusive doubly linked list. Shared
 * by the libraries' sources (giong_add_library() puts private/ on their
 * include path); never installed, never included by a public header.
 *
 * The list (the link types are in <giong/core/api.h>, because public structs
 * such as struct giong_waitq embed them) is NULL-terminated with a first
 * and a last pointer, not circular as the kernel's list_head is: a zeroed
 * struct giong__list is an empty list, so a caller's struct that embeds one
 * is valid before any init, and a zeroed node is an unlinked one. Insertion
 * and removal are O(1); removal needs the list, as the callers always have
 * it. A node is on at most one list at a time through one link; a struct on
 * two lists has two links.
 */
#ifndef GIONG_PRIVATE_H
#define GIONG_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>

#include <giong/core/api.h>

#define GIONG__LIKELY(x) __builtin_expect(!!(x), 1)
#define GIONG__UNLIKELY(x) __builtin_expect(!!(x), 0)

/* The struct of type @type whose member @member is at @ptr. (Kept from
 * clang-format, which reads "(char *)(ptr) - x" as a cast of "-x".) */
/* clang-format off */
#define giong__container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))
/* clang-format on */

static inline bool giong__list_empty(const struct giong__list *l)
{
	return l->first == NULL;
}

static inline void giong__list_push_back(struct giong__list *l, struct giong__list_node *n)
{
	n->next = NULL;
	n->prev = l->last;
	if (l->last)
		l->last->next = n;
	else
		l->first = n;
	l->last = n;
}

static inline void giong__list_push_front(struct giong__list *l, struct giong__list_node *n)
{
	n->prev = NULL;
	n->next = l->first;
	if (l->first)
		l->first->prev = n;
	else
		l->last = n;
	l->first = n;
}

/* Unlink @n from @l, where it must be linked; @n is left unlinked (zeroed). */
static inline void giong__list_remove(struct giong__list *l, struct giong__list_node *n)
{
	if (n->prev)
		n->prev->next = n->next;
	else
		l->first = n->next;
	if (n->next)
		n->next->prev = n->prev;
	else
		l->last = n->prev;
	n->next = n->prev = NULL;
}

/* Unlink and return the first node, or NULL. */
static inline struct giong__list_node *giong__list_pop_front(struct giong__list *l)
{
	struct giong__list_node *n = l->first;

	if (n)
		giong__list_remove(l, n);
	return n;
}

/* The entry of type @type linked through @member at node @n; NULL for a
 * NULL @n. @n is evaluated once (it may be a giong__list_pop_front()). */
#define giong__list_entry(n, type, member)                                                         \
	__extension__({                                                                            \
		struct giong__list_node *giong__n_ = (n);                                          \
		giong__n_ ? giong__container_of(giong__n_, type, member) : (type *)NULL;           \
	})

/* Walk @l; @n may be unlinked (even freed) by the body, @tmp holds the next. */
#define giong__list_for_each_safe(n, tmp, l)                                                       \
	for ((n) = (l)->first; (n) && ((tmp) = (n)->next, 1); (n) = (tmp))

#endif /* GIONG_PRIVATE_H */
