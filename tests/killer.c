/* SPDX-License-Identifier: MIT */
/*
 * McIlroy's adversary (killer.h).  Every element starts as "gas", worth
 * more than any value given so far; a comparison of two gas elements
 * freezes one of them (the pivot candidate when it is one) to the next
 * solid value, so the sort's pivot ends up among the smallest elements
 * left, level after level.  Gas elements never compared with each other
 * may take any order above the solids: they take index order.  Running
 * the sort again on the values the adversary fixed makes the same
 * comparisons, with the same outcomes.
 */
#include <assert.h>
#include <stdlib.h>

#include "certify/internal.h"
#include "killer.h"

static uint32_t *value;       /* by element; `gas` until frozen */
static uint32_t gas, solid, candidate;
static uint64_t compares;

static int adversary(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	compares++;
	if (value[x] == gas && value[y] == gas) {
		if (x == candidate)
			value[x] = solid++;
		else
			value[y] = solid++;
	}
	if (value[x] == gas)
		candidate = x;
	else if (value[y] == gas)
		candidate = y;
	return value[x] < value[y] ? -1 : value[x] > value[y];
}

uint64_t killer_order(uint32_t *rank, uint32_t n)
{
	assert(rank || n == 0);
	uint32_t *element = malloc((n ? n : 1) * sizeof(*element));
	value = rank;
	if (!element)
		abort();
	gas = n;
	solid = candidate = 0;
	compares = 0;
	for (uint32_t i = 0; i < n; i++) {
		element[i] = i;
		value[i] = gas;
	}
	aci_sort(element, n, sizeof(*element), adversary);
	for (uint32_t i = 0; i < n; i++)
		if (value[i] == gas)
			value[i] = solid++;
	assert(solid == n);
	free(element);
	return compares;
}
