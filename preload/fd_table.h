/* SPDX-License-Identifier: MIT */
/*
 * A table indexed by fd number, as every preload module keeps one (the
 * guard's device fds, devices.c; the simulated device's, fdtable.c):
 * one atomic word per fd, what the word means the module's own (a
 * pointer to its file, a marker).  Two-level and lock-free for readers:
 * chunks of PRELOAD_FD_CHUNK words made on first use (zeroed), never
 * freed, for fds below PRELOAD_FD_LIMIT (2^22; Linux's default fd limit,
 * fs.nr_open, is 2^20).  Memory follows the highest fd used, not the
 * process's age.  Writers of one word agree among themselves (an
 * atomic exchange, or a lock of the module's).
 */
#ifndef PRELOAD_FD_TABLE_H
#define PRELOAD_FD_TABLE_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#define PRELOAD_FD_CHUNK_BITS 10
#define PRELOAD_FD_CHUNK (1u << PRELOAD_FD_CHUNK_BITS)
#define PRELOAD_FD_MAX_CHUNKS 4096u
#define PRELOAD_FD_LIMIT (PRELOAD_FD_MAX_CHUNKS * PRELOAD_FD_CHUNK)

typedef _Atomic(uintptr_t) preload_fd_word;

/* Static storage: zero is an empty table. */
struct preload_fd_table {
	_Atomic(preload_fd_word *) chunk[PRELOAD_FD_MAX_CHUNKS];
};

/* Chunk c of t (c below PRELOAD_FD_MAX_CHUNKS), or NULL: none made yet.
 * Acquire: its words read as made. */
static inline preload_fd_word *preload_fd_chunk(struct preload_fd_table *t,
						unsigned int c)
{
	return atomic_load_explicit(&t->chunk[c], memory_order_acquire);
}

/* fd's word in t, or NULL: fd negative or beyond the table, or (create
 * 0) its chunk not made, or (create 1) no memory to make it.  Two
 * threads making one chunk at once keep the first one made. */
static inline preload_fd_word *preload_fd_at(struct preload_fd_table *t,
					     int fd, int create)
{
	if (fd < 0 || (unsigned int)fd >= PRELOAD_FD_LIMIT)
		return NULL;
	unsigned int c = (unsigned int)fd >> PRELOAD_FD_CHUNK_BITS;
	preload_fd_word *chunk = preload_fd_chunk(t, c);
	if (!chunk && create) {
		preload_fd_word *fresh = calloc(PRELOAD_FD_CHUNK,
						sizeof(*fresh));
		if (!fresh)
			return NULL;
		if (atomic_compare_exchange_strong(&t->chunk[c], &chunk,
						   fresh))
			chunk = fresh;
		else
			free(fresh);
	}
	return chunk ? &chunk[fd & (PRELOAD_FD_CHUNK - 1)] : NULL;
}

/* Calls each(ctx, fd) for every fd first .. last (inclusive) whose chunk
 * t has made: cost follows the chunks made, not the range. */
static inline void preload_fd_each(struct preload_fd_table *t,
				   unsigned int first, unsigned int last,
				   void (*each)(void *ctx, int fd), void *ctx)
{
	for (unsigned int c = first >> PRELOAD_FD_CHUNK_BITS;
	     c < PRELOAD_FD_MAX_CHUNKS && c <= last >> PRELOAD_FD_CHUNK_BITS;
	     c++) {
		if (!preload_fd_chunk(t, c))
			continue;
		unsigned int lo = c * PRELOAD_FD_CHUNK;
		unsigned int hi = lo + PRELOAD_FD_CHUNK - 1;
		if (lo < first)
			lo = first;
		if (hi > last)
			hi = last;
		for (unsigned int fd = lo; fd <= hi; fd++)
			each(ctx, (int)fd);
	}
}

#endif
