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

#include "certify/alloc.h"
#include "certify/image.h"
#include "certify/parallel.h"
#include "certify/program_impl.h"
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

/* The sound vit workload of 30000 words (a few thousand launches). */
static struct workload *sound_vit(void)
{
	struct workload_spec spec = { WORKLOAD_VIT, (enum workload_fault)0,
				      30000, 0 };
	const char *why = "?";
	struct workload *w = workload_new(&spec, &why);
	ck_assert_msg(w, "%s", why);
	return w;
}

/* While `watching`, pthread_create (below) counts the threads started. */
static atomic_int watching, started, unmasked;

/*
 * The run index (aci_index_runs) in chunks on 2, 3 and 5 threads is the
 * serial one entry for entry: random phases (few, NO_PHASE among them, so
 * that runs cross chunk bounds) and random disjoint bodies (adjacent ones,
 * one at launch 0, one at the end), on tables of 2 to 80 launches, so that
 * every chunk bound falls inside a run, on a body's edge and between two
 * bodies in some case; and it is built on worker threads.
 */
START_TEST(run_index_split_agrees)
{
	const uint64_t seed = 0x5e9a11e1ull;
	printf("parallel: run index, seed %#" PRIx64 ", 3000 tables\n", seed);
	struct gen_rng r;
	gen_rng_seed(&r, seed);
	for (int t = 0; t < 3000; t++) {
		uint32_t n = 2 + (uint32_t)gen_rng_below(&r, 79);
		uint32_t phase_of[81];
		struct body bodies[81], serial_bodies[81];
		uint32_t nb = 0;
		for (uint32_t l = 0; l < n; l++) {
			uint64_t x = gen_rng_below(&r, 4);
			phase_of[l] = x == 3 ? NO_PHASE : (uint32_t)x;
		}
		for (uint32_t l = 0; l < n;) {
			if (gen_rng_below(&r, 3) == 0) {
				uint32_t count = 1 + (uint32_t)gen_rng_below(&r,
							n - l < 6 ? n - l : 6);
				bodies[nb] = (struct body){ .first = l,
					.count = count, .repeat = nb };
				nb++;
				l += count;
			} else {
				l += 1 + (uint32_t)gen_rng_below(&r, 3);
			}
		}
		struct ac_model m = { .n_launches = n, .n_repeats = nb };
		memcpy(serial_bodies, bodies, sizeof(bodies));
		struct run *runs, *pruns;
		uint32_t *run_of, *prun_of, n_runs, pn_runs;
		ck_assert_int_eq(aci_index_runs(&m, phase_of, serial_bodies,
						NULL, &runs, &run_of, &n_runs),
				 0);
		static const unsigned threads[] = { 2, 3, 5 };
		for (size_t k = 0; k < sizeof(threads) / sizeof(threads[0]);
		     k++) {
			struct body pbodies[81];
			memcpy(pbodies, bodies, sizeof(bodies));
			struct aci_team team;
			aci_team_init(&team, threads[k]);
			atomic_store(&started, 0);
			atomic_store(&watching, 1);
			ck_assert_int_eq(aci_index_runs(&m, phase_of, pbodies,
							&team, &pruns,
							&prun_of, &pn_runs), 0);
			atomic_store(&watching, 0);
			aci_team_stop(&team);
			ck_assert_msg(atomic_load(&started) > 0, "table %d: "
				      "indexed on the calling thread alone "
				      "(%u threads)", t, threads[k]);
			ck_assert_msg(pn_runs == n_runs, "table %d: %u runs "
				      "serial, %u on %u threads", t, n_runs,
				      pn_runs, threads[k]);
			for (uint32_t i = 0; i < n_runs; i++)
				ck_assert_msg(runs[i].first == pruns[i].first &&
					      runs[i].phase == pruns[i].phase &&
					      runs[i].body == pruns[i].body,
					      "table %d: run %u differs on %u "
					      "threads", t, i, threads[k]);
			ck_assert(memcmp(run_of, prun_of, n * sizeof(*run_of))
				  == 0);
			for (uint32_t b = 0; b < nb; b++)
				ck_assert_msg(serial_bodies[b].run_first ==
					      pbodies[b].run_first &&
					      serial_bodies[b].run_count ==
					      pbodies[b].run_count &&
					      serial_bodies[b].steady ==
					      pbodies[b].steady,
					      "table %d: body %u differs on %u "
					      "threads", t, b, threads[k]);
			aci_big_free(pruns);
			aci_big_free(prun_of);
		}
		aci_big_free(runs);
		aci_big_free(run_of);
	}
}
END_TEST

