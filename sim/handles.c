/* SPDX-License-Identifier: MIT */
/*
 * Handles: small nonzero integers naming objects of one open file, the
 * lowest free one first, as the kernel's idr hands out GEM handles.
 * Lookup is an array index; allocation scans from the bottom, which is
 * fine for the handful of objects a program holds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include "sim.h"

int handles_add(struct sim_handles *h, void *obj, uint32_t *handle)
{
	uint32_t i = 0;
	while (i < h->cap && h->slot[i])
		i++;
	if (i == h->cap) {
		if (h->cap >= UINT32_MAX / 2)
			return -ENOMEM;
		uint32_t cap = h->cap ? 2 * h->cap : 16;
		void **slot = realloc(h->slot, cap * sizeof(*slot));
		if (!slot)
			return -ENOMEM;
		for (uint32_t k = h->cap; k < cap; k++)
			slot[k] = NULL;
		h->slot = slot;
		h->cap = cap;
	}
	h->slot[i] = obj;
	h->used++;
	*handle = i + 1;
	return 0;
}

void *handles_get(const struct sim_handles *h, uint32_t handle)
{
	if (handle == 0 || handle > h->cap)
		return NULL;
	return h->slot[handle - 1];
}

void *handles_remove(struct sim_handles *h, uint32_t handle)
{
	void *obj = handles_get(h, handle);
	if (obj) {
		h->slot[handle - 1] = NULL;
		h->used--;
	}
	return obj;
}

void *handles_at(const struct sim_handles *h, uint32_t i)
{
	return i < h->cap ? h->slot[i] : NULL;
}

void handles_fini(struct sim_handles *h)
{
	free(h->slot);
	h->slot = NULL;
	h->cap = h->used = 0;
}
