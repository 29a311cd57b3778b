/* SPDX-License-Identifier: MIT */
/*
 * The example client (arena-infer) under the guard, on the simulated
 * device, by ioctl and io_uring: the correct model runs and matches its
 * reference; the buggy planner's program is blocked with its verdict
 * (47, (D)) and diagnostic, or run and reported (warn), or left alone
 * (off); dumps reproduce the verdict with arena-certify; the arenaguard
 * launcher sets all of it up.
 */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spawn.h"
#include "suites.h"

#define BUGGY_HEADER "arenaguard: blocked submission of schedule 1 (program 1, fd "
#define BUGGY_VERDICT "verdict 47 (D)\n"
#define BUGGY_DIAG "arenaguard:   (D) fails at instance 6 (phase 'mlp_up'"

static const char *path_arg(int i)
{
	return i ? "--uring" : "-q";
}

static void infer(struct run *r, const char *const env[], const char *a,
		  const char *b, const char *c)
{
	const char *argv[] = { AG_ARENA_INFER, a, b, c, NULL };
	spawn(r, env, argv);
}

START_TEST(test_correct)
{
	struct run r;
	const char *env[] = { PRELOAD_GUARD, NULL };
	infer(&r, env, path_arg(_i), "--decode", "3");
	ck_assert_msg(r.status == 0, "exit %d\n%s\n%s", r.status, r.out, r.err);
	ck_assert_msg(strstr(r.out, "matches the reference"), "%s", r.out);
	ck_assert_msg(count(r.err, "arenaguard") == 0, "%s",
		      r.err);
	run_free(&r);
}
END_TEST

START_TEST(test_buggy_blocked)
{
	struct run r;
	const char *env[] = { PRELOAD_GUARD, NULL };
	infer(&r, env, path_arg(_i), "--buggy", NULL);
	/* 2: the device refused the submission; no output was computed. */
	ck_assert_msg(r.status == 2, "exit %d\n%s\n%s", r.status, r.out, r.err);
	ck_assert_msg(!strstr(r.out, "max abs error"), "%s", r.out);
	ck_assert_msg(strstr(r.err, BUGGY_HEADER), "%s", r.err);
	ck_assert_msg(strstr(r.err, _i ? ", io_uring, pid " : ", ioctl, pid "),
		      "%s", r.err);
	ck_assert_msg(strstr(r.err, BUGGY_VERDICT), "%s", r.err);
	ck_assert_msg(strstr(r.err, BUGGY_DIAG), "%s", r.err);
	ck_assert_msg(strstr(r.err, "carried plane 'xn'"), "%s", r.err);
	ck_assert_msg(strstr(r.err, "Operation not permitted"), "%s", r.err);
	run_free(&r);
}
END_TEST

START_TEST(test_buggy_warn)
{
	struct run r;
	const char *env[] = { PRELOAD_GUARD, "ARENAGUARD=warn",
			      "ARENAGUARD_STATS=1", NULL };
	infer(&r, env, path_arg(_i), "--buggy", "--decode=10");
	/* 1: it ran, and its output is wrong. */
	ck_assert_msg(r.status == 1, "exit %d\n%s\n%s", r.status, r.out, r.err);
	ck_assert_msg(strstr(r.out, "DOES NOT match"), "%s", r.out);
	ck_assert_int_eq(count(r.err, "arenaguard: warning: submitting "
			       "schedule 1"), 1);
	ck_assert_msg(strstr(r.err, BUGGY_VERDICT), "%s", r.err);
	ck_assert_msg(strstr(r.err, "warned 10,"), "%s", r.err);
	run_free(&r);
}
END_TEST

START_TEST(test_buggy_off)
{
	struct run r;
	const char *env[] = { PRELOAD_GUARD, "ARENAGUARD=off", NULL };
	infer(&r, env, path_arg(_i), "--buggy", NULL);
	ck_assert_msg(r.status == 1, "exit %d\n%s\n%s", r.status, r.out, r.err);
	ck_assert_msg(count(r.err, "arenaguard") == 0, "%s",
		      r.err);
	run_free(&r);
}
END_TEST

