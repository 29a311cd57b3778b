/* SPDX-License-Identifier: MIT */
/*
 * Runs every Check suite and ends with the line "N passed, N failed"
 * (test cases), which .ci/run's caller reads.  CK_RUN_SUITE / CK_RUN_CASE
 * select a subset, as usual with Check.
 */
#include "suites.h"
#include "summary.h"

int main(void)
{
	SRunner *sr = srunner_create(suite_examples());
	srunner_add_suite(sr, suite_rules());
	srunner_add_suite(sr, suite_schedule());
	srunner_add_suite(sr, suite_json());
	srunner_add_suite(sr, suite_json_ways());
	srunner_add_suite(sr, suite_image());
	srunner_add_suite(sr, suite_differential());
	srunner_add_suite(sr, suite_cli());
	srunner_add_suite(sr, suite_workloads());
	srunner_add_suite(sr, suite_parallel());
	srunner_add_suite(sr, suite_search());
	srunner_add_suite(sr, suite_advisory());
	srunner_add_suite(sr, suite_followed());
	srunner_add_suite(sr, suite_replay());
	srunner_add_suite(sr, suite_sort());
	srunner_add_suite(sr, suite_result_json());
	srunner_add_suite(sr, suite_walk());
	srunner_add_suite(sr, suite_builder());

	return run_and_summarize(sr);
}
