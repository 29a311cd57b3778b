/* SPDX-License-Identifier: MIT */
/*
 * The library's sorts (certify/sort.c): aci_sort's O(n log n) comparisons
 * on McIlroy's adversarial order, and both sorts' result equal to a
 * reference sort
 * (the C library's qsort on a total order) on that order, on random keys
 * with many ties, and on every short length.  Fixed seed, printed.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "certify/internal.h"
#include "killer.h"
#include "suites.h"

#define SORT_SEED UINT64_C(0x5047)

struct keyed {
	uint64_t key;
	uint32_t index;
};

static uint64_t compares;

/* (key, index): a total order, so every correct sort agrees. */
static int keyed_order(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	compares++;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static unsigned log2_ceil(uint64_t n)
{
	unsigned l = 0;
	while (((uint64_t)1 << l) < n)
		l++;
	return l;
}

/* aci_sort, aci_sort_by_key (stable: v is in index order) and qsort on
 * copies of v agree; returns aci_sort's compares. */
static uint64_t check_against_reference(const struct keyed *v, uint32_t n)
{
	size_t bytes = (n ? n : 1) * sizeof(*v);
	struct keyed *mine = malloc(bytes), *reference = malloc(bytes);
	struct keyed *radix = malloc(bytes);
	ck_assert_ptr_nonnull(mine);
	ck_assert_ptr_nonnull(reference);
	ck_assert_ptr_nonnull(radix);
	memcpy(mine, v, n * sizeof(*v));
	memcpy(radix, v, n * sizeof(*v));
	ck_assert_int_eq(aci_sort_by_key(radix, n, sizeof(*v)), 0);
	memcpy(reference, v, n * sizeof(*v));
	qsort(reference, n, sizeof(*v), keyed_order);
	compares = 0;
	aci_sort(mine, n, sizeof(*v), keyed_order);
	uint64_t mine_compares = compares;
	for (uint32_t i = 0; i < n; i++) {
		ck_assert_uint_eq(mine[i].key, reference[i].key);
		ck_assert_uint_eq(mine[i].index, reference[i].index);
		ck_assert_uint_eq(radix[i].key, reference[i].key);
		ck_assert_uint_eq(radix[i].index, reference[i].index);
	}
	free(radix);
	free(mine);
	free(reference);
	return mine_compares;
}

/*
 * The killer order costs O(n log n) comparisons: at most 6 n log2 n
 * (introsort: 2 log2 n quicksort levels, then heapsort's 2 n log2 n).  A
 * quicksort without the heapsort fallback makes about n^2 / 4 here:
 * 67 million at n = 16384, where the bound is 1.4 million.
 */
START_TEST(killer_order_costs_n_log_n)
{
	const uint32_t sizes[] = { 1024, 16384, 50000 };
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint32_t n = sizes[s];
		uint32_t *rank = malloc(n * sizeof(*rank));
		struct keyed *v = malloc(n * sizeof(*v));
		ck_assert_ptr_nonnull(rank);
		ck_assert_ptr_nonnull(v);
		uint64_t adversary = killer_order(rank, n);
		/* the adversary's order is a permutation */
		uint8_t *seen = calloc(n, 1);
		ck_assert_ptr_nonnull(seen);
		for (uint32_t i = 0; i < n; i++) {
			ck_assert_uint_lt(rank[i], n);
			ck_assert_uint_eq(seen[rank[i]], 0);
			seen[rank[i]] = 1;
		}
		free(seen);
		/* keys in the killer order, as planes 64 bytes apart */
		for (uint32_t i = 0; i < n; i++)
			v[i] = (struct keyed){ (uint64_t)rank[i] * 64, i };
		uint64_t c = check_against_reference(v, n);
		uint64_t bound = 6 * (uint64_t)n * log2_ceil(n);
		printf("sort: killer order n=%u: %" PRIu64 " compares (adversary "
		       "%" PRIu64 "), bound %" PRIu64 "\n", n, c, adversary, bound);
		ck_assert_uint_le(adversary, bound);
		ck_assert_uint_le(c, bound);
		free(rank);
		free(v);
	}
}
END_TEST

static uint64_t lcg(uint64_t *state)
{
	*state = *state * 6364136223846793005ull + 1442695040888963407ull;
	return *state >> 33;
}

/* Random keys over few values (many ties), and sorted, reversed and
 * constant runs, at every length up to 70 and a few longer ones. */
START_TEST(agrees_with_reference)
{
	printf("sort: seed %#" PRIx64 "\n", SORT_SEED);
	uint64_t state = SORT_SEED;
	/* 100 to 513: the merge sort below the radix sort's MERGE_SORT_MAX,
	 * runs of 16 merged unevenly */
	const uint32_t longer[] = { 100, 300, 511, 512, 513, 1000, 4097, 30000 };
	const uint32_t n_longer = sizeof(longer) / sizeof(longer[0]);
	struct keyed *v = malloc(30000 * sizeof(*v));
	ck_assert_ptr_nonnull(v);
	for (uint32_t round = 0; round < 70 + n_longer; round++) {
		uint32_t n = round < 70 ? round : longer[round - 70];
		for (int shape = 0; shape < 5; shape++) {
			for (uint32_t i = 0; i < n; i++) {
				uint64_t key = shape == 0 ? lcg(&state) % 7
					     : shape == 1 ? lcg(&state) << 20
					     : shape == 2 ? i
					     : shape == 3 ? n - i : 42;
				v[i] = (struct keyed){ key, i };
			}
			uint64_t c = check_against_reference(v, n);
			if (n > 1)
				ck_assert_uint_le(c, 6 * (uint64_t)n *
							     log2_ceil(n) + 64);
		}
	}
	free(v);
}
END_TEST

Suite *suite_sort(void)
{
	Suite *s = suite_create("sort");
	TCase *tc = tcase_create("sort");
	tcase_add_test(tc, killer_order_costs_n_log_n);
	tcase_add_test(tc, agrees_with_reference);
	suite_add_tcase(s, tc);
	return s;
}
