/* SPDX-License-Identifier: MIT */
/*
 * What the guard's records say (docs/guard.md, "JSON records" and
 * "Suppressions"): log_format=json (every line of the log parses, with
 * arena-certify --json's fields and the guard's), suppression rules
 * (matched, unmatched, bad, print_suppressions, the launcher's gate),
 * records for malformed images and appends on both paths, the
 * repeats said at exit, threads=2 giving threads=1's record, and an
 * application that gives jansson an allocator of its own.
 */
#define _GNU_SOURCE
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include <arenaguard/certify.h>

#include "progs.h"
#include "spawn.h"
#include "suites.h"
#include "workload.h"

/* Every line of text, parsed; each must be a JSON object (strings may
 * hold \u0000: guard-json-big's names do).  Returns
 * them as an array (json_decref). */
static json_t *json_lines(const char *text)
{
	json_t *all = json_array();
	for (const char *l = text; *l;) {
		const char *nl = strchr(l, '\n');
		ck_assert_msg(nl, "a record without its newline: %.300s", l);
		json_error_t e;
		json_t *o = json_loadb(l, (size_t)(nl - l), JSON_ALLOW_NUL, &e);
		/* (\u0000 is JSON; at most 300 bytes of the line are
		 * said: check's messages are bounded.) */
		ck_assert_msg(o && json_is_object(o), "not a JSON object (%s) "
			      "at byte %d of a line of %zu bytes: %.300s",
			      e.text, e.position, (size_t)(nl - l), l);
		json_array_append_new(all, o);
		l = nl + 1;
	}
	return all;
}

/* The first object of lines whose "event" is event, or NULL. */
static json_t *event(json_t *lines, const char *name)
{
	size_t i;
	json_t *o;
	json_array_foreach(lines, i, o) {
		const char *e = json_string_value(json_object_get(o, "event"));
		if (e && !strcmp(e, name))
			return o;
	}
	return NULL;
}

static const char *str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	ck_assert_msg(s, "no string %s", key);
	return s;
}

static json_int_t num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	ck_assert_msg(json_is_integer(v), "no integer %s", key);
	return json_integer_value(v);
}

/* arena-infer --buggy under the guard, its records in a log (and dumps
 * in a directory): every line parses; the record holds the verdict's
 * fields and the guard's; a bad option is a JSON notice; the summary
 * is an object too. */
START_TEST(test_json_records)
{
	char opt[1024];
	const char *log = scratch_path("log.json");
	const char *dumps = scratch();
	snprintf(opt, sizeof(opt), "ARENAGUARD_OPTIONS=log_format=json:"
		 "log_path=%s:dump_dir=%s:colour=1", log, dumps);
	const char *env[] = { PRELOAD_GUARD, opt, NULL };
	const char *argv[] = { AG_ARENA_INFER, "--buggy", "-q", NULL };
	struct run r;
	spawn(&r, env, argv);
	ck_assert_msg(r.status != 0, "the buggy program was blocked");
	char *text = slurp(log);
	json_t *lines = json_lines(text);
	json_t *rec = event(lines, "blocked");
	ck_assert_msg(rec, "%s", text);
	ck_assert_int_eq(num(rec, "verdict"), 47);
	ck_assert_str_eq(str(rec, "condition"), "D");
	ck_assert_str_eq(str(rec, "reason"), "carried-overwritten");
	ck_assert_int_eq(num(rec, "instance"), 6);
	ck_assert_str_eq(str(json_object_get(rec, "plane"), "name"), "xn");
	ck_assert_str_eq(str(rec, "exe"), "arena-infer");
	ck_assert_str_eq(str(rec, "path"), "ioctl");
	ck_assert_str_eq(str(rec, "mode"), "enforce");
	ck_assert_int_gt(num(rec, "pid"), 0);
	ck_assert_int_ge(num(rec, "fd"), 0);
	ck_assert_int_ge(num(rec, "schedule"), 1);
	ck_assert_int_ge(num(rec, "program"), 1);
	ck_assert_int_ge(num(rec, "schedule_length"), 1);
	const char *digest = str(rec, "digest");
	ck_assert_uint_eq(strlen(digest), 32);
	ck_assert_uint_eq(strspn(digest, "0123456789abcdef"), 32);
	char want[128];
	snprintf(want, sizeof(want), "%s:47", digest);
	ck_assert_str_eq(str(rec, "signature"), want);
	snprintf(want, sizeof(want), "digest:%s condition:D", digest);
	ck_assert_str_eq(str(rec, "suppress"), want);
	ck_assert_msg(strstr(str(rec, "explanation"), "(D) fails at instance 6"),
		      "%s", text);
	ck_assert_int_eq(access(str(rec, "dump"), R_OK), 0);
	/* The time: ISO 8601, UTC, milliseconds. */
	const char *when = str(rec, "time");
	ck_assert_uint_eq(strlen(when), 24);
	ck_assert_int_eq(when[10], 'T');
	ck_assert_int_eq(when[23], 'Z');
	json_t *note = event(lines, "notice");
	ck_assert_msg(note && strstr(str(note, "message"), "colour is not an "
				     "option"), "%s", text);
	json_t *sum = event(lines, "summary");
	ck_assert_msg(sum, "%s", text);
	ck_assert_int_eq(num(sum, "blocked"), 1);
	ck_assert_int_eq(num(sum, "suppressed"), 0);
	json_decref(lines);
	free(text);
	run_free(&r);
}
END_TEST

