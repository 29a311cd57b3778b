/* SPDX-License-Identifier: MIT */
/* Zero-until-written arrays whose memory follows their writes
 * (lazy_array.h). */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "lazy_array.h"

void aci_lazy_array_init(struct lazy_array *a, uint64_t n, size_t elem)
{
	assert(elem >= 1 && elem <= LAZY_MAX_ELEM);
	memset(a, 0, sizeof(*a));
	a->elem = elem;
	a->n = n;
	a->cached_leaf = UINT64_MAX;
	/* the largest leaf within LAZY_LEAF_BYTES, no larger than n needs */
	while (((size_t)2 << a->leaf_shift) * elem <= LAZY_LEAF_BYTES &&
	       ((uint64_t)1 << a->leaf_shift) < n)
		a->leaf_shift++;
	/* node levels until one node holds every leaf */
	for (uint64_t slots = ((n ? n - 1 : 0) >> a->leaf_shift) + 1; slots > 1;
	     slots = (slots + LAZY_FANOUT - 1) / LAZY_FANOUT)
		a->depth++;
}

static size_t leaf_bytes(const struct lazy_array *a)
{
	return ((size_t)1 << a->leaf_shift) * a->elem;
}

static void free_level(void *node, uint32_t depth)
{
	if (!node)
		return;
	if (depth > 0)
		for (uint32_t i = 0; i < LAZY_FANOUT; i++)
			free_level(((void **)node)[i], depth - 1);
	free(node);
}

void aci_lazy_array_free(struct lazy_array *a)
{
	free_level(a->root, a->depth);
	a->root = NULL;
	a->cached = NULL;
	a->cached_leaf = UINT64_MAX;
}

uint8_t *aci_lazy_array_leaf(struct lazy_array *a, uint64_t leaf, int create)
{
	assert(a->n && leaf <= (a->n - 1) >> a->leaf_shift);
	void **slot = &a->root;
	for (uint32_t level = a->depth; level > 0; level--) {
		if (!*slot) {
			if (!create || !(*slot = calloc(LAZY_FANOUT,
							sizeof(void *))))
				return NULL;
		}
		uint32_t shift = LAZY_FANOUT_SHIFT * (level - 1);
		slot = &((void **)*slot)[(leaf >> shift) % LAZY_FANOUT];
	}
	if (!*slot && (!create || !(*slot = calloc(1, leaf_bytes(a)))))
		return NULL;
	a->cached_leaf = leaf;
	a->cached = *slot;
	return *slot;
}

static size_t level_bytes(const struct lazy_array *a, const void *node,
			  uint32_t depth)
{
	if (!node)
		return 0;
	if (depth == 0)
		return leaf_bytes(a);
	size_t total = LAZY_FANOUT * sizeof(void *);
	for (uint32_t i = 0; i < LAZY_FANOUT; i++)
		total += level_bytes(a, ((void *const *)node)[i], depth - 1);
	return total;
}

size_t aci_lazy_array_bytes(const struct lazy_array *a)
{
	return level_bytes(a, a->root, a->depth);
}
