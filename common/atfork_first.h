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
 *       needs nothing else initialised, and is safe to call early
 *   int __register_atfork(...)
 *       the interposed registration (the module exports it)
 */
#ifndef ARENAGUARD_ATFORK_FIRST_H
#define ARENAGUARD_ATFORK_FIRST_H

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>

typedef int (*atfork_register_fn)(void (*)(void), void (*)(void),
				  void (*)(void), void *);
extern void *__dso_handle __attribute__((weak, visibility("hidden")));

#define ATFORK_FIRST(prepare, parent, child)                                 \
	static atfork_register_fn atfork_next;                               \
	static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;               \
                                                                             \
	static void atfork_register_own(void)                                \
	{                                                                    \
		atfork_next = (atfork_register_fn)dlsym(                     \
			RTLD_NEXT, "__register_atfork");                     \
		if (atfork_next)                                             \
			atfork_next(prepare, parent, child, __dso_handle);   \
	}                                                                    \
                                                                             \
	static void atfork_first(void)                                       \
	{                                                                    \
		pthread_once(&atfork_once, atfork_register_own);             \
	}                                                                    \
                                                                             \
	int __register_atfork(void (*p)(void), void (*pa)(void),             \
			      void (*c)(void), void *dso);                   \
	int __register_atfork(void (*p)(void), void (*pa)(void),             \
			      void (*c)(void), void *dso)                    \
	{                                                                    \
		atfork_first();                                              \
		return atfork_next ? atfork_next(p, pa, c, dso) : ENOMEM;    \
	}

#endif