/* Writes a suppressions file in the scratch directory; its path. */
static const char *rules(const char *text)
{
	const char *path = scratch_path("rules.supp");
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return path;
}

/* The digest the guard gives the buggy program (from its record). */
static char *buggy_digest(void)
{
	const char *env[] = { PRELOAD_GUARD, "ARENAGUARD_OPTIONS=log_format=json",
			      NULL };
	const char *argv[] = { AG_ARENA_INFER, "--buggy", "-q", NULL };
	struct run r;
	spawn(&r, env, argv);
	const char *at = strstr(r.err, "\"digest\": \"");
	ck_assert_msg(at, "%s", r.err);
	char *d = strndup(at + 11, 32);
	run_free(&r);
	return d;
}

/* A rule by digest (a prefix) and condition: the failing schedule is
 * submitted (it runs, so the output is wrong: exit 1), counted as
 * suppressed, unrecorded; the launcher's gate stays open; the rules that
 * matched nothing and the bad ones are said, with their lines. */
START_TEST(test_suppressed_by_digest)
{
	char *digest = buggy_digest();
	char text[1024], opt[600];
	snprintf(text, sizeof(text),
		 "# the buggy planner: known, fixed in the next release\n"
		 "\n"
		 "digest:%.12s condition:D   # a prefix of the digest\n"
		 "phase:no-such-phase\n"
		 "condition:E\n"
		 "digest:%s condition:C\n", digest, digest);
	snprintf(opt, sizeof(opt), "suppressions=%s", rules(text));
	const char *env[] = { PRELOAD_SIM, NULL };
	for (int uring = 0; uring < 2; uring++) {
		const char *argv[] = { AG_ARENAGUARD, "--error-exitcode", "9",
				       "--suppressions", rules(text), "--",
				       AG_ARENA_INFER, "--buggy", "-q",
				       uring ? "--uring" : NULL, NULL };
		struct run r;
		spawn(&r, env, argv);
		ck_assert_msg(r.status == 1, "exit %d\n%s", r.status, r.err);
		ck_assert_msg(strstr(r.out, "DOES NOT match"), "%s", r.out);
		ck_assert_msg(strstr(r.err, "arenaguard: SUMMARY: 1 submissions, "
				     "0 blocked, 0 warned, 1 suppressed\n"),
			      "%s", r.err);
		ck_assert_msg(!strstr(r.err, "verdict 47"), "%s", r.err);
		ck_assert_msg(strstr(r.err, "rules.supp:4 matched nothing: "
				     "phase:no-such-phase\n"), "%s", r.err);
		ck_assert_msg(strstr(r.err, "rules.supp:6 matched nothing: "),
			      "%s", r.err);
		ck_assert_msg(strstr(r.err, "rules.supp:5: condition:E: not A, "
				     "B, A/B, C or D; the rule is ignored"),
			      "%s", r.err);
		ck_assert_msg(!strstr(r.err, "rules.supp:3 matched nothing"),
			      "%s", r.err);
		run_free(&r);
	}
	free(digest);
}
END_TEST

/* Rules by phase and plane (wildcards), print_suppressions; a rule
 * for another condition does not match: blocked as before. */
