/* SPDX-License-Identifier: MIT */
/*
 * The drm_ioctl copy discipline, for code that plays the driver's part
 * inside the application's process (the simulator's ioctl entry, the
 * guard's ioctl front end): the argument struct is copied in (as many
 * bytes as both the caller's command and the driver's say go in),
 * zero-extended to the size the handler reads, handled, and copied back
 * out (as many bytes as both say come out), EFAULT when either copy
 * fails.  The reference is DRM's own drm_ioctl() (drivers/gpu/drm/
 * drm_ioctl.c), which arena.ko uses as it is; this is its user-space
 * twin, and the one copy of it here.
 *
 * User space only (malloc, common/usercopy.h): arena.ko does not
 * include it.  Inline, so that the guard's request path costs what it
 * did when written out by hand.
 */
#ifndef ARENA_CONTRACT_DRM_CALL_H
#define ARENA_CONTRACT_DRM_CALL_H

#ifdef __KERNEL__
#error "the kernel has drm_ioctl()"
#endif

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "types.h"
#include "usercopy.h"

/*
 * Calls handle(ctx, k) on the kernel's copy k of the argument at user
 * pointer arg of the ioctl cmd, whose driver command is kcmd (its
 * direction bits count) and whose handler reads ksize bytes.  Returns
 * the handler's result, -EFAULT when a copy failed (the handler not
 * called when the copy in failed), or no_memory(ctx) when a large
 * argument found no memory (the handler not called).
 */
static inline int arena_drm_call(unsigned int cmd, unsigned int kcmd,
				 size_t ksize, uint64_t arg,
				 int (*handle)(void *ctx, void *k),
				 int (*no_memory)(void *ctx), void *ctx)
{
	const unsigned int in_bit = _IOC_WRITE << _IOC_DIRSHIFT;
	const unsigned int out_bit = _IOC_READ << _IOC_DIRSHIFT;
	size_t in = cmd & kcmd & in_bit ? _IOC_SIZE(cmd) : 0;
	size_t out = cmd & kcmd & out_bit ? _IOC_SIZE(cmd) : 0;
	u64 stack[16];
	void *k;
	int rc;

	if (in > ksize)
		ksize = in;
	if (out > ksize)
		ksize = out;
	k = ksize <= sizeof(stack) ? (void *)stack : malloc(ksize);
	if (!k)
		return no_memory(ctx);
	rc = copy_from_user(k, arg, in);
	if (rc == 0) {
		memset((char *)k + in, 0, ksize - in);
		rc = handle(ctx, k);
		if (copy_to_user(arg, k, out) != 0)
			rc = -EFAULT;
	}
	if (k != stack)
		free(k);
	return rc;
}

#endif
