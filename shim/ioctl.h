/* SPDX-License-Identifier: MIT */
/*
 * The ioctl front end (ioctl.c).
 */
#ifndef ARENAGUARD_SHIM_IOCTL_H
#define ARENAGUARD_SHIM_IOCTL_H

#include <stdint.h>

#include <arenaguard/uapi.h>

#include "../contract/requests.h"  /* the guarded requests */

struct ag_file;

/* Whether a request number is one the guard handles (by DRM nr, as
 * drm_ioctl dispatches): the only test on the common path. */
static inline int ag_is_guarded_request(unsigned int cmd)
{
	return arena_request_guarded(cmd);  /* contract/requests.h's table */
}

/* A guarded request on a device file: 0 or -errno. */
int ag_ioctl(struct ag_file *f, int fd, unsigned int cmd, uint64_t arg);

#endif
