/* SPDX-License-Identifier: MIT */
/*
 * libguard-duphook.so, preloaded between the guard and the simulator
 * (test_attack.c, guard-attack dup2race): once armed by
 * duphook_arm(during, arg), the next dup2 or dup3 makes its call (the
 * simulator's, then the kernel's: newfd is replaced) and then, before
 * it returns to the guard, calls during(arg).  So another thread's
 * request on newfd is made, deterministically, after the kernel
 * replaced the fd and before the guard's dup2 returns.  One call per
 * arming.  Once armed by duphook_arm_submit(before, arg), the next
 * io_uring_submit (the guard's, after its check of the SQEs) calls
 * before(arg) first, then the simulator's: a submit held between the
 * guard's check and the driver for as long as before() takes.  With DUPHOOK_NO_SEALS=1 in the environment, it answers
 * DRM_IOCTL_ARENA_SEAL with EINVAL, as a driver without seals does:
 * then nothing but the guard's decision stands between a request and
 * the device.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include <arenaguard/uapi.h>
#include <liburing.h>

#include "hook.h"

typedef void (*duphook_fn)(void *);

static _Atomic(duphook_fn) armed;
static void *armed_arg;

void duphook_arm(duphook_fn during, void *arg);
void duphook_arm(duphook_fn during, void *arg)
{
	armed_arg = arg;
	atomic_store(&armed, during);
}

/* The armed function, disarmed, once: NULL when the call failed or
 * nothing is armed. */
static void after(int rc)
{
	duphook_fn fn = rc >= 0 ? atomic_exchange(&armed, NULL) : NULL;
	if (fn)
		fn(armed_arg);
}

static _Atomic(duphook_fn) submit_armed;
static void *submit_arg;

void duphook_arm_submit(duphook_fn before, void *arg);
void duphook_arm_submit(duphook_fn before, void *arg)
{
	submit_arg = arg;
	atomic_store(&submit_armed, before);
}

int io_uring_submit(struct io_uring *ring)
{
	static int (*next)(struct io_uring *);
	if (!next)
		next = (int (*)(struct io_uring *))dlsym(RTLD_NEXT,
							 "io_uring_submit");
	duphook_fn fn = atomic_exchange(&submit_armed, NULL);
	if (fn)
		fn(submit_arg);
	return next(ring);
}

int dup2(int oldfd, int newfd)
{
	static int (*next)(int, int);
	if (!next)
		next = (int (*)(int, int))dlsym(RTLD_NEXT, "dup2");
	int rc = next(oldfd, newfd);
	after(rc);
	return rc;
}

int dup3(int oldfd, int newfd, int flags)
{
	static int (*next)(int, int, int);
	if (!next)
		next = (int (*)(int, int, int))dlsym(RTLD_NEXT, "dup3");
	int rc = next(oldfd, newfd, flags);
	after(rc);
	return rc;
}

int ioctl(int fd, unsigned long request, ...)
{
	HOOK_IOCTL_ARG(request, arg);
	if (request == DRM_IOCTL_ARENA_SEAL) {
		const char *no = getenv("DUPHOOK_NO_SEALS");
		if (no && strcmp(no, "1") == 0) {
			errno = EINVAL;
			return -1;
		}
	}
	return hook_next_ioctl()(fd, request, arg);
}
