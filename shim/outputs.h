/* SPDX-License-Identifier: MIT */
/*
 * The guard's own descriptors (the log, standard error at load, the dump
 * directory, the summary file), as the files that write to them use
 * them.  Defined in report.c, which owns out_lock and the descriptors
 * (struct own_fd); the other files reach them only through these
 * functions, never through shared variables.
 */
#ifndef ARENAGUARD_SHIM_OUTPUTS_H
#define ARENAGUARD_SHIM_OUTPUTS_H

#include <signal.h>

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
 * close would come back into the guard. */
void ag_output_close(int fd);

/* The dump directory's descriptor (O_PATH) if it is still what the guard
 * opened, else -1 (none, or given up).  out_lock held. */
int ag_output_dump_dir(void);

#endif
