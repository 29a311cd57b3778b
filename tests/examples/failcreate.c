/* SPDX-License-Identifier: MIT */
/*
 * libfailcreate.so: a driver that refuses.  Preloaded between the guard
 * and the simulator, it fails the first FAILCREATE_FIRST PROGRAM_CREATE
 * ioctls (ENOMEM, as a device short of memory for a moment would), and
 * every submission after the first FAILSUBMIT_AFTER (EPERM, as a driver
 * that revoked the client's access would), and forwards every other call
 * (serve-tests: create_refused_once, driver_eperm).
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

static atomic_int left = -1, submits_left = -1;

/* The variable's value once (-1: not set). */
static int budget(atomic_int *v, const char *name)
{
	int l = atomic_load(v);
	if (l == -1) {
		const char *e = getenv(name);
		int want = e ? atoi(e) : -2;
		atomic_compare_exchange_strong(v, &l, want);
	}
	return atomic_load(v);
}

int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	ioctl_fn *next = (ioctl_fn *)dlsym(RTLD_NEXT, "ioctl");
	if (request == DRM_IOCTL_ARENA_PROGRAM_CREATE &&
	    budget(&left, "FAILCREATE_FIRST") > 0 &&
	    atomic_fetch_sub(&left, 1) > 0) {
		errno = ENOMEM;
		return -1;
	}
	if ((request == DRM_IOCTL_ARENA_SCHEDULE_SUBMIT ||
	     request == DRM_IOCTL_ARENA_SCHEDULE_SUBMIT_SEALED) &&
	    budget(&submits_left, "FAILSUBMIT_AFTER") >= 0 &&
	    atomic_fetch_sub(&submits_left, 1) <= 0) {
		atomic_store(&submits_left, 0);
		errno = EPERM;
		return -1;
	}
	return next(fd, request, arg);
}
