/* SPDX-License-Identifier: MIT */
/*
 * The next definition of an interposed function (next.h).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>

#include "next.h"

void *preload_next(const char *name)
{
	int saved = errno;          /* a failed look-up may set it */
	void *fn = dlsym(RTLD_NEXT, name);
	errno = saved;
	return fn;
}
