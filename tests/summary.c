/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>

#include "summary.h"

int run_and_summarize(SRunner *sr)
{
	srunner_run_all(sr, CK_NORMAL);
	int run = srunner_ntests_run(sr);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	printf("%d passed, %d failed\n", run - failed, failed);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