START_TEST(test_suppressed_by_names)
{
	char opt[600];
	snprintf(opt, sizeof(opt), "ARENAGUARD_OPTIONS=suppressions=%s:"
		 "print_suppressions=1", rules("plane:x? phase:mlp_*\n"
					       "plane:xn condition:C\n"));
	const char *env[] = { PRELOAD_GUARD, opt, NULL };
	const char *argv[] = { AG_ARENA_INFER, "--buggy", "-q", NULL };
	struct run r;
	spawn(&r, env, argv);
	ck_assert_msg(strstr(r.err, "SUMMARY: 1 submissions, 0 blocked, "
			     "0 warned, 1 suppressed\n"), "%s", r.err);
	ck_assert_msg(strstr(r.err, "rules.supp:1 matched 1 time: plane:x? "
			     "phase:mlp_*\n"), "%s", r.err);
	ck_assert_msg(strstr(r.err, "rules.supp:2 matched 0 times: "),
		      "%s", r.err);
	run_free(&r);
	snprintf(opt, sizeof(opt), "ARENAGUARD_OPTIONS=suppressions=%s",
		 rules("plane:xn condition:C\nphase:qkv_nothing\n"));
	spawn(&r, env, argv);
	ck_assert_msg(strstr(r.err, "SUMMARY: 1 submissions, 1 blocked, "
			     "0 warned, 0 suppressed\n"), "%s", r.err);
	ck_assert_msg(strstr(r.err, "to suppress, the rule: digest:"), "%s",
		      r.err);
	run_free(&r);
	/* A file that cannot be read is said; nothing is suppressed. */
	const char *missing[] = { PRELOAD_GUARD,
		"ARENAGUARD_OPTIONS=suppressions=/nonexistent/rules", NULL };
	spawn(&r, missing, argv);
	ck_assert_msg(strstr(r.err, "cannot read the suppressions "
			     "/nonexistent/rules: No such file"), "%s", r.err);
	ck_assert_msg(strstr(r.err, "1 blocked"), "%s", r.err);
	run_free(&r);
}
END_TEST

/* Only verdicts are suppressed: a schedule the guard never saw is
 * blocked whatever the rules say. */
START_TEST(test_undecided_not_suppressed)
{
	char opt[600];
	snprintf(opt, sizeof(opt), "ARENAGUARD_OPTIONS=suppressions=%s",
		 rules("condition:A/B\ncondition:C\ncondition:D\nplane:*\n"));
	const char *env[] = { PRELOAD_GUARD, opt, NULL };
	struct run r;
	client(&r, env, (const char *[]){ "unknown", NULL });
	assert_clean(&r);
	ck_assert_msg(strstr(r.err, "cannot certify"), "%s", r.err);
	run_free(&r);
}
END_TEST

/* A malformed image and a malformed append get a record each, on both
 * paths, saying what and where; as JSON too. */
START_TEST(test_malformed_records)
{
	static const char *const paths[] = { "ioctl", "uring" };
	for (int i = 0; i < 2; i++) {
		const char *env[] = { PRELOAD_GUARD, NULL };
		struct run r;
		client(&r, env, (const char *[]){ "--path", paths[i],
						  "malformed", NULL });
		assert_clean(&r);
		ck_assert_msg(strstr(r.err, "arenaguard: PROGRAM_CREATE (fd ")
			      && strstr(r.err, "malformed program image: byte "
					"8 (header.version)"), "%s", r.err);
		ck_assert_msg(strstr(r.err, "the driver refused it: Invalid "
				     "argument"), "%s", r.err);
		ck_assert_msg(strstr(r.err, "arenaguard: SCHEDULE_APPEND to "
				     "schedule 1 (program ") &&
			      strstr(r.err, "malformed references: "
				     "schedule[0]: [1000, +1) is not inside the "
				     "launch table"), "%s", r.err);
		ck_assert_msg(strstr(r.err, i ? ", io_uring, pid " : ", ioctl, pid "),
			      "%s", r.err);
		run_free(&r);
		const char *json[] = { PRELOAD_GUARD,
				       "ARENAGUARD_OPTIONS=log_format=json", NULL };
		client(&r, json, (const char *[]){ "--path", paths[i],
						   "malformed", NULL });
		assert_clean(&r);
		const char *first = strchr(r.err, '{');
		ck_assert_ptr_nonnull(first);
		json_t *lines = json_lines(first);
		ck_assert_uint_eq(json_array_size(lines), 2);
		json_t *img = json_array_get(lines, 0);
		json_t *app = json_array_get(lines, 1);
		ck_assert_str_eq(str(img, "event"), "malformed");
		ck_assert_str_eq(str(img, "request"), "PROGRAM_CREATE");
		ck_assert_str_eq(str(app, "request"), "SCHEDULE_APPEND");
		ck_assert_int_eq(num(app, "schedule"), 1);
		ck_assert_int_eq(num(app, "schedule_length"), 0);
		ck_assert_msg(strstr(str(app, "error"), "schedule[0]"), "%s",
			      r.err);
		json_decref(lines);
		run_free(&r);
	}
}
END_TEST

