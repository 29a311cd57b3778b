/* SPDX-License-Identifier: MIT */
/*
 * Fork handlers registered before any other library's, for a preloaded
 * module (the guard, the simulated device) whose handlers take locks
 * that other libraries' fork handlers need: a runtime that quiesces the
 * device before fork, or resubmits in the child, issues requests from
 * its handlers.  pthread_atfork runs prepare handlers in the reverse
 * order of registration, parent and child handlers in that order, so
 * handlers registered first take their locks last and release them
 * first, and every other handler runs with them free.
 *
 * Other libraries' constructors run before a preloaded module's, so
 * registering at start-up is too late: the module interposes
 * __register_atfork (which pthread_atfork, in the static part of libc
 * linked into each caller, calls), and its first call, however early,
 * registers the module's handlers before forwarding.  Modules preloaded
 * in a row nest: the first one's registration goes through the next
 * one's, whose handlers therefore come before (take their locks after)
 * the first one's, the order in which requests go down the chain.  A
 * sanitizer's runtime, preloaded ahead of all, is the exception: its
 * registration passes through without the module's, so that its
 * handlers stay first.  A registration that does not go through the
 * dynamic symbol (a static libc) is not seen.
 *
 * ATFORK_FIRST(prepare, parent, child), once in a module, defines:
 *
 *   static void atfork_first(void)
 *       registers the handlers unless done (call it at start-up too);
 *       needs nothing else initialised, and is safe to call early (a
 *       sanitizer's runtime starting)
 *   int __register_atfork(...)
 *       the interposed registration (the module exports it)
 */
#ifndef ARENAGUARD_ATFORK_FIRST_H
#define ARENAGUARD_ATFORK_FIRST_H

#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>

#include "sanitizer_runtime.h"

typedef int (*atfork_register_fn)(void (*)(void), void (*)(void),
				  void (*)(void), void *);
extern void *__dso_handle __attribute__((weak, visibility("hidden")));

/* A sanitizer's runtime registers its own fork handlers while it starts,
 * before its per-thread state exists, and that call comes here first:
 * the registration runs no instrumented code and calls no intercepted
 * function (no pthread_once: a flag of its own). */
#if defined(__clang__)
#define ATFORK_PLAIN __attribute__((disable_sanitizer_instrumentation))
#else
#define ATFORK_PLAIN __attribute__((no_sanitize("thread", "address",   \
						"undefined")))
#endif

/* Whether the registration comes from a sanitizer's runtime (by its
 * dso handle): its handlers stay the first registered (they take the
 * runtime's own locks, which every intercepted call needs, so they must
 * be the last prepare handler), and it registers no others. */
ATFORK_PLAIN static inline int atfork_from_sanitizer(void *dso)
{
	Dl_info info;
	return dso && dladdr(dso, &info) && info.dli_fname &&
	       sanitizer_runtime(info.dli_fname);
}

#define ATFORK_FIRST(prepare, parent, child)                                 \
	static _Atomic(atfork_register_fn) atfork_next_fn;                   \
	/* 0 not yet, 1 under way (others wait), 2 done */                   \
	static _Atomic int atfork_state;                                     \
                                                                             \
	/* The next __register_atfork (the driver's below, or libc's). */    \
	ATFORK_PLAIN static atfork_register_fn atfork_next(void)             \
	{                                                                    \
		atfork_register_fn f = atomic_load_explicit(                 \
			&atfork_next_fn, memory_order_acquire);              \
		if (!f) {                                                    \
			f = (atfork_register_fn)dlsym(RTLD_NEXT,             \
						      "__register_atfork");  \
			atomic_store_explicit(&atfork_next_fn, f,            \
					      memory_order_release);         \
		}                                                            \
		return f;                                                    \
	}                                                                    \
                                                                             \
	ATFORK_PLAIN static void atfork_first(void)                          \
	{                                                                    \
		int was = 0;                                                 \
		if (atomic_load_explicit(&atfork_state,                      \
					 memory_order_acquire) == 2)         \
			return;                                              \
		if (atomic_compare_exchange_strong(&atfork_state, &was, 1)) { \
			atfork_register_fn next = atfork_next();             \
			if (next)                                            \
				next(prepare, parent, child, __dso_handle);  \
			atomic_store_explicit(&atfork_state, 2,              \
					      memory_order_release);         \
			return;                                              \
		}                                                            \
		while (atomic_load_explicit(&atfork_state,                   \
					    memory_order_acquire) != 2)      \
			sched_yield();                                       \
	}                                                                    \
                                                                             \
	int __register_atfork(void (*p)(void), void (*pa)(void),             \
			      void (*c)(void), void *dso);                   \
	ATFORK_PLAIN int __register_atfork(void (*p)(void), void (*pa)(void), \
					   void (*c)(void), void *dso)       \
	{                                                                    \
		if (!atfork_from_sanitizer(dso))                             \
			atfork_first();                                      \
		atfork_register_fn next = atfork_next();                     \
		return next ? next(p, pa, c, dso) : ENOMEM;                  \
	}

#endif
