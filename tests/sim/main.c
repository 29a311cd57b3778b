/* SPDX-License-Identifier: MIT */
/*
 * sim-tests: the simulated device (libarenasim.so), which meson preloads
 * with LD_PRELOAD.  Runs every suite and ends with the line
 * "N passed, N failed".  `sim-tests --poison-demo NAME` is a child mode
 * used by the poisoning tests (the option is read once per process);
 * `sim-tests --require-seal-demo` is the ARENASIM_REQUIRE_SEAL test's,
 * `sim-tests --scm-demo SOCK` the SCM_RIGHTS test's receiving process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../summary.h"
#include "device.h"

static const char *demo_name;   /* --poison-demo's, or NULL */

/* The device helpers assert with Check, so a child mode runs as a test. */
START_TEST(demo)
{
	ck_assert_int_eq(demo_name ? poison_demo(demo_name)
				   : require_seal_demo(), 0);
}
END_TEST

static int run_demo(const char *name)
{
	demo_name = name;
	Suite *s = suite_create("demo");
	TCase *tc = tcase_create("demo");
	tcase_add_test(tc, demo);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_SILENT);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--poison-demo") == 0)
		return run_demo(argv[2]);
	if (argc == 2 && strcmp(argv[1], "--require-seal-demo") == 0)
		return run_demo(NULL);
	if (argc == 3 && strcmp(argv[1], "--scm-demo") == 0)
		return scm_demo(atoi(argv[2]));

	SRunner *sr = srunner_create(suite_node());
	srunner_add_suite(sr, suite_bo());
	srunner_add_suite(sr, suite_program());
	srunner_add_suite(sr, suite_execute());
	srunner_add_suite(sr, suite_uring());
	srunner_add_suite(sr, suite_seal());
	srunner_add_suite(sr, suite_shared());

	return run_and_summarize(sr);
}
