/* SPDX-License-Identifier: MIT */
/*
 * Spec section 1: what makes a plan and launch table malformed.  The
 * schedule is checked as it is appended (reference.c).  The model's own
 * structure (arrays present, runs inside their flat arrays), which a
 * reader guarantees but a hand-built model may not, is checked first
 * (structure.c).  Locations are the JSON paths of program-json.md.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "identity.h"
#include "program_impl.h"

#define TWO_POW_32 ((uint64_t)1 << 32)

/* offset + size <= 2^64 */
static int fits(uint64_t offset, uint64_t size)
{
	return size <= UINT64_MAX - offset + 1 || offset == 0;
}

static int fail_at(struct ac_error *err, const char *msg, const char *fmt, ...)
	AC_PRINTF(3, 4);

/* aci_fail with a formatted location. */
static int fail_at(struct ac_error *err, const char *msg, const char *fmt, ...)
{
	char where[128];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(where, sizeof(where), fmt, ap);
	va_end(ap);
	return aci_fail(err, where, "%s", msg);
}

static int validate_plan(const struct ac_model *m, struct ac_error *err)
{
	uint64_t a = m->alignment;
	if (a == 0 || a > TWO_POW_32 || (a & (a - 1)) != 0)
		return aci_fail(err, "alignment",
				"%llu is not a power of two in 1 .. 2^32",
				(unsigned long long)a);
	for (uint32_t i = 0; i < m->n_windows; i++) {
		if (m->windows[i].size == 0)
			return fail_at(err, "a window is at least 1 byte",
				       "windows[%u].size", i);
		if (!fits(m->windows[i].base, m->windows[i].size))
			return fail_at(err, "base + size exceeds 2^64",
				       "windows[%u]", i);
	}
	for (uint32_t i = 0; i < m->n_globals; i++)
		if (!fits(m->globals[i].offset, m->globals[i].size))
			return fail_at(err, "offset + size exceeds 2^64",
				       "globals[%u]", i);
	for (uint32_t p = 0; p < m->n_phases; p++) {
		const struct ac_phase *ph = &m->phases[p];
		for (uint32_t j = 0; j < ph->plane_count; j++) {
			const struct ac_tensor *t = &m->planes[ph->plane_first + j];
			if (!fits(t->offset, t->size))
				return fail_at(err, "offset + size exceeds 2^64",
					       "phases[%u].planes[%u]", p, j);
			if (t->carried > 1)
				return fail_at(err, "carried is not 0 or 1",
					       "phases[%u].planes[%u].carried",
					       p, j);
		}
	}
	return 0;
}

/* The phases' identities are distinct: then *h is their table, which the
 * caller keeps (aci_phases_of_launches). */
static int validate_identities(const struct ac_model *m, struct hash_index *h,
			       struct ac_error *err)
{
	uint32_t first = 0, dup = 0;
	int r = aci_phase_table_build(m, h, &first, &dup);
	if (r != 0)
		aci_hash_index_free(h);
	if (r < 0)
		return aci_fail(err, "", "out of memory");
	if (r > 0) {
		char msg[64];
		snprintf(msg, sizeof(msg), "same identity as phases[%u]", first);
		return fail_at(err, msg, "phases[%u].identity", dup);
	}
	return 0;
}

/* A (launch, word) pair of repeat r's body: launch in the body, word below
 * that launch's word count. */
static int check_body_word(const struct ac_model *m, const struct ac_repeat *r,
			   uint64_t launch, uint64_t word, struct ac_error *err,
			   const char *what, uint32_t ri, uint32_t k)
{
	if (launch < r->first || launch - r->first >= r->count) {
		char msg[96];
		snprintf(msg, sizeof(msg), "launch %llu is not in the body [%llu, %llu)",
			 (unsigned long long)launch, (unsigned long long)r->first,
			 (unsigned long long)(r->first + r->count));
		return fail_at(err, msg, "repeats[%u].%s[%u].launch", ri, what, k);
	}
	if (word >= m->launches[launch].word_count) {
		char msg[96];
		snprintf(msg, sizeof(msg), "launch %llu has %u words",
			 (unsigned long long)launch, m->launches[launch].word_count);
		return fail_at(err, msg, "repeats[%u].%s[%u].word", ri, what, k);
	}
	return 0;
}

static int slot_order(const void *a, const void *b)
{
	const struct ac_slot *x = *(const struct ac_slot *const *)a;
	const struct ac_slot *y = *(const struct ac_slot *const *)b;
	if (x->launch != y->launch)
		return x->launch < y->launch ? -1 : 1;
	return x->word < y->word ? -1 : x->word > y->word;
}

