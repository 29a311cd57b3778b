/* SPDX-License-Identifier: MIT */
/*
 * result_json.c - a certification's result as JSON: the object
 * `arena-certify --json` prints for a file (shared/spec/program-json.md,
 * docs/arena-certify.1), and ac_certify_json, the one-shot entry point
 * that bindings (python/arenacert) call with the input's bytes.
 */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <arenaguard/certify.h>

#include "internal.h"
#include "json_text.h"
#include "result_json.h"

/* Sets key to the bytes as text, or key_hex to their hex if not UTF-8. */
static void put_bytes(json_t *obj, const char *key, struct ac_bytes b)
{
	char hkey[64];
	snprintf(hkey, sizeof(hkey), "%s_hex", key);
	json_set_bytes(obj, key, hkey, b.data, b.len);
}

/* An exact value high * 2^64 + low, which may leave [0, 2^64). */
static json_t *json_wide(struct ac_wide w)
{
	char buf[48];
	return json_string(ac_wide_text(w, buf, sizeof(buf)));
}

static void put_index(json_t *obj, const char *key, uint64_t v)
{
	if (v != AC_NONE && v <= (uint64_t)INT64_MAX)
		json_object_set_new(obj, key, json_integer((json_int_t)v));
}

/* A global or plane by index, with its name and place. */
static json_t *json_tensor(const struct ac_model *m, struct ac_tensor_ref r)
{
	json_t *o = json_object();
	const struct ac_tensor *t = model_tensor(m, r);
	if (r.phase == AC_NONE) {
		put_index(o, "global", r.index);
	} else {
		put_index(o, "phase", r.phase);
		put_index(o, "plane", r.index);
		if (r.phase < m->n_phases)
			put_bytes(o, "phase_identity",
				  m->phases[r.phase].identity);
	}
	if (t) {
		put_bytes(o, "name", t->name);
		json_object_set_new(o, "offset", json_hex_u64(t->offset));
		json_object_set_new(o, "size", json_hex_u64(t->size));
		if (r.phase != AC_NONE)
			json_object_set_new(o, "carried", json_boolean(t->carried));
	}
	return o;
}

static int names_tensor(struct ac_tensor_ref r)
{
	return r.index != AC_NONE;
}

static void put_word_fields(json_t *o, const struct ac_model *m,
			    const struct ac_diag *d)
{
	put_index(o, "word", d->word);
	json_object_set_new(o, "lo", json_wide(d->lo));
	json_object_set_new(o, "hi", json_wide(d->hi));
	put_index(o, "ordinal", d->ordinal);
	if (d->window != AC_NONE) {
		json_t *w = json_object();
		put_index(w, "index", d->window);
		if (d->window < m->n_windows) {
			const struct ac_window *win = &m->windows[d->window];
			if (win->name.len)
				put_bytes(w, "name", win->name);
			json_object_set_new(w, "base", json_hex_u64(win->base));
			json_object_set_new(w, "size", json_hex_u64(win->size));
		}
		json_object_set_new(o, "window", w);
	}
	json_t *near = json_array();
	for (int i = 0; i < 2; i++)
		if (names_tensor(d->near[i]))
			json_array_append_new(near, json_tensor(m, d->near[i]));
	json_object_set_new(o, "near", near);
}

static void put_instance_fields(json_t *o, const struct ac_model *m,
				const struct ac_diag *d)
{
	put_index(o, "instance", d->instance);
	put_index(o, "phase", d->phase);
	if (d->phase < m->n_phases)
		put_bytes(o, "phase_identity", m->phases[d->phase].identity);
	put_index(o, "start_launch", d->start_launch);
	put_index(o, "start_ordinal", d->start_ordinal);
	json_object_set_new(o, "plane", json_tensor(m, d->tensor[0]));
	if (d->reason == AC_CARRIED_OVERWRITTEN) {
		put_index(o, "earlier", d->earlier);
		put_index(o, "intervening", d->intervening);
		json_object_set_new(o, "overwriter", json_tensor(m, d->tensor[1]));
	}
}

/* The keys after "verdict": condition, reason and what the reason names. */
static json_t *json_diag(const struct ac_model *m, const struct ac_diag *d)
{
	json_t *o = json_object();
	json_object_set_new(o, "condition",
			    json_string(ac_condition_name(d->condition)));
	json_object_set_new(o, "reason", json_string(ac_reason_name(d->reason)));
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
		json_t *ts = json_array();
		int two = d->reason == AC_GLOBALS_OVERLAP ||
			  d->reason == AC_PLANES_OVERLAP ||
			  d->reason == AC_PLANE_OVERLAPS_GLOBAL;
		for (int i = 0; i < 1 + two; i++)
			json_array_append_new(ts, json_tensor(m, d->tensor[i]));
		json_object_set_new(o, "tensors", ts);
		break;
	}
	case AC_LAUNCH_NO_PHASE:
		put_index(o, "launch", d->launch);
		json_object_set_new(o, "identity_problem",
			json_string(ac_identity_problem_name(d->identity_problem)));
		if (d->identity_problem == AC_ID_UNPARSABLE)
			put_index(o, "identity_offset", d->identity_offset);
		break;
	case AC_WORD_UNNAMED:
		put_index(o, "launch", d->launch);
		put_word_fields(o, m, d);
		break;
	case AC_CARRIED_UNDECLARED:
	case AC_CARRIED_OVERWRITTEN:
		put_instance_fields(o, m, d);
		break;
	}
	return o;
}

