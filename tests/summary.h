/* SPDX-License-Identifier: MIT */
/* The closing of every Check test program. */
#ifndef ARENAGUARD_TEST_SUMMARY_H
#define ARENAGUARD_TEST_SUMMARY_H

#include <check.h>

/*
 * Runs every suite of sr, frees it, prints the line "N passed, N failed"
 * (test cases; scripts/test sums these lines over the test programs) and
 * returns the exit status.
 */
int run_and_summarize(SRunner *sr);

#endif
