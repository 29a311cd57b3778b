/* SPDX-License-Identifier: MIT */
/*
 * The next definition of an interposed function (next.h).
 */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "next.h"

void *preload_next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}
