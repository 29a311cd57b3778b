/* SPDX-License-Identifier: MIT */
/*
 * Allocation failure on demand, for guard-tests only (libfailalloc.so,
 * failalloc.c).  A test build of the guard (libarenaguard-failalloc.so:
 * the guard linked with failwrap.c and ld's --wrap) asks it about every
 * allocation the guard makes, libarenacert's inside it included; the
 * process under test arms it around the requests it sweeps.
 */
#ifndef GUARD_TESTS_FAILALLOC_H
#define GUARD_TESTS_FAILALLOC_H

/* From now on the nth allocation (1 is the next) fails, and with
 * every_after each one after it too, until failalloc_disarm(). */
void failalloc_arm(unsigned long nth, int every_after);

/* Stops failing; the number of allocations made while armed. */
unsigned long failalloc_disarm(void);

/* Whether the allocation being made now is to fail (the wrappers). */
int failalloc_fails(void);

#endif
