/* SPDX-License-Identifier: MIT */
/*
 * arena-certify's command-line contract (end of shared/spec/program-json.md):
 * runs the built binary (AG_ARENA_CERTIFY) and checks its output lines, its
 * JSON objects and its exit status.
 */
#define _DEFAULT_SOURCE

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "guard/rss.h"
#include "suites.h"
#include "util.h"
#include "workload.h"

#ifndef AG_ARENA_CERTIFY
#error "AG_ARENA_CERTIFY must be defined by the build"
#endif

#define EXAMPLES AG_SPEC_DIR "/examples/"

extern char **environ;

/* A scratch directory per test case, made and removed in the parent. */
static char tmpdir[64];

static void tmpdir_setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/arenacert-cli-XXXXXX");
	if (!mkdtemp(tmpdir))
		tmpdir[0] = 0;
}

static void tmpdir_teardown(void)
{
	DIR *d = tmpdir[0] ? opendir(tmpdir) : NULL;
	if (!d)
		return;
	struct dirent *e;
	char path[512];
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(path, sizeof(path), "%s/%s", tmpdir, e->d_name);
			unlink(path);
		}
	}
	closedir(d);
	rmdir(tmpdir);
}

/* A path inside the scratch directory (static: valid for 8 more calls). */
static const char *tmp(const char *name)
{
	static char paths[8][512];
	static int next;
	char *p = paths[next++ % 8];
	ck_assert_msg(tmpdir[0], "no scratch directory");
	snprintf(p, sizeof(paths[0]), "%s/%s", tmpdir, name);
	return p;
}

static void write_text(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "wb");
	ck_assert_msg(f, "cannot create %s", path);
	ck_assert_uint_eq(fwrite(text, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

struct run {
	int status;      /* exit status; 128 + signal if killed */
	char *out, *err;
	long max_rss_kib;        /* the child's peak resident memory */
	long spawner_rss_kib;    /* ours when it was spawned (see run_cli) */
};

/*
 * Runs arena-certify with the given arguments (NULL-terminated), standard
 * input from stdin_path (or /dev/null).  Output goes through files, not
 * pipes, so a large output cannot deadlock the test.
 */
static struct run run_cli(const char *stdin_path, ...)
{
	const char *argv[32] = { AG_ARENA_CERTIFY };
	int argc = 1;
	va_list ap;
	va_start(ap, stdin_path);
	const char *a;
	while ((a = va_arg(ap, const char *)) != NULL && argc < 31)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;

	char out_path[512], err_path[512];
	ck_assert_msg(tmpdir[0], "no scratch directory");
	snprintf(out_path, sizeof(out_path), "%s/.stdout", tmpdir);
	snprintf(err_path, sizeof(err_path), "%s/.stderr", tmpdir);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, stdin_path ? stdin_path : "/dev/null",
					 O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, out_path,
					 O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_addopen(&fa, 2, err_path,
					 O_WRONLY | O_CREAT | O_TRUNC, 0600);
	/* A spawned child's peak starts at its spawner's peak (it runs in
	 * our memory until it execs): reset ours to what is resident now,
	 * and say what that is. */
	FILE *clear = fopen("/proc/self/clear_refs", "w");
	if (clear) {
		fputs("5", clear);
		fclose(clear);
	}
	long spawner_rss_kib = (long)(rss_field("VmRSS") / 1024);
	pid_t pid;
	int rc = posix_spawn(&pid, AG_ARENA_CERTIFY, &fa, NULL,
			     (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	ck_assert_msg(rc == 0, "cannot run %s: %s", AG_ARENA_CERTIFY, strerror(rc));

	int ws;
	struct rusage ru;
	ck_assert_int_eq(wait4(pid, &ws, 0, &ru), pid);
	struct run r;
	r.max_rss_kib = ru.ru_maxrss;
	r.spawner_rss_kib = spawner_rss_kib;
	r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	r.out = util_read_file(out_path, NULL);
	r.err = util_read_file(err_path, NULL);
	ck_assert(r.out && r.err);
	ck_assert_msg(r.status < 128, "arena-certify died of signal %d; stderr: %s",
		      r.status - 128, r.err);
	return r;
}

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

/* Line i (from 0) of text, copied into buf; "" past the end. */
static const char *line(const char *text, int i, char *buf, size_t len)
{
	while (i-- > 0 && text) {
		text = strchr(text, '\n');
		if (text)
			text++;
	}
	if (!text) {
		buf[0] = 0;
		return buf;
	}
	size_t n = strcspn(text, "\n");
	snprintf(buf, len, "%.*s", (int)n, text);
	return buf;
}

static int count_lines(const char *text)
{
	int n = 0;
	for (; *text; text++)
		n += *text == '\n';
	return n;
}

/* Parses line i of the output as one JSON object. */
static json_t *json_line(const char *text, int i)
{
	char buf[65536];
	line(text, i, buf, sizeof(buf));
	json_error_t jerr;
	json_t *j = json_loads(buf, 0, &jerr);
	ck_assert_msg(j && json_is_object(j), "line %d is not a JSON object: %s (%s)",
		      i, buf, jerr.text);
	return j;
}

static const char *examples[] = {
	"ex1", "ex2", "ex3", "ex4", "ex5", "ex6", "ex7a", "ex7b", "ex7c",
};
#define N_EXAMPLES (int)(sizeof(examples) / sizeof(examples[0]))

static const char *example_path(int i, char *buf, size_t len)
{
	snprintf(buf, len, EXAMPLES "%s.json", examples[i]);
	return buf;
}

static uint64_t example_expect(int i)
{
	char path[512];
	snprintf(path, sizeof(path), EXAMPLES "%s.expect", examples[i]);
	char *text = util_read_file(path, NULL);
	ck_assert_msg(text, "cannot read %s", path);
	uint64_t v = strtoull(text, NULL, 10);
	free(text);
	return v;
}

/* The launch count n of an example, to tell (C) verdicts from (D) ones. */
static uint64_t example_launches(int i)
{
	char path[512];
	json_error_t jerr;
	json_t *j = json_load_file(example_path(i, path, sizeof(path)), 0, &jerr);
	ck_assert_msg(j, "%s: %s", path, jerr.text);
	uint64_t n = json_array_size(json_object_get(j, "launches"));
	json_decref(j);
	return n;
}

static const char *condition_of(uint64_t verdict, uint64_t n)
{
	if (verdict == 0)
		return NULL;
	if (verdict == 1)
		return "AB";
	return verdict < 2 + n ? "C" : "D";
}

/* ---- every spec example, plain and --json ---- */

START_TEST(example_plain)
{
	char path[512], want[600], got[600];
	example_path(_i, path, sizeof(path));
	uint64_t v = example_expect(_i);
	struct run r = run_cli(NULL, path, NULL);
	snprintf(want, sizeof(want), "%s: verdict %" PRIu64, path, v);
	ck_assert_str_eq(line(r.out, 0, got, sizeof(got)), want);
	ck_assert_int_eq(r.status, v == 0 ? 0 : 1);
	/* An explanation follows, indented. */
	line(r.out, 1, got, sizeof(got));
	ck_assert_msg(strncmp(got, "  ", 2) == 0 && got[2] > ' ',
		      "no explanation after the verdict: %s", r.out);
	if (v == 0)
		ck_assert_ptr_nonnull(strstr(got, "certified"));
	run_free(&r);
}
END_TEST

START_TEST(example_json)
{
	char path[512];
	example_path(_i, path, sizeof(path));
	uint64_t v = example_expect(_i);
	struct run r = run_cli(NULL, "--json", path, NULL);
	ck_assert_int_eq(r.status, v == 0 ? 0 : 1);
	ck_assert_int_eq(count_lines(r.out), 1);
	json_t *j = json_line(r.out, 0);
	ck_assert_str_eq(json_string_value(json_object_get(j, "file")), path);
	json_t *jv = json_object_get(j, "verdict");
	ck_assert(json_is_integer(jv));
	ck_assert_uint_eq((uint64_t)json_integer_value(jv), v);
	const char *cond = json_string_value(json_object_get(j, "condition"));
	ck_assert_ptr_nonnull(cond);
	const char *want = condition_of(v, example_launches(_i));
	if (want)
		ck_assert_msg(strlen(cond) == 1 && strchr(want, cond[0]),
			      "condition %s for verdict %" PRIu64, cond, v);
	ck_assert_ptr_nonnull(json_object_get(j, "reason"));
	ck_assert(json_is_string(json_object_get(j, "explanation")));
	if (want && strcmp(want, "C") == 0)
		ck_assert(json_is_integer(json_object_get(j, "launch")));
	if (want && strcmp(want, "D") == 0) {
		ck_assert(json_is_integer(json_object_get(j, "instance")));
		ck_assert(json_is_object(json_object_get(j, "plane")));
	}
	json_decref(j);
	run_free(&r);
}
END_TEST

/* The (D) failure of example 3 names the instance, plane and culprit. */
START_TEST(example3_names_objects)
{
	struct run r = run_cli(NULL, "--json", EXAMPLES "ex3.json", NULL);
	json_t *j = json_line(r.out, 0);
	ck_assert_str_eq(json_string_value(json_object_get(j, "condition")), "D");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "instance")), 2);
	json_t *plane = json_object_get(j, "plane");
	ck_assert_str_eq(json_string_value(json_object_get(plane, "name")), "a");
	ck_assert_str_eq(json_string_value(json_object_get(plane, "offset")), "0x1400");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "earlier")), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "intervening")), 1);
	json_t *over = json_object_get(j, "overwriter");
	ck_assert_str_eq(json_string_value(json_object_get(over, "name")), "z");
	json_decref(j);
	run_free(&r);
}
END_TEST

