/* SPDX-License-Identifier: MIT */
/*
 * libfailcreate.so: a driver that refuses for a while.  Preloaded between
 * the guard and the simulator, it fails the first FAILCREATE_FIRST
 * PROGRAM_CREATE ioctls (ENOMEM, as a device short of memory for a
 * moment would) and forwards every other call (serve-tests:
 * create_refused_once).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/ioctl.h>

#include "arenaguard/uapi.h"

typedef int ioctl_fn(int, unsigned long, ...);

static atomic_int left = -1;

int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	ioctl_fn *next = (ioctl_fn *)dlsym(RTLD_NEXT, "ioctl");
	if (request == DRM_IOCTL_ARENA_PROGRAM_CREATE) {
		int l = atomic_load(&left);
		if (l < 0) {
			const char *e = getenv("FAILCREATE_FIRST");
			int want = e ? atoi(e) : 0;
			atomic_compare_exchange_strong(&left, &l, want);
		}
		if (atomic_fetch_sub(&left, 1) > 0) {
			errno = ENOMEM;
			return -1;
		}
	}
	return next(fd, request, arg);
}
