/* SPDX-License-Identifier: MIT */
/*
 * What a reader-built model and a program hold in memory, so that a cache
 * of them (the guard's) can be bounded in bytes.  Each figure is what the
 * allocations made for the object may make resident: the arrays
 * aci_model_owned_alloc and ac_program_new allocate, by their counts, with
 * aci_big_calloc's huge-page rounding (aci_big_footprint).  Keep this in step with
 * program.c's allocations: tests/guard/test_cache.c checks that the guard,
 * counting with these, stays within its budget in resident memory.
 */
#include "alloc.h"
#include "program_impl.h"

uint64_t ac_model_footprint(const struct ac_model *model)
{
	if (!model)
		return 0;
	const struct model_owned *o = (const struct model_owned *)model;
	return sizeof(*o) + aci_big_footprint(1, (size_t)o->block_len) +
	       o->words_len;
}

/* The light keys' lists (program.c: index_light, index_pairs,
 * index_carried), by the counts they end with. */
static uint64_t light_footprint(const ac_program *p)
{
	const struct ac_model *m = p->m;
	uint64_t w = p->n_watched, phases = (uint64_t)m->n_phases + 1;
	uint64_t planes = (uint64_t)m->n_planes + 1;
	uint64_t touches = p->touch_first ? p->touch_first[w] : 0;
	uint64_t pairs = p->pair_first ? p->pair_first[m->n_phases] : 0;
	return (w + 1) + (w + 2) * sizeof(*p->touch_first) +
	       (touches + 1) * sizeof(*p->touch) +
	       (phases + 1) * sizeof(*p->pair_first) +
	       (pairs + 1) * sizeof(*p->pair_d) +
	       2 * planes * sizeof(uint32_t) +      /* light, heavy carried */
	       2 * phases * sizeof(uint32_t);       /* and their firsts */
}

uint64_t ac_program_footprint(const ac_program *p)
{
	if (!p)
		return 0;
	const struct ac_model *m = p->m;
	size_t launches = (size_t)m->n_launches + 1;
	size_t repeats = (size_t)m->n_repeats + 1;
	uint64_t bytes = sizeof(*p) + repeats * sizeof(*p->bodies) +
			 repeats * sizeof(*p->extra_prefix) +
			 aci_big_footprint(launches, sizeof(*p->phase_of));
	if (p->runs)                 /* the indexes (D) needs */
		bytes += aci_big_footprint(launches, sizeof(*p->runs)) +
			 aci_big_footprint(launches, sizeof(*p->run_of)) +
			 ((uint64_t)m->n_planes + 1) * sizeof(*p->spans) +
			 ((uint64_t)m->n_planes + 1) * sizeof(*p->followed) +
			 ((uint64_t)m->n_phases + 1) *
				 sizeof(*p->followed_first) +
			 ((uint64_t)m->n_planes + 1) * sizeof(*p->declaring) +
			 ((uint64_t)p->n_watched + 2) *
				 sizeof(*p->declaring_first) +
			 light_footprint(p);
	if (p->own)                  /* own_planes's tables */
		bytes += sizeof(*p->own) +
			 ((uint64_t)m->n_phases + 1) * sizeof(*m->phases) +
			 ((uint64_t)m->n_planes + 1) * sizeof(*m->planes);
	return bytes;
}
