/* SPDX-License-Identifier: MIT */
/*
 * result_json.c - a certification's result as JSON: the object
 * `arena-certify --json` prints for a file (shared/spec/program-json.md,
 * docs/arena-certify.1), and ac_certify_model_json, the one-shot entry
 * point that bindings (python/arenacert) call with a model they built
 * (arenaguard/builder.h); ac_certify_json, which takes the input's bytes,
 * is format.c's.  Written
 * with json_out.h, libarenacert's own writer, never jansson: the guard
 * writes its records with these, in processes whose jansson may have an
 * allocator of the application's.
 */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arenaguard/certify.h>

#include "internal.h"
#include "json_out.h"
#include "result_json.h"

/* key: the bytes as text, or key_hex: their hex if not UTF-8. */
static void put_bytes(struct json_out *j, const char *key, struct ac_bytes b)
{
	char hkey[64];
	snprintf(hkey, sizeof(hkey), "%s_hex", key);
	aci_json_out_bytes(j, key, hkey, b.data, b.len);
}

/* An exact value high * 2^64 + low, which may leave [0, 2^64). */
static void put_wide(struct json_out *j, const char *key, struct ac_wide w)
{
	char buf[48];
	aci_json_out_key(j, key);
	aci_json_out_string(j, ac_wide_text(w, buf, sizeof(buf)));
}

static void put_index(struct json_out *j, const char *key, uint64_t v)
{
	if (v != AC_NONE && v <= (uint64_t)INT64_MAX) {
		aci_json_out_key(j, key);
		aci_json_out_int(j, (int64_t)v);
	}
}

static void put_hex(struct json_out *j, const char *key, uint64_t v)
{
	aci_json_out_key(j, key);
	aci_json_out_hex_u64(j, v);
}

/* A global or plane by index, with its name and place: an object. */
static void put_tensor(struct json_out *j, const struct ac_model *m,
		       struct ac_tensor_ref r)
{
	const struct ac_tensor *t = aci_model_tensor(m, r);
	aci_json_out_object(j);
	if (r.phase == AC_NONE) {
		put_index(j, "global", r.index);
	} else {
		put_index(j, "phase", r.phase);
		put_index(j, "plane", r.index);
		if (r.phase < m->n_phases)
			put_bytes(j, "phase_identity",
				  m->phases[r.phase].identity);
	}
	if (t) {
		put_bytes(j, "name", t->name);
		put_hex(j, "offset", t->offset);
		put_hex(j, "size", t->size);
		if (r.phase != AC_NONE) {
			aci_json_out_key(j, "carried");
			aci_json_out_bool(j, t->carried);
		}
	}
	aci_json_out_end(j);
}

static int names_tensor(struct ac_tensor_ref r)
{
	return r.index != AC_NONE;
}

static void put_word_fields(struct json_out *j, const struct ac_model *m,
			    const struct ac_diag *d)
{
	put_index(j, "word", d->word);
	put_wide(j, "lo", d->lo);
	put_wide(j, "hi", d->hi);
	put_index(j, "ordinal", d->ordinal);
	if (d->window != AC_NONE) {
		aci_json_out_key(j, "window");
		aci_json_out_object(j);
		put_index(j, "index", d->window);
		if (d->window < m->n_windows) {
			const struct ac_window *win = &m->windows[d->window];
			if (win->name.len)
				put_bytes(j, "name", win->name);
			put_hex(j, "base", win->base);
			put_hex(j, "size", win->size);
		}
		aci_json_out_end(j);
	}
	aci_json_out_key(j, "near");
	aci_json_out_array(j);
	for (int i = 0; i < 2; i++)
		if (names_tensor(d->near[i]))
			put_tensor(j, m, d->near[i]);
	aci_json_out_end(j);
}

static void put_instance_fields(struct json_out *j, const struct ac_model *m,
				const struct ac_diag *d)
{
	put_index(j, "instance", d->instance);
	put_index(j, "phase", d->phase);
	if (d->phase < m->n_phases)
		put_bytes(j, "phase_identity", m->phases[d->phase].identity);
	put_index(j, "start_launch", d->start_launch);
	put_index(j, "start_ordinal", d->start_ordinal);
	aci_json_out_key(j, "plane");
	put_tensor(j, m, d->tensor[0]);
	if (d->reason == AC_CARRIED_OVERWRITTEN) {
		put_index(j, "earlier", d->earlier);
		put_index(j, "intervening", d->intervening);
		aci_json_out_key(j, "overwriter");
		put_tensor(j, m, d->tensor[1]);
	}
}

