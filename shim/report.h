/* SPDX-License-Identifier: MIT */
/*
 * Records, counters, the guard's descriptors (report.c).
 */
#ifndef ARENAGUARD_SHIM_REPORT_H
#define ARENAGUARD_SHIM_REPORT_H

#include "submit.h"

struct ag_program;
struct ag_sched;
struct ag_verdict;

/*
 * The output rules (docs/guard.md, Records and where they go), all kept
 * by report.c:
 *
 * - records go only to descriptors the guard opened itself at start:
 *   ARENAGUARD_LOG (its own open file description, O_NONBLOCK), and
 *   standard error duplicated at load time (close-on-exec, at a high
 *   number); never to fd 2 as it is later, which the application may
 *   have closed and reused;
 * - a write never waits (poll with a zero time-out on a description the
 *   application shares; O_NONBLOCK only on the guard's own) and never
 *   signals the application (SIGPIPE and SIGXFSZ are blocked for the
 *   write in the writing thread, and only a signal the write caused is
 *   consumed); a record no output takes is counted (records_lost);
 * - records of a submission (and its dump) are written after the
 *   schedule's lock is dropped (ag_report_flush);
 * - a setting that cannot be honoured is said once, at start.
 */
/* Closes the outputs of an earlier load and opens those ag_cfg names,
 * reporting what cannot be opened or honoured (load.c calls it). */
void ag_output_open(void);
/* In a forked child: a log_path with %p becomes the child's own log, so
 * that the workers of a prefork server do not write into one file. */
void ag_output_forked(void);
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

/* Writes this thread's records (and dumps) composed while a schedule
 * was locked; ag_sched_unlock calls it once the lock is dropped. */
void ag_report_flush(void);
/* The application is about to close, or replace, fds [first, last]
 * (close, dup2, dup3, close_range): the guard's own descriptors among
 * them move out of the way first (or are given up). */
void ag_report_fds_taken(unsigned int first, unsigned int last);
/* A guarded request (what, on fd, -1 for none) made while its thread
 * was inside the guard: refused with EDEADLK, and said in one record
 * each, written without an allocation or a lock its thread may hold
 * (async-signal-safe); counted as blocked.  Returns -EDEADLK. */
int ag_report_reentered(const char *what, int fd);

/* One record for a failing or uncertifiable submission (deduplicated by
 * program and verdict).  v may be NULL for the cases without a verdict,
 * with `why` then saying what went wrong.  s is locked (or NULL): the
 * record is composed now and written by ag_report_flush. */
void ag_report_submission(const struct ag_submit *sub, struct ag_sched *s,
			  const struct ag_verdict *v, const char *why,
			  int blocked);
/* One record per request kind and program for a request the
 * certificate calls malformed ("PROGRAM_CREATE", "SCHEDULE_APPEND"):
 * error says what and where, as arena-certify would, outcome what
 * became of the request.  s is
 * locked (the record is written by ag_report_flush) or NULL (now). */
void ag_report_malformed(const char *request, const struct ag_submit *sub,
			 struct ag_sched *s, const struct ag_program *p,
			 const char *error, const char *outcome);
/* At exit: how many refusals were not recorded again, the suppression
 * rules' report (suppress.c), the SUMMARY line. */
void ag_report_exit(void);

/* A free-form notice ("cannot see ..."), once per distinct key. */
void ag_report_once(const char *key, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A line to the log, unconditionally. */
void ag_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A request the guard refuses for want of memory (before the driver
 * acted, or with its work undone): said once per request kind;
 * returns -ENOMEM. */
int ag_no_memory(const char *request);
void ag_report_stats(void);

void ag_report_lock_all(void);
void ag_report_unlock_all(int child);

#endif