/* One record per program and verdict; the rest are counted and said
 * at exit. */
START_TEST(test_repeats_said)
{
	const char *env[] = { PRELOAD_GUARD, NULL };
	struct run r;
	client(&r, env, (const char *[]){ "resubmit", "5", NULL });
	assert_clean(&r);
	ck_assert_int_eq(count(r.err, "blocked submission of"), 1);
	ck_assert_msg(strstr(r.err, "arenaguard: 4 further refusals like one "
			     "recorded were not recorded again"), "%s", r.err);
	run_free(&r);
}
END_TEST

/* A child that hangs is killed (SIGALRM: status 128 + 14), failing the
 * test instead of hanging it. */
static void hang_alarm(void *arg)
{
	(void)arg;
	alarm(60);
}

/* arena-infer --buggy under the guard with the rules at path: its run. */
static void buggy_with_rules(struct run *r, const char *path)
{
	char opt[600];
	snprintf(opt, sizeof(opt), "ARENAGUARD_OPTIONS=suppressions=%s", path);
	const char *env[] = { PRELOAD_GUARD, opt, NULL };
	const char *argv[] = { AG_ARENA_INFER, "--buggy", "-q", NULL };
	spawn_setup(r, env, argv, hang_alarm, NULL);
}

/* Rules that are no regular file (a FIFO nobody writes to, a device
 * that never ends, a directory) are said and not read: the guard does
 * not wait at load, and nothing is suppressed. */
START_TEST(test_rules_not_a_file)
{
	const char *fifo = scratch_path("rules.fifo");
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	const char *paths[] = { fifo, "/dev/zero", scratch() };
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct run r;
		buggy_with_rules(&r, paths[i]);
		ck_assert_msg(r.status != 128 + SIGALRM, "%s: hung", paths[i]);
		ck_assert_msg(strstr(r.err, "cannot read the suppressions") &&
			      strstr(r.err, ": not a regular file; no failure "
				     "is suppressed"), "%s", r.err);
		ck_assert_msg(strstr(r.err, "1 blocked"), "%s", r.err);
		run_free(&r);
		/* The launcher refuses them before running anything. */
		const char *env[] = { PRELOAD_SIM, NULL };
		const char *argv[] = { AG_ARENAGUARD, "--suppressions",
				       paths[i], "--", AG_ARENA_INFER, "-q",
				       NULL };
		spawn_setup(&r, env, argv, hang_alarm, NULL);
		ck_assert_int_eq(r.status, 125);
		ck_assert_msg(strstr(r.err, ": not a regular file"), "%s",
			      r.err);
		run_free(&r);
	}
}
END_TEST

/* Writes len bytes as the rules; their path. */
static const char *rules_bytes(const char *bytes, size_t len)
{
	const char *path = scratch_path("rules.supp");
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(bytes, 1, len, f), len);
	fclose(f);
	return path;
}

/* A NUL byte makes its line bad, said: never a shorter rule matching
 * more than was written (the digest after the NUL, dropped, would have
 * left condition:D alone), nor the next line taken for its tail. */
START_TEST(test_rules_nul_byte)
{
	static const char narrowed[] = "condition:D\0 digest:00000000";
	struct run r;
	buggy_with_rules(&r, rules_bytes(narrowed, sizeof(narrowed) - 1));
	ck_assert_msg(strstr(r.err, "rules.supp:1: a NUL byte; the rule is "
			     "ignored"), "%s", r.err);
	ck_assert_msg(strstr(r.err, "1 blocked, 0 warned, 0 suppressed"),
		      "%s", r.err);
	run_free(&r);
	static const char next[] = "condition:C\0x\nplane:xn condition:D\n";
	buggy_with_rules(&r, rules_bytes(next, sizeof(next) - 1));
	ck_assert_msg(strstr(r.err, "rules.supp:1: a NUL byte"), "%s", r.err);
	ck_assert_msg(strstr(r.err, "0 blocked, 0 warned, 1 suppressed"),
		      "%s", r.err);
	run_free(&r);
}
END_TEST