/* The keys after "verdict": condition, reason and what the reason names. */
static void put_diag(struct json_out *j, const struct ac_model *m,
		     const struct ac_diag *d)
{
	aci_json_out_string_at(j, "condition", ac_condition_name(d->condition));
	aci_json_out_string_at(j, "reason", ac_reason_name(d->reason));
	switch (d->reason) {
	case AC_OK:
		break;
	case AC_GLOBAL_MISALIGNED:
	case AC_GLOBAL_EMPTY:
	case AC_PLANE_MISALIGNED:
	case AC_PLANE_EMPTY:
	case AC_GLOBALS_OVERLAP:
	case AC_PLANES_OVERLAP:
	case AC_PLANE_OVERLAPS_GLOBAL: {
		int two = d->reason == AC_GLOBALS_OVERLAP ||
			  d->reason == AC_PLANES_OVERLAP ||
			  d->reason == AC_PLANE_OVERLAPS_GLOBAL;
		aci_json_out_key(j, "tensors");
		aci_json_out_array(j);
		for (int i = 0; i < 1 + two; i++)
			put_tensor(j, m, d->tensor[i]);
		aci_json_out_end(j);
		break;
	}
	case AC_LAUNCH_NO_PHASE:
		put_index(j, "launch", d->launch);
		aci_json_out_string_at(j, "identity_problem",
			ac_identity_problem_name(d->identity_problem));
		if (d->identity_problem == AC_ID_UNPARSABLE)
			put_index(j, "identity_offset", d->identity_offset);
		break;
	case AC_WORD_UNNAMED:
		put_index(j, "launch", d->launch);
		put_word_fields(j, m, d);
		break;
	case AC_CARRIED_UNDECLARED:
	case AC_CARRIED_OVERWRITTEN:
		put_instance_fields(j, m, d);
		break;
	}
}

/* [{"kind", "tensor": {...}, "outside": "0x...", "explanation"}...] */
static void put_advisories(struct json_out *j, const ac_program *program,
			   const struct ac_advisory *list, uint64_t n,
			   int explain)
{
	const struct ac_model *m = ac_program_model(program);
	aci_json_out_array(j);
	for (uint64_t i = 0; i < n; i++) {
		const struct ac_advisory *a = &list[i];
		aci_json_out_object(j);
		aci_json_out_string_at(j, "kind", ac_advisory_kind_name(a->kind));
		aci_json_out_key(j, "tensor");
		put_tensor(j, m, a->tensor);
		put_hex(j, "outside", a->outside);
		if (explain) {
			char text[1024];
			ac_advisory_render(a, program, text, sizeof(text));
			aci_json_out_string_at(j, "explanation", text);
		}
		aci_json_out_end(j);
	}
	aci_json_out_end(j);
}

void aci_result_explain(char *text, size_t len, uint64_t verdict,
			const struct ac_diag *diag, const ac_program *program,
			uint64_t executed)
{
	assert(text && len > 0);
	if (verdict == 0)
		snprintf(text, len,
			 "certified: conditions (A), (B), (C) and (D) hold over "
			 "%" PRIu64 " executed launches", executed);
	else
		ac_diag_render(diag, program, text, len);
}

void aci_result_json_begin(struct json_out *j, const char *file,
			   const uint64_t *verdict)
{
	assert(j->depth == 0);
	aci_json_out_object(j);
	if (file)
		aci_json_out_string_at(j, "file", file);
	aci_json_out_key(j, "verdict");
	if (verdict)
		aci_json_out_uint(j, *verdict);
	else
		aci_json_out_null(j);
}

void aci_result_json_fields(struct json_out *j, const ac_program *program,
			    const struct ac_diag *diag, const char *explanation,
			    const struct ac_advisory *advisories,
			    uint64_t n_advisories, int explain_advisories)
{
	put_diag(j, ac_program_model(program), diag);
	if (explanation && explanation[0])
		aci_json_out_string_at(j, "explanation", explanation);
	aci_json_out_key(j, "advisories");
	put_advisories(j, program, advisories, n_advisories,
		       explain_advisories);
}

char *ac_certify_model_json(const struct ac_model *model, size_t *out_len,
			    struct ac_error *err)
{
	ac_program *program = NULL;
	ac_schedule *schedule = NULL;
	struct ac_advisory *adv = NULL;
	uint64_t n_adv = 0;
	char *line = NULL, *text = NULL;

	program = ac_program_new(model, err);
	if (!program)
		goto done;
	schedule = ac_schedule_new(program);
	text = malloc(RESULT_TEXT_LEN);
	if (!schedule || !text) {
		aci_fail(err, "", "out of memory");
		goto done;
	}
	if (ac_schedule_append(schedule, model->refs, (size_t)model->n_refs,
			       err) != 0)
		goto done;
	if (ac_program_advisories(program, &adv, &n_adv, err) != 0)
		goto done;
	struct ac_diag diag;
	memset(&diag, 0, sizeof(diag));
	uint64_t verdict = ac_schedule_verdict(schedule, &diag);
	aci_result_explain(text, RESULT_TEXT_LEN, verdict, &diag, program,
			   ac_schedule_executed(schedule));
	struct json_out j = JSON_OUT_INIT;
	aci_result_json_begin(&j, NULL, &verdict);
	aci_result_json_fields(&j, program, &diag, text, adv, n_adv, 1);
	aci_json_out_end(&j);
	line = aci_json_out_take(&j, 0, out_len);
	if (!line)
		aci_fail(err, "", "out of memory");
done:
	free(text);
	free(adv);
	ac_schedule_free(schedule);
	ac_program_free(program);
	return line;
}
