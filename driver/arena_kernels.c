// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The contract's f32 kernels (contract/kernels.c), the
 * one copy shared with user space, compiled into the module here with the
 * kernel's FPU flags (Kbuild); callers hold kernel_fpu_begin().
 */
#include "../contract/kernels.c"
