/* SPDX-License-Identifier: MIT */
/*
 * serve-tests: arena-serve's readiness in process (test_health.c) and
 * arena-serve under the guard (test_serve.c).  Ends with
 * the line "N passed, N failed"; CK_RUN_CASE selects a subset.
 */
#include "suites.h"
#include "../summary.h"

int main(void)
{
	SRunner *sr = srunner_create(suite_health());
	srunner_add_suite(sr, suite_serve());
	return run_and_summarize(sr);
}
