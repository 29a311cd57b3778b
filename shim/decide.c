/* SPDX-License-Identifier: MIT */
/*
 * The submit-time decision.  By now the program was certified when it
 * was created and (D) has followed every append, so the verdict is read,
 * not computed (ag_sched_verdict, mirror.c: from the schedule itself, the
 * verdict cache, or the ac_schedule once).
 *
 * Whatever cannot be decided (a schedule or program the guard has not
 * seen created, a malformed image the driver took anyway, no memory) is
 * blocked in enforce mode: the guard fails closed.  For want of memory
 * the error is ENOMEM, which a driver gives too, and the same submit
 * goes through once there is memory again.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "api.h"
#include "cache.h"
#include "decide.h"
#include "mirror.h"
#include "options.h"
#include "report.h"
#include "stats.h"
#include "submit.h"
#include "suppress.h"

/* Reports; in enforce mode the submit fails with err.  A failing
 * verdict that a suppression rule matches is submitted and counted as
 * suppressed, unrecorded. */
static int refuse(struct ag_sched *s, const struct ag_submit *sub,
		  const struct ag_verdict *v, const char *why, int err)
{
	assert(v || why);
	if (v && ag_suppress_match(ag_sched_program(s), v)) {
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
	const struct ag_program *p = ag_sched_program(s);
	if (p && p->error)
		return refuse(s, sub, NULL, p->error, -EPERM);
	const char *poison = ag_sched_poisoned(s);
	if (poison)
		return refuse(s, sub, NULL, poison, -EPERM);
	if (p && p->advisory)                   /* strict mode */
		return refuse(s, sub, NULL, p->advisory, -EPERM);

	struct ag_verdict *v = ag_sched_verdict(s);
	int rc = 0;
	if (!v && (poison = ag_sched_poisoned(s)))
		rc = refuse(s, sub, NULL, poison, -EPERM);
	else if (!v)
		rc = refuse(s, sub, NULL, "out of memory while certifying: "
			    "refused with ENOMEM", -ENOMEM);
	else if (v->verdict != 0)
		rc = refuse(s, sub, v, NULL, -EPERM);
	ag_verdict_unref(v);
	return rc;
}
