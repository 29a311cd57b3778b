/* SPDX-License-Identifier: MIT */
/*
 * Stand-ins for liburing 2.8 / 2.9 functions (preload/liburing_newer.h),
 * built as a library the client links: like liburing's own, they flush
 * the SQ ring and enter the kernel by a raw system call, so nothing but
 * interposing the function itself sees their SQEs.  The resize maps the
 * SQ ring again at a new address, its size unchanged: what the guard
 * sees of a resize.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "liburing_newer.h"

/* liburing's flush and enter, raw: the submitted count or -errno. */
static int flush_and_enter(struct io_uring *ring, unsigned int wait_nr,
			   struct io_uring_cqe **cqe_ptr)
{
	struct io_uring_sq *sq = &ring->sq;
	unsigned int n = sq->sqe_tail - sq->sqe_head;
	sq->sqe_head = sq->sqe_tail;
	io_uring_smp_store_release(sq->ktail, sq->sqe_tail);
	long rc = syscall(__NR_io_uring_enter, ring->ring_fd, n, wait_nr,
			  wait_nr ? IORING_ENTER_GETEVENTS : 0, NULL, 0);
	if (rc < 0)
		return -errno;
	if (cqe_ptr && wait_nr)
		io_uring_peek_cqe(ring, cqe_ptr);
	return (int)rc;
}

int io_uring_submit_and_wait_min_timeout(struct io_uring *ring,
					 struct io_uring_cqe **cqe_ptr,
					 unsigned int wait_nr,
					 struct __kernel_timespec *ts,
					 unsigned int min_wait_usec,
					 sigset_t *sigmask)
{
	(void)ts;
	(void)min_wait_usec;
	(void)sigmask;
	return flush_and_enter(ring, wait_nr, cqe_ptr);
}

int io_uring_submit_and_wait_reg(struct io_uring *ring,
				 struct io_uring_cqe **cqe_ptr,
				 unsigned int wait_nr, int reg_index)
{
	(void)reg_index;
	return flush_and_enter(ring, wait_nr, cqe_ptr);
}

/* Moves a pointer into the old SQ mapping to the same place in the new. */
#define MOVE(p, from, to) \
	((p) = (void *)((char *)(to) + ((char *)(p) - (char *)(from))))

int io_uring_resize_rings(struct io_uring *ring, struct io_uring_params *p)
{
	(void)p;
	struct io_uring_sq *sq = &ring->sq;
	void *old = sq->ring_ptr;
	void *map = mmap(NULL, sq->ring_sz, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_POPULATE, ring->ring_fd,
			 IORING_OFF_SQ_RING);
	if (map == MAP_FAILED)
		return -errno;
	MOVE(sq->khead, old, map);
	MOVE(sq->ktail, old, map);
	MOVE(sq->kring_mask, old, map);
	MOVE(sq->kring_entries, old, map);
	MOVE(sq->kflags, old, map);
	MOVE(sq->kdropped, old, map);
	MOVE(sq->array, old, map);
	sq->ring_ptr = map;
	/* The CQ ring stays where it was (liburing unmaps both). */
	if (ring->cq.ring_ptr == old)
		ring->cq.ring_sz = sq->ring_sz;
	return 0;
}
