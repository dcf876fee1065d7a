/* SPDX-License-Identifier: MIT */
/* slots.c - one pointer per worker (slots.h). */
#include <errno.h>
#include <stdlib.h>

#include <giong/core.h>

#include "common/slots.h"

void **giong__http_worker_slot(_Atomic(struct giong__http_slots *) *table, int *err)
{
	struct giong__http_slots *ws = atomic_load(table);
	int idx = giong_worker_index(), n = giong_worker_count();

	if (idx < 0 || n <= 0) {
		*err = GIONG_ENOTWORKER;
		return NULL;
	}
	if (!ws) {
		struct giong__http_slots *mine, *none = NULL;

		mine = calloc(1, sizeof(*mine) + sizeof(mine->w[0]) * (size_t)n);
		if (!mine) {
			*err = -ENOMEM;
			return NULL;
		}
		mine->n = (unsigned)n;
		if (atomic_compare_exchange_strong(table, &none, mine)) {
			ws = mine;
		} else {
			free(mine); /* another worker's came first */
			ws = none;
		}
	}
	if ((unsigned)idx >= ws->n) {
		*err = -EINVAL;
		return NULL;
	}
	return &ws->w[idx];
}
