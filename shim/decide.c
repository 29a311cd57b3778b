/* SPDX-License-Identifier: MIT */
/*
 * The submit-time decision.  By now the program was certified when it
 * was created and (D) has followed every append, so the verdict is read,
 * not computed: from the schedule itself when nothing was appended since
 * its last submit, else from the verdict cache by digest (bytes
 * compared), else from the ac_schedule, once, and published.
 *
 * Whatever cannot be decided (a schedule or program the guard has not
 * seen created, a malformed image the driver took anyway, no memory) is
 * blocked in enforce mode: the guard fails closed.  For want of memory
 * the error is ENOMEM, which a driver gives too, and the same submit
 * goes through once there is memory again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "guard.h"

/* Computes, publishes and returns (referenced) s's verdict; NULL when
 * it cannot (s is then poisoned, or memory ran out). */
static struct ag_verdict *compute(struct ag_sched *s,
				  const struct ac_digest *d)
{
	if (!s->sched && ag_sched_materialize(s) != 0)
		return NULL;
	struct ag_verdict *v = ag_verdict_new();
	if (!v)
		return NULL;
	uint64_t start = ag_now_ns();
	char text[4096];
	v->digest = *d;
	v->verdict = ac_schedule_verdict(s->sched, &v->diag);
	v->text = ag_strdup(ac_diag_render(&v->diag, s->program->prog, text,
					   sizeof(text)));
	atomic_fetch_add(&s->program->refcount, 1);
	v->program = s->program;
	if (s->refv)
		atomic_fetch_add(&s->refv->refcount, 1);
	v->refv = s->refv;
	v->n_refs = s->n_refs;
	atomic_fetch_add(&ag_stats.certify_ns, ag_now_ns() - start);
	atomic_fetch_add(&ag_stats.schedules_certified, 1);
	if (!v->text) {
		ag_verdict_unref(v);
		return NULL;
	}
	v = ag_verdict_publish(v);
	/* A rebuild of this schedule may stay lazy up to its submit. */
	ag_hints_add(s->prefixes, s->n_prefixes);
	return v;
}

/* s's verdict, referenced, or NULL (see compute). */
static struct ag_verdict *verdict_of(struct ag_sched *s)
{
	if (s->last && s->last->n_refs == s->n_refs) {
		atomic_fetch_add(&ag_stats.verdict_hits, 1);
		atomic_fetch_add(&s->last->refcount, 1);
		return s->last;
	}
	struct ac_digest d;
	ac_digester_value(s->digester, &d);
	struct ag_verdict *v = ag_verdict_find(&d, s->program,
					       s->refv ? s->refv->v : NULL,
					       s->n_refs);
	if (v) {
		atomic_fetch_add(&ag_stats.verdict_hits, 1);
		/* Built by different batches than the entry's schedule: its
		 * prefixes lead here too, for the next rebuild. */
		if (s->sched)
			ag_hints_add(s->prefixes, s->n_prefixes);
	} else {
		v = compute(s, &d);
	}
	if (v) {
		atomic_fetch_add(&v->refcount, 1);
		ag_verdict_unref(s->last);
		s->last = v;
	}
	return v;
}

/* Reports; in enforce mode the submit fails with err.  A failing
 * verdict that a suppression rule matches is submitted and counted as
 * suppressed, unrecorded. */
static int refuse(struct ag_sched *s, const struct ag_submit *sub,
		  const struct ag_verdict *v, const char *why, int err)
{
	if (v && ag_suppress_match(s->program, v)) {
		atomic_fetch_add(&ag_stats.suppressed, 1);
		return 0;
	}
	int block = ag_cfg.mode == AG_ENFORCE;
	atomic_fetch_add(block ? &ag_stats.blocked : &ag_stats.warned, 1);
	ag_api_note_refusal(sub, s, v, why, block);
	ag_report_submission(sub, s, v, why, block);
	return block ? err : 0;
}

int ag_decide(struct ag_sched *s, const struct ag_submit *sub)
{
	atomic_fetch_add(&ag_stats.submissions, 1);
	if (!s)
		return refuse(NULL, sub, NULL, "the guard did not see this "
			      "schedule created (a raw system call, or "
			      "another process sharing the open file)",
			      -EPERM);
	if (s->program && s->program->error)
		return refuse(s, sub, NULL, s->program->error, -EPERM);
	if (s->poison[0])
		return refuse(s, sub, NULL, s->poison, -EPERM);
	if (s->program && s->program->advisory)     /* strict mode */
		return refuse(s, sub, NULL, s->program->advisory, -EPERM);

	struct ag_verdict *v = verdict_of(s);
	int rc = 0;
	if (!v && s->poison[0])
		rc = refuse(s, sub, NULL, s->poison, -EPERM);
	else if (!v)
		rc = refuse(s, sub, NULL, "out of memory while certifying: "
			    "refused with ENOMEM", -ENOMEM);
	else if (v->verdict != 0)
		rc = refuse(s, sub, v, NULL, -EPERM);
	ag_verdict_unref(v);
	return rc;
}
