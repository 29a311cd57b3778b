/* SPDX-License-Identifier: MIT */
/*
 * The ioctl front end (ioctl.c).
 */
#ifndef ARENAGUARD_SHIM_IOCTL_H
#define ARENAGUARD_SHIM_IOCTL_H

#include <stdint.h>

#include <arenaguard/uapi.h>

struct ag_file;

/* Whether a request number is one the guard handles (by DRM nr, as
 * drm_ioctl dispatches): the only test on the common path. */
static inline int ag_is_guarded_request(unsigned int cmd)
{
	unsigned int nr = cmd & 0xff, type = (cmd >> 8) & 0xff;
	return type == DRM_IOCTL_BASE &&
	       nr - (DRM_COMMAND_BASE + DRM_ARENA_PROGRAM_CREATE) <=
		       DRM_ARENA_SCHEDULE_SUBMIT_SEALED -
			       DRM_ARENA_PROGRAM_CREATE &&
	       nr != DRM_COMMAND_BASE + DRM_ARENA_WAIT;
}

/* A guarded request on a device file: 0 or -errno. */
int ag_ioctl(struct ag_file *f, int fd, unsigned int cmd, uint64_t arg);

#endif
