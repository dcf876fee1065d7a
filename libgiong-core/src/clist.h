/* SPDX-License-Identifier: MIT */
/*
 * clist.h - circular doubly linked lists with a head node, on struct
 * giong__list_node: the timer wheel's slots and the worker's queue of
 * callbacks for the next turn (giong_call_soon()). Unlike giong__list
 * (giong_private.h), a node unlinks without its list's head, which is what
 * lets a timer or a queued callback be taken back from wherever it is.
 * Internal to libgiong-core.
 */
#ifndef GIONG_CORE_CLIST_H
#define GIONG_CORE_CLIST_H

#include <stdbool.h>

#include <giong/core/callback.h> /* struct giong__list_node */

static inline void giong__clist_init(struct giong__list_node *h)
{
	h->next = h;
	h->prev = h;
}

static inline bool giong__clist_empty(const struct giong__list_node *h)
{
	return h->next == h;
}

static inline void giong__clist_add_tail(struct giong__list_node *h, struct giong__list_node *n)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

/* Unlink @n from its list (no head needed); its links are left as they were. */
static inline void giong__clist_del(struct giong__list_node *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
}

/* Move all of @from to the (uninitialised) head @to, leaving @from empty. */
static inline void giong__clist_move_all(struct giong__list_node *from, struct giong__list_node *to)
{
	if (giong__clist_empty(from)) {
		giong__clist_init(to);
		return;
	}
	to->next = from->next;
	to->prev = from->prev;
	to->next->prev = to;
	to->prev->next = to;
	giong__clist_init(from);
}

#endif /* GIONG_CORE_CLIST_H */
