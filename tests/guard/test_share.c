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
 *   guard follows it;
 * - a vfork child's close_range(3, ~0U), then a record, round after
 *   round (guard-launched --vfork-leak): no descriptor leaks;
 * - a handler submitting while its thread is in the guard's probe, or
 *   in the driver's submit of a schedule the guard holds: refused with
 *   EDEADLK and a record, never run, no deadlock.
 */
#define _GNU_SOURCE
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spawn.h"
#include "suites.h"

#if !defined(AG_SHARE_CLIENT) || !defined(AG_SHARE_LIB) || \
    !defined(AG_SIGHOOK) || !defined(AG_LAUNCHED)
#error "the paths of guard-share-client, its libraries and guard-launched must be defined"
#endif

#define BLOCKED "arenaguard: blocked submission of"

/* argv under the guard (preload: the LD_PRELOAD entry) on a driver
 * without seals, its records in the log unless to_stderr, with `extra`
 * in its environment (or NULL); asserts a clean run and a blocked
 * submission recorded.  The records, to free. */
static char *guarded(const char *const argv[], const char *preload,
		     int to_stderr, const char *extra)
{
	char log_env[1100];
	snprintf(log_env, sizeof(log_env), "ARENAGUARD_LOG=%s",
		 scratch_path("guard.log"));
	const char *env[] = { preload, "ARENASIM_REQUIRE_SEAL=0", extra,
			      to_stderr ? NULL : log_env, NULL };
	if (!extra) {
		env[2] = env[3];
		env[3] = NULL;
	}
	struct run r;
	spawn(&r, env, argv);
	char *log = to_stderr ? strdup(r.err) : slurp(scratch_path("guard.log"));
	ck_assert_msg(r.status == 0 && !strstr(r.out, "FAIL"),
		      "%s %s exited %d\nstdout:\n%s\nstderr:\n%s\nrecords:\n%s",
		      argv[0], argv[1], r.status, r.out, r.err, log);
	ck_assert_msg(count(log, BLOCKED) >= 1, "%s: no record:\n%s\n%s",
		      argv[1], log, r.out);
	run_free(&r);
	return log;
}

/* guard-share-client cmd, as guarded() runs it. */
static char *share(const char *cmd, const char *preload, int to_stderr)
{
	const char *argv[] = { AG_SHARE_CLIENT, cmd, NULL };
	return guarded(argv, preload, to_stderr, NULL);
}

/* The subcommands of children sharing the memory, each run with its
 * records on the log and on standard error (the guard's copy of it must
 * survive the child's dup2 onto 2 and close_range). */
static const char *const children[] = {
	"vfork",         /* a vfork child's close */
	"vforkrange",    /* CPython's subprocess, in a vfork child */
	"vforkreopen",   /* a vfork child's own device at the parent's fd */
	"vforkshared",   /* a vfork child's work on the parent's device */
	"clonevm",       /* the same in a clone(CLONE_VM) child */
	"clonefiles",    /* clone(CLONE_VM|CLONE_FILES): the parent's close */
	"spawn",         /* posix_spawn with close actions */
	"rawfork",       /* a raw fork system call's child: its own state */
	"vforkrecord",   /* a record written in a vfork child that closed
			  * the guard's descriptors */
	/* kcmp denied by seccomp, as Docker's default profile does
	 * without CAP_SYS_PTRACE (it denies process_vm_readv too) */
	"nokcmp-vfork",
	"nokcmp-vforkrange",
	"nokcmp-vforkreopen",
	"nokcmp-spawn",
	"nokcmp-rawfork",
};

#define N_CHILDREN (sizeof(children) / sizeof(children[0]))

/* _i: child * 2 + whether the records go to standard error. */
START_TEST(test_children)
{
	printf("share %s, records on %s\n", children[_i / 2],
	       _i % 2 ? "stderr" : "the log");
	/* ThreadSanitizer's runtime cannot run instrumented code in a
	 * clone(CLONE_VM) child (it crashes there, guard or not); the
	 * other builds run these. */
	/* Nor does it vfork: its vfork is a fork, so a child's results
	 * in the shared memory (vforkreopen, vforkshared, vforkrecord)
	 * never reach the parent. */
	const char *name = children[_i / 2];
	if (!strncmp(name, "nokcmp-", 7))
		name += 7;
	if (strstr(AG_PRELOAD_FIRST, "tsan") &&
	    (!strncmp(name, "clone", 5) || !strcmp(name, "vforkreopen") ||
	     !strcmp(name, "vforkshared") || !strcmp(name, "vforkrecord"))) {
		printf("not under ThreadSanitizer\n");
		return;
	}
	free(share(children[_i / 2], PRELOAD_GUARD, _i % 2));
}
END_TEST

