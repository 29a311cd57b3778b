/* SPDX-License-Identifier: MIT */
/*
 * Certification cost against the order of a phase's planes: a phase of n
 * disjoint planes written in McIlroy's adversarial order against the
 * library's sort (tests/killer.h) vs the same planes in address order,
 * side by side in one run (docs/performance.md, "Adversarial orders,
 * readers").
 * Target: the ratio at most 2 at every n, and doubling n at most 2.3x.
 */
#ifndef ARENAGUARD_BENCH_SORT_ORDER_H
#define ARENAGUARD_BENCH_SORT_ORDER_H

/* Prints one line per size; returns the number of verdicts that were not
 * "certified" (0 when all are). */
int sort_order_run(int quick);

#endif
