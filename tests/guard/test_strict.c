/* SPDX-License-Identifier: MIT */
/*
 * Strict mode (ARENAGUARD_STRICT=1; spec section 6): a certified program
 * with an advisory (a tensor outside every window, memory (C) never
 * checks) is refused like a failing one, with a record that names the
 * advisory; without strict mode it runs, and a program without
 * advisories runs in strict mode too.  On the fake driver.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fake.h"
#include "load.h"
#include "mirror.h"
#include "spawn.h"
#include "suites.h"

/* The guard as fake_setup leaves it, strict or not. */
static struct ag_file *start(int strict, const char *mode)
{
	fake_setup();
	if (strict)
		setenv("ARENAGUARD_STRICT", "1", 1);
	if (mode)
		setenv("ARENAGUARD", mode, 1);
	ag_config_load();
	return ag_file_new();
}

/* The good schedule of a `kind` program, submitted: 0 or -errno. */
static int submit_good(struct ag_file *f, enum prog_kind kind)
{
	uint32_t prog = fake_program(f, kind);
	uint32_t s = fake_schedule(f, prog, prog_good_refs, 2, 2);
	return fake_submit(f, s);
}

static const char advisory[] =
	"strict mode: the program has an advisory: tensor-outside-windows: "
	"global 'out' (globals[0]) [0x18000, 0x18100) has byte 0x18000 in "
	"no window";

START_TEST(test_strict_refuses_advisory)
{
	struct ag_file *f = start(1, NULL);
	ck_assert_int_eq(submit_good(f, PROG_OUTSIDE), -EPERM);
	ck_assert_int_eq(fake_ran().n, 0);
	char *log = slurp(scratch_path("log"));
	ck_assert_msg(strstr(log, ": certified, but refused in strict mode"),
		      "%s", log);
	ck_assert_msg(strstr(log, advisory), "%s", log);
	free(log);
	ag_file_unref(f);
}
END_TEST

START_TEST(test_not_strict_runs)
{
	struct ag_file *f = start(0, NULL);
	ck_assert_int_eq(submit_good(f, PROG_OUTSIDE), 0);
	ck_assert_int_eq(fake_ran().n, 1);
	char *log = slurp(scratch_path("log"));
	ck_assert_msg(!strstr(log, "strict"), "%s", log);
	free(log);
	ag_file_unref(f);
}
END_TEST

START_TEST(test_strict_without_advisory_runs)
{
	struct ag_file *f = start(1, NULL);
	ck_assert_int_eq(submit_good(f, PROG_GOOD), 0);
	ck_assert_int_eq(fake_ran().n, 1);
	ag_file_unref(f);
}
END_TEST

/* warn mode reports the advisory and submits. */
START_TEST(test_strict_warn)
{
	struct ag_file *f = start(1, "warn");
	ck_assert_int_eq(submit_good(f, PROG_OUTSIDE), 0);
	ck_assert_int_eq(fake_ran().n, 1);
	char *log = slurp(scratch_path("log"));
	ck_assert_msg(strstr(log, "arenaguard: warning: submitting"), "%s",
		      log);
	ck_assert_msg(strstr(log, advisory), "%s", log);
	free(log);
	ag_file_unref(f);
}
END_TEST

Suite *suite_strict(void)
{
	Suite *s = suite_create("strict");
	TCase *t = tcase_create("strict");
	tcase_add_test(t, test_strict_refuses_advisory);
	tcase_add_test(t, test_not_strict_runs);
	tcase_add_test(t, test_strict_without_advisory_runs);
	tcase_add_test(t, test_strict_warn);
	suite_add_tcase(s, t);
	return s;
}
