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

#endif
