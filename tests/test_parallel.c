/* SPDX-License-Identifier: MIT */
/*
 * Parallel certification (ac_options.threads): the launch table in chunks
 * on worker threads gives the serial verdict and diagnostic, field for
 * field, whatever the threads.  Generated programs (tests/gen.c, fixed
 * seeds, printed) with parallel_words = 1, so that every program is cut
 * into chunks of a launch or two, and the workloads' faulty programs,
 * whose failing launch sits in the middle of the table.  The workers
 * take no signal: the test's pthread_create sees the mask they inherit.
 */
#define _GNU_SOURCE
#include <check.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arenaguard/certify.h>

#include "gen.h"
#include "suites.h"
#include "workload.h"

static const uint64_t parallel_seeds[] = { 0x9a7a11e1ull, 0x5eedc0deull };
#define PROGRAMS_PER_SEED 2000

static void same_ref(struct ac_tensor_ref a, struct ac_tensor_ref b,
		     const char *what, const char *field)
{
	ck_assert_msg(a.phase == b.phase && a.index == b.index,
		      "%s: %s differs", what, field);
}

static void same_wide(struct ac_wide a, struct ac_wide b, const char *what,
		      const char *field)
{
	ck_assert_msg(a.high == b.high && a.low == b.low, "%s: %s differs",
		      what, field);
}

/* Every field of the two diagnostics is equal. */
static void same_diag(const struct ac_diag *a, const struct ac_diag *b,
		      const char *what)
{
#define SAME(f) ck_assert_msg(a->f == b->f, "%s: " #f " %" PRIu64 \
			      " serial, %" PRIu64 " parallel", what, \
			      (uint64_t)a->f, (uint64_t)b->f)
	SAME(verdict);
	SAME(condition);
	SAME(reason);
	SAME(launch);
	SAME(word);
	SAME(identity_problem);
	SAME(identity_offset);
	SAME(ordinal);
	SAME(window);
	SAME(instance);
	SAME(phase);
	SAME(start_launch);
	SAME(start_ordinal);
	SAME(earlier);
	SAME(earlier_phase);
	SAME(intervening);
#undef SAME
	for (int i = 0; i < 2; i++) {
		same_ref(a->tensor[i], b->tensor[i], what, "tensor");
		same_ref(a->near[i], b->near[i], what, "near");
	}
	same_wide(a->lo, b->lo, what, "lo");
	same_wide(a->hi, b->hi, what, "hi");
}

/* Certifies m serially and on 2, 3 and 5 threads; all must agree.
 * Returns the serial verdict (AC_NONE when m is malformed). */
static uint64_t agree(const struct ac_model *m, uint64_t parallel_words,
		      const char *what)
{
	struct ac_diag serial, par;
	struct ac_error err;
	uint64_t v, pv;
	int rc = ac_certify(m, &v, &serial, &err);
	static const unsigned threads[] = { 2, 3, 5 };
	for (size_t t = 0; t < sizeof(threads) / sizeof(threads[0]); t++) {
		struct ac_options opt = { .threads = threads[t],
					  .parallel_words = parallel_words };
		int prc = ac_certify_opts(m, &opt, &pv, &par, &err);
		ck_assert_msg(prc == rc, "%s: rc %d serial, %d on %u threads",
			      what, rc, prc, threads[t]);
		if (rc != 0)
			continue;
		ck_assert_msg(pv == v, "%s: verdict %" PRIu64 " serial, %"
			      PRIu64 " on %u threads", what, v, pv,
			      threads[t]);
		same_diag(&serial, &par, what);
	}
	return rc == 0 ? v : AC_NONE;
}

