/* SPDX-License-Identifier: MIT */
/*
 * The one binary search of the project: libarenacert's sorted tables
 * (certify/internal.h includes this header), the report's (tools/) and
 * the simulated device's (sim/).  A macro, not a function, so that each
 * caller searches in its own index type and reads its own table without
 * a callback (what the certificate's inner loops can afford).
 */
#ifndef ARENAGUARD_PARTITION_H
#define ARENAGUARD_PARTITION_H

/*
 * Sets `result` to the first index i in [0, n) at which the condition
 * `before` (an expression of the index variable named `i`, of the
 * unsigned type `type`, which holds n) is false, or to n, where `before`
 * holds on a prefix of [0, n) and nowhere after it.
 * With `key[i] < x` that is the first key >= x (a lower bound), with
 * `key[i] <= x` the first key > x (so the last key <= x is the one
 * before it, when result > 0).  O(log n) evaluations of `before`.
 */
#define AC_PARTITION(type, result, n, i, before)                        \
	do {                                                            \
		type lo_ = 0, hi_ = (n);                                \
		while (lo_ < hi_) {                                     \
			type i = lo_ + (hi_ - lo_) / 2;                 \
			if (before)                                     \
				lo_ = i + 1;                            \
			else                                            \
				hi_ = i;                                \
		}                                                       \
		(result) = lo_;                                         \
	} while (0)

#endif