/* Example 4's (C) failure gives the launch, word and its value. */
START_TEST(example4_names_word)
{
	struct run r = run_cli(NULL, "--json", EXAMPLES "ex4.json", NULL);
	json_t *j = json_line(r.out, 0);
	ck_assert_str_eq(json_string_value(json_object_get(j, "condition")), "C");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "launch")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "word")), 0);
	ck_assert_str_eq(json_string_value(json_object_get(j, "lo")), "0x1600");
	ck_assert_str_eq(json_string_value(json_object_get(j, "hi")), "0x1600");
	json_t *w = json_object_get(j, "window");
	ck_assert_str_eq(json_string_value(json_object_get(w, "name")), "arena0");
	json_decref(j);
	run_free(&r);
}
END_TEST

/* ---- several files: order and exit status ---- */

START_TEST(order_and_status)
{
	struct { const char *files[3]; int status; } cases[] = {
		{ { EXAMPLES "ex1.json", EXAMPLES "ex5.json", NULL }, 0 },
		{ { EXAMPLES "ex1.json", EXAMPLES "ex2.json", NULL }, 1 },
		{ { EXAMPLES "ex3.json", "/nonexistent/x.json", EXAMPLES "ex1.json" }, 2 },
		{ { "/nonexistent/x.json", EXAMPLES "ex1.json", NULL }, 2 },
		{ { EXAMPLES "ex6.json", EXAMPLES "ex4.json", EXAMPLES "ex7b.json" }, 1 },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const char **f = cases[c].files;
		int n = f[2] ? 3 : 2;
		struct run r = n == 3 ? run_cli(NULL, "--json", f[0], f[1], f[2], NULL)
				      : run_cli(NULL, "--json", f[0], f[1], NULL);
		ck_assert_msg(r.status == cases[c].status, "case %zu: status %d, want %d",
			      c, r.status, cases[c].status);
		ck_assert_int_eq(count_lines(r.out), n);
		for (int i = 0; i < n; i++) {
			json_t *j = json_line(r.out, i);
			ck_assert_str_eq(json_string_value(json_object_get(j, "file")), f[i]);
			json_t *v = json_object_get(j, "verdict");
			if (strncmp(f[i], "/nonexistent", 12) == 0)
				ck_assert(json_is_null(v) &&
					  json_is_string(json_object_get(j, "error")));
			else
				ck_assert(json_is_integer(v));
			json_decref(j);
		}
		run_free(&r);

		/* Plain mode: the same files in the same order. */
		r = n == 3 ? run_cli(NULL, "--quiet", f[0], f[1], f[2], NULL)
			   : run_cli(NULL, "--quiet", f[0], f[1], NULL);
		ck_assert_int_eq(r.status, cases[c].status);
		ck_assert_int_eq(count_lines(r.out), n);
		for (int i = 0; i < n; i++) {
			char got[600];
			line(r.out, i, got, sizeof(got));
			ck_assert_msg(strncmp(got, f[i], strlen(f[i])) == 0 &&
				      got[strlen(f[i])] == ':', "line %d: %s", i, got);
		}
		run_free(&r);
	}
}
END_TEST

/* ---- standard input ---- */

START_TEST(stdin_dash)
{
	struct run r = run_cli(EXAMPLES "ex3.json", "-", NULL);
	char got[200];
	ck_assert_str_eq(line(r.out, 0, got, sizeof(got)), "-: verdict 7");
	ck_assert_int_eq(r.status, 1);
	run_free(&r);

	r = run_cli(EXAMPLES "ex1.json", "--json", EXAMPLES "ex2.json", "-", NULL);
	ck_assert_int_eq(r.status, 1);
	json_t *j = json_line(r.out, 1);
	ck_assert_str_eq(json_string_value(json_object_get(j, "file")), "-");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "verdict")), 0);
	json_decref(j);
	run_free(&r);
}
END_TEST

/* ---- malformed and unreadable input ---- */

static const char bad_word[] =
	"{\"alignment\": 64,\n"
	" \"phases\": [{\"identity\": \"P\", \"planes\": []}],\n"
	" \"launches\": [{\"phase\": \"P\", \"words\": [\"0x1400\", 1.5]}]}\n";

