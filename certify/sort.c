/* SPDX-License-Identifier: MIT */
/*
 * The sorts of libarenacert, both O(n log n) or better on every input.
 *
 * aci_sort: introsort (Musser 1997), for any comparator.  Quicksort with a
 * median-of-three pivot while the recursion depth stays below 2 log2 n,
 * heapsort for a range that goes deeper, insertion sort for short runs.
 * O(n log n) compares on every input -- an adversarial order (McIlroy's
 * "killer" sequence) drives the quicksort into the depth limit, where
 * heapsort bounds the rest -- in place, without allocation.  Not stable:
 * callers whose order must be total break ties by an index.
 *
 * aci_sort_by_key: records led by a 64-bit key, the hot sorts (tensors by
 * offset, plane boundaries): a least-significant-digit radix sort, one
 * O(n) pass per byte that varies among the keys, whatever their order --
 * an adversarial order costs what address order costs; below
 * MERGE_SORT_MAX records a stable merge sort, O(n log n) on every order,
 * without the radix sort's fixed cost; records already in order, found in
 * one pass, are left as they are.
 *
 * Every sort of the library goes through one of these two, rather than
 * qsort, whose worst case is the C library's choice.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Runs this short are insertion-sorted. */
#define INSERTION_SORT_MAX 16

static void swap_elements(char *a, char *b, size_t size)
{
	while (size >= sizeof(uint64_t)) {
		uint64_t t;
		memcpy(&t, a, sizeof(t));
		memcpy(a, b, sizeof(t));
		memcpy(b, &t, sizeof(t));
		a += sizeof(t);
		b += sizeof(t);
		size -= sizeof(t);
	}
	while (size--) {
		char t = *a;
		*a++ = *b;
		*b++ = t;
	}
}

static void insertion_sort(char *b, size_t n, size_t size, aci_sort_cmp cmp)
{
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && cmp(b + (j - 1) * size, b + j * size) > 0;
		     j--)
			swap_elements(b + (j - 1) * size, b + j * size, size);
}

/* Restores the max-heap below `root` in b[0, n). */
static void sift_down(char *b, size_t root, size_t n, size_t size,
		      aci_sort_cmp cmp)
{
	for (;;) {
		size_t child = 2 * root + 1;
		if (child >= n)
			return;
		if (child + 1 < n && cmp(b + child * size, b + (child + 1) * size) < 0)
			child++;
		if (cmp(b + root * size, b + child * size) >= 0)
			return;
		swap_elements(b + root * size, b + child * size, size);
		root = child;
	}
}

static void heap_sort(char *b, size_t n, size_t size, aci_sort_cmp cmp)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down(b, i, n, size, cmp);
	for (size_t end = n; end-- > 1;) {
		swap_elements(b, b + end * size, size);
		sift_down(b, 0, end, size, cmp);
	}
}

/* Orders x <= y. */
static void order_two(char *x, char *y, size_t size, aci_sort_cmp cmp)
{
	if (cmp(x, y) > 0)
		swap_elements(x, y, size);
}

/*
 * Sorts b[0, n), quicksort for at most `depth` more levels.  Recurses into
 * the smaller side and loops on the larger, so the stack is O(log n).
 */
static void intro_sort(char *b, size_t n, size_t size, aci_sort_cmp cmp,
		       unsigned depth)
{
	while (n > INSERTION_SORT_MAX) {
		if (depth == 0) {
			heap_sort(b, n, size, cmp);
			return;
		}
		depth--;
		/* Median of three to b[0]: sorted input splits evenly. */
		char *mid = b + (n / 2) * size, *last = b + (n - 1) * size;
		order_two(mid, b, size, cmp);
		order_two(b, last, size, cmp);
		order_two(mid, b, size, cmp);
		/* Now mid <= b[0] <= last: b[0] is the pivot.  Sedgewick's
		 * partition: both scans stop on equal keys, so runs of equal
		 * keys split evenly too. */
		size_t i = 0, j = n;
		for (;;) {
			do
				i++;
			while (i < n && cmp(b + i * size, b) < 0);
			do
				j--;
			while (cmp(b, b + j * size) < 0);
			if (i >= j)
				break;
			swap_elements(b + i * size, b + j * size, size);
		}
		swap_elements(b, b + j * size, size);
		/* [0, j) <= pivot == b[j] <= (j, n) */
		size_t left = j, right = n - j - 1;
		char *right_base = b + (j + 1) * size;
		if (left < right) {
			intro_sort(b, left, size, cmp, depth);
			b = right_base;
			n = right;
		} else {
			intro_sort(right_base, right, size, cmp, depth);
			n = left;
		}
	}
	insertion_sort(b, n, size, cmp);
}

void aci_sort(void *base, size_t n, size_t size, aci_sort_cmp cmp)
{
	assert(base || n == 0);
	assert(size > 0 && cmp);
	unsigned depth = 0;
	for (size_t m = n; m > 1; m >>= 1)
		depth += 2;                /* 2 floor(log2 n) */
	intro_sort(base, n, size, cmp, depth);
}

