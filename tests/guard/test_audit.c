/* SPDX-License-Identifier: MIT */
/*
 * The audit's bug classes (audit.c), one test case per program: the
 * buggy plan gets the verdict and diagnostic derived by hand, its twins
 * certify; on the simulated device alone the buggy plan computes wrong
 * numbers where the twin computes the right ones (those of the private
 * plan, which shares no bytes); under the guard the buggy plan is blocked
 * with EPERM before the device runs it, and the log names the condition,
 * while the twin passes and computes the right numbers.
 *
 * The programs run in guard-client (`image FILE`) as children.  The
 * simulator's poisoning is off for the buggy runs: every class reads real
 * stale values, not uninitialized ones; the twin also runs poisoned, to
 * show that it reads no fresh plane before writing it.
 */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "spawn.h"
#include "suites.h"

static const char *plan_name(enum audit_plan plan)
{
	return plan == AUDIT_BUGGY ? "buggy" : plan == AUDIT_RIGHT ? "right"
								 : "private";
}

/* The program under the plan as a file in the scratch directory. */
static const char *image_file(const struct audit_prog *p,
			      enum audit_plan plan)
{
	char name[64];
	snprintf(name, sizeof(name), "%s-%s.img", p->name, plan_name(plan));
	const char *path = scratch_path(name);
	size_t len;
	uint8_t *image = p->image(plan, &len);
	FILE *f = fopen(path, "wb");
	ck_assert_msg(f, "cannot create %s", path);
	ck_assert_uint_eq(fwrite(image, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
	free(image);
	return path;
}

/* The verdict of the plan, with its diagnostic rendered into text. */
static uint64_t certify(const struct audit_prog *p, enum audit_plan plan,
			struct ac_diag *d, char *text, size_t len)
{
	size_t n;
	uint8_t *image = p->image(plan, &n);
	struct ac_model *m = NULL;
	struct ac_error err;
	ck_assert_msg(ac_model_read_image(image, n, &m, &err) == 0,
		      "%s %s: %s", p->name, plan_name(plan), err.message);
	free(image);
	ac_program *prog = ac_program_new(m, &err);
	ck_assert_msg(prog, "%s %s: %s", p->name, plan_name(plan),
		      err.message);
	ac_schedule *s = ac_schedule_new(prog);
	ck_assert_int_eq(ac_schedule_append(s, m->refs, m->n_refs, &err), 0);
	uint64_t verdict = ac_schedule_verdict(s, d);
	ac_diag_render(d, prog, text, len);
	ac_schedule_free(s);
	ac_program_free(prog);
	ac_model_free(m);
	return verdict;
}

#define SAME(field) \
	ck_assert_msg(got->field == want->field, "%s: " #field " is %llu, " \
		      "derived %llu\n%s", p->name, \
		      (unsigned long long)got->field, \
		      (unsigned long long)want->field, text)

static void same_tensor(const struct audit_prog *p, const char *text,
			const struct ac_tensor_ref *got,
			const struct ac_tensor_ref *want)
{
	SAME(phase);
	SAME(index);
}

/* The fields the failing condition and reason define. */
static void same_diag(const struct audit_prog *p, const char *text,
		      const struct ac_diag *got, const struct ac_diag *want)
{
	SAME(verdict);
	SAME(condition);
	SAME(reason);
	SAME(phase);
	if (want->condition == AC_COND_C) {
		SAME(launch);
		SAME(word);
		SAME(lo.high);
		SAME(lo.low);
		SAME(hi.high);
		SAME(hi.low);
		SAME(ordinal);
		SAME(window);
		for (int i = 0; i < 2; i++)
			same_tensor(p, text, &got->near[i], &want->near[i]);
		return;
	}
	for (int i = 0; i < 2; i++)
		same_tensor(p, text, &got->tensor[i], &want->tensor[i]);
	SAME(instance);
	SAME(start_launch);
	SAME(start_ordinal);
	SAME(earlier);
	SAME(earlier_phase);
	SAME(intervening);
}

START_TEST(test_verdict)
{
	const struct audit_prog *p = &audit_progs[_i];
	struct ac_diag d;
	char text[4096];
	certify(p, AUDIT_BUGGY, &d, text, sizeof(text));
	same_diag(p, text, &d, &p->expect);
	for (enum audit_plan plan = AUDIT_RIGHT; plan <= AUDIT_PRIVATE;
	     plan++) {
		uint64_t v = certify(p, plan, &d, text, sizeof(text));
		ck_assert_msg(v == 0, "%s %s: verdict %llu\n%s", p->name,
			      plan_name(plan), (unsigned long long)v, text);
	}
}
END_TEST

/* ---- on the device ---- */

/* guard-client runs the plan by ioctl or io_uring (path); expect is
 * what the environment does with a failing submission (block, run). */
static void run_plan(struct run *r, const struct audit_prog *p,
		     enum audit_plan plan, const char *const env[],
		     const char *path, const char *expect)
{
	const char *argv[] = { AG_GUARD_CLIENT, "--path", path, "--expect",
			       expect, "image", image_file(p, plan), NULL };
	spawn(r, env, argv);
	ck_assert_msg(r->status == 0 && !strstr(r->out, "FAIL"),
		      "%s %s: guard-client exited %d\nstdout:\n%s\nstderr:\n%s",
		      p->name, plan_name(plan), r->status, r->out, r->err);
}

/* The globals guard-client printed, one line each; free(). */
static char *globals_of(const struct run *r)
{
	const char *g = strstr(r->out, "global ");
	ck_assert_msg(g, "no globals in\n%s", r->out);
	return strdup(g);
}

/* The line of the global "out". */
static char *out_of(const struct run *r)
{
	const char *o = strstr(r->out, "global out:");
	ck_assert_msg(o, "no output in\n%s", r->out);
	return strndup(o, strcspn(o, "\n"));
}

static void expect_ran(const struct audit_prog *p, const struct run *r)
{
	ck_assert_msg(strstr(r->out, "submit: 0 (Success)\n"), "%s: %s",
		      p->name, r->out);
}

/* Without the guard: the buggy plan runs and its output differs from
 * the twin's, which is the private plan's, poisoned or not. */
START_TEST(test_unguarded)
{
	const struct audit_prog *p = &audit_progs[_i];
	const char *plain[] = { PRELOAD_SIM, NULL };
	const char *poisoned[] = { PRELOAD_SIM, "ARENASIM_POISON=1", NULL };
	struct run buggy, right, right_poisoned, priv;
	run_plan(&buggy, p, AUDIT_BUGGY, plain, "ioctl", "run");
	run_plan(&right, p, AUDIT_RIGHT, plain, "ioctl", "run");
	run_plan(&right_poisoned, p, AUDIT_RIGHT, poisoned, "ioctl", "run");
	run_plan(&priv, p, AUDIT_PRIVATE, plain, "ioctl", "run");
	expect_ran(p, &buggy);
	expect_ran(p, &right);

	char *want = globals_of(&priv);
	char *got = globals_of(&right);
	char *got_poisoned = globals_of(&right_poisoned);
	ck_assert_msg(!strcmp(got, want), "%s: the twin computes\n%s\nthe "
		      "private plan\n%s", p->name, got, want);
	ck_assert_msg(!strcmp(got_poisoned, want), "%s: the twin, poisoned, "
		      "computes\n%s\nthe private plan\n%s", p->name,
		      got_poisoned, want);
	char *wrong = out_of(&buggy), *good = out_of(&right);
	ck_assert_msg(strcmp(wrong, good), "%s: the buggy plan computes the "
		      "right output: %s", p->name, good);
	free(want);
	free(got);
	free(got_poisoned);
	free(wrong);
	free(good);
	run_free(&buggy);
	run_free(&right);
	run_free(&right_poisoned);
	run_free(&priv);
}
END_TEST

/* Whether every float of every global is 0: nothing ran. */
static int all_zero(const char *globals)
{
	char *next;
	for (const char *p = globals; (p = strchr(p, ':')) != NULL;)
		for (p++; *p == ' '; p = next)
			if (strtof(p, &next) != 0.0f || next == p)
				return 0;
	return 1;
}

/* Under the guard (enforce), by ioctl (_i even) and io_uring (odd). */
START_TEST(test_guarded)
{
	const struct audit_prog *p = &audit_progs[_i / 2];
	const char *path = _i % 2 ? "uring" : "ioctl";
	char log_env[300];
	snprintf(log_env, sizeof(log_env), "ARENAGUARD_LOG=%s",
		 scratch_path("guard.log"));
	const char *guard[] = { PRELOAD_GUARD, log_env, NULL };
	const char *plain[] = { PRELOAD_SIM, NULL };
	struct run buggy, right, priv;
	run_plan(&buggy, p, AUDIT_BUGGY, guard, path, "block");
	run_plan(&right, p, AUDIT_RIGHT, guard, path, "block");
	run_plan(&priv, p, AUDIT_PRIVATE, plain, path, "block");

	ck_assert_msg(strstr(buggy.out, "submit: -1 (Operation not "
				       "permitted)\n"), "%s: %s", p->name,
		      buggy.out);
	char *globals = globals_of(&buggy);
	ck_assert_msg(all_zero(globals), "%s: blocked, yet the device ran "
		      "it:\n%s", p->name, globals);

	struct ac_diag d;
	char text[4096], want[4200];
	uint64_t v = certify(p, AUDIT_BUGGY, &d, text, sizeof(text));
	char *log = slurp(scratch_path("guard.log"));
	ck_assert_msg(count(log, "arenaguard: blocked submission of") == 1,
		      "%s: %s", p->name, log);
	snprintf(want, sizeof(want), ": verdict %llu (%s)\n",
		 (unsigned long long)v, ac_condition_name(d.condition));
	ck_assert_msg(strstr(log, want), "%s: no '%s' in\n%s", p->name, want,
		      log);
	snprintf(want, sizeof(want), "\narenaguard:   %s\n", text);
	ck_assert_msg(strstr(log, want), "%s: no '%s' in\n%s", p->name, want,
		      log);
	ck_assert_msg(strstr(log, path[0] == 'i' ? ", ioctl, " : ", io_uring, "),
		      "%s", log);

	expect_ran(p, &right);
	char *got = globals_of(&right), *right_out = globals_of(&priv);
	ck_assert_msg(!strcmp(got, right_out), "%s: the twin under the guard "
		      "computes\n%s\nthe private plan\n%s", p->name, got,
		      right_out);
	free(globals);
	free(log);
	free(got);
	free(right_out);
	run_free(&buggy);
	run_free(&right);
	run_free(&priv);
}
END_TEST

static void teardown(void)
{
	scratch_remove();
}

Suite *suite_audit(void)
{
	Suite *s = suite_create("audit");
	for (int i = 0; i < (int)audit_n_progs; i++) {
		TCase *t = tcase_create(audit_progs[i].name);
		tcase_set_timeout(t, 300);
		tcase_add_checked_fixture(t, NULL, teardown);
		tcase_add_loop_test(t, test_verdict, i, i + 1);
		tcase_add_loop_test(t, test_unguarded, i, i + 1);
		tcase_add_loop_test(t, test_guarded, 2 * i, 2 * i + 2);
		suite_add_tcase(s, t);
	}
	return s;
}
