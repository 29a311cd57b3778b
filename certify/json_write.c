/* SPDX-License-Identifier: MIT */
/*
 * Model -> JSON interchange format (shared/spec/program-json.md).
 *
 * The output is deterministic and shaped like the spec's example: keys in
 * its order, one-space indentation, a trailing newline.  Reading it back
 * gives an identical model: every number keeps all 64 bits (integers only
 * up to 2^53, strings beyond), every name and identity keeps its bytes
 * (text when it is valid UTF-8, hex otherwise).
 *
 * A model built by hand may hold runs (first, count) that leave their
 * arrays; those are refused before anything is read through them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "identity.h"
#include "internal.h"
#include "json_text.h"

#define FORMAT_NAME "arena-program/1"
#define EXACT_MAX ((uint64_t)1 << 53)
#define PATH_LEN sizeof(((struct ac_error *)0)->where)

/*
 * A table with no slots has no values to bound its frame count, and every
 * frame costs an empty array: 2^27 of them from a 504-byte image made a
 * 1.2 GB document.  Such frames mean nothing (no word reads them), so the
 * writer refuses more than a few thousand rather than exhaust memory.
 */
#define SLOTLESS_FRAMES_MAX 4096

/* ---- checking a hand-built model ------------------------------------ */

/* What JSON cannot hold, beyond the model's structure (structure.c):
 * slots need a table, and a table needs a frame; a table without slots
 * is written as its frames, at most SLOTLESS_FRAMES_MAX of them. */
static int check_model(const struct ac_model *m, struct ac_error *err)
{
	if (aci_model_check_structure(m, 1, NULL, err))
		return -1;
	for (uint64_t i = 0; i < m->n_repeats; i++) {
		const struct ac_repeat *rp = &m->repeats[i];
		char where[PATH_LEN];
		snprintf(where, sizeof(where), "repeats[%" PRIu64 "]", i);
		if (rp->slot_count && !rp->frame_count)
			return aci_fail(err, where, "%" PRIu32 " slots but no "
					"frames: JSON has no table without "
					"frames", rp->slot_count);
		if (!rp->slot_count && rp->frame_count > SLOTLESS_FRAMES_MAX)
			return aci_fail(err, where, "%" PRIu64 " frames in a "
					"table without slots; at most 4096 can "
					"be written", rp->frame_count);
	}
	return 0;
}

/* ---- values --------------------------------------------------------- */

/* A size, count, index or iteration count: an integer while exact. */
static json_t *json_count(uint64_t v)
{
	char buf[24];
	if (v <= EXACT_MAX)
		return json_integer((json_int_t)v);
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return json_string(buf);
}

/* An address (base, offset, word, frame value): lowercase hex. */
static json_t *json_address(uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	return json_string(buf);
}

static json_t *json_delta(int64_t v)
{
	char buf[24];
	if (v <= (int64_t)EXACT_MAX && v >= -(int64_t)EXACT_MAX)
		return json_integer((json_int_t)v);
	snprintf(buf, sizeof(buf), "%" PRId64, v);
	return json_string(buf);
}

/*
 * Each container is created inside the set() that hands it to its parent:
 * jansson's *_set_new and *_append_new take the reference even when they
 * fail (and fail on a NULL value or parent), so nothing leaks when memory
 * runs out halfway and one decref of the root frees everything.
 */
static int set(json_t *obj, const char *key, json_t *v)
{
	return json_object_set_new(obj, key, v);
}

static int push(json_t *arr, json_t *v)
{
	return json_array_append_new(arr, v);
}

/* ---- the launch identity -------------------------------------------- */

/*
 * An identity that is exactly the canonical message holding only field
 * 51 (identity.h) is what the reader builds from `phase`/`phase_hex`, so
 * writing those keys gives back the same bytes.  Any other identity is
 * written raw.
 */
static int set_launch_identity(json_t *obj, const struct ac_bytes *id)
{
	const uint8_t *payload;
	uint64_t len;
	if (aci_identity_field51_only(id->data, id->len, &payload, &len))
		return aci_json_set_bytes(obj, "phase", "phase_hex", payload,
				 (uint32_t)len);
	return set(obj, "identity_hex", aci_json_hex_bytes(id->data, id->len));
}

/* ---- the tables ----------------------------------------------------- */