START_TEST(malformed_json_located)
{
	const char *path = tmp("bad.json");
	write_text(path, bad_word, strlen(bad_word));
	struct run r = run_cli(NULL, path, NULL);
	ck_assert_int_eq(r.status, 2);
	char want[600], got[600];
	snprintf(want, sizeof(want), "%s: error: ", path);
	line(r.out, 0, got, sizeof(got));
	ck_assert_msg(strncmp(got, want, strlen(want)) == 0, "got: %s", got);
	ck_assert_msg(strstr(got, "launches[0].words[1]"), "not located: %s", got);
	run_free(&r);

	r = run_cli(NULL, "--json", path, NULL);
	ck_assert_int_eq(r.status, 2);
	json_t *j = json_line(r.out, 0);
	ck_assert(json_is_null(json_object_get(j, "verdict")));
	const char *e = json_string_value(json_object_get(j, "error"));
	ck_assert_msg(e && strstr(e, "launches[0].words[1]"), "error: %s", e);
	json_decref(j);
	run_free(&r);
}
END_TEST

/* Other malformed inputs: each one line, exit 2, never a crash. */
START_TEST(malformed_various)
{
#define T(s) s, sizeof(s) - 1
	static const struct { const char *text; size_t len; const char *where; } cases[] = {
		{ T(""), NULL },
		{ T("{"), NULL },
		{ T("[1, 2]"), NULL },
		{ T("{\"alignment\": 64, \"alignment\": 64}"), "alignment" },
		{ T("{\"alignment\": 64, \"bogus\": 1}"), "bogus" },
		{ T("{\"alignment\": 3}"), "alignment" },
		{ T("{\"alignment\": 64, \"windows\": [{\"base\": \"0x\", \"size\": 1}]}"),
		  "windows[0]" },
		{ T("ARENAPRG\x01\x00\x00"), "byte" },
		/* A NUL byte ends nothing: what follows it is still read. */
		{ T("{\"alignment\": 64}\0garbage"), NULL },
	};
#undef T
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const char *path = tmp("bad");
		write_text(path, cases[c].text, cases[c].len);
		struct run r = run_cli(NULL, "--json", path, NULL);
		ck_assert_msg(r.status == 2, "case %zu: status %d", c, r.status);
		ck_assert_int_eq(count_lines(r.out), 1);
		json_t *j = json_line(r.out, 0);
		const char *e = json_string_value(json_object_get(j, "error"));
		ck_assert_msg(e && *e, "case %zu: no error", c);
		if (cases[c].where)
			ck_assert_msg(e && strstr(e, cases[c].where),
				      "case %zu: error %s does not say %s",
				      c, e, cases[c].where);
		json_decref(j);
		run_free(&r);
	}
}
END_TEST

START_TEST(unreadable)
{
	struct run r = run_cli(NULL, "/nonexistent/x.json", NULL);
	ck_assert_int_eq(r.status, 2);
	char got[600];
	ck_assert_str_eq(line(r.out, 0, got, sizeof(got)),
			 "/nonexistent/x.json: error: cannot read: No such file or directory");
	run_free(&r);

	/* A directory opens but does not read. */
	r = run_cli(NULL, "--json", tmpdir, NULL);
	ck_assert_int_eq(r.status, 2);
	json_t *j = json_line(r.out, 0);
	ck_assert(json_is_null(json_object_get(j, "verdict")));
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(j, "error")),
				     "cannot read"));
	json_decref(j);
	run_free(&r);
}
END_TEST

/* ---- conversion ---- */

START_TEST(convert_round_trip)
{
	char path[512], got[600], want[600];
	for (int i = 0; i < N_EXAMPLES; i++) {
		example_path(i, path, sizeof(path));
		uint64_t v = example_expect(i);
		const char *bin = tmp("a.bin"), *json = tmp("b.json"), *bin2 = tmp("c.img");

		struct run r = run_cli(NULL, "--convert", bin, path, NULL);
		ck_assert_msg(r.status == (v ? 1 : 0), "%s: %d %s", path, r.status, r.err);
		run_free(&r);
		size_t len = 0;
		char *b1 = util_read_file(bin, &len);
		ck_assert(b1 && len >= 8 && memcmp(b1, "ARENAPRG", 8) == 0);

		/* The image certifies the same, and converts to JSON. */
		r = run_cli(NULL, "--quiet", "--convert", json, bin, NULL);
		snprintf(want, sizeof(want), "%s: verdict %" PRIu64, bin, v);
		ck_assert_str_eq(line(r.out, 0, got, sizeof(got)), want);
		run_free(&r);

		r = run_cli(NULL, "--convert", bin2, json, NULL);
		snprintf(want, sizeof(want), "%s: verdict %" PRIu64, json, v);
		ck_assert_str_eq(line(r.out, 0, got, sizeof(got)), want);
		run_free(&r);

		size_t len2 = 0;
		char *b2 = util_read_file(bin2, &len2);
		ck_assert(b2);
		ck_assert_msg(len == len2 && memcmp(b1, b2, len) == 0,
			      "%s: binary -> JSON -> binary changed the bytes", path);
		free(b1);
		free(b2);
	}
}
END_TEST

START_TEST(convert_usage)
{
	/* Exactly one input. */
	struct run r = run_cli(NULL, "--convert", tmp("x.bin"), EXAMPLES "ex1.json",
			       EXAMPLES "ex2.json", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "exactly one"));
	run_free(&r);

	/* An output that cannot be written: exit 2, named, verdict still given. */
	r = run_cli(NULL, "--convert", "/nonexistent/dir/x.bin", EXAMPLES "ex1.json", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "/nonexistent/dir/x.bin"));
	ck_assert_ptr_nonnull(strstr(r.out, "verdict 0"));
	run_free(&r);

	/* A malformed input writes nothing. */
	const char *bad = tmp("bad.json"), *out = tmp("never.bin");
	write_text(bad, "{", 1);
	r = run_cli(NULL, "--convert", out, bad, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_int_ne(access(out, F_OK), 0);
	run_free(&r);
}
END_TEST

/* A program read but malformed (spec 1: alignment 48, an empty window)
 * is not converted: OUT is neither created nor replaced. */
START_TEST(convert_malformed_writes_nothing)
{
	const char *bad = tmp("bad48.json"), *out = tmp("never.bin");
	const char *text = "{\"alignment\": 48, \"windows\": [{\"base\": 0, "
			   "\"size\": 0}]}";
	write_text(bad, text, strlen(text));
	struct run r = run_cli(NULL, "--convert", out, bad, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_int_ne(access(out, F_OK), 0);
	ck_assert_ptr_null(strstr(r.err, "wrote"));
	ck_assert_msg(strstr(r.err, "nothing written to") && strstr(r.err, out),
		      "stderr: %s", r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "error: alignment"));
	run_free(&r);

	/* An existing OUT is left as it was. */
	write_text(out, "old", 3);
	r = run_cli(NULL, "--quiet", "--convert", out, bad, NULL);
	ck_assert_int_eq(r.status, 2);
	size_t len = 0;
	char *kept = util_read_file(out, &len);
	ck_assert(kept && len == 3 && memcmp(kept, "old", 3) == 0);
	free(kept);
	run_free(&r);
}
END_TEST

/* A NUL byte is named as such, at its byte, wherever it is; after a
 * number jansson alone would skip it and accept the program. */
