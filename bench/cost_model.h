/* SPDX-License-Identifier: MIT */
/*
 * Micro-benchmarks of libarenacert's cost model, each a ratio of two
 * timings taken side by side in one run:
 *
 *   repeat    certifying a Repeat of 2 iterations vs 4,294,967,295
 *   append    appending one reference to a schedule of 10 vs 1,000,000
 */
#ifndef ARENAGUARD_BENCH_COST_MODEL_H
#define ARENAGUARD_BENCH_COST_MODEL_H

/* Prints one line per measure. */
void cost_model_run(int quick);

#endif
