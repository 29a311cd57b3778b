/* SPDX-License-Identifier: MIT */
/*
 * ac_builder (arenaguard/builder.h): a program built call by call is the
 * model the JSON reader returns for the same plan (the same values and
 * runs, util_expect_same_model), with the same result object
 * (ac_certify_model_json against ac_certify_json); on every worked example
 * and on random programs with repeats and tables (fixed seeds); the
 * columnar launch table builds the same model as launch by launch; and a
 * builder's own errors name the entry as the JSON reader names it, stick,
 * and leave no model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arenaguard/builder.h>
#include <arenaguard/certify.h>

#include "gen.h"
#include "suites.h"
#include "util.h"

static const char *const examples[] = {
	"ex1", "ex2", "ex3", "ex4", "ex5", "ex6", "ex7a", "ex7b", "ex7c",
};

/* A builder holding m's plan; launches one by one, or columnar. */
static ac_builder *build_from(const struct ac_model *m, int columnar)
{
	ac_builder *b = ac_builder_new(m->alignment);
	ck_assert_ptr_nonnull(b);
	for (uint32_t i = 0; i < m->n_windows; i++)
		ac_builder_window(b, m->windows[i].name.data,
				  m->windows[i].name.len, m->windows[i].base,
				  m->windows[i].size);
	for (uint32_t i = 0; i < m->n_globals; i++)
		ac_builder_global(b, m->globals[i].name.data,
				  m->globals[i].name.len,
				  m->globals[i].offset, m->globals[i].size);
	for (uint32_t p = 0; p < m->n_phases; p++) {
		const struct ac_phase *ph = &m->phases[p];
		ac_builder_phase(b, ph->identity.data, ph->identity.len);
		for (uint32_t i = 0; i < ph->plane_count; i++) {
			const struct ac_tensor *t =
				&m->planes[ph->plane_first + i];
			ac_builder_plane(b, t->name.data, t->name.len,
					 t->offset, t->size, t->carried);
		}
	}
	uint32_t *ids = calloc(m->n_launches + 1, sizeof(*ids));
	uint32_t *counts = calloc(m->n_launches + 1, sizeof(*counts));
	ck_assert(ids && counts);
	for (uint32_t i = 0; i < m->n_launches; i++) {
		const struct ac_launch *l = &m->launches[i];
		ck_assert_int_eq(ac_builder_identity(b, AC_IDENTITY_RAW,
						     l->identity.data,
						     l->identity.len,
						     &ids[i]), 0);
		counts[i] = l->word_count;
		if (!columnar)
			ac_builder_launch(b, ids[i], m->words + l->word_first,
					  l->word_count);
	}
	if (columnar)
		ck_assert_int_eq(ac_builder_launches(b, m->n_launches, ids,
						     counts, m->words,
						     m->n_words), 0);
	free(ids);
	free(counts);
	for (uint32_t r = 0; r < m->n_repeats; r++) {
		const struct ac_repeat *rp = &m->repeats[r];
		ac_builder_repeat(b, rp->first, rp->count, rp->iterations);
		for (uint32_t d = 0; d < rp->delta_count; d++) {
			const struct ac_delta *dl =
				&m->deltas[rp->delta_first + d];
			ac_builder_delta(b, dl->launch, dl->word, dl->delta);
		}
		if (!rp->frame_count)
			continue;
		ac_builder_table(b, m->slots + rp->slot_first, rp->slot_count);
		for (uint64_t f = 0; f < rp->frame_count; f++)
			ac_builder_frame(b, m->frame_values +
					 rp->frame_value_first +
					 f * rp->slot_count, rp->slot_count);
	}
	for (uint64_t i = 0; i < m->n_refs; i++)
		ac_builder_ref(b, m->refs[i].first, m->refs[i].count);
	return b;
}

/* m rebuilt both ways is m, value for value, run for run. */
static void expect_rebuilt(const struct ac_model *m)
{
	for (int columnar = 0; columnar < 2; columnar++) {
		struct ac_error err;
		ac_builder *b = build_from(m, columnar);
		struct ac_model *built = ac_builder_finish(b, &err);
		ck_assert_msg(built, "%s: %s", err.where, err.message);
		ac_builder_free(b);
		util_expect_same_model(m, built);
		/* the words the model holds are counted as its own */
		ck_assert_uint_ge(ac_model_footprint(built),
				  built->n_words * sizeof(uint64_t));
		ac_model_free(built);
	}
}

START_TEST(examples_as_the_json_reader)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/examples/%s.json", AG_SPEC_DIR,
		 examples[_i]);
	size_t len = 0, a_len = 0, b_len = 0;
	char *text = util_read_file(path, &len);
	ck_assert_ptr_nonnull(text);
	struct ac_model *m = util_read_json_ok(text, len);
	expect_rebuilt(m);
	struct ac_error err;
	ac_builder *b = build_from(m, 1);
	struct ac_model *built = ac_builder_finish(b, &err);
	ck_assert_ptr_nonnull(built);
	char *want = ac_certify_json(text, len, &a_len, &err);
	char *got = ac_certify_model_json(built, &b_len, &err);
	ck_assert_ptr_nonnull(want);
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, want);
	ck_assert_uint_eq(a_len, b_len);
	free(want);
	free(got);
	ac_model_free(built);
	ac_builder_free(b);
	ac_model_free(m);
	free(text);
}
END_TEST

