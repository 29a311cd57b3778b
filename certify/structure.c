/* SPDX-License-Identifier: MIT */
/*
 * The structure of a model, which the readers guarantee and a hand-built
 * model may not: every array its count says is there, every byte string
 * with a length has its bytes, and every run into a flat array (a
 * phase's planes, a launch's words, a repeat's deltas, slots and frame
 * values) lies inside it.  One check with one set of messages, for
 * ac_program_new (validate.c) and both writers; locations name the
 * model's own fields ("phases[1].plane_count").  What a format cannot
 * hold (the image's u32 totals, JSON's tables without frames) is each
 * writer's own.
 */
#include <assert.h>
#include <stdio.h>

#include "internal.h"

int aci_fail_entry(struct ac_error *err, const char *table, uint64_t i,
		      const char *field, const char *what)
{
	char where[96];
	snprintf(where, sizeof(where), "%s[%llu].%s", table,
		 (unsigned long long)i, field);
	return aci_fail(err, where, "%s", what);
}

int aci_check_array(const void *a, uint64_t n, const char *name,
		    struct ac_error *err)
{
	if (n && !a)
		return aci_fail(err, name, "array is NULL but its count is %llu",
				(unsigned long long)n);
	return 0;
}

static int check_arrays(const struct ac_model *m, int with_refs,
			struct ac_error *err)
{
	if (aci_check_array(m->windows, m->n_windows, "windows", err) ||
	    aci_check_array(m->globals, m->n_globals, "globals", err) ||
	    aci_check_array(m->phases, m->n_phases, "phases", err) ||
	    aci_check_array(m->planes, m->n_planes, "planes", err) ||
	    aci_check_array(m->launches, m->n_launches, "launches", err) ||
	    aci_check_array(m->words, m->n_words, "words", err) ||
	    aci_check_array(m->repeats, m->n_repeats, "repeats", err) ||
	    aci_check_array(m->deltas, m->n_deltas, "deltas", err) ||
	    aci_check_array(m->slots, m->n_slots, "slots", err) ||
	    aci_check_array(m->frame_values, m->n_frame_values, "frame_values",
			err) ||
	    (with_refs && aci_check_array(m->refs, m->n_refs, "refs", err)))
		return -1;
	return 0;
}

static int check_bytes(const struct ac_bytes *b, const char *table,
		       uint64_t i, const char *field, struct ac_error *err)
{
	if (b->len && !b->data)
		return aci_fail_entry(err, table, i, field,
				  "byte string has a length but no data");
	return 0;
}

/*
 * Whether every launch has its identity's bytes and its words inside the
 * model's: the launch table is most of a model, so one pass tests it (and
 * sums what the image's limits need into *s), and check_strings and
 * check_runs walk it only to say what is wrong.  No early exit: the pass
 * is branch-free, and a broken launch is the rare case.
 */
static int launches_fine(const struct ac_model *m, struct launch_sums *s)
{
	const struct ac_launch *la = m->launches;
	uint64_t words = 0, bytes = 0;
	int broken = 0, running = 1;
	for (uint32_t i = 0; i < m->n_launches; i++) {
		uint64_t first = la[i].word_first, n = m->n_words;
		/* run_inside and the bytes' rule, as bit operations */
		broken |= ((la[i].identity.len != 0) &
			   (la[i].identity.data == NULL)) |
			  (first > n) | (la[i].word_count > n - first);
		running &= la[i].word_first == words;
		words += la[i].word_count;   /* < 2^32 * 2^32: no wrap */
		bytes += la[i].identity.len;
	}
	s->words = words;
	s->bytes = bytes;
	s->last = m->n_launches ? la[m->n_launches - 1].identity.len : 0;
	s->running = running;
	return !broken;
}

static int check_strings(const struct ac_model *m, int launches_ok,
			 struct ac_error *err)
{
	for (uint32_t i = 0; i < m->n_windows; i++)
		if (check_bytes(&m->windows[i].name, "windows", i, "name", err))
			return -1;
	for (uint32_t i = 0; i < m->n_globals; i++)
		if (check_bytes(&m->globals[i].name, "globals", i, "name", err))
			return -1;
	for (uint32_t i = 0; i < m->n_phases; i++)
		if (check_bytes(&m->phases[i].identity, "phases", i,
				"identity", err))
			return -1;
	for (uint32_t i = 0; i < m->n_planes; i++)
		if (check_bytes(&m->planes[i].name, "planes", i, "name", err))
			return -1;
	for (uint32_t i = 0; !launches_ok && i < m->n_launches; i++)
		if (check_bytes(&m->launches[i].identity, "launches", i,
				"identity", err))
			return -1;
	return 0;
}

static int check_runs(const struct ac_model *m, int launches_ok,
		      struct ac_error *err)
{
	for (uint32_t i = 0; i < m->n_phases; i++) {
		const struct ac_phase *ph = &m->phases[i];
		if (!run_inside(ph->plane_first, ph->plane_count, m->n_planes))
			return aci_fail_entry(err, "phases", i, "plane_count",
					  "planes run past the model's planes");
	}
	for (uint32_t i = 0; !launches_ok && i < m->n_launches; i++) {
		const struct ac_launch *la = &m->launches[i];
		if (!run_inside(la->word_first, la->word_count, m->n_words))
			return aci_fail_entry(err, "launches", i, "word_count",
					  "words run past the model's words");
	}
	for (uint32_t i = 0; i < m->n_repeats; i++) {
		const struct ac_repeat *r = &m->repeats[i];
		if (!run_inside(r->delta_first, r->delta_count, m->n_deltas))
			return aci_fail_entry(err, "repeats", i, "delta_count",
					  "deltas run past the model's deltas");
		if (!run_inside(r->slot_first, r->slot_count, m->n_slots))
			return aci_fail_entry(err, "repeats", i, "slot_count",
					  "slots run past the model's slots");
		/* Without a table (frame_count 0) frame_value_first means
		 * nothing, as for ac_program_new's checks of the spec
		 * (fuzz_differential). */
		if (r->frame_count &&
		    ((r->slot_count &&
		      r->frame_count > UINT64_MAX / r->slot_count) ||
		     !run_inside(r->frame_value_first,
				 r->frame_count * r->slot_count,
				 m->n_frame_values)))
			return aci_fail_entry(err, "repeats", i, "frame_count",
					  "frame values (frame_count * "
					  "slot_count) run past the model's "
					  "frame values");
	}
	return 0;
}

int aci_model_check_structure(const struct ac_model *m, int with_refs,
			      struct launch_sums *sums, struct ac_error *err)
{
	if (check_arrays(m, with_refs, err))
		return -1;
	struct launch_sums s;
	int launches_ok = launches_fine(m, &s);
	if (check_strings(m, launches_ok, err) ||
	    check_runs(m, launches_ok, err))
		return -1;
	assert(launches_ok);   /* else check_strings or check_runs failed */
	if (sums)
		*sums = s;
	return 0;
}
