/* SPDX-License-Identifier: MIT */
/*
 * Adversarial families of issue 13 for libarenacert, each a ratio taken
 * in one run (docs/performance.md, "Bounded cost: (D) and live
 * schedules"):
 *
 *   (D) fresh      phases A and B of K fresh planes each, B's over A's,
 *                  a schedule of M references alternating A, B: the time
 *                  for (2K, 2M) over (K, M) (target <= 2.3)
 *   (D) carried    the same with B carrying A's planes (target <= 2.3)
 *   (D) watched    as fresh, with a third phase (never run) carrying A's
 *                  planes, so that every instance moves K planes' bytes
 *                  between keys a plane carries (target <= 2.3)
 *   live schedules memory of 100 schedules of two references over one,
 *                  on a program of 200,000 planes (target <= 1 MB)
 */
#ifndef ARENAGUARD_BENCH_BOUNDED_H
#define ARENAGUARD_BENCH_BOUNDED_H

/* Prints one line per family. */
void bounded_run(int quick);

#endif