START_TEST(nul_byte_named)
{
	static const struct { const char *text; size_t len; const char *want; } cases[] = {
		{ "{\"alignment\": 64}\0garbage", 25,
		  "line 1, column 18: invalid JSON: a NUL byte at byte 18" },
		{ "{\"alignment\": 64\0 }", 19,
		  "line 1, column 17: invalid JSON: a NUL byte at byte 17" },
		{ "{\"alignment\": 64,\n\"windows\": [\0]}", 33,
		  "line 2, column 13: invalid JSON: a NUL byte at byte 31" },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const char *path = tmp("nul.json");
		write_text(path, cases[c].text, cases[c].len);
		struct run r = run_cli(NULL, path, NULL);
		ck_assert_msg(r.status == 2, "case %zu: status %d", c, r.status);
		char want[600], got[600];
		snprintf(want, sizeof(want), "%s: error: %s", path, cases[c].want);
		ck_assert_str_eq(line(r.out, 0, got, sizeof(got)), want);
		run_free(&r);
	}
}
END_TEST

/* A tensor ending at exactly 2^64 is written [offset, 2^64), not
 * [offset, 0x0). */
START_TEST(range_ending_at_2_64)
{
	const char *path = tmp("top.json");
	const char *text = "{\"alignment\": 64, \"globals\": ["
		"{\"name\": \"g\", \"offset\": \"0xfffffffffffff000\", \"size\": 4096},"
		"{\"name\": \"h\", \"offset\": \"0xffffffffffffffc0\", \"size\": 64}]}";
	write_text(path, text, strlen(text));
	struct run r = run_cli(NULL, path, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.out, "global 'g' (globals[0]) [0xfffffffffffff000, 2^64) "
			     "overlaps global 'h' (globals[1]) [0xffffffffffffffc0, 2^64)"),
		      "output: %s", r.out);
	ck_assert_ptr_null(strstr(r.out, "0x0)"));
	run_free(&r);

	/* and the report's texts (tools/report_fail.c) */
	const char *page_path = tmp("top.html");
	r = run_cli(NULL, "-q", "--html", page_path, path, NULL);
	ck_assert_int_eq(r.status, 1);
	run_free(&r);
	char *page = util_read_file(page_path, NULL);
	ck_assert_ptr_nonnull(page);
	ck_assert_ptr_nonnull(strstr(page, "[0xffffffffffffffc0, 2^64)"));
	ck_assert_ptr_null(strstr(page, "0x0)"));
	free(page);
}
END_TEST

/* ---- advisories and --strict (spec section 6) ---- */

/* Certified, with global 'out' and plane 'b' partly or wholly outside
 * the one window; with `word` 0x1800 instead of 0x1400 it fails (C). */
static const char *advised(const char *word)
{
	static char text[1024];
	snprintf(text, sizeof(text),
		"{\"alignment\": 64,"
		" \"windows\": [{\"name\": \"arena0\", \"base\": \"0x1000\", \"size\": \"0x1000\"}],"
		" \"globals\": [{\"name\": \"out\", \"offset\": \"0x1fc0\", \"size\": 128}],"
		" \"phases\": [{\"identity\": \"P\", \"planes\": ["
		"   {\"name\": \"a\", \"offset\": \"0x1400\", \"size\": 64, \"carried\": false},"
		"   {\"name\": \"b\", \"offset\": \"0x3000\", \"size\": 64, \"carried\": false}]}],"
		" \"launches\": [{\"phase\": \"P\", \"words\": [\"%s\"]}],"
		" \"schedule\": [{\"first\": 0, \"count\": 1}]}", word);
	const char *path = tmp("advised.json");
	write_text(path, text, strlen(text));
	return path;
}

