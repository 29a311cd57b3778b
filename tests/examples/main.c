/* SPDX-License-Identifier: MIT */
/*
 * Runs the example's suites and ends with the line "N passed, N failed"
 * (test cases).  CK_RUN_SUITE / CK_RUN_CASE select a subset.
 */
#include <stdio.h>
#include <stdlib.h>

#include "suites.h"

int main(void)
{
	SRunner *sr = srunner_create(suite_planner());
	srunner_add_suite(sr, suite_host());
	srunner_add_suite(sr, suite_device());

	srunner_run_all(sr, CK_NORMAL);
	int run = srunner_ntests_run(sr);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);

	printf("%d passed, %d failed\n", run - failed, failed);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
