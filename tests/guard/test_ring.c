/* SPDX-License-Identifier: MIT */
/*
 * guard-ring-client (ring_client.c) under the guard and the simulated
 * device: the fd table's "not the device" never hides the device (a
 * reused number, a failed probe), every way files reach a slot, the SQ
 * index array, newer liburing's submit functions and ring moves, the
 * slot table under a registration race, and rings that change fd,
 * have none, or are shared across fork.
 */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spawn.h"
#include "suites.h"

#ifndef AG_RING_CLIENT
#error "the build defines AG_RING_CLIENT and AG_PROBEFAIL"
#endif

static char log_env[300];

static const char *log_env_of_scratch(void)
{
	snprintf(log_env, sizeof(log_env), "ARENAGUARD_LOG=%s",
		 scratch_path("guard.log"));
	return log_env;
}

/* guard-ring-client cmd [arg] under env; clean, with its log. */
static char *ring_client(struct run *r, const char *const env[],
			 const char *cmd, const char *arg)
{
	const char *argv[] = { AG_RING_CLIENT, cmd, arg, NULL };
	spawn(r, env, argv);
	ck_assert_msg(r->status == 0, "guard-ring-client %s exited %d\n"
		      "stdout:\n%s\nstderr:\n%s", cmd, r->status, r->out,
		      r->err);
	ck_assert_msg(!strstr(r->out, "FAIL"), "%s\nstderr:\n%s", r->out,
		      r->err);
	return slurp(scratch_path("guard.log"));
}

static void run_guarded(const char *cmd, const char *arg,
			const char *log_has)
{
	struct run r;
	const char *env[] = { PRELOAD_GUARD, log_env_of_scratch(), NULL };
	char *log = ring_client(&r, env, cmd, arg);
	if (log_has)
		ck_assert_msg(strstr(log, log_has), "log:\n%s", log);
	free(log);
	run_free(&r);
}

START_TEST(test_stale_notdev)
{
	run_guarded("stale", NULL, "blocked submission of");
}
END_TEST

START_TEST(test_probe_fails)
{
	static const char *const errs[][2] = { { "4", "1" },     /* EINTR */
					       { "13", "-1" } }; /* EACCES */
	char e[32], t[32];
	snprintf(e, sizeof(e), "PROBEFAIL_ERRNO=%s", errs[_i][0]);
	snprintf(t, sizeof(t), "PROBEFAIL_TIMES=%s", errs[_i][1]);
	const char *env[] = { "LD_PRELOAD=" AG_PRELOAD_FIRST AG_GUARD_LIB " "
			      AG_PROBEFAIL " " AG_ARENASIM,
			      log_env_of_scratch(), e, t, NULL };
	struct run r;
	char *log = ring_client(&r, env, "probefail", _i ? "EACCES" : "EINTR");
	ck_assert_msg(strstr(log, "but DRM_IOCTL_VERSION failed"), "%s", log);
	free(log);
	run_free(&r);
}
END_TEST

START_TEST(test_generic_register)
{
	run_guarded("register", NULL, "blocked submission of");
}
END_TEST

START_TEST(test_direct_open)
{
	run_guarded("directopen", scratch(),
		    "an earlier SQE may have put the device there");
}
END_TEST

static void teardown(void)
{
	scratch_remove();
}

Suite *suite_ring(void)
{
	Suite *s = suite_create("ring");
	TCase *t = tcase_create("ring");
	tcase_set_timeout(t, 300);
	tcase_add_checked_fixture(t, NULL, teardown);
	tcase_add_test(t, test_stale_notdev);
	tcase_add_loop_test(t, test_probe_fails, 0, 2);
	tcase_add_test(t, test_generic_register);
	tcase_add_test(t, test_direct_open);
	suite_add_tcase(s, t);
	return s;
}
