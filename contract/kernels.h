/* SPDX-License-Identifier: MIT */
/*
 * contract/kernels.h - the f32 kernels of enum arena_kernel (uapi.h),
 * freestanding (types.h): the one implementation that the kernel driver
 * runs (built with the kernel's FPU flags, between kernel_fpu_begin and
 * kernel_fpu_end) and user space can run.
 */
#ifndef ARENA_CONTRACT_KERNELS_H
#define ARENA_CONTRACT_KERNELS_H

#include "types.h"

/* What a kernel needs of its device: host memory for device ranges, and
 * a point at which a long kernel may let the host breathe. */
struct arena_device_mem {
	/* Host memory for device range [address, address + len) when it lies
	 * in one buffer; NULL otherwise.  len is never 0. */
	ac_u8 *(*range)(struct arena_device_mem *mem, ac_u64 address,
			ac_u64 len);
	/* Called between rows of work (never inside an element's
	 * computation); may be NULL. */
	void (*pause)(struct arena_device_mem *mem);
};

/* Words each kernel needs, word 0 included; 0 for an unknown kernel. */
ac_u32 arena_kernel_words(ac_u64 kernel);

/*
 * Runs one launch given its words at this iteration: 0, or -EFAULT (too
 * few words, an unknown kernel, a range outside every buffer) before
 * anything is written.
 */
int arena_kernel_run(struct arena_device_mem *mem, const ac_u64 *words,
		     ac_u32 n);

#endif
