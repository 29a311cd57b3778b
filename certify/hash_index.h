/* SPDX-License-Identifier: MIT */
/*
 * An open-addressing index of entry ids (uint32), for interning: the
 * caller keeps the entries, the index only finds an equal one by hash.
 * Used for phase identities and plane keys.
 */
#ifndef ARENACERT_HASH_INDEX_H
#define ARENACERT_HASH_INDEX_H

#include <stdint.h>

#define HASH_INDEX_EMPTY UINT32_MAX

struct hash_index {
	uint32_t *slots;
	uint64_t mask;
};

/* Is entry `id` equal to `probe`?  (Both interpreted by the caller.) */
typedef int (*hash_index_eq)(const void *ctx, uint32_t id, const void *probe);

/* Sized for up to n entries.  -1 on out-of-memory. */
int aci_hash_index_init(struct hash_index *h, uint64_t n);
void aci_hash_index_free(struct hash_index *h);

/* The slot holding an entry equal to probe, or the empty slot ending the
 * probe sequence.  Inline, so that a caller's eq, known where it calls,
 * is inlined too (a phase identity's lookup: about 100 instructions). */
static inline uint64_t aci_hash_index_locate(const struct hash_index *h,
					     uint64_t hash, hash_index_eq eq,
					     const void *ctx, const void *probe)
{
	uint64_t i = hash & h->mask;
	while (h->slots[i] != HASH_INDEX_EMPTY && !eq(ctx, h->slots[i], probe))
		i = (i + 1) & h->mask;
	return i;
}

/* The id of an entry equal to probe, or HASH_INDEX_EMPTY. */
static inline uint32_t aci_hash_index_find(const struct hash_index *h,
					   uint64_t hash, hash_index_eq eq,
					   const void *ctx, const void *probe)
{
	return h->slots[aci_hash_index_locate(h, hash, eq, ctx, probe)];
}

/* Like find; when absent, inserts id and returns it. */
uint32_t aci_hash_index_intern(struct hash_index *h, uint64_t hash, uint32_t id,
			       hash_index_eq eq, const void *ctx, const void *probe);

#endif
