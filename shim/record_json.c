/* SPDX-License-Identifier: MIT */
/*
 * A record as one JSON object (record.h; docs/guard.md, "JSON
 * records"): a submission's fields are arena-certify --json's
 * (result_json.h) and the guard's own; every line has "event", "time",
 * "pid" and "exe".  Written with libarenacert's JSON writer (json_out.h),
 * never jansson, whose allocator may be the application's; the escaping
 * is the writer's.  No state.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "record.h"
#include "certify/result_json.h"

/* The keys every JSON line has: "event": event, "time" (ISO 8601 UTC,
 * milliseconds), "pid" and "exe", into the object open in j. */
static void line_keys(struct json_out *j, const struct ag_record *r,
		      const char *event)
{
	struct tm tm;
	char when[40] = "";
	if (gmtime_r(&r->time.tv_sec, &tm)) {
		size_t n = strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
		snprintf(when + n, sizeof(when) - n, ".%03ldZ",
			 r->time.tv_nsec / 1000000);
	}
	aci_json_out_string_at(j, "event", event);
	aci_json_out_string_at(j, "time", when);
	aci_json_out_int_at(j, "pid", r->pid);
	aci_json_out_string_at(j, "exe", r->exe);
}

/* The guard's fields of a record about a request: the mode, the open
 * file, the objects, the program's digest. */
static void request_fields(struct json_out *j, const struct ag_record *r)
{
	aci_json_out_string_at(j, "mode", r->mode);
	aci_json_out_int_at(j, "fd", r->fd);
	aci_json_out_string_at(j, "path", r->path);
	if (r->has_schedule || r->schedule)
		aci_json_out_uint_at(j, "schedule", r->schedule);
	if (r->has_schedule) {
		aci_json_out_uint_at(j, "program", r->program);
		aci_json_out_uint_at(j, "schedule_length", r->length);
	}
	if (r->p)
		aci_json_out_string_at(j, "digest", r->digest);
}

/* A submission's record: arena-certify --json's object for a verdict
 * ("explanation" the rendered diagnostic, the program's advisories), or
 * {"verdict": null, "condition": null, "reason": "cannot-certify" or
 * "strict-advisories", "explanation": why}; then "event" ("blocked" or
 * "warned"), time, pid, exe, the request's fields, signature
 * (digest:verdict) and suppress (the rule that would suppress it). */
static void submission(struct json_out *j, const struct ag_record *r)
{
	const struct ag_verdict *v = r->v;
	aci_result_json_begin(j, NULL, v ? &v->verdict : NULL);
	if (v) {
		struct ac_advisory *adv = NULL;
		uint64_t n_adv = 0;
		if (ac_program_advisories(r->p->prog, &adv, &n_adv, NULL) != 0)
			n_adv = 0;
		aci_result_json_fields(j, r->p->prog, &v->diag, v->text, adv,
				       n_adv, 1);
		free(adv);
	} else {
		aci_json_out_key(j, "condition");
		aci_json_out_null(j);
		aci_json_out_string_at(j, "reason", r->strict
			? "strict-advisories" : "cannot-certify");
		aci_json_out_string_at(j, "explanation", r->why);
	}
	line_keys(j, r, r->blocked ? "blocked" : "warned");
	request_fields(j, r);
	if (v) {
		char sig[64];
		snprintf(sig, sizeof(sig), "%s:%" PRIu64, r->digest, v->verdict);
		aci_json_out_string_at(j, "signature", sig);
		if (r->hint[0])
			aci_json_out_string_at(j, "suppress", r->hint);
	}
	if (r->dump)
		ag_record_json_dump(j, r->dump);
}

void ag_record_json_dump(struct json_out *j, const struct ag_record_dump *d)
{
	aci_json_out_key(j, d->err ? "dump_error" : "dump");
	aci_json_out_string(j, d->err ? strerror(-d->err) : d->path);
}

void ag_record_json(struct json_out *j, const struct ag_record *r)
{
	static const char prefix[] = "arenaguard: ";
	const char *m = r->message;
	size_t len = r->message_len;
	switch (r->kind) {
	case AG_RECORD_NOTICE:
		if (len >= sizeof(prefix) - 1 &&
		    !strncmp(m, prefix, sizeof(prefix) - 1))
			m += sizeof(prefix) - 1, len -= sizeof(prefix) - 1;
		aci_json_out_object(j);
		line_keys(j, r, "notice");
		aci_json_out_key(j, "message");
		aci_json_out_text(j, m, len);
		break;
	case AG_RECORD_SUBMISSION:
		submission(j, r);
		break;
	case AG_RECORD_MALFORMED:
		aci_json_out_object(j);
		line_keys(j, r, "malformed");
		aci_json_out_string_at(j, "request", r->request);
		request_fields(j, r);
		aci_json_out_string_at(j, "error", r->error);
		aci_json_out_string_at(j, "outcome", r->outcome);
		break;
	case AG_RECORD_SUMMARY:
		aci_json_out_object(j);
		line_keys(j, r, "summary");
		aci_json_out_uint_at(j, "submissions", r->submissions);
		aci_json_out_uint_at(j, "blocked", r->n_blocked);
		aci_json_out_uint_at(j, "warned", r->n_warned);
		aci_json_out_uint_at(j, "suppressed", r->n_suppressed);
		break;
	case AG_RECORD_REENTERED:
		/* Written without memory by ag_record_json_lost, whose line
		 * this is byte for byte (tests/guard/test_record.c). */
		aci_json_out_object(j);
		aci_json_out_string_at(j, "event", "refused");
		aci_json_out_int_at(j, "pid", r->pid);
		aci_json_out_string_at(j, "request", r->request);
		aci_json_out_int_at(j, "fd", r->fd);
		aci_json_out_string_at(j, "errno", "EDEADLK");
		aci_json_out_string_at(j, "why", r->error);
		break;
	}
}

size_t ag_record_json_lost(char *buf, size_t cap, const struct ag_record *r)
{
	/* Which request's record, and what became of it: numbers and the
	 * guard's fixed words only (nothing to escape). */
	char what[160] = "";
	int pid = r ? r->pid : (int)getpid();
	if (r && r->kind == AG_RECORD_REENTERED) {
		int n = snprintf(buf, cap, "{\"event\": \"refused\", \"pid\": "
				 "%d, \"request\": \"%s\", \"fd\": %d, \"errno\": "
				 "\"EDEADLK\", \"why\": \"%s\"}\n", pid,
				 r->request, r->fd, r->error);
		return n > 0 && (size_t)n < cap ? (size_t)n : 0;
	}
	if (r && (r->kind == AG_RECORD_SUBMISSION ||
		  r->kind == AG_RECORD_MALFORMED)) {
		char verdict[24] = "null";
		if (r->v)
			snprintf(verdict, sizeof(verdict), "%" PRIu64,
				 r->v->verdict);
		snprintf(what, sizeof(what), ", \"record\": \"%s\", \"fd\": %d"
			 ", \"path\": \"%s\", \"schedule\": %u, \"verdict\": %s",
			 r->kind == AG_RECORD_MALFORMED ? "malformed"
			 : r->blocked ? "blocked" : "warned", r->fd, r->path,
			 r->schedule, verdict);
	}
	int n = snprintf(buf, cap, "{\"event\": \"lost\", \"pid\": %d%s, "
			 "\"why\": \"out of memory\"}\n", pid, what);
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}
