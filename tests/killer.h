/* SPDX-License-Identifier: MIT */
/*
 * McIlroy's adversary ("A Killer Adversary for Quicksort", 1999) against
 * the library's sort (aci_sort): the order of n distinct keys that makes
 * aci_sort do the most work it can.  Deterministic (the sort is), so the
 * tests and bench-certify share one sequence per n.
 */
#ifndef ARENAGUARD_TESTS_KILLER_H
#define ARENAGUARD_TESTS_KILLER_H

#include <stdint.h>

/*
 * Fills rank[0, n) with a permutation of 0..n-1: aci_sort given keys in
 * this order (any element type, any total order agreeing with rank) meets
 * the comparisons the adversary chose.  Returns the number of comparisons
 * aci_sort made on it.  Not thread-safe (the adversary's state is static).
 */
uint64_t killer_order(uint32_t *rank, uint32_t n);

#endif
