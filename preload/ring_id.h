/* SPDX-License-Identifier: MIT */
/*
 * Which ring a liburing `struct io_uring` is: the one answer for every
 * preload module (the guard's ring registry, the simulated device's
 * registered files).
 *
 * A ring is its SQ ring's mapping (sq.ring_ptr): unique while mapped,
 * the same through every copy of the struct, and kept by a ring whose
 * fd was dup'ed and closed, or set to -1 (liburing 2.4's
 * io_uring_close_ring_fd).  Its fd is only a way to reach it: a number
 * a closed ring's fd had may be a new ring's, which shares nothing with
 * the old one.  A mapping is forgotten when liburing unmaps it
 * (io_uring_queue_exit) and taken afresh when liburing maps a ring
 * (io_uring_queue_init*, io_uring_queue_mmap): the address of an
 * unmapped ring may be a new one's.
 */
#ifndef PRELOAD_RING_ID_H
#define PRELOAD_RING_ID_H

#include <liburing.h>

static inline const void *preload_ring_id(const struct io_uring *ring)
{
	return ring->sq.ring_ptr;
}

#endif