/* More rules than the guard keeps: said once, not once a line. */
START_TEST(test_rules_too_many)
{
	size_t n = 1000, len = 0;
	char *text = malloc(n * 16);
	ck_assert_ptr_nonnull(text);
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(text + len, "condition:C\n");
	struct run r;
	buggy_with_rules(&r, rules_bytes(text, len));
	ck_assert_int_eq(count(r.err, "rules; the rest are ignored"), 1);
	ck_assert_msg(strstr(r.err, "1 blocked"), "%s", r.err);
	run_free(&r);
	free(text);
}
END_TEST

/* A library whose constructor uses jansson runs before the guard's:
 * jansson's seeding closes a descriptor through the guard, which must
 * not load (and seed jansson, waiting for that seeding) from there. */
START_TEST(test_jansson_before_guard)
{
	const char *env[] = { "LD_PRELOAD=" AG_PRELOAD_FIRST AG_GUARD_LIB " "
			      AG_JANSSON_EARLY " " AG_ARENASIM,
			      "ARENAGUARD_OPTIONS=log_format=json", NULL };
	const char *argv[] = { AG_ARENA_INFER, "--buggy", "-q", NULL };
	struct run r;
	spawn_setup(&r, env, argv, hang_alarm, NULL);
	ck_assert_msg(r.status != 128 + SIGALRM, "hung at load");
	ck_assert_msg(strstr(r.err, "\"event\": \"blocked\""), "%s", r.err);
	run_free(&r);
}
END_TEST

/* An application that gives jansson its own allocator before its first
 * request (guard-jansson-alloc), with log_format=json: its failing
 * submissions are blocked, nothing crashes, and every record is complete
 * and parses: the guard writes JSON with libarenacert's own writer and
 * never calls (nor frees for) the application's allocator, whether that
 * allocator adds a header or fails. */
static void jansson_alloc(const char *variant)
{
	char log_env[300];
	snprintf(log_env, sizeof(log_env), "ARENAGUARD_LOG=%s",
		 scratch_path("alloc.json"));
	const char *env[] = { PRELOAD_GUARD, log_env,
			      "ARENAGUARD_OPTIONS=log_format=json", NULL };
	const char *argv[] = { AG_JANSSON_ALLOC, variant, NULL };
	struct run r;
	spawn(&r, env, argv);
	ck_assert_msg(r.status == 0, "guard-jansson-alloc %s exited %d\n"
		      "stdout:\n%s\nstderr:\n%s", variant, r.status, r.out,
		      r.err);
	ck_assert_msg(!strstr(r.out, "FAIL"), "%s", r.out);
	char *text = slurp(scratch_path("alloc.json"));
	json_t *lines = json_lines(text);
	ck_assert_ptr_null(event(lines, "lost"));
	size_t i, blocked = 0;
	json_t *o;
	json_array_foreach(lines, i, o) {
		if (strcmp(str(o, "event"), "blocked"))
			continue;
		blocked++;
		ck_assert_str_eq(str(o, "exe"), "guard-jansson-alloc");
		ck_assert_str_eq(str(o, "condition"),
				 num(o, "verdict") == PROG_BAD_D_VERDICT ? "D"
									 : "C");
		ck_assert_msg(strlen(str(o, "explanation")) > 20, "%s", text);
		ck_assert(json_is_array(json_object_get(o, "advisories")));
		ck_assert_uint_eq(strlen(str(o, "digest")), 32);
		ck_assert_ptr_nonnull(strchr(str(o, "signature"), ':'));
		ck_assert_ptr_nonnull(strstr(str(o, "suppress"), "digest:"));
	}
	ck_assert_msg(blocked == 2, "%zu blocked records: %s", blocked, text);
	json_t *sum = event(lines, "summary");
	ck_assert_msg(sum, "%s", text);
	ck_assert_int_eq(num(sum, "blocked"), 2);
	json_decref(lines);
	free(text);
	run_free(&r);
}

START_TEST(test_jansson_alloc_header)
{
	jansson_alloc("header");
}
END_TEST

START_TEST(test_jansson_alloc_fails)
{
	jansson_alloc("fail");
}
END_TEST

/* log_format=json with every allocation of the guard failing in turn
 * (guard-client nomem under libarenaguard-failalloc.so): every line
 * still parses, and a record memory did not allow says which
 * submission it was and what became of it. */
/* A "lost" line o names its record: what it was, on an ioctl's fd,
 * for a schedule. */
static void assert_lost_names(json_t *o, const char *record)
{
	ck_assert_str_eq(str(o, "record"), record);
	ck_assert_str_eq(str(o, "path"), "ioctl");
	ck_assert_int_ge(num(o, "fd"), 0);
	ck_assert_int_ge(num(o, "schedule"), 1);
}