START_TEST(advisories_plain)
{
	const char *path = advised("0x1400");
	char got[600], want[600];
	struct run r = run_cli(NULL, path, NULL);
	ck_assert_int_eq(r.status, 0);     /* advisories change nothing */
	snprintf(want, sizeof(want), "%s: verdict 0", path);
	ck_assert_str_eq(line(r.out, 0, got, sizeof(got)), want);
	ck_assert_str_eq(line(r.out, 2, got, sizeof(got)),
		"  advisory tensor-outside-windows: global 'out' (globals[0]) "
		"[0x1fc0, 0x2040) has byte 0x2000 in no window");
	ck_assert_str_eq(line(r.out, 3, got, sizeof(got)),
		"  advisory tensor-outside-windows: fresh plane 'b' "
		"(phases[0].planes[1]) [0x3000, 0x3040) has byte 0x3000 in no window");
	ck_assert_int_eq(count_lines(r.out), 4);
	run_free(&r);

	/* --strict: not certified, and says so */
	r = run_cli(NULL, "--strict", path, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_str_eq(line(r.out, 4, got, sizeof(got)),
			 "  strict: fails (2 advisories)");
	run_free(&r);

	/* --quiet --strict: the verdict line and the strict line */
	r = run_cli(NULL, "--quiet", "--strict", path, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_int_eq(count_lines(r.out), 2);
	ck_assert_str_eq(line(r.out, 1, got, sizeof(got)),
			 "  strict: fails (2 advisories)");
	run_free(&r);

	/* a failing verdict keeps its advisories and its status */
	path = advised("0x1800");
	r = run_cli(NULL, "--strict", path, NULL);
	ck_assert_int_eq(r.status, 1);
	snprintf(want, sizeof(want), "%s: verdict 2", path);
	ck_assert_str_eq(line(r.out, 0, got, sizeof(got)), want);
	ck_assert_ptr_nonnull(strstr(r.out, "  advisory tensor-outside-windows: global 'out'"));
	ck_assert_ptr_nonnull(strstr(r.out, "  strict: fails"));
	run_free(&r);
}
END_TEST

START_TEST(advisories_json)
{
	const char *path = advised("0x1400");
	struct run r = run_cli(NULL, "--json", path, NULL);
	ck_assert_int_eq(r.status, 0);
	json_t *j = json_line(r.out, 0);
	json_t *adv = json_object_get(j, "advisories");
	ck_assert_uint_eq(json_array_size(adv), 2);
	json_t *a0 = json_array_get(adv, 0), *a1 = json_array_get(adv, 1);
	ck_assert_str_eq(json_string_value(json_object_get(a0, "kind")),
			 "tensor-outside-windows");
	json_t *t0 = json_object_get(a0, "tensor");
	ck_assert_int_eq(json_integer_value(json_object_get(t0, "global")), 0);
	ck_assert_str_eq(json_string_value(json_object_get(t0, "name")), "out");
	ck_assert_str_eq(json_string_value(json_object_get(a0, "outside")), "0x2000");
	json_t *t1 = json_object_get(a1, "tensor");
	ck_assert_int_eq(json_integer_value(json_object_get(t1, "phase")), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(t1, "plane")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(t1, "name")), "b");
	ck_assert_str_eq(json_string_value(json_object_get(a1, "outside")), "0x3000");
	ck_assert_ptr_null(json_object_get(j, "strict"));
	json_decref(j);
	run_free(&r);

	r = run_cli(NULL, "--json", "--strict", path, EXAMPLES "ex1.json", NULL);
	ck_assert_int_eq(r.status, 1);
	j = json_line(r.out, 0);
	ck_assert_str_eq(json_string_value(json_object_get(j, "strict")), "fails");
	json_decref(j);
	/* no advisories: an empty list, and strict holds */
	j = json_line(r.out, 1);
	ck_assert(json_is_array(json_object_get(j, "advisories")));
	ck_assert_uint_eq(json_array_size(json_object_get(j, "advisories")), 0);
	ck_assert_str_eq(json_string_value(json_object_get(j, "strict")), "holds");
	json_decref(j);
	run_free(&r);
}
END_TEST

/* Without advisories --strict changes nothing; a malformed program has
 * none (it has an error) and still exits 2. */
START_TEST(strict_status)
{
	char path[512];
	for (int i = 0; i < N_EXAMPLES; i++) {
		example_path(i, path, sizeof(path));
		uint64_t v = example_expect(i);
		struct run r = run_cli(NULL, "--strict", path, NULL);
		ck_assert_int_eq(r.status, v == 0 ? 0 : 1);
		ck_assert_ptr_null(strstr(r.out, "advisory"));
		ck_assert_ptr_null(strstr(r.out, "strict"));
		run_free(&r);
	}
	const char *bad = tmp("bad.json");
	const char *text = "{\"alignment\": 48, \"globals\": [{\"name\": \"g\","
			   " \"offset\": 0, \"size\": 48}]}";
	write_text(bad, text, strlen(text));
	struct run r = run_cli(NULL, "--json", "--strict", bad, NULL);
	ck_assert_int_eq(r.status, 2);
	json_t *j = json_line(r.out, 0);
	ck_assert_ptr_null(json_object_get(j, "advisories"));
	json_decref(j);
	run_free(&r);
	r = run_cli(NULL, "--strict", advised("0x1400"), bad, NULL);
	ck_assert_int_eq(r.status, 2);
	run_free(&r);
}
END_TEST

/* ---- options ---- */

START_TEST(options)
{
	struct run r = run_cli(NULL, "--help", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "Usage: arena-certify"));
	run_free(&r);

	r = run_cli(NULL, "--version", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert(strncmp(r.out, "arena-certify ", 14) == 0);
	run_free(&r);

	r = run_cli(NULL, "--frobnicate", EXAMPLES "ex1.json", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "--frobnicate"));
	ck_assert_str_eq(r.out, "");
	run_free(&r);

	r = run_cli(NULL, NULL);
	ck_assert_int_eq(r.status, 2);
	run_free(&r);

	/* --quiet: one line per file, even for a failure. */
	r = run_cli(NULL, "-q", EXAMPLES "ex3.json", NULL);
	ck_assert_int_eq(count_lines(r.out), 1);
	run_free(&r);

	/* "--" ends the options: a file may start with a dash. */
	const char *dash = tmp("-x.json");
	char *text = util_read_file(EXAMPLES "ex1.json", NULL);
	write_text(dash, text, strlen(text));
	free(text);
	ck_assert_int_eq(chdir(tmpdir), 0);
	r = run_cli(NULL, "--", "-x.json", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert(strncmp(r.out, "-x.json: verdict 0\n", 19) == 0);
	run_free(&r);
}
END_TEST

/* --threads / -j: a program past the library's AC_PARALLEL_WORDS gets the
 * same report, field for field, on one thread and on several; bad counts
 * are usage errors. */
START_TEST(threads_option)
{
	struct workload_spec spec = { WORKLOAD_DECODE, WORKLOAD_STRIDE, 100000, 0 };
	const char *why = "?";
	struct workload *w = workload_new(&spec, &why);
	ck_assert_msg(w, "%s", why);
	ck_assert_uint_ge(w->model.n_words, AC_PARALLEL_WORDS);
	size_t len;
	struct ac_error err;
	void *image = ac_model_write_image(&w->model, &len, &err);
	ck_assert_ptr_nonnull(image);
	const char *path = tmp("threads.img");
	write_text(path, image, len);
	free(image);
	workload_free(w);

	struct run one = run_cli(NULL, "--json", "-j", "1", path, NULL);
	ck_assert_int_eq(one.status, 1);
	const char *args[][2] = { { "-j", "2" }, { "--threads", "5" },
				  { "--threads=3", NULL } };
	for (int i = 0; i < 3; i++) {
		struct run r = args[i][1]
			? run_cli(NULL, "--json", args[i][0], args[i][1], path, NULL)
			: run_cli(NULL, "--json", args[i][0], path, NULL);
		ck_assert_int_eq(r.status, 1);
		ck_assert_str_eq(r.out, one.out);
		run_free(&r);
	}
	run_free(&one);

	const char *bad[] = { "0", "x", "-2", "1025", "" };
	for (int i = 0; i < 5; i++) {
		struct run r = run_cli(NULL, "-j", bad[i], path, NULL);
		ck_assert_int_eq(r.status, 2);
		ck_assert_ptr_nonnull(strstr(r.err, "--threads takes a count"));
		ck_assert_str_eq(r.out, "");
		run_free(&r);
	}
	struct run r = run_cli(NULL, path, "-j", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "missing thread count"));
	run_free(&r);
}
END_TEST

/* ---- a verdict past 2^53, where doubles lose integers ---- */

/*
 * The largest verdict a well-formed program can have is below
 * 2 + 2^32 + 2^62 (n < 2^32 launches, k < 2^62 instances), so no program
 * reaches 2^63; arena-certify prints the verdict with PRIu64 rather than
 * through json_integer all the same.  What can be tested is a verdict past
 * 2^53: R repeats of the body [P, Q] with 2^32-1 iterations each, S
 * references of all of them, then R's launch and Q's: the final Q
 * instance's carried `a` was overwritten by R's `z`.
 */
START_TEST(huge_verdict)
{
	enum { R = 1024, S = 4096 };
	const uint64_t N = 4294967295u;
	size_t cap = 1 << 20, len = 0;
	char *j = malloc(cap);
	ck_assert_ptr_nonnull(j);
#define PUT(...) do { \
		int w_ = snprintf(j + len, cap - len, __VA_ARGS__); \
		ck_assert(w_ >= 0 && (size_t)w_ < cap - len); \
		len += (size_t)w_; \
		if (cap - len < 256) { \
			cap *= 2; \
			j = realloc(j, cap); \
			ck_assert_ptr_nonnull(j); \
		} \
	} while (0)
	PUT("{\"alignment\": 64, \"phases\": ["
	    "{\"identity\": \"P\", \"planes\": [{\"name\": \"a\", \"offset\": 5120, \"size\": 256, \"carried\": false}]},"
	    "{\"identity\": \"Q\", \"planes\": [{\"name\": \"a\", \"offset\": 5120, \"size\": 256, \"carried\": true}]},"
	    "{\"identity\": \"R\", \"planes\": [{\"name\": \"z\", \"offset\": 5120, \"size\": 64, \"carried\": false}]}],\n"
	    "\"launches\": [");
	for (int i = 0; i < R; i++)
		PUT("{\"phase\": \"P\"}, {\"phase\": \"Q\"}, ");
	PUT("{\"phase\": \"R\"}, {\"phase\": \"Q\"}],\n\"repeats\": [");
	for (int i = 0; i < R; i++)
		PUT("%s{\"first\": %d, \"count\": 2, \"iterations\": %" PRIu64 "}",
		    i ? ", " : "", 2 * i, N);
	PUT("],\n\"schedule\": [");
	for (int i = 0; i < S; i++)
		PUT("{\"first\": 0, \"count\": %d}, ", 2 * R);
	PUT("{\"first\": %d, \"count\": 2}]}\n", 2 * R);