START_TEST(test_cache_hits)
{
	struct run r;
	const char *env[] = { PRELOAD_GUARD, "ARENAGUARD_STATS=1", NULL };
	infer(&r, env, path_arg(_i), "--decode", "25");
	ck_assert_msg(r.status == 0, "exit %d\n%s", r.status, r.err);
	ck_assert_msg(strstr(r.err, "programs certified 1, schedules "
			     "certified 1, cache hits 24 (programs 0, "
			     "verdicts 24), submissions 25, blocked 0"),
		      "%s", r.err);
	run_free(&r);
}
END_TEST

/* The dump is the program with its schedule: arena-certify gives the
 * verdict the guard gave. */
START_TEST(test_dump)
{
	struct run r;
	char dump_env[300];
	snprintf(dump_env, sizeof(dump_env), "ARENAGUARD_DUMP=%s", scratch());
	const char *env[] = { PRELOAD_GUARD, dump_env, NULL };
	infer(&r, env, path_arg(_i), "--buggy", NULL);
	const char *p = strstr(r.err, "render with: arena-certify ");
	ck_assert_msg(p, "%s", r.err);
	char file[512];
	ck_assert_int_eq(sscanf(p, "render with: arena-certify %511s", file), 1);
	ck_assert_msg(strstr(file, "verdict-47.img"), "%s", file);

	struct run c;
	const char *argv[] = { AG_ARENA_CERTIFY, file, NULL };
	spawn(&c, NULL, argv);
	ck_assert_msg(c.status == 1, "arena-certify exited %d: %s %s",
		      c.status, c.out, c.err);
	ck_assert_msg(strstr(c.out, ": verdict 47\n"), "%s", c.out);
	ck_assert_msg(strstr(c.out, "(D) fails at instance 6"), "%s", c.out);
	run_free(&c);
	run_free(&r);
}
END_TEST

/* ---- the launcher ---- */

START_TEST(test_launcher_blocks)
{
	struct run r;
	const char *log = scratch_path("log");
	const char *env[] = { PRELOAD_SIM, NULL };
	const char *argv[] = { AG_ARENAGUARD, "--log", log, "--",
			       AG_ARENA_INFER, "--buggy", path_arg(_i), NULL };
	spawn(&r, env, argv);
	ck_assert_msg(r.status == 2, "exit %d\n%s\n%s", r.status, r.out, r.err);
	ck_assert_msg(!strstr(r.err, "arenaguard: blocked"), "%s", r.err);
	char *text = slurp(log);
	ck_assert_msg(strstr(text, BUGGY_HEADER) && strstr(text, BUGGY_DIAG),
		      "%s", text);
	free(text);
	run_free(&r);
}
END_TEST

START_TEST(test_launcher_modes)
{
	static const char *modes[] = { "enforce", "warn", "off" };
	static const int status[] = { 2, 1, 1 };
	struct run r;
	const char *env[] = { PRELOAD_SIM, NULL };
	const char *argv[] = { AG_ARENAGUARD, "--mode", modes[_i], "--stats",
			       AG_ARENA_INFER, "--buggy", "-q", NULL };
	spawn(&r, env, argv);
	ck_assert_msg(r.status == status[_i], "exit %d\n%s\n%s", r.status,
		      r.out, r.err);
	ck_assert_int_eq(count(r.err, "arenaguard: stats (pid"), (_i == 2 ? 0 : 1));
	run_free(&r);
}
END_TEST

