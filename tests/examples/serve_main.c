/* SPDX-License-Identifier: MIT */
/*
 * serve-tests: arena-serve under the guard (test_serve.c).  Ends with
 * the line "N passed, N failed"; CK_RUN_CASE selects a subset.
 */
#include "suites.h"
#include "../summary.h"

int main(void)
{
	return run_and_summarize(srunner_create(suite_serve()));
}
