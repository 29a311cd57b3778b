/* SPDX-License-Identifier: MIT */
/*
 * What the guard and the simulated device both know of the io_uring
 * kernel ABI: where an SQE of a ring lies, how many argument bytes a
 * URING_CMD carries, and how the registered-file calls' fd arrays read
 * (liburing's io_uring_register_files* and IORING_REGISTER_FILES*).
 */
#ifndef ARENAGUARD_URING_ABI_H
#define ARENAGUARD_URING_ABI_H

#include <stdint.h>

#include <linux/io_uring.h>

#include "../contract/requests.h"

/* sqe->cmd of a 128-byte SQE (IORING_SETUP_SQE128): the argument bytes
 * of a URING_CMD (the contract's one definition). */
#define URING_CMD_BYTES ARENA_URING_CMD_BYTES

/* SQE `index` (below the ring's entries) of an SQ array `sqes` of a ring
 * set up with `setup_flags`: with IORING_SETUP_SQE128 each entry is two
 * struct io_uring_sqe long. */
static inline struct io_uring_sqe *uring_sqe(struct io_uring_sqe *sqes,
					     unsigned int setup_flags,
					     unsigned int index)
{
	unsigned int shift = setup_flags & IORING_SETUP_SQE128 ? 1 : 0;
	return &sqes[(uint64_t)index << shift];
}

/*
 * Walks a registered-file update: slots off .. off + nr of a table of
 * n_slots, from the application's fd array at `files` (0: every slot
 * unset).  Calls set(ctx, slot, fd) for each slot inside the table, with
 * -1 for an unset one; IORING_REGISTER_FILES_SKIP leaves a slot (no
 * call).  The array is read in chunks as an application pointer: a part
 * that cannot be read reads as -1s (the kernel refused those, or will).
 */
void uring_files_each(uint64_t files, unsigned int off, unsigned int nr,
		      unsigned int n_slots,
		      void (*set)(void *ctx, unsigned int slot, int fd),
		      void *ctx);

#endif
