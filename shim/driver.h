/* SPDX-License-Identifier: MIT */
/*
 * The driver as the guard calls it: ag_driver_ioctl, defined in ioctl.c,
 * set by interpose.c (tests point it at a fake).
 */
#ifndef ARENAGUARD_SHIM_DRIVER_H
#define ARENAGUARD_SHIM_DRIVER_H

/*
 * The driver, as seen from here: the next ioctl in the lookup order (the
 * simulator, or libc and so the kernel).  Tests point it at a fake.
 * Returns 0 or -errno (the kernel's convention, not libc's).
 */
extern int (*ag_driver_ioctl)(int fd, unsigned int cmd, void *arg);

/*
 * A call of ag_driver_ioctl as it is set when called, for a lower layer
 * handed the driver before interpose.c (or a test) sets it: attach.c's
 * seal, handed in at load (load.c).  Returns 0 or -errno.
 */
int ag_driver_call(int fd, unsigned int cmd, void *arg);

#endif
