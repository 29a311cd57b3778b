/* SPDX-License-Identifier: MIT */
/*
 * The planner's programs against the certificate: the correct planner's
 * are certified for every shape arena-infer takes, the buggy planner's
 * fail (D) exactly where xn is reused, and the plans have the structure
 * the example promises (one shared workspace, one Repeat with a delta on
 * every weight word, identities in field 51).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "planner.h"
#include "suites.h"

/* Shapes the tests sweep: (layers, tokens). */
static const int shapes[][2] = {
	{ 1, 8 }, { 2, 8 }, { 3, 8 }, { 4, 8 }, { 2, 1 }, { 2, 16 }, { 4, 64 },
};
#define N_SHAPES ((int)(sizeof(shapes) / sizeof(shapes[0])))

static void build(struct plan *plan, int i, enum plan_kind kind)
{
	struct model_shape s = model_default_shape(shapes[i][0], shapes[i][1]);
	ck_assert_int_eq(plan_build(plan, &s, kind), 0);
}

static const struct ac_tensor *plane(const struct plan *plan,
				     struct ac_tensor_ref ref)
{
	ck_assert_uint_lt(ref.phase, plan->model.n_phases);
	const struct ac_phase *p = &plan->model.phases[ref.phase];
	ck_assert_uint_lt(ref.index, p->plane_count);
	return &plan->model.planes[p->plane_first + ref.index];
}

static int name_is(struct ac_bytes name, const char *s)
{
	return name.len == strlen(s) && memcmp(name.data, s, name.len) == 0;
}

static int same_bytes(struct ac_bytes a, struct ac_bytes b)
{
	return a.len == b.len && memcmp(a.data, b.data, a.len) == 0;
}

static int meets(const struct ac_tensor *a, const struct ac_tensor *b)
{
	return a->offset < b->offset + b->size && b->offset < a->offset + a->size;
}

START_TEST(correct_plan_is_certified)
{
	struct plan plan;
	char text[8192];
	build(&plan, _i, PLAN_CORRECT);
	uint64_t verdict = plan_certify(&plan, NULL, text, sizeof(text));
	ck_assert_msg(verdict == 0, "shape %d: verdict %llu: %s", _i,
		      (unsigned long long)verdict, text);
	plan_free(&plan);
}
END_TEST

/*
 * Instances: embed 0, norm 1, qkv 2, scores 3, context 4, attn_out 5,
 * mlp_up 6.  mlp_up carries xn, last declared by qkv (instance 2); an
 * attention phase in between (scores, in the default shape: its fresh s
 * lands on xn) declared a plane over xn's bytes.
 */
START_TEST(buggy_plan_fails_d_at_first_mlp_up)
{
	struct plan plan;
	struct ac_diag d;
	char text[8192];
	build(&plan, _i, PLAN_BUGGY);
	uint64_t verdict = plan_certify(&plan, &d, text, sizeof(text));
	ck_assert_msg(verdict == 2 + plan.model.n_launches + 6,
		      "shape %d: verdict %llu: %s", _i,
		      (unsigned long long)verdict, text);
	ck_assert_int_eq(d.condition, AC_COND_D);
	ck_assert_int_eq(d.reason, AC_CARRIED_OVERWRITTEN);
	ck_assert_uint_eq(d.instance, 6);
	ck_assert_uint_eq(d.phase, PH_MLP_UP);
	ck_assert_uint_eq(d.earlier, 2);
	ck_assert_uint_eq(d.earlier_phase, PH_QKV);
	ck_assert(d.intervening > 2 && d.intervening < 6);
	ck_assert(name_is(plane(&plan, d.tensor[0])->name, "xn"));
	ck_assert(d.tensor[1].phase > PH_QKV && d.tensor[1].phase < PH_MLP_UP);
	ck_assert(meets(plane(&plan, d.tensor[0]), plane(&plan, d.tensor[1])));
	if (shapes[_i][1] == 8)
		ck_assert_uint_eq(d.tensor[1].phase, PH_SCORES);
	ck_assert_ptr_nonnull(strstr(text, "'xn'"));
	plan_free(&plan);
}
END_TEST

/* Only placement differs: the two planners emit the same launches over
 * the same phases, so the bug is the lifetime and nothing else. */
START_TEST(buggy_plan_differs_only_in_placement)
{
	struct plan good, bad;
	build(&good, _i, PLAN_CORRECT);
	build(&bad, _i, PLAN_BUGGY);
	ck_assert_uint_eq(good.model.n_launches, bad.model.n_launches);
	ck_assert_uint_eq(good.model.n_planes, bad.model.n_planes);
	for (uint32_t i = 0; i < good.model.n_planes; i++) {
		ck_assert(same_bytes(good.planes[i].name, bad.planes[i].name));
		ck_assert_uint_eq(good.planes[i].size, bad.planes[i].size);
		ck_assert_uint_eq(good.planes[i].carried, bad.planes[i].carried);
	}
	plan_free(&good);
	plan_free(&bad);
}
END_TEST

/* Every plane in the workspace window, every global outside it. */
START_TEST(planes_in_workspace_globals_outside)
{
	struct plan plan;
	build(&plan, _i, PLAN_CORRECT);
	const struct ac_window *ws = &plan.windows[WIN_WORKSPACE];
	for (uint32_t i = 0; i < plan.model.n_planes; i++) {
		const struct ac_tensor *t = &plan.planes[i];
		ck_assert_uint_ge(t->offset, ws->base);
		ck_assert_uint_le(t->offset + t->size, ws->base + ws->size);
	}
	for (int g = 0; g < G_COUNT; g++) {
		const struct ac_tensor *t = &plan.globals[g];
		ck_assert(t->offset + t->size <= ws->base ||
			  t->offset >= ws->base + ws->size);
	}
	plan_free(&plan);
}
END_TEST

