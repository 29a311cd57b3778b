/* SPDX-License-Identifier: MIT */
#include <stdlib.h>

#include "hash_index.h"

int aci_hash_index_init(struct hash_index *h, uint64_t n)
{
	/* Load factor <= 1/2 keeps linear probing short. */
	uint64_t size = 16;
	while (size < 2 * n)
		size *= 2;
	h->slots = malloc(size * sizeof(*h->slots));
	if (!h->slots)
		return -1;
	for (uint64_t i = 0; i < size; i++)
		h->slots[i] = HASH_INDEX_EMPTY;
	h->mask = size - 1;
	return 0;
}

void aci_hash_index_free(struct hash_index *h)
{
	free(h->slots);
	h->slots = NULL;
}

uint32_t aci_hash_index_intern(struct hash_index *h, uint64_t hash, uint32_t id,
			       hash_index_eq eq, const void *ctx, const void *probe)
{
	uint64_t i = aci_hash_index_locate(h, hash, eq, ctx, probe);
	if (h->slots[i] == HASH_INDEX_EMPTY)
		h->slots[i] = id;
	return h->slots[i];
}