START_TEST(test_json_nomem)
{
	char log_env[300];
	snprintf(log_env, sizeof(log_env), "ARENAGUARD_LOG=%s",
		 scratch_path("guard.json"));
	const char *env[] = { "LD_PRELOAD=" AG_PRELOAD_FIRST AG_GUARD_FAILALLOC
			      " " AG_ARENASIM, log_env,
			      "ARENAGUARD_OPTIONS=log_format=json", NULL };
	struct run r;
	client(&r, env, (const char *[]){ "nomem", NULL });
	assert_clean(&r);
	char *text = slurp(scratch_path("guard.json"));
	json_t *lines = json_lines(text);
	size_t i, lost = 0;
	json_t *o;
	json_array_foreach(lines, i, o) {
		const char *e = str(o, "event");
		if (strcmp(e, "lost") || !json_object_get(o, "fd"))
			continue;
		lost++;
		assert_lost_names(o, "blocked");
		ck_assert_msg(json_is_integer(json_object_get(o, "verdict")) ||
			      json_is_null(json_object_get(o, "verdict")),
			      "%s", text);
	}
	ck_assert_msg(lost > 0, "no lost record says which it was (%zu "
		      "lines)", json_array_size(lines));
	json_decref(lines);
	free(text);
	run_free(&r);
}
END_TEST

/* A malformed request's record when memory runs out (guard-client
 * malformed-nomem sweeps the append's allocations under the failalloc
 * guard): the record's own lines (text), or the fixed line that names
 * it (JSON), as a submission's; never a notice of another shape. */
START_TEST(test_malformed_nomem)
{
	for (int json = 0; json < 2; json++) {
		char log_env[300];
		snprintf(log_env, sizeof(log_env), "ARENAGUARD_LOG=%s",
			 scratch_path(json ? "m.json" : "m.log"));
		const char *env[] = { "LD_PRELOAD=" AG_PRELOAD_FIRST
				      AG_GUARD_FAILALLOC " " AG_ARENASIM,
				      log_env, json ? "ARENAGUARD_OPTIONS="
				      "log_format=json" : "ARENAGUARD_OPTIONS=",
				      NULL };
		struct run r;
		client(&r, env, (const char *[]){ "malformed-nomem", NULL });
		assert_clean(&r);
		char *text = slurp(scratch_path(json ? "m.json" : "m.log"));
		size_t records = 0, lost = 0;
		if (!json) {
			static const char rec[] = "arenaguard: SCHEDULE_APPEND ";
			static const char to[] = "to schedule ";
			static const char outcome[] = "arenaguard:   ";
			for (const char *l = text; *l;) {
				const char *nl = strchr(l, '\n');
				ck_assert_msg(nl, "a line without its end: %s", l);
				if (!strncmp(l, rec, sizeof(rec) - 1)) {
					const char *after = l + sizeof(rec) - 1;
					ck_assert_msg(!strncmp(after, to,
							       sizeof(to) - 1) &&
						      !strncmp(nl + 1, outcome,
							       sizeof(outcome) - 1),
						      "not the record's two lines: "
						      "%.300s", l);
					records++;
				}
				l = nl + 1;
			}
		} else {
			json_t *lines = json_lines(text);
			size_t i;
			json_t *o;
			json_array_foreach(lines, i, o) {
				const char *e = str(o, "event");
				if (!strcmp(e, "notice"))
					ck_assert_msg(strncmp(str(o, "message"),
							      "SCHEDULE_APPEND", 15),
						      "%s", text);
				if (!strcmp(e, "malformed"))
					records++;
				if (strcmp(e, "lost"))
					continue;
				lost++;
				assert_lost_names(o, "malformed");
			}
			json_decref(lines);
			ck_assert_msg(lost > 0, "no lost record: %s", text);
		}
		ck_assert_msg(records > 0, "no malformed record: %s", text);
		free(text);
		run_free(&r);
	}
}
END_TEST

/* Every distinct record written when the table of records said cannot
 * grow (no memory) but has room (guard-client dedup-nomem: 50 malformed
 * appends, each to a program of its own, the last allocation of each
 * failing): one record each, none taken for a repeat (attack30). */
