/* SPDX-License-Identifier: MIT */
/*
 * The process's summary (summary.h): its counts since it started, the
 * SUMMARY line and the stats at exit, and the launcher's channel,
 * summary_file (its descriptor: outputs.c): "loaded PID", "refused PID"
 * at the first refusal, "counts PID ..." at exit, "unguarded PID PATH
 * WHY" and "execfailed PID" from the exec wrappers.
 *
 * State: the counts this process started from and whether its refusal
 * was said, no lock: written at load and in a forked child (one thread
 * then), read at exit; refusal_said is atomic.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "options.h"
#include "report.h"
#include "stats.h"
#include "suppress.h"
#include "outputs.h"
#include "process.h"
#include "record.h"
#include "summary.h"

static struct {
	/* The counts this process started from: its parent's at fork (a
	 * forked child inherits them, and the launcher sums over
	 * processes). */
	unsigned long long submissions, blocked, warned, suppressed, repeats;
	/* A refusal was written to summary_file already (in this process). */
	atomic_int refusal_said;
} base AG_FORK_DATA;

void ag_summary_refusal(void)
{
	if (!ag_cfg.summary_file[0] || atomic_exchange(&base.refusal_said, 1))
		return;
	char line[64];
	int n = snprintf(line, sizeof(line), "refused %d\n", (int)getpid());
	ag_output_summary_append(line, (size_t)n);
}

void ag_report_loaded(void)
{
	ag_output_summary_open();
	if (!ag_cfg.summary_file[0])
		return;
	char line[64];
	int n = snprintf(line, sizeof(line), "loaded %d\n", (int)getpid());
	ag_output_summary_append(line, (size_t)n);
}

/* A summary line built on the stack (no stdio: a vfork child's):
 * buf[0, n), room for the newline kept. */
struct raw_line {
	char buf[512];
	size_t n;
};

/* Appends s, a control character or a space as '?' when field (so that
 * a path stays one space-separated field of one line). */
static void raw_put(struct raw_line *t, const char *s, int field)
{
	for (; *s && t->n + 1 < sizeof(t->buf); s++)
		t->buf[t->n++] = field && ((unsigned char)*s <= ' ' ||
					   *s == 0x7f) ? '?' : *s;
}

/* Appends this process's id in decimal. */
static void raw_put_pid(struct raw_line *t)
{
	char d[16];
	size_t k = 0;
	unsigned int u = (unsigned int)getpid();
	do
		d[k++] = (char)('0' + u % 10);
	while ((u /= 10) && k < sizeof(d));
	while (k && t->n + 1 < sizeof(t->buf))
		t->buf[t->n++] = d[--k];
}

void ag_report_unguarded(const char *path, const char *why)
{
	if (!ag_cfg.summary_file[0])
		return;
	struct raw_line t = { .n = 0 };
	raw_put(&t, "unguarded ", 0);
	raw_put_pid(&t);
	raw_put(&t, " ", 0);
	raw_put(&t, path, 1);
	raw_put(&t, " ", 0);
	raw_put(&t, why, 1);
	t.buf[t.n++] = '\n';
	ag_output_summary_append_raw(t.buf, t.n);
}

void ag_report_exec_failed(void)
{
	if (!ag_cfg.summary_file[0])
		return;
	struct raw_line t = { .n = 0 };
	raw_put(&t, "execfailed ", 0);
	raw_put_pid(&t);
	t.buf[t.n++] = '\n';
	ag_output_summary_append_raw(t.buf, t.n);
}

void ag_report_summary(void)
{
	struct ag_record r;
	ag_record_init(&r, AG_RECORD_SUMMARY);
	r.submissions = atomic_load(&ag_stats.submissions) - base.submissions;
	r.n_blocked = atomic_load(&ag_stats.blocked) - base.blocked;
	r.n_warned = atomic_load(&ag_stats.warned) - base.warned;
	r.n_suppressed = atomic_load(&ag_stats.suppressed) - base.suppressed;
	if (ag_cfg.summary_file[0]) {
		char line[160];
		int n = snprintf(line, sizeof(line), "counts %d %llu %llu %llu "
				 "%llu\n", (int)getpid(), r.submissions,
				 r.n_blocked, r.n_warned, r.n_suppressed);
		ag_output_summary_append(line, (size_t)n);
		return;
	}
	/* Silent when there is nothing to say, as a sanitizer is; the
	 * launcher prints the line of every run. */
	if (!ag_cfg.summary || r.n_blocked + r.n_warned + r.n_suppressed == 0)
		return;
	ag_record_emit(&r);
}

void ag_summary_forked(void)
{
	base.submissions = atomic_load(&ag_stats.submissions);
	base.blocked = atomic_load(&ag_stats.blocked);
	base.warned = atomic_load(&ag_stats.warned);
	base.suppressed = atomic_load(&ag_stats.suppressed);
	base.repeats = atomic_load(&ag_stats.repeats);
	atomic_store(&base.refusal_said, 0);
}

void ag_report_exit(void)
{
	unsigned long long repeats = atomic_load(&ag_stats.repeats) -
				     base.repeats;
	if (repeats)
		ag_log("arenaguard: %llu further refusal%s like one recorded "
		       "%s not recorded again (one record per program and "
		       "verdict)", repeats, repeats == 1 ? "" : "s",
		       repeats == 1 ? "was" : "were");
	ag_suppress_report(atomic_load(&ag_stats.submissions) >
			   base.submissions, ag_log);
	ag_report_summary();
}

void ag_report_stats(void)
{
	unsigned long long ns = atomic_load(&ag_stats.certify_ns);
	ag_log("arenaguard: stats (pid %d, mode %s): programs certified %llu, "
	       "schedules certified %llu, cache hits %llu (programs %llu, "
	       "verdicts %llu), submissions %llu, blocked %llu, warned %llu, "
	       "records %llu (lost %llu), unchecked SQEs %llu, time certifying %.3f ms",
	       (int)getpid(), ag_mode_name(ag_cfg.mode),
	       atomic_load(&ag_stats.programs_certified),
	       atomic_load(&ag_stats.schedules_certified),
	       atomic_load(&ag_stats.program_hits) +
		       atomic_load(&ag_stats.verdict_hits),
	       atomic_load(&ag_stats.program_hits),
	       atomic_load(&ag_stats.verdict_hits),
	       atomic_load(&ag_stats.submissions),
	       atomic_load(&ag_stats.blocked),
	       atomic_load(&ag_stats.warned),
	       atomic_load(&ag_stats.records),
	       atomic_load(&ag_stats.records_lost),
	       atomic_load(&ag_stats.unchecked_sqes), (double)ns / 1e6);
}
