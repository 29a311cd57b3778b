/* SPDX-License-Identifier: MIT */
/*
 * Sealing the device's open files (attach.c).
 */
#ifndef ARENAGUARD_SHIM_ATTACH_H
#define ARENAGUARD_SHIM_ATTACH_H

#include <stdint.h>

#include "mirror.h"   /* ag_driver_fn */

struct ag_file;

/*
 * A device fd seen for the first time that no known fd shares an open
 * file with by kcmp: seals its open file (DRM_IOCTL_ARENA_SEAL) and
 * returns its struct ag_file (referenced): the one already known under
 * the same context id (an fd that kcmp could not match), or a new one.
 * On a driver without seals (EINVAL) says once what the guard then
 * cannot guarantee; on another refusal, says once per error which; and
 * returns a new, unsealed file.  NULL with errno ENOMEM when memory
 * runs out, or EINTR when the driver answered SEAL with EINTR every time
 * it was asked (said once): the request is refused with it, nothing is
 * kept.
 */
struct ag_file *ag_file_attach(int fd);
/* The driver the seals are asked of (the front layer's, at load). */
void ag_attach_driver(ag_driver_fn *driver);
/* fork: the list of contexts, a leaf (last in fork_prepare). */
void ag_attach_lock_all(void);
void ag_attach_unlock_all(void);

#endif
