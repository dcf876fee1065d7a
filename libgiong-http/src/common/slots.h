/* SPDX-License-Identifier: MIT */
/*
 * slots.h - one pointer per worker of the runtime, for the shares of an
 * object (a server, a client) that all workers read: the table is made by
 * the first worker that asks (compare-and-swap), with giong_worker_count()
 * slots, and each worker only ever touches its own slot. Internal to
 * libgiong-http.
 */
#ifndef GIONG_HTTP_SLOTS_H
#define GIONG_HTTP_SLOTS_H

#include <stdatomic.h>

struct giong__http_slots {
	unsigned n;
	void *w[];
};

/* The calling worker's slot in the table at *@table (made now if there is
 * none); NULL with *@err GIONG_ENOTWORKER, -ENOMEM, or -EINVAL (a table made
 * by a runtime with fewer workers: one runtime at a time). */
void **giong__http_worker_slot(_Atomic(struct giong__http_slots *) *table, int *err);

/* Worker @i's pointer in @table (NULL: none, or no table). */
static inline void *giong__http_slot_at(struct giong__http_slots *table, unsigned i)
{
	return table && i < table->n ? table->w[i] : NULL;
}

#endif /* GIONG_HTTP_SLOTS_H */
