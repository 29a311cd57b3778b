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
 * registration that does not go through the dynamic symbol (a static
 * libc) is not seen.
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

#define ATFORK_FIRST(prepare, parent, child)                                 \
	static atfork_register_fn atfork_next;                               \
	/* 0 not yet, 1 under way (others wait), 2 done */                   \
	static _Atomic int atfork_state;                                     \
                                                                             \
	ATFORK_PLAIN static void atfork_first(void)                          \
	{                                                                    \
		int was = 0;                                                 \
		if (atomic_load_explicit(&atfork_state,                      \
					 memory_order_acquire) == 2)         \
			return;                                              \
		if (atomic_compare_exchange_strong(&atfork_state, &was, 1)) { \
			atfork_next = (atfork_register_fn)dlsym(             \
				RTLD_NEXT, "__register_atfork");             \
			if (atfork_next)                                     \
				atfork_next(prepare, parent, child,          \
					    __dso_handle);                   \
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
		atfork_first();                                              \
		return atfork_next ? atfork_next(p, pa, c, dso) : ENOMEM;    \
	}

#endif
