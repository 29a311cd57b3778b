/* SPDX-License-Identifier: MIT */
/*
 * Whether an exec'd program will load the guard (exec.c).
 */
#ifndef ARENAGUARD_SHIM_EXEC_H
#define ARENAGUARD_SHIM_EXEC_H

/* The exec check (exec.c), under the launcher only: the guard's path
 * kept at load (ag_exec_load); whether the program the exec family
 * runs will load the guard, said to the launcher when not (the
 * reason's word, or NULL).  ..._at: as execveat(dirfd, path, flags)
 * with environment env; ..._search: file found in PATH as execvp(3)
 * finds it.  Async-signal-safe enough for a vfork child; errno kept. */
void ag_exec_load(void);
const char *ag_exec_check_at(int dirfd, const char *path, int flags,
			     char *const env[]);
const char *ag_exec_check_search(const char *file, char *const env[]);

#endif
