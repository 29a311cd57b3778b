/* SPDX-License-Identifier: MIT */
/*
 * The debug tools' conventions (docs/arenaguard.7): ARENAGUARD_OPTIONS
 * read from one table (bad keys and values said once, defaults kept,
 * enforce never lost to a typo), help=1, a log per process (log_path
 * with %p and %e, also in a forked child), the SUMMARY line,
 * halt_on_error, threads (and ARENAGUARD_THREADS), and the launcher's
 * --error-exitcode, --quiet and --threads; the launcher under hostile
 * settings in the caller's environment, over commands that run
 * unguarded (static, file capabilities) or sanitized, and a command
 * that closes every descriptor at start.
 */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "elf_kind.h"
#include "load.h"
#include "options.h"
#include "report.h"
#include "needed.h"
#include "spawn.h"
#include "suites.h"

/* Loads the options from ARENAGUARD_OPTIONS=v (and ARENAGUARD=mode, if
 * not NULL), as the guard does at start. */
static void load(const char *mode, const char *v)
{
	if (mode)
		setenv("ARENAGUARD", mode, 1);
	else
		unsetenv("ARENAGUARD");
	setenv("ARENAGUARD_OPTIONS", v, 1);
	ag_config_load();
	unsetenv("ARENAGUARD_OPTIONS");
	unsetenv("ARENAGUARD");
}

START_TEST(test_parse_values)
{
	load(NULL, "mode=warn:halt_on_error=1:stats=true:"
		   "cache_mb=3:strict=yes:summary=0:threads=3");
	ck_assert_int_eq(ag_cfg.mode, AG_WARN);
	ck_assert_uint_eq(ag_cfg.threads, 3);
	ck_assert_int_eq(ag_cfg.halt_on_error, 1);
	ck_assert_int_eq(ag_cfg.stats, 1);
	ck_assert_int_eq(ag_cfg.strict, 1);
	ck_assert_int_eq(ag_cfg.summary, 0);
	ck_assert_uint_eq(ag_cfg.cache_bytes, 3u << 20);
	ck_assert_str_eq(ag_cfg.notes, "");
	/* Quotes carry a ':'; either kind; they can be anywhere.  The
	 * paths are in the scratch directory: loading opens them. */
	char dir[512], opt[2048], want[600];
	snprintf(dir, sizeof(dir), "%s", scratch_path("a:b"));
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(opt, sizeof(opt), "dump_dir='%s':summary_file=\"x:'y'\":"
		 "log_path=%s/a'%%p:'", dir, scratch());
	load(NULL, opt);
	ck_assert_str_eq(ag_cfg.dump_dir, dir);
	ck_assert_str_eq(ag_cfg.summary_file, "x:'y'");
	snprintf(want, sizeof(want), "%s/a%%p:", scratch());
	ck_assert_str_eq(ag_cfg.log_template, want);
	ck_assert_str_eq(ag_cfg.notes, "");
	ag_cfg.mode = AG_OFF;   /* the outputs of this process stay its own */
	ag_output_open();
}
END_TEST

/* ARENAGUARD_OPTIONS wins over the old variables; they keep working. */
START_TEST(test_parse_precedence)
{
	load("warn", "stats=1");
	ck_assert_int_eq(ag_cfg.mode, AG_WARN);
	load("warn", "mode=enforce");
	ck_assert_int_eq(ag_cfg.mode, AG_ENFORCE);
	load("off", "mode=warn");
	ck_assert_int_eq(ag_cfg.mode, AG_WARN);
	ag_cfg.mode = AG_OFF;
	ag_output_open();
}
END_TEST

/* ARENAGUARD_THREADS: the threads' own variable; 1 (the caller's
 * thread alone) unless it is a number from 1 to 64; threads= wins. */
START_TEST(test_threads_variable)
{
	setenv("ARENAGUARD_THREADS", "2", 1);
	load("off", "stats=0");
	ck_assert_uint_eq(ag_cfg.threads, 2);
	ck_assert_str_eq(ag_cfg.notes, "");
	load("off", "threads=4");
	ck_assert_uint_eq(ag_cfg.threads, 4);
	setenv("ARENAGUARD_THREADS", "many", 1);
	load("off", "stats=0");
	ck_assert_uint_eq(ag_cfg.threads, 1);
	ck_assert_msg(strstr(ag_cfg.notes, "arenaguard: ARENAGUARD_THREADS="
			     "many: not a number of threads from 1 to 64"),
		      "%s", ag_cfg.notes);
	unsetenv("ARENAGUARD_THREADS");
	load("off", "stats=0");
	ck_assert_uint_eq(ag_cfg.threads, 1);
	ag_cfg.mode = AG_OFF;
	ag_cfg.notes[0] = 0;
	ag_output_open();
}
END_TEST

/* Every bad option is said, with what it should be; the default is
 * kept; a bad mode is enforce, even over ARENAGUARD=off. */