/* Slots are distinct pairs: sort pointers to them and compare neighbours. */
static int validate_slots_distinct(const struct ac_model *m, uint32_t ri,
				   struct ac_error *err)
{
	const struct ac_repeat *r = &m->repeats[ri];
	if (r->slot_count < 2)
		return 0;
	const struct ac_slot **order = malloc(r->slot_count * sizeof(*order));
	if (!order)
		return aci_fail(err, "", "out of memory");
	for (uint32_t k = 0; k < r->slot_count; k++)
		order[k] = &m->slots[r->slot_first + k];
	aci_sort(order, r->slot_count, sizeof(*order), slot_order);
	int rc = 0;
	for (uint32_t k = 1; k < r->slot_count && rc == 0; k++)
		if (slot_order(&order[k - 1], &order[k]) == 0)
			rc = fail_at(err, "two slots name the same word",
				     "repeats[%u].table.slots[%u]", ri,
				     (unsigned)(order[k] - &m->slots[r->slot_first]));
	free(order);
	return rc;
}

static int validate_table(const struct ac_model *m, uint32_t ri,
			  struct ac_error *err)
{
	const struct ac_repeat *r = &m->repeats[ri];
	if (r->frame_count == 0) {
		if (r->slot_count != 0)
			return fail_at(err, "slots without frames",
				       "repeats[%u].table", ri);
		return 0;
	}
	for (uint32_t k = 0; k < r->slot_count; k++) {
		const struct ac_slot *s = &m->slots[r->slot_first + k];
		if (check_body_word(m, r, s->launch, s->word, err,
				    "table.slots", ri, k))
			return -1;
	}
	return validate_slots_distinct(m, ri, err);
}

static int validate_repeat(const struct ac_model *m, uint32_t ri,
			   struct ac_error *err)
{
	const struct ac_repeat *r = &m->repeats[ri];
	if (r->count == 0)
		return fail_at(err, "a body holds at least one launch",
			       "repeats[%u].count", ri);
	if (!run_inside(r->first, r->count, m->n_launches))
		return fail_at(err, "the body is not inside the launch table",
			       "repeats[%u]", ri);
	if (r->iterations == 0 || r->iterations >= TWO_POW_32)
		return fail_at(err, "iterations must be 1 .. 2^32-1",
			       "repeats[%u].iterations", ri);
	for (uint32_t k = 0; k < r->delta_count; k++) {
		const struct ac_delta *d = &m->deltas[r->delta_first + k];
		if (check_body_word(m, r, d->launch, d->word, err, "deltas",
				    ri, k))
			return -1;
	}
	return validate_table(m, ri, err);
}

struct body_key {
	uint64_t first;
	uint32_t repeat;
};

static int body_key_order(const void *a, const void *b)
{
	const struct body_key *x = a, *y = b;
	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return x->repeat < y->repeat ? -1 : x->repeat > y->repeat;
}

/* Bodies pairwise disjoint: sorted by first, each ends before the next. */
static int validate_bodies_disjoint(const struct ac_model *m,
				    struct ac_error *err)
{
	if (m->n_repeats < 2)
		return 0;
	struct body_key *order = malloc(m->n_repeats * sizeof(*order));
	if (!order)
		return aci_fail(err, "", "out of memory");
	for (uint32_t i = 0; i < m->n_repeats; i++)
		order[i] = (struct body_key){ m->repeats[i].first, i };
	aci_sort(order, m->n_repeats, sizeof(*order), body_key_order);
	int rc = 0;
	for (uint32_t i = 1; i < m->n_repeats && rc == 0; i++) {
		uint32_t x = order[i - 1].repeat, y = order[i].repeat;
		const struct ac_repeat *a = &m->repeats[x];
		if (order[i].first < a->first + a->count) {
			char msg[64];
			snprintf(msg, sizeof(msg), "body overlaps repeats[%u]",
				 x < y ? x : y);
			rc = fail_at(err, msg, "repeats[%u]", x < y ? y : x);
		}
	}
	free(order);
	return rc;
}

int aci_validate_model(const struct ac_model *m, const struct launch_sums *read,
		       struct launch_sums *sums, struct hash_index *phases,
		       struct ac_error *err)
{
	if (read)
		*sums = *read;
	else if (aci_model_check_structure(m, 0, sums, err))
		return -1;
	if (validate_plan(m, err) ||
	    validate_identities(m, phases, err))
		return -1;
	int r = 0;
	for (uint32_t i = 0; i < m->n_repeats && r == 0; i++)
		r = validate_repeat(m, i, err);
	if (r == 0)
		r = validate_bodies_disjoint(m, err);
	if (r != 0)
		aci_hash_index_free(phases);
	return r;
}