/* The leading 64-bit key of a record. */
static uint64_t key_of(const char *record)
{
	uint64_t key;
	memcpy(&key, record, sizeof(key));
	return key;
}

/*
 * Below this many records the radix sort's fixed cost (eight 256-entry
 * histograms, cleared and summed: some 20,000 instructions) is more than
 * a merge sort's n log2 n moves, and the many small sorts of a program's
 * phases would pay it each (docs/performance.md).
 */
#define MERGE_SORT_MAX 512
#define MERGE_STACK_BYTES 4096

/* Copies one record; the library's keyed records are 8 or 16 bytes, which
 * compile to moves instead of a call. */
static void copy_record(char *to, const char *from, size_t size)
{
	if (size == 8)
		memcpy(to, from, 8);
	else if (size == 16)
		memcpy(to, from, 16);
	else
		memcpy(to, from, size);
}

/* Stable bottom-up merge sort of b[0, n) by key, through scratch (n
 * records); O(n log n) on every order.  Runs of INSERTION_SORT_MAX are
 * insertion-sorted first. */
static void merge_sort(char *b, char *scratch, size_t n, size_t size)
{
	for (size_t lo = 0; lo < n; lo += INSERTION_SORT_MAX) {
		size_t hi = lo + INSERTION_SORT_MAX < n ? lo + INSERTION_SORT_MAX : n;
		for (size_t i = lo + 1; i < hi; i++)
			for (size_t j = i; j > lo && key_of(b + (j - 1) * size) >
							     key_of(b + j * size);
			     j--)
				swap_elements(b + (j - 1) * size, b + j * size,
					      size);
	}
	char *from = b, *to = scratch;
	for (size_t width = INSERTION_SORT_MAX; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n;
			size_t hi = mid + width < n ? mid + width : n;
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi) {
				/* ties from the left run: stable */
				const char *r = key_of(from + j * size) <
							key_of(from + i * size)
					? from + j++ * size : from + i++ * size;
				copy_record(to + k++ * size, r, size);
			}
			memcpy(to + k * size, from + i * size, (mid - i) * size);
			k += mid - i;
			memcpy(to + k * size, from + j * size, (hi - j) * size);
		}
		char *t = from;
		from = to;
		to = t;
	}
	if (from != b)
		memcpy(b, from, n * size);
}

#define DIGIT_BITS 8
#define DIGITS (64 / DIGIT_BITS)
#define BUCKETS (1u << DIGIT_BITS)

static unsigned digit(uint64_t key, unsigned d)
{
	return (unsigned)(key >> (d * DIGIT_BITS)) & (BUCKETS - 1);
}

int aci_sort_by_key(void *base, size_t n, size_t size)
{
	assert(base || n == 0);
	assert(size >= sizeof(uint64_t));
	char *b = base;
	if (n <= INSERTION_SORT_MAX) {       /* stable insertion sort */
		for (size_t i = 1; i < n; i++)
			for (size_t j = i; j > 0 && key_of(b + (j - 1) * size) >
							    key_of(b + j * size);
			     j--)
				swap_elements(b + (j - 1) * size, b + j * size,
					      size);
		return 0;
	}
	/* Keys often come in order (a plan lists its tensors by offset):
	 * then there is nothing to do, and finding out costs n compares. */
	size_t sorted = 1;
	while (sorted < n && key_of(b + (sorted - 1) * size) <=
			     key_of(b + sorted * size))
		sorted++;
	if (sorted == n)
		return 0;
	char stack[MERGE_STACK_BYTES];
	char *scratch = n <= SIZE_MAX / size
		? (n * size <= sizeof(stack) ? stack : malloc(n * size)) : NULL;
	if (!scratch)
		return -1;
	if (n <= MERGE_SORT_MAX) {
		merge_sort(b, scratch, n, size);
		if (scratch != stack)
			free(scratch);
		return 0;
	}
	/* Every digit's histogram in one pass. */
	_Static_assert(DIGITS * DIGIT_BITS == 64, "the digits cover the key");
	size_t count[DIGITS][BUCKETS];
	memset(count, 0, sizeof(count));
	for (size_t i = 0; i < n; i++) {
		uint64_t key = key_of(b + i * size);
		for (unsigned d = 0; d < DIGITS; d++)
			count[d][digit(key, d)]++;
	}
	char *from = b, *to = scratch;
	for (unsigned d = 0; d < DIGITS; d++) {
		size_t *c = count[d];
		if (c[digit(key_of(b), d)] == n)
			continue;          /* one value: the pass keeps order */
		size_t sum = 0;
		for (unsigned k = 0; k < BUCKETS; k++) {
			size_t here = c[k];
			c[k] = sum;
			sum += here;
		}
		for (size_t i = 0; i < n; i++) {   /* stable */
			const char *r = from + i * size;
			memcpy(to + c[digit(key_of(r), d)]++ * size, r, size);
		}
		char *t = from;
		from = to;
		to = t;
	}
	if (from != b)
		memcpy(b, from, n * size);
	free(scratch);
	return 0;
}
