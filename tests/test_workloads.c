/* SPDX-License-Identifier: MIT */
/*
 * The workload generator (bench/workload/workload.h): every workload at a
 * few small sizes certifies, each faulty variant gets exactly the verdict
 * (and the launch or instance) its generator constructed, the naive
 * checker agrees, images round-trip, generation is deterministic and
 * lands near its target size, and the stride fault is one word.
 */
#include <stdlib.h>
#include <string.h>

#include "naive.h"
#include "suites.h"
#include "util.h"
#include "workload.h"

/* vit unrolled, vit with its Repeat, decode, adjoint. */
#define SHAPES 4
static const struct {
	enum workload_kind kind;
	int repeat;
} shapes[SHAPES] = {
	{ WORKLOAD_VIT, 0 }, { WORKLOAD_VIT, 1 },
	{ WORKLOAD_DECODE, 0 }, { WORKLOAD_ADJOINT, 0 },
};

/* The sizes, smallest first; a property checked at the first n of them
 * loops over CASES(n) cases: every shape and fault at each size. */
#define SIZES 3
static const uint64_t sizes[SIZES] = { 1000, 10000, 30000 };
#define CASES(n) (SHAPES * WORKLOAD_FAULTS * (n))

static struct workload *make(int shape, enum workload_fault fault,
			     uint64_t words)
{
	struct workload_spec spec = { shapes[shape].kind, fault, words,
				      shapes[shape].repeat };
	const char *why = "?";
	struct workload *w = workload_new(&spec, &why);
	ck_assert_msg(w, "%s %s %lu: %s",
		      workload_kind_name(spec.kind), workload_fault_name(fault),
		      (unsigned long)words, why);
	return w;
}

static enum workload_fault fault_of(int i)
{
	return (enum workload_fault)(i % WORKLOAD_FAULTS);
}

static struct workload *make_case(int i)
{
	int shape = i / WORKLOAD_FAULTS % SHAPES;
	int size = i / (WORKLOAD_FAULTS * SHAPES);
	return make(shape, fault_of(i), sizes[size]);
}

START_TEST(verdict_as_constructed)
{
	struct workload *w = make_case(_i);
	enum workload_fault fault = fault_of(_i);
	uint64_t verdict;
	struct ac_diag diag;
	struct ac_error err;
	ck_assert_int_eq(ac_certify(&w->model, &verdict, &diag, &err), 0);
	ck_assert_uint_eq(verdict, w->verdict);
	ck_assert_int_eq(diag.condition, w->condition);
	switch (fault) {
	case WORKLOAD_SOUND:
		ck_assert_uint_eq(verdict, 0);
		break;
	case WORKLOAD_STRIDE:
		ck_assert_int_eq(diag.condition, AC_COND_C);
		ck_assert_int_eq(diag.reason, AC_WORD_UNNAMED);
		ck_assert_uint_eq(diag.launch, w->launch);
		break;
	case WORKLOAD_REUSE:
		ck_assert_int_eq(diag.condition, AC_COND_D);
		ck_assert_int_eq(diag.reason, AC_CARRIED_OVERWRITTEN);
		ck_assert_uint_eq(diag.instance, w->instance);
		break;
	}
	workload_free(w);
}
END_TEST

START_TEST(naive_agrees)
{
	struct workload *w = make_case(_i);
	uint64_t verdict;
	ck_assert_int_eq(naive_certify(&w->model, &verdict), 0);
	ck_assert_uint_eq(verdict, w->verdict);
	workload_free(w);
}
END_TEST

/* Image -> model -> image gives the same bytes and the same verdict. */
START_TEST(image_round_trip)
{
	struct workload *w = make_case(_i);
	size_t len, again_len;
	struct ac_error err;
	uint8_t *image = ac_model_write_image(&w->model, &len, &err);
	ck_assert_ptr_nonnull(image);
	struct ac_model *read = NULL;
	ck_assert_int_eq(ac_model_read_image(image, len, &read, &err), 0);
	util_expect_same_content(&w->model, read);
	uint8_t *again = ac_model_write_image(read, &again_len, &err);
	ck_assert_ptr_nonnull(again);
	ck_assert_uint_eq(again_len, len);
	ck_assert(memcmp(again, image, len) == 0);
	ck_assert_uint_eq(util_verdict_model(read, &err), w->verdict);
	free(again);
	ac_model_free(read);
	free(image);
	workload_free(w);
}
END_TEST

START_TEST(json_round_trip)
{
	struct workload *w = make_case(_i);
	size_t len;
	char *json = util_write_json_ok(&w->model, &len);
	struct ac_model *read = util_read_json_ok(json, len);
	util_expect_same_content(&w->model, read);
	ac_model_free(read);
	free(json);
	workload_free(w);
}
END_TEST

