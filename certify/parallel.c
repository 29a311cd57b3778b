/* SPDX-License-Identifier: MIT */
/*
 * aci_run_chunks: the threads claim chunk numbers from one atomic counter, so
 * a slow chunk (a descheduled thread, a costly part of the launch table)
 * does not hold the others up.  What a chunk computes must not depend on
 * which thread runs it or when: callers merge per-chunk results in chunk
 * order (program.c's checks, image_read.c's launch table, sequence.c's
 * run index), which keeps verdicts and diagnostics deterministic.
 * The workers block every signal: the host's signals are the host's
 * threads' to take (a guard certifies inside someone else's process).
 */
#define _POSIX_C_SOURCE 200809L   /* pthread_sigmask, sigfillset */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>

#include <arenaguard/certify.h>

#include "parallel.h"

struct chunk_run {
	chunk_fn fn;
	void *ctx;
	uint32_t n_chunks;
	atomic_uint next;           /* the next unclaimed chunk */
	atomic_int failed;          /* some fn returned -1 */
};

static void *claim_chunks(void *arg)
{
	struct chunk_run *run = arg;
	for (;;) {
		uint32_t c = atomic_fetch_add_explicit(&run->next, 1,
						       memory_order_relaxed);
		if (c >= run->n_chunks)
			return NULL;
		if (run->fn(run->ctx, c) != 0)
			atomic_store_explicit(&run->failed, 1,
					      memory_order_relaxed);
	}
}

#define MAX_WORKERS 63

int aci_run_chunks(unsigned threads, uint32_t n_chunks, chunk_fn fn, void *ctx)
{
	struct chunk_run run = { .fn = fn, .ctx = ctx, .n_chunks = n_chunks };
	atomic_init(&run.next, 0);
	atomic_init(&run.failed, 0);
	unsigned workers = threads > 1 ? threads - 1 : 0;
	if (workers > MAX_WORKERS)
		workers = MAX_WORKERS;
	if (workers >= n_chunks)
		workers = n_chunks ? n_chunks - 1 : 0;
	pthread_t tid[MAX_WORKERS];
	unsigned started = 0;
	sigset_t all, was;
	sigfillset(&all);
	/* A new thread inherits its creator's mask. */
	if (workers)
		pthread_sigmask(SIG_SETMASK, &all, &was);
	while (started < workers &&
	       pthread_create(&tid[started], NULL, claim_chunks, &run) == 0)
		started++;
	if (workers)
		pthread_sigmask(SIG_SETMASK, &was, NULL);
	claim_chunks(&run);
	for (unsigned i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	return atomic_load(&run.failed) ? -1 : 0;
}

/* the caller's and the workers aci_run_chunks can start */
#define MAX_THREADS (MAX_WORKERS + 1)

unsigned aci_threads_for(const struct ac_options *opt, uint64_t words,
			 uint64_t launches)
{
	unsigned threads = opt ? opt->threads : 0;
	uint64_t from = opt && opt->parallel_words ? opt->parallel_words
						   : AC_PARALLEL_WORDS;
	if (threads < 2 || words < from || launches < 2)
		return 1;
	return threads < MAX_THREADS ? threads : MAX_THREADS;
}