START_TEST(test_parse_bad)
{
	static const struct {
		const char *options, *note;
	} cases[] = {
		{ "mode=wran", "ARENAGUARD_OPTIONS: mode=wran: not enforce, "
		  "warn or off; enforcing\n" },
		{ "bogus=1", "ARENAGUARD_OPTIONS: bogus is not an option "
		  "(help=1 lists them); ignored\n" },
		{ "stats", "ARENAGUARD_OPTIONS: stats has no value "
		  "(key=value); ignored\n" },
		{ "=3", "ARENAGUARD_OPTIONS: '=3': an option without a name" },
		{ "cache_mb=lots", "cache_mb=lots: not a number of MiB from 0 "
		  "to 1048576; the default is kept\n" },
		{ "cache_mb=2000000", "the default is kept" },
		{ "halt_on_error=2", "halt_on_error=2: not 0 or 1" },
		{ "threads=0", "threads=0: not a number of threads from 1 to "
		  "64; the default is kept\n" },
		{ "threads=65", "threads=65: not a number of threads" },
		{ "threads=-2", "threads=-2: not a number of threads" },
		{ "threads=2x", "threads=2x: not a number of threads" },
		{ "log_format=xml", "log_format=xml: not text or json; the "
		  "default is kept\n" },
		{ "log_path='abc", "a quote is not closed" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		load("off", cases[i].options);
		ck_assert_msg(strstr(ag_cfg.notes, cases[i].note), "%s: '%s'",
			      cases[i].options, ag_cfg.notes);
		ck_assert_uint_eq(ag_cfg.cache_bytes,
				  (size_t)AG_CACHE_MB_DEFAULT << 20);
		ck_assert_int_eq(ag_cfg.halt_on_error, 0);
		ck_assert_uint_eq(ag_cfg.threads, 1);
	}
	load("off", "mode=wran");
	ck_assert_int_eq(ag_cfg.mode, AG_ENFORCE);
	/* A value longer than a path: said, cut, the default kept. */
	static char huge[6000] = "log_path=";
	memset(huge + 9, 'x', sizeof(huge) - 10);
	load("off", huge);
	ck_assert_str_eq(ag_cfg.log_template, "");
	ck_assert_msg(strstr(ag_cfg.notes, "...: not a path of at most 4095 "
			     "bytes"), "%s", ag_cfg.notes);
	/* Any bytes, many bad pairs: the notes are bounded, never
	 * overrun, and end with a line. */
	static char junk[20000];
	for (size_t i = 0; i < sizeof(junk) - 1; i++)
		junk[i] = "ab=:'\"\x1b%"[(i * 7 + i / 3) % 9];
	load("off", junk);
	size_t len = strlen(ag_cfg.notes);
	ck_assert_uint_lt(len, sizeof(ag_cfg.notes));
	ck_assert_int_eq(ag_cfg.notes[len - 1], '\n');
	ag_cfg.mode = AG_OFF;
	ag_cfg.notes[0] = 0;
	ag_output_open();
}
END_TEST

/* A program of the build that loads a preload wherever the tests run
 * and touches no device: /bin/true may be statically linked (busybox's,
 * in the kernel stage's VM), and a static program loads no preload. */
#define DYNAMIC_NOOP AG_ARENA_CERTIFY, "--version"

/* The notes and help=1 reach the guard's output at start. */
START_TEST(test_help_and_notes_said)
{
	struct run r;
	const char *env[] = { PRELOAD_GUARD,
			      "ARENAGUARD_OPTIONS=help=1:colour=1", NULL };
	const char *argv[] = { DYNAMIC_NOOP, NULL };
	spawn(&r, env, argv);
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.err, "arenaguard: ARENAGUARD_OPTIONS: colour is "
			     "not an option"), "%s", r.err);
	static const char *const keys[] = { "mode", "log_path",
		"dump_dir", "stats", "summary", "summary_file", "strict",
		"halt_on_error", "cache_mb", "help", "log_format",
		"suppressions", "print_suppressions", "threads" };
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char line[64];
		snprintf(line, sizeof(line), "arenaguard:   %-18s default ",
			 keys[i]);
		ck_assert_msg(strstr(r.err, line), "%s: %s", keys[i], r.err);
	}
	ck_assert_msg(strstr(r.err, "(also ARENAGUARD_LOG)"), "%s", r.err);
	run_free(&r);
}
END_TEST

