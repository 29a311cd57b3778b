/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "owner_map.h"

static uint64_t words_for(uint64_t bits)
{
	return (bits + 63) / 64;
}

static int bit_tree_init(struct bit_tree *t, uint64_t size)
{
	memset(t, 0, sizeof(*t));
	t->size = size;
	uint64_t bits = size ? size : 1;
	do {
		if (t->levels == BIT_TREE_LEVELS)
			return -1;
		t->bits[t->levels] = bits;
		t->level[t->levels] = calloc(words_for(bits), sizeof(uint64_t));
		if (!t->level[t->levels])
			return -1;
		t->levels++;
		bits = words_for(bits);
	} while (bits > 1);
	return 0;
}

static void bit_tree_free(struct bit_tree *t)
{
	for (uint32_t i = 0; i < t->levels; i++)
		free(t->level[i]);
	memset(t, 0, sizeof(*t));
}

static int bit_tree_test(const struct bit_tree *t, uint64_t i)
{
	return (t->level[0][i / 64] >> (i % 64)) & 1;
}

static void bit_tree_set(struct bit_tree *t, uint64_t i)
{
	for (uint32_t l = 0; l < t->levels; l++, i /= 64)
		t->level[l][i / 64] |= (uint64_t)1 << (i % 64);
}

static void bit_tree_clear(struct bit_tree *t, uint64_t i)
{
	/* Clear upwards only while a word becomes empty. */
	for (uint32_t l = 0; l < t->levels; l++, i /= 64) {
		t->level[l][i / 64] &= ~((uint64_t)1 << (i % 64));
		if (t->level[l][i / 64])
			break;
	}
}

/* Smallest set position >= i, or t->size.  A set bit i at level l+1 means
 * word i of level l is not zero: climb while the rest of a word is empty,
 * then descend along first set bits. */
static uint64_t bit_tree_next(const struct bit_tree *t, uint64_t i)
{
	uint32_t l = 0;
	if (i >= t->size)
		return t->size;
	for (;;) {
		uint64_t w = t->level[l][i / 64] & (~(uint64_t)0 << (i % 64));
		if (w) {
			i = (i & ~(uint64_t)63) + (uint64_t)__builtin_ctzll(w);
			break;
		}
		i = i / 64 + 1;
		if (++l == t->levels || i >= t->bits[l])
			return t->size;
	}
	while (l > 0) {
		l--;
		i = i * 64 + (uint64_t)__builtin_ctzll(t->level[l][i]);
	}
	return i;
}

/* Largest set position <= i, or UINT64_MAX. */
static uint64_t bit_tree_prev(const struct bit_tree *t, uint64_t i)
{
	uint32_t l = 0;
	for (;;) {
		uint64_t mask = (i % 64 == 63) ? ~(uint64_t)0
					       : (((uint64_t)1 << (i % 64 + 1)) - 1);
		uint64_t w = t->level[l][i / 64] & mask;
		if (w) {
			i = (i & ~(uint64_t)63) + 63 - (uint64_t)__builtin_clzll(w);
			break;
		}
		if (l + 1 == t->levels || i / 64 == 0)
			return UINT64_MAX;
		i = i / 64 - 1;
		l++;
	}
	while (l > 0) {
		l--;
		i = i * 64 + 63 - (uint64_t)__builtin_clzll(t->level[l][i]);
	}
	return i;
}

int owner_map_init(struct owner_map *map, uint64_t n)
{
	memset(map, 0, sizeof(*map));
	map->n = n;
	map->owner = malloc((n ? n : 1) * sizeof(*map->owner));
	if (!map->owner || bit_tree_init(&map->starts, n) != 0) {
		owner_map_free(map);
		return -1;
	}
	if (n) {
		map->owner[0] = OWNER_NONE;
		bit_tree_set(&map->starts, 0);
	}
	return 0;
}

void owner_map_free(struct owner_map *map)
{
	bit_tree_free(&map->starts);
	free(map->owner);
	map->owner = NULL;
}

void owner_map_assign(struct owner_map *map, uint64_t lo, uint64_t hi,
		      uint32_t key, owner_taken_fn taken, void *ctx)
{
	struct bit_tree *t = &map->starts;
	/* Keep whatever follows hi: start a segment there with its owner. */
	if (hi < map->n && !bit_tree_test(t, hi)) {
		map->owner[hi] = map->owner[bit_tree_prev(t, hi)];
		bit_tree_set(t, hi);
	}
	/* The segment around lo, then every segment starting inside. */
	uint64_t s = bit_tree_prev(t, lo);
	if (map->owner[s] != key && map->owner[s] != OWNER_NONE)
		taken(ctx, map->owner[s]);
	for (uint64_t i = bit_tree_next(t, s + 1); i < hi;
	     i = bit_tree_next(t, i + 1)) {
		if (map->owner[i] != key && map->owner[i] != OWNER_NONE)
			taken(ctx, map->owner[i]);
		bit_tree_clear(t, i);
	}
	bit_tree_set(t, lo);
	map->owner[lo] = key;
}
