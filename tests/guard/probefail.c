/* SPDX-License-Identifier: MIT */
/*
 * libprobefail.so, preloaded between the guard and the simulator:
 * DRM_IOCTL_VERSION fails with errno PROBEFAIL_ERRNO, PROBEFAIL_TIMES
 * times (-1: always); every other ioctl goes on untouched.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/ioctl.h>

#include <arenaguard/uapi.h>

static atomic_int left = -2;          /* -2: not read yet */

int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	static int (*next)(int, unsigned long, ...);
	if (!next)
		next = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT,
							       "ioctl");
	if (request == DRM_IOCTL_VERSION) {
		int n = atomic_load(&left);
		if (n == -2) {
			const char *t = getenv("PROBEFAIL_TIMES");
			n = t ? atoi(t) : 0;
			atomic_store(&left, n);
		}
		if (n != 0) {
			if (n > 0)
				atomic_fetch_sub(&left, 1);
			const char *e = getenv("PROBEFAIL_ERRNO");
			errno = e ? atoi(e) : EINTR;
			return -1;
		}
	}
	return next(fd, request, arg);
}
