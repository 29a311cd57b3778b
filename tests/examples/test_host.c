/* SPDX-License-Identifier: MIT */
/*
 * The reference computation and the tolerance, no device needed.  The
 * plans' numbers are checked on the simulated device (test_device.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "planner.h"
#include "suites.h"

#define SEED 0x61726e61ull

static const int shapes[][2] = {
	{ 1, 8 }, { 2, 8 }, { 3, 8 }, { 4, 8 }, { 2, 1 }, { 2, 16 },
};
#define N_SHAPES ((int)(sizeof(shapes) / sizeof(shapes[0])))

struct run {
	struct model m;
	struct plan plan;
	float *ref;
	size_t n;
};

static void setup(struct run *r, int shape, enum plan_kind kind)
{
	struct model_shape s = model_default_shape(shapes[shape][0],
						   shapes[shape][1]);
	ck_assert_int_eq(model_init(&r->m, &s, SEED), 0);
	ck_assert_int_eq(plan_build(&r->plan, &s, kind), 0);
	r->n = model_io_floats(&s);
	r->ref = calloc(r->n, sizeof(float));
	ck_assert(r->ref);
	ck_assert_int_eq(model_reference(&r->m, r->ref), 0);
}

static void teardown(struct run *r)
{
	free(r->ref);
	plan_free(&r->plan);
	model_free(&r->m);
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

Suite *suite_host(void)
{
	Suite *s = suite_create("host");
	TCase *tc = tcase_create("reference");
	tcase_add_loop_test(tc, reference_is_deterministic_and_finite, 0, N_SHAPES);
	tcase_add_test(tc, tolerance_rejects_nan);
	suite_add_tcase(s, tc);
	return s;
}
