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

#endif
