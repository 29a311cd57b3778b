/* SPDX-License-Identifier: MIT */
/*
 * guard-ring-client (ring_client.c) under the guard and the simulated
 * device: the fd table's "not the device" never hides the device (a
 * reused number, a failed probe), every way files reach a slot, the SQ
 * index array, newer liburing's submit functions and ring moves, the
 * slot table under a registration race, rings that change fd, have
 * none, or are shared across fork, and a ring the guard cannot see.
 */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "spawn.h"
#include "suites.h"

#ifndef AG_RING_CLIENT
#error "the build defines AG_RING_CLIENT and AG_PROBEFAIL"
#endif

static char log_env[300];

static uint64_t ag_test_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

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
	/* Every ring here is liburing's: none is called unseen. */
	ck_assert_msg(!strstr(log, "was set up without"), "log:\n%s", log);
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

/* A driver that answers the guard's SEAL with EINTR every time: the
 * guard asks a few times, then refuses each request with EINTR and says
 * why (at 97c4a30 it asked again without end: the client hung until
 * its alarm, exit 142). */
START_TEST(test_seal_interrupted)
{
	const char *env[] = { "LD_PRELOAD=" AG_PRELOAD_FIRST AG_GUARD_LIB " "
			      AG_PROBEFAIL " " AG_ARENASIM,
			      log_env_of_scratch(), "PROBEFAIL_REQUEST=seal",
			      "PROBEFAIL_ERRNO=4", "PROBEFAIL_TIMES=-1", NULL };
	struct run r;
	char *log = ring_client(&r, env, "probefail", "EINTR-always");
	ck_assert_msg(count(log, "the driver answered DRM_IOCTL_ARENA_SEAL "
			    "on fd ") == 1 &&
		      strstr(log, " with EINTR 4 times in a row"),
		      "%s", log);
	free(log);
	run_free(&r);
}
END_TEST

/* No ioctl reaches a character device that cannot be the arena's
 * (/dev/null, /dev/zero), whichever way it meets the guard: registered,
 * updated into a slot by the function and by an SQE, sent a URING_CMD or
 * an arena ioctl.  The device itself is probed (the list works). */
START_TEST(test_no_probe_of_other_devices)
{
	char probes[300], plog[320];
	snprintf(probes, sizeof(probes), "%s", scratch_path("probes"));
	snprintf(plog, sizeof(plog), "PROBEFAIL_LOG=%s", probes);
	const char *env[] = { "LD_PRELOAD=" AG_PRELOAD_FIRST AG_GUARD_LIB " "
			      AG_PROBEFAIL " " AG_ARENASIM,
			      log_env_of_scratch(), plog, NULL };
	struct run r;
	char *log = ring_client(&r, env, "noprobe", NULL);
	free(log);
	char *seen = slurp(probes);
	ck_assert_msg(strstr(seen, "261:0\n"), "probes:\n%s", seen);
	for (char *line = seen; *line; line = strchr(line, '\n') + 1)
		ck_assert_msg(!strncmp(line, "261:", 4), "a probe of another "
			      "file than the device: %s", seen);
	free(seen);
	run_free(&r);
}
END_TEST

/* A registration whose probe of a new device fd takes 1.5 s stalls no
 * other thread's SQE that changes the ring's slots (the probe is made
 * with no slot lock held). */
START_TEST(test_slow_probe_stalls_nothing)
{
	const char *env[] = { "LD_PRELOAD=" AG_PRELOAD_FIRST AG_GUARD_LIB " "
			      AG_PROBEFAIL " " AG_ARENASIM,
			      log_env_of_scratch(), "PROBEFAIL_SLEEP_MS=1500",
			      NULL };
	struct run r;
	char *log = ring_client(&r, env, "slowprobe", NULL);
	free(log);
	run_free(&r);
}
END_TEST

/* rawwait: a registration made while another thread waits 1.5 s for
 * completions in a raw io_uring_enter that submitted a command on a
 * registered slot is not held for that wait (at 2fc1b58 the enter's
 * walk was counted through its wait: the registration waited a second,
 * then went ahead, said "waited a second"). */
