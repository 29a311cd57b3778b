/* SPDX-License-Identifier: MIT */
/*
 * ac_walk (certify/sequence.c), the executed sequence folded and its
 * instances numbered, against the sequence unrolled here from the spec's
 * wording (1.3: references in order, a body's launches `iterations`
 * times; 2 (D): an instance is a maximal run of one phase) with the
 * naive checker's phases.  On generated programs of every verdict (fixed
 * seed, printed): the walk's instance count is the unrolled one; every
 * run it shows is of its column's phase; and where it folds nothing, its
 * runs are the unrolled sequence launch for launch, each in the instance
 * the unrolling numbers.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <arenaguard/certify.h>

#include "gen.h"
#include "naive.h"
#include "suites.h"

#define WALK_SEED UINT64_C(0x3a1c)
#define WALK_PROGRAMS 1500
#define WALK_MAX_EXECUTED 100000u

/* The executed sequence unrolled: launches and their instances. */
struct unrolled {
	uint64_t *launch, *instance;
	uint64_t n, instances;
};

static const struct ac_repeat *body_at(const struct ac_model *m, uint64_t l)
{
	for (uint64_t r = 0; r < m->n_repeats; r++)
		if (m->repeats[r].first == l)
			return &m->repeats[r];
	return NULL;
}

static void push(struct unrolled *u, const int64_t *phase, uint64_t l)
{
	if (u->n == 0 || phase[l] != phase[u->launch[u->n - 1]])
		u->instances++;
	u->launch[u->n] = l;
	u->instance[u->n++] = u->instances - 1;
}

static void unroll(const struct ac_model *m, const int64_t *phase,
		   uint64_t executed, struct unrolled *u)
{
	u->launch = malloc((executed + 1) * sizeof(*u->launch));
	u->instance = malloc((executed + 1) * sizeof(*u->instance));
	ck_assert(u->launch && u->instance);
	u->n = u->instances = 0;
	for (uint64_t i = 0; i < m->n_refs; i++) {
		uint64_t end = m->refs[i].first + m->refs[i].count;
		for (uint64_t l = m->refs[i].first; l < end;) {
			const struct ac_repeat *b = body_at(m, l);
			if (!b) {
				push(u, phase, l++);
				continue;
			}
			for (uint64_t t = 0; t < b->iterations; t++)
				for (uint64_t k = 0; k < b->count; k++)
					push(u, phase, l + k);
			l += b->count;
		}
	}
	ck_assert_uint_eq(u->n, executed);
}

struct seen {
	const int64_t *phase;
	const struct unrolled *u;
	uint64_t phase_open, instance_open;
	uint64_t at;              /* launches seen, while nothing is folded */
	int folded;
};

static void seen_column(void *ctx, const struct ac_walk_column *c)
{
	struct seen *s = ctx;
	s->phase_open = c->phase;
	s->instance_open = c->instance;
}

static void seen_run(void *ctx, uint64_t first, uint64_t count,
		     uint64_t ordinal, uint64_t ref)
{
	struct seen *s = ctx;
	(void)ordinal;
	(void)ref;
	ck_assert_uint_gt(count, 0);
	for (uint64_t l = first; l < first + count; l++) {
		int64_t ph = s->phase[l];
		ck_assert_uint_eq(s->phase_open, ph < 0 ? AC_NONE : (uint64_t)ph);
		if (s->folded)
			continue;
		ck_assert_uint_lt(s->at, s->u->n);
		ck_assert_uint_eq(s->u->launch[s->at], l);
		ck_assert_uint_eq(s->u->instance[s->at], s->instance_open);
		s->at++;
	}
}

static void seen_fold(void *ctx, const struct ac_walk_fold *f)
{
	struct seen *s = ctx;
	(void)f;
	s->folded = 1;
}

static void seen_iter_begin(void *ctx, const struct ac_walk_iter *it)
{
	(void)ctx;
	ck_assert_uint_lt(it->iteration, it->total);
}

static void seen_iter_end(void *ctx)
{
	(void)ctx;
}

