/* SPDX-License-Identifier: MIT */
/*
 * Handles: small nonzero integers naming objects of one context, the
 * lowest free one first, as the kernel's idr hands out GEM handles.  The
 * table lives in the context (sim.h), so every process sharing it sees
 * the same numbers: a handle freed by one is the next one another gets.
 * Lookup is an array index; allocation scans from the bottom, which is
 * fine for the handful of objects a program holds.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>

#include "sim.h"

static uint64_t *slots(const struct sim_file *f, const struct sim_handles *h)
{
	return h->slot ? ctx_at(f, h->slot) : NULL;
}

int handles_add(struct sim_file *f, struct sim_handles *h, uint64_t rec,
		uint32_t *handle)
{
	assert(rec != 0);
	uint64_t *slot = slots(f, h);
	uint32_t i = 0;
	while (i < h->cap && slot[i])
		i++;
	if (i == h->cap) {
		if (h->cap >= UINT32_MAX / 2)
			return -ENOMEM;
		uint32_t cap = h->cap ? 2 * h->cap : 16;
		uint64_t old = (uint64_t)h->cap * sizeof(*slot);
		uint64_t grown = ctx_grow(f, h->slot, old, old,
					  (uint64_t)cap * sizeof(*slot));
		if (!grown)
			return -ENOMEM;
		h->slot = grown;
		h->cap = cap;
		slot = slots(f, h);
	}
	slot[i] = rec;
	h->used++;
	*handle = i + 1;
	return 0;
}

uint64_t handles_get(const struct sim_file *f, const struct sim_handles *h,
		     uint32_t handle)
{
	if (handle == 0 || handle > h->cap)
		return 0;
	return slots(f, h)[handle - 1];
}

uint64_t handles_remove(struct sim_file *f, struct sim_handles *h,
			uint32_t handle)
{
	uint64_t rec = handles_get(f, h, handle);
	if (rec) {
		slots(f, h)[handle - 1] = 0;
		h->used--;
	}
	return rec;
}

uint64_t handles_at(const struct sim_file *f, const struct sim_handles *h,
		    uint32_t i)
{
	return i < h->cap ? slots(f, h)[i] : 0;
}
