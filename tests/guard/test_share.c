/* SPDX-License-Identifier: MIT */
/*
 * Children that share the guard's memory, and signal handlers inside
 * the guard (guard-share-client, share_client.c; docs/guard.md, "Threads
 * and fork" and "Async-signal safety"), on a driver without seals
 * (ARENASIM_REQUIRE_SEAL=0), where a failing submit the guard lets
 * through would run:
 *
 * - a vfork child's close, CPython's subprocess (dup2, close_range) in
 *   a vfork and in a clone(CLONE_VM) child, posix_spawn's close actions,
 *   and Debian's python3 running subprocess.run(["true"]): afterwards
 *   the parent's certified schedule runs and the failing one is refused
 *   with a record, on the log or on standard error;
 * - a clone(CLONE_VM|CLONE_FILES) child's close is the parent's: the
 *   guard follows it.
 */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spawn.h"
#include "suites.h"

#if !defined(AG_SHARE_CLIENT) || !defined(AG_SHARE_LIB) || \
    !defined(AG_SIGHOOK)
#error "the paths of guard-share-client and its libraries must be defined"
#endif

#define BLOCKED "arenaguard: blocked submission of"

/* guard-share-client cmd under the guard (preload: the LD_PRELOAD
 * entry), its records in the log unless to_stderr; asserts a clean run
 * and one blocked submission recorded.  The output, to free. */
static char *share(const char *cmd, const char *preload, int to_stderr)
{
	char log_env[1100];
	snprintf(log_env, sizeof(log_env), "ARENAGUARD_LOG=%s",
		 scratch_path("guard.log"));
	const char *env[] = { preload, "ARENASIM_REQUIRE_SEAL=0",
			      to_stderr ? NULL : log_env, NULL };
	const char *argv[] = { AG_SHARE_CLIENT, cmd, NULL };
	struct run r;
	spawn(&r, env, argv);
	char *log = to_stderr ? strdup(r.err) : slurp(scratch_path("guard.log"));
	ck_assert_msg(r.status == 0 && !strstr(r.out, "FAIL"),
		      "%s exited %d\nstdout:\n%s\nstderr:\n%s\nrecords:\n%s",
		      cmd, r.status, r.out, r.err, log);
	ck_assert_msg(count(log, BLOCKED) >= 1, "%s: no record:\n%s\n%s", cmd,
		      log, r.out);
	run_free(&r);
	return log;
}

START_TEST(test_vfork_close)
{
	free(share("vfork", PRELOAD_GUARD, 0));
}
END_TEST

/* Its records on standard error: the guard's copy of it must survive
 * the child's dup2 onto 2 and close_range. */
START_TEST(test_vfork_like_subprocess)
{
	free(share("vforkrange", PRELOAD_GUARD, 1));
	free(share("vforkrange", PRELOAD_GUARD, 0));
}
END_TEST

START_TEST(test_clone_vm)
{
	free(share("clonevm", PRELOAD_GUARD, 0));
	free(share("clonevm", PRELOAD_GUARD, 1));
}
END_TEST

START_TEST(test_clone_vm_files)
{
	free(share("clonefiles", PRELOAD_GUARD, 0));
}
END_TEST

START_TEST(test_posix_spawn)
{
	free(share("spawn", PRELOAD_GUARD, 0));
	free(share("spawn", PRELOAD_GUARD, 1));
}
END_TEST

/* CPython 3.11's subprocess forks with vfork; Debian's python3 drives
 * the device through ctypes and libguard-share.so. */
START_TEST(test_python_subprocess)
{
	static const char script[] =
		"import ctypes, subprocess, sys\n"
		"lib = ctypes.CDLL(sys.argv[1])\n"
		"if lib.share_setup() != 0: sys.exit(1)\n"
		"for i in range(3): subprocess.run(['true'], check=True)\n"
		"sys.exit(lib.share_check())\n";
	ck_assert_msg(access("/usr/bin/python3", X_OK) == 0,
		      "/usr/bin/python3 is needed (scripts/bootstrap)");
	char log_env[1100];
	snprintf(log_env, sizeof(log_env), "ARENAGUARD_LOG=%s",
		 scratch_path("guard.log"));
	const char *env[] = { PRELOAD_GUARD, "ARENASIM_REQUIRE_SEAL=0",
			      log_env, NULL };
	const char *argv[] = { "/usr/bin/python3", "-c", script, AG_SHARE_LIB,
			       NULL };
	struct run r;
	spawn(&r, env, argv);
	char *log = slurp(scratch_path("guard.log"));
	ck_assert_msg(r.status == 0 && !strstr(r.out, "FAIL"),
		      "python3 exited %d\nstdout:\n%s\nstderr:\n%s\nlog:\n%s",
		      r.status, r.out, r.err, log);
	ck_assert_msg(count(log, BLOCKED) == 1, "%s", log);
	free(log);
	run_free(&r);
}
END_TEST

static void teardown(void)
{
	scratch_remove();
}

Suite *suite_share(void)
{
	Suite *s = suite_create("share");
	TCase *t = tcase_create("share");
	tcase_add_checked_fixture(t, NULL, teardown);
	tcase_set_timeout(t, 60);
	tcase_add_test(t, test_vfork_close);
	tcase_add_test(t, test_vfork_like_subprocess);
	tcase_add_test(t, test_clone_vm);
	tcase_add_test(t, test_clone_vm_files);
	tcase_add_test(t, test_posix_spawn);
	tcase_add_test(t, test_python_subprocess);
	suite_add_tcase(s, t);
	return s;
}
