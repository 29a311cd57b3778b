/* SPDX-License-Identifier: MIT */
/*
 * The f32 kernels of enum arena_kernel are the contract's
 * (contract/kernels.c), the one copy the kernel driver runs too, so the
 * simulator and arena.ko compute the same bits.  This file gives them the
 * simulated device's memory: a device range is host memory when it lies
 * in one buffer (bo_range).
 */
#define _GNU_SOURCE
#include <stddef.h>

#include "sim.h"
#include "../contract/kernels.h"

struct sim_mem {
	struct arena_device_mem mem;
	struct sim_file *f;
};

static uint8_t *sim_range(struct arena_device_mem *mem, uint64_t address,
			  uint64_t len)
{
	struct sim_mem *m = (struct sim_mem *)((char *)mem -
					       offsetof(struct sim_mem, mem));
	return bo_range(m->f, address, len);
}

int kernel_run(struct sim_file *f, const uint64_t *w, uint32_t n)
{
	struct sim_mem m = { { sim_range, NULL }, f };
	return arena_kernel_run(&m.mem, w, n);
}
