/* SPDX-License-Identifier: MIT */
/*
 * device.h - the example's side of the arena driver (arenaguard/uapi.h):
 * open the accel node, put the plan's windows in buffer objects, upload
 * the weights and input, create the program and a schedule, then submit
 * it by ioctl or through io_uring and read the output back.
 *
 * Every function returns 0 or a negative errno, after printing what
 * failed on standard error.
 */
#ifndef ARENA_EXAMPLE_DEVICE_H
#define ARENA_EXAMPLE_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include <liburing.h>

#include "model.h"
#include "planner.h"

enum device_path {
	DEVICE_IOCTL,   /* append and submit with ioctls */
	DEVICE_URING,   /* append and submit with IORING_OP_URING_CMD */
};

struct device {
	int fd;
	enum device_path path;
	struct io_uring ring;
	int have_ring;
	int n_bos;
	uint32_t bo[WIN_COUNT];
	uint64_t bo_base[WIN_COUNT], bo_size[WIN_COUNT];
	uint32_t program, schedule;
	int have_program, have_schedule;
	char version[96];    /* "arena 1.0.0 (description)" */
};

/* Opens the node and checks it is an arena device. */
int device_open(struct device *dev, enum device_path path);

/* Buffers for the plan's windows, weights and input uploaded, the program
 * created and its schedule appended. */
int device_load(struct device *dev, const struct plan *plan,
		const struct model *m);

/* One forward pass: submits the schedule and waits for it. */
int device_forward(struct device *dev);

/* Copies `size` bytes at device address `address` to `out`. */
int device_read(struct device *dev, uint64_t address, void *out,
		size_t size);

void device_close(struct device *dev);

/*
 * The same, piece by piece, for a client with many schedules and threads
 * on one open file (arena-serve).  `ring` NULL means by ioctl, else the
 * request goes through that ring (append and submit; a ring serves one
 * thread at a time).  `quiet` leaves an EPERM (the guard blocked the
 * submission) unprinted, for the caller to report.
 */
/* A buffer at [address, address + size), recorded for device_write and
 * device_read (at most WIN_COUNT). */
/* A ring set up for URING_CMDs (SQE128). */
int device_ring_init(struct io_uring *ring);
int device_add_bo(struct device *dev, uint64_t address, uint64_t size);
int device_write(struct device *dev, uint64_t address, const void *data,
		 size_t size);
int device_program_on(int fd, const struct plan *plan, uint32_t *handle);
int device_schedule_on(int fd, uint32_t program, uint32_t *handle);
int device_append_on(int fd, struct io_uring *ring, uint32_t schedule,
		     const struct ac_ref *refs, size_t count);
/* Submits the schedule and waits for it. */
int device_forward_on(int fd, struct io_uring *ring, uint32_t schedule,
		      int quiet);
/* A DRM_IOCTL_ARENA_*_DESTROY of handle; errors are ignored. */
void device_destroy_on(int fd, unsigned long request, uint32_t handle);

#endif