/* The field of launch i's image entry to break, and how. */
enum launch_break { BREAK_OFFSET, BREAK_FIRST, BREAK_PAD, BREAK_LENGTH,
		    BREAK_COUNT, N_BREAKS };

/*
 * image's launch i broken one way (image untouched: the copy is returned,
 * for free): its string's offset or its first word one off, its pad not
 * zero, its string or its words one longer (past the pool's or the
 * words' end at the last launch, past the next launch's start before).
 */
static uint8_t *break_launch(const uint8_t *image, size_t len, uint32_t i,
			     enum launch_break how)
{
	uint8_t *copy = malloc(len);
	ck_assert_ptr_nonnull(copy);
	memcpy(copy, image, len);
	uint8_t *table = copy + IMAGE_HEADER_SIZE +
			 (size_t)IMG_LAUNCHES * IMAGE_TABLE_ENTRY;
	uint8_t *e = copy + image_get64(table + IMAGE_S_OFFSET) +
		     (size_t)i * IMAGE_LAUNCH_ENTRY;
	switch (how) {
	case BREAK_OFFSET:
		image_put32(e + IMAGE_STR_OFFSET,
			    image_get32(e + IMAGE_STR_OFFSET) + 1);
		break;
	case BREAK_FIRST:
		image_put64(e + IMAGE_LAUNCH_WORD_FIRST,
			    image_get64(e + IMAGE_LAUNCH_WORD_FIRST) + 1);
		break;
	case BREAK_PAD:
		image_put32(e + IMAGE_LAUNCH_PAD, 1);
		break;
	case BREAK_LENGTH:
		image_put32(e + IMAGE_STR_LENGTH,
			    image_get32(e + IMAGE_STR_LENGTH) + 1);
		break;
	default:
		image_put32(e + IMAGE_LAUNCH_WORD_COUNT,
			    image_get32(e + IMAGE_LAUNCH_WORD_COUNT) + 1);
		break;
	}
	return copy;
}

/*
 * The image's launch table read in chunks on threads (aci_image_view)
 * rejects a broken launch with the serial error, where and message, byte
 * for byte: each way of breaking a launch, at the first and last launches
 * and on both sides of every chunk bound of 2, 3 and 5 threads; and the
 * read is on worker threads (they start before the broken table is
 * rejected, before any check).  An image read whole on threads is the
 * serial read, launch for launch.
 */