/* The options' one table (shim/options.inc), as the tests read it. */
static const struct row {
	const char *key, *env, *help, *flag, *usage;
	int rank;
} rows[] = {
#define AG_FLAG(rank, short_name, name, how, takes, usage) name, usage, rank
#define AG_NO_FLAG NULL, NULL, 0
#define AG_OPTION(key, env, kind, field, def, help, launcher) \
	{ #key, env, help, launcher },
#include "options.inc"
#undef AG_OPTION
#undef AG_FLAG
#undef AG_NO_FLAG
};
#define N_ROWS (sizeof(rows) / sizeof(rows[0]))

/* help=1 lists every row of the table, in its order, with its help and
 * its variable; the launcher's --help has the usage of every row with
 * a flag, in rank order; every flag is taken (a flag the table names
 * but getopt does not know would be a usage error). */
START_TEST(test_help_and_usage_from_table)
{
	struct run r;
	const char *env[] = { PRELOAD_GUARD, "ARENAGUARD_OPTIONS=help=1",
			      NULL };
	const char *argv[] = { DYNAMIC_NOOP, NULL };
	spawn(&r, env, argv);
	ck_assert_int_eq(r.status, 0);
	const char *at = r.err;
	for (size_t i = 0; i < N_ROWS; i++) {
		char head[64];
		snprintf(head, sizeof(head), "arenaguard:   %-18s default ",
			 rows[i].key);
		const char *line = strstr(at, head);
		ck_assert_msg(line, "%s not listed after the row before: %s",
			      rows[i].key, r.err);
		const char *end = strchr(line, '\n');
		ck_assert_ptr_nonnull(end);
		const char *help = strstr(line, rows[i].help);
		ck_assert_msg(help && help < end, "%s: help: %.*s",
			      rows[i].key, (int)(end - line), line);
		if (rows[i].env) {
			char also[64];
			snprintf(also, sizeof(also), " (also %s)\n",
				 rows[i].env);
			ck_assert_msg(!strncmp(end - strlen(also) + 1, also,
					       strlen(also)), "%s: %.*s",
				      rows[i].key, (int)(end - line), line);
		}
		at = end;
	}
	run_free(&r);

	const char *usage[] = { AG_ARENAGUARD, "--help", NULL };
	spawn(&r, NULL, usage);
	ck_assert_int_eq(r.status, 0);
	int last = 0;
	for (int done = 0; !done;) {
		/* The next rank after last: the rows in rank order. */
		const struct row *next = NULL;
		for (size_t i = 0; i < N_ROWS; i++)
			if (rows[i].flag && rows[i].rank > last &&
			    (!next || rows[i].rank < next->rank))
				next = &rows[i];
		if (!next) {
			done = 1;
			continue;
		}
		const char *u = strstr(r.out, next->usage);
		ck_assert_msg(u, "--%s's usage missing: %s", next->flag, r.out);
		last = next->rank;
		/* Every earlier-ranked flag's usage comes before it. */
		for (size_t i = 0; i < N_ROWS; i++)
			if (rows[i].flag && rows[i].rank < next->rank)
				ck_assert_msg(strstr(r.out, rows[i].usage) < u,
					      "--%s after --%s", rows[i].flag,
					      next->flag);
	}
	run_free(&r);
	/* Each flag is one getopt knows: a value-less flag runs, a
	 * flag with a value bad for every kind ("") is refused by its own
	 * check, never as an unknown option. */
	for (size_t i = 0; i < N_ROWS; i++) {
		if (!rows[i].flag)
			continue;
		char flag[64];
		snprintf(flag, sizeof(flag), "--%s=", rows[i].flag);
		const char *bad[] = { AG_ARENAGUARD, flag, DYNAMIC_NOOP, NULL };
		spawn(&r, NULL, bad);
		ck_assert_msg(!strstr(r.err, "unrecognized option"), "%s: %s",
			      flag, r.err);
		run_free(&r);
	}
}
END_TEST

/* log_path=DIR/log.%e.%p: the parent and its forked child each open
 * their own log (the child's records of the parent's failures are
 * known already, so its log stays empty; it leaves with _exit, so it
 * has no summary); the parent's summary counts its own submissions. */
START_TEST(test_log_per_process)
{
	char opt[512];
	snprintf(opt, sizeof(opt), "ARENAGUARD_OPTIONS=log_path=%s/log.%%e.%%p",
		 scratch());
	const char *env[] = { PRELOAD_GUARD, opt, NULL };
	struct run r;
	client(&r, env, (const char *[]){ "--expect", "block", "dupfork",
					  NULL });
	assert_clean(&r);
	ck_assert_msg(!r.err[0], "%s", r.err);
	DIR *d = opendir(scratch());
	ck_assert_ptr_nonnull(d);
	struct dirent *e;
	int logs = 0, parent = 0;
	while ((e = readdir(d))) {
		int pid;
		if (sscanf(e->d_name, "log.guard-client.%d", &pid) != 1)
			continue;
		logs++;
		char *log = slurp(scratch_path(e->d_name));
		char mine[32];
		snprintf(mine, sizeof(mine), "pid %d)", pid);
		/* Every record in a log is its own process's. */
		ck_assert_int_eq(count(log, "blocked submission of"),
				 count(log, mine));
		if (strstr(log, "arenaguard: SUMMARY: 9 submissions, 4 "
			   "blocked, 0 warned, 0 suppressed\n"))
			parent++;
		free(log);
	}
	closedir(d);
	ck_assert_int_eq(logs, 2);
	ck_assert_int_eq(parent, 1);
	run_free(&r);
}
END_TEST

/* The SUMMARY line: once per process that refused, in one shape;
 * nothing from a clean run; summary=0 silences it. */
START_TEST(test_summary_line)
{
	struct run r;
	const char *env[] = { PRELOAD_GUARD, "ARENAGUARD=warn", NULL };
	const char *buggy[] = { AG_ARENA_INFER, "--buggy", "-q", NULL };
	spawn(&r, env, buggy);
	unsigned long long s, b, w, x;
	const char *line = strstr(r.err, "arenaguard: SUMMARY: ");
	ck_assert_msg(line && sscanf(line, "arenaguard: SUMMARY: %llu "
				     "submissions, %llu blocked, %llu warned, "
				     "%llu suppressed\n", &s, &b, &w, &x) == 4,
		      "%s", r.err);
	ck_assert_msg(s >= 1 && b == 0 && w >= 1 && w <= s && x == 0, "%s",
		      r.err);
	ck_assert_int_eq(count(r.err, "SUMMARY"), 1);
	run_free(&r);
	const char *quiet[] = { PRELOAD_GUARD, "ARENAGUARD=warn",
				"ARENAGUARD_OPTIONS=summary=0", NULL };
	spawn(&r, quiet, buggy);
	ck_assert_int_eq(count(r.err, "SUMMARY"), 0);
	ck_assert_int_ge(count(r.err, "warning: submitting"), 1);
	run_free(&r);
	const char *clean_env[] = { PRELOAD_GUARD, NULL };
	const char *correct[] = { AG_ARENA_INFER, "-q", NULL };
	spawn(&r, clean_env, correct);
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(count(r.err, "arenaguard"), 0);
	run_free(&r);
}
END_TEST

/* halt_on_error=1: SIGABRT at the first blocked submission, after its
 * record; a warned one does not halt. */
START_TEST(test_halt_on_error)
{
	struct run r;
	const char *env[] = { PRELOAD_GUARD, "ARENAGUARD_OPTIONS=halt_on_error=1",
			      NULL };
	const char *buggy[] = { AG_ARENA_INFER, "--buggy", "-q", NULL };
	spawn(&r, env, buggy);
	ck_assert_msg(r.status == 128 + SIGABRT, "exit %d\n%s", r.status, r.err);
	ck_assert_msg(strstr(r.err, "arenaguard: blocked submission of"), "%s",
		      r.err);
	ck_assert_msg(strstr(r.err, "(D) fails at instance 6"), "%s", r.err);
	ck_assert_msg(strstr(r.err, "arenaguard: halt_on_error: aborting"),
		      "%s", r.err);
	run_free(&r);
	const char *warn[] = { PRELOAD_GUARD, "ARENAGUARD=warn",
			       "ARENAGUARD_OPTIONS=halt_on_error=1", NULL };
	spawn(&r, warn, buggy);
	ck_assert_msg(r.status != 128 + SIGABRT, "exit %d\n%s", r.status, r.err);
	run_free(&r);
}
END_TEST

/* The launcher: one SUMMARY line for the run, --error-exitcode N when
 * a submission was blocked or warned, the command's status otherwise;
 * --quiet. */
START_TEST(test_launcher_gate)
{
	struct run r;
	const char *env[] = { PRELOAD_SIM, NULL };
	const char *blocked[] = { AG_ARENAGUARD, "--error-exitcode", "9", "--",
				  AG_ARENA_INFER, "--buggy", "-q", NULL };
	spawn(&r, env, blocked);
	ck_assert_msg(r.status == 9, "exit %d\n%s", r.status, r.err);
	ck_assert_msg(strstr(r.err, " 0 warned, 0 suppressed\n"), "%s", r.err);
	ck_assert_int_eq(count(r.err, "arenaguard: SUMMARY: "), 1);
	run_free(&r);
	const char *warned[] = { AG_ARENAGUARD, "--mode", "warn",
				 "--error-exitcode", "9", "--quiet", "--",
				 AG_ARENA_INFER, "--buggy", "-q", NULL };
	spawn(&r, env, warned);
	ck_assert_msg(r.status == 9, "exit %d\n%s", r.status, r.err);
	ck_assert_int_eq(count(r.err, "SUMMARY"), 0);
	run_free(&r);
	/* Without --error-exitcode: the command's own status (2: the
	 * device refused). */
	const char *plain[] = { AG_ARENAGUARD, "--", AG_ARENA_INFER, "--buggy",
				"-q", NULL };
	spawn(&r, env, plain);
	ck_assert_msg(r.status == 2, "exit %d\n%s", r.status, r.err);
	run_free(&r);
	const char *clean[] = { AG_ARENAGUARD, "--error-exitcode", "9", "--",
				AG_ARENA_INFER, "-q", NULL };
	spawn(&r, env, clean);
	ck_assert_msg(r.status == 0, "exit %d\n%s", r.status, r.err);
	ck_assert_msg(strstr(r.err, "arenaguard: SUMMARY: 1 submissions, 0 "
			     "blocked, 0 warned, 0 suppressed\n"), "%s", r.err);
	run_free(&r);
	const char *bad[] = { AG_ARENAGUARD, "--error-exitcode", "x", "--",
			      "/bin/true", NULL };
	spawn(&r, env, bad);
	ck_assert_int_eq(r.status, 125);
	run_free(&r);
	/* --threads N is threads=N; what the guard would not take is a
	 * usage error. */
	const char *threads[] = { AG_ARENAGUARD, "--threads", "2",
				  "--error-exitcode", "9", "--",
				  AG_ARENA_INFER, "--buggy", "-q", NULL };
	spawn(&r, env, threads);
	ck_assert_msg(r.status == 9, "exit %d\n%s", r.status, r.err);
	ck_assert_msg(!strstr(r.err, "ARENAGUARD_OPTIONS: "), "%s", r.err);
	run_free(&r);
	const char *no_threads[] = { AG_ARENAGUARD, "--threads", "0", "--",
				     "/bin/true", NULL };
	spawn(&r, env, no_threads);
	ck_assert_int_eq(r.status, 125);
	ck_assert_msg(strstr(r.err, "--threads takes a number from 1 to 64, "
			     "not '0'"), "%s", r.err);
	run_free(&r);
}
END_TEST

/* The caller's settings that the guard would not parse: the launcher
 * says which and where and runs nothing (125), so that its flags never
 * end up inside a bad value. */
START_TEST(test_launcher_hostile_options)
{
	static char long_log[5000 + 16] = "ARENAGUARD_LOG=";
	memset(long_log + 15, 'x', 5000);
	static const struct {
		const char *env, *said;
	} cases[] = {
		{ "ARENAGUARD_OPTIONS=mode=warn:log_format='text",
		  "ARENAGUARD_OPTIONS: a quote is not closed" },
		{ "ARENAGUARD_OPTIONS=mode=warn\\",
		  "ARENAGUARD_OPTIONS: mode=warn\\: not enforce, warn or off" },
		{ "ARENAGUARD_OPTIONS=mode", "ARENAGUARD_OPTIONS: mode has no "
		  "value (key=value)" },
		{ "ARENAGUARD_OPTIONS=summary_file", "ARENAGUARD_OPTIONS: "
		  "summary_file has no value" },
		{ "ARENAGUARD_OPTIONS=colour=red", "ARENAGUARD_OPTIONS: colour "
		  "is not an option" },
		{ "ARENAGUARD=loud", "ARENAGUARD=loud is not enforce, warn or "
		  "off" },
		{ "ARENAGUARD_THREADS=0", "ARENAGUARD_THREADS=0: not a number "
		  "of threads" },
		{ "ARENAGUARD_CACHE_MB=12k", "ARENAGUARD_CACHE_MB=12k: not a "
		  "number of MiB" },
		{ long_log, "ARENAGUARD_LOG is 5000 bytes long" },
		{ "ARENAGUARD_LAUNCHER_OPTIONS=summary_file='/tmp/x",
		  "ARENAGUARD_LAUNCHER_OPTIONS: a quote is not closed" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct run r;
		const char *env[] = { PRELOAD_SIM, cases[i].env, NULL };
		const char *argv[] = { AG_ARENAGUARD, "--mode", "enforce",
				       "--error-exitcode", "3", "--",
				       AG_LAUNCHED, NULL };
		spawn(&r, env, argv);
		ck_assert_msg(r.status == 125, "%.60s: exit %d\n%s",
			      cases[i].env, r.status, r.err);
		ck_assert_msg(strstr(r.err, cases[i].said), "%.60s:\n%s",
			      cases[i].env, r.err);
		ck_assert_msg(strstr(r.err, "COMMAND not run"), "%s", r.err);
		/* Nothing ran: no client line, no SUMMARY. */
		ck_assert_str_eq(r.out, "");
		ck_assert_int_eq(count(r.err, "SUMMARY"), 0);
		run_free(&r);
	}
}
END_TEST

/* Settings that parse but name what the launcher sets (its channel,
 * the mode): the launcher's win. */
START_TEST(test_launcher_flags_win)
{
	const char *theirs = scratch_path("theirs");
	char options[600], launcher[600];
	snprintf(options, sizeof(options), "ARENAGUARD_OPTIONS=mode=warn:"
		 "summary_file=%s", theirs);
	snprintf(launcher, sizeof(launcher), "ARENAGUARD_LAUNCHER_OPTIONS="
		 "mode=off:summary_file=%s", theirs);
	const char *envs[][4] = {
		{ PRELOAD_SIM, options, NULL },
		{ PRELOAD_SIM, "ARENAGUARD=warn", NULL },
		{ PRELOAD_SIM, options, launcher, NULL },
	};
	for (size_t i = 0; i < sizeof(envs) / sizeof(envs[0]); i++) {
		struct run r;
		const char *argv[] = { AG_ARENAGUARD, "--mode", "enforce",
				       "--error-exitcode", "3", "--",
				       AG_LAUNCHED, NULL };
		spawn(&r, envs[i], argv);
		ck_assert_msg(r.status == 3, "%zu: exit %d\n%s\n%s", i,
			      r.status, r.out, r.err);
		ck_assert_msg(strstr(r.err, "arenaguard: SUMMARY: 1 "
				     "submissions, 1 blocked, 0 warned"),
			      "%zu: %s", i, r.err);
		char *t = slurp(theirs);
		ck_assert_str_eq(t, "");
		free(t);
		run_free(&r);
	}
}
END_TEST

static void become_nobody(void *arg)
{
	(void)arg;
	if (setgroups(0, NULL) != 0 || setgid(65534) != 0 ||
	    setuid(65534) != 0)
		_exit(124);
}

/* Copies the file at from to to, executable. */
static void copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb");
	ck_assert_ptr_nonnull(in);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ck_assert_int_ge(out, 0);
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		ck_assert_int_eq(write(out, buf, n), (ssize_t)n);
	fclose(in);
	close(out);
}

/* Commands that no guard loads in: the launcher says the command ran
 * unguarded and fails (125, or the --error-exitcode value). */
START_TEST(test_launcher_unguarded)
{
	struct run r;
	const char *env[] = { PRELOAD_SIM, "TMPDIR=/tmp", NULL };
	const char *static_run[] = { AG_ARENAGUARD, "--", AG_STATIC_TRUE,
				     NULL };
	spawn(&r, env, static_run);
	ck_assert_msg(r.status == 125, "exit %d\n%s", r.status, r.err);
	ck_assert_msg(strstr(r.err, "guard-static-true ran unguarded: no "
			     "process of it loaded the guard"), "%s", r.err);
	ck_assert_int_eq(count(r.err, "SUMMARY"), 0);
	run_free(&r);
	const char *static_code[] = { AG_ARENAGUARD, "--quiet",
				      "--error-exitcode", "7", "--",
				      AG_STATIC_TRUE, NULL };
	spawn(&r, env, static_code);
	ck_assert_msg(r.status == 7, "exit %d\n%s", r.status, r.err);
	ck_assert_msg(strstr(r.err, "ran unguarded"), "%s", r.err);
	run_free(&r);

	/* A file-capability copy of a client, run by an ordinary user:
	 * ld.so's secure mode drops every LD_PRELOAD entry with a slash. */
	ck_assert_int_eq(chmod(scratch(), 0755), 0);
	const char *capped = scratch_path("capped-client");
	copy_file(AG_LAUNCHED, capped);
	const char *setcap[] = { "/usr/sbin/setcap", "cap_net_bind_service+ep",
				 capped, NULL };
	spawn(&r, NULL, setcap);
	ck_assert_msg(r.status == 0, "setcap (libcap2-bin, as root): exit %d\n"
		      "%s", r.status, r.err);
	run_free(&r);
	const char *cap_run[] = { AG_ARENAGUARD, "--error-exitcode", "9", "--",
				  capped, NULL };
	spawn_setup(&r, env, cap_run, become_nobody, NULL);
	ck_assert_msg(r.status == 9, "exit %d\n%s\n%s", r.status, r.out,
		      r.err);
	ck_assert_msg(strstr(r.err, "capped-client ran unguarded"), "%s",
		      r.err);
	run_free(&r);

	/* Guarded means the guard loaded: a command that never touches
	 * the device is guarded (its exec'd programs: test_launcher_partly_
	 * guarded). */
	const char *no_device[] = { AG_ARENAGUARD, "--error-exitcode", "9",
				    "--", DYNAMIC_NOOP, NULL };
	spawn(&r, env, no_device);
	ck_assert_msg(r.status == 0, "exit %d\n%s", r.status, r.err);
	ck_assert_msg(!strstr(r.err, "unguarded"), "%s", r.err);
	run_free(&r);
}
END_TEST

/* Whether path is a statically linked program (no preload reaches
 * it); 0 when it cannot be read. */
static int static_program(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int kind = elf_kind(fd);
	close(fd);
	return kind == ELF_STATIC;
}

/* A command whose first process loads the guard and then executes a
 * program that will not (shim/exec.c): LD_PRELOAD reset by env or by a
 * shell, a static program exec'd by a guarded shell.  The launcher
 * names it and fails the run (9 here, 125 without --error-exitcode);
 * a chain that keeps the guard stays guarded and is judged as usual. */
START_TEST(test_launcher_partly_guarded)
{
	struct run r;
	const char *env[] = { PRELOAD_SIM, "TMPDIR=/tmp", NULL };
	const char *why_env = "guard-launched ran unguarded (LD_PRELOAD in "
			      "its environment does not name the guard)";
	char script[1200];

	/* env LD_PRELOAD=SIM CMD: env loads the guard, CMD does not. */
	const char *via_env[] = { AG_ARENAGUARD, "--error-exitcode", "9", "--",
				  "/usr/bin/env", PRELOAD_SIM, AG_LAUNCHED,
				  NULL };
	spawn(&r, env, via_env);
	ck_assert_msg(r.status == 9, "exit %d\n%s", r.status, r.err);
	ck_assert_msg(strstr(r.err, why_env), "%s", r.err);
	run_free(&r);

	/* A static program exec'd from CPython's subprocess (vfork, then
	 * execve in the child sharing the parent's memory) and
	 * os.posix_spawn: said, and the parent goes on unharmed (its
	 * "done" printed). */
	snprintf(script, sizeof(script), "import os, subprocess; "
		 "subprocess.run(['%s'], check=True); "
		 "os.waitpid(os.posix_spawn('%s', ['x'], os.environ), 0); "
		 "print('done')", AG_STATIC_TRUE, AG_STATIC_TRUE);
	const char *py[] = { AG_ARENAGUARD, "--error-exitcode", "9", "--",
			     "/usr/bin/python3", "-c", script, NULL };
	spawn(&r, env, py);
	ck_assert_msg(r.status == 9, "exit %d\n%s", r.status, r.err);
	ck_assert_msg(strstr(r.out, "done"), "%s\n%s", r.out, r.err);
	ck_assert_int_eq(count(r.err, "guard-static-true ran unguarded "
			       "(statically linked)"), 2);
	run_free(&r);

	/* An exec of a static program that fails (E2BIG: one argument
	 * over the kernel's 128 KiB) is taken back ("execfailed"): it
	 * ran nothing. */
	snprintf(script, sizeof(script), "import os\ntry: os.execv('%s', "
		 "['x', 'a' * 300000])\nexcept OSError: pass",
		 AG_STATIC_TRUE);
	const char *failed_exec[] = { AG_ARENAGUARD, "--error-exitcode", "9",
				      "--", "/usr/bin/python3", "-c", script,
				      NULL };
	spawn(&r, env, failed_exec);
	ck_assert_msg(r.status == 0, "exit %d\n%s", r.status, r.err);
	ck_assert_msg(!strstr(r.err, "unguarded"), "%s", r.err);
	run_free(&r);

	/* The rest needs a /bin/sh that loads the guard: busybox's, in the
	 * kernel stage's VM, is statically linked (its `env` too). */
	if (static_program("/bin/sh")) {
		printf("options: launcher_partly_guarded: the /bin/sh cases "
		       "are not applicable: /bin/sh is statically linked\n");
		fflush(stdout);
		return;
	}
	/* sh -c 'LD_PRELOAD=SIM exec CMD' */
	snprintf(script, sizeof(script), "LD_PRELOAD='%s%s' exec %s",
		 AG_PRELOAD_FIRST, AG_ARENASIM, AG_LAUNCHED);
	const char *via_sh[] = { AG_ARENAGUARD, "--error-exitcode", "9", "--",
				 "/bin/sh", "-c", script, NULL };
	spawn(&r, env, via_sh);
	ck_assert_msg(r.status == 9, "exit %d\n%s", r.status, r.err);
	ck_assert_msg(strstr(r.err, why_env), "%s", r.err);
	run_free(&r);

	/* A static program exec'd by a guarded shell: 125 without
	 * --error-exitcode, though the program itself succeeds. */
	snprintf(script, sizeof(script), "%s; exit $?", AG_STATIC_TRUE);
	const char *static_sh[] = { AG_ARENAGUARD, "--", "/bin/sh", "-c",
				    script, NULL };
	spawn(&r, env, static_sh);
	ck_assert_msg(r.status == 125, "exit %d\n%s", r.status, r.err);
	ck_assert_msg(strstr(r.err, "guard-static-true ran unguarded "
			     "(statically linked)"), "%s", r.err);
	run_free(&r);

	/* A chain that keeps the guard (sh, env with another variable,
	 * then the client): guarded, the failing schedule blocked (9 for
	 * the block, not for an unguarded program), nothing unguarded. */
	snprintf(script, sizeof(script), "env ARENA_X=1 %s; exit $?",
		 AG_LAUNCHED);
	const char *chain[] = { AG_ARENAGUARD, "--error-exitcode", "9", "--",
				"/bin/sh", "-c", script, NULL };
	spawn(&r, env, chain);
	ck_assert_msg(r.status == 9, "exit %d\n%s", r.status, r.err);
	ck_assert_msg(strstr(r.err, "SUMMARY: 1 submissions, 1 blocked"),
		      "%s", r.err);
	ck_assert_msg(!strstr(r.err, "unguarded"), "%s", r.err);
	run_free(&r);
	/* ... and with nothing to block, it passes with the command's 0;
	 * an exec that fails runs nothing unguarded. */
	const char *clean[] = { AG_ARENAGUARD, "--error-exitcode", "9", "--",
				"/bin/sh", "-c",
				"env ARENA_X=1 /bin/true && "
				"(env LD_PRELOAD= /nonexistent/x || true)",
				NULL };
	spawn(&r, env, clean);
	ck_assert_msg(r.status == 0, "exit %d\n%s", r.status, r.err);
	ck_assert_msg(!strstr(r.err, "unguarded"), "%s", r.err);
	run_free(&r);
}
END_TEST

/* The launcher reads the command's binary for its sanitizer runtime
 * (tools/needed.c, linked here): any bytes are safe.  Files with an
 * ELF header and garbage after it, program headers pointing anywhere,
 * a real program cut short, a script: no runtime, no crash. */
START_TEST(test_needed_reads_any_binary)
{
	char out[64];
	const char *path = scratch_path("cmd");
	unsigned seed = 12345;
	for (int i = 0; i < 400; i++) {
		unsigned char buf[4096];
		size_t len = 64 + (size_t)(i * 97) % (sizeof(buf) - 64);
		for (size_t k = 0; k < len; k++) {
			seed = seed * 1103515245u + 12345u;
			buf[k] = (unsigned char)(seed >> 16);
		}
		/* ELF, 64-bit, little-endian; for most, program headers
		 * (one PT_DYNAMIC, then PT_LOADs) at 64, whose offsets,
		 * addresses and sizes are garbage. */
		memcpy(buf, "\x7f" "ELF\x02\x01\x01", 7);
		if (i % 4) {
			buf[16] = 2;                       /* ET_EXEC */
			memset(buf + 32, 0, 8);
			buf[32] = 64;                      /* e_phoff */
			buf[54] = 56, buf[55] = 0;         /* e_phentsize */
			buf[56] = (unsigned char)(1 + i % 5), buf[57] = 0;
			for (int p = 0; p < buf[56] && 64 + p * 56 + 4 <= (int)len; p++) {
				memset(buf + 64 + p * 56, 0, 4);
				buf[64 + p * 56] = p ? 1 : 2;
			}
		}
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
		close(fd);
		ck_assert_int_eq(needed_sanitizer(path, out, sizeof(out)), -1);
	}
	/* A real program cut short. */
	char *real = slurp(AG_LAUNCHED);
	struct stat st;
	ck_assert_int_eq(stat(AG_LAUNCHED, &st), 0);
	for (size_t cut = 16; cut < 65536; cut = cut * 2 + 1) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
		ck_assert_int_ge(fd, 0);
		size_t n = cut < (size_t)st.st_size ? cut : (size_t)st.st_size;
		ck_assert_int_eq(write(fd, real, n), (ssize_t)n);
		close(fd);
		/* None, or (a sanitized build's client, cut after its
		 * dynamic section) the runtime it names. */
		int rc = needed_sanitizer(path, out, sizeof(out));
		ck_assert_msg(rc == -1 || (rc == 0 && is_sanitizer(out,
							strlen(out))),
			      "cut %zu: %d %s", cut, rc, out);
	}
	free(real);
	const char script[] = "#!/bin/sh\nexit 3\n";
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, script, sizeof(script) - 1),
			 (ssize_t)sizeof(script) - 1);
	close(fd);
	ck_assert_int_eq(needed_sanitizer(path, out, sizeof(out)), -1);
	ck_assert_int_eq(needed_sanitizer("/nonexistent/x", out, sizeof(out)),
			 -1);
	ck_assert_int_eq(needed_sanitizer("no-such-command-here", out,
					  sizeof(out)), -1);
	/* Found in PATH, as execvp finds it; no sanitizer in it. */
	ck_assert_int_eq(needed_sanitizer("true", out, sizeof(out)), -1);
