/* SPDX-License-Identifier: MIT */
/*
 * What the ioctl hooks preloaded between the guard and the simulator
 * (probefail.c, sighook.c) share: the next ioctl in the lookup order.
 */
#ifndef GUARD_TESTS_HOOK_H
#define GUARD_TESTS_HOOK_H

#include <dlfcn.h>
#include <stdarg.h>

/* void *arg: the third argument of ioctl(fd, request, ...). */
#define HOOK_IOCTL_ARG(request, arg)                                     \
	va_list hook_ap_;                                                \
	va_start(hook_ap_, request);                                     \
	void *arg = va_arg(hook_ap_, void *);                            \
	va_end(hook_ap_)

typedef int (*hook_ioctl_fn)(int, unsigned long, ...);

static inline hook_ioctl_fn hook_next_ioctl(void)
{
	static hook_ioctl_fn next;
	if (!next)
		next = (hook_ioctl_fn)dlsym(RTLD_NEXT, "ioctl");
	return next;
}

#endif