/* A pid namespace's init that unshares a new one and vforks: the child
 * is pid 1 there, the parent's number in its own.  Needs root (and
 * util-linux's unshare): skipped otherwise. */
START_TEST(test_pidns_vfork)
{
	if (geteuid() != 0 || access("/usr/bin/unshare", X_OK) != 0) {
		printf("pidnsvfork: not root, or no /usr/bin/unshare: skipped\n");
		return;
	}
	const char *argv[] = { "/usr/bin/unshare", "-pf", "--mount-proc",
			       AG_SHARE_CLIENT, "pidnsvfork", NULL };
	/* LeakSanitizer cannot run as a namespace's init (ASan build). */
	free(guarded(argv, PRELOAD_GUARD, 0, "ASAN_OPTIONS=detect_leaks=0"));
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
	const char *argv[] = { "/usr/bin/python3", "-c", script, AG_SHARE_LIB,
			       NULL };
	/* The interpreter's own leaks are not the guard's (an ASan build
	 * preloads its runtime into python3 too). */
	free(guarded(argv, PRELOAD_GUARD, 0, "ASAN_OPTIONS=detect_leaks=0"));
}
END_TEST

/* A vfork child's close_range(3, ~0U) before _exit (CPython's
 * subprocess, before exec) runs the guard's wrapper in the parent's
 * memory; then the parent's record, twice (guard-launched
 * --vfork-leak, which counts /proc/self/fd before and after): the
 * parent holds as many descriptors after as before (a wrapper in such a
 * child changes none of the guard's state: the parent's log is neither
 * given up nor reopened at a new number, one leaked per round), and
 * both records reach the log, or standard error (_i). */
START_TEST(test_vfork_no_fd_leak)
{
	const char *argv[] = { AG_LAUNCHED, "--vfork-leak", NULL };
	char *log = guarded(argv, PRELOAD_GUARD, _i, NULL);
	ck_assert_msg(count(log, BLOCKED) == 2, "%s", log);
	free(log);
}
END_TEST

START_TEST(test_handler_inside_guard)
{
	static const char *const cmds[] = { "handler", "handleruring",
					    "handlerringinit" };
	/* A sanitizer's runtime, preloaded first, takes calloc: the hook
	 * handlerringinit raises in never fires there. */
	if (_i == 2 && AG_PRELOAD_FIRST[0]) {
		printf("handlerringinit: not under a sanitizer\n");
		return;
	}
	char *log = share(cmds[_i],
			  "LD_PRELOAD=" AG_PRELOAD_FIRST AG_GUARD_LIB " "
			  AG_SIGHOOK " " AG_ARENASIM, 0);
	ck_assert_msg(strstr(log, "while its thread was inside the guard"),
		      "%s", log);
	free(log);
}
END_TEST

/* Under log_format=json: each refusal a "refused" line that parses. */
START_TEST(test_handler_json)
{
	char log_env[1100];
	snprintf(log_env, sizeof(log_env), "ARENAGUARD_LOG=%s",
		 scratch_path("guard.log"));
	const char *env[] = { "LD_PRELOAD=" AG_PRELOAD_FIRST AG_GUARD_LIB " "
			      AG_SIGHOOK " " AG_ARENASIM,
			      "ARENASIM_REQUIRE_SEAL=0",
			      "ARENAGUARD_OPTIONS=log_format=json", log_env,
			      NULL };
	const char *argv[] = { AG_SHARE_CLIENT, "handleruring", NULL };
	struct run r;
	spawn(&r, env, argv);
	char *log = slurp(scratch_path("guard.log"));
	ck_assert_msg(r.status == 0 && !strstr(r.out, "FAIL"),
		      "exited %d\n%s\n%s\n%s", r.status, r.out, r.err, log);
	int refused = 0;
	for (char *line = strtok(log, "\n"); line; line = strtok(NULL, "\n")) {
		json_error_t err;
		json_t *o = json_loads(line, 0, &err);
		ck_assert_msg(o, "not JSON: %s (%s)", line, err.text);
		const char *event = json_string_value(json_object_get(o, "event"));
		if (event && !strcmp(event, "refused")) {
			refused++;
			ck_assert_str_eq(json_string_value(json_object_get(
						 o, "errno")), "EDEADLK");
		}
		json_decref(o);
	}
	ck_assert_int_eq(refused, 2);
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
	tcase_add_loop_test(t, test_children, 0, (int)(2 * N_CHILDREN));
	tcase_add_test(t, test_python_subprocess);
	tcase_add_test(t, test_pidns_vfork);
	tcase_add_loop_test(t, test_vfork_no_fd_leak, 0, 2);
	tcase_add_loop_test(t, test_handler_inside_guard, 0, 3);
	tcase_add_test(t, test_handler_json);
	suite_add_tcase(s, t);
	return s;
}
