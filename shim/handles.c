/* SPDX-License-Identifier: MIT */
/*
 * u32 handle -> object, per file: an open-addressing table with linear
 * probing.  Driver handles are small integers handed out lowest-free
 * first, but the guard does not rely on that (any u32, 0 included, is a
 * key), so a hash table rather than an array indexed by handle.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "handles.h"

#define EMPTY UINT64_MAX
#define DEAD (UINT64_MAX - 1)

static uint32_t slot_of(uint64_t key, uint32_t cap)
{
	/* Fibonacci hashing: consecutive handles spread out. */
	return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

static uint32_t find(const struct ag_handles *h, uint32_t key)
{
	if (!h->cap)
		return UINT32_MAX;
	for (uint32_t i = slot_of(key, h->cap), n = 0; n < h->cap;
	     i = (i + 1) & (h->cap - 1), n++) {
		if (h->keys[i] == EMPTY)
			return UINT32_MAX;
		if (h->keys[i] == key)
			return i;
	}
	return UINT32_MAX;
}

void *ag_handles_get(const struct ag_handles *h, uint32_t key)
{
	uint32_t i = find(h, key);
	return i == UINT32_MAX ? NULL : h->values[i];
}

static int rehash(struct ag_handles *h, uint32_t cap)
{
	uint64_t *keys = malloc(cap * sizeof(*keys));
	void **values = malloc(cap * sizeof(*values));
	if (!keys || !values) {
		free(keys);
		free(values);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < cap; i++)
		keys[i] = EMPTY;
	for (uint32_t i = 0; i < h->cap; i++) {
		if (h->keys[i] >= DEAD)
			continue;
		uint32_t j = slot_of(h->keys[i], cap);
		while (keys[j] != EMPTY)
			j = (j + 1) & (cap - 1);
		keys[j] = h->keys[i];
		values[j] = h->values[i];
	}
	free(h->keys);
	free(h->values);
	h->keys = keys;
	h->values = values;
	h->cap = cap;
	h->dead = 0;
	return 0;
}

void *ag_handles_put(struct ag_handles *h, uint32_t key, void *value,
		     int *err)
{
	*err = 0;
	uint32_t i = find(h, key);
	if (i != UINT32_MAX) {
		void *old = h->values[i];
		h->values[i] = value;
		return old;
	}
	/* Keep the load (live and dead) under 3/4 so probes stay short. */
	if ((uint64_t)(h->used + h->dead + 1) * 4 > (uint64_t)h->cap * 3) {
		uint32_t cap = h->cap ? h->cap : 16;
		while ((uint64_t)(h->used + 1) * 2 > cap)
			cap *= 2;
		if (cap > (1u << 30) || rehash(h, cap) != 0) {
			*err = -ENOMEM;
			return NULL;
		}
	}
	i = slot_of(key, h->cap);
	while (h->keys[i] < DEAD)
		i = (i + 1) & (h->cap - 1);
	if (h->keys[i] == DEAD)
		h->dead--;
	h->keys[i] = key;
	h->values[i] = value;
	h->used++;
	return NULL;
}

void *ag_handles_del(struct ag_handles *h, uint32_t key)
{
	uint32_t i = find(h, key);
	if (i == UINT32_MAX)
		return NULL;
	void *old = h->values[i];
	h->keys[i] = DEAD;
	h->values[i] = NULL;
	h->used--;
	h->dead++;
	return old;
}

void ag_handles_each(struct ag_handles *h, void (*fn)(void *value))
{
	for (uint32_t i = 0; i < h->cap; i++)
		if (h->keys[i] < DEAD)
			fn(h->values[i]);
}

void ag_handles_free(struct ag_handles *h)
{
	free(h->keys);
	free(h->values);
	*h = (struct ag_handles){ 0 };
}
