/* SPDX-License-Identifier: MIT */
/*
 * arena-infer on the simulated device: LD_PRELOAD=libarenasim.so, set
 * for the child only.  The correct plan matches the reference through
 * both submission paths, with and without poison; the buggy plan under
 * poison does not (exit 1).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "suites.h"

#ifndef AG_ARENA_INFER
#error "AG_ARENA_INFER must be defined by the build"
#endif
#ifndef AG_ARENASIM
#error "AG_ARENASIM must be defined by the build"
#endif

#define OUTPUT_MAX 65536

enum env { NO_SIM, SIM, SIM_POISON, SIM_REQUIRE_SEAL };

struct result {
	int status;            /* exit status, or -1 if killed */
	char output[OUTPUT_MAX];
};

static void child(int out, enum env env, char *const argv[])
{
	dup2(out, STDOUT_FILENO);
	dup2(out, STDERR_FILENO);
	close(out);
	unsetenv("ARENASIM_POISON");
	unsetenv("ARENASIM_REQUIRE_SEAL");
	unsetenv("LD_PRELOAD");
	if (env != NO_SIM)
		setenv("LD_PRELOAD", AG_PRELOAD_FIRST AG_ARENASIM, 1);
	if (env == SIM_POISON)
		setenv("ARENASIM_POISON", "1", 1);
	if (env == SIM_REQUIRE_SEAL)
		setenv("ARENASIM_REQUIRE_SEAL", "1", 1);
	execv(AG_ARENA_INFER, argv);
	_exit(127);
}

/* Runs arena-infer with the arguments after argv[0], capturing stdout and
 * stderr together. */
static void run_infer(struct result *r, enum env env, char *const argv[])
{
	int fds[2];
	ck_assert_int_eq(pipe(fds), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		child(fds[1], env, argv);
	}
	close(fds[1]);
	size_t len = 0;
	ssize_t n;
	while ((n = read(fds[0], r->output + len, OUTPUT_MAX - 1 - len)) > 0 ||
	       (n < 0 && errno == EINTR))
		if (n > 0)
			len += (size_t)n;
	r->output[len] = 0;
	close(fds[0]);
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void need_sim(void)
{
	ck_assert_msg(access(AG_ARENASIM, R_OK) == 0,
		      "the simulator is not built: %s", AG_ARENASIM);
}

#define INFER(r, env, ...) \
	run_infer(r, env, (char *const[]){ "arena-infer", __VA_ARGS__, NULL })

#define EXPECT(r, want)                                                  \
	ck_assert_msg((r)->status == (want), "exit %d, expected %d:\n%s", \
		      (r)->status, want, (r)->output)

static struct result r;   /* large: not on the stack */

START_TEST(ioctl_matches)
{
	need_sim();
	INFER(&r, SIM, "--quiet");
	EXPECT(&r, 0);
	ck_assert_ptr_nonnull(strstr(r.output, "matches the reference"));
}
END_TEST

START_TEST(uring_matches)
{
	need_sim();
	INFER(&r, SIM, "--uring", "--quiet");
	EXPECT(&r, 0);
}
END_TEST

START_TEST(ioctl_matches_under_poison)
{
	need_sim();
	INFER(&r, SIM_POISON, "--quiet");
	EXPECT(&r, 0);
}
END_TEST

START_TEST(uring_matches_under_poison)
{
	need_sim();
	INFER(&r, SIM_POISON, "--uring", "--quiet");
	EXPECT(&r, 0);
}
END_TEST

START_TEST(four_layers_sixteen_tokens_match)
{
	need_sim();
	INFER(&r, SIM_POISON, "--layers", "4", "--tokens", "16", "--quiet");
	EXPECT(&r, 0);
}
END_TEST

START_TEST(decode_resubmits)
{
	need_sim();
	INFER(&r, SIM_POISON, "--uring", "--decode", "5");
	EXPECT(&r, 0);
	ck_assert_ptr_nonnull(strstr(r.output, "ran 5 forward passes"));
}
END_TEST

START_TEST(buggy_ioctl_misses_under_poison)
{
	need_sim();
	INFER(&r, SIM_POISON, "--buggy", "--quiet");
	EXPECT(&r, 1);
	ck_assert_ptr_nonnull(strstr(r.output, "DOES NOT match"));
}
END_TEST

START_TEST(buggy_uring_misses_under_poison)
{
	need_sim();
	INFER(&r, SIM_POISON, "--buggy", "--uring", "--quiet");
	EXPECT(&r, 1);
}
END_TEST

/* The verbose report names the failing condition: 39 launches, instance
 * 6, so verdict 2 + 39 + 6. */
START_TEST(buggy_reports_its_verdict)
{
	need_sim();
	INFER(&r, SIM_POISON, "--buggy");
	EXPECT(&r, 1);
	ck_assert_ptr_nonnull(strstr(r.output, "certificate: verdict 47"));
	ck_assert_ptr_nonnull(strstr(r.output, "(D)"));
}
END_TEST

START_TEST(correct_reports_verdict_0)
{
	need_sim();
	INFER(&r, SIM, "--uring");
	EXPECT(&r, 0);
	ck_assert_ptr_nonnull(strstr(r.output, "certificate: verdict 0"));
}
END_TEST

/* A driver that requires sealed submissions refuses the unguarded
 * client's plain submit (ENOKEY), on both paths, and the client says
 * what to do: a device error, exit 2. */
START_TEST(require_seal_says_run_under_the_guard)
{
	need_sim();
	INFER(&r, SIM_REQUIRE_SEAL, "--quiet");
	EXPECT(&r, 2);
	ck_assert_ptr_nonnull(strstr(r.output, "requires sealed submissions: "
					       "run under the guard"));
	INFER(&r, SIM_REQUIRE_SEAL, "--uring", "--quiet");
	EXPECT(&r, 2);
	ck_assert_ptr_nonnull(strstr(r.output, "requires sealed submissions: "
					       "run under the guard"));
}
END_TEST

/* Without the simulator there is no /dev/accel/accel0 here: a device
 * error, exit 2. */
START_TEST(no_device_is_exit_2)
{
	if (access("/dev/accel/accel0", F_OK) == 0)
		return;   /* a real device: nothing to show */
	INFER(&r, NO_SIM, "--quiet");
	EXPECT(&r, 2);
}
END_TEST

START_TEST(usage_error_is_exit_2)
{
	INFER(&r, NO_SIM, "--layers", "0");
	EXPECT(&r, 2);
	INFER(&r, NO_SIM, "--bogus");
	EXPECT(&r, 2);
}
END_TEST

Suite *suite_device(void)
{
	Suite *s = suite_create("device");
	TCase *tc = tcase_create("sim");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, ioctl_matches);
	tcase_add_test(tc, uring_matches);
	tcase_add_test(tc, ioctl_matches_under_poison);
	tcase_add_test(tc, uring_matches_under_poison);
	tcase_add_test(tc, four_layers_sixteen_tokens_match);
	tcase_add_test(tc, decode_resubmits);
	tcase_add_test(tc, buggy_ioctl_misses_under_poison);
	tcase_add_test(tc, buggy_uring_misses_under_poison);
	tcase_add_test(tc, buggy_reports_its_verdict);
	tcase_add_test(tc, correct_reports_verdict_0);
	suite_add_tcase(s, tc);

	tc = tcase_create("cli");
	tcase_add_test(tc, require_seal_says_run_under_the_guard);
	tcase_add_test(tc, no_device_is_exit_2);
	tcase_add_test(tc, usage_error_is_exit_2);
	suite_add_tcase(s, tc);
	return s;
}
