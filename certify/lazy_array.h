/* SPDX-License-Identifier: MIT */
/*
 * A per-schedule array of n fixed-size elements that reads as zero until
 * written and whose memory follows the elements written, not n: a live
 * schedule of a large program costs memory for what it touched (issue 13).
 *
 * Elements live in leaves of at most LAZY_LEAF_BYTES (a power of two of
 * elements) under a LAZY_FANOUT-ary tree of pointers, all allocated on
 * first write.  The empty array allocates nothing; an access walks
 * log16 of the leaves, and the last leaf used is remembered, so runs of
 * nearby indexes cost one compare.
 */
#ifndef ARENACERT_LAZY_ARRAY_H
#define ARENACERT_LAZY_ARRAY_H

#include <stddef.h>
#include <stdint.h>

#define LAZY_FANOUT 16         /* pointers per node */
#define LAZY_FANOUT_SHIFT 4
#define LAZY_LEAF_BYTES 512
#define LAZY_MAX_ELEM 64       /* bytes */

struct lazy_array {
	void *root;            /* a leaf when depth == 0, else a node */
	uint32_t depth;        /* node levels above the leaves */
	uint32_t leaf_shift;   /* log2 of the elements per leaf */
	size_t elem;           /* bytes per element */
	uint64_t n;
	uint64_t cached_leaf;  /* leaf number of `cached`, or UINT64_MAX */
	uint8_t *cached;
	uint8_t zero[LAZY_MAX_ELEM];
};

/* n elements of `elem` bytes (1 .. LAZY_MAX_ELEM), all zero; allocates
 * nothing.  Never fails. */
void aci_lazy_array_init(struct lazy_array *a, uint64_t n, size_t elem);
void aci_lazy_array_free(struct lazy_array *a);

/* lazy_array.c: the leaf numbered `leaf`, allocated with the nodes above
 * it when `create` (NULL when absent, or out of memory); remembered. */
uint8_t *aci_lazy_array_leaf(struct lazy_array *a, uint64_t leaf, int create);

/* Element i (< n) for reading: all zero bytes when never written.  The
 * pointer is valid until the next lazy_array_at. */
static inline const void *lazy_array_get(struct lazy_array *a, uint64_t i)
{
	uint64_t leaf = i >> a->leaf_shift;
	uint8_t *l = leaf == a->cached_leaf ? a->cached
					    : aci_lazy_array_leaf(a, leaf, 0);
	uint64_t at = i & (((uint64_t)1 << a->leaf_shift) - 1);
	return l ? l + at * a->elem : a->zero;
}

/* Element i (< n) for writing, allocated (zeroed) on first use; NULL when
 * memory runs out (the array is unchanged).  The pointer stays valid until
 * aci_lazy_array_free: leaves never move. */
static inline void *lazy_array_at(struct lazy_array *a, uint64_t i)
{
	uint64_t leaf = i >> a->leaf_shift;
	uint8_t *l = leaf == a->cached_leaf ? a->cached
					    : aci_lazy_array_leaf(a, leaf, 1);
	uint64_t at = i & (((uint64_t)1 << a->leaf_shift) - 1);
	return l ? l + at * a->elem : NULL;
}

/* Bytes allocated, for tests and benchmarks. */
size_t aci_lazy_array_bytes(const struct lazy_array *a);

#endif