#ifdef AG_ASAN_TRUE
	ck_assert_int_eq(needed_sanitizer(AG_ASAN_TRUE, out, sizeof(out)), 0);
	ck_assert_msg(!strncmp(out, "libasan.so", 10), "%s", out);
	/* No room for the name: none. */
	ck_assert_int_eq(needed_sanitizer(AG_ASAN_TRUE, out, 4), -1);
#endif
}
END_TEST

#ifdef AG_ASAN_TRUE
/* A program built with AddressSanitizer: the launcher puts the runtime
 * it links against first, where ASan insists on being. */
START_TEST(test_launcher_asan)
{
	struct run r;
	const char *env[] = { PRELOAD_SIM, NULL };
	const char *argv[] = { AG_ARENAGUARD, "--error-exitcode", "9", "--",
			       AG_ASAN_TRUE, NULL };
	spawn(&r, env, argv);
	ck_assert_msg(r.status == 0, "exit %d\n%s", r.status, r.err);
	ck_assert_msg(!strstr(r.err, "does not come first"), "%s", r.err);
	ck_assert_msg(strstr(r.err, "arenaguard: SUMMARY: 0 submissions"),
		      "%s", r.err);
	run_free(&r);
}
END_TEST
#endif

/* An application that closes every descriptor but 0, 1 and 2 at start
 * (close_range(3, ~0U)): the guard reopens its log by its path, takes
 * standard error again from fd 2, and the launcher still counts. */
