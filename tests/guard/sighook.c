/* SPDX-License-Identifier: MIT */
/*
 * libguard-sighook.so, preloaded between the guard and the simulator
 * (test_share.c): once armed by sighook_arm(1), the next
 * DRM_IOCTL_VERSION (the guard's probe of a new descriptor) raises
 * SIGUSR1 before it goes on; armed by sighook_arm(2), the next
 * DRM_IOCTL_ARENA_SCHEDULE_SUBMIT or _SUBMIT_SEALED (the guard's forward
 * of a submit it decided) does.  So a signal handler runs, deterministically, while its
 * thread is inside the guard.  One signal per arming.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/ioctl.h>

#include <arenaguard/uapi.h>

#include "hook.h"

static atomic_int armed;

void sighook_arm(int what);
void sighook_arm(int what)
{
	atomic_store(&armed, what);
}

int ioctl(int fd, unsigned long request, ...)
{
	HOOK_IOCTL_ARG(request, arg);
	hook_ioctl_fn next = hook_next_ioctl();
	int want = request == DRM_IOCTL_VERSION ? 1
		   : request == DRM_IOCTL_ARENA_SCHEDULE_SUBMIT ||
		     request == DRM_IOCTL_ARENA_SCHEDULE_SUBMIT_SEALED ? 2 : 0;
	if (want && atomic_compare_exchange_strong(&armed, &want, 0))
		raise(SIGUSR1);
	return next(fd, request, arg);
}
