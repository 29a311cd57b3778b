/* SPDX-License-Identifier: MIT */
/*
 * Runs the example's suites and ends with the line "N passed, N failed"
 * (test cases).  CK_RUN_SUITE / CK_RUN_CASE select a subset.
 */
#include "suites.h"
#include "../summary.h"

int main(void)
{
	SRunner *sr = srunner_create(suite_planner());
	srunner_add_suite(sr, suite_host());
	srunner_add_suite(sr, suite_device());

	return run_and_summarize(sr);
}
