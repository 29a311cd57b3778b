/* SPDX-License-Identifier: MIT */
/*
 * aci_team_run: the team's threads claim chunk numbers under its lock (a
 * stage has at most 8 chunks a thread), so a slow chunk (a descheduled thread, a costly part of the launch table)
 * does not hold the others up.  What a chunk computes must not depend on
 * which thread runs it or when: callers merge per-chunk results in chunk
 * order (program.c's checks, image_read.c's launch table, sequence.c's
 * run index), which keeps verdicts and diagnostics deterministic.
 * The workers block every signal: the host's signals are the host's
 * threads' to take (a guard certifies inside someone else's process).
 */
#define _POSIX_C_SOURCE 200809L   /* pthread_sigmask, sigfillset */
#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#include <arenaguard/certify.h>

#include "parallel.h"

void aci_team_init(struct aci_team *t, unsigned threads)
{
	*t = (struct aci_team){ .threads = threads };
}

/* Claims and runs the posted stage's chunks until none is left; called and
 * returns with t->lock held. */
static void run_stage(struct aci_team *t)
{
	while (t->next < t->n_chunks) {
		uint32_t c = t->next++;
		chunk_fn fn = t->fn;
		void *ctx = t->ctx;
		pthread_mutex_unlock(&t->lock);
		int r = fn(ctx, c);
		pthread_mutex_lock(&t->lock);
		t->failed |= r != 0;
		if (++t->done == t->n_chunks)
			pthread_cond_signal(&t->idle);
	}
}

static void *worker(void *arg)
{
	struct aci_team *t = arg;
	pthread_mutex_lock(&t->lock);
	for (;;) {
		while (!t->quit && t->next >= t->n_chunks)
			pthread_cond_wait(&t->wake, &t->lock);
		if (t->quit)
			break;
		run_stage(t);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

/* Starts the workers, every signal blocked: a new thread inherits its
 * creator's mask. */
static void start_workers(struct aci_team *t)
{
	unsigned workers = t->threads - 1;
	if (workers > ACI_MAX_WORKERS)
		workers = ACI_MAX_WORKERS;
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->wake, NULL);
	pthread_cond_init(&t->idle, NULL);
	t->ready = 1;
	sigset_t all, was;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &was);
	while (t->started < workers &&
	       pthread_create(&t->tid[t->started], NULL, worker, t) == 0)
		t->started++;
	pthread_sigmask(SIG_SETMASK, &was, NULL);
}

int aci_team_run(struct aci_team *t, uint32_t n_chunks, chunk_fn fn,
		 void *ctx)
{
	if (t->threads <= 1 || n_chunks <= 1) {
		int failed = 0;
		for (uint32_t c = 0; c < n_chunks; c++)
			failed |= fn(ctx, c) != 0;
		return failed ? -1 : 0;
	}
	if (!t->ready)
		start_workers(t);
	pthread_mutex_lock(&t->lock);
	assert(t->next >= t->n_chunks && t->done == t->n_chunks);
	t->fn = fn;
	t->ctx = ctx;
	t->n_chunks = n_chunks;
	t->next = t->done = 0;
	t->failed = 0;
	pthread_cond_broadcast(&t->wake);
	run_stage(t);
	while (t->done < t->n_chunks)
		pthread_cond_wait(&t->idle, &t->lock);
	int failed = t->failed;
	pthread_mutex_unlock(&t->lock);
	return failed ? -1 : 0;
}

void aci_team_stop(struct aci_team *t)
{
	if (!t->ready)
		return;
	pthread_mutex_lock(&t->lock);
	t->quit = 1;
	pthread_cond_broadcast(&t->wake);
	pthread_mutex_unlock(&t->lock);
	for (unsigned i = 0; i < t->started; i++)
		pthread_join(t->tid[i], NULL);
	pthread_cond_destroy(&t->idle);
	pthread_cond_destroy(&t->wake);
	pthread_mutex_destroy(&t->lock);
	aci_team_init(t, t->threads);
}

/* the caller's and the workers a team can start */
#define MAX_THREADS (ACI_MAX_WORKERS + 1)

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