START_TEST(generated_programs_agree)
{
	uint64_t failing_c = 0, certified = 0;
	for (size_t s = 0; s < sizeof(parallel_seeds) / sizeof(parallel_seeds[0]);
	     s++) {
		printf("parallel: seed %#" PRIx64 ", %d programs\n",
		       parallel_seeds[s], PROGRAMS_PER_SEED);
		for (uint64_t i = 0; i < PROGRAMS_PER_SEED; i++) {
			struct gen_rng r;
			gen_rng_seed(&r, parallel_seeds[s] ^
					 (i * 0x9E3779B97F4A7C15ull));
			struct ac_model *m = gen_model_aimed(&r, NULL);
			char what[80];
			snprintf(what, sizeof(what), "seed %#" PRIx64
				 " program %" PRIu64, parallel_seeds[s], i);
			uint64_t v = agree(m, 1, what);
			certified += v == 0;
			failing_c += v != AC_NONE && v >= 2 &&
				     v < 2 + (uint64_t)m->n_launches;
			gen_model_free(m);
		}
	}
	printf("parallel: %" PRIu64 " certified, %" PRIu64 " failing (C) "
	       "(or (D) at a small instance)\n", certified, failing_c);
	ck_assert_uint_gt(certified, 100);
	ck_assert_uint_gt(failing_c, 100);
}
END_TEST

/*
 * m's image read and checked in one call (ac_program_view_image, whose
 * chunk bounds search the reader's running word sums) on 2, 3 and 5
 * threads, cut into chunks of parallel_words: the serial verdict.
 */
static void image_agrees(const struct ac_model *m, uint64_t parallel_words,
			 uint64_t verdict, const char *what)
{
	size_t len;
	uint8_t *image = ac_model_write_image(m, &len, NULL);
	ck_assert_ptr_nonnull(image);
	static const unsigned threads[] = { 2, 3, 5 };
	for (size_t t = 0; t < sizeof(threads) / sizeof(threads[0]); t++) {
		struct ac_options opt = { .threads = threads[t],
					  .parallel_words = parallel_words };
		struct ac_model *read = NULL;
		ac_program *p = ac_program_view_image(image, len, &opt, &read,
						      NULL);
		ck_assert_msg(p, "%s: image rejected", what);
		ac_schedule *s = ac_schedule_new(p);
		ck_assert_ptr_nonnull(s);
		ck_assert_int_eq(ac_schedule_append(s, read->refs,
						    (size_t)read->n_refs, NULL),
				 0);
		ck_assert_msg(ac_schedule_verdict(s, NULL) == verdict,
			      "%s: verdict %" PRIu64 " read on %u threads, %"
			      PRIu64 " serial", what,
			      ac_schedule_verdict(s, NULL), threads[t],
			      verdict);
		ac_schedule_free(s);
		ac_program_free(p);
		ac_model_free(read);
	}
	free(image);
}

/*
 * m with its launches' words laid out back to front (the last launch's
 * first), which a hand-built model may do: the chunk bounds cannot search
 * running sums, and must cut the same chunks by summing.  The copy's
 * arrays are malloc'ed; free_reversed frees them.
 */
static struct ac_model reversed_words(const struct ac_model *m)
{
	struct ac_model r = *m;
	struct ac_launch *la = malloc(((size_t)m->n_launches + 1) * sizeof(*la));
	uint64_t *words = malloc(((size_t)m->n_words + 1) * sizeof(*words));
	ck_assert(la && words);
	uint64_t at = m->n_words;
	for (uint32_t l = 0; l < m->n_launches; l++) {
		la[l] = m->launches[l];
		at -= la[l].word_count;
		la[l].word_first = at;
		memcpy(words + at, m->words + m->launches[l].word_first,
		       la[l].word_count * sizeof(*words));
	}
	ck_assert_uint_eq(at, 0);
	r.launches = la;
	r.words = words;
	return r;
}

static void free_reversed(struct ac_model *r)
{
	free((void *)r->launches);
	free((void *)r->words);
}

/* The workloads: each variant, once with the threads' default threshold
 * (below it: serial) and once cut into chunks; read from its image in one
 * call, and with its words laid out back to front. */
