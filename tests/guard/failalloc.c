/* SPDX-License-Identifier: MIT */
/*
 * libfailalloc.so: the switch behind failalloc.h.  A library of its own
 * so that the test build of the guard, whose symbols are local to it,
 * and the process that arms it share one counter.
 */
#include <stdatomic.h>

#include "failalloc.h"

static atomic_int armed;
static atomic_int every;
static atomic_ulong counted, nth;

void failalloc_arm(unsigned long n, int every_after)
{
	atomic_store(&armed, 0);
	atomic_store(&nth, n);
	atomic_store(&every, every_after);
	atomic_store(&counted, 0);
	atomic_store(&armed, 1);
}

unsigned long failalloc_disarm(void)
{
	atomic_store(&armed, 0);
	return atomic_load(&counted);
}

int failalloc_fails(void)
{
	if (!atomic_load(&armed))
		return 0;
	unsigned long i = atomic_fetch_add(&counted, 1) + 1;
	unsigned long n = atomic_load(&nth);
	return i == n || (i > n && atomic_load(&every));
}
