/* SPDX-License-Identifier: MIT */
/*
 * Parallel certification against serial (issue 18's 1.7x on 2 cores):
 * each workload's sound program at 10^6 and 10^7 words (--quick: 10^6),
 * read and certified in one call (ac_program_view_image, its schedule
 * appended) with 1 thread and with 2, alternately, in wall-clock time:
 * CPU time would count the threads' work, not what they save.  Prints
 * the medians and their ratio; a speed-up is only meaningful on a
 * machine with two otherwise idle cores (the load average is printed).
 */
#ifndef ARENAGUARD_BENCH_PARALLEL_H
#define ARENAGUARD_BENCH_PARALLEL_H

/* Returns the number of programs whose verdicts differ between the two
 * runs or from the constructed one (0 when all agree). */
int parallel_run(int quick, const char *only);

#endif