START_TEST(deterministic)
{
	struct workload *a = make_case(_i), *b = make_case(_i);
	size_t alen, blen;
	uint8_t *ai = ac_model_write_image(&a->model, &alen, NULL);
	uint8_t *bi = ac_model_write_image(&b->model, &blen, NULL);
	ck_assert_ptr_nonnull(ai);
	ck_assert_ptr_nonnull(bi);
	ck_assert_uint_eq(alen, blen);
	ck_assert(memcmp(ai, bi, alen) == 0);
	ck_assert_uint_eq(a->verdict, b->verdict);
	free(ai);
	free(bi);
	workload_free(a);
	workload_free(b);
}
END_TEST

/* From 1e4 words on, within 10 per cent of the target; below, the
 * smallest program of the kind, which still holds either fault. */
START_TEST(size_near_target)
{
	static const uint64_t targets[] = { 10000, 100000, 1000000 };
	for (size_t t = 0; t < sizeof(targets) / sizeof(targets[0]); t++) {
		struct workload *w = make(_i, WORKLOAD_SOUND, targets[t]);
		ck_assert_msg(w->model.n_words >= targets[t] * 9 / 10 &&
			      w->model.n_words <= targets[t] * 11 / 10,
			      "%lu words for a target of %lu (%s)",
			      (unsigned long)w->model.n_words,
			      (unsigned long)targets[t], w->shape);
		workload_free(w);
	}
	for (int f = 0; f < WORKLOAD_FAULTS; f++) {
		struct workload *tiny = make(_i, (enum workload_fault)f, 1);
		ck_assert_uint_gt(tiny->model.n_words, 200);
		ck_assert_uint_lt(tiny->model.n_words, 1000);
		ck_assert_uint_eq(util_verdict_model(&tiny->model, NULL),
				  tiny->verdict);
		workload_free(tiny);
	}
}
END_TEST

/* The stride fault changes exactly one word of the sound program: one
 * of the launch it names, by a positive stride. */
START_TEST(stride_is_one_word)
{
	uint64_t words = sizes[_i % SIZES];
	int shape = _i / SIZES;
	struct workload *sound = make(shape, WORKLOAD_SOUND, words);
	struct workload *bad = make(shape, WORKLOAD_STRIDE, words);
	const struct ac_model *a = &sound->model, *b = &bad->model;
	ck_assert_uint_eq(a->n_words, b->n_words);
	ck_assert_uint_eq(a->n_launches, b->n_launches);
	uint64_t differ = 0, at = 0;
	for (uint64_t i = 0; i < a->n_words; i++)
		if (a->words[i] != b->words[i]) {
			differ++;
			at = i;
		}
	ck_assert_uint_eq(differ, 1);
	const struct ac_launch *l = &b->launches[bad->launch];
	ck_assert_uint_ge(at, l->word_first);
	ck_assert_uint_lt(at, l->word_first + l->word_count);
	ck_assert_uint_gt(b->words[at], a->words[at]);
	workload_free(sound);
	workload_free(bad);
}
END_TEST

START_TEST(bad_specs)
{
	const char *why = NULL;
	struct workload_spec spec = {
		WORKLOAD_DECODE, WORKLOAD_SOUND, 1000, 1,
	};
	ck_assert_ptr_null(workload_new(&spec, &why));
	ck_assert_str_eq(why, "only vit has a Repeat variant");
	spec = (struct workload_spec){ WORKLOAD_ADJOINT, WORKLOAD_SOUND, 0, 0 };
	ck_assert_ptr_null(workload_new(&spec, &why));
	ck_assert_str_eq(why, "the target word count must be at least 1");
	spec.kind = WORKLOAD_KINDS;
	spec.words = 1000;
	ck_assert_ptr_null(workload_new(&spec, &why));
	ck_assert_str_eq(why, "unknown workload kind");
	ck_assert_int_eq(workload_kind_parse("adjoint"), WORKLOAD_ADJOINT);
	ck_assert_int_eq(workload_fault_parse("stride"), WORKLOAD_STRIDE);
	ck_assert_int_eq(workload_kind_parse("vit-repeat"), -1);
}
END_TEST

/* One case per property, so that CK_RUN_CASE picks one. */
static void add_loop(Suite *s, const char *name, const TTest *test, int n)
{
	TCase *tc = tcase_create(name);
	tcase_add_loop_test(tc, test, 0, n);
	suite_add_tcase(s, tc);
}

Suite *suite_workloads(void)
{
	Suite *s = suite_create("workloads");
	add_loop(s, "verdict", verdict_as_constructed, CASES(SIZES));
	add_loop(s, "naive", naive_agrees, CASES(2));
	add_loop(s, "image", image_round_trip, CASES(SIZES));
	add_loop(s, "json", json_round_trip, CASES(1));
	add_loop(s, "deterministic", deterministic, CASES(1));
	add_loop(s, "size", size_near_target, SHAPES);
	add_loop(s, "stride", stride_is_one_word, SHAPES * SIZES);
	add_loop(s, "specs", bad_specs, 1);
	return s;
}
