/* SPDX-License-Identifier: MIT */
/*
 * Work split into numbered chunks, run on the calling thread and up to
 * threads - 1 workers (parallel.c).  Not installed.
 */
#ifndef ARENACERT_PARALLEL_H
#define ARENACERT_PARALLEL_H

#include <stdint.h>

/* Does chunk c of ctx's work: 0, or -1 (out of memory).  Called once per
 * chunk, from any of the threads, chunks in no particular order. */
typedef int (*chunk_fn)(void *ctx, uint32_t c);

/*
 * Calls fn(ctx, c) for every c in [0, n_chunks), each exactly once, on
 * the calling thread and at most threads - 1 workers it starts and joins
 * before returning (fewer when they cannot be started: the work is the
 * same, only slower).  threads <= 1 runs every chunk in order on the
 * calling thread.  Returns 0, or -1 when some call returned -1 (every
 * chunk is still called).
 */
int aci_run_chunks(unsigned threads, uint32_t n_chunks, chunk_fn fn, void *ctx);

#endif
