/* SPDX-License-Identifier: MIT */
/*
 * The next definition of an interposed function: the one the dynamic
 * linker would have bound to had this module not been preloaded (the
 * simulated device's under the guard, else libc's or liburing's).
 *
 * A module lists its interposed functions once, as X-macros (its
 * symbols.h, from which its version script is generated too), and
 * declares and resolves their next definitions from the list:
 *
 *   LIST(PRELOAD_NEXT_DECLARE)     static __typeof__(fn) *next_fn; each
 *   LIST(PRELOAD_NEXT_RESOLVE)     next_fn = the next definition, each
 *
 * A function the next objects do not define (liburing not loaded, or
 * older than the module's headers) resolves to NULL; its wrapper is then
 * never called by a program that could not have linked it, or answers
 * -ENOSYS.
 *
 * A list looked up lazily (liburing's: none of it is there in most
 * processes, and each failed dlsym formats an error message) declares
 * its pointers atomic, and each wrapper finds its next definition when
 * it first finds none:
 *
 *   LIST(PRELOAD_NEXT_DECLARE_LAZY)  static _Atomic pointer, NULL
 *   PRELOAD_NEXT_FIND(fn)            whether next_fn is found, looked up
 *                                    now if NULL
 *
 * A NULL is looked up again at every call (never cached as absent), so
 * a library dlopen'ed after the module's start is found at its first
 * call: with RTLD_GLOBAL by RTLD_NEXT, with RTLD_LOCAL (a plugin's own
 * liburing) in the objects' own search lists (preload_next_anywhere);
 * threads racing on a first call each store the same definition.
 */
#ifndef PRELOAD_NEXT_H
#define PRELOAD_NEXT_H

/* The next definition of `name` after the module that calls this (the
 * module's own copy of this library: RTLD_NEXT is relative to the
 * caller's object), or NULL; errno kept.  Takes dlsym's locks: not from a signal
 * handler, and not before the dynamic linker is done relocating. */
void *preload_next(const char *name);

/* preload_next, or else (NULL there) name's definition in an object
 * loaded outside the global scope (dlopen RTLD_LOCAL: a plugin's own
 * liburing), found through each loaded object's own search list, never
 * this module's.  The lazily looked-up lists' (PRELOAD_NEXT_FIND); the
 * same locks, and more look-ups when the first fails. */
void *preload_next_anywhere(const char *name);

#define PRELOAD_NEXT_DECLARE(fn) static __typeof__(fn) *next_##fn;
#define PRELOAD_NEXT_RESOLVE(fn) \
	next_##fn = (__typeof__(&fn))preload_next(#fn);

#define PRELOAD_NEXT_DECLARE_LAZY(fn) static _Atomic(__typeof__(&fn)) next_##fn;
/* Whether next_fn is found: looked up (preload_next_anywhere) when
 * NULL.  Not from a signal handler the first time (dlsym's locks). */
#define PRELOAD_NEXT_FIND(fn) __extension__ ({                              \
	__typeof__(&fn) found_ = next_##fn;                                 \
	if (!found_) {                                                      \
		found_ = (__typeof__(&fn))preload_next_anywhere(#fn);       \
		next_##fn = found_;                                         \
	}                                                                   \
	found_ != NULL;                                                     \
})

#endif
