/* SPDX-License-Identifier: MIT */
/*
 * What a reader-built model and a program hold in memory, so that a cache
 * of them (the guard's) can be bounded in bytes.  Each figure is what the
 * allocations made for the object may make resident: the arrays
 * aci_model_owned_alloc and ac_program_new allocate, by their counts, with
 * aci_big_calloc's huge-page rounding (aci_big_footprint), and the blocks
 * of the program's arena (program_impl.h), whatever they hold.  Keep this in step with
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

uint64_t ac_program_footprint(const ac_program *p)
{
	if (!p)
		return 0;
	const struct ac_model *m = p->m;
	size_t launches = (size_t)m->n_launches + 1;
	/* the arena's blocks: every table but the per-launch ones */
	uint64_t bytes = sizeof(*p) + p->arena.bytes +
			 aci_big_footprint(launches, sizeof(*p->phase_of));
	if (p->runs)                 /* the indexes (D) needs */
		bytes += aci_big_footprint(launches, sizeof(*p->runs)) +
			 aci_big_footprint(launches, sizeof(*p->run_of));
	return bytes;
}
