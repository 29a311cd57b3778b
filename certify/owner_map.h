/* SPDX-License-Identifier: MIT */
/*
 * Who declared each byte last, for (D).  Addresses are compressed to
 * positions 0 .. n-1 (the elementary intervals between the endpoints of
 * the planes (D) follows); the map is a partition of the positions into
 * segments, each owned by one plane key (or by nobody).  A declaration
 * assigns a key to a span of positions.  Segment starts live in a 64-ary
 * bit tree, so finding the segment around a position costs O(log64 n),
 * and each assignment costs that plus the segments it swallows, which are
 * never seen again: O(log n) amortised per declaration.
 *
 * Every array is a lazy_array: an empty map allocates almost nothing, and
 * one costs memory for the positions its schedule declared, not for n.
 */
#ifndef ARENACERT_OWNER_MAP_H
#define ARENACERT_OWNER_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "lazy_array.h"

#define BIT_TREE_LEVELS 6     /* 64^6 = 2^36 positions */

struct bit_tree {
	struct lazy_array level[BIT_TREE_LEVELS]; /* words; level 0: a bit
						    * a position; the top
						    * level (one word) is
						    * `top` instead */
	uint64_t top;
	uint64_t bits[BIT_TREE_LEVELS];           /* bits in each level */
	uint32_t levels;
	uint64_t size;
};

struct owner_map {
	struct bit_tree starts;
	struct lazy_array owner;  /* key + 1 owning the segment at each start;
				   * 0: nobody */
	uint64_t n;
	int started;              /* position 0 starts a segment */
};

/* One segment [0, n) owned by nobody.  -1 when n >= 2^36. */
int aci_owner_map_init(struct owner_map *map, uint64_t n);
void aci_owner_map_free(struct owner_map *map);

/* Called for each key other than the assigned one that loses positions. */
typedef void (*owner_taken_fn)(void *ctx, uint32_t key);

/* Gives positions [lo, hi) (lo < hi <= n) to key (< UINT32_MAX), after
 * aci_owner_map_reserve(map, lo, hi) (so it cannot fail).  Returns 0 when
 * [lo, hi) already was one segment of key's (nothing changed, no call of
 * taken), 1 when the map may have changed. */
int aci_owner_map_assign(struct owner_map *map, uint64_t lo, uint64_t hi,
			 uint32_t key, owner_taken_fn taken, void *ctx);

/* Allocates what aci_owner_map_assign(map, lo, hi, ...) writes, which must
 * come first; 0, or -1 when memory runs out (the map reads as before). */
int aci_owner_map_reserve(struct owner_map *map, uint64_t lo, uint64_t hi);

/* Bytes the map allocated. */
size_t aci_owner_map_bytes(const struct owner_map *map);

#endif
