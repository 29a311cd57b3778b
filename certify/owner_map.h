/* SPDX-License-Identifier: MIT */
/*
 * Who declared each byte last, for (D).  Addresses are compressed to
 * positions 0 .. n-1 (the elementary intervals between plane endpoints);
 * the map is a partition of the positions into segments, each owned by one
 * plane key (or by nobody).  A declaration assigns a key to a span of
 * positions.  Segment starts live in a 64-ary bit tree, so finding the
 * segment around a position costs O(log64 n), and each assignment costs
 * that plus the segments it swallows, which are never seen again: O(log n)
 * amortised per declaration.
 */
#ifndef ARENACERT_OWNER_MAP_H
#define ARENACERT_OWNER_MAP_H

#include <stdint.h>

#define OWNER_NONE UINT32_MAX
#define BIT_TREE_LEVELS 6     /* 64^6 = 2^36 positions */

struct bit_tree {
	uint64_t *level[BIT_TREE_LEVELS];  /* level[0]: one bit a position */
	uint64_t bits[BIT_TREE_LEVELS];    /* bits in each level */
	uint32_t levels;
	uint64_t size;
};

struct owner_map {
	struct bit_tree starts;
	uint32_t *owner;          /* key owning the segment at each start */
	uint64_t n;
};

/* One segment [0, n) owned by nobody.  -1 on out-of-memory. */
int owner_map_init(struct owner_map *map, uint64_t n);
void owner_map_free(struct owner_map *map);

/* Called for each key other than the assigned one that loses positions. */
typedef void (*owner_taken_fn)(void *ctx, uint32_t key);

/* Gives positions [lo, hi) to key. */
void owner_map_assign(struct owner_map *map, uint64_t lo, uint64_t hi,
		      uint32_t key, owner_taken_fn taken, void *ctx);

#endif
