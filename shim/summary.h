/* SPDX-License-Identifier: MIT */
/*
 * The process's summary (summary.c): the counts since it started (its
 * own, not its parent's), the SUMMARY line at exit, and the lines the
 * launcher reads from summary_file (loaded, refused, counts, unguarded,
 * execfailed).
 */
#ifndef ARENAGUARD_SHIM_SUMMARY_H
#define ARENAGUARD_SHIM_SUMMARY_H

/* The first refusal of this process told to the launcher ("refused
 * PID"), at once, so that --error-exitcode fails the job even when the
 * process never reaches its exit (killed, or an exec).  Once a process. */
void ag_summary_refusal(void);

/* In a forked child: the counts start from the parent's at fork. */
void ag_summary_forked(void);

/* At exit: the SUMMARY line ("arenaguard: SUMMARY: N submissions, N
 * blocked, N warned, N suppressed", when any was refused), or,
 * under the launcher, this process's counts in summary_file. */
void ag_report_summary(void);
/* At load, under the launcher: "loaded PID" in summary_file, which
 * tells the launcher that a process of its command was guarded (one
 * that ld.so ran without the guard never says it). */
void ag_report_loaded(void);
/* Tells the launcher that this process is about to execute path, which
 * will not load the guard (why: a word, exec.c), and that an exec it
 * told of failed (no program ran): "unguarded PID PATH WHY" and
 * "execfailed PID" in summary_file.  Lock-free and allocation-free (a
 * vfork child's): the descriptor opened at load while it is still the
 * guard's, else summary_file opened for the line. */
void ag_report_unguarded(const char *path, const char *why);
void ag_report_exec_failed(void);
/* At exit: how many refusals were not recorded again, the suppression
 * rules' report (suppress.c), the SUMMARY line. */
void ag_report_exit(void);
/* At exit, with stats=1: this process's counters, one line. */
void ag_report_stats(void);

#endif