/* Random programs, repeats and tables among them (gen.c, fixed seeds). */
START_TEST(random_programs_as_built)
{
	struct gen_rng rng;
	gen_rng_seed(&rng, 0xb0177 + (uint64_t)_i);
	for (int k = 0; k < 50; k++) {
		struct ac_model *m = gen_model(&rng);
		expect_rebuilt(m);
		gen_model_free(m);
	}
}
END_TEST

/* Launches by phase (JSON's "phase") get its field-51 message, as the
 * reader gives them; shared identity entries are held once. */
START_TEST(phase_identity_is_field_51)
{
	const char *json = "{\"alignment\": 64, \"windows\": [{\"base\": "
		"4096, \"size\": 4096}], \"phases\": [{\"identity\": \"P\", "
		"\"planes\": [{\"name\": \"a\", \"offset\": 4096, \"size\": "
		"64, \"carried\": false}]}], \"launches\": [{\"phase\": \"P\", "
		"\"words\": [4096]}, {\"phase\": \"P\", \"words\": [4100, "
		"4104]}], \"schedule\": [{\"first\": 0, \"count\": 2}]}";
	struct ac_model *m = util_model_json(json);
	ac_builder *b = ac_builder_new(64);
	uint32_t id = 9;
	const uint64_t words[] = { 4096, 4100, 4104 };
	const uint32_t ids[] = { 0, 0 }, counts[] = { 1, 2 };
	ac_builder_window(b, "", 0, 4096, 4096);
	ac_builder_phase(b, "P", 1);
	ac_builder_plane(b, "a", 1, 4096, 64, 0);
	ck_assert_int_eq(ac_builder_identity(b, AC_IDENTITY_PHASE, "P", 1,
					     &id), 0);
	ck_assert_uint_eq(id, 0);
	ck_assert_int_eq(ac_builder_launches(b, 2, ids, counts, words, 3), 0);
	ac_builder_ref(b, 0, 2);
	struct ac_error err;
	struct ac_model *built = ac_builder_finish(b, &err);
	ck_assert_ptr_nonnull(built);
	util_expect_same_model(m, built);
	ck_assert_ptr_eq(built->launches[0].identity.data,
			 built->launches[1].identity.data);
	ck_assert_uint_eq(util_verdict_model(built, &err), 0);
	ac_model_free(built);
	ac_builder_free(b);
	ac_model_free(m);
}
END_TEST

/* The first error is the one reported, at its entry; later calls do
 * nothing; no model.  json: the same plan as JSON text, whose reader
 * must give the same error (NULL: the builder's alone). */
static void expect_error(ac_builder *b, const char *where,
			 const char *message, const char *json)
{
	struct ac_error err;
	struct ac_model *m = NULL;
	ck_assert_int_eq(ac_builder_ref(b, 0, 0), -1);   /* sticky */
	ck_assert_ptr_null(ac_builder_finish(b, &err));
	ck_assert_str_eq(err.where, where);
	ck_assert_str_eq(err.message, message);
	ac_builder_free(b);
	if (!json)
		return;
	ck_assert_int_eq(ac_model_read_json(json, strlen(json), &m, &err), -1);
	ck_assert_str_eq(err.where, where);
	ck_assert_str_eq(err.message, message);
}

/* A builder with one repeat whose table has n_slots slots, no frame. */
static ac_builder *with_table(uint64_t n_slots)
{
	static const struct ac_slot slot = { 0, 0 };
	ac_builder *b = ac_builder_new(64);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(ac_builder_repeat(b, 0, 1, 2), 0);
	ck_assert_int_eq(ac_builder_table(b, n_slots ? &slot : NULL,
					  n_slots), 0);
	return b;
}

#define REPEAT_JSON(table) "{\"alignment\": 64, \"repeats\": [{\"first\": " \
	"0, \"count\": 1, \"iterations\": 2, \"table\": " table "}]}"

