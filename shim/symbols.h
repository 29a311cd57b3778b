/* SPDX-License-Identifier: MIT */
/*
 * Every symbol libarenaguard.so exports, once (an X-macro list): the
 * interposed functions (interpose.c defines each, and declares and
 * resolves the next definition of each from these lists), and the
 * version script that exports them and nothing else is generated from
 * this file (scripts/version_script.py, shim/meson.build), so that the
 * guard's own names and libarenacert's never bind to, or are bound by,
 * the application's or the simulator's.
 */
#ifndef ARENAGUARD_SYMBOLS_H
#define ARENAGUARD_SYMBOLS_H

#include "interposed.h"

/* ioctl: the fast path's own atomic pointer (interpose.c);
 * __register_atfork (which pthread_atfork calls): the guard's fork
 * handlers registered before any other library's (interpose.c);
 * syscall: glibc's syscall() function, its close, close_range, dup2 and
 * dup3 numbers followed as those calls are, the others passed on (its
 * own atomic pointer, found when first needed: interpose.c). */
#define AG_OWN_SYMBOLS(X) X(ioctl) X(__register_atfork) X(syscall)

/* liburing's functions every preload module interposes: defined by the
 * preload core's wrappers (preload/uring_wrappers.inc, included by
 * interpose.c), which call the guard's hooks (interpose.c). */
#define AG_PRELOAD_URING_SYMBOLS(X) PRELOAD_URING_SYMBOLS(X)

/* The others, each with a next_<name> pointer of its type: those every
 * preload module interposes (preload/interposed.h), looked up at start;
 * and the guard's own of liburing's, looked up at their first call
 * (PRELOAD_NEXT_DECLARE_LAZY: most processes have no liburing). */
#define AG_NEXT_SYMBOLS(X) PRELOAD_FD_SYMBOLS(X)
#define AG_URING_NEXT_SYMBOLS(X) \
	X(io_uring_enter) X(io_uring_enter2) \
	X(io_uring_resize_rings) X(io_uring_register) \
	X(io_uring_queue_init_mem) X(io_uring_register_ring_fd)

/* The exec family and posix_spawn, system and popen (interpose.c,
 * exec.c): under the launcher, a program that will run without the
 * guard is told to it.  glibc's execv, execl*, execvp*, fexecve,
 * posix_spawn*, system and popen call its internal __execve or
 * __posix_spawn, not the exported execve: each is wrapped itself.
 * With a next_<name> pointer of its type, like the others; the execl
 * variants (variadic) call next_execve or next_execvp instead. */
#define AG_EXEC_NEXT_SYMBOLS(X) \
	X(execve) X(execv) X(execvp) X(execvpe) X(fexecve) X(execveat) \
	X(posix_spawn) X(posix_spawnp) X(system) X(popen)
#define AG_EXEC_OWN_SYMBOLS(X) X(execl) X(execlp) X(execle)

/* The application's interface (include/arenaguard/guard_api.h, api.c):
 * found with dlsym, never interposed. */
#define AG_API_SYMBOLS(X) \
	X(arenaguard_get_counters) X(arenaguard_last_refusal) \
	X(arenaguard_get_config)

#endif
