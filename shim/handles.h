/* SPDX-License-Identifier: MIT */
/*
 * u32 handle -> object maps (handles.c).
 */
#ifndef ARENAGUARD_SHIM_HANDLES_H
#define ARENAGUARD_SHIM_HANDLES_H

#include <stdint.h>

struct ag_handles {
	uint64_t *keys;          /* a u32 handle, or EMPTY / DEAD */
	void **values;
	uint32_t cap, used, dead;
};

void *ag_handles_get(const struct ag_handles *h, uint32_t key);
/* Adds or replaces; returns the value replaced (or NULL), or sets *err. */
void *ag_handles_put(struct ag_handles *h, uint32_t key, void *value,
		     int *err);
void *ag_handles_del(struct ag_handles *h, uint32_t key);
/* Calls fn on every value (teardown). */
void ag_handles_each(struct ag_handles *h, void (*fn)(void *value));
void ag_handles_free(struct ag_handles *h);

#endif