START_TEST(test_dedup_nomem)
{
	char log_env[300];
	snprintf(log_env, sizeof(log_env), "ARENAGUARD_LOG=%s",
		 scratch_path("d.log"));
	const char *env[] = { "LD_PRELOAD=" AG_PRELOAD_FIRST AG_GUARD_FAILALLOC
			      " " AG_ARENASIM, log_env, "ARENAGUARD_OPTIONS=",
			      NULL };
	struct run r;
	client(&r, env, (const char *[]){ "dedup-nomem", NULL });
	assert_clean(&r);
	char *text = slurp(scratch_path("d.log"));
	size_t records = 0;
	static const char rec[] = "arenaguard: SCHEDULE_APPEND to schedule ";
	for (const char *l = text; (l = strstr(l, rec)); l++)
		records++;
	ck_assert_msg(records == 50, "%zu records of 50", records);
	ck_assert_msg(!strstr(text, "not recorded again"), "%.200s",
		      strstr(text, "further refusal"));
	free(text);
	run_free(&r);
}
END_TEST

/* Runs in the scratch directory (a relative path names a file in it). */
static void in_scratch(void *arg)
{
	(void)arg;
	ck_assert_int_eq(chdir(scratch()), 0);
	alarm(60);
}

/* The launcher's --suppressions given relative: a process of the run
 * that changed directory first (make -C) reads the same rules. */
START_TEST(test_rules_relative_path)
{
	rules("condition:D\n");
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "cd / && exec %s --buggy -q",
		 AG_ARENA_INFER);
	const char *env[] = { PRELOAD_SIM, NULL };
	const char *argv[] = { AG_ARENAGUARD, "--error-exitcode", "9",
			       "--suppressions", "rules.supp", "--",
			       "/bin/sh", "-c", cmd, NULL };
	struct run r;
	spawn_setup(&r, env, argv, in_scratch, NULL);
	ck_assert_msg(!strstr(r.err, "cannot read the suppressions"), "%s",
		      r.err);
	ck_assert_msg(strstr(r.err, "0 blocked, 0 warned, 1 suppressed"),
		      "%s", r.err);
	ck_assert_int_ne(r.status, 9);
	run_free(&r);
}
END_TEST

static void teardown(void)
{
	scratch_remove();
}

/* The "blocked" record guard-client's `image` subcommand gets for the
 * image in file under threads=`threads`, without the fields of the run
 * (its pid, its times); json_decref. */
static json_t *blocked_record(const char *file, const char *threads)
{
	char opt[1024];
	const char *log = scratch_path("threads.json");
	unlink(log);
	snprintf(opt, sizeof(opt), "ARENAGUARD_OPTIONS=log_format=json:"
		 "log_path=%s:threads=%s", log, threads);
	const char *env[] = { PRELOAD_GUARD, opt, NULL };
	struct run r;
	client(&r, env, (const char *[]){ "--expect", "block", "image", file,
					  NULL });
	/* Blocked, as the library's verdict says (the simulated device
	 * has no memory at the workloads' addresses, so the globals
	 * guard-client reads after the submit are not there). */
	ck_assert_msg(strstr(r.out, "ok: submit returned -1"), "threads=%s: "
		      "%s\n%s", threads, r.out, r.err);
	ck_assert_msg(!strstr(r.err, "Sanitizer"), "%s", r.err);
	run_free(&r);
	char *text = slurp(log);
	json_t *lines = json_lines(text);
	json_t *rec = event(lines, "blocked");
	ck_assert_msg(rec, "threads=%s: no blocked record in %s", threads,
		      text);
	free(text);
	json_incref(rec);
	json_decref(lines);
	json_object_del(rec, "pid");
	json_object_del(rec, "time");
	return rec;
}

/* threads=2 certifies on two threads a program of 65536 words or more
 * (AC_PARALLEL_WORDS): the faulty workloads' (C) records are threads=1's,
 * field for field (the launch, the word, the tensors, the text). */
