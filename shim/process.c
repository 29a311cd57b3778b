/* SPDX-License-Identifier: MIT */
/*
 * Which process is running the guard's code.  The guard keeps its state
 * (the fd table, the mirrors, its own descriptors) for one process: the
 * one that loaded it, or the child of a fork(), which gets a copy and
 * is marked again by the atfork child handler (or, without one, when
 * the MADV_WIPEONFORK witness below first says its memory is its own).
 * A child that shares
 * the guard's memory without being a thread of it (vfork, posix_spawn,
 * clone(CLONE_VM) without CLONE_THREAD) runs the wrappers on that same
 * state until it execs: what it does to its own descriptors must not
 * be taken for what the guard's process did to its (docs/guard.md,
 * "Threads and fork").
 *
 * Nothing in memory tells such a child from its parent (it shares the
 * parent thread's TLS, and glibc >= 2.25 caches no pid), so the kernel
 * is asked: getpid(2) against the pid marked here.  That costs a system
 * call, so the wrappers ask only when a call would change the guard's
 * state (a close or dup of a descriptor it tracks), never on a request's
 * way through.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <linux/kcmp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "process.h"

static _Atomic pid_t own_pid AG_FORK_DATA;
/* The pid namespace of the marked process (/proc/self/ns/pid's inode;
 * 0: cannot tell).  A pid is a number in a namespace: the first child
 * after unshare(CLONE_NEWPID) is pid 1 of a new one, the number of a
 * namespace's init that vforks it.  Asked only where the pids match. */
static _Atomic unsigned long own_pidns;

static unsigned long pidns(void)
{
	struct stat st;
	return stat("/proc/self/ns/pid", &st) == 0 ? (unsigned long)st.st_ino
						    : 0;
}

/* Whether self, the marked pid, is the marked process (not a child in
 * another pid namespace that has the same number there). */
static int same_process(void)
{
	unsigned long ns = atomic_load_explicit(&own_pidns,
						memory_order_relaxed);
	if (!ns)
		return 1;
	unsigned long now = pidns();
	return !now || now == ns;
}
/* A page the kernel wipes in a fork()'s copy of the memory
 * (MADV_WIPEONFORK, Linux 4.14), and nonzero in the guard's memory:
 * a process that shares that memory (vfork, posix_spawn, CLONE_VM)
 * reads it nonzero, one with a copy of its own reads 0.  No system
 * call, and none a seccomp profile denies (kcmp(2) is, by Docker's
 * default one).  NULL where the kernel has no MADV_WIPEONFORK: kcmp
 * is asked. */
static _Atomic uint64_t *witness;

static void witness_set(void)
{
	if (!witness) {
		long page = sysconf(_SC_PAGESIZE);
		void *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return;
		if (madvise(p, (size_t)page, MADV_WIPEONFORK) != 0) {
			munmap(p, (size_t)page);
			return;
		}
		witness = p;
	}
	atomic_store(witness, 1);
}

/* Whether this process (not the marked one) has memory of its own: a
 * fork's child, whose atfork handler has not marked it yet. */
static int memory_own(pid_t self, pid_t own)
{
	if (witness)
		return atomic_load(witness) == 0;
	return syscall(SYS_kcmp, self, own, KCMP_VM, 0, 0) > 0;
}
/* Set in a child that shares the guard's memory but has an fd table of
 * its own, once it asked (ag_process_shares_fds): its descriptor
 * numbers may name other open files than the table's (it closed, or
 * dup2'd over, one the table tracks, and opened the device again).
 * Per thread: such a child runs on the TLS of the thread that made it
 * (vfork, posix_spawn), which is suspended meanwhile; that thread
 * clears it when it runs again.  initial-exec, as the re-entry flag
 * (preload/reentry.h). */
__thread int ag_fds_diverged __attribute__((tls_model("initial-exec")));

void ag_process_mark(void)
{
	int saved = errno;
	witness_set();
	atomic_store(&own_pidns, pidns());
	errno = saved;
	atomic_store(&own_pid, (pid_t)syscall(SYS_getpid));
}

void ag_process_forked(void)
{
	int saved = errno;
	pid_t own = atomic_load(&own_pid);
	/* getppid(2) is 0 where the parent is outside this process's pid
	 * namespace: always so in a namespace other than the forker's
	 * (the forker's pid_for_children after unshare(CLONE_NEWPID) or
	 * setns(2), which can only be one below its own, where it is not
	 * seen), or once the parent is gone to a reaper above.  Nonzero
	 * and the marked pid: the forker, seen in this namespace under the
	 * number marked in its own, is the marked process in that same
	 * namespace, whose own_pidns this copy holds.  (The one other way,
	 * a process sharing the guard's memory that forks, in another pid
	 * namespace under the marked number: vfork and posix_spawn children
	 * exec or exit, and a clone(CLONE_VM) child beside its parent is not
	 * supported, Threads and fork.)  Otherwise the namespace is asked. */
	if (own != 0 && (pid_t)syscall(SYS_getppid) == own) {
		witness_set();
		errno = saved;
		atomic_store(&own_pid, (pid_t)syscall(SYS_getpid));
		return;
	}
	errno = saved;
	ag_process_mark();
}

int ag_process_shares_fds(void)
{
	pid_t self = (pid_t)syscall(SYS_getpid);
	pid_t own = atomic_load(&own_pid);
	int saved = errno;
	if (own == 0 || (self == own && same_process())) {
		errno = saved;        /* the guard's process (or unmarked) */
		return 1;
	}
	/* Another address space: a copy of the guard's memory, its own (a
	 * fork whose atfork handler has not run yet, another library's
	 * child handler closing first; a raw fork system call, _Fork):
	 * this process is the one whose state it is. */
	if (memory_own(self, own)) {
		ag_process_mark();
		errno = saved;
		return 1;
	}
	/* The same memory.  0: one fd table (clone(CLONE_VM|CLONE_FILES));
	 * 1 or 2: two (a vfork or posix_spawn child's copy); -1: kcmp
	 * denied (seccomp: Docker's default profile denies it) or absent:
	 * taken as a copy, as vfork and posix_spawn, the ways libc and
	 * CPython start programs, make it; a clone(CLONE_VM|CLONE_FILES)
	 * child's closes are then not followed (a request on such an fd
	 * fails in the driver, EBADF), and its requests are probed again
	 * (ag_process_fds_diverged). */
	/* (The marked pid in another pid namespace names this process
	 * itself, or another: kcmp cannot compare them.) */
	long rc = self == own ? -1
			      : syscall(SYS_kcmp, self, own, KCMP_FILES, 0, 0);
	if (rc != 0)
		ag_fds_diverged = 1;
	errno = saved;
	return rc == 0;
}

int ag_process_fds_diverged(void)
{
	if (__builtin_expect(!ag_fds_diverged, 1))
		return 0;
	int saved = errno;
	pid_t self = (pid_t)syscall(SYS_getpid);
	pid_t own = atomic_load(&own_pid);
	int diverged = 1;
	int mine = own == 0 || (self == own && same_process());
	if (mine || memory_own(self, own)) {
		/* The thread the child borrowed, running again: a vfork or
		 * posix_spawn child has exec'd or exited by then (a
		 * clone(CLONE_VM) child running beside its parent's thread
		 * on its TLS is not supported: Threads and fork).  Or a
		 * fork's child, its memory (and the flag) a copy. */
		if (!mine)
			ag_process_mark();
		ag_fds_diverged = 0;
		diverged = 0;
	}
	errno = saved;
	return diverged;
}
