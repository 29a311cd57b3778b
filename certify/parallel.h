/* SPDX-License-Identifier: MIT */
/*
 * Work split into numbered chunks, run on the calling thread and up to
 * threads - 1 workers of a team (parallel.c).  Not installed.
 */
#ifndef ARENACERT_PARALLEL_H
#define ARENACERT_PARALLEL_H

#include <stdint.h>

/* Does chunk c of ctx's work: 0, or -1 (out of memory).  Called once per
 * chunk, from any of the threads, chunks in no particular order. */
typedef int (*chunk_fn)(void *ctx, uint32_t c);

#include <pthread.h>

#define ACI_MAX_WORKERS 63

/*
 * The threads of one call that certifies (ac_program_view_image,
 * ac_program_new_opts): the caller's and up to threads - 1 workers,
 * started at the first aci_team_run and kept, between stages, waiting
 * for the next, until aci_team_stop joins them.  One team serves every
 * stage of the call (the image's launch table, the checks, the run
 * index), so a machine that is slow to schedule a worker delays the
 * call at the end once, not at every stage.  The caller's thread only
 * drives it.
 */
struct aci_team {
	unsigned threads;           /* wanted: 1 runs every stage serially */
	unsigned started;           /* workers running */
	int ready;                  /* lock and conditions initialised */
	pthread_mutex_t lock;
	pthread_cond_t wake;        /* a stage posted, or quit */
	pthread_cond_t idle;        /* a stage's last chunk done */
	/* the stage, under lock */
	chunk_fn fn;
	void *ctx;
	uint32_t n_chunks, next, done;
	int failed, quit;
	pthread_t tid[ACI_MAX_WORKERS];
};

/* A team of `threads` (at most ACI_MAX_WORKERS + 1; 0 or 1: the caller's
 * alone); nothing started yet.  Every team is stopped (aci_team_stop). */
void aci_team_init(struct aci_team *t, unsigned threads);

/*
 * Calls fn(ctx, c) for every c in [0, n_chunks), each exactly once, on
 * the calling thread and the team's workers (started here the first
 * time; fewer when they cannot be started: the work is the same, only
 * slower), and returns when every call has returned; a worker that
 * claimed none is not waited for.  A team of 1 runs every chunk in
 * order on the calling thread.  Returns 0, or -1 when some call
 * returned -1 (every chunk is still called).
 */
int aci_team_run(struct aci_team *t, uint32_t n_chunks, chunk_fn fn,
		 void *ctx);

/* Joins the team's workers and frees what it holds; t may be
 * initialised again. */
void aci_team_stop(struct aci_team *t);

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
