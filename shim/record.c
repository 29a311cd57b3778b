/* SPDX-License-Identifier: MIT */
/*
 * Writing a record (record.h) in the guard's log_format, through the
 * guard's descriptors (outputs.c): its text composed on the stack, or
 * its JSON line, which needs memory; without it, the one fallback, a
 * fixed line that says which record was lost (ag_record_json_lost).
 * Notices (ag_log) are records too.  No state.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "line.h"
#include "options.h"
#include "report.h"
#include "stats.h"
#include "outputs.h"
#include "record.h"

void ag_record_init(struct ag_record *r, enum ag_record_kind kind)
{
	*r = (struct ag_record){ .kind = kind, .pid = (int)getpid(),
				 .exe = program_invocation_short_name };
	clock_gettime(CLOCK_REALTIME, &r->time);
}

/* The fixed line standing for r (or an unknown record), counted lost. */
static void emit_lost(const struct ag_record *r)
{
	char fixed[384];
	size_t n = ag_record_json_lost(fixed, sizeof(fixed), r);
	atomic_fetch_add(&ag_stats.records_lost, 1);
	ag_output_emit(fixed, n);
}

void ag_record_emit_json(struct json_out *j, const struct ag_record *r)
{
	size_t len = 0;
	aci_json_out_end(j);
	char *line = aci_json_out_take(j, 1, &len);
	if (!line) {
		emit_lost(r);
		return;
	}
	ag_output_emit(line, len);
	free(line);
}

/* r's text, composed on the stack (at most 4095 bytes), written. */
static __attribute__((noinline)) void emit_text(const struct ag_record *r)
{
	char buf[4096];
	struct ag_line t = { buf, sizeof(buf), 0 };
	ag_record_text(&t, r);
	ag_output_emit(t.buf, t.used);
}

/* A REENTERED record, in either format, in 512 bytes of the stack: the
 * stack is a signal handler's (maybe a small alternate one). */
static __attribute__((noinline)) void emit_reentered(const struct ag_record *r)
{
	char line[512];
	struct ag_line t = { line, sizeof(line), 0 };
	if (ag_cfg.log_json)
		t.used = ag_record_json_lost(line, sizeof(line), r);
	else
		ag_record_text(&t, r);
	ag_output_emit(line, t.used);
}

void ag_record_emit_fallback(const struct ag_record *r)
{
	if (r->kind == AG_RECORD_REENTERED)
		emit_reentered(r);
	else if (ag_cfg.log_json)
		emit_lost(r);
	else
		emit_text(r);
}

void ag_record_emit(const struct ag_record *r)
{
	if (!ag_cfg.log_json || r->kind == AG_RECORD_REENTERED) {
		ag_record_emit_fallback(r);   /* text needs no memory */
		return;
	}
	struct json_out j = JSON_OUT_INIT;
	ag_record_json(&j, r);
	ag_record_emit_json(&j, r);
}

void ag_log(const char *fmt, ...)
{
	char msg[4096];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	struct ag_record r;
	ag_record_init(&r, AG_RECORD_NOTICE);
	r.message = msg;
	r.message_len = n < 0 ? 0 : (size_t)n < sizeof(msg) ? (size_t)n
							    : sizeof(msg) - 1;
	ag_record_emit(&r);
}
