/* SPDX-License-Identifier: MIT */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

char *util_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			char *nb = realloc(buf, 2 * cap + 1);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	fclose(f);
	if (buf) {
		buf[n] = 0;
		if (len)
			*len = n;
	}
	return buf;
}

struct ac_model *util_read_json_ok(const char *text, size_t len)
{
	struct ac_model *m = NULL;
	struct ac_error err;
	char buf[512];
	ck_assert_msg(ac_model_read_json(text, len, &m, &err) == 0,
		      "JSON did not read: %s",
		      ac_error_text(&err, buf, sizeof(buf)));
	ck_assert_ptr_nonnull(m);
	return m;
}

struct ac_model *util_model_json(const char *json)
{
	return util_read_json_ok(json, strlen(json));
}

char *util_write_json_ok(const struct ac_model *m, size_t *len)
{
	struct ac_error err;
	char buf[512];
	char *text = ac_model_write_json(m, len, &err);
	ck_assert_msg(text, "JSON write failed: %s",
		      ac_error_text(&err, buf, sizeof(buf)));
	ck_assert_uint_eq(strlen(text), *len);
	return text;
}

uint64_t util_verdict_model(const struct ac_model *m, struct ac_error *err)
{
	uint64_t verdict;
	if (ac_certify(m, &verdict, NULL, err) != 0)
		return AC_NONE;
	return verdict;
}

uint64_t util_verdict_json(const char *json, struct ac_error *err)
{
	struct ac_model *m = NULL;
	if (ac_model_read_json(json, strlen(json), &m, err) != 0)
		return AC_NONE;
	uint64_t v = util_verdict_model(m, err);
	ac_model_free(m);
	return v;
}

static int bytes_eq(struct ac_bytes a, struct ac_bytes b)
{
	return a.len == b.len && (!a.len || memcmp(a.data, b.data, a.len) == 0);
}

#define SAME(field, i) \
	ck_assert_msg(a->field == b->field, "%s differs at %" PRIu64, \
		      #field, (uint64_t)(i))
#define SAME_BYTES(field, i) \
	ck_assert_msg(bytes_eq(a->field, b->field), "%s differs at %" PRIu64, \
		      #field, (uint64_t)(i))

/* The contents of two models: every value, every byte of every string. */
void util_expect_same_content(const struct ac_model *a,
				const struct ac_model *b)
{
	SAME(alignment, 0);
	SAME(n_windows, 0); SAME(n_globals, 0); SAME(n_phases, 0);
	SAME(n_planes, 0); SAME(n_launches, 0); SAME(n_repeats, 0);
	SAME(n_deltas, 0); SAME(n_slots, 0); SAME(n_words, 0);
	SAME(n_frame_values, 0); SAME(n_refs, 0);
	for (uint64_t i = 0; i < a->n_windows; i++) {
		SAME_BYTES(windows[i].name, i);
		SAME(windows[i].base, i);
		SAME(windows[i].size, i);
	}
	for (uint64_t i = 0; i < a->n_globals; i++) {
		SAME_BYTES(globals[i].name, i);
		SAME(globals[i].offset, i);
		SAME(globals[i].size, i);
	}
	for (uint64_t i = 0; i < a->n_planes; i++) {
		SAME_BYTES(planes[i].name, i);
		SAME(planes[i].offset, i);
		SAME(planes[i].size, i);
		SAME(planes[i].carried, i);
	}
	for (uint64_t i = 0; i < a->n_phases; i++) {
		SAME_BYTES(phases[i].identity, i);
		SAME(phases[i].plane_count, i);
	}
	for (uint64_t i = 0; i < a->n_launches; i++) {
		SAME_BYTES(launches[i].identity, i);
		SAME(launches[i].word_count, i);
	}
	/* one memcmp first: images hold millions of words */
	if (a->n_words && memcmp(a->words, b->words, a->n_words * 8) != 0)
		for (uint64_t i = 0; i < a->n_words; i++)
			SAME(words[i], i);
	for (uint64_t i = 0; i < a->n_repeats; i++) {
		SAME(repeats[i].first, i);
		SAME(repeats[i].count, i);
		SAME(repeats[i].iterations, i);
		SAME(repeats[i].delta_count, i);
		SAME(repeats[i].frame_count, i);
		if (a->repeats[i].frame_count)
			SAME(repeats[i].slot_count, i);
	}
	for (uint64_t i = 0; i < a->n_deltas; i++) {
		SAME(deltas[i].launch, i);
		SAME(deltas[i].word, i);
		SAME(deltas[i].delta, i);
	}
	for (uint64_t i = 0; i < a->n_slots; i++) {
		SAME(slots[i].launch, i);
		SAME(slots[i].word, i);
	}
	for (uint64_t i = 0; i < a->n_frame_values; i++)
		SAME(frame_values[i], i);
	for (uint64_t i = 0; i < a->n_refs; i++) {
		SAME(refs[i].first, i);
		SAME(refs[i].count, i);
	}
}

/* Field by field, including where each flattened run starts. */
void util_expect_same_model(const struct ac_model *a,
			      const struct ac_model *b)
{
	util_expect_same_content(a, b);
	for (uint64_t i = 0; i < a->n_phases; i++)
		SAME(phases[i].plane_first, i);
	for (uint64_t i = 0; i < a->n_launches; i++)
		SAME(launches[i].word_first, i);
	for (uint64_t i = 0; i < a->n_repeats; i++) {
		SAME(repeats[i].delta_first, i);
		SAME(repeats[i].slot_first, i);
		SAME(repeats[i].slot_count, i);
		SAME(repeats[i].frame_value_first, i);
	}
}

void util_put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static int same_ref(struct ac_tensor_ref a, struct ac_tensor_ref b)
{
	return a.phase == b.phase && a.index == b.index;
}

/* Every field of two diagnostics. */
int util_same_diag(const struct ac_diag *a, const struct ac_diag *b)
{
	return a->verdict == b->verdict && a->condition == b->condition &&
	       a->reason == b->reason && same_ref(a->tensor[0], b->tensor[0]) &&
	       same_ref(a->tensor[1], b->tensor[1]) && a->launch == b->launch &&
	       a->word == b->word && a->identity_problem == b->identity_problem &&
	       a->identity_offset == b->identity_offset &&
	       a->lo.high == b->lo.high && a->lo.low == b->lo.low &&
	       a->hi.high == b->hi.high && a->hi.low == b->hi.low &&
	       a->ordinal == b->ordinal && a->window == b->window &&
	       same_ref(a->near[0], b->near[0]) &&
	       same_ref(a->near[1], b->near[1]) && a->instance == b->instance &&
	       a->phase == b->phase && a->start_launch == b->start_launch &&
	       a->start_ordinal == b->start_ordinal &&
	       a->earlier == b->earlier && a->earlier_phase == b->earlier_phase &&
	       a->intervening == b->intervening;
}
