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

struct ac_options;

/* The chunks a thread's share of a table is cut into: a chunk claimed late
 * (a descheduled thread) holds the others up by an eighth of a share. */
#define ACI_CHUNKS_PER_THREAD 8

/*
 * How many threads certify a program of `words` launch parameter words in
 * `launches` launches under opt (NULL: ac_program_new's way): opt's
 * threads (at most 64) when it asks for 2 or more and the program has
 * opt's parallel_words (0: AC_PARALLEL_WORDS) or more and 2 launches or
 * more; otherwise 1.  Every stage that splits work across threads (the
 * image's launch table, the checks, the run index) asks here, so a
 * program is either split everywhere or nowhere.
 */
unsigned aci_threads_for(const struct ac_options *opt, uint64_t words,
			 uint64_t launches);

/* Chunks of a table of n entries for `threads` threads: n_chunks at most
 * ACI_CHUNKS_PER_THREAD per thread and one entry each at least (n > 0). */
static inline uint32_t aci_chunk_count(unsigned threads, uint32_t n)
{
	uint64_t c = (uint64_t)threads * ACI_CHUNKS_PER_THREAD;
	return c < n ? (uint32_t)c : n;
}

/* Where chunk c of n_chunks about equal chunks of n entries starts (c =
 * n_chunks: n), in entries. */
static inline uint32_t aci_chunk_start(uint32_t n, uint32_t n_chunks,
				       uint32_t c)
{
	return (uint32_t)((uint64_t)c * n / n_chunks);
}

#endif
