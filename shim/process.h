/* SPDX-License-Identifier: MIT */
/*
 * The guard's process, or a child sharing its memory (process.c).
 */
#ifndef ARENAGUARD_SHIM_PROCESS_H
#define ARENAGUARD_SHIM_PROCESS_H

/* This process is the one whose state the guard keeps (at load, and in
 * a fork()'s child from its atfork handler). */
void ag_process_mark(void);
/*
 * The same in a fork()'s child, from its atfork handler: the pid
 * namespace is not asked again (a stat of /proc/self/ns/pid, which makes
 * the new pid's proc inodes) when the child's parent is the marked
 * process in the child's own namespace (one getppid(2)); otherwise as
 * ag_process_mark.
 */
void ag_process_forked(void);
/*
 * Whether a close or dup made now acts on the fd table the guard keeps
 * state for: 1 in the guard's process (any thread), and in a child that
 * shares its memory and its fd table (clone(CLONE_VM|CLONE_FILES)); 0
 * in a child that shares its memory but has its own copy of the table
 * (vfork, posix_spawn), or when kcmp(2) cannot say (taken as such a
 * copy, as libc and CPython make): its closes are its own, and change
 * nothing of the guard's.  One getpid(2), and a kcmp(2) in such a
 * child: call it only
 * when the call touches a descriptor the guard tracks.
 */
int ag_process_shares_fds(void);
/*
 * Whether this is a child that shares the guard's memory but not its fd
 * table, once it has asked ag_process_shares_fds (which said 0): its
 * descriptor numbers may name other open files than the ones the table
 * keeps for them (a vfork child that closed the device fd and opened
 * the device again at that number), so a file the table holds is not
 * taken for its fd.  A load of ag_fds_diverged, a flag of the thread
 * whose TLS the child runs on; while it is set a getpid, and the first
 * call of that thread once it runs again clears it.
 */
extern __thread int ag_fds_diverged __attribute__((tls_model("initial-exec")));
int ag_process_fds_diverged(void);

/*
 * The guard's variables a fork writes (the prepare handler in the
 * parent, the child handler in the child), gathered in one section
 * (ag_fork_data, placed whole by the linker): after a fork every page
 * of the guard's data is copy-on-write in both processes, and each page
 * first written is a fault, in the parent at its next fork and in the
 * child at once (issue 32).  Only variables a fork writes belong here,
 * and none that is written between forks otherwise (it would fault for
 * them).
 */
#define AG_FORK_DATA __attribute__((section("ag_fork_data")))

#endif