START_TEST(image_read_split_agrees)
{
	struct workload *w = sound_vit();
	size_t len;
	uint8_t *image = ac_model_write_image(&w->model, &len, NULL);
	ck_assert_ptr_nonnull(image);
	const uint32_t n = w->model.n_launches;
	static const unsigned threads[] = { 2, 3, 5 };
	/* the launches to break: the ends, and each side of every bound */
	uint32_t at[512], n_at = 0;
	at[n_at++] = 0;
	at[n_at++] = n - 1;
	for (size_t t = 0; t < sizeof(threads) / sizeof(threads[0]); t++) {
		uint32_t chunks = aci_chunk_count(threads[t], n);
		for (uint32_t c = 1; c < chunks; c++)
			for (uint32_t d = 0; d < 3; d++)
				if (aci_chunk_start(n, chunks, c) + d - 1 < n)
					at[n_at++] = aci_chunk_start(n, chunks,
								     c) + d - 1;
	}
	int said = 0;
	for (uint32_t a = 0; a < n_at; a++)
		for (int how = 0; how < N_BREAKS; how++) {
			uint8_t *bad = break_launch(image, len, at[a],
						    (enum launch_break)how);
			struct ac_model *read = NULL;
			struct ac_error serial, par;
			ck_assert_ptr_null(ac_program_view_image(bad, len, NULL,
								 &read,
								 &serial));
			if (!said++)
				printf("parallel: launch %u broken: %s: %s\n",
				       at[a], serial.where, serial.message);
			ck_assert_msg(strstr(serial.where, "launches") ||
				      strstr(serial.where, "sections"),
				      "launch %u (%d): %s: %s", at[a], how, serial.where, serial.message);
			for (size_t t = 0;
			     t < sizeof(threads) / sizeof(threads[0]); t++) {
				struct ac_options opt = {
					.threads = threads[t],
					.parallel_words = 1 };
				atomic_store(&started, 0);
				atomic_store(&watching, 1);
				ck_assert_ptr_null(ac_program_view_image(
					bad, len, &opt, &read, &par));
				atomic_store(&watching, 0);
				ck_assert_msg(strcmp(serial.where, par.where) ==
					      0 && strcmp(serial.message,
							  par.message) == 0,
					      "launch %u broken (%d) on %u "
					      "threads: \"%s: %s\", serially "
					      "\"%s: %s\"", at[a], how,
					      threads[t], par.where,
					      par.message, serial.where,
					      serial.message);
				ck_assert_msg(atomic_load(&started) > 0,
					      "the launch table was read on "
					      "the calling thread alone");
			}
			free(bad);
		}
	struct ac_model *serial_read = NULL;
	ac_program *sp = ac_program_view_image(image, len, NULL, &serial_read,
					       NULL);
	ck_assert_ptr_nonnull(sp);
	for (size_t t = 0; t < sizeof(threads) / sizeof(threads[0]); t++) {
		struct ac_options opt = { .threads = threads[t],
					  .parallel_words = 1 };
		struct ac_model *read = NULL;
		ac_program *p = ac_program_view_image(image, len, &opt, &read,
						      NULL);
		ck_assert_ptr_nonnull(p);
		for (uint32_t l = 0; l < n; l++) {
			const struct ac_launch *a = &serial_read->launches[l],
					       *b = &read->launches[l];
			ck_assert(a->word_first == b->word_first &&
				  a->word_count == b->word_count &&
				  a->identity.len == b->identity.len &&
				  memcmp(a->identity.data, b->identity.data,
					 a->identity.len) == 0);
		}
		ac_program_free(p);
		ac_model_free(read);
	}
	ac_program_free(sp);
	ac_model_free(serial_read);
	free(image);
	workload_free(w);
}
END_TEST

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
 * host may direct at its process (watching, started, unmasked: above). */

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

/* One call's stages (the image's launch table, the checks, the run
 * index) share its workers: threads - 1 started per call, not per stage
 * (a loaded machine delays each start and join). */
START_TEST(one_team_per_call)
{
	struct workload *w = sound_vit();
	size_t len;
	uint8_t *image = ac_model_write_image(&w->model, &len, NULL);
	ck_assert_ptr_nonnull(image);
	static const unsigned threads[] = { 2, 3, 5 };
	for (size_t t = 0; t < sizeof(threads) / sizeof(threads[0]); t++) {
		struct ac_options opt = { .threads = threads[t],
					  .parallel_words = 1 };
		struct ac_model *read = NULL;
		atomic_store(&started, 0);
		atomic_store(&watching, 1);
		ac_program *p = ac_program_view_image(image, len, &opt, &read,
						      NULL);
		atomic_store(&watching, 0);
		ck_assert_ptr_nonnull(p);
		ck_assert_uint_eq(ac_program_verdict(p), 0);
		ck_assert_msg(atomic_load(&started) == (int)threads[t] - 1,
			      "%d workers started on %u threads",
			      atomic_load(&started), threads[t]);
		ac_program_free(p);
		ac_model_free(read);
	}
	free(image);
	workload_free(w);
}
END_TEST

/* A host's signals go to its own threads, never to the workers (an
 * alarm handler that longjmps, run on a worker, would wreck it); the
 * caller's mask is as it was after the call. */
START_TEST(workers_take_no_signal)
{
	struct workload *w = sound_vit();
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
	tcase_add_test(tc, run_index_split_agrees);
	tcase_add_test(tc, image_read_split_agrees);
	tcase_add_test(tc, one_team_per_call);
	suite_add_tcase(s, tc);
	return s;
}
