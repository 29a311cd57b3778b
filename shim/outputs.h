/* SPDX-License-Identifier: MIT */
/*
 * The guard's own descriptors (the log, standard error at load, the dump
 * directory, the summary file), as the files that write to them use
 * them.  Defined in outputs.c, which owns out_lock and the descriptors
 * (struct own_fd); the other files reach them only through these
 * functions, never through shared variables.  Lock order: report_lock
 * (dedup.c) before out_lock; nothing is taken while out_lock is held.
 */
#ifndef ARENAGUARD_SHIM_OUTPUTS_H
#define ARENAGUARD_SHIM_OUTPUTS_H

#include <signal.h>
#include <stddef.h>

/* What ag_output_lock changed in the thread, for ag_output_unlock to
 * restore. */
struct ag_out_state {
	int cancel;
	sigset_t mask;
};

/* Takes out_lock, with every signal blocked and cancellation off in the
 * thread while it is held; returns what to restore.  Not re-entrant. */
struct ag_out_state ag_output_lock(void);

/* Releases out_lock and restores the thread's signal mask and
 * cancellation state (st: ag_output_lock's). */
void ag_output_unlock(struct ag_out_state st);

/* close(2) itself, for a descriptor the guard opened: the interposed
 * close, and syscall(SYS_close) from outside the guard, would come back
 * into the guard.  Keeps errno. */
void ag_output_close(int fd);

/* The dump directory's descriptor (O_PATH) if it is still what the guard
 * opened, else -1 (none, or given up).  out_lock held. */
int ag_output_dump_dir(void);

/* Whether a dump directory is open, or to be reacquired (no lock). */
int ag_output_dump_wanted(void);

/* Writes a whole record, text[0, len) ending with its newline: to the
 * log, or to standard error when there is none or it fails (said once);
 * counted in ag_stats.records_lost when neither takes it.  errno kept.
 * Takes out_lock: not called with it held. */
void ag_output_emit(const char *text, size_t len);

/* (Re)opens standard error, the log and the dump directory as the
 * guard's (none in mode off); *log_err and *dump_err: 0 or -errno, why
 * the log's or the dump directory's open failed, for the caller to say.
 * Expands log_path first (ag_cfg.log_too_long when it does not fit). */
void ag_output_open_fds(int *log_err, int *dump_err);

/* In a forked child: the log opened again under its own name when its
 * template has %p. */
void ag_output_log_forked(void);

/* summary_file opened for the process (none in mode off), at load. */
void ag_output_summary_open(void);

/* Appends line[0, len) to summary_file with one write (O_APPEND: the
 * lines of concurrent processes do not mix), through the descriptor
 * opened at load while it is the guard's, else by path.  Takes
 * out_lock. */
void ag_output_summary_append(const char *line, size_t len);

/* The same without out_lock or memory (a vfork child's). */
void ag_output_summary_append_raw(const char *line, size_t len);

/* out_lock alone, held across fork (ag_report_lock_all, after
 * report_lock); released in the parent and the child after. */
void ag_output_lock_fork(void);
void ag_output_unlock_fork(void);

/* The application is about to close, or replace, fds [first, last]
 * (close, dup2, dup3, close_range): the guard's own descriptors among
 * them move out of the way first (or are given up). */
void ag_report_fds_taken(unsigned int first, unsigned int last);

#endif
