// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The contract's walk of a schedule (contract/execute.c), the one copy
 * shared with the simulator, compiled into the module here.
 */
#include "../contract/execute.c"