START_TEST(test_threads_same_record)
{
	/* Not decode: guard-client reads its 1046 globals back, which
	 * takes minutes under the thread sanitizer. */
	static const enum workload_kind kinds[] = { WORKLOAD_VIT,
		WORKLOAD_ADJOINT };
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct workload_spec spec = { kinds[k], WORKLOAD_STRIDE,
					      140000, 0 };
		const char *why = "?";
		struct workload *w = workload_new(&spec, &why);
		ck_assert_msg(w, "%s", why);
		ck_assert_uint_ge(w->model.n_words, 2 * AC_PARALLEL_WORDS);
		size_t len;
		uint8_t *image = ac_model_write_image(&w->model, &len, NULL);
		ck_assert_ptr_nonnull(image);
		const char *file = scratch_path("stride.img");
		FILE *f = fopen(file, "wb");
		ck_assert_ptr_nonnull(f);
		ck_assert_uint_eq(fwrite(image, 1, len, f), len);
		ck_assert_int_eq(fclose(f), 0);
		free(image);
		json_t *one = blocked_record(file, "1");
		json_t *two = blocked_record(file, "2");
		ck_assert_int_eq(num(one, "verdict"), (json_int_t)w->verdict);
		ck_assert_str_eq(str(one, "condition"), "C");
		ck_assert_int_eq(num(one, "launch"), (json_int_t)w->launch);
		char *a = json_dumps(one, JSON_SORT_KEYS);
		char *b = json_dumps(two, JSON_SORT_KEYS);
		ck_assert_msg(!strcmp(a, b), "%s: threads=1\n%s\nthreads=2\n%s",
			      workload_kind_name(kinds[k]), a, b);
		free(a);
		free(b);
		json_decref(one);
		json_decref(two);
		workload_free(w);
	}
}
END_TEST

/* The child's standard error: the pipe end at arg. */
static void stderr_to_pipe(void *arg)
{
	dup2(*(const int *)arg, STDERR_FILENO);
	alarm(60);
}

/* Two guarded processes share standard error, a 64 KiB pipe read only
 * between them: the first's blocked record (guard-json-big 2000 1,
 * about 600 KB) does not fit and is lost whole (counted: its stats say
 * "lost 1"); the second's, small, is written whole after it.  Every
 * line parses, and the second's record is one of them: not glued onto
 * a first line cut at 64 KiB without its newline. */
START_TEST(test_json_record_whole_or_lost)
{
	int p[2];
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	ck_assert_int_eq(fcntl(p[1], F_SETPIPE_SZ, 65536), 65536);
	const char *env[] = { PRELOAD_GUARD, "ARENAGUARD_STATS=1",
			      "ARENAGUARD_OPTIONS=log_format=json", NULL };
	char *said[2];
	for (int i = 0; i < 2; i++) {
		const char *argv[] = { AG_JSON_BIG, i ? "0" : "2000", "1",
				       NULL };
		struct run r;
		spawn_setup(&r, env, argv, stderr_to_pipe, &p[1]);
		ck_assert_msg(r.status == 0 && !strstr(r.out, "FAIL"),
			      "guard-json-big exited %d: %s", r.status, r.out);
		said[i] = pipe_drain(p[0]);
		run_free(&r);
	}
	close(p[0]);
	close(p[1]);
	size_t len0 = strlen(said[0]), len1 = strlen(said[1]);
	char *all = malloc(len0 + len1 + 1);
	ck_assert_ptr_nonnull(all);
	memcpy(all, said[0], len0);
	memcpy(all + len0, said[1], len1 + 1);
	json_t *lines = json_lines(all);
	size_t i, blocked = 0;
	json_t *o;
	json_array_foreach(lines, i, o)
		blocked += !strcmp(str(o, "event"), "blocked");
	ck_assert_msg(blocked == 1, "%zu blocked records", blocked);
	ck_assert_msg(strstr(said[0], "(lost 1)"), "%.300s", said[0]);
	json_decref(lines);
	free(all);
	free(said[0]);
	free(said[1]);
}
END_TEST

Suite *suite_records(void)
{
	Suite *s = suite_create("records");
	TCase *t = tcase_create("records");
	tcase_set_timeout(t, 120);
	tcase_add_checked_fixture(t, NULL, teardown);
	tcase_add_test(t, test_json_records);
	tcase_add_test(t, test_suppressed_by_digest);
	tcase_add_test(t, test_suppressed_by_names);
	tcase_add_test(t, test_undecided_not_suppressed);
	tcase_add_test(t, test_malformed_records);
	tcase_add_test(t, test_repeats_said);
	tcase_add_test(t, test_rules_not_a_file);
	tcase_add_test(t, test_rules_nul_byte);
	tcase_add_test(t, test_rules_too_many);
	tcase_add_test(t, test_jansson_before_guard);
	tcase_add_test(t, test_jansson_alloc_header);
	tcase_add_test(t, test_jansson_alloc_fails);
	tcase_add_test(t, test_json_nomem);
	tcase_add_test(t, test_malformed_nomem);
	tcase_add_test(t, test_dedup_nomem);
	tcase_add_test(t, test_rules_relative_path);
	tcase_add_test(t, test_threads_same_record);
	tcase_add_test(t, test_json_record_whole_or_lost);
	suite_add_tcase(s, t);
	return s;
}