START_TEST(test_close_all_keeps_records)
{
	struct run r;
	const char *log = scratch_path("log");
	const char *env[] = { PRELOAD_SIM, NULL };
	static const char *const how[] = { "--close-all", "--close-each" };
	for (size_t i = 0; i < 2; i++) {
		const char *argv[] = { AG_ARENAGUARD, "--log", log, "--stats",
				       "--error-exitcode", "9", "--",
				       AG_LAUNCHED, how[i], NULL };
		unlink(log);
		spawn(&r, env, argv);
		ck_assert_msg(r.status == 9, "%s: exit %d\n%s\n%s", how[i],
			      r.status, r.out, r.err);
		ck_assert_msg(strstr(r.err, "arenaguard: SUMMARY: 1 submissions, "
				     "1 blocked"), "%s", r.err);
		char *l = slurp(log);
		ck_assert_msg(strstr(l, "arenaguard: blocked submission of "
				     "schedule"), "%s: log: '%s'\n%s", how[i], l,
			      r.err);
		ck_assert_msg(strstr(l, "submissions"), "no stats line: '%s'",
			      l);
		free(l);
		run_free(&r);
	}
	/* Without the launcher or a log: standard error, and the
	 * guard's own SUMMARY line. */
	const char *guard_env[] = { PRELOAD_GUARD, NULL };
	const char *plain[] = { AG_LAUNCHED, "--close-all", NULL };
	spawn(&r, guard_env, plain);
	ck_assert_msg(r.status == 0, "exit %d\n%s\n%s", r.status, r.out,
		      r.err);
	ck_assert_msg(strstr(r.err, "arenaguard: blocked submission of "
			     "schedule"), "%s", r.err);
	ck_assert_msg(strstr(r.err, "arenaguard: SUMMARY: 1 submissions, 1 "
			     "blocked"), "%s", r.err);
	run_free(&r);
}
END_TEST

