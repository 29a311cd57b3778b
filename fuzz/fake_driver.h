/* SPDX-License-Identifier: MIT */
/*
 * The driver beneath the guard in fuzz_guard.c (fake_driver.c): the arena
 * driver's program, schedule and seal requests, by ioctl and by
 * URING_CMD, answered as the simulator answers them, on two open files.
 */
#ifndef ARENAGUARD_FUZZ_FAKE_DRIVER_H
#define ARENAGUARD_FUZZ_FAKE_DRIVER_H

#include <liburing.h>

#include <arenaguard/uapi.h>

#include "fuzz.h"

/* The fds of the harness: the device's two open files, the first also
 * under a dup'ed fd, and an fd that is not the device. */
#define FAKE_FD_DEV0 900
#define FAKE_FD_DEV1 901
#define FAKE_FD_DEV0_DUP 902
#define FAKE_FD_NOTDEV 903

#define FAKE_FILES 2
#define FAKE_HANDLES 8          /* per kind and file; then ENOMEM */

/* What the harness tells the driver and reads back around one request. */
struct fake_watch {
	int calls;              /* requests that reached the driver */
	int last_rc;
	/* The application's own image or references pointer in the current
	 * request: the driver must be handed the guard's copy instead
	 * whenever the guard could read it. */
	uint64_t app_buffer;
};

extern struct fake_watch fake_watch;

/* Empties both files; strict: batches the certificate calls malformed
 * are refused (EINVAL), as the simulator refuses them; else any batch
 * is taken.  seals: the driver offers sealed submissions (uapi.h), else
 * it answers EINVAL to SEAL and SUBMIT_SEALED. */
void fake_reset(int strict, int seals);

/* The open file behind one of the fds above, or -1. */
int fake_file_of(int fd);

/* ag_driver_ioctl: 0 or -errno. */
int fake_ioctl(int fd, unsigned int cmd, void *arg);

/* A URING_CMD on file `file`, as the simulator's uring_cmd(). */
int fake_uring_cmd(int file, int sqe128, const struct io_uring_sqe *sqe);

/* Whether schedule `handle` of `file` exists; its references. */
int fake_schedule_live(int file, uint32_t handle);
const struct ac_ref *fake_schedule_refs(int file, uint32_t handle,
					uint64_t *n);

/* ac_certify of the schedule's program with its references. */
void fake_schedule_certify(int file, uint32_t handle, struct fuzz_outcome *o);

#endif
