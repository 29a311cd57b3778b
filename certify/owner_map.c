/* SPDX-License-Identifier: MIT */
#include <assert.h>
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
		aci_lazy_array_init(&t->level[t->levels], words_for(bits),
				    sizeof(uint64_t));
		t->levels++;
		bits = words_for(bits);
	} while (bits > 1);
	return 0;
}

static void bit_tree_free(struct bit_tree *t)
{
	for (uint32_t i = 0; i < t->levels; i++)
		aci_lazy_array_free(&t->level[i]);
	memset(t, 0, sizeof(*t));
}

static uint64_t word(const struct bit_tree *t, uint32_t l, uint64_t w)
{
	if (l + 1 == t->levels) {
		assert(w == 0);
		return t->top;
	}
	/* reading never changes what the tree holds, only its leaf cache */
	struct lazy_array *a = (struct lazy_array *)&t->level[l];
	return *(const uint64_t *)lazy_array_get(a, w);
}

/* A word that exists: the top, reserved by bit_tree_reserve or holding a
 * set bit. */
static uint64_t *word_mut(struct bit_tree *t, uint32_t l, uint64_t w)
{
	if (l + 1 == t->levels) {
		assert(w == 0);
		return &t->top;
	}
	uint64_t *p = lazy_array_at(&t->level[l], w);
	assert(p);
	return p;
}

/* Allocates the words bit_tree_set(t, i) writes; -1 when memory runs out. */
static int bit_tree_reserve(struct bit_tree *t, uint64_t i)
{
	for (uint32_t l = 0; l + 1 < t->levels; l++, i /= 64)
		if (!lazy_array_at(&t->level[l], i / 64))
			return -1;
	return 0;
}

static void bit_tree_set(struct bit_tree *t, uint64_t i)
{
	/* Set upwards only while a word was empty (a word that was not
	 * already has its bit above). */
	for (uint32_t l = 0; l < t->levels; l++, i /= 64) {
		uint64_t *w = word_mut(t, l, i / 64);
		uint64_t was = *w;
		*w = was | (uint64_t)1 << (i % 64);
		if (was)
			break;
	}
}

static void bit_tree_clear(struct bit_tree *t, uint64_t i)
{
	/* Clear upwards only while a word becomes empty. */
	for (uint32_t l = 0; l < t->levels; l++, i /= 64) {
		uint64_t *w = word_mut(t, l, i / 64);
		*w &= ~((uint64_t)1 << (i % 64));
		if (*w)
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
	if (t->levels == 1) {        /* one word: no climbing */
		uint64_t w = t->top & (~(uint64_t)0 << i);
		return w ? (uint64_t)__builtin_ctzll(w) : t->size;
	}
	for (;;) {
		uint64_t w = word(t, l, i / 64) & (~(uint64_t)0 << (i % 64));
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
		i = i * 64 + (uint64_t)__builtin_ctzll(word(t, l, i));
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
		uint64_t w = word(t, l, i / 64) & mask;
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
		i = i * 64 + 63 - (uint64_t)__builtin_clzll(word(t, l, i));
	}
	return i;
}

static uint32_t owner_of(struct owner_map *map, uint64_t start)
{
	return *(const uint32_t *)lazy_array_get(&map->owner, start);
}

/* An owner slot that exists (reserved, or at a segment start). */
static uint32_t *owner_mut(struct owner_map *map, uint64_t start)
{
	uint32_t *p = lazy_array_at(&map->owner, start);
	assert(p);
	return p;
}

int aci_owner_map_init(struct owner_map *map, uint64_t n)
{
	memset(map, 0, sizeof(*map));
	map->n = n;
	aci_lazy_array_init(&map->owner, n ? n : 1, sizeof(uint32_t));
	return bit_tree_init(&map->starts, n);
}

void aci_owner_map_free(struct owner_map *map)
{
	bit_tree_free(&map->starts);
	aci_lazy_array_free(&map->owner);
}

/* The slots an assignment of [lo, hi) writes: position 0's, lo's, hi's. */
int aci_owner_map_reserve(struct owner_map *map, uint64_t lo, uint64_t hi)
{
	struct bit_tree *t = &map->starts;
	assert(lo < hi && hi <= map->n);
	if ((!map->started && bit_tree_reserve(t, 0)) ||
	    bit_tree_reserve(t, lo) || !lazy_array_at(&map->owner, lo) ||
	    (hi < map->n && (bit_tree_reserve(t, hi) ||
			     !lazy_array_at(&map->owner, hi))))
		return -1;
	return 0;
}

/* Position 0 starts a segment (owned by nobody) from the first assignment
 * on; before it the map is empty and every position is nobody's. */
int aci_owner_map_assign(struct owner_map *map, uint64_t lo, uint64_t hi,
			 uint32_t key, owner_taken_fn taken, void *ctx)
{
	struct bit_tree *t = &map->starts;
	assert(lo < hi && hi <= map->n && key != UINT32_MAX);
	/* aci_owner_map_reserve allocated what this writes */
	if (!map->started) {
		bit_tree_set(t, 0);          /* owner 0: nobody */
		map->started = 1;
	}
	/* The segment around lo and the next start after it. */
	uint64_t s = bit_tree_prev(t, lo);
	uint32_t o = owner_of(map, s);
	uint64_t i = bit_tree_next(t, s + 1);
	/* Already so (a phase declaring again what it declared last):
	 * [lo, hi) is one segment of key's (hi is the next start, or the
	 * end), so nothing would change. */
	if (s == lo && o == key + 1 && i == hi)
		return 0;
	if (o != key + 1 && o != 0)
		taken(ctx, o - 1);
	/* Every segment starting inside, o the owner of the last. */
	for (; i < hi; i = bit_tree_next(t, i + 1)) {
		o = owner_of(map, i);
		if (o != key + 1 && o != 0)
			taken(ctx, o - 1);
		bit_tree_clear(t, i);
	}
	/* Keep whatever follows hi: start a segment there with its owner. */
	if (i != hi && hi < map->n) {
		*owner_mut(map, hi) = o;
		bit_tree_set(t, hi);
	}
	bit_tree_set(t, lo);
	*owner_mut(map, lo) = key + 1;
	return 1;
}

size_t aci_owner_map_bytes(const struct owner_map *map)
{
	size_t total = aci_lazy_array_bytes(&map->owner);
	for (uint32_t l = 0; l < map->starts.levels; l++)
		total += aci_lazy_array_bytes(&map->starts.level[l]);
	return total;
}