#undef PUT
	const char *path = tmp("huge.json");
	write_text(path, j, len);
	free(j);

	uint64_t n = 2 * R + 2;
	uint64_t k = (uint64_t)S * 2 * R * N + 1;
	uint64_t want = 2 + n + k;
	ck_assert(want > (UINT64_C(1) << 53));
	char num[32], got[600], expect[600];
	snprintf(num, sizeof(num), "%" PRIu64, want);

	struct run r = run_cli(NULL, "--json", path, NULL);
	ck_assert_msg(r.status == 1, "status %d: %s", r.status, r.out);
	snprintf(expect, sizeof(expect), "\"verdict\": %s,", num);
	ck_assert_msg(strstr(r.out, expect), "want %s in %s", expect, r.out);
	json_t *o = json_line(r.out, 0);
	ck_assert_uint_eq((uint64_t)json_integer_value(json_object_get(o, "verdict")), want);
	ck_assert_uint_eq((uint64_t)json_integer_value(json_object_get(o, "instance")), k);
	json_decref(o);
	run_free(&r);

	r = run_cli(NULL, "-q", path, NULL);
	snprintf(expect, sizeof(expect), "%s: verdict %s", path, num);
	ck_assert_str_eq(line(r.out, 0, got, sizeof(got)), expect);
	run_free(&r);
}
END_TEST

/* ---- --html: the report page ---- */

/* The data blob of a report page, parsed. */
static json_t *html_data(const char *page)
{
	const char *open = "<script type=\"application/json\" id=\"data\">";
	const char *start = strstr(page, open);
	ck_assert_msg(start, "no data blob in the page");
	start += strlen(open);
	const char *end = strstr(start, "</script>");
	ck_assert_ptr_nonnull(end);
	json_error_t jerr;
	json_t *j = json_loadb(start, (size_t)(end - start), JSON_ALLOW_NUL, &jerr);
	ck_assert_msg(j, "data blob: %s", jerr.text);
	return j;
}

static int count_of(const char *text, const char *what)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, what)) != NULL; p++)
		n++;
	return n;
}

/* Self-contained: nothing fetched, no link outside the page. */
static void expect_self_contained(const char *page)
{
	static const char *const never[] = { "http://", "https://", "//cdn", " src=",
					     "<link", "<iframe", "@import" };
	for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++)
		ck_assert_msg(!strstr(page, never[i]), "the page has %s", never[i]);
	ck_assert_int_eq(count_of(page, "<script"), 2);
	ck_assert_ptr_nonnull(strstr(page, "Content-Security-Policy"));
}

/* The roles of the failing marks, space-separated, in order. */
static void mark_roles(json_t *data, char *buf, size_t len)
{
	json_t *marks = json_object_get(json_object_get(data, "fail"), "marks");
	size_t i;
	json_t *m;
	buf[0] = 0;
	json_array_foreach(marks, i, m) {
		size_t n = strlen(buf);
		snprintf(buf + n, len - n, "%s%s", i ? " " : "",
			 json_string_value(json_object_get(m, "role")));
	}
}

/* The title of the first mark with a role. */
static const char *mark_title(json_t *data, const char *role)
{
	json_t *marks = json_object_get(json_object_get(data, "fail"), "marks");
	size_t i;
	json_t *m;
	json_array_foreach(marks, i, m)
		if (strcmp(json_string_value(json_object_get(m, "role")), role) == 0)
			return json_string_value(json_object_get(m, "title"));
	return "";
}

/* Every example: same verdict and status as without --html, and a page
 * with the verdict in its header and the failing objects in its data. */
START_TEST(html_examples)
{
	static const char *const roles[N_EXAMPLES] = {
		"",                                                  /* ex1 */
		"carried",                                           /* ex2 */
		"carried earlier overwriter overlap",                /* ex3 */
		"word near",                                         /* ex4 */
		"",                                                  /* ex5 */
		"tensor tensor overlap",                             /* ex6 */
		"",                                                  /* ex7a */
		"word near",                                         /* ex7b */
		"",                                                  /* ex7c */
	};
	char path[512], want[600], got[600];
	example_path(_i, path, sizeof(path));
	uint64_t v = example_expect(_i);
	const char *out = tmp("report.html");
	struct run r = run_cli(NULL, "--html", out, path, NULL);
	ck_assert_int_eq(r.status, v == 0 ? 0 : 1);
	snprintf(want, sizeof(want), "%s: verdict %" PRIu64, path, v);
	ck_assert_str_eq(line(r.out, 0, got, sizeof(got)), want);
	ck_assert_ptr_nonnull(strstr(r.err, "HTML report"));
	run_free(&r);

	char *page = util_read_file(out, NULL);
	ck_assert_ptr_nonnull(page);
	ck_assert(strncmp(page, "<!DOCTYPE html>", 15) == 0);
	snprintf(want, sizeof(want), ">verdict %" PRIu64 " <", v);
	ck_assert_msg(strstr(page, want), "no %s in the header", want);
	expect_self_contained(page);
	json_t *data = html_data(page);
	char got_roles[256];
	mark_roles(data, got_roles, sizeof(got_roles));
	ck_assert_str_eq(got_roles, roles[_i]);
	json_decref(data);
	free(page);
}
END_TEST

/* The failing objects are named: (D) the plane and the culprit with their
 * instances; (C) the word's value; (B) both tensors. */
START_TEST(html_names_objects)
{
	const char *out = tmp("r.html");
	struct run r = run_cli(NULL, "-q", "--html", out, EXAMPLES "ex3.json", NULL);
	run_free(&r);
	char *page = util_read_file(out, NULL);
	json_t *data = html_data(page);
	ck_assert_ptr_nonnull(strstr(mark_title(data, "carried"), "'a'"));
	ck_assert_ptr_nonnull(strstr(mark_title(data, "carried"), "instance 2"));
	ck_assert_ptr_nonnull(strstr(mark_title(data, "earlier"), "instance 0"));
	ck_assert_ptr_nonnull(strstr(mark_title(data, "overwriter"), "'z'"));
	ck_assert_ptr_nonnull(strstr(mark_title(data, "overwriter"), "instance 1"));
	ck_assert_ptr_nonnull(strstr(mark_title(data, "overlap"), "[0x1400, 0x1440)"));
	/* the instances' columns are marked */
	json_t *cols = json_object_get(json_object_get(data, "fail"), "cols");
	ck_assert_int_eq(json_array_size(cols), 3);
	json_decref(data);
	free(page);

	r = run_cli(NULL, "-q", "--html", out, EXAMPLES "ex4.json", NULL);
	run_free(&r);
	page = util_read_file(out, NULL);
	data = html_data(page);
	ck_assert_ptr_nonnull(strstr(mark_title(data, "word"), "0x1600"));
	ck_assert_ptr_nonnull(strstr(mark_title(data, "near"), "'b'"));
	json_decref(data);
	free(page);

	/* a word in a repeat: its value at each shown iteration */
	r = run_cli(NULL, "-q", "--html", out, EXAMPLES "ex7b.json", NULL);
	run_free(&r);
	page = util_read_file(out, NULL);
	data = html_data(page);
	json_t *word = json_array_get(json_object_get(json_object_get(data, "fail"), "marks"), 0);
	char *values = json_dumps(json_object_get(word, "values"), JSON_COMPACT);
	ck_assert_msg(values && strstr(values, "[2,\"0x1500\""), "values: %s", values);
	free(values);
	json_decref(data);
	free(page);
}
END_TEST