static void enter(void *dir)
{
	if (chdir(dir) != 0)
		_exit(120);
}

/* A daemon changes to another directory, then closes every descriptor:
 * a relative --log is reacquired where it was opened at load, never in
 * the directory the application moved to. */
START_TEST(test_close_all_after_chdir)
{
	struct run r;
	char *top = strdup(scratch());
	char there[4096];
	snprintf(there, sizeof(there), "%s/elsewhere", top);
	ck_assert_int_eq(mkdir(there, 0755), 0);
	const char *env[] = { PRELOAD_SIM, NULL };
	const char *argv[] = { AG_ARENAGUARD, "--log", "rel.log",
			       "--error-exitcode", "9", "--", AG_LAUNCHED,
			       "--chdir", there, "--close-all", NULL };
	spawn_setup(&r, env, argv, enter, top);
	ck_assert_msg(r.status == 9, "exit %d\n%s\n%s", r.status, r.out,
		      r.err);
	char *here = slurp(scratch_path("rel.log"));
	char moved[4200];
	snprintf(moved, sizeof(moved), "%s/rel.log", there);
	ck_assert_msg(access(moved, F_OK) != 0, "the log followed the "
		      "application into %s", there);
	ck_assert_msg(strstr(here, "arenaguard: blocked submission of "
			     "schedule"), "log: '%s'\n%s", here, r.err);
	free(here);
	free(top);
	run_free(&r);
}
END_TEST