/* [{"kind", "tensor": {...}, "outside": "0x...", "explanation"}...] */
static json_t *json_advisories(const ac_program *program,
			       const struct ac_advisory *list, uint64_t n,
			       int explain)
{
	const struct ac_model *m = ac_program_model(program);
	json_t *out = json_array();
	for (uint64_t i = 0; i < n; i++) {
		const struct ac_advisory *a = &list[i];
		json_t *o = json_object();
		json_object_set_new(o, "kind",
				    json_string(ac_advisory_kind_name(a->kind)));
		json_object_set_new(o, "tensor", json_tensor(m, a->tensor));
		json_object_set_new(o, "outside", json_hex_u64(a->outside));
		if (explain) {
			char text[1024];
			ac_advisory_render(a, program, text, sizeof(text));
			json_object_set_new(o, "explanation",
					    json_text(text, strlen(text)));
		}
		json_array_append_new(out, o);
	}
	return out;
}

void result_explain(char *text, size_t len, uint64_t verdict,
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

json_t *result_json_fields(const ac_program *program,
			   const struct ac_diag *diag, const char *explanation,
			   const struct ac_advisory *advisories,
			   uint64_t n_advisories, int explain_advisories)
{
	json_t *rest = json_diag(ac_program_model(program), diag);
	if (explanation && explanation[0])
		json_object_set_new(rest, "explanation",
				    json_text(explanation, strlen(explanation)));
	json_object_set_new(rest, "advisories",
			    json_advisories(program, advisories, n_advisories,
					    explain_advisories));
	return rest;
}

char *result_json_line(const char *file, const uint64_t *verdict,
		       json_t *rest, size_t *len)
{
	json_t *jf = file ? json_text(file, strlen(file)) : NULL;
	char *f = jf ? json_dumps(jf, JSON_ENCODE_ANY) : NULL;
	char *r = rest ? json_dumps(rest, 0) : NULL;
	json_decref(jf);
	json_decref(rest);
	char *line = NULL;
	if (r && (f || !file)) {
		/* The verdict is an unsigned 64-bit integer and json_integer
		 * holds only signed 64 bits, so it is printed here, exactly,
		 * and spliced in.  r is "{}" or "{...}": its opening brace
		 * goes. */
		char v[24] = "null";
		if (verdict)
			snprintf(v, sizeof(v), "%" PRIu64, *verdict);
		size_t n = strlen(r) + (f ? strlen(f) : 0) + sizeof(v) + 32;
		line = malloc(n);
		if (line) {
			int w = snprintf(line, n, "{%s%s%s\"verdict\": %s%s%s",
					 f ? "\"file\": " : "", f ? f : "",
					 f ? ", " : "", v,
					 r[1] == '}' ? "" : ", ", r + 1);
			assert(w > 0 && (size_t)w < n);
			if (len)
				*len = (size_t)w;
		}
	}
	free(f);
	free(r);
	return line;
}

char *ac_certify_json(const void *data, size_t len, size_t *out_len,
		      struct ac_error *err)
{
	struct ac_model *model = NULL;
	ac_program *program = NULL;
	ac_schedule *schedule = NULL;
	struct ac_advisory *adv = NULL;
	uint64_t n_adv = 0;
	char *line = NULL, *text = NULL;

	/* the model may point into data, which outlives it here */
	if (ac_model_view(data, len, &model, err) != 0)
		goto done;
	program = ac_program_new(model, err);
	if (!program)
		goto done;
	schedule = ac_schedule_new(program);
	text = malloc(RESULT_TEXT_LEN);
	if (!schedule || !text) {
		ac_fail(err, "", "out of memory");
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
	result_explain(text, RESULT_TEXT_LEN, verdict, &diag, program,
		       ac_schedule_executed(schedule));
	json_t *rest = result_json_fields(program, &diag, text, adv, n_adv, 1);
	line = result_json_line(NULL, &verdict, rest, out_len);
	if (!line)
		ac_fail(err, "", "out of memory");
done:
	free(text);
	free(adv);
	ac_schedule_free(schedule);
	ac_program_free(program);
	ac_model_free(model);
	return line;
}
