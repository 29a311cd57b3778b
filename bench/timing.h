/* SPDX-License-Identifier: MIT */
/* Clocks and the statistics the benchmarks report. */
#ifndef ARENAGUARD_BENCH_TIMING_H
#define ARENAGUARD_BENCH_TIMING_H

#include <stddef.h>

/*
 * Seconds of CPU time used by the calling thread (page faults included).
 * The benchmarks are single-threaded, and on shared machines wall time
 * also counts whatever else runs: a preempted measurement would skew a
 * ratio that CPU time keeps honest.
 */
double timing_now(void);

/* Seconds of wall-clock time (CLOCK_MONOTONIC): for what runs on more
 * than one thread, whose CPU time counts the threads' work, not what
 * they save. */
double timing_wall_now(void);

/* The median of n values (sorts them). */
double timing_median(double *v, size_t n);

/* The least-squares slope of log y against log x over n points. */
double timing_loglog_slope(const double *x, const double *y, size_t n);

#endif