START_TEST(errors_name_the_entry)
{
	const uint64_t values[] = { 1, 2 };
	struct ac_error err;
	uint32_t id;

	/* a frame of the wrong length */
	ac_builder *b = with_table(1);
	ck_assert_int_eq(ac_builder_frame(b, values, 1), 0);
	ck_assert_int_eq(ac_builder_frame(b, values, 2), -1);
	expect_error(b, "repeats[0].table.frames[1]",
		     "2 values; expected one per slot (1)",
		     REPEAT_JSON("{\"slots\": [{\"launch\": 0, \"word\": 0}], "
				 "\"frames\": [[1], [1, 2]]}"));

	/* a table without a frame, found by the next call */
	b = with_table(1);
	ck_assert_int_eq(ac_builder_repeat(b, 0, 1, 2), -1);
	expect_error(b, "repeats[0].table.frames",
		     "a table needs at least one frame",
		     REPEAT_JSON("{\"slots\": [], \"frames\": []}"));

	/* ... or by ac_builder_finish */
	b = with_table(0);
	ck_assert_ptr_null(ac_builder_finish(b, &err));
	ck_assert_str_eq(err.where, "repeats[0].table.frames");
	ac_builder_free(b);

	/* columnar: counts that do not sum to the words */
	b = ac_builder_new(64);
	ac_builder_identity(b, AC_IDENTITY_PHASE, "P", 1, &id);
	const uint32_t ids[] = { 0, 0 }, counts[] = { 1, 2 };
	ck_assert_int_eq(ac_builder_launches(b, 2, ids, counts, values, 2), -1);
	expect_error(b, "launches",
		     "the word counts sum to 3, but 2 words are given", NULL);

	/* an identity index past the table, at its launch */
	b = ac_builder_new(64);
	ac_builder_identity(b, AC_IDENTITY_RAW, "", 0, &id);
	ac_builder_launch(b, 0, values, 2);
	ck_assert_int_eq(ac_builder_launch(b, 1, values, 2), -1);
	expect_error(b, "launches[1]", "names no entry of the identity table",
		     NULL);

	/* a plane with no phase */
	b = ac_builder_new(64);
	ck_assert_int_eq(ac_builder_plane(b, "a", 1, 0, 64, 0), -1);
	expect_error(b, "phases", "a plane given before any phase", NULL);

	/* what makes the model malformed is the library's to say, after
	 * the builder: the same paths */
	b = ac_builder_new(64);
	ac_builder_ref(b, 5, 1);
	struct ac_model *m = ac_builder_finish(b, &err);
	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_null(ac_certify_model_json(m, NULL, &err));
	ck_assert_str_eq(err.where, "schedule[0]");
	ac_model_free(m);
	ac_builder_free(b);
}
END_TEST

/* After ac_builder_finish the model holds the builder's words: a later
 * call must not build on them.  A second finish gave a model whose
 * launches named words it no longer had (n_words 0, word_count 2: the
 * JSON writer read past them). */
START_TEST(calls_after_finish_fail)
{
	const uint64_t words[] = { 7, 8 };
	struct ac_error err;
	uint32_t id;
	ac_builder *b = ac_builder_new(64);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(ac_builder_identity(b, AC_IDENTITY_PHASE, "P", 1,
					     &id), 0);
	ck_assert_int_eq(ac_builder_launch(b, id, words, 2), 0);
	struct ac_model *m = ac_builder_finish(b, &err);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(m->n_words, 2);
	ck_assert_int_eq(ac_builder_launch(b, id, words, 1), -1);
	ck_assert_int_eq(ac_builder_ref(b, 0, 1), -1);
	struct ac_model *again = ac_builder_finish(b, &err);
	if (again) {
		/* what the old builder returned: check it before freeing */
		ck_assert_uint_ge(again->n_words,
				  (uint64_t)again->launches[0].word_first +
				  again->launches[0].word_count);
		ac_model_free(again);
	}
	ck_assert_ptr_null(again);
	ck_assert_str_eq(err.where, "");
	ck_assert_str_eq(err.message, "the builder has finished its model; "
			 "it may only be freed");
	/* the first model is whole */
	ck_assert_uint_eq(m->words[m->launches[0].word_first + 1], 8);
	ac_model_free(m);
	ac_builder_free(b);
}
END_TEST

/* A table of more than 2^32-1 slots, refused before a slot is read, as
 * the JSON reader refuses one (read_slots' check_count32): its path and
 * wording, not "repeats: more than 2^32-1 slots in a table". */
START_TEST(huge_table_as_the_json_reader)
{
	static const struct ac_slot slot = { 0, 0 };
	ac_builder *b = ac_builder_new(64);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(ac_builder_repeat(b, 0, 1, 2), 0);
	ck_assert_int_eq(ac_builder_repeat(b, 0, 1, 2), 0);
	ck_assert_int_eq(ac_builder_table(b, &slot, (uint64_t)1 << 32), -1);
	expect_error(b, "repeats[1].table.slots",
		     "4294967296 entries; at most 2^32-1", NULL);
}
END_TEST

Suite *suite_builder(void)
{
	Suite *s = suite_create("builder");
	TCase *tc = tcase_create("builder");
	tcase_add_loop_test(tc, examples_as_the_json_reader, 0,
			    sizeof(examples) / sizeof(examples[0]));
	tcase_add_loop_test(tc, random_programs_as_built, 0, 4);
	tcase_add_test(tc, phase_identity_is_field_51);
	tcase_add_test(tc, errors_name_the_entry);
	tcase_add_test(tc, calls_after_finish_fail);
	tcase_add_test(tc, huge_table_as_the_json_reader);
	suite_add_tcase(s, tc);
	return s;
}