START_TEST(test_raw_enter_wait_split)
{
	struct run r;
	const char *env[] = { PRELOAD_GUARD, log_env_of_scratch(), NULL };
	char *log = ring_client(&r, env, "rawwait", NULL);
	ck_assert_msg(strstr(log, "blocked submission of") &&
		      !strstr(log, "waited a second"), "log:\n%s", log);
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

START_TEST(test_sq_array)
{
	run_guarded("sqarray", NULL, "blocked submission of");
}
END_TEST

START_TEST(test_newer_liburing)
{
	run_guarded("newsubmit", NULL, "blocked submission of");
}
END_TEST

START_TEST(test_resize_keeps_slots)
{
	run_guarded("resize", NULL, "blocked submission of");
}
END_TEST

START_TEST(test_registration_race)
{
	run_guarded("regrace", NULL, NULL);
}
END_TEST

/* No ring's walk is another's: quick, and no SQE is called unseen. */
static void quiet_rings(const char *cmd)
{
	struct run r;
	const char *env[] = { PRELOAD_GUARD, log_env_of_scratch(),
			      "ARENAGUARD_STATS=1", NULL };
	uint64_t t0 = ag_test_now_ns();
	char *log = ring_client(&r, env, cmd, NULL);
	uint64_t ns = ag_test_now_ns() - t0;
	ck_assert_msg(!strstr(log, "reached the kernel without"), "%s", log);
	ck_assert_msg(!strstr(log, "was set up without"), "%s", log);
	ck_assert_msg(!strstr(r.err, "reached the kernel without"), "%s",
		      r.err);
	ck_assert_msg(strstr(log, "unchecked SQEs 0,"), "%s", log);
	/* Without the guard each takes milliseconds. */
	ck_assert_msg(ns < 5000000000ull, "%s took %.1f s", cmd, ns / 1e9);
	free(log);
	run_free(&r);
}

START_TEST(test_ring_fd_dup)
{
	quiet_rings("ringdup");
}
END_TEST

START_TEST(test_rings_without_fd)
{
	quiet_rings("nofd");
}
END_TEST

START_TEST(test_ring_across_fork)
{
	quiet_rings("acrossfork");
}
END_TEST

/* A raw fork's child on the ring its parent tore down, the parent on its
 * next ring with the same shared page: no SQE called unseen. */
START_TEST(test_raw_fork_kept_page)
{
	quiet_rings("rawforkpage");
}
END_TEST

START_TEST(test_msg_ring_send_fd)
{
	run_guarded("msgring", NULL,
		    "an earlier SQE may have put the device there");
}
END_TEST

START_TEST(test_unseen_ring_said)
{
	struct run r;
	const char *env[] = { PRELOAD_GUARD, log_env_of_scratch(), NULL };
	char *log = ring_client(&r, env, "rawring", NULL);
	ck_assert_msg(count(log, "was set up without the liburing functions")
		      == 1, "log:\n%s", log);
	free(log);
	run_free(&r);
}
END_TEST

/* A raw ring inherited by 20 forked children: said once by the process
 * tree (whichever process looks first), not by each child (issue 32). */
/* guard-ring-client cmd says "unseen ring" `times` times, "and more"
 * `more` times. */
static void unseen_said_times(const char *cmd, int times, int more)
{
	struct run r;
	const char *env[] = { PRELOAD_GUARD, log_env_of_scratch(), NULL };
	char *log = ring_client(&r, env, cmd, NULL);
	int said = count(log, "was set up without the liburing functions") +
		   count(r.err, "was set up without the liburing functions");
	int and_more = count(log, "(and more: ") + count(r.err, "(and more: ");
	ck_assert_msg(said == times && and_more == more, "%s: said %d times "
		      "(%d and more), not %d (%d); log:\n%s\nstderr:\n%s", cmd,
		      said, and_more, times, more, log, r.err);
	free(log);
	run_free(&r);
}

START_TEST(test_unseen_ring_once_per_tree)
{
	unseen_said_times("rawforks", 1, 0);
}
END_TEST

/* Every unseen ring said, each once per tree (ea8c6bb said 1 in each):
 * 0, a child's own raw ring set up after its parent said the parent's
 * (the child inherited "said" and looked no more); 1, two raw rings in
 * one process (the look stopped at one); 2, 70 raw rings, the bounded
 * set's 63 said, then "and more" once, and no further one. */
START_TEST(test_unseen_ring_each_said)
{
	static const struct {
		const char *cmd;
		int times, more;
	} cases[] = { { "rawchild", 2, 0 }, { "rawtwo", 2, 0 },
		      { "rawmany", 64, 1 } };
	unseen_said_times(cases[_i].cmd, cases[_i].times, cases[_i].more);
}
END_TEST

/* liburing loaded by dlopen after the guard's start (0: RTLD_GLOBAL; 1:
 * a plugin's, RTLD_LOCAL), and its functions called through the global
 * scope (the guard's wrappers):
 * the guard finds liburing's at their first call, sets the ring up
 * and knows it (no "unseen" notice).  At fe3b725 the guard had looked
 * liburing up once, at start, and answered -ENOSYS ever after. */
START_TEST(test_uring_dlopened)
{
	struct run r;
	const char *env[] = { "LD_PRELOAD=" AG_PRELOAD_FIRST AG_GUARD_LIB,
			      log_env_of_scratch(), NULL };
	/* 0: liburing itself, RTLD_GLOBAL; 1: a plugin linked against it,
	 * RTLD_LOCAL (as CPython loads an extension), whose liburing
	 * RTLD_NEXT does not see. */
	const char *argv[] = { AG_DLOPEN_URING, _i ? AG_URING_PLUGIN : NULL,
			       NULL };
	spawn(&r, env, argv);
	ck_assert_msg(r.status == 0 && strstr(r.out, "ok"), "guard-dlopen-uring "
		      "exited %d\nstdout:\n%s\nstderr:\n%s", r.status, r.out,
		      r.err);
	char *log = slurp(scratch_path("guard.log"));
	ck_assert_msg(!strstr(log, "was set up without"), "log:\n%s", log);
	free(log);
	run_free(&r);
}
END_TEST

/* A library preloaded ahead of the guard that defines some of its
 * functions is said once, with those functions, and the guard's
 * own names are not taken for another object's (bypass.c tells them by
 * the guard's segments). */
START_TEST(test_bypass_said)
{
	struct run r;
	const char *env[] = { "LD_PRELOAD=" AG_PRELOAD_FIRST AG_DUPHOOK " "
			      AG_GUARD_LIB, NULL };
	const char *argv[] = { AG_DLOPEN_URING, NULL };
	spawn(&r, env, argv);
	ck_assert_msg(r.status == 0, "exited %d\nstderr:\n%s", r.status,
		      r.err);
	/* A sanitizer's runtime, preloaded first (AG_PRELOAD_FIRST), may
	 * intercept what the duphook defines (ASan ioctl, TSan ioctl, dup2
	 * and dup3), and is not a bypass: its interceptors call the next,
	 * the duphook's, so fewer names, or none, are said there. */
	int sanitized = AG_PRELOAD_FIRST[0] != 0;
	int said = count(r.err, "before the guard");
	ck_assert_msg(said <= 1 && (said == 1 || sanitized), "said %d times; "
		      "stderr:\n%s", said, r.err);
	ck_assert_msg(!said || strstr(r.err, "libguard-duphook.so defines "),
		      "stderr:\n%s", r.err);
	ck_assert_msg(sanitized ||
		      strstr(r.err, "defines ioctl, dup2, dup3 before the guard"),
		      "stderr:\n%s", r.err);
	run_free(&r);
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
	tcase_add_test(t, test_seal_interrupted);
	tcase_add_test(t, test_generic_register);
	tcase_add_test(t, test_direct_open);
	tcase_add_test(t, test_sq_array);
	tcase_add_test(t, test_newer_liburing);
	tcase_add_test(t, test_resize_keeps_slots);
	tcase_add_test(t, test_registration_race);
	tcase_add_test(t, test_no_probe_of_other_devices);
	tcase_add_test(t, test_slow_probe_stalls_nothing);
	tcase_add_test(t, test_raw_enter_wait_split);
	tcase_add_test(t, test_ring_fd_dup);
	tcase_add_test(t, test_rings_without_fd);
	tcase_add_test(t, test_ring_across_fork);
	tcase_add_test(t, test_raw_fork_kept_page);
	tcase_add_test(t, test_unseen_ring_said);
	tcase_add_loop_test(t, test_uring_dlopened, 0, 2);
	tcase_add_test(t, test_bypass_said);
	tcase_add_test(t, test_unseen_ring_once_per_tree);
	tcase_add_loop_test(t, test_unseen_ring_each_said, 0, 3);
	tcase_add_test(t, test_msg_ring_send_fd);
	suite_add_tcase(s, t);
	return s;
}