START_TEST(workloads_agree)
{
	static const enum workload_kind kinds[] = {
		WORKLOAD_VIT, WORKLOAD_VIT, WORKLOAD_DECODE, WORKLOAD_ADJOINT };
	for (int k = 0; k < 4; k++)
		for (int f = 0; f < 3; f++) {
			struct workload_spec spec = { kinds[k],
				(enum workload_fault)f, 30000, k == 1 };
			const char *why = "?";
			struct workload *w = workload_new(&spec, &why);
			ck_assert_msg(w, "%s", why);
			char what[80];
			snprintf(what, sizeof(what), "%s%s %s",
				 workload_kind_name(kinds[k]),
				 k == 1 ? " --repeat" : "",
				 workload_fault_name((enum workload_fault)f));
			ck_assert_uint_eq(agree(&w->model, 1, what), w->verdict);
			ck_assert_uint_eq(agree(&w->model, 0, what), w->verdict);
			image_agrees(&w->model, 1, w->verdict, what);
			image_agrees(&w->model, 1000, w->verdict, what);
			struct ac_model r = reversed_words(&w->model);
			ck_assert_uint_eq(agree(&r, 1000, what), w->verdict);
			free_reversed(&r);
			workload_free(w);
		}
}
END_TEST

/* Every thread this binary starts (the library's workers among them)
 * passes here: while `watching`, each start counts, and so does each
 * whose creator, and so the new thread, has a signal unblocked that a
 * host may direct at its process. */
static atomic_int watching, started, unmasked;

int pthread_create(pthread_t *t, const pthread_attr_t *attr,
		   void *(*fn)(void *), void *arg)
{
	int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
		    void *) = dlsym(RTLD_NEXT, "pthread_create");
	if (atomic_load(&watching)) {
		static const int host[] = { SIGINT, SIGTERM, SIGALRM, SIGCHLD,
					    SIGUSR1, SIGUSR2, SIGPIPE };
		sigset_t mask;
		pthread_sigmask(SIG_BLOCK, NULL, &mask);
		atomic_fetch_add(&started, 1);
		for (size_t i = 0; i < sizeof(host) / sizeof(host[0]); i++)
			if (!sigismember(&mask, host[i])) {
				atomic_fetch_add(&unmasked, 1);
				break;
			}
	}
	return real(t, attr, fn, arg);
}

/* A host's signals go to its own threads, never to the workers (an
 * alarm handler that longjmps, run on a worker, would wreck it); the
 * caller's mask is as it was after the call. */
START_TEST(workers_take_no_signal)
{
	struct workload_spec spec = { WORKLOAD_VIT, (enum workload_fault)0,
				      30000, 0 };
	const char *why = "?";
	struct workload *w = workload_new(&spec, &why);
	ck_assert_msg(w, "%s", why);
	sigset_t before, after;
	sigemptyset(&before);
	sigaddset(&before, SIGUSR2);
	pthread_sigmask(SIG_SETMASK, &before, NULL);
	struct ac_options opt = { .threads = 4, .parallel_words = 1 };
	struct ac_error err;
	atomic_store(&watching, 1);
	ac_program *p = ac_program_new_opts(&w->model, &opt, &err);
	atomic_store(&watching, 0);
	ck_assert_msg(p, "%s", err.message);
	pthread_sigmask(SIG_BLOCK, NULL, &after);
	ck_assert_int_gt(atomic_load(&started), 0);
	ck_assert_msg(atomic_load(&unmasked) == 0, "%d of %d workers "
		      "started with host signals unblocked",
		      atomic_load(&unmasked), atomic_load(&started));
	ck_assert(sigismember(&after, SIGUSR2) && !sigismember(&after, SIGINT)
		  && !sigismember(&after, SIGALRM));
	ac_program_free(p);
	workload_free(w);
}
END_TEST

Suite *suite_parallel(void)
{
	Suite *s = suite_create("parallel");
	TCase *tc = tcase_create("parallel");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, generated_programs_agree);
	tcase_add_test(tc, workloads_agree);
	tcase_add_test(tc, workers_take_no_signal);
	suite_add_tcase(s, tc);
	return s;
}