START_TEST(test_launcher_correct_dump)
{
	struct run r;
	const char *env[] = { PRELOAD_SIM, NULL };
	const char *argv[] = { AG_ARENAGUARD, "--dump", scratch(), "--",
			       AG_ARENA_INFER, "--uring", "-q", NULL };
	spawn(&r, env, argv);
	ck_assert_msg(r.status == 0, "exit %d\n%s\n%s", r.status, r.out, r.err);
	/* Nothing but the run's summary line. */
	ck_assert_msg(count(r.err, "arenaguard") == 1 &&
		      strstr(r.err, "arenaguard: SUMMARY: 1 submissions, 0 "
			     "blocked, 0 warned, 0 suppressed\n"), "%s", r.err);
	run_free(&r);
}
END_TEST

START_TEST(test_launcher_usage)
{
	struct run r;
	const char *none[] = { AG_ARENAGUARD, NULL };
	spawn(&r, NULL, none);
	ck_assert_int_eq(r.status, 125);
	run_free(&r);
	const char *bad[] = { AG_ARENAGUARD, "--mode", "loud", "true", NULL };
	spawn(&r, NULL, bad);
	ck_assert_int_eq(r.status, 125);
	ck_assert_msg(strstr(r.err, "--mode takes enforce, warn or off"), "%s",
		      r.err);
	run_free(&r);
	const char *missing[] = { AG_ARENAGUARD, "/nonexistent/program", NULL };
	spawn(&r, NULL, missing);
	ck_assert_int_eq(r.status, 127);
	run_free(&r);
	const char *help[] = { AG_ARENAGUARD, "--help", NULL };
	spawn(&r, NULL, help);
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, "Usage: arenaguard"), "%s", r.out);
	run_free(&r);
}
END_TEST

/* The environment the launcher gives its command. */
START_TEST(test_launcher_environment)
{
	struct run r;
	const char *env[] = { "LD_PRELOAD=" AG_PRELOAD_FIRST "/some/lib.so",
			      "ARENAGUARD_OPTIONS=stats=0", NULL };
	const char *log = scratch_path("L");
	const char *argv[] = { AG_ARENAGUARD, "--mode", "warn", "--log", log,
			       "--", "/usr/bin/env", NULL };
	spawn(&r, env, argv);
	ck_assert_int_eq(r.status, 0);
	/* The guard first, found in the build tree. */
	ck_assert_msg(strstr(r.out, "/shim/libarenaguard.so /some/lib.so\n"),
		      "%s", r.out);
	/* The caller's options as they were; the flags and the channel
	 * in the launcher's own variable, which the guard reads last. */
	ck_assert_msg(strstr(r.out, "\nARENAGUARD_OPTIONS=stats=0\n"), "%s",
		      r.out);
	ck_assert_msg(strstr(r.out, "\nARENAGUARD_LAUNCHER_OPTIONS=mode='warn':"
			     "log_path='"), "%s", r.out);
	char want[600];
	snprintf(want, sizeof(want), "log_path='%s':summary_file='", log);
	ck_assert_msg(strstr(r.out, want), "%s", r.out);
	run_free(&r);
}
END_TEST

static void teardown(void)
{
	scratch_remove();
}

Suite *suite_infer(void)
{
	Suite *s = suite_create("infer");
	TCase *t = tcase_create("infer");
	tcase_set_timeout(t, 300);
	tcase_add_checked_fixture(t, NULL, teardown);
	tcase_add_loop_test(t, test_correct, 0, 2);
	tcase_add_loop_test(t, test_buggy_blocked, 0, 2);
	tcase_add_loop_test(t, test_buggy_warn, 0, 2);
	tcase_add_loop_test(t, test_buggy_off, 0, 2);
	tcase_add_loop_test(t, test_cache_hits, 0, 2);
	tcase_add_loop_test(t, test_dump, 0, 2);
	tcase_add_loop_test(t, test_launcher_blocks, 0, 2);
	tcase_add_loop_test(t, test_launcher_modes, 0, 3);
	tcase_add_test(t, test_launcher_correct_dump);
	tcase_add_test(t, test_launcher_usage);
	tcase_add_test(t, test_launcher_environment);
	suite_add_tcase(s, t);
	return s;
}