/* Advisories in the report: listed in the static header (with strict's
 * verdict under --strict), each tensor an "advisory" mark across the
 * chart, for a certified and a failing program. */
START_TEST(html_marks_advisories)
{
	const char *out = tmp("adv.html");
	const char *words[] = { "0x1400", "0x1800" };
	for (int k = 0; k < 2; k++) {
		struct run r = run_cli(NULL, "-q", "--strict", "--html", out,
				       advised(words[k]), NULL);
		ck_assert_int_eq(r.status, 1);
		run_free(&r);
		char *page = util_read_file(out, NULL);
		ck_assert_ptr_nonnull(page);
		ck_assert_ptr_nonnull(strstr(page, "<p id=\"strict\" class=\"bad\">strict: fails</p>"));
		ck_assert_ptr_nonnull(strstr(page, "<li class=\"advisory\">advisory "
			"tensor-outside-windows: global &#39;out&#39; (globals[0]) "
			"[0x1fc0, 0x2040) has byte 0x2000 in no window</li>"));
		json_t *data = html_data(page);
		json_t *marks = json_object_get(json_object_get(data, "fail"), "marks");
		int n = 0;
		size_t i;
		json_t *m;
		json_array_foreach(marks, i, m) {
			if (strcmp(json_string_value(json_object_get(m, "role")), "advisory"))
				continue;
			ck_assert(json_is_true(json_object_get(m, "full")));
			ck_assert_uint_eq(json_array_size(json_object_get(m, "y")), 1);
			n++;
		}
		ck_assert_int_eq(n, 2);
		ck_assert_ptr_nonnull(strstr(mark_title(data, "advisory"), "global 'out'"));
		json_decref(data);
		free(page);
	}
	/* without --strict: listed, no strict verdict */
	struct run r = run_cli(NULL, "-q", "--html", out, advised("0x1400"), NULL);
	ck_assert_int_eq(r.status, 0);
	run_free(&r);
	char *page = util_read_file(out, NULL);
	ck_assert_ptr_null(strstr(page, "id=\"strict\""));
	ck_assert_ptr_nonnull(strstr(page, "<ul id=\"advisories\">"));
	free(page);
}
END_TEST

/* Names are arbitrary bytes: none may end the script or open markup. */
START_TEST(html_escapes_names)
{
	static const char text[] =
		"{\"alignment\": 64, \"windows\": [{\"name\": \"<b>win</b>\", \"base\": 4096, \"size\": 4096}],\n"
		" \"globals\": [{\"name\": \"</script><script>alert(1)</script>\", \"offset\": 4096, \"size\": 64}],\n"
		" \"phases\": [{\"identity\": \"<!--<script>\", \"planes\": [\n"
		"   {\"name_hex\": \"ff3c2f7363726970743e00\", \"offset\": 8192, \"size\": 64, \"carried\": true}]}],\n"
		" \"launches\": [{\"phase\": \"<!--<script>\"}],\n"
		" \"schedule\": [{\"first\": 0, \"count\": 1}]}\n";
	const char *in = tmp("<i>&.json"), *out = tmp("e.html");
	write_text(in, text, strlen(text));
	struct run r = run_cli(NULL, "-q", "--html", out, in, NULL);
	ck_assert_int_eq(r.status, 1);   /* the carried plane was never declared */
	run_free(&r);
	char *page = util_read_file(out, NULL);
	ck_assert_ptr_nonnull(page);
	expect_self_contained(page);
	ck_assert_ptr_null(strstr(page, "<script>alert"));
	ck_assert_ptr_null(strstr(page, "<!--"));
	ck_assert_ptr_null(strstr(page, "<b>"));
	ck_assert_ptr_null(strstr(page, "<i>"));
	ck_assert_ptr_nonnull(strstr(page, "&lt;i&gt;&amp;.json"));
	/* the names arrive intact, invalid UTF-8 as U+FFFD */
	json_t *data = html_data(page);
	const char *g = json_string_value(json_array_get(json_array_get(
		json_object_get(data, "globals"), 0), 0));
	ck_assert_str_eq(g, "</script><script>alert(1)</script>");
	ck_assert_ptr_nonnull(strstr(mark_title(data, "carried"), "\xEF\xBF\xBD</script>"));
	json_decref(data);
	free(page);
}
END_TEST

