/* SPDX-License-Identifier: MIT */
/*
 * The guard's record renderers (shim/record.h), in process: one record
 * struct rendered as text (record_text.c) and as JSON (record_json.c)
 * says the same thing in both (the request, its objects, the process,
 * the event, the dump), hostile strings stay one line of the guard's
 * own in text and round-trip exactly through JSON, and the out-of-memory
 * fallback (a text cut short, JSON's fixed line) still says which
 * record it was.  A renderer that drifts from the other fails here.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cache.h"
#include "mirror.h"
#include "options.h"
#include "report.h"
#include "stats.h"
#include "suppress.h"
#include "util.h"
#include "progs.h"
#include "record.h"
#include "suites.h"

/* Bytes a hostile application may put in a path, a name or a message:
 * line ends, tabs, quotes, backslashes, control bytes, DEL, UTF-8 and
 * a byte that is no UTF-8. */
static const char hostile[] = "a\nb\r\t\"q\" \\ \x01\x1b[31m\x7f \xc3\xa9";

/* A record of kind with the same fixed process, time and request. */
static struct ag_record base(enum ag_record_kind kind)
{
	struct ag_record r;
	ag_record_init(&r, kind);
	r.pid = 4242;
	r.exe = "exe\nname";
	r.time.tv_sec = 86400 + 3661;        /* 1970-01-02T01:01:01 */
	r.time.tv_nsec = 5 * 1000000 + 999;  /* .005 */
	r.mode = "enforce";
	r.fd = 7;
	r.path = "io_uring";
	r.schedule = 3;
	return r;
}

/* A blocked submission's record of schedule 3, known to the guard: its
 * program's handle and its length. */
static struct ag_record blocked_known(uint32_t program, uint64_t length)
{
	struct ag_record r = base(AG_RECORD_SUBMISSION);
	r.blocked = 1;
	r.has_schedule = 1;
	r.program = program;
	r.length = length;
	return r;
}

static char *text_of(const struct ag_record *r, char *buf, size_t cap)
{
	struct ag_line t = { buf, cap, 0 };
	ag_record_text(&t, r);
	ck_assert_uint_lt(t.used, cap);
	buf[t.used] = 0;
	return buf;
}

/* r's JSON, parsed: one object on one line. */
static json_t *json_of(const struct ag_record *r)
{
	struct json_out j = JSON_OUT_INIT;
	size_t len = 0;
	ag_record_json(&j, r);
	aci_json_out_end(&j);
	char *line = aci_json_out_take(&j, 1, &len);
	ck_assert_ptr_nonnull(line);
	ck_assert_msg(len > 0 && line[len - 1] == '\n' &&
		      memchr(line, '\n', len) == line + len - 1,
		      "not one line: %s", line);
	json_error_t e;
	json_t *o = json_loadb(line, len, 0, &e);
	ck_assert_msg(o && json_is_object(o), "%s: %s", e.text, line);
	free(line);
	return o;
}

static const char *str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	ck_assert_msg(s, "no string \"%s\"", key);
	return s;
}

static long long num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	ck_assert_msg(json_is_integer(v), "no integer \"%s\"", key);
	return json_integer_value(v);
}

