// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The contract's image rules (contract/image.c), the
 * one copy shared with user space, compiled into the module here.
 */
#include "../contract/image.c"