/* A launcher inside a launcher (a test harness that runs arenaguard,
 * itself run under arenaguard in CI): what the inner one blocked counts
 * in the outer one's SUMMARY and --error-exitcode too. */
START_TEST(test_launcher_nested)
{
	struct run r;
	const char *env[] = { PRELOAD_SIM, NULL };
	const char *argv[] = { AG_ARENAGUARD, "--error-exitcode", "9", "--",
			       AG_ARENAGUARD, "--", AG_LAUNCHED, NULL };
	spawn(&r, env, argv);
	ck_assert_msg(r.status == 9, "exit %d\n%s\n%s", r.status, r.out,
		      r.err);
	ck_assert_int_eq(count(r.err, "arenaguard: SUMMARY: 1 submissions, "
			       "1 blocked"), 2);
	run_free(&r);
	/* The outer one's --mode off, asked for on its command line, holds
	 * for the inner one too: run, unchecked (guard-launched exits 1). */
	const char *off[] = { AG_ARENAGUARD, "--mode", "off", "--",
			      AG_ARENAGUARD, "--", AG_LAUNCHED, NULL };
	spawn(&r, env, off);
	ck_assert_msg(r.status == 1, "exit %d\n%s\n%s", r.status, r.out,
		      r.err);
	run_free(&r);
}
END_TEST

static void alarm_in_10(void *arg)
{
	(void)arg;
	alarm(10);              /* kept across the exec: no hang */
}

/* A signal that reaches the launcher after it reaped its command (here
 * SIGTERM, raised by libguard-latesig.so as waitpid returns) is not
 * forwarded to the command's pid, which by then may be another
 * process's (a loaded machine reuses pids within seconds): the
 * launcher waited without reaping and stopped forwarding first. */
START_TEST(test_launcher_late_signal)
{
	struct run r;
	const char *env[] = { "LD_PRELOAD=" AG_PRELOAD_FIRST AG_ARENASIM " "
			      AG_LATESIG, NULL };
	const char *argv[] = { AG_ARENAGUARD, "--error-exitcode", "9", "--",
			       AG_ARENA_INFER, "-q", NULL };
	spawn(&r, env, argv);
	ck_assert_msg(!strstr(r.err, "latesig:"), "exit %d\n%s", r.status,
		      r.err);
	ck_assert_msg(r.status == 0, "exit %d\n%s", r.status, r.err);
	ck_assert_int_eq(count(r.err, "arenaguard: SUMMARY: "), 1);
	run_free(&r);
}
END_TEST

/* A command that is a FIFO (or anything open(2) waits on): the launcher
 * reads the binary before it runs it and must not wait there forever;
 * execvp then says it cannot run it (126). */
START_TEST(test_launcher_command_fifo)
{
	struct run r;
	const char *fifo = scratch_path("fifo");
	ck_assert_int_eq(mkfifo(fifo, 0755), 0);
	const char *env[] = { PRELOAD_SIM, NULL };
	const char *argv[] = { AG_ARENAGUARD, "--", fifo, NULL };
	spawn_setup(&r, env, argv, alarm_in_10, NULL);
	ck_assert_msg(r.status == 126, "exit %d\n%s", r.status, r.err);
	run_free(&r);
}
END_TEST

/* The caller's environment switches the guard off (ARENAGUARD=off left
 * in a CI job's environment, mode=off in either options variable) and
 * no --mode is given: the launcher, whose default is enforce, must not
 * run the command unchecked and print a clean SUMMARY (0 submissions,
 * the failing schedule ran, the command's status); --mode off says it. */
START_TEST(test_launcher_environment_off)
{
	const char *envs[][3] = {
		{ PRELOAD_SIM, "ARENAGUARD=off", NULL },
		{ PRELOAD_SIM, "ARENAGUARD_OPTIONS=mode=off", NULL },
		{ PRELOAD_SIM, "ARENAGUARD_LAUNCHER_OPTIONS=mode=off", NULL },
	};
	for (size_t i = 0; i < sizeof(envs) / sizeof(envs[0]); i++) {
		struct run r;
		const char *argv[] = { AG_ARENAGUARD, "--error-exitcode", "9",
				       "--", AG_LAUNCHED, NULL };
		spawn(&r, envs[i], argv);
		ck_assert_msg(r.status == 125, "%zu: exit %d\n%s\n%s", i,
			      r.status, r.out, r.err);
		ck_assert_msg(!strstr(r.out, "schedule"), "%zu: ran: %s", i,
			      r.out);
		ck_assert_msg(strstr(r.err, "switches the guard off"),
			      "%zu: %s", i, r.err);
		run_free(&r);
	}
	/* Asked for on the command line: run so. */
	struct run r;
	const char *argv[] = { AG_ARENAGUARD, "--mode", "off", "--",
			       AG_LAUNCHED, NULL };
	spawn(&r, envs[0], argv);
	ck_assert_msg(r.status == 1, "exit %d\n%s\n%s", r.status, r.out,
		      r.err);
	run_free(&r);
}
END_TEST

/* A command that cleans its TMPDIR (a test harness's rm -rf
 * "$TMPDIR"/ *, as it were) removes the launcher's summary file with it: what the
 * processes after that blocked is told to nobody, and a run with a
 * blocked submission must not pass as a clean one; nor may a summary
 * file replaced by a symbolic link (to /dev/zero: an endless read) or a
 * FIFO (a read that waits) hang the launcher. */
START_TEST(test_launcher_summary_file_removed)
{
	char tmpdir[4200], rm[300], to_zero[300], to_fifo[300];
	snprintf(tmpdir, sizeof(tmpdir), "TMPDIR=%s", scratch());
	snprintf(rm, sizeof(rm), "rm -f \"$TMPDIR\"/arenaguard-counts-*; "
		 "exec %s", AG_LAUNCHED);
	snprintf(to_zero, sizeof(to_zero), "%s; f=$(echo \"$TMPDIR\"/"
		 "arenaguard-counts-*); rm -f \"$f\"; ln -s /dev/zero \"$f\"",
		 AG_LAUNCHED);
	snprintf(to_fifo, sizeof(to_fifo), "%s; f=$(echo \"$TMPDIR\"/"
		 "arenaguard-counts-*); rm -f \"$f\"; mkfifo \"$f\"",
		 AG_LAUNCHED);
	const char *scripts[] = { rm, to_zero, to_fifo };
	const char *env[] = { PRELOAD_SIM, tmpdir, NULL };
	for (size_t i = 0; i < 3; i++) {
		struct run r;
		const char *argv[] = { AG_ARENAGUARD, "--error-exitcode", "9",
				       "--", "/bin/sh", "-c", scripts[i], NULL };
		spawn_setup(&r, env, argv, alarm_in_10, NULL);
		ck_assert_msg(r.status == 9, "%zu: exit %d\n%s\n%s", i,
			      r.status, r.out, r.err);
		ck_assert_msg(strstr(r.err, "summary file") ||
			      strstr(r.err, "ran unguarded"), "%zu: %s", i,
			      r.err);
		run_free(&r);
	}
}
END_TEST