/* Whether text holds the printf-formatted piece. */
static void has(const char *text, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void has(const char *text, const char *fmt, ...)
{
	char piece[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(piece, sizeof(piece), fmt, ap);
	va_end(ap);
	ck_assert_msg(strstr(text, piece), "\"%s\" not in the text:\n%s",
		      piece, text);
}

/* Every line of text is the guard's: "arenaguard:", no raw control
 * byte, ended. */
static void lines_are_the_guards(const char *text)
{
	ck_assert_msg(*text, "no text");
	for (const char *l = text; *l;) {
		const char *nl = strchr(l, '\n');
		ck_assert_msg(nl, "a line without its newline: %s", l);
		ck_assert_msg(!strncmp(l, "arenaguard:", 11), "not the "
			      "guard's line: %.*s", (int)(nl - l), l);
		for (const char *c = l; c < nl; c++)
			ck_assert_msg((unsigned char)*c >= 0x20 && *c != 0x7f,
				      "raw byte 0x%02x in: %.*s",
				      (unsigned char)*c, (int)(nl - l), l);
		l = nl + 1;
	}
}

/* The text and the JSON of r say the same: the event, the process, the
 * request's file and objects, the dump.  Returns the JSON (json_decref). */
static json_t *agree(const struct ag_record *r, char *text, size_t cap)
{
	text_of(r, text, cap);
	lines_are_the_guards(text);
	json_t *o = json_of(r);
	ck_assert_int_eq(num(o, "pid"), r->pid);
	ck_assert_str_eq(str(o, "exe"), r->exe);
	ck_assert_str_eq(str(o, "time"), "1970-01-02T01:01:01.005Z");
	if (r->kind == AG_RECORD_SUBMISSION || r->kind == AG_RECORD_MALFORMED) {
		ck_assert_str_eq(str(o, "mode"), r->mode);
		ck_assert_str_eq(str(o, "path"), r->path);
		ck_assert_int_eq(num(o, "fd"), r->fd);
		has(text, "fd %lld, %s, pid %lld)", num(o, "fd"),
		    str(o, "path"), num(o, "pid"));
		if (r->has_schedule) {
			has(text, "schedule %lld (program %lld, ",
			    num(o, "schedule"), num(o, "program"));
			ck_assert_int_eq(num(o, "schedule_length"), r->length);
		} else {
			ck_assert_ptr_null(json_object_get(o, "program"));
		}
		if (r->p)
			ck_assert_str_eq(str(o, "digest"), r->digest);
	}
	if (r->kind == AG_RECORD_SUBMISSION) {
		ck_assert_str_eq(str(o, "event"), r->blocked ? "blocked"
							     : "warned");
		has(text, "arenaguard: %s schedule", r->blocked
		    ? "blocked submission of" : "warning: submitting");
		ck_assert_msg((strstr(text, "submitted anyway") == NULL) == r->blocked,
			      "%s", text);
		ck_assert_str_eq(str(o, "reason"), r->strict
				 ? "strict-advisories" : "cannot-certify");
		has(text, r->strict ? ": certified, but refused in strict "
			"mode\n" : ": cannot certify\n");
		ck_assert_str_eq(str(o, "explanation"), r->why);
		if (r->has_schedule)
			has(text, "the schedule holds %lld reference%s",
			    num(o, "schedule_length"),
			    r->length == 1 ? "\n" : "s\n");
		if (r->dump && !r->dump->err)
			ck_assert_str_eq(str(o, "dump"), r->dump->path);
		if (r->dump && r->dump->err) {
			ck_assert_str_eq(str(o, "dump_error"),
					 strerror(-r->dump->err));
			has(text, "could not write a dump in ");
			has(text, ": %s\n", str(o, "dump_error"));
		}
	}
	if (r->kind == AG_RECORD_MALFORMED) {
		ck_assert_str_eq(str(o, "event"), "malformed");
		ck_assert_str_eq(str(o, "request"), r->request);
		ck_assert_str_eq(str(o, "error"), r->error);
		ck_assert_str_eq(str(o, "outcome"), r->outcome);
		has(text, "arenaguard: %s ", r->request);
	}
	if (r->kind == AG_RECORD_SUMMARY) {
		ck_assert_str_eq(str(o, "event"), "summary");
		has(text, "arenaguard: SUMMARY: %lld submissions, %lld blocked,"
		    " %lld warned, %lld suppressed\n", num(o, "submissions"),
		    num(o, "blocked"), num(o, "warned"), num(o, "suppressed"));
	}
	return o;
}

/* A blocked submission the guard could not certify, with hostile bytes
 * in its reason and its dump's path: exactly these lines of text, and
 * JSON that gives the bytes back. */
START_TEST(test_record_submission)
{
	char text[8192], why[64];
	snprintf(why, sizeof(why), "why: %s", hostile);
	struct ag_record_dump d = { 0, "/d", "/d/x\ny.img" };
	struct ag_record r = blocked_known(1, 2);
	r.why = why;
	r.dump = &d;
	json_t *o = agree(&r, text, sizeof(text));
	ck_assert_str_eq(text,
		"arenaguard: blocked submission of schedule 3 (program 1, "
		"fd 7, io_uring, pid 4242): cannot certify\n"
		"arenaguard:   why: a\\nb\\x0d\\t\"q\" \\\\ \\x01\\x1b[31m"
		"\\x7f \xc3\xa9\n"
		"arenaguard:   the schedule holds 2 references\n"
		"arenaguard:   dumped to /d/x\\ny.img; render with: "
		"arena-certify /d/x\\ny.img (a picture: arena-certify --html "
		"report.html /d/x\\ny.img)\n");
	ck_assert(json_is_null(json_object_get(o, "verdict")));
	ck_assert_ptr_null(json_object_get(o, "signature"));
	json_decref(o);
}
END_TEST

/* The other shapes: warned, strict, a schedule the guard never saw, a
 * dump that failed, a malformed request, a notice, the summary. */
START_TEST(test_record_kinds_agree)
{
	char text[8192];
	struct ag_record_dump bad = { -ENOSPC, "/d\n", NULL };
	struct ag_record r = base(AG_RECORD_SUBMISSION);
	r.why = hostile;
	r.strict = 1;
	r.has_schedule = 1;
	r.program = 9;
	r.length = 1;
	r.dump = &bad;
	json_decref(agree(&r, text, sizeof(text)));   /* warned, strict */
	r = base(AG_RECORD_SUBMISSION);
	r.why = "unknown schedule";
	r.blocked = 1;
	json_t *o = agree(&r, text, sizeof(text));     /* never seen */
	has(text, "schedule 3 (fd 7, io_uring, pid 4242): cannot certify\n");
	ck_assert_int_eq(num(o, "schedule"), 3);
	json_decref(o);

	r = base(AG_RECORD_MALFORMED);
	r.request = "SCHEDULE_APPEND";
	r.error = hostile;
	r.outcome = "the driver refused it (EINVAL)";
	o = agree(&r, text, sizeof(text));
	has(text, "arenaguard: SCHEDULE_APPEND (fd 7, io_uring, pid 4242): "
		  "a\\nb");
	json_decref(o);
	r.has_schedule = 1;
	r.program = 2;
	o = agree(&r, text, sizeof(text));
	has(text, "arenaguard: SCHEDULE_APPEND to schedule 3 (program 2, ");
	json_decref(o);

	r = base(AG_RECORD_SUMMARY);
	r.submissions = 10, r.n_blocked = 3, r.n_warned = 2;
	r.n_suppressed = 1;
	json_decref(agree(&r, text, sizeof(text)));

	char msg[80];
	int n = snprintf(msg, sizeof(msg), "arenaguard: note %s", hostile);
	r = base(AG_RECORD_NOTICE);
	r.message = msg;
	r.message_len = (size_t)n;
	o = agree(&r, text, sizeof(text));
	ck_assert_str_eq(str(o, "event"), "notice");
	ck_assert_str_eq(str(o, "message"), msg + strlen("arenaguard: "));
	json_decref(o);
}
END_TEST

/* A verdict: PROG_GOOD with the (D) schedule, certified as the guard
 * does (mirror.c); the text's verdict, condition, diagnostic and rule
 * are the JSON's verdict, condition, explanation and suppress. */
START_TEST(test_record_verdict)
{
	size_t len;
	uint8_t *image = prog_image(PROG_GOOD, &len);
	struct ag_program *p = ag_program_get(image, len);
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(p->prog);
	ac_schedule *sched = ac_schedule_new(p->prog);
	ck_assert_ptr_nonnull(sched);
	ck_assert_int_eq(ac_schedule_append(sched, prog_bad_d_refs, 4, NULL), 0);
	struct ag_verdict v = { .verdict = 0 };
	char diag[4096], text[16384];
	v.verdict = ac_schedule_verdict(sched, &v.diag);
	ck_assert_uint_eq(v.verdict, PROG_BAD_D_VERDICT);
	v.text = (char *)ac_diag_render(&v.diag, p->prog, diag, sizeof(diag));

	struct ag_record r = blocked_known(1, 4);
	r.p = p;
	ag_digest_text(&p->digest, r.digest);
	r.v = &v;
	ck_assert_int_eq(ag_suppress_hint(p, &v, r.hint, sizeof(r.hint)), 0);
	struct ag_line t = { text, sizeof(text), 0 };
	ag_record_text(&t, &r);
	text[t.used] = 0;
	lines_are_the_guards(text);
	json_t *o = json_of(&r);
	has(text, "): verdict %lld (%s)\n", num(o, "verdict"),
	    str(o, "condition"));
	has(text, "\narenaguard:   %s\n", str(o, "explanation"));
	has(text, "; to suppress, the rule: %s\n", str(o, "suppress"));
	has(text, "schedule %lld (program %lld, fd %lld, %s, pid %lld)",
	    num(o, "schedule"), num(o, "program"), num(o, "fd"),
	    str(o, "path"), num(o, "pid"));
	ck_assert_str_eq(str(o, "event"), "blocked");
	ck_assert_str_eq(str(o, "digest"), r.digest);
	char sig[64];
	snprintf(sig, sizeof(sig), "%s:%d", r.digest, PROG_BAD_D_VERDICT);
	ck_assert_str_eq(str(o, "signature"), sig);
	json_decref(o);
	ac_schedule_free(sched);
	ag_program_unref(p);
}
END_TEST

/* A request refused from inside the guard (a signal handler's): its
 * fixed JSON line, written without memory, is the JSON renderer's
 * object byte for byte, and its text says the same. */
START_TEST(test_record_reentered)
{
	struct ag_record r = base(AG_RECORD_REENTERED);
	r.request = "a device ioctl";
	r.error = "made while its thread was inside the guard";
	char text[512], fixed[512];
	text_of(&r, text, sizeof(text));
	lines_are_the_guards(text);
	ck_assert_str_eq(text, "arenaguard: refused a device ioctl on fd 7 "
			 "with EDEADLK (pid 4242): made while its thread was "
			 "inside the guard\n");
	size_t n = ag_record_json_lost(fixed, sizeof(fixed), &r);
	struct json_out j = JSON_OUT_INIT;
	size_t len = 0;
	ag_record_json(&j, &r);
	aci_json_out_end(&j);
	char *line = aci_json_out_take(&j, 1, &len);
	ck_assert_ptr_nonnull(line);
	ck_assert_uint_eq(len, n);
	ck_assert_msg(!memcmp(line, fixed, n), "%s%.*s", line, (int)n, fixed);
	free(line);
	/* Cut short (a small buffer), the text line still ends. */
	char small[24];
	struct ag_line t = { small, sizeof(small), 0 };
	ag_record_text(&t, &r);
	ck_assert_uint_eq(t.used, sizeof(small));
	ck_assert_int_eq(small[t.used - 1], '\n');
}
END_TEST

/* Without memory: text into a buffer too small for the record is cut
 * whole escapes at a time and still ends its line; JSON's fixed line
 * parses and names the record (or none, for a notice). */
START_TEST(test_record_nomem)
{
	struct ag_record r = base(AG_RECORD_SUBMISSION);
	r.why = hostile;
	r.blocked = 1;
	char small[40];
	struct ag_line t = { small, sizeof(small), 0 };
	ag_record_text(&t, &r);
	ck_assert_uint_le(t.used, sizeof(small));
	ck_assert_int_eq(small[t.used - 1], '\n');
	ck_assert_ptr_null(memchr(small, '\n', t.used - 1));

	static const struct { enum ag_record_kind kind; int blocked;
			      const char *record; } cases[] = {
		{ AG_RECORD_SUBMISSION, 1, "blocked" },
		{ AG_RECORD_SUBMISSION, 0, "warned" },
		{ AG_RECORD_MALFORMED, 0, "malformed" },
		{ AG_RECORD_NOTICE, 0, NULL },
		{ AG_RECORD_SUMMARY, 0, NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		r = base(cases[i].kind);
		r.blocked = cases[i].blocked;
		char line[384];
		size_t n = ag_record_json_lost(line, sizeof(line), &r);
		ck_assert_uint_gt(n, 0);
		ck_assert_int_eq(line[n - 1], '\n');
		json_error_t e;
		json_t *o = json_loadb(line, n, 0, &e);
		ck_assert_msg(o, "%s: %s", e.text, line);
		ck_assert_str_eq(str(o, "event"), "lost");
		ck_assert_str_eq(str(o, "why"), "out of memory");
		ck_assert_int_eq(num(o, "pid"), 4242);
		if (cases[i].record) {
			ck_assert_str_eq(str(o, "record"), cases[i].record);
			ck_assert_int_eq(num(o, "fd"), r.fd);
			ck_assert_str_eq(str(o, "path"), r.path);
			ck_assert_int_eq(num(o, "schedule"), r.schedule);
			ck_assert(json_is_null(json_object_get(o, "verdict")));
		} else {
			ck_assert_int_eq(json_object_size(o), 3);
		}
		json_decref(o);
		/* A buffer too small: nothing, never a cut line. */
		ck_assert_uint_eq(ag_record_json_lost(line, 16, &r), 0);
	}
}
END_TEST

Suite *suite_record(void)
{
	Suite *s = suite_create("record");
	TCase *t = tcase_create("record");
	tcase_add_test(t, test_record_submission);
	tcase_add_test(t, test_record_kinds_agree);
	tcase_add_test(t, test_record_verdict);
	tcase_add_test(t, test_record_reentered);
	tcase_add_test(t, test_record_nomem);
	suite_add_tcase(s, t);
	return s;
}
