/* SPDX-License-Identifier: MIT */
/*
 * The SQE the kernel takes at an SQ position: the one answer for every
 * walk of a ring's SQEs (the guard's checks, the simulated device's
 * commands), so that what a module acts on is what the kernel will run.
 *
 * The kernel reads SQ position `pos` through the SQ index array
 * (sq.array), unless the ring has none (IORING_SETUP_NO_SQARRAY): the
 * SQE at the position's own index is the kernel's only when the array
 * maps it so.  liburing fills the array with the identity once, at
 * setup, but an application may write it (its SQEs written by hand, a
 * ring shared with one that does), and the kernel follows what it reads.
 */
#ifndef PRELOAD_SQ_H
#define PRELOAD_SQ_H

#include <liburing.h>

#include "uring_abi.h"

#ifndef IORING_SETUP_NO_SQARRAY
#define IORING_SETUP_NO_SQARRAY (1U << 16)  /* Linux 6.6, liburing 2.5 */
#endif

/* The SQE the kernel takes at SQ position `pos` of `ring` (a liburing
 * ring, mapped): through the index array, read with acquire as the
 * kernel reads it, unless the ring has none; NULL for an index the
 * kernel drops (beyond the ring's entries). */
static inline struct io_uring_sqe *preload_sqe_at(const struct io_uring *ring,
						  unsigned int pos)
{
	unsigned int entries = *ring->sq.kring_entries;
	unsigned int index = pos & *ring->sq.kring_mask;
	if (ring->sq.array && !(ring->flags & IORING_SETUP_NO_SQARRAY)) {
		index = io_uring_smp_load_acquire(&ring->sq.array[index]);
		if (index >= entries)
			return NULL;
	}
	return uring_sqe(ring->sq.sqes, ring->flags, index);
}

#endif
