/* SPDX-License-Identifier: MIT */
/*
 * The re-entry flag of a preload module, once (reentry.c defines it):
 * how deep this thread is in the module's own code.  Every module (the
 * guard, shim/; the simulated device, sim/) links its own copy of the
 * preload core, kept local by its version script, so each has a flag of
 * its own: the guard's says the guard is running, the simulator's that
 * the device is.
 *
 * A module's own calls of the functions it interposes (libc's, through
 * itself or a library underneath) see the flag set and go straight to
 * the next definition; a request that arrives while it is set in a
 * module that never calls itself comes from a signal handler that
 * interrupted the module (the guard refuses those: shim/util.h).
 *
 * initial-exec TLS: the modules are preloaded (their TLS is in the
 * static block), and an access is one thread-pointer-relative load or
 * store: it never allocates or takes a lock, so it is async-signal-safe
 * and may be used before the dynamic linker is done and in a vfork
 * child (which runs on its parent thread's TLS: every enter there is
 * left again before the child returns or execs).
 */
#ifndef PRELOAD_REENTRY_H
#define PRELOAD_REENTRY_H

#include <errno.h>

extern __thread int preload_depth __attribute__((tls_model("initial-exec")));

/* Whether this thread is inside the module already. */
static inline int preload_inside(void)
{
	return __builtin_expect(preload_depth != 0, 0);
}

/* Enters (leaves) the module's own code; every enter is paired with
 * one leave on the same thread. */
static inline void preload_enter(void)
{
	preload_depth++;
}

static inline void preload_leave(void)
{
	preload_depth--;
}

/* Enters the module for work that is not the caller's call (a probe,
 * bookkeeping): the caller's errno, returned, is given back by
 * preload_leave_quiet, whatever the work left in errno. */
static inline int preload_enter_quiet(void)
{
	int saved = errno;
	preload_depth++;
	return saved;
}

static inline void preload_leave_quiet(int saved)
{
	preload_depth--;
	errno = saved;
}

#endif
