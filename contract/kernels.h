/* SPDX-License-Identifier: MIT */
/*
 * The f32 kernels of enum arena_kernel (uapi.h),
 * freestanding (types.h): the one implementation that the kernel driver
 * runs (built with the kernel's FPU flags, between kernel_fpu_begin and
 * kernel_fpu_end) and user space can run.
 */
#ifndef ARENA_CONTRACT_KERNELS_H
#define ARENA_CONTRACT_KERNELS_H

#include "types.h"

/* What a kernel needs of its device: host memory for device ranges, and
 * a point at which a long kernel may let the host breathe.
 */
struct arena_device_mem {
	/* Host memory for device range [address, address + len) when it lies
	 * in one buffer; NULL otherwise.  len is never 0.
	 */
	u8 *(*range)(struct arena_device_mem *mem, u64 address, u64 len);
	/* Called between rows of work (never inside an element's
	 * computation); may be NULL.
	 */
	void (*pause)(struct arena_device_mem *mem);
};

/* Words each kernel needs, word 0 included; 0 for an unknown kernel. */
u32 arena_kernel_words(u64 kernel);

/*
 * Runs one launch given its words at this iteration: 0, or -EFAULT (too
 * few words, an unknown kernel, a range outside every buffer) before
 * anything is written.
 */
int arena_kernel_run(struct arena_device_mem *mem, const u64 *words,
		     u32 n);

#endif
