/* SPDX-License-Identifier: MIT */
/*
 * The plans run on the host interpreter (interp.c), no device needed:
 * the correct plan computes the reference's numbers with and without
 * poison; the buggy plan, under poison, does not.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interp.h"
#include "suites.h"

#define SEED 0x61726e61ull

static const int shapes[][2] = {
	{ 1, 8 }, { 2, 8 }, { 3, 8 }, { 4, 8 }, { 2, 1 }, { 2, 16 },
};
#define N_SHAPES ((int)(sizeof(shapes) / sizeof(shapes[0])))

struct run {
	struct model m;
	struct plan plan;
	float *out, *ref;
	size_t n;
};

static void setup(struct run *r, int shape, enum plan_kind kind)
{
	struct model_shape s = model_default_shape(shapes[shape][0],
						   shapes[shape][1]);
	ck_assert_int_eq(model_init(&r->m, &s, SEED), 0);
	ck_assert_int_eq(plan_build(&r->plan, &s, kind), 0);
	r->n = model_io_floats(&s);
	r->out = calloc(r->n, sizeof(float));
	r->ref = calloc(r->n, sizeof(float));
	ck_assert(r->out && r->ref);
	ck_assert_int_eq(model_reference(&r->m, r->ref), 0);
}

static void teardown(struct run *r)
{
	free(r->out);
	free(r->ref);
	plan_free(&r->plan);
	model_free(&r->m);
}

/* 1 within tolerance, 0 not (NaN included). */
static int matches(const struct run *r)
{
	double err = model_max_abs_error(r->out, r->ref, r->n);
	return err <= model_tolerance(r->ref, r->n);
}

START_TEST(reference_is_deterministic_and_finite)
{
	struct run a, b;
	setup(&a, _i, PLAN_CORRECT);
	setup(&b, _i, PLAN_CORRECT);
	ck_assert_mem_eq(a.ref, b.ref, a.n * sizeof(float));
	for (size_t i = 0; i < a.n; i++)
		ck_assert(isfinite(a.ref[i]));
	teardown(&a);
	teardown(&b);
}
END_TEST

/* The comparison rule itself: a NaN never passes, a small error does. */
START_TEST(tolerance_rejects_nan)
{
	float ref[3] = { 1.0f, -2.0f, 0.5f };
	float close[3] = { 1.0005f, -2.001f, 0.5f };
	float nan[3] = { 1.0f, NAN, 0.5f };
	ck_assert(model_max_abs_error(close, ref, 3) <= model_tolerance(ref, 3));
	ck_assert(!(model_max_abs_error(nan, ref, 3) <= model_tolerance(ref, 3)));
}
END_TEST

START_TEST(correct_plan_matches_reference)
{
	struct run r;
	setup(&r, _i, PLAN_CORRECT);
	ck_assert_int_eq(interp_run(&r.plan, &r.m, 0, r.out), 0);
	ck_assert_msg(matches(&r), "shape %d: error %g", _i,
		      model_max_abs_error(r.out, r.ref, r.n));
	teardown(&r);
}
END_TEST

/* Poison only touches bytes a certified plan writes before reading. */
START_TEST(correct_plan_matches_under_poison)
{
	struct run r;
	setup(&r, _i, PLAN_CORRECT);
	ck_assert_int_eq(interp_run(&r.plan, &r.m, 1, r.out), 0);
	ck_assert_msg(matches(&r), "shape %d: error %g", _i,
		      model_max_abs_error(r.out, r.ref, r.n));
	teardown(&r);
}
END_TEST

START_TEST(buggy_plan_misses_under_poison)
{
	struct run r;
	setup(&r, _i, PLAN_BUGGY);
	ck_assert_int_eq(interp_run(&r.plan, &r.m, 1, r.out), 0);
	ck_assert_msg(!matches(&r), "shape %d: the buggy plan matched", _i);
	teardown(&r);
}
END_TEST

Suite *suite_host(void)
{
	Suite *s = suite_create("host");
	TCase *tc = tcase_create("reference");
	tcase_add_loop_test(tc, reference_is_deterministic_and_finite, 0, N_SHAPES);
	tcase_add_test(tc, tolerance_rejects_nan);
	suite_add_tcase(s, tc);

	tc = tcase_create("interpreted");
	tcase_add_loop_test(tc, correct_plan_matches_reference, 0, N_SHAPES);
	tcase_add_loop_test(tc, correct_plan_matches_under_poison, 0, N_SHAPES);
	tcase_add_loop_test(tc, buggy_plan_misses_under_poison, 0, N_SHAPES);
	suite_add_tcase(s, tc);
	return s;
}
