/* SPDX-License-Identifier: MIT */
/*
 * Functions of liburing releases newer than the one the project is
 * built against (Debian 12: 2.3), with liburing's own signatures: the
 * preload modules interpose them (uring_wrappers.inc; the guard's own,
 * shim/interpose.c), and tests/guard/ring_stub.c provides stand-ins.
 */
#ifndef PRELOAD_LIBURING_NEWER_H
#define PRELOAD_LIBURING_NEWER_H

#include <liburing.h>

/* 2.5 */
int io_uring_queue_init_mem(unsigned int entries, struct io_uring *ring,
			    struct io_uring_params *p, void *buf,
			    size_t buf_size);
/* 2.8 */
int io_uring_submit_and_wait_min_timeout(struct io_uring *ring,
					 struct io_uring_cqe **cqe_ptr,
					 unsigned int wait_nr,
					 struct __kernel_timespec *ts,
					 unsigned int min_wait_usec,
					 sigset_t *sigmask);
/* 2.9 */
int io_uring_submit_and_wait_reg(struct io_uring *ring,
				 struct io_uring_cqe **cqe_ptr,
				 unsigned int wait_nr, int reg_index);
int io_uring_resize_rings(struct io_uring *ring, struct io_uring_params *p);

#endif