START_TEST(walk_numbers_instances_as_unrolled)
{
	printf("walk: seed %#" PRIx64 ", %d programs\n", WALK_SEED,
	       WALK_PROGRAMS);
	struct gen_rng r;
	gen_rng_seed(&r, WALK_SEED);
	unsigned walked = 0, unfolded = 0, failing = 0;
	for (int i = 0; i < WALK_PROGRAMS; i++) {
		struct ac_model *m = gen_model(&r);
		uint64_t executed = 0, verdict;
		struct ac_error err;
		ac_program *p = NULL;
		/* well formed (the schedule too), small enough to unroll */
		if (ac_certify(m, &verdict, NULL, &err) != 0 ||
		    naive_executed(m, &executed) != 0 ||
		    executed > WALK_MAX_EXECUTED ||
		    !(p = ac_program_new(m, &err))) {
			gen_model_free(m);
			continue;
		}
		int64_t *phase = malloc((m->n_launches + 1) * sizeof(*phase));
		ck_assert_ptr_nonnull(phase);
		for (uint64_t l = 0; l < m->n_launches; l++)
			phase[l] = naive_phase_of(m, l);
		struct unrolled u;
		unroll(m, phase, executed, &u);

		ac_walk *w = ac_walk_new(p, AC_NONE, AC_NONE);
		ck_assert_ptr_nonnull(w);
		struct seen s = { phase, &u, AC_NONE, AC_NONE, 0, 0 };
		struct ac_walk_hooks h = { &s, seen_column, seen_run, seen_fold,
					   seen_iter_begin, seen_iter_end };
		uint64_t instances = ac_walk_run(w, &h);
		if (instances != u.instances)
			fprintf(stderr, "walk: program %d: %" PRIu64
				" instances, unrolled %" PRIu64 "\n", i,
				instances, u.instances);
		ck_assert_uint_eq(instances, u.instances);
		if (!s.folded) {
			ck_assert_uint_eq(s.at, u.n);
			unfolded++;
		}
		/* run again: the same count */
		s = (struct seen){ phase, &u, AC_NONE, AC_NONE, 0, 0 };
		ck_assert_uint_eq(ac_walk_run(w, &h), instances);
		walked++;
		failing += ac_program_verdict(p) != 0;
		ac_walk_free(w);
		free(u.launch);
		free(u.instance);
		free(phase);
		ac_program_free(p);
		gen_model_free(m);
	}
	printf("walk: %u programs walked (%u failing (A)-(C), %u unfolded)\n",
	       walked, failing, unfolded);
	/* the seed reaches every case the test tells apart */
	ck_assert_uint_gt(walked, 100);
	ck_assert_uint_gt(unfolded, 20);
	ck_assert_uint_gt(walked - unfolded, 20);
	ck_assert_uint_gt(failing, 10);
}
END_TEST

/* The shown iterations: 0, 1, extra and n - 1, below n, sorted, once. */
START_TEST(walk_shows_iterations)
{
	uint64_t out[AC_WALK_SHOWN];
	ck_assert_int_eq(ac_walk_shown(1, AC_NONE, out), 1);
	ck_assert_uint_eq(out[0], 0);
	ck_assert_int_eq(ac_walk_shown(2, 1, out), 2);
	ck_assert_uint_eq(out[1], 1);
	ck_assert_int_eq(ac_walk_shown(10, 5, out), 4);
	ck_assert_uint_eq(out[0], 0);
	ck_assert_uint_eq(out[1], 1);
	ck_assert_uint_eq(out[2], 5);
	ck_assert_uint_eq(out[3], 9);
	ck_assert_int_eq(ac_walk_shown(10, 12, out), 3);
	ck_assert_uint_eq(out[2], 9);
}
END_TEST

Suite *suite_walk(void)
{
	Suite *s = suite_create("walk");
	TCase *t = tcase_create("walk");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, walk_numbers_instances_as_unrolled);
	tcase_add_test(t, walk_shows_iterations);
	suite_add_tcase(s, t);
	return s;
}