/* A server that drops its privileges after start (the guard loaded, and
 * said so, while it was root): its refusal and its counts still reach
 * the launcher, whose summary file only its owner may open. */
START_TEST(test_launcher_privileges_dropped)
{
	if (geteuid() != 0)
		return;         /* needs root to drop from */
	struct run r;
	const char *env[] = { PRELOAD_SIM, NULL };
	const char *argv[] = { AG_ARENAGUARD, "--error-exitcode", "9", "--",
			       AG_LAUNCHED, "--drop", NULL };
	spawn(&r, env, argv);
	ck_assert_msg(r.status == 9, "exit %d\n%s\n%s", r.status, r.out,
		      r.err);
	ck_assert_msg(strstr(r.err, "arenaguard: SUMMARY: 1 submissions, 1 "
			     "blocked"), "%s", r.err);
	run_free(&r);
}
END_TEST

/* --log and --dump with relative paths, and a command whose process
 * changes directory before it executes the next (make -C, a test runner
 * that enters each test's directory): the records and dumps go where the
 * launcher was asked, as the suppressions and the summary file do. */
START_TEST(test_launcher_relative_paths)
{
	struct run r;
	char *top = strdup(scratch());
	char sub[4200], script[600];
	snprintf(sub, sizeof(sub), "%s/sub", top);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	ck_assert_int_eq(mkdir(scratch_path("dumps"), 0755), 0);
	snprintf(script, sizeof(script), "cd sub && exec %s", AG_LAUNCHED);
	const char *env[] = { PRELOAD_SIM, NULL };
	const char *argv[] = { AG_ARENAGUARD, "--log", "rel.log", "--dump",
			       "dumps", "--error-exitcode", "9", "--",
			       "/bin/sh", "-c", script, NULL };
	spawn_setup(&r, env, argv, enter, top);
	ck_assert_msg(r.status == 9, "exit %d\n%s\n%s", r.status, r.out,
		      r.err);
	char *l = slurp(scratch_path("rel.log"));
	ck_assert_msg(strstr(l, "arenaguard: blocked submission of "
			     "schedule"), "log: '%s'\n%s", l, r.err);
	ck_assert_msg(strstr(l, "dumped to"), "no dump: '%s'", l);
	free(l);
	free(top);
	run_free(&r);
}
END_TEST

/* A file system of 2 MiB of its own at dir, in a mount namespace of the
 * calling process's own: 0, or -1 (not root, no namespaces). */
static int small_fs(const char *dir)
{
	if (unshare(CLONE_NEWNS) != 0 ||
	    mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount("tmpfs", dir, "tmpfs", 0, "size=2m") != 0)
		return -1;
	return 0;
}

static void small_tmpdir(void *dir)
{
	if (small_fs(dir) != 0)
		_exit(120);
}

/* The disk that holds TMPDIR fills up during the run (the command's own
 * output, a build's objects) after the summary file's first block was
 * taken: the refusal and the counts written after that must still
 * reach the launcher, or a run that blocked passes for a clean one
 * (SUMMARY: 0 blocked, the command's 0, --error-exitcode ignored). */
START_TEST(test_launcher_disk_full)
{
	char small[4200], tmpdir[4300], script[800];
	snprintf(small, sizeof(small), "%s/small", scratch());
	ck_assert_int_eq(mkdir(small, 0755), 0);
	pid_t pid = fork();
	if (pid == 0)
		_exit(small_fs(small) == 0 ? 0 : 1);
	int st = 0;
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return;         /* no mount namespace here: nothing to fill */
	snprintf(tmpdir, sizeof(tmpdir), "TMPDIR=%s", small);
	/* Fill it, then 200 guarded processes' lines (past the first
	 * block), then the failing submission. */
	snprintf(script, sizeof(script), "dd if=/dev/zero of=\"$TMPDIR/fill\" "
		 "bs=4k 2>/dev/null; i=0; while [ $i -lt 200 ]; do /bin/true; "
		 "i=$((i+1)); done; exec %s", AG_LAUNCHED);
	const char *env[] = { PRELOAD_SIM, tmpdir, NULL };
	const char *argv[] = { AG_ARENAGUARD, "--error-exitcode", "9", "--",
			       "/bin/sh", "-c", script, NULL };
	struct run r;
	spawn_setup(&r, env, argv, small_tmpdir, small);
	ck_assert_msg(r.status == 9, "exit %d\n%s\n%s", r.status, r.out,
		      r.err);
	ck_assert_msg(strstr(r.err, "arenaguard: SUMMARY: 1 submissions, 1 "
			     "blocked"), "%s", r.err);
	run_free(&r);
}
END_TEST

static void teardown(void)
{
	scratch_remove();
}

Suite *suite_options(void)
{
	Suite *s = suite_create("options");
	TCase *t = tcase_create("options");
	tcase_set_timeout(t, 60);
	tcase_add_checked_fixture(t, NULL, teardown);
	tcase_add_test(t, test_parse_values);
	tcase_add_test(t, test_parse_precedence);
	tcase_add_test(t, test_parse_bad);
	tcase_add_test(t, test_threads_variable);
	tcase_add_test(t, test_help_and_notes_said);
	tcase_add_test(t, test_help_and_usage_from_table);
	tcase_add_test(t, test_log_per_process);
	tcase_add_test(t, test_summary_line);
	tcase_add_test(t, test_halt_on_error);
	tcase_add_test(t, test_launcher_gate);
	tcase_add_test(t, test_launcher_hostile_options);
	tcase_add_test(t, test_launcher_flags_win);
	tcase_add_test(t, test_launcher_unguarded);
	tcase_add_test(t, test_launcher_partly_guarded);
	tcase_add_test(t, test_needed_reads_any_binary);
#ifdef AG_ASAN_TRUE
	tcase_add_test(t, test_launcher_asan);
#endif
	tcase_add_test(t, test_close_all_keeps_records);
	tcase_add_test(t, test_close_all_after_chdir);
	tcase_add_test(t, test_launcher_nested);
	tcase_add_test(t, test_launcher_command_fifo);
	tcase_add_test(t, test_launcher_late_signal);
	tcase_add_test(t, test_launcher_environment_off);
	tcase_add_test(t, test_launcher_summary_file_removed);
	tcase_add_test(t, test_launcher_privileges_dropped);
	tcase_add_test(t, test_launcher_relative_paths);
	tcase_add_test(t, test_launcher_disk_full);
	suite_add_tcase(s, t);
	return s;
}
