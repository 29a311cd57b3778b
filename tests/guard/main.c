/* SPDX-License-Identifier: MIT */
/*
 * guard-tests: every suite, ending with the line "N passed, N failed"
 * (test cases).  CK_RUN_SUITE / CK_RUN_CASE select a subset.
 */
#include "../summary.h"
#include "suites.h"

int main(void)
{
	SRunner *sr = srunner_create(suite_unit());
	srunner_add_suite(sr, suite_record());
	srunner_add_suite(sr, suite_client());
	srunner_add_suite(sr, suite_infer());
	srunner_add_suite(sr, suite_audit());
	srunner_add_suite(sr, suite_faults());
	srunner_add_suite(sr, suite_fastpath());
	srunner_add_suite(sr, suite_gate());
	srunner_add_suite(sr, suite_output());
	srunner_add_suite(sr, suite_strict());
	srunner_add_suite(sr, suite_cache());
	srunner_add_suite(sr, suite_attack());
	srunner_add_suite(sr, suite_ring());
	srunner_add_suite(sr, suite_api());
	srunner_add_suite(sr, suite_options());
	srunner_add_suite(sr, suite_records());
	srunner_add_suite(sr, suite_hostile());
	srunner_add_suite(sr, suite_share());
	return run_and_summarize(sr);
}
