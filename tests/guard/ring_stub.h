/* SPDX-License-Identifier: MIT */
/*
 * The functions of a newer liburing than Debian's 2.3 (ring_stub.c),
 * with liburing's signatures: what an application linked against
 * liburing 2.8 / 2.9 calls, and what the guard must intercept.
 */
#ifndef GUARD_TESTS_RING_STUB_H
#define GUARD_TESTS_RING_STUB_H

#include <liburing.h>

int io_uring_submit_and_wait_min_timeout(struct io_uring *ring,
					 struct io_uring_cqe **cqe_ptr,
					 unsigned int wait_nr,
					 struct __kernel_timespec *ts,
					 unsigned int min_wait_usec,
					 sigset_t *sigmask);
int io_uring_submit_and_wait_reg(struct io_uring *ring,
				 struct io_uring_cqe **cqe_ptr,
				 unsigned int wait_nr, int reg_index);
/* Here: the SQ ring mapped again at a new address (as a resize moves
 * it), the size unchanged. */
int io_uring_resize_rings(struct io_uring *ring, struct io_uring_params *p);

#endif
