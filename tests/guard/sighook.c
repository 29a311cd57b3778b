/* SPDX-License-Identifier: MIT */
/*
 * libguard-sighook.so, preloaded between the guard and the simulator
 * (test_share.c): once armed by sighook_arm(1), the next
 * DRM_IOCTL_VERSION (the guard's probe of a new descriptor) raises
 * SIGUSR1 before it goes on; armed by sighook_arm(2), the next
 * DRM_IOCTL_ARENA_SCHEDULE_SUBMIT or _SUBMIT_SEALED (the guard's forward
 * of a submit it decided) does; armed by sighook_arm(3), the next calloc.  So a signal handler runs, deterministically, while its
 * thread is inside the guard.  One signal per arming.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/ioctl.h>

#include <arenaguard/uapi.h>

#include "hook.h"

static atomic_int armed;

/* Armed by sighook_arm(3): the next calloc (the guard's state of a new
 * ring, made under its ring lock when io_uring_queue_init returns)
 * raises SIGUSR1 before it allocates.  glibc's own calloc underneath:
 * no dlsym (which allocates) is needed.  A sanitizer runtime preloaded
 * first takes calloc itself, and the hook never fires. */
extern void *__libc_calloc(size_t n, size_t size);
void *calloc(size_t n, size_t size)
{
	int want = 3;
	if (atomic_load_explicit(&armed, memory_order_relaxed) == 3 &&
	    atomic_compare_exchange_strong(&armed, &want, 0))
		raise(SIGUSR1);
	return __libc_calloc(n, size);
}

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
