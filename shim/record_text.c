/* SPDX-License-Identifier: MIT */
/*
 * A record as lines of text (record.h): "arenaguard: " and what
 * happened, then indented lines with the details.  Every value goes
 * through ag_line_put (line.c), escaped; no memory, no state.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cache.h"
#include "line.h"
#include "record.h"

/* The objects, as in "schedule 3 (program 1, fd 5, ioctl, pid 42)". */
static void put_what(struct ag_line *t, const struct ag_record *r)
{
	ag_line_put(t, "schedule %u (", r->schedule);
	if (r->has_schedule)
		ag_line_put(t, "program %u, ", r->program);
	ag_line_put(t, "fd %d, %s, pid %d)", r->fd, r->path, r->pid);
}

/* A submission's record: what was refused and why, the schedule's
 * length, and the rule that would suppress it. */
static void submission(struct ag_line *t, const struct ag_record *r)
{
	ag_line_put(t, "arenaguard: %s ", r->blocked ? "blocked submission of"
						     : "warning: submitting");
	put_what(t, r);
	if (r->v)
		ag_line_put(t, ": verdict %" PRIu64 " (%s)", r->v->verdict,
		    ac_condition_name(r->v->diag.condition));
	else if (r->strict)
		ag_line_put(t, ": certified, but refused in strict mode");
	else
		ag_line_put(t, ": cannot certify");
	ag_line_end(t);
	ag_line_put(t, "arenaguard:   %s", r->v ? r->v->text : r->why);
	ag_line_end(t);
	if (r->has_schedule) {
		ag_line_put(t, "arenaguard:   the schedule holds %" PRIu64
		    " reference%s", r->length, r->length == 1 ? "" : "s");
		if (r->hint[0])
			ag_line_put(t, "; to suppress, the rule: %s", r->hint);
		ag_line_end(t);
	}
	if (!r->blocked) {
		ag_line_put(t, "arenaguard:   submitted anyway (ARENAGUARD=warn)");
		ag_line_end(t);
	}
	if (r->dump)
		ag_record_text_dump(t, r->dump);
}

/* A malformed request's record: the request, its mistake, the outcome. */
static void malformed(struct ag_line *t, const struct ag_record *r)
{
	ag_line_put(t, "arenaguard: %s ", r->request);
	if (r->has_schedule)
		ag_line_put(t, "to "), put_what(t, r);
	else
		ag_line_put(t, "(fd %d, %s, pid %d)", r->fd, r->path, r->pid);
	ag_line_put(t, ": %s", r->error);
	ag_line_end(t);
	ag_line_put(t, "arenaguard:   %s", r->outcome);
	ag_line_end(t);
}

/* A request refused from inside the guard: written on a signal
 * handler's stack, so without ag_line_put's 4 KiB buffer; the words are
 * the guard's own (nothing to escape).  Cut short, it still ends. */
static void reentered(struct ag_line *t, const struct ag_record *r)
{
	assert(t->used < t->cap);
	size_t room = t->cap - t->used;
	int n = snprintf(t->buf + t->used, room, "arenaguard: refused %s on "
			 "fd %d with EDEADLK (pid %d): %s", r->request, r->fd,
			 r->pid, r->error);
	if (n > 0)
		t->used += (size_t)n < room ? (size_t)n : room - 1;
	ag_line_end(t);
}

void ag_record_text_dump(struct ag_line *t, const struct ag_record_dump *d)
{
	if (d->err == 0) {
		/* One put per path: each is up to 4095 bytes. */
		ag_line_put(t, "arenaguard:   dumped to %s", d->path);
		ag_line_put(t, "; render with: arena-certify %s", d->path);
		ag_line_put(t, " (a picture: arena-certify --html "
		    "report.html %s)", d->path);
	} else {
		ag_line_put(t, "arenaguard:   could not write a dump in %s: %s",
		    d->dir, strerror(-d->err));
	}
	ag_line_end(t);
}

void ag_record_text(struct ag_line *t, const struct ag_record *r)
{
	switch (r->kind) {
	case AG_RECORD_NOTICE:
		ag_line_put_escaped(t, r->message, r->message_len);
		ag_line_end(t);
		break;
	case AG_RECORD_SUBMISSION:
		submission(t, r);
		break;
	case AG_RECORD_MALFORMED:
		malformed(t, r);
		break;
	case AG_RECORD_SUMMARY:
		ag_line_put(t, "arenaguard: SUMMARY: %llu submissions, %llu "
		    "blocked, %llu warned, %llu suppressed", r->submissions,
		    r->n_blocked, r->n_warned, r->n_suppressed);
		ag_line_end(t);
		break;
	case AG_RECORD_REENTERED:
		reentered(t, r);
		break;
	}
}
