/* SPDX-License-Identifier: MIT */
/*
 * Records, notices and the outputs' opening (report.c); the descriptors
 * themselves: outputs.h; the summary and the counts: summary.h.
 */
#ifndef ARENAGUARD_SHIM_REPORT_H
#define ARENAGUARD_SHIM_REPORT_H

#include "notice.h"   /* ag_report_once, for the files that say records too */
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

/* Writes this thread's records (and dumps) composed while a schedule
 * was locked; ag_request_unlock calls it once the lock is dropped. */
void ag_report_flush(void);
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

/* A line to the log, unconditionally. */
void ag_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A request the guard refuses for want of memory (before the driver
 * acted, or with its work undone): said once per request kind;
 * returns -ENOMEM. */
int ag_no_memory(const char *request);

void ag_report_lock_all(void);
void ag_report_unlock_all(int child);

#endif