START_TEST(html_usage)
{
	/* Exactly one input, and a real file to write. */
	struct run r = run_cli(NULL, "--html", tmp("x.html"), EXAMPLES "ex1.json",
			       EXAMPLES "ex2.json", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "exactly one"));
	run_free(&r);
	r = run_cli(NULL, "--html", "-", EXAMPLES "ex1.json", NULL);
	ck_assert_int_eq(r.status, 2);
	run_free(&r);
	r = run_cli(NULL, "--html", NULL);
	ck_assert_int_eq(r.status, 2);
	run_free(&r);

	/* An output that cannot be written: exit 2, named, verdict given. */
	r = run_cli(NULL, "--html", "/nonexistent/dir/x.html", EXAMPLES "ex3.json", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "/nonexistent/dir/x.html"));
	ck_assert_ptr_nonnull(strstr(r.out, "verdict 7"));
	run_free(&r);

	/* No verdict, no report. */
	const char *bad = tmp("bad.json"), *out = tmp("never.html");
	write_text(bad, bad_word, strlen(bad_word));
	r = run_cli(NULL, "--html", out, bad, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_int_ne(access(out, F_OK), 0);
	ck_assert_ptr_nonnull(strstr(r.err, "no report"));
	run_free(&r);

	/* --html=OUT, with --json and --convert alongside */
	char opt[600];
	snprintf(opt, sizeof(opt), "--html=%s", tmp("y.html"));
	r = run_cli(NULL, "--json", opt, "--convert", tmp("y.bin"), EXAMPLES "ex1.json", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(count_lines(r.out), 1);
	ck_assert_int_eq(access(tmp("y.html"), F_OK), 0);
	ck_assert_int_eq(access(tmp("y.bin"), F_OK), 0);
	run_free(&r);
}
END_TEST

/*
 * A long walk stays small: 4096 references of 1024 repeats of 2^32-1
 * iterations (as huge_verdict), then the failure.  The page keeps the
 * failing instances, numbered exactly past 2^53, and leaves the rest out.
 */
START_TEST(html_long_walk)
{
	enum { R = 1024, S = 4096 };
	size_t cap = 1 << 20, len = 0;
	char *j = malloc(cap);
	ck_assert_ptr_nonnull(j);
#define PUT(...) do { \
		int w_ = snprintf(j + len, cap - len, __VA_ARGS__); \
		ck_assert(w_ >= 0 && (size_t)w_ < cap - len); \
		len += (size_t)w_; \
		if (cap - len < 256) { \
			cap *= 2; \
			j = realloc(j, cap); \
			ck_assert_ptr_nonnull(j); \
		} \
	} while (0)
	PUT("{\"alignment\": 64, \"phases\": ["
	    "{\"identity\": \"P\", \"planes\": [{\"name\": \"a\", \"offset\": 5120, \"size\": 256, \"carried\": false}]},"
	    "{\"identity\": \"Q\", \"planes\": [{\"name\": \"a\", \"offset\": 5120, \"size\": 256, \"carried\": true}]},"
	    "{\"identity\": \"R\", \"planes\": [{\"name\": \"z\", \"offset\": 5120, \"size\": 64, \"carried\": false}]}],\n"
	    "\"launches\": [");
	for (int i = 0; i < R; i++)
		PUT("{\"phase\": \"P\"}, {\"phase\": \"Q\"}, ");
	PUT("{\"phase\": \"R\"}, {\"phase\": \"Q\"}],\n\"repeats\": [");
	for (int i = 0; i < R; i++)
		PUT("%s{\"first\": %d, \"count\": 2, \"iterations\": 4294967295}",
		    i ? ", " : "", 2 * i);
	PUT("],\n\"schedule\": [");
	for (int i = 0; i < S; i++)
		PUT("{\"first\": 0, \"count\": %d}, ", 2 * R);
	PUT("{\"first\": %d, \"count\": 2}]}\n", 2 * R);
#undef PUT
	const char *path = tmp("long.json"), *out = tmp("long.html");
	write_text(path, j, len);
	free(j);

	struct run r = run_cli(NULL, "--json", "-q", "--html", out, path, NULL);
	ck_assert_int_eq(r.status, 1);
	json_t *o = json_line(r.out, 0);
	char k[32];
	snprintf(k, sizeof(k), "%" PRIu64,
		 (uint64_t)json_integer_value(json_object_get(o, "instance")));
	json_decref(o);
	run_free(&r);

	size_t size = 0;
	char *page = util_read_file(out, &size);
	ck_assert_msg(size < 1000000, "the page is %zu bytes", size);
	json_t *data = html_data(page);
	json_t *fail = json_object_get(data, "fail");
	json_t *fc = json_array_get(json_object_get(fail, "cols"), 0);
	ck_assert_str_eq(json_string_value(json_array_get(fc, 1)), "instance");
	json_t *col = json_array_get(json_object_get(data, "cols"),
				     (size_t)json_integer_value(json_array_get(fc, 0)));
	ck_assert_str_eq(json_string_value(json_array_get(col, 1)), k);
	ck_assert_uint_le(json_array_size(json_object_get(data, "cols")), 4000);
	json_decref(data);
	free(page);
}
END_TEST

/*
 * Reading follows the input: a JSON program of 8.6 MB (the vit workload
 * at 3e5 words) certified in at most 3 times its size of peak memory, the
 * binary's own few MiB aside.  Reading it as one jansson tree took about
 * 7 times (620 MB for 86 MB, measured 2026-12-01).
 */
START_TEST(json_memory_follows_input)
{
	/* Written by a child: a spawned process's peak counts the peak of
	 * the process it was spawned from. */
	const char *path = tmp("vit.json");
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct workload_spec spec = { WORKLOAD_VIT, WORKLOAD_SOUND,
					      300000, 0 };
		const char *why = "?";
		struct workload *w = workload_new(&spec, &why);
		size_t n;
		char *text = w ? ac_model_write_json(&w->model, &n, NULL) : NULL;
		FILE *f = text ? fopen(path, "wb") : NULL;
		_exit(f && fwrite(text, 1, n, f) == n && fclose(f) == 0 ? 0 : 1);
	}
	int ws;
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	ck_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	size_t len = (size_t)st.st_size;
	/* In a sanitizer build: no quarantine, so the peak is what is held
	 * (any other option of the environment is kept). */
	const char *asan = getenv("ASAN_OPTIONS");
	char options[512];
	snprintf(options, sizeof(options), "%s%squarantine_size_mb=0",
		 asan ? asan : "", asan && *asan ? ":" : "");
	setenv("ASAN_OPTIONS", options, 1);
	struct run r = run_cli(NULL, "--quiet", path, NULL);
	ck_assert_int_eq(r.status, 0);
	long bound_kib = (long)(3 * len / 1024) + 8192 + r.spawner_rss_kib;
	printf("cli: %zu bytes of JSON: peak %ld KiB (bound %ld KiB, of which "
	       "the spawner's %ld)\n", len, r.max_rss_kib, bound_kib,
	       r.spawner_rss_kib);
	ck_assert_int_le(r.max_rss_kib, bound_kib);
	run_free(&r);
}
END_TEST

/* An endless stream is refused at its first block when that cannot
 * begin a program, with the error its content gives; a regular file past
 * the limit is refused by its size, unread (a sparse file here). */
START_TEST(input_limits)
{
	struct run r = run_cli("/dev/zero", "-", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_str_eq(line(r.out, 0, (char[256]){ 0 }, 256),
			 "-: error: line 1, column 1: invalid JSON: a NUL byte "
			 "at byte 1");
	ck_assert_int_le(r.max_rss_kib, 16384 + r.spawner_rss_kib);
	run_free(&r);
	const char *big = tmp("big.json");
	int fd = open(big, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, ((off_t)1 << 30) + 1), 0);
	close(fd);
	r = run_cli(NULL, big, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.out, "cannot read: larger than 1 GiB"));
	ck_assert_int_le(r.max_rss_kib, 16384 + r.spawner_rss_kib);
	run_free(&r);
	unlink(big);
}
END_TEST

Suite *suite_cli(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("contract");
	tcase_add_unchecked_fixture(tc, tmpdir_setup, tmpdir_teardown);
	tcase_add_loop_test(tc, example_plain, 0, N_EXAMPLES);
	tcase_add_loop_test(tc, example_json, 0, N_EXAMPLES);
	tcase_add_test(tc, example3_names_objects);
	tcase_add_test(tc, example4_names_word);
	tcase_add_test(tc, order_and_status);
	tcase_add_test(tc, stdin_dash);
	tcase_add_test(tc, malformed_json_located);
	tcase_add_test(tc, malformed_various);
	tcase_add_test(tc, unreadable);
	tcase_add_test(tc, json_memory_follows_input);
	tcase_add_test(tc, input_limits);
	tcase_add_test(tc, convert_round_trip);
	tcase_add_test(tc, convert_usage);
	tcase_add_test(tc, convert_malformed_writes_nothing);
	tcase_add_test(tc, nul_byte_named);
	tcase_add_test(tc, range_ending_at_2_64);
	tcase_add_test(tc, advisories_plain);
	tcase_add_test(tc, advisories_json);
	tcase_add_test(tc, strict_status);
	tcase_add_test(tc, options);
	tcase_add_test(tc, threads_option);
	tcase_add_test(tc, huge_verdict);
	tcase_add_loop_test(tc, html_examples, 0, N_EXAMPLES);
	tcase_add_test(tc, html_names_objects);
	tcase_add_test(tc, html_marks_advisories);
	tcase_add_test(tc, html_escapes_names);
	tcase_add_test(tc, html_usage);
	tcase_add_test(tc, html_long_walk);
	suite_add_tcase(s, tc);
	return s;
}
