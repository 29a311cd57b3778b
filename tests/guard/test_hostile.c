/* SPDX-License-Identifier: MIT */
/*
 * guard-hostile-client (hostile_client.c) under the guard: hosts that
 * restrict or hook the process around it.
 *
 *   seccomp   a profile denying process_vm_readv (and _writev; with
 *             EPERM or ENOSYS, or killing or trapping the caller; also
 *             a killing one installed after the guard's first copies):
 *             the guard's copies of the application's memory still
 *             serve it (common/usercopy.c)
 *   nocalls   process_vm_* and pipe2 denied: a submission's argument
 *             on the heap is copied with no system call where the CPU
 *             has hardware transactions, EFAULT elsewhere
 *   atfork    another library's fork handlers submit on the device:
 *             fork returns, their requests are decided as usual
 *   forkleak  a fork while another thread copies through the pipe: the
 *             child does not inherit the pipe
 *   fdhook    process_vm_* denied, the application's file dup2()ed onto
 *             every descriptor the guard makes, right after it is made:
 *             the guard's pipe is never in the application's table, so
 *             nothing of the application's is written or closed
 *   pidns     a new pid namespace, a bad pointer, then a fork: the
 *             guard's pipe task never becomes the namespace's init
 */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spawn.h"
#include "suites.h"
#include "usercopy.h"

#ifndef AG_HOSTILE_CLIENT
#error "AG_HOSTILE_CLIENT: the build defines it"
#endif

static char log_env[300];

static const char *log_to_scratch(void)
{
	snprintf(log_env, sizeof(log_env), "ARENAGUARD_LOG=%s",
		 scratch_path("guard.log"));
	return log_env;
}

/* A client that hangs is killed (SIGALRM survives the exec): the test
 * fails instead of waiting for Check's timeout.  10 s, times Check's
 * CK_TIMEOUT_MULTIPLIER as Check's own timeouts are (the kernel stage's
 * TCG VM sets 10: forkleak's 200 forks took over 10 s there under a
 * load average of 11, exit 142). */
static void bounded(void *arg)
{
	(void)arg;
	const char *m = getenv("CK_TIMEOUT_MULTIPLIER");
	long times = m ? strtol(m, NULL, 10) : 1;
	alarm(10 * (unsigned int)(times >= 1 && times <= 100 ? times : 1));
}

static void hostile(struct run *r, const char *const args[])
{
	const char *env[] = { PRELOAD_GUARD, log_to_scratch(), NULL };
	const char *argv[8] = { AG_HOSTILE_CLIENT };
	for (int i = 0; args[i] && i < 6; i++)
		argv[i + 1] = args[i];
	spawn_setup(r, env, argv, bounded, NULL);
	ck_assert_msg(r->status == 0, "guard-hostile-client exited %d\n"
		      "stdout:\n%s\nstderr:\n%s", r->status, r->out, r->err);
	ck_assert_msg(!strstr(r->out, "FAIL"), "%s", r->out);
}

/* Two blocked submissions, each with its own record, and no other. */
static void assert_two_records(const char *log)
{
	ck_assert_msg(count(log, "arenaguard: blocked submission of") == 2,
		      "%s", log);
	ck_assert_msg(strstr(log, "verdict 8 (D)"), "%s", log);
	ck_assert_msg(strstr(log, "(C) fails at launch 0"), "%s", log);
	ck_assert_msg(!strstr(log, "did not see"), "%s", log);
}

/* _i: 0 process_vm_readv denied (EPERM), 1 both calls (EPERM), 2 both
 * (ENOSYS), 3 both kill the process (SECCOMP_RET_KILL_PROCESS), 4 both
 * raise SIGSYS (SECCOMP_RET_TRAP): the application never makes them, so
 * the guard must not die of them either (usercopy.c tries them in a
 * child first); 5 both kill, the filter installed after copies off the
 * stack went through the guard (a guard that remembered "no filter"
 * from them would die); 6 pipe2 kills the process and process_vm_* are
 * allowed: a bad pointer's EFAULT, checked through a pipe, must not end
 * it (the pipe is made by a task of the guard's own, which dies); 7
 * process_vm_* and clone with CLONE_VFORK denied (EPERM): no task can
 * be made, the pipe is made in the process's own table. */
START_TEST(test_seccomp)
{
	static const char *const variant[] = { "readv", "both", "enosys",
					       "kill", "trap", "kill-late",
					       "kill-pipe2", "noclone" };
	struct run r;
	hostile(&r, (const char *[]){ "seccomp", variant[_i], NULL });
	char *log = slurp(scratch_path("guard.log"));
	assert_two_records(log);
	free(log);
	run_free(&r);
}
END_TEST

/* The argument of a submission on the heap, and no system call to
 * copy it with: copied in a hardware transaction where this CPU has
 * them (the guard in the client asks the same CPU), else EFAULT. */
START_TEST(test_nocalls)
{
	struct run r;
	hostile(&r, (const char *[]){ "nocalls",
				      usercopy_transactions() ? "tx" : "notx",
				      NULL });
	run_free(&r);
}
END_TEST

/* process_vm_* denied, a thread's copies going through the guard's
 * pipes while the main thread forks 500 times: no child is born holding
 * one (it would keep it for its life unless it execs). */
START_TEST(test_forkleak)
{
	struct run r;
	hostile(&r, (const char *[]){ "forkleak", NULL });
	run_free(&r);
}
END_TEST

/* process_vm_* denied, 200 reads of 8 KiB into the heap, each through
 * a pipe; the application's file dup2()ed onto every descriptor number
 * the guard (or the simulator) makes, right after it was made (the
 * deterministic form of tests/guard/repro/pipe_fd_race.sh): every read
 * is served, the file is never written, and stays at those numbers. */
START_TEST(test_fdhook)
{
	struct run r;
	hostile(&r, (const char *[]){ "fdhook", NULL });
	run_free(&r);
}
END_TEST

/* unshare(CLONE_NEWPID), bad pointers (EFAULT, checked through the
 * pipe), then fork: the fork's child is the namespace's init, and
 * fork works (a task of the guard's made first would have been its
 * init, and its exit would leave every later fork ENOMEM). */
START_TEST(test_pidns)
{
	struct run r;
	hostile(&r, (const char *[]){ "pidns", NULL });
	run_free(&r);
}
END_TEST

START_TEST(test_atfork)
{
	struct run r;
	hostile(&r, (const char *[]){ "atfork", NULL });
	char *log = slurp(scratch_path("guard.log"));
	ck_assert_msg(count(log, "arenaguard: blocked submission of") == 1,
		      "%s", log);
	ck_assert_msg(strstr(log, "(C) fails at launch 0"), "%s", log);
	ck_assert_msg(!strstr(log, "did not see"), "%s", log);
	free(log);
	run_free(&r);
}
END_TEST

static void teardown(void)
{
	scratch_remove();
}

Suite *suite_hostile(void)
{
	Suite *s = suite_create("hostile");
	TCase *t = tcase_create("hostile");
	tcase_set_timeout(t, 60);
	tcase_add_checked_fixture(t, NULL, teardown);
	tcase_add_loop_test(t, test_seccomp, 0, 8);
	tcase_add_test(t, test_nocalls);
	tcase_add_test(t, test_atfork);
	tcase_add_test(t, test_forkleak);
	tcase_add_test(t, test_fdhook);
	tcase_add_test(t, test_pidns);
	suite_add_tcase(s, t);
	return s;
}