static json_t *window_json(const struct ac_window *w)
{
	json_t *o = json_object();
	if (!o || (w->name.len && aci_json_set_bytes(o, "name", "name_hex",
					    w->name.data, w->name.len)) ||
	    set(o, "base", json_address(w->base)) ||
	    set(o, "size", json_count(w->size))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* A global (with_carried 0) or a plane. */
static json_t *tensor_json(const struct ac_tensor *t, int with_carried)
{
	json_t *o = json_object();
	if (!o || aci_json_set_bytes(o, "name", "name_hex", t->name.data, t->name.len) ||
	    set(o, "offset", json_address(t->offset)) ||
	    set(o, "size", json_count(t->size)) ||
	    (with_carried && set(o, "carried", json_boolean(t->carried)))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *phase_json(const struct ac_model *m, const struct ac_phase *p)
{
	json_t *o = json_object(), *planes = NULL;
	if (!o || aci_json_set_bytes(o, "identity", "identity_hex", p->identity.data,
			    p->identity.len) ||
	    set(o, "planes", planes = json_array()))
		goto fail;
	for (uint32_t i = 0; i < p->plane_count; i++) {
		const struct ac_tensor *t = &m->planes[p->plane_first + i];
		if (push(planes, tensor_json(t, 1)))
			goto fail;
	}
	return o;
fail:
	json_decref(o);
	return NULL;
}

static json_t *launch_json(const struct ac_model *m, const struct ac_launch *l)
{
	json_t *o = json_object(), *words = NULL;
	if (!o || set_launch_identity(o, &l->identity) ||
	    set(o, "words", words = json_array()))
		goto fail;
	for (uint32_t i = 0; i < l->word_count; i++)
		if (push(words, json_address(m->words[l->word_first + i])))
			goto fail;
	return o;
fail:
	json_decref(o);
	return NULL;
}

static json_t *delta_json(const struct ac_delta *d)
{
	json_t *o = json_object();
	if (!o || set(o, "launch", json_count(d->launch)) ||
	    set(o, "word", json_count(d->word)) ||
	    set(o, "delta", json_delta(d->delta))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *slot_json(const struct ac_slot *s)
{
	json_t *o = json_object();
	if (!o || set(o, "launch", json_count(s->launch)) ||
	    set(o, "word", json_count(s->word))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Frame f of a table: one value per slot. */
static json_t *frame_json(const struct ac_model *m, const struct ac_repeat *rp,
			  uint64_t f)
{
	json_t *a = json_array();
	for (uint32_t s = 0; a && s < rp->slot_count; s++) {
		uint64_t at = rp->frame_value_first + f * rp->slot_count + s;
		if (push(a, json_address(m->frame_values[at]))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *table_json(const struct ac_model *m, const struct ac_repeat *rp)
{
	json_t *o = json_object(), *slots = NULL, *frames = NULL;
	if (!o || set(o, "slots", slots = json_array()) ||
	    set(o, "frames", frames = json_array()))
		goto fail;
	for (uint32_t s = 0; s < rp->slot_count; s++)
		if (push(slots, slot_json(&m->slots[rp->slot_first + s])))
			goto fail;
	for (uint64_t f = 0; f < rp->frame_count; f++)
		if (push(frames, frame_json(m, rp, f)))
			goto fail;
	return o;
fail:
	json_decref(o);
	return NULL;
}

static json_t *repeat_json(const struct ac_model *m, const struct ac_repeat *rp)
{
	json_t *o = json_object(), *deltas = NULL;
	if (!o || set(o, "first", json_count(rp->first)) ||
	    set(o, "count", json_count(rp->count)) ||
	    set(o, "iterations", json_count(rp->iterations)) ||
	    set(o, "deltas", deltas = json_array()))
		goto fail;
	for (uint32_t i = 0; i < rp->delta_count; i++)
		if (push(deltas, delta_json(&m->deltas[rp->delta_first + i])))
			goto fail;
	if (rp->frame_count && set(o, "table", table_json(m, rp)))
		goto fail;
	return o;
fail:
	json_decref(o);
	return NULL;
}

static json_t *ref_json(const struct ac_ref *ref)
{
	json_t *o = json_object();
	if (!o || set(o, "first", json_count(ref->first)) ||
	    set(o, "count", json_count(ref->count))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* ---- the program ---------------------------------------------------- */

/* Builds the whole tree; NULL only when memory runs out. */
static json_t *program_json(const struct ac_model *m)
{
	json_t *o = json_object();
	json_t *windows = NULL, *globals = NULL, *phases = NULL;
	json_t *launches = NULL, *repeats = NULL, *schedule = NULL;
	if (!o || set(o, "format", json_string(FORMAT_NAME)) ||
	    set(o, "alignment", json_count(m->alignment)) ||
	    set(o, "windows", windows = json_array()) ||
	    set(o, "globals", globals = json_array()) ||
	    set(o, "phases", phases = json_array()) ||
	    set(o, "launches", launches = json_array()) ||
	    (m->n_repeats && set(o, "repeats", repeats = json_array())) ||
	    set(o, "schedule", schedule = json_array()))
		goto fail;
	for (uint32_t i = 0; i < m->n_windows; i++)
		if (push(windows, window_json(&m->windows[i])))
			goto fail;
	for (uint32_t i = 0; i < m->n_globals; i++)
		if (push(globals, tensor_json(&m->globals[i], 0)))
			goto fail;
	for (uint32_t i = 0; i < m->n_phases; i++)
		if (push(phases, phase_json(m, &m->phases[i])))
			goto fail;
	for (uint32_t i = 0; i < m->n_launches; i++)
		if (push(launches, launch_json(m, &m->launches[i])))
			goto fail;
	for (uint32_t i = 0; i < m->n_repeats; i++)
		if (push(repeats, repeat_json(m, &m->repeats[i])))
			goto fail;
	for (uint64_t i = 0; i < m->n_refs; i++)
		if (push(schedule, ref_json(&m->refs[i])))
			goto fail;
	return o;
fail:
	json_decref(o);
	return NULL;
}

char *ac_model_write_json(const struct ac_model *model, size_t *len,
			  struct ac_error *err)
{
	if (check_model(model, err))
		return NULL;
	json_t *root = program_json(model);
	char *text = root ? json_dumps(root, JSON_INDENT(1) |
				       JSON_PRESERVE_ORDER) : NULL;
	json_decref(root);
	if (!text) {
		aci_fail(err, "", "out of memory writing JSON");
		return NULL;
	}
	/* Our own buffer, so callers free() it whatever jansson allocates
	 * with; and the trailing newline. */
	size_t n = strlen(text);
	char *out = malloc(n + 2);
	if (out) {
		memcpy(out, text, n);
		out[n] = '\n';
		out[n + 1] = 0;
		if (len)
			*len = n + 1;
	} else {
		aci_fail(err, "", "out of memory writing JSON");
	}
	json_free_t free_text;
	json_malloc_t unused;
	json_get_alloc_funcs(&unused, &free_text);
	free_text(text);
	return out;
}
