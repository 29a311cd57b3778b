/* SPDX-License-Identifier: MIT */
/*
 * Completing an io_uring SQE in user space: the SQE is rewritten in place
 * into a NOP carrying IORING_NOP_INJECT_RESULT (Linux 6.10+), so the
 * kernel posts a CQE with the given result and the application's
 * user_data, as if the driver had answered.  Used by the simulated device
 * (its commands' results) and the guard (-EPERM for blocked commands).
 */
#ifndef ARENAGUARD_SQE_INJECT_H
#define ARENAGUARD_SQE_INJECT_H

#include <linux/io_uring.h>

#ifndef IORING_NOP_INJECT_RESULT
#define IORING_NOP_INJECT_RESULT (1U << 0)
#endif

/* Keeps user_data, personality and the link/drain/async/skip flags. */
void sqe_complete_with(struct io_uring_sqe *sqe, int res);

#endif