/* The workspace is reused: planes of different keys in different phases
 * share bytes, and the workspace is smaller than all values laid end to
 * end. */
START_TEST(workspace_is_reused)
{
	struct plan plan;
	build(&plan, _i, PLAN_CORRECT);
	int shared = 0;
	uint64_t total = 0;
	for (uint32_t i = 0; i < plan.model.n_planes; i++) {
		const struct ac_tensor *a = &plan.planes[i];
		if (!a->carried)
			total += a->size;
		for (uint32_t j = 0; j < plan.model.n_planes; j++)
			if (meets(a, &plan.planes[j]) &&
			    a->offset != plan.planes[j].offset)
				shared = 1;
	}
	ck_assert(shared);
	ck_assert_uint_lt(plan.workspace_bytes, total);
	plan_free(&plan);
}
END_TEST

/* One Repeat over the layer body, one iteration per layer, and a delta of
 * one layer stride on every word that points into the weight bank. */
START_TEST(layers_are_one_repeat)
{
	struct plan plan;
	build(&plan, _i, PLAN_CORRECT);
	struct model_shape s = model_default_shape(shapes[_i][0], shapes[_i][1]);
	int64_t stride = (int64_t)(model_layout(&s).stride * sizeof(float));
	const struct ac_tensor *bank = &plan.globals[G_WEIGHTS];
	const struct ac_repeat *r = &plan.repeat;

	ck_assert_uint_eq(plan.model.n_repeats, 1);
	ck_assert_uint_eq(r->iterations, (uint64_t)s.layers);
	ck_assert_uint_eq(bank->size, (uint64_t)stride * s.layers);
	uint32_t weight_words = 0;
	for (uint64_t l = r->first; l < r->first + r->count; l++) {
		const struct ac_launch *ln = &plan.launches[l];
		for (uint32_t w = 0; w < ln->word_count; w++) {
			uint64_t v = plan.words[ln->word_first + w];
			if (v >= bank->offset && v < bank->offset + bank->size)
				weight_words++;
		}
	}
	ck_assert_uint_eq(plan.model.n_deltas, weight_words);
	for (uint32_t d = 0; d < plan.model.n_deltas; d++) {
		ck_assert_int_eq(plan.deltas[d].delta, stride);
		ck_assert_uint_ge(plan.deltas[d].launch, r->first);
		ck_assert_uint_lt(plan.deltas[d].launch, r->first + r->count);
	}
	plan_free(&plan);
}
END_TEST

/* Every launch names its phase in field 51 (tag bytes 0x9A 0x03). */
START_TEST(identities_carry_field_51)
{
	struct plan plan;
	struct ac_error err;
	build(&plan, _i, PLAN_CORRECT);
	ac_program *p = ac_program_new(&plan.model, &err);
	ck_assert_ptr_nonnull(p);
	for (uint32_t l = 0; l < plan.model.n_launches; l++) {
		struct ac_bytes id = plan.launches[l].identity;
		ck_assert_ptr_nonnull(memmem(id.data, id.len, "\x9a\x03", 2));
		ck_assert_uint_ne(ac_program_launch_phase(p, l), AC_NONE);
	}
	ck_assert_uint_eq(ac_program_launch_phase(p, 0), PH_EMBED);
	ck_assert_uint_eq(ac_program_launch_phase(p, plan.repeat.first),
			  PH_NORM);
	ck_assert_uint_eq(ac_program_launch_phase(p,
				plan.model.n_launches - 1), PH_FINAL);
	ac_program_free(p);
	plan_free(&plan);
}
END_TEST

/* The driver's image has no schedule and otherwise the whole program. */
START_TEST(device_image_has_no_schedule)
{
	struct plan plan;
	struct ac_error err;
	struct ac_model *back;
	size_t len;
	build(&plan, _i, PLAN_CORRECT);
	uint8_t *image = plan_device_image(&plan, &len, &err);
	ck_assert_ptr_nonnull(image);
	ck_assert_int_eq(ac_model_read_image(image, len, &back, &err), 0);
	ck_assert_uint_eq(back->n_refs, 0);
	ck_assert_uint_eq(back->n_launches, plan.model.n_launches);
	ck_assert_uint_eq(back->n_planes, plan.model.n_planes);
	ck_assert_uint_eq(back->n_deltas, plan.model.n_deltas);
	ac_model_free(back);
	free(image);
	plan_free(&plan);
}
END_TEST

Suite *suite_planner(void)
{
	Suite *s = suite_create("planner");
	TCase *tc = tcase_create("certificate");
	tcase_add_loop_test(tc, correct_plan_is_certified, 0, N_SHAPES);
	tcase_add_loop_test(tc, buggy_plan_fails_d_at_first_mlp_up, 0, N_SHAPES);
	suite_add_tcase(s, tc);

	tc = tcase_create("structure");
	tcase_add_loop_test(tc, buggy_plan_differs_only_in_placement, 0, N_SHAPES);
	tcase_add_loop_test(tc, planes_in_workspace_globals_outside, 0, N_SHAPES);
	tcase_add_loop_test(tc, workspace_is_reused, 0, N_SHAPES);
	tcase_add_loop_test(tc, layers_are_one_repeat, 0, N_SHAPES);
	tcase_add_loop_test(tc, identities_carry_field_51, 0, N_SHAPES);
	tcase_add_loop_test(tc, device_image_has_no_schedule, 0, N_SHAPES);
	suite_add_tcase(s, tc);
	return s;
}
